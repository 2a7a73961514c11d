/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu NIC interface: interface queues, netgpu as the page_pool memory
 * provider of one rx queue.
 */
#ifndef _NETGPU_NIC_H
#define _NETGPU_NIC_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <net/netmem.h>

#include "buf.h"
#include "mem.h"

/**
 * DOC: netgpu NIC interface
 *
 * An interface queue (&struct netgpu_ifq) is what a context binds to one
 * rx queue of its device.  netgpu is then that queue's page_pool memory
 * provider: the driver asks its page_pool for buffers as for any other
 * memory, the pool asks netgpu, and the driver's skbs carry netgpu
 * buffers as unreadable netmem frags.  No driver calls netgpu: any driver
 * that keeps the devmem contract (page_pool netmem API with
 * PP_FLAG_ALLOW_UNREADABLE_NETMEM, header split, netdev_queue_mgmt_ops)
 * carries netgpu traffic.
 *
 * **Buffers.**  When the queue is created, the regions attached to the
 * context are held with their DMA maps for the device, and every
 * page-sized buffer gets a &struct netgpu_niov: a &struct net_iov (what
 * page_pool and skbs handle), the provider-neutral &struct netgpu_buf
 * and a count of user references.  A buffer is at any time in exactly
 * one of these places:
 *
 * - the free list (the buffer cache), owned by netgpu, ``niov.pp`` NULL;
 * - a page_pool: posted to the NIC, in the pool's caches, in an skb of
 *   the stack, or held by user space (each user reference holds one
 *   page_pool reference, as io_uring's zero-copy receive does).
 *
 * **Refill** (the provider's alloc_netmems, the pool's single-consumer
 * context): first buffers user space gave back on the fill ring (each
 * entry validated: the start of a buffer of this queue that user space
 * holds, and not a duplicate already published when the buffer was last
 * handed out; anything else is skipped and counted, never trusted), then
 * the free list.  A buffer enters a pool from the free list only, and only
 * then does the pool's in-flight count grow; a buffer that comes back to
 * the pool it is in is never counted twice, so page_pool_inflight()
 * stays exact.
 *
 * **Lifetime.**  The queue lives while its owner (the context's queue
 * file) or any page_pool it is the provider of holds it: a pool's
 * ``destroy`` runs only once the pool's last buffer came back, so buffers
 * user space or the stack still hold after unbind keep the queue.  The
 * DMA maps are held (netgpu_dmamap_inflight_add()) until the queue is
 * freed, or until the device goes (netgpu_ifq_dev_gone()), whichever is
 * first: a device that is gone writes nothing, so its maps are unmapped
 * then, not when the last buffer comes back.
 *
 * Only a bound queue reads its fill ring: once it is unbound, or its
 * device went, buffers user space gives back stay in the ring, and the
 * pools that hold them stay in flight, until the queue's file is closed,
 * whose scrub takes every user reference back.
 *
 * **Locks.**  rtnl_lock serializes bind, unbind and the device going.
 * &netgpu_ifq.fill_lock (a BH spinlock) serializes the fill ring's
 * consumer and the free list's NAPI tier: two pools of one queue (the old
 * and the new one of a queue restart) may refill at the same time.
 * Returns to the free list (release_netmem, from any context) use the
 * cache's locked tier.
 */

struct device;
struct file;
struct poll_table_struct;
struct vm_area_struct;
struct net_device;
struct page_pool;
struct pp_memory_provider_params;
struct netgpu_account;
struct netgpu_cache;
struct netgpu_dmamap;
struct netgpu_ifq;
struct netgpu_memctx;
struct netgpu_queue;
struct netgpu_queue_geom;
struct netgpu_region;
struct netgpu_rx_desc;
struct netgpu_stats;
struct sk_buff;

