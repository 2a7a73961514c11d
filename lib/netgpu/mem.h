/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu memory: areas, regions, per-device DMA maps and the context
 * lookup, as their users see them.
 */
#ifndef _NETGPU_MEM_H
#define _NETGPU_MEM_H

#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/types.h>
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
 *   address or fail.  Revoked because its memory went away
 *   (netgpu_region_revoke_provider(): the PCI device of peer-to-peer
 *   memory unbound), it stays in its area, dead, until its user removes
 *   it.
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
 * it marks the region revoked and defers the rest to a work item.  Only
 * mutexes are held across allocations and provider calls; the data path
 * (netgpu_memctx_lookup()) takes no lock at all.
 *
 * Headers: this one is the consumer's API (contexts, the NIC interface);
 * mem_provider.h adds what a memory provider implements and embeds;
 * mem_priv.h is the core's own.
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

/*
 * &struct netgpu_region_desc.flags: host memory that is PCI peer-to-peer
 * memory (P2PDMA), not RAM
 */
#define NETGPU_REGION_DESC_P2PDMA	BIT(0)

/**
 * struct netgpu_region_desc - what to register as a region
 * @type: &enum netgpu_memtype
 * @flags: NETGPU_REGION_DESC_P2PDMA (host only), or 0
 * @addr: host: user address of the range; dma-buf: the (page-aligned)
 *	address the buffer's first byte is known by
 * @len: host: length in bytes; dma-buf: 0 or the buffer's size
 * @fd: dma-buf: file descriptor, used when @dmabuf is NULL
 * @dmabuf: dma-buf: the buffer itself (in-kernel callers)
 * @priv: provider-defined
 */
