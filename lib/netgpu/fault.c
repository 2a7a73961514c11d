// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu fault points: the kernel's fault-injection framework
 * (Documentation/fault-injection/fault-injection.rst) on netgpu's data
 * path, as mm/failslab.c puts it on slab allocations.  Each point is a
 * &struct fault_attr, set at boot with fail_netgpu_<point>= (the syntax
 * of failslab=: interval,probability,space,times) and in debugfs at
 * /sys/kernel/debug/fail_netgpu_<point>/.  See fault/FAULT-POINTS.md.
 */

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/init.h>
#include <kunit/visibility.h>

#include "mem.h"

static DECLARE_FAULT_ATTR(fail_netgpu_refill);
static DECLARE_FAULT_ATTR(fail_netgpu_dma_map);
static DECLARE_FAULT_ATTR(fail_netgpu_rx_ring);
static DECLARE_FAULT_ATTR(fail_netgpu_tx);

static struct fault_attr *const netgpu_fault_attrs[] = {
	[NETGPU_FAIL_REFILL]	= &fail_netgpu_refill,
	[NETGPU_FAIL_DMA_MAP]	= &fail_netgpu_dma_map,
	[NETGPU_FAIL_RX_RING]	= &fail_netgpu_rx_ring,
	[NETGPU_FAIL_TX]	= &fail_netgpu_tx,
};

/* Built in only: a module has no boot parameters of this form. */
#ifndef MODULE
static int __init fail_netgpu_refill_setup(char *str)
{
	return setup_fault_attr(&fail_netgpu_refill, str);
}
__setup("fail_netgpu_refill=", fail_netgpu_refill_setup);

static int __init fail_netgpu_dma_map_setup(char *str)
{
	return setup_fault_attr(&fail_netgpu_dma_map, str);
}
__setup("fail_netgpu_dma_map=", fail_netgpu_dma_map_setup);

static int __init fail_netgpu_rx_ring_setup(char *str)
{
	return setup_fault_attr(&fail_netgpu_rx_ring, str);
}
__setup("fail_netgpu_rx_ring=", fail_netgpu_rx_ring_setup);

static int __init fail_netgpu_tx_setup(char *str)
{
	return setup_fault_attr(&fail_netgpu_tx, str);
}
__setup("fail_netgpu_tx=", fail_netgpu_tx_setup);
#endif

/**
 * netgpu_should_fail() - whether a fault point fails this time
 * @point: the point
 *
 * should_fail() of the point's attribute, once the attribute is armed
 * (a probability set at boot or in debugfs): an unarmed point costs a
 * load and does not consume current->fail_nth, whose sweeps count the
 * allocations of a call, not these points.
 *
 * Context: Any context.
 * Return: true if the caller must take its failure path.
 */
bool netgpu_should_fail(enum netgpu_fault_point point)
{
	struct fault_attr *attr = netgpu_fault_attrs[point];

	return READ_ONCE(attr->probability) && should_fail(attr, 1);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * netgpu_fault_attr() - the attribute of a fault point, for tests
 * @point: the point
 *
 * Context: Any context.
 * Return: the point's &struct fault_attr.
 */
VISIBLE_IF_KUNIT struct fault_attr *
netgpu_fault_attr(enum netgpu_fault_point point)
{
	return netgpu_fault_attrs[point];
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_fault_attr);
#endif

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct dentry *netgpu_fault_dirs[NETGPU_NR_FAIL];

static const char *const netgpu_fault_names[] = {
	[NETGPU_FAIL_REFILL]	= "fail_netgpu_refill",
	[NETGPU_FAIL_DMA_MAP]	= "fail_netgpu_dma_map",
	[NETGPU_FAIL_RX_RING]	= "fail_netgpu_rx_ring",
	[NETGPU_FAIL_TX]	= "fail_netgpu_tx",
};

/**
 * netgpu_fault_init() - the fault points' directories at the debugfs root
 *
 * A directory that cannot be made (no memory, debugfs off) leaves its
 * point settable at boot only, as debugfs users do.
 *
 * Context: Process context (the library's init).
 * Return: 0.
 */
int netgpu_fault_init(void)
{
	int i;

	for (i = 0; i < NETGPU_NR_FAIL; i++)
		netgpu_fault_dirs[i] =
			fault_create_debugfs_attr(netgpu_fault_names[i], NULL,
						  netgpu_fault_attrs[i]);
	return 0;
}

/**
 * netgpu_fault_exit() - remove the fault points' directories
 *
 * Context: Process context (the library's exit).
 */
void netgpu_fault_exit(void)
{
	int i;

	for (i = 0; i < NETGPU_NR_FAIL; i++) {
		debugfs_remove_recursive(netgpu_fault_dirs[i]);
		netgpu_fault_dirs[i] = NULL;
	}
}
#else
int netgpu_fault_init(void)
{
	return 0;
}

void netgpu_fault_exit(void)
{
}
#endif