/**
 * struct netgpu_niov - one buffer of an interface queue
 * @niov: what page_pool and the stack handle; ``owner`` stays NULL (only
 *	devmem reads it)
 * @buf: the buffer's region and index
 * @area: the area of the queue the buffer is in
 * @uref: references user space holds (each with a page_pool reference)
 * @returned: user space gave the buffer back since it last left the free
 *	list; tells "given back twice" from "never given" in the statistics
 * @fill_mark: the fill ring's end (&struct netgpu_ifq.fill_pos plus the
 *	entries published) at the buffer's last handout that found the ring
 *	moved on; an entry before it was written before that handout
 * @fill_older: user references the buffer had when @fill_mark was set:
 *	entries before the mark give back at most these, any further one is
 *	a stale duplicate.  @fill_mark and @fill_older are under the queue's
 *	&struct netgpu_ifq.fill_lock.
 * @handed: the granules (NETGPU_NIOV_GRANULE bytes each, 64 per buffer)
 *	with bytes handed to user space since the buffer last went to the
 *	device: what user space may have written since, which no later sync
 *	for the CPU may overwrite.  Under the fill lock.
 */
/* A buffer's bytes in 64 granules, as &struct netgpu_niov.handed counts them. */
#define NETGPU_NIOV_GRANULE	(PAGE_SIZE / 64)

struct netgpu_niov {
	struct net_iov		niov;
	struct netgpu_buf	buf;
	struct netgpu_ifq_area	*area;
	atomic_t		uref;
	u32			fill_older;
	u64			fill_mark;
	u64			handed;
	bool			returned;
};

/**
 * struct netgpu_ifq_area - a region as an interface queue holds it
 * @ifq: the queue
 * @h: the region, its DMA map for the queue's device (until the device
 *	can no longer write: netgpu_mem_hold_unmap()) and its first user
 *	address
 * @nr: number of buffers
 * @niovs: @nr buffers
 * @home: the free list the buffers go back to: the queue's, or its copy
 *	list (&netgpu_ifq.copy)
 * @cpu: the CPU can write the memory (host pages): the receive path may
 *	copy data that arrived in ordinary memory into these buffers
 */
struct netgpu_ifq_area {
	struct netgpu_ifq	*ifq;
	struct netgpu_mem_hold	h;
	u32			nr;
	struct netgpu_niov	*niovs;
	struct netgpu_cache	*home;
	bool			cpu;
};

/**
 * struct netgpu_ifq_counters - fill-ring rejections, by reason
 * @taken: entries taken (buffers given back)
 * @unaligned: not the start of a buffer
 * @no_region: in no region of the queue
 * @never_given: a buffer user space was never given
 * @twice: a buffer user space gave back already
 * @in_nic: a buffer the NIC or a pool holds
 * @in_stack: a buffer the stack holds (shared)
 * @scrubbed: user references the scrub took back (netgpu_ifq_scrub())
 */
struct netgpu_ifq_counters {
	u64	taken;
	u64	unaligned;
	u64	no_region;
	u64	never_given;
	u64	twice;
	u64	in_nic;
	u64	in_stack;
	u64	scrubbed;
};

/**
 * enum netgpu_ifq_state - where an interface queue is
 * @NETGPU_IFQ_NEW: created, not bound
 * @NETGPU_IFQ_BOUND: the provider of an rx queue
 * @NETGPU_IFQ_UNBOUND: was bound; the rx queue runs without netgpu
 * @NETGPU_IFQ_DEAD: the device went while bound
 */
enum netgpu_ifq_state {
	NETGPU_IFQ_NEW,
	NETGPU_IFQ_BOUND,
	NETGPU_IFQ_UNBOUND,
	NETGPU_IFQ_DEAD,
};

