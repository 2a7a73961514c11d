/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu memory providers: the ops table, the core structures a provider
 * embeds and fills in, and the registry.  Consumers of netgpu memory
 * (contexts, the NIC interface) include mem.h only.
 */
#ifndef _NETGPU_MEM_PROVIDER_H
#define _NETGPU_MEM_PROVIDER_H

#include <linux/refcount.h>
#include <linux/workqueue.h>

#include "mem.h"

/**
 * struct netgpu_mem_ops - a memory provider
 * @owner: module holding the code; referenced by every region
 * @type: slot in the registry (&enum netgpu_memtype)
 * @name: for messages and request_module("netgpu-mem-<type>")
 * @add: create a region for @desc: allocate the provider's structure
 *	(embedding &struct netgpu_region), call netgpu_region_init(), take
 *	what backs it.  Process context, may sleep.  On error, leaves
 *	nothing behind.
 * @release: undo @add and free the region.  May sleep.
 * @map: DMA-map the whole region for @dev; the returned map embeds a
 *	&struct netgpu_dmamap whose @r the provider sets before anything
 *	can call back.  Memory the CPU reads is mapped without CPU syncs
 *	(DMA_ATTR_SKIP_CPU_SYNC): it may be mapped for several devices, and
 *	the data path syncs each buffer (@sync_for_cpu, @sync_for_device).
 *	Called under &netgpu_region.lock and &netgpu_memctx.lock (mutexes),
 *	may sleep.
 * @unmap: undo @map and free it.  Called without core locks, after an
 *	RCU grace period and once no buffer of the map is in flight, from
 *	process context (possibly a work item), may sleep.
 * @dma: DMA address of byte @off of the region in @map, and the number of
 *	bytes DMA-contiguous from there.  Lock-free, called under RCU.
 * @get_pages: optional: take a reference on up to @count pages starting at
 *	byte @off; return how many (never past the region's end).
 * @sync_for_cpu: optional: make what the device wrote to bytes
 *	[@off, @off + @len) of the region in @map visible to the CPU
 *	(dma_sync_*_for_cpu()).  Memory the CPU never reads (a dma-buf)
 *	leaves it out.  Any context.
 * @sync_for_device: optional: hand bytes [@off, @off + @len) to the
 *	device before each handout, the first included.  Any context.
 */
struct netgpu_mem_ops {
	struct module		*owner;
	u32			type;
	const char		*name;

	struct netgpu_region	*(*add)(struct netgpu_mem *mem,
					const struct netgpu_region_desc *desc);
	void			(*release)(struct netgpu_region *r);
	struct netgpu_dmamap	*(*map)(struct netgpu_region *r,
					struct device *dev);
	void			(*unmap)(struct netgpu_dmamap *map);
	int			(*dma)(const struct netgpu_dmamap *map, u64 off,
				       dma_addr_t *dma, u64 *len);
	int			(*get_pages)(struct netgpu_region *r, u64 off,
					     struct page **pages,
					     unsigned int count);
	void			(*sync_for_cpu)(const struct netgpu_dmamap *map,
						u64 off, u64 len);
	void			(*sync_for_device)(const struct netgpu_dmamap *map,
						   u64 off, u64 len);
};

/**
 * struct netgpu_mem - a memory area
 * @regions: id -> region.  Protects: membership, @closed.  Each member
 *	holds one region reference (the area's link).  Ordering: leaf.
 * @user: the user charged for pinned host memory
 * @account: charge @user's RLIMIT_MEMLOCK (the opener lacked CAP_IPC_LOCK)
 * @closed: netgpu_mem_close() ran; no new regions
 * @ref: one for the open area, one per region
 */
struct netgpu_mem {
	struct xarray		regions;
	struct user_struct	*user;
	bool			account;
	bool			closed;
	refcount_t		ref;
};

/**
 * struct netgpu_region - one registered range of memory
 * @ops: provider, whose module reference the region holds
 * @mem: owning area (a reference on its memory is held)
 * @id: index in @mem's regions
 * @start: first address (page-aligned)
 * @len: length in bytes (page multiple)
 * @nr_pages: @len in pages
 * @ref: area link + one per attachment + one per retired map still in
 *	flight + transient users
 * @revoke_lock: serializes netgpu_region_revoke() from start to finish,
 *	so that a second caller returns only once the first is done.
 *	Ordering: outermost, before @lock.
 * @lock: Protects: @maps, @atts, @dead.  Ordering: inside @revoke_lock,
 *	before &netgpu_memctx.lock and provider locks.  A mutex: held across
 *	allocations and provider map calls.
 * @maps: &struct netgpu_dmamap, one per device
 * @atts: attachments (&struct netgpu_mem_att)
 * @dead: revoked and detached; no new attachments
 * @device: the memory is a device's (PCI peer-to-peer memory), not RAM:
 *	the CPU neither copies received data into it nor sends from it,
 *	even if it has pages.  Set by the provider's add op.
 * @revoked: set from any context when the owner revokes the memory;
 *	lookups fail from then on
 * @holder: an interface queue holds the region's buffers
 *	(netgpu_memctx_hold()); at most one may, or two NIC queues would
 *	write the same memory
 * @revoke_work: deferred netgpu_region_revoke()
 * @free_work: deferred release, for a last reference dropped in interrupt
 *	context
 */
struct netgpu_region {
	const struct netgpu_mem_ops *ops;
	struct netgpu_mem	*mem;
	u32			id;
	u64			start;
	u64			len;
	unsigned long		nr_pages;
	refcount_t		ref;
	struct mutex		revoke_lock;	/* whole revocations */
	struct mutex		lock;	/* maps, atts, dead */
	struct list_head	maps;
	struct list_head	atts;
	bool			dead;
	bool			device;
	bool			revoked;
	atomic_t		holder;
	struct work_struct	revoke_work;
	struct work_struct	free_work;
};

/**
 * struct netgpu_dmamap - a region mapped for one device
 * @r: region (set by the provider's map op)
 * @dev: device (a reference is held until the map is unmapped)
 * @node: in @r->maps
 * @ref: attachments using the map, one per context on @dev
 * @inflight: buffers of the map the device, the stack or user space still
 *	holds, plus one while the map is attached (the bias); the map is
 *	unmapped when it drops to zero
 * @unmap_work: the unmap, when the last buffer comes back in a context
 *	that cannot sleep
 */
struct netgpu_dmamap {
	struct netgpu_region	*r;
	struct device		*dev;
	struct list_head	node;
	refcount_t		ref;
	atomic_long_t		inflight;
	struct work_struct	unmap_work;
};

void netgpu_region_init(struct netgpu_region *r, u64 start, u64 len);

/* Provider registry */
int netgpu_mem_register_provider(const struct netgpu_mem_ops *ops);
void netgpu_mem_unregister_provider(const struct netgpu_mem_ops *ops);

#endif /* _NETGPU_MEM_PROVIDER_H */
