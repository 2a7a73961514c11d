/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu buffer handle.
 */
#ifndef _NETGPU_BUF_H
#define _NETGPU_BUF_H

#include <linux/types.h>

/**
 * DOC: netgpu buffers
 *
 * A buffer is one fixed-size piece of a registered region: host pages
 * pinned from a process, or device memory exported as a dma-buf.  GPU
 * memory has no &struct page, so the library never names a buffer by its
 * page: it passes a &struct netgpu_buf, a provider-neutral handle.  The
 * region that owns a buffer maps it to the DMA address the NIC writes to
 * and to the address user space knows it by.
 *
 * Data structures that only move buffers around (the buffer cache) never
 * look inside the handle; they hold and compare pointers to it.
 */

struct netgpu_region;

/**
 * struct netgpu_buf - handle of one receive buffer
 * @region: the region the buffer belongs to (owned by the memory unit)
 * @index: the buffer's index in @region; the region maps it to a DMA
 *	address per device and to a user address
 */
struct netgpu_buf {
	struct netgpu_region	*region;
	u32			index;
};

#endif /* _NETGPU_BUF_H */