struct netgpu_region_desc {
	u32			type;
	u32			flags;
	u64			addr;
	u64			len;
	int			fd;
	struct dma_buf		*dmabuf;
	void			*priv;
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
 * @revoked: optional, set by the owner after netgpu_memctx_init(): called
 *	when a region attached to the context is revoked, once per
 *	attachment, after it was unpublished and before
 *	netgpu_memctx_release() may return.  Runs under the region's
 *	mutexes: it must not take rtnl_lock or a context's lock, which come
 *	before them (the context queues work).  The work it queues holds
 *	netgpu_p2p_revoke_map (lock_map_acquire()) across its body: the
 *	host provider waits for it when a peer-to-peer provider goes.
 */
struct netgpu_memctx {
	struct device		*dev;
	struct mutex		lock;	/* atts, xa writes */
	struct xarray		xa;
	struct list_head	atts;
	atomic_t		revokers;
	void			(*revoked)(struct netgpu_memctx *mc);
};

#ifdef CONFIG_LOCKDEP
/*
 * The owner's work that a &netgpu_memctx.revoked callback queues, as one
 * lock for lockdep (host.c): held by that work, and for read by the PCI
 * bus notifier that waits for it.
 */
extern struct lockdep_map netgpu_p2p_revoke_map;
#endif

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

/**
 * struct netgpu_mem_hold - a region attached to a context, held
 * @r: the region (a reference is held)
 * @map: its DMA map for the context's device (an in-flight count is
 *	held: the map is not unmapped before netgpu_mem_hold_unmap() or
 *	netgpu_mem_hold_put()); NULL once let go
 * @start: the region's first address
 * @nr_pages: the region's length in pages
 */
struct netgpu_mem_hold {
	struct netgpu_region	*r;
	struct netgpu_dmamap	*map;
	u64			start;
	unsigned long		nr_pages;
};

/* Areas */
struct netgpu_mem *netgpu_mem_create(void);
void netgpu_mem_close(struct netgpu_mem *mem);
int netgpu_mem_add_region(struct netgpu_mem *mem,
			  const struct netgpu_region_desc *desc);
struct netgpu_region *netgpu_mem_get_region(struct netgpu_mem *mem, u32 id);

/* Regions */
bool netgpu_region_tryget(struct netgpu_region *r);
void netgpu_region_put(struct netgpu_region *r);
void netgpu_region_revoke(struct netgpu_region *r);
void netgpu_region_revoke_provider(struct netgpu_region *r);
void netgpu_region_revoke_async(struct netgpu_region *r);
void netgpu_region_flush_revoke(struct netgpu_region *r);
int netgpu_region_get_pages(struct netgpu_region *r, u64 addr,
			    struct page **pages, unsigned int count);
bool netgpu_region_cpu_writable(const struct netgpu_region *r);

/* DMA maps: buffers in flight, DMA syncs */
void netgpu_dmamap_inflight_add(struct netgpu_dmamap *map, long n);
void netgpu_dmamap_inflight_sub(struct netgpu_dmamap *map, long n);
void netgpu_dmamap_sync_for_cpu(const struct netgpu_dmamap *map, u64 off,
				u64 len);
void netgpu_dmamap_sync_for_device(const struct netgpu_dmamap *map, u64 off,
				   u64 len);
int netgpu_dmamap_dma(const struct netgpu_dmamap *map, u64 off,
		      dma_addr_t *dma, u64 *len);

/* Contexts */
void netgpu_memctx_init(struct netgpu_memctx *mc, struct device *dev);
int netgpu_memctx_attach(struct netgpu_memctx *mc, struct netgpu_region *r);
int netgpu_memctx_detach(struct netgpu_memctx *mc, struct netgpu_region *r);
void netgpu_memctx_release(struct netgpu_memctx *mc);
int netgpu_memctx_lookup(struct netgpu_memctx *mc, u64 addr,
			 struct netgpu_mem_loc *loc);
int netgpu_memctx_hold(struct netgpu_memctx *mc,
		       struct netgpu_mem_hold **holds);
void netgpu_mem_hold_unmap(struct netgpu_mem_hold *h);
void netgpu_mem_hold_put(struct netgpu_mem_hold *h);
bool netgpu_mem_hold_revoked(const struct netgpu_mem_hold *h);

int netgpu_dmabuf_add_region(struct netgpu_mem *mem, struct dma_buf *dmabuf,
			     u64 addr);
int netgpu_dmabuf_add_region_fd(struct netgpu_mem *mem, int fd, u64 addr);

/**
 * enum netgpu_fault_point - netgpu's fault points (fault.c)
 * @NETGPU_FAIL_REFILL: fail_netgpu_refill: the provider's refill finds
 *	no buffer (neither on the fill ring nor on the free list)
 * @NETGPU_FAIL_DMA_MAP: fail_netgpu_dma_map: mapping a region for a
 *	device fails (a host page's mapping error, or a dma-buf
 *	attachment's map with -ENOMEM)
 * @NETGPU_FAIL_RX_RING: fail_netgpu_rx_ring: a socket queue's rx ring
 *	reads as full although it has room
 * @NETGPU_FAIL_TX: fail_netgpu_tx: a zero-copy send cannot take the pages
 *	of its next chunk, as when the region is revoked under it
 * @NETGPU_NR_FAIL: number of points
 */
enum netgpu_fault_point {
	NETGPU_FAIL_REFILL,
	NETGPU_FAIL_DMA_MAP,
	NETGPU_FAIL_RX_RING,
	NETGPU_FAIL_TX,
	NETGPU_NR_FAIL,
};

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * On while a KUnit case redirects a function of the data path (the DMA
 * syncs, the user-reference window: static stubs): without it the data
 * path does not look for a stub, which costs a lookup per call whenever
 * a KUnit suite (a benchmark's included) is running.
 */
DECLARE_STATIC_KEY_FALSE(netgpu_data_path_stubs);
#endif

#if IS_ENABLED(CONFIG_NETGPU_FAULT_INJECTION)
bool netgpu_should_fail(enum netgpu_fault_point point);
int netgpu_fault_init(void);
void netgpu_fault_exit(void);
#if IS_ENABLED(CONFIG_KUNIT)
struct fault_attr;
struct fault_attr *netgpu_fault_attr(enum netgpu_fault_point point);
#endif
#else
static inline bool netgpu_should_fail(enum netgpu_fault_point point)
{
	return false;
}

static inline int netgpu_fault_init(void)
{
	return 0;
}

static inline void netgpu_fault_exit(void)
{
}
#endif

#endif /* _NETGPU_MEM_H */
