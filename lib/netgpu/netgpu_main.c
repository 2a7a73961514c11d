// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu: zero-copy receive into host or dma-buf memory.
 *
 * The library is a set of units (shared queue, buffer cache, memory
 * regions and providers, contexts, NIC interface); this file carries the
 * module metadata they share and brings up the units that register
 * something with the kernel.
 */

#include <linux/init.h>
#include <linux/module.h>

#include "ctx.h"
#include "mem_priv.h"

static int __init netgpu_init(void)
{
	int err;

	err = netgpu_mem_init();
	if (err)
		return err;
	/* The notifier first: no context may hold a device without it. */
	err = netgpu_ctx_init();
	if (err)
		goto err_mem;
	err = netgpu_dev_init();
	if (err)
		goto err_ctx;
	return 0;

err_ctx:
	netgpu_ctx_exit();
err_mem:
	netgpu_mem_exit();
	return err;
}

static void __exit netgpu_exit(void)
{
	netgpu_dev_exit();
	netgpu_ctx_exit();
	/* Last: deferred region work may still run netgpu code. */
	netgpu_mem_exit();
}

module_init(netgpu_init);
module_exit(netgpu_exit);

MODULE_DESCRIPTION("netgpu zero-copy receive library");
MODULE_LICENSE("GPL");
