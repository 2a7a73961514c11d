/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu memory: areas, regions, per-device DMA maps, context lookup and
 * the memory provider registry.
 */
#ifndef _NETGPU_MEM_H
#define _NETGPU_MEM_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

/**
 * DOC: netgpu memory
 *
 * A memory area (&struct netgpu_mem, one per open of the memory device)
 * owns regions.  A region (&struct netgpu_region) is one registered range
 * of addresses backed by a memory provider: pinned host pages or a
 * dma-buf.  A region is DMA-mapped at most once per device; the map
 * (&struct netgpu_dmamap) is shared by every context on that device.  A
 * context (&struct netgpu_memctx, embedded in the netgpu context) attaches
 * regions and finds, without taking a lock, the DMA address of a user
 * address through an xarray indexed by page.
 *
 * Lifetime rules:
 *
 * - A region lives while its area or any attachment holds it (one
 *   reference for the area's link, one per attachment, one per transient
 *   user such as netgpu_mem_get_region()).
 * - A DMA map lives while any context on its device holds it (one
 *   reference per attachment) or the device may still hold one of its
 *   buffers (netgpu_dmamap_inflight_add()).  When the last attachment
 *   goes, after an RCU grace period, the map is unmapped at once if no
 *   buffer is in flight, else when the last one comes back; until then it
 *   holds a reference on its region, so that what backs it stays.
 * - An area's memory lives while it is open or any of its regions lives.
 * - A provider's module lives while any of its regions does.
 * - A provider may revoke a region at any time (netgpu_region_revoke()):
 *   the region is detached from every context and its maps are retired as
 *   above; lookups racing with it either see the old, still mapped,
 *   address or fail.
 * - The last reference on a region may be dropped in any context; from
 *   interrupt context (or with bottom halves or interrupts off) the
 *   release runs later from a work item.
 *
 * Lock order (outermost first):
 *
 *   &netgpu_region.revoke_lock  ->  &netgpu_region.lock  ->
 *   &netgpu_memctx.lock  ->  provider locks (dma_resv of a dma-buf)
 *
 * The area's xa_lock and the registry mutex are leaves.  An owner that
 * must revoke a region from atomic context (device removal under a
 * spinlock) calls netgpu_region_revoke_async(), which takes none of them:
 * it marks the region revoked and defers the rest to a work item.  Only mutexes are held across allocations and provider calls;
 * the data path (netgpu_memctx_lookup()) takes no lock at all.
 */

struct device;
struct dma_buf;
struct module;
struct page;
struct user_struct;
struct netgpu_dmamap;
struct netgpu_mem;
struct netgpu_memctx;
struct netgpu_region;

/**
 * enum netgpu_memtype - kinds of memory a region may be backed by
 * @NETGPU_MEMTYPE_HOST: pinned pages of the calling process
 * @NETGPU_MEMTYPE_DMABUF: a dma-buf (GPU or other device memory)
 * @NETGPU_MEMTYPE_MAX: number of provider slots; slots above the named
 *	ones are free for other (test) providers
 */
enum netgpu_memtype {
	NETGPU_MEMTYPE_HOST	= 1,
	NETGPU_MEMTYPE_DMABUF	= 2,
	NETGPU_MEMTYPE_MAX	= 8,
};

/**
 * struct netgpu_region_desc - what to register as a region
 * @type: &enum netgpu_memtype
 * @addr: host: user address of the range; dma-buf: the (page-aligned)
 *	address the buffer's first byte is known by
 * @len: host: length in bytes; dma-buf: 0 or the buffer's size
 * @fd: dma-buf: file descriptor, used when @dmabuf is NULL
 * @dmabuf: dma-buf: the buffer itself (in-kernel callers)
 * @priv: provider-defined
 */
struct netgpu_region_desc {
	u32			type;
	u64			addr;
	u64			len;
	int			fd;
	struct dma_buf		*dmabuf;
	void			*priv;
};

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
 * @sync_for_device: optional: hand bytes [@off, @off + @len) back to the
 *	device before it may write them again.  Any context.
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
 * @revoked: set from any context when the owner revokes the memory;
 *	lookups fail from then on
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
	struct mutex		revoke_lock;
	struct mutex		lock;	/* maps, atts, dead */
	struct list_head	maps;
	struct list_head	atts;
	bool			dead;
	bool			revoked;
	struct work_struct	revoke_work;
	struct work_struct	free_work;
};

/**
 * struct netgpu_dmamap - a region mapped for one device
 * @r: region (set by the provider's map op)
 * @dev: device
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

/**
 * struct netgpu_mem_att - a region attached to a context
 * @r: region (a reference is held)
 * @map: DMA map for the context's device (a reference is held)
 * @mc: context
 * @r_node: in @r->atts, under &netgpu_region.lock
 * @mc_node: in @mc->atts, under &netgpu_memctx.lock
 */
