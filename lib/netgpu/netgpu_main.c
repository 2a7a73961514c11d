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
#include <kunit/visibility.h>

#include "ctx.h"
#include "mem_priv.h"

/*
 * In the order they come up: the memory unit's workqueue first (deferred
 * region work may run until the end), then the host provider's PCI bus
 * notifier (no peer-to-peer region may outlive its provider's driver
 * without it), then the device notifier (no context may hold a device
 * without it), then the files that make
 * contexts.  The debugfs files (the accounting of contexts, the fault
 * points) come last: nothing depends on them.
 */
static const struct {
	int (*init)(void);
	void (*exit)(void);
} netgpu_units[] = {
	{ netgpu_mem_init, netgpu_mem_exit },
	{ netgpu_host_init, netgpu_host_exit },
	{ netgpu_ctx_init, netgpu_ctx_exit },
	{ netgpu_dev_init, netgpu_dev_exit },
	{ netgpu_ctx_debugfs_init, netgpu_ctx_debugfs_exit },
	{ netgpu_fault_init, netgpu_fault_exit },
};

/**
 * netgpu_units_init() - bring up the library's units
 *
 * Context: Process context, may sleep; nothing of the library in use.
 * Return: 0, or the first unit's error with the units before it taken
 * down again.
 */
VISIBLE_IF_KUNIT int netgpu_units_init(void)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(netgpu_units); i++) {
		err = netgpu_units[i].init();
		if (err)
			goto err_exit;
	}
	return 0;

err_exit:
	while (i--)
		netgpu_units[i].exit();
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_units_init);

/**
 * netgpu_units_exit() - take the library's units down, in reverse order
 *
 * Context: Process context, may sleep; every file of the library closed.
 */
VISIBLE_IF_KUNIT void netgpu_units_exit(void)
{
	int i = ARRAY_SIZE(netgpu_units);

	while (i--)
		netgpu_units[i].exit();
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_units_exit);

static int __init netgpu_init(void)
{
	return netgpu_units_init();
}

static void __exit netgpu_exit(void)
{
	netgpu_units_exit();
}

module_init(netgpu_init);
module_exit(netgpu_exit);

MODULE_DESCRIPTION("netgpu zero-copy receive library");
MODULE_LICENSE("GPL");