/**
 * struct netgpu_ifq - an interface queue
 * @ref: the owner's, one per page_pool using the queue
 * @state: &enum netgpu_ifq_state; written under rtnl_lock and @fill_lock
 * @netdev: the device while bound, held through @tracker
 * @tracker: @netdev's reference tracker
 * @rxq: the rx queue index while bound
 * @dma_dev: the device the regions are mapped for (a reference is held)
 * @areas: @nr_areas areas
 * @nr_areas: number of areas
 * @nr_bufs: buffers over all areas
 * @owner: an opaque cookie the owner sets after creating the queue (the
 *	context does): the receive path describes only buffers of queues of
 *	its own context
 * @free: the free list the NIC's buffers come from
 * @copy: with both device memory (dma-buf) and host memory in the queue,
 *	the host buffers: kept off the NIC for the receive path's copies of
 *	data that arrived in ordinary memory; else NULL (host-only queues
 *	copy into buffers of @free)
 * @fill: the fill ring (user space produces)
 * @fill_lock: Protects: the fill ring's consumer side, handouts to user
 *	space, the NAPI tiers of @free and @copy, @cnt, @state changes, the
 *	areas' maps (&struct netgpu_mem_hold.map) going.  Ordering: inside rtnl_lock and the
 *	socket lock, a leaf otherwise (page_pool's ring lock may be taken
 *	under it).
 * @cnt: fill-ring counters
 * @fill_pos: fill-ring entries the refill has read since the queue was
 *	made (64 bits: never wraps); under @fill_lock
 * @in_pool: buffers that entered a pool from the free list and have not
 *	been released to it again
 * @released_held: buffers a pool released while user space still held
 *	them (an accounting bug; netgpu_mp_release_netmem() warns at the
 *	first of each queue)
 * @scrubbed: the owner took every user reference back
 *	(netgpu_ifq_scrub()); no new one may be taken, as nothing would
 *	take it back.  Under @fill_lock.
 * @starved: the last refill found no buffer: NETGPU_RING_NEED_WAKEUP is
 *	set in the fill ring's flags.  Under @fill_lock; only while bound.
 * @wakeups: NETGPU_IFQ_IOCTL_WAKEUP calls that scheduled the rx queue's
 *	NAPI instance (not those that found it scheduled already)
 * @wait: poll() waiters of the queue's file
 * @stuck: on the list of queues whose unbind could not restart the rx
 *	queue (under rtnl_lock): the old pool still runs with the NIC, so
 *	the queue keeps the device and the maps until @retry restarts it,
 *	or the device goes (netgpu_ifq_netdev_gone())
 * @retry: retries that restart; holds a reference while @stuck is listed
 * @stuck_err: the last failed restart's error, while @stuck is listed
 * @stuck_tries: restarts tried since the unbind, while @stuck is listed
 */
struct netgpu_ifq {
	refcount_t		ref;
	enum netgpu_ifq_state	state;
	struct net_device	*netdev;
	netdevice_tracker	tracker;
	u32			rxq;
	int			ifindex;	/* tracepoints: of the last bind */
	struct device		*dma_dev;
	struct netgpu_ifq_area	*areas;
	u32			nr_areas;
	u32			nr_bufs;
	const void		*owner;
	u32			ctx_id;		/* netlink: the owner's id */
	struct netgpu_cache	*free;
	struct netgpu_cache	*copy;
	struct netgpu_queue	*fill;
	spinlock_t		fill_lock;	/* fill consumer, handouts */
	struct netgpu_ifq_counters cnt;
	u64			fill_pos;
	atomic_t		in_pool;
	atomic_t		released_held;
	bool			scrubbed;
	bool			starved;
	atomic_long_t		wakeups;
	wait_queue_head_t	wait;
	struct list_head	stuck;
	struct delayed_work	retry;
	int			stuck_err;
	u32			stuck_tries;
};

static inline struct netgpu_niov *netgpu_niov_from_netmem(netmem_ref nm)
{
	return container_of(netmem_to_net_iov(nm), struct netgpu_niov, niov);
}

static inline netmem_ref netgpu_niov_netmem(struct netgpu_niov *n)
{
	return net_iov_to_netmem(&n->niov);
}

#if IS_ENABLED(CONFIG_NETGPU_NIC)
struct netgpu_ifq *netgpu_ifq_create(struct netgpu_memctx *mc,
				     struct netgpu_queue_geom *fill);
void netgpu_ifq_get(struct netgpu_ifq *ifq);
void netgpu_ifq_put(struct netgpu_ifq *ifq);
int netgpu_ifq_check_dev(struct net_device *dev);
int netgpu_ifq_bind(struct netgpu_ifq *ifq, struct net_device *dev,
		    u32 *rxq, bool any);