struct netgpu_mem_att {
	struct netgpu_region	*r;
	struct netgpu_dmamap	*map;
	struct netgpu_memctx	*mc;
	struct list_head	r_node;
	struct list_head	mc_node;
};

/**
 * struct netgpu_memctx - the memory side of a netgpu context
 * @dev: the device the context's NIC DMAs with
 * @lock: Protects: @atts, writes to @xa.  Ordering: inside
 *	&netgpu_region.lock, before provider locks.
 * @xa: page index (address >> PAGE_SHIFT) -> &struct netgpu_mem_att;
 *	read lock-free under RCU
 * @atts: attachments
 * @revokers: revocations between taking @lock to unlink an attachment and
 *	their last touch of the context; netgpu_memctx_release() waits for
 *	none to be left, since mutex_unlock() may touch the mutex after
 *	another task has acquired it
 */
struct netgpu_memctx {
	struct device		*dev;
	struct mutex		lock;	/* atts, xa writes */
	struct xarray		xa;
	struct list_head	atts;
	atomic_t		revokers;
};

/**
 * struct netgpu_mem_loc - result of a lookup
 * @r: region holding the address
 * @map: its DMA map for the context's device
 * @off: byte offset of the address in @r
 * @dma: DMA address of the address
 * @len: bytes DMA-contiguous from @dma (to the end of the DMA segment)
 */
struct netgpu_mem_loc {
	struct netgpu_region	*r;
	struct netgpu_dmamap	*map;
	u64			off;
	dma_addr_t		dma;
	u64			len;
};

/* Areas */
struct netgpu_mem *netgpu_mem_create(void);
void netgpu_mem_close(struct netgpu_mem *mem);
int netgpu_mem_add_region(struct netgpu_mem *mem,
			  const struct netgpu_region_desc *desc);
struct netgpu_region *netgpu_mem_get_region(struct netgpu_mem *mem, u32 id);

/* Regions */
void netgpu_region_init(struct netgpu_region *r, u64 start, u64 len);
bool netgpu_region_tryget(struct netgpu_region *r);
void netgpu_region_put(struct netgpu_region *r);
void netgpu_region_revoke(struct netgpu_region *r);
void netgpu_region_revoke_async(struct netgpu_region *r);
void netgpu_region_flush_revoke(struct netgpu_region *r);
int netgpu_region_get_pages(struct netgpu_region *r, u64 addr,
			    struct page **pages, unsigned int count);

/* DMA maps: buffers in flight, DMA syncs */
void netgpu_dmamap_inflight_add(struct netgpu_dmamap *map, long n);
void netgpu_dmamap_inflight_sub(struct netgpu_dmamap *map, long n);
void netgpu_dmamap_sync_for_cpu(const struct netgpu_dmamap *map, u64 off,
				u64 len);
void netgpu_dmamap_sync_for_device(const struct netgpu_dmamap *map, u64 off,
				   u64 len);

/* Contexts */
void netgpu_memctx_init(struct netgpu_memctx *mc, struct device *dev);
int netgpu_memctx_attach(struct netgpu_memctx *mc, struct netgpu_region *r);
int netgpu_memctx_detach(struct netgpu_memctx *mc, struct netgpu_region *r);
void netgpu_memctx_release(struct netgpu_memctx *mc);
int netgpu_memctx_lookup(struct netgpu_memctx *mc, u64 addr,
			 struct netgpu_mem_loc *loc);
#if IS_ENABLED(CONFIG_KUNIT)
int netgpu_memctx_store(struct netgpu_memctx *mc, unsigned long index,
			struct netgpu_mem_att *att);
void netgpu_memctx_revoke_done(struct netgpu_memctx *mc);
#endif

/* Provider registry */
int netgpu_mem_register_provider(const struct netgpu_mem_ops *ops);
void netgpu_mem_unregister_provider(const struct netgpu_mem_ops *ops);

/* Providers built into the library */
extern const struct netgpu_mem_ops netgpu_host_ops;
extern const struct netgpu_mem_ops netgpu_dmabuf_ops;

#if IS_ENABLED(CONFIG_KUNIT)
/* The host provider's DMA calls, for KUnit static stubs */
dma_addr_t netgpu_host_map_page(struct device *dev, struct page *page);
void netgpu_host_unmap_page(struct device *dev, dma_addr_t dma);
#endif

int netgpu_dmabuf_add_region(struct netgpu_mem *mem, struct dma_buf *dmabuf,
			     u64 addr);
int netgpu_dmabuf_add_region_fd(struct netgpu_mem *mem, int fd, u64 addr);

#endif /* _NETGPU_MEM_H */
