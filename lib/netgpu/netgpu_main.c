// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu: zero-copy receive into host or dma-buf memory.
 *
 * The library is a set of units (shared queue, buffer cache, memory
 * regions and providers, NIC interface); this file only carries the
 * module metadata they share.
 */

#include <linux/module.h>

MODULE_DESCRIPTION("netgpu zero-copy receive library");
MODULE_LICENSE("GPL");