void netgpu_ifq_unbind(struct netgpu_ifq *ifq);
void netgpu_ifq_dev_gone(struct netgpu_ifq *ifq);
void netgpu_ifq_netdev_gone(struct net_device *dev);
bool netgpu_ifq_revoked(const struct netgpu_ifq *ifq);
bool netgpu_ifq_holds(const struct netgpu_ifq *ifq,
		      const struct netgpu_region *r);
void netgpu_ifq_scrub(struct netgpu_ifq *ifq);
void netgpu_ifq_get_stats(struct netgpu_ifq *ifq, struct netgpu_stats *st);
int netgpu_ifq_wakeup(struct netgpu_ifq *ifq);
#if IS_ENABLED(CONFIG_KUNIT)
void netgpu_ifq_starving(struct netgpu_ifq *ifq);
#endif
void netgpu_ifq_account(struct netgpu_ifq *ifq, struct netgpu_account *a);
int netgpu_ifq_stuck_show(struct seq_file *m, void *unused);
__poll_t netgpu_ifq_poll(struct netgpu_ifq *ifq, struct file *file,
			 struct poll_table_struct *wait);
int netgpu_ifq_mmap(struct netgpu_ifq *ifq, struct vm_area_struct *vma);
bool netgpu_ifq_owns(const struct netgpu_ifq *ifq, netmem_ref nm);
struct netgpu_ifq *netgpu_ifq_of_netmem(netmem_ref nm);
bool netgpu_ifq_can_copy(struct netgpu_ifq *ifq);
int netgpu_ifq_rx_niov(struct netgpu_ifq *ifq, netmem_ref nm, u32 off,
		       u32 len, struct netgpu_rx_desc *desc);
int netgpu_ifq_rx_copy(struct netgpu_ifq *ifq, const struct sk_buff *skb,
		       u32 off, u32 len, struct netgpu_rx_desc *desc);
u64 netgpu_niov_addr(const struct netgpu_niov *n);
void netgpu_niov_get_uref(struct netgpu_niov *n);
void netgpu_ifq_set_mp_params(struct netgpu_ifq *ifq,
			      struct pp_memory_provider_params *p);
#if IS_ENABLED(CONFIG_KUNIT)
/* Out of line for KUnit static stubs */
void netgpu_niov_uref_window(struct netgpu_niov *n);
void netgpu_ifq_walk_break(struct netgpu_ifq *ifq);
/* The NIC boots' refill hook (kunit/nic_hooks.c) */
DECLARE_STATIC_KEY_FALSE(netgpu_refill_hook_on);
extern void (*netgpu_refill_hook)(struct net_device *dev, gfp_t gfp);
#endif
#else
/* Without the NIC interface no queue exists: the context's list is empty. */
static inline void netgpu_ifq_put(struct netgpu_ifq *ifq)
{
}

static inline void netgpu_ifq_dev_gone(struct netgpu_ifq *ifq)
{
}

static inline void netgpu_ifq_netdev_gone(struct net_device *dev)
{
}

static inline void netgpu_ifq_unbind(struct netgpu_ifq *ifq)
{
}

static inline bool netgpu_ifq_revoked(const struct netgpu_ifq *ifq)
{
	return false;
}

static inline bool netgpu_ifq_holds(const struct netgpu_ifq *ifq,
				    const struct netgpu_region *r)
{
	return false;
}

static inline int netgpu_ifq_wakeup(struct netgpu_ifq *ifq)
{
	return -ENODEV;
}

static inline void netgpu_ifq_get_stats(struct netgpu_ifq *ifq,
					struct netgpu_stats *st)
{
}

static inline void netgpu_ifq_account(struct netgpu_ifq *ifq,
				      struct netgpu_account *a)
{
}

static inline int netgpu_ifq_stuck_show(struct seq_file *m, void *unused)
{
	seq_puts(m, "stuck 0\n");
	return 0;
}
#endif

#endif /* _NETGPU_NIC_H */
