// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu NIC interface: netgpu as the page_pool memory provider of one rx
 * queue.  See the DOC in nic.h for the buffers' places, the lifetimes and
 * the locks.
 *
 * 6.12 has the memory-provider hook of page_pool but none of the helpers
 * mainline added with its second provider (net_mp_niov_set_page_pool()
 * and friends, net_mp_open_rxq()): their few lines are open-coded here,
 * each named after its mainline counterpart.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/dma-direction.h>
#include <linux/export.h>
#include <linux/highmem.h>
#include <linux/kobject.h>
#include <linux/poll.h>
#include <linux/netdevice.h>
#include <linux/nospec.h>
#include <linux/poison.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool/helpers.h>
#include <net/page_pool/memory_provider.h>
#include <uapi/linux/netgpu.h>

#include "cache.h"
#include "ctx.h"
#include "mem.h"
#include "nic.h"
#include "queue.h"

#define CREATE_TRACE_POINTS
#include <trace/events/netgpu.h>

EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_refill);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_fill_reject);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_starve);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_rx_desc);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_copy_fallback);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_unbind);
EXPORT_TRACEPOINT_SYMBOL_GPL(netgpu_scrub);

static const struct memory_provider_ops netgpu_mp_ops;

/* Buffers a walk over a queue's buffers visits between two breaks. */
#define NETGPU_IFQ_WALK_BATCH	1024

/* How long an unbind whose restart failed waits before it tries again. */
#define NETGPU_IFQ_RETRY	HZ

/*
 * Queues whose unbind could not restart their rx queue (&netgpu_ifq.stuck).
 * Protects: membership.  Ordering: rtnl_lock is the lock, so that
 * NETDEV_UNREGISTER (called under it) sees every queue still holding the
 * device going away.
 */
static LIST_HEAD(netgpu_ifq_stuck);

static void netgpu_ifq_retry_work(struct work_struct *work);

/* ===== Buffers ===== */

/**
 * netgpu_niov_addr() - the user address of a buffer
 * @n: the buffer
 *
 * Context: Any context.
 * Return: the address user space knows the buffer's first byte by.
 */
u64 netgpu_niov_addr(const struct netgpu_niov *n)
{
	return n->area->h.start + ((u64)n->buf.index << PAGE_SHIFT);
}
EXPORT_SYMBOL_GPL(netgpu_niov_addr);

/**
 * netgpu_ifq_of_netmem() - the interface queue a netmem belongs to
 * @nm: a netmem of an skb frag
 *
 * Context: Any context; the caller holds a reference on @nm, which holds
 * its page_pool, which holds the queue.
 * Return: the queue, or NULL for a page or a net_iov of another provider.
 */
struct netgpu_ifq *netgpu_ifq_of_netmem(netmem_ref nm)
{
	struct page_pool *pp;

	if (!netmem_is_net_iov(nm))
		return NULL;
	pp = netmem_to_net_iov(nm)->pp;
	if (!pp || pp->mp_ops != &netgpu_mp_ops)
		return NULL;
	return pp->mp_priv;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_of_netmem);

/**
 * netgpu_ifq_owns() - whether a netmem is a buffer of an interface queue
 * @ifq: the queue
 * @nm: a netmem of an skb frag
 *
 * True only for a net_iov of a page_pool whose provider is netgpu with
 * @ifq: a frag of another provider, or of another queue, is never taken
 * for one of ours.
 *
 * Context: Any context; the caller holds a reference on @nm.
 */
bool netgpu_ifq_owns(const struct netgpu_ifq *ifq, netmem_ref nm)
{
	return netgpu_ifq_of_netmem(nm) == ifq;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_owns);

/*
 * Hand @n to user space, @ifq's fill_lock held: one more user reference.
 * An entry user space had published before this handout cannot give it
 * back: when the ring moved on since the buffer's mark, the mark moves to
 * the ring's end and the references held now are the ones entries before
 * it may return (netgpu_niov_put_uref_fill()).
 */
static void __netgpu_niov_get_uref(struct netgpu_ifq *ifq,
				   struct netgpu_niov *n)
{
	u64 end;

	lockdep_assert_held(&ifq->fill_lock);

	end = ifq->fill_pos + netgpu_queue_nb_avail(ifq->fill);
	if (end != n->fill_mark) {
		n->fill_mark = end;
		n->fill_older = atomic_read(&n->uref);
	}
	WRITE_ONCE(n->returned, false);
	atomic_inc(&n->uref);
}

/**
 * netgpu_niov_get_uref() - hand a buffer to user space
 * @n: a buffer in a page_pool, which the caller holds a reference on
 *	(an skb frag's)
 *
 * Takes a page_pool reference for user space, then the user reference;
 * the buffer comes back through the fill ring or the scrub.
 *
 * Context: Process or softirq context; takes the queue's fill_lock.
 */
void netgpu_niov_get_uref(struct netgpu_niov *n)
{
	struct netgpu_ifq *ifq = n->area->ifq;

	page_pool_ref_netmem(netgpu_niov_netmem(n));
	spin_lock_bh(&ifq->fill_lock);
	__netgpu_niov_get_uref(ifq, n);
	spin_unlock_bh(&ifq->fill_lock);
}
EXPORT_SYMBOL_GPL(netgpu_niov_get_uref);

/**
 * netgpu_niov_uref_window() - between the read of a user count and its drop
 * @n: the buffer
 *
 * Does nothing.  netgpu_niov_put_uref() calls it after it read a user
 * reference count that is not zero and before its compare-and-exchange,
 * so that a KUnit case can take the references there as the scrub does
 * (kunit_activate_static_stub(), with netgpu_data_path_stubs on) and see
 * the exchange fail.
 *
 * Context: Any context; the fill path holds the queue's fill_lock.
 */
VISIBLE_IF_KUNIT void netgpu_niov_uref_window(struct netgpu_niov *n)
{
#if IS_ENABLED(CONFIG_KUNIT)
	if (static_branch_unlikely(&netgpu_data_path_stubs))
		KUNIT_STATIC_STUB_REDIRECT(netgpu_niov_uref_window, n);
#endif
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_niov_uref_window);

/* Drop one user reference; refuse (false) when user space holds none. */
static bool netgpu_niov_put_uref(struct netgpu_niov *n)
{
	int old = atomic_read(&n->uref);

	/*
	 * A compare-and-swap, not a test then a decrement: the scrub may
	 * take every reference at once meanwhile (io_uring's zcrx had that
	 * race: two returns of one buffer).
	 */
	do {
		if (!old)
			return false;
		netgpu_niov_uref_window(n);
	} while (!atomic_try_cmpxchg(&n->uref, &old, old - 1));
	return true;
}

/*
 * Drop one user reference for the fill-ring entry at position @pos:
 * -ENOENT when user space holds none; -ESTALE when the entry was written
 * before the buffer's mark and the references older than the mark are
 * all back (a second return of an earlier handout: taking it would take
 * the new one from user space).  The refill reads entries in order, so
 * once one is past the mark no later one is before it.
 */
static int netgpu_niov_put_uref_fill(struct netgpu_ifq *ifq,
				     struct netgpu_niov *n, u64 pos)
{
	bool older = pos < n->fill_mark;

	lockdep_assert_held(&ifq->fill_lock);

	if (!atomic_read(&n->uref))
		return -ENOENT;
	if (older && !n->fill_older)
		return -ESTALE;
	/* The scrub may take every reference meanwhile. */
	if (!netgpu_niov_put_uref(n))
		return -ENOENT;
	if (older)
		n->fill_older--;
	return 0;
}

static void netgpu_niov_sync_for_device(struct netgpu_niov *n)
{
	struct netgpu_ifq_area *a = n->area;

	n->handed = 0;
	netgpu_dmamap_sync_for_device(a->h.map, (u64)n->buf.index << PAGE_SHIFT,
				      PAGE_SIZE);
}

/*
 * A buffer no pool holds comes back (the last user reference of a copy,
 * or of a buffer its pool let go): to its free list.
 */
static void netgpu_niov_put_home(struct netgpu_niov *n)
{
	/* Never full: each list has room for every buffer it may hold. */
	WARN_ON_ONCE(netgpu_cache_put_any(n->area->home, &n->buf));
}

/* Drop @nr page_pool references of @n (user references going). */
static void netgpu_niov_unref(struct netgpu_niov *n, int nr)
{
	netmem_ref nm = netgpu_niov_netmem(n);

	if (page_pool_unref_netmem(nm, nr))
		return;
	if (n->niov.pp)
		page_pool_put_unrefed_netmem(n->niov.pp, nm, -1, false);
	else
		netgpu_niov_put_home(n);
}

/* ===== The memory provider ===== */

/*
 * A buffer of the fill ring: the start of a buffer of this queue.  Sets
 * *@unaligned for an address inside a buffer.
 */
static struct netgpu_niov *netgpu_ifq_find(struct netgpu_ifq *ifq, u64 addr,
					   bool *unaligned)
{
	u32 i;

	for (i = 0; i < ifq->nr_areas; i++) {
		struct netgpu_ifq_area *a = &ifq->areas[i];
		u64 off;
		u32 idx;

		if (addr < a->h.start)
			continue;
		off = addr - a->h.start;
		if (off >= (u64)a->nr << PAGE_SHIFT)
			continue;
		if (offset_in_page(off)) {
			*unaligned = true;
			return NULL;
		}
		idx = array_index_nospec((unsigned long)(off >> PAGE_SHIFT), a->nr);
		return &a->niovs[idx];
	}
	return NULL;
}

/* A fill-ring entry at @addr skipped for @reason: counted and traced. */
static void netgpu_ifq_fill_reject(struct netgpu_ifq *ifq, u64 addr,
				   enum netgpu_fill_reason reason)
{
	switch (reason) {
	case NETGPU_FILL_UNALIGNED:
		ifq->cnt.unaligned++;
		break;
	case NETGPU_FILL_NO_REGION:
		ifq->cnt.no_region++;
		break;
	case NETGPU_FILL_NEVER_GIVEN:
		ifq->cnt.never_given++;
		break;
	case NETGPU_FILL_TWICE:
		ifq->cnt.twice++;
		break;
	case NETGPU_FILL_IN_NIC:
		ifq->cnt.in_nic++;
		break;
	case NETGPU_FILL_IN_STACK:
		ifq->cnt.in_stack++;
		break;
	}
	trace_netgpu_fill_reject(ifq->ifindex, ifq->rxq, addr, reason);
}

/* Why user space may not give @n back: it holds no reference on it. */
static enum netgpu_fill_reason netgpu_ifq_refused(struct netgpu_niov *n)
{
	if (READ_ONCE(n->returned))
		return NETGPU_FILL_TWICE;
	if (!READ_ONCE(n->niov.pp))
		return NETGPU_FILL_NEVER_GIVEN;
	if (atomic_long_read(&n->niov.pp_ref_count) > 1)
		return NETGPU_FILL_IN_STACK;
	return NETGPU_FILL_IN_NIC;
}

/*
 * The fill-ring entry at position @pos: a buffer user space gives back,
 * maybe to @pp.  Each entry is checked against what user space holds:
 * see netgpu_niov_put_uref_fill().
 */
static void netgpu_ifq_fill_one(struct netgpu_ifq *ifq, struct page_pool *pp,
				u64 addr, u64 pos)
{
	bool unaligned = false;
	struct netgpu_niov *n;
	netmem_ref nm;
	int err;

	n = netgpu_ifq_find(ifq, addr, &unaligned);
	if (!n) {
		netgpu_ifq_fill_reject(ifq, addr, unaligned ?
				       NETGPU_FILL_UNALIGNED :
				       NETGPU_FILL_NO_REGION);
		return;
	}
	err = netgpu_niov_put_uref_fill(ifq, n, pos);
	if (err) {
		netgpu_ifq_fill_reject(ifq, addr, err == -ESTALE ?
				       NETGPU_FILL_TWICE :
				       netgpu_ifq_refused(n));
		return;
	}
	ifq->cnt.taken++;
	WRITE_ONCE(n->returned, true);
	/*
	 * User space gave back its last reference, so it is done writing
	 * the buffer: the device may have it back now, whoever posts it.
	 * The stack's last put recycles a buffer through page_pool, which
	 * syncs nothing for us (dma_sync is off), so the sync cannot wait
	 * for the cache below.  While user space holds another frag of the
	 * buffer, its later return syncs.  A copy (in no pool) is synced
	 * when it leaves the free list.
	 */
	if (n->niov.pp && !atomic_read(&n->uref))
		netgpu_niov_sync_for_device(n);

	/* The user's page_pool reference; the stack may hold others. */
	nm = netgpu_niov_netmem(n);
	if (n->niov.pp != pp) {
		/*
		 * A pool of an earlier binding releases it to us; a copy
		 * (in no pool) goes back to its free list.
		 */
		netgpu_niov_unref(n, 1);
		return;
	}
	if (page_pool_unref_netmem(nm, 1))
		return;
	/* net_mp_netmem_place_in_cache(): still in flight in @pp. */
	pp->alloc.cache[pp->alloc.count++] = nm;
}

/*
 * At most one ring's worth of entries per call, refused ones included:
 * user space rewriting the producer index over junk must not keep the
 * NAPI context here.
 */
static void netgpu_ifq_refill_fill(struct netgpu_ifq *ifq,
				   struct page_pool *pp)
{
	u32 budget = netgpu_queue_nentries(ifq->fill);
	u64 addrs[16];
	u32 got, i;

	lockdep_assert_held(&ifq->fill_lock);

	while (budget && pp->alloc.count < PP_ALLOC_CACHE_REFILL) {
		got = min_t(u32, budget,
			    PP_ALLOC_CACHE_REFILL - pp->alloc.count);
		got = min_t(u32, got, ARRAY_SIZE(addrs));
		got = netgpu_queue_cons_peek_addr_batch(ifq->fill, addrs, got);
		if (!got)
			break;
		for (i = 0; i < got; i++)
			netgpu_ifq_fill_one(ifq, pp, addrs[i],
					    ifq->fill_pos + i);
		netgpu_queue_cons_release(ifq->fill, got);
		ifq->fill_pos += got;
		budget -= got;
		/* poll() reports room in the fill ring. */
		if (wq_has_sleeper(&ifq->wait))
			wake_up(&ifq->wait);
	}
}

static void netgpu_ifq_refill_free(struct netgpu_ifq *ifq,
				   struct page_pool *pp)
{
	struct netgpu_niov *n;
	struct netgpu_buf *buf;

	lockdep_assert_held(&ifq->fill_lock);

	while (pp->alloc.count < PP_ALLOC_CACHE_REFILL) {
		buf = netgpu_cache_get_napi(ifq->free);
		if (!buf)
			break;
		n = container_of(buf, struct netgpu_niov, buf);
		/* net_mp_niov_set_page_pool() */
		n->niov.pp = pp;
		n->niov.pp_magic = PP_SIGNATURE;
		atomic_long_set(&n->niov.pp_ref_count, 1);
		pp->pages_state_hold_cnt++;
		atomic_inc(&ifq->in_pool);
		netgpu_niov_sync_for_device(n);
		pp->alloc.cache[pp->alloc.count++] = netgpu_niov_netmem(n);
	}
}

/* The queue has buffers again: user space need not kick it. */
static void netgpu_ifq_unstarve(struct netgpu_ifq *ifq)
{
	lockdep_assert_held(&ifq->fill_lock);

	WRITE_ONCE(ifq->starved, false);
	netgpu_queue_write_flags(ifq->fill, 0);
}

/**
 * netgpu_ifq_starving() - between a refill's first look and the flag
 * @ifq: the queue, its fill_lock held
 *
 * Does nothing.  netgpu_ifq_starve() calls it after the refill found
 * nothing and before it raises NETGPU_RING_NEED_WAKEUP, so that a KUnit
 * case can publish fill entries there, as user space may at that moment
 * (kunit_activate_static_stub()), and see the second look take them.
 *
 * Context: The pool's allocation context, @ifq's fill_lock held.
 */
VISIBLE_IF_KUNIT void netgpu_ifq_starving(struct netgpu_ifq *ifq)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_ifq_starving, ifq);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ifq_starving);

/*
 * A refill found no buffer: tell user space (NETGPU_RING_NEED_WAKEUP,
 * EPOLLPRI), then look once more, at the fill ring and at the free list
 * its entries may have sent buffers to.  (E): the flag's store, a full
 * barrier, then the load of ->prod in the refill; user space stores
 * ->prod, a full barrier, then loads the flag (netgpu_fill_submit()).
 * Store buffering with both fences: one of the two loads sees the other
 * side's store, so entries published while the flag was going up are
 * either taken here or followed by a kick
 * (kunit/litmus/netgpu-wakeup.litmus).
 */
static void netgpu_ifq_starve(struct netgpu_ifq *ifq, struct page_pool *pp)
{
	lockdep_assert_held(&ifq->fill_lock);

	if (ifq->starved)
		return;
	netgpu_ifq_starving(ifq);
	WRITE_ONCE(ifq->starved, true);
	netgpu_queue_write_flags(ifq->fill, NETGPU_RING_NEED_WAKEUP);
	smp_mb(); /* (E) */
	netgpu_ifq_refill_fill(ifq, pp);
	netgpu_ifq_refill_free(ifq, pp);
	if (pp->alloc.count) {
		netgpu_ifq_unstarve(ifq);
		return;
	}
	wake_up_poll(&ifq->wait, EPOLLPRI);
}

/*
 * page_pool's slow path, in the pool's allocation context (NAPI, or the
 * driver's ring setup): never concurrent with itself for one pool.
 */
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * The NIC boots' refill hook (kunit/nic_hooks.c): called first in every
 * refill while netgpu_refill_hook_on is on, with the pool's device (the
 * queue's is set only once its restart succeeded) and the refill's gfp
 * flags, to see in what state a driver refills (a
 * kernel without KUnit has neither).  Set once, before the key is on.
 */
struct static_key_false netgpu_refill_hook_on = STATIC_KEY_FALSE_INIT;
EXPORT_SYMBOL_IF_KUNIT(netgpu_refill_hook_on);
void (*netgpu_refill_hook)(struct net_device *dev, gfp_t gfp);
EXPORT_SYMBOL_IF_KUNIT(netgpu_refill_hook);
#endif

static netmem_ref netgpu_mp_alloc_netmems(struct page_pool *pp, gfp_t gfp)
{
	struct netgpu_ifq *ifq = pp->mp_priv;

#if IS_ENABLED(CONFIG_KUNIT)
	if (static_branch_unlikely(&netgpu_refill_hook_on))
		netgpu_refill_hook(pp->slow.netdev, gfp);
#endif

	/*
	 * fail_netgpu_refill: the refill finds nothing; the fill ring and
	 * the free list keep their buffers for the next one.
	 */
	if (!netgpu_should_fail(NETGPU_FAIL_REFILL)) {
		spin_lock_bh(&ifq->fill_lock);
		if (ifq->state == NETGPU_IFQ_BOUND) {
			u32 before = pp->alloc.count, filled;

			netgpu_ifq_refill_fill(ifq, pp);
			filled = pp->alloc.count - before;
			netgpu_ifq_refill_free(ifq, pp);
			if (!pp->alloc.count) {
				/*
				 * Its second look may find buffers (in
				 * the trace, as its first look's).
				 */
				netgpu_ifq_starve(ifq, pp);
				filled = pp->alloc.count;
			} else if (ifq->starved) {
				netgpu_ifq_unstarve(ifq);
			}
			trace_netgpu_refill(ifq->ifindex, ifq->rxq, filled,
					    pp->alloc.count - before - filled,
					    pp->alloc.count);
			if (!pp->alloc.count)
				trace_netgpu_starve(ifq->ifindex, ifq->rxq);
		}
		spin_unlock_bh(&ifq->fill_lock);
	}

	if (!pp->alloc.count)
		return 0;
	return pp->alloc.cache[--pp->alloc.count];
}

/* The pool lets go of a buffer: back to the free list. */
static bool netgpu_mp_release_netmem(struct page_pool *pp, netmem_ref nm)
{
	struct netgpu_ifq *ifq = pp->mp_priv;
	struct netgpu_niov *n;

	if (WARN_ON_ONCE(!netmem_is_net_iov(nm)))
		return false;
	n = netgpu_niov_from_netmem(nm);
	/*
	 * The pool lets a buffer go at its last reference: user space,
	 * each of whose references is one of the pool's, holds none.  One
	 * it still held would reach the free list and then the NIC while
	 * user space reads it.  Counted per queue, and a warning at the
	 * first of each queue: a pool's destroy may release thousands.
	 */
	if (unlikely(atomic_read(&n->uref)))
		WARN(atomic_inc_return(&ifq->released_held) == 1,
		     "netgpu: a pool released a buffer user space holds\n");
	/* net_mp_niov_clear_page_pool() */
	n->niov.pp_magic = 0;
	n->niov.pp = NULL;
	atomic_dec(&ifq->in_pool);
	netgpu_niov_put_home(n);
	/* Not a page: page_pool must not put_page() it. */
	return false;
}

static int netgpu_mp_init(struct page_pool *pp)
{
	struct netgpu_ifq *ifq = pp->mp_priv;

	if (!ifq)
		return -EINVAL;
	if (pp->p.dev != ifq->dma_dev || pp->p.order ||
	    pp->p.dma_dir != DMA_FROM_DEVICE || !pp->dma_map)
		return -EINVAL;
	/*
	 * netgpu syncs each buffer itself before it hands it out: page_pool
	 * would sync dma-buf addresses that no dma_map_page() returned.  The
	 * CPU never writes a buffer the pool recycles without netgpu, so
	 * skipping the sync there loses nothing.
	 */
	pp->dma_sync = false;
	pp->dma_sync_for_cpu = false;
	refcount_inc(&ifq->ref);
	return 0;
}

static void netgpu_mp_destroy(struct page_pool *pp)
{
	netgpu_ifq_put(pp->mp_priv);
}

/**
 * netgpu_mp_nl_fill() - the provider's nest in a netdev netlink reply
 * @mp_priv: the queue (struct netgpu_ifq)
 * @rsp: the reply being filled
 * @rxq: the bound rx queue for queue-get; NULL for page-pool-get and
 *	its notifications
 *
 * The nl_fill of netgpu's memory_provider_ops (patches/0021-0022): a
 * netgpu nest naming the context whose queue provides the memory.
 *
 * Context: queue-get holds rtnl_lock, under which the queue stays
 * bound; page-pool-get holds the page pools' lock, and a pool is
 * unlisted before its destroy drops its reference on @mp_priv.
 * Return: 0, or -EMSGSIZE with @rsp as it was.
 */
static int netgpu_mp_nl_fill(void *mp_priv, struct sk_buff *rsp,
			     struct netdev_rx_queue *rxq)
{
	const struct netgpu_ifq *ifq = mp_priv;
	struct nlattr *nest;

	nest = nla_nest_start(rsp, rxq ? NETDEV_A_QUEUE_NETGPU :
					 NETDEV_A_PAGE_POOL_NETGPU);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(rsp, NETDEV_A_NETGPU_PROVIDER_INFO_CTX_ID,
			ifq->ctx_id)) {
		nla_nest_cancel(rsp, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(rsp, nest);
	return 0;
}

static const struct memory_provider_ops netgpu_mp_ops = {
	.init		= netgpu_mp_init,
	.destroy	= netgpu_mp_destroy,
	.alloc_netmems	= netgpu_mp_alloc_netmems,
	.release_netmem	= netgpu_mp_release_netmem,
	.nl_fill	= netgpu_mp_nl_fill,
};

/**
 * netgpu_ifq_set_mp_params() - the provider parameters of a queue
 * @ifq: the queue
 * @p: where to store them (an rx queue's ``mp_params``)
 *
 * For netgpu_ifq_bind() and for tests that build a page_pool on a
 * device of their own.
 *
 * Context: Any context.
 */
void netgpu_ifq_set_mp_params(struct netgpu_ifq *ifq,
			      struct pp_memory_provider_params *p)
{
	p->mp_priv = ifq;
	p->mp_ops = &netgpu_mp_ops;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_set_mp_params);

/* ===== Interface queues ===== */

/*
 * Before the map of @n goes: make what the device wrote into a buffer
 * still out (in the stack, a socket) visible to the CPU, since the
 * receive path syncs a buffer as it hands it out only while the map
 * exists and the unmap skips the CPU sync (a bounce buffer would be
 * lost).  Bytes already handed to user space were synced then, and user
 * space may have written them since (the buffer is its own until given
 * back): a second sync would copy the bounce slot over them (swiotlb),
 * or invalidate the user's dirty cache lines (non-coherent DMA).  So
 * only the granules with no byte handed out are synced, whatever the
 * order in which frags were handed out (one socket may read a frag of a
 * buffer before another socket reads an earlier one).  A granule shared
 * by a frag handed out and one still in the stack counts as handed out:
 * drivers carve frags of whole cache lines, which a granule of a 4 KiB
 * page is.  Under the fill lock, so that no handout runs between the
 * decision and the sync.
 */
static void netgpu_niov_sync_unmap(struct netgpu_niov *n)
{
	u64 off = (u64)n->buf.index << PAGE_SHIFT;
	unsigned long first = 0, end;

	lockdep_assert_held(&n->area->ifq->fill_lock);
	if (!n->niov.pp)
		return;
	/* Each run of granules not handed out, in one sync. */
	for (;;) {
		while (first < 64 && (n->handed & BIT_ULL(first)))
			first++;
		if (first == 64)
			break;
		end = first;
		while (end < 64 && !(n->handed & BIT_ULL(end)))
			end++;
		netgpu_dmamap_sync_for_cpu(n->area->h.map,
					   off + first * NETGPU_NIOV_GRANULE,
					   (end - first) * NETGPU_NIOV_GRANULE);
		first = end;
	}
}

/* The granules of bytes [@off, @off + @len) of a buffer; @len > 0. */
static u64 netgpu_niov_granules(u32 off, u32 len)
{
	u32 first = off / NETGPU_NIOV_GRANULE;
	u32 last = (off + len - 1) / NETGPU_NIOV_GRANULE;

	return GENMASK_ULL(last, first);
}

/*
 * The device can no longer write the buffers: let the maps go, after
 * netgpu_niov_sync_unmap() of each buffer.  The maps change under
 * rtnl_lock only, which the caller holds; the fill lock keeps the
 * receive path's syncs off a map going away.
 */
static void netgpu_ifq_unmap(struct netgpu_ifq *ifq)
{
	u32 i, j;

	ASSERT_RTNL();
	for (i = 0; i < ifq->nr_areas; i++) {
		struct netgpu_ifq_area *a = &ifq->areas[i];

		if (!a->h.map)
			continue;
		for (j = 0; j < a->nr; j++) {
			spin_lock_bh(&ifq->fill_lock);
			netgpu_niov_sync_unmap(&a->niovs[j]);
			spin_unlock_bh(&ifq->fill_lock);
			cond_resched();
		}
	}
	spin_lock_bh(&ifq->fill_lock);
	for (i = 0; i < ifq->nr_areas; i++)
		netgpu_mem_hold_unmap(&ifq->areas[i].h);
	spin_unlock_bh(&ifq->fill_lock);
	/*
	 * No address of a mapping that is gone: a driver that still posted
	 * one would hand the device an IOVA that may be someone else's by
	 * now (io_uring's zcrx clears them at unmap too).
	 */
	for (i = 0; i < ifq->nr_areas; i++) {
		struct netgpu_ifq_area *a = &ifq->areas[i];

		for (j = 0; j < a->nr; j++)
			a->niovs[j].niov.dma_addr = 0;
	}
}

/* Buffers left on the free list at the end: nothing to do. */
static void netgpu_ifq_free_buf(struct netgpu_buf *buf, void *arg)
{
}

static void netgpu_ifq_free(struct netgpu_ifq *ifq)
{
	u32 i;

	/* Every buffer is on the free list: no pool holds the queue. */
	WARN_ON_ONCE(atomic_read(&ifq->in_pool));
	netgpu_cache_destroy(ifq->free, netgpu_ifq_free_buf, NULL);
	netgpu_cache_destroy(ifq->copy, netgpu_ifq_free_buf, NULL);
	for (i = 0; i < ifq->nr_areas; i++) {
		kvfree(ifq->areas[i].niovs);
		netgpu_mem_hold_put(&ifq->areas[i].h);
	}
	kfree(ifq->areas);
	netgpu_queue_destroy(ifq->fill);
	put_device(ifq->dma_dev);
	kfree(ifq);
}

/**
 * netgpu_ifq_get() - take a reference on an interface queue
 * @ifq: the queue; the caller holds a reference, or its owner's lock
 *
 * Context: Any context.
 */
void netgpu_ifq_get(struct netgpu_ifq *ifq)
{
	refcount_inc(&ifq->ref);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_get);

/**
 * netgpu_ifq_put() - drop a reference on an interface queue
 * @ifq: the queue
 *
 * The last reference (the owner's, or the last page_pool's ``destroy``)
 * frees it: unmaps its regions unless the device went already, drops
 * them and frees the fill ring.
 *
 * Context: Process context: page_pool destroys a pool from
 * page_pool_destroy() or its release work.  May be called under
 * rtnl_lock (a queue restart frees the old pool).
 */
void netgpu_ifq_put(struct netgpu_ifq *ifq)
{
	if (refcount_dec_and_test(&ifq->ref))
		netgpu_ifq_free(ifq);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_put);

/*
 * page_pool_set_dma_addr_netmem(), which lives in net/core/: where
 * dma_addr_t is wider than the net_iov's unsigned long (X86_PAE,
 * ARM_LPAE), page_pool keeps the address shifted by PAGE_SHIFT and
 * drivers read it back shifted (page_pool_get_dma_addr_netmem()).  A
 * buffer whose address does not survive the shift (not page-aligned,
 * a dma-buf segment's inside of a page) cannot be handed to the NIC.
 */
static int netgpu_niov_set_dma(struct netgpu_niov *n, dma_addr_t dma)
{
	unsigned long v = dma;

	if (PAGE_POOL_32BIT_ARCH_WITH_64BIT_DMA)
		v = dma >> PAGE_SHIFT;
	n->niov.dma_addr = v;
	return page_pool_get_dma_addr_netmem(netgpu_niov_netmem(n)) == dma ?
	       0 : -EINVAL;
}

/* The buffers of one held region: page-sized, each DMA-contiguous. */
static int netgpu_ifq_area_init(struct netgpu_ifq_area *a,
				unsigned long nr_pages)
{
	u64 dma_len;
	dma_addr_t dma;
	u32 i;
	int err;

	if (nr_pages > NETGPU_CACHE_MAX_CAPACITY)
		return -E2BIG;
	a->cpu = netgpu_region_cpu_writable(a->h.r);
	a->niovs = kvcalloc(nr_pages, sizeof(*a->niovs), GFP_KERNEL_ACCOUNT);
	if (!a->niovs)
		return -ENOMEM;
	a->nr = nr_pages;

	for (i = 0; i < a->nr; i++) {
		struct netgpu_niov *n = &a->niovs[i];

		err = netgpu_dmamap_dma(a->h.map, (u64)i << PAGE_SHIFT, &dma,
					&dma_len);
		/* The NIC gets one address per buffer. */
		if (!err && dma_len < PAGE_SIZE)
			err = -EINVAL;
		if (!err)
			err = netgpu_niov_set_dma(n, dma);
		if (err)
			return err;
		n->buf.region = a->h.r;
		n->buf.index = i;
		n->area = a;
		cond_resched();
	}
	return 0;
}

/* Every buffer on the free list, the fill ring: what a new queue has. */
static int netgpu_ifq_init_bufs(struct netgpu_ifq *ifq,
				const struct netgpu_mem_hold *holds,
				struct netgpu_queue_geom *fill)
{
	u64 nr_bufs = 0, nr_cpu = 0;
	struct netgpu_cache *c;
	u32 i, j;
	int err;

	for (i = 0; i < ifq->nr_areas; i++) {
		err = netgpu_ifq_area_init(&ifq->areas[i], holds[i].nr_pages);
		if (err)
			return err;
		nr_bufs += ifq->areas[i].nr;
		if (ifq->areas[i].cpu)
			nr_cpu += ifq->areas[i].nr;
	}
	if (nr_bufs > NETGPU_CACHE_MAX_CAPACITY)
		return -E2BIG;
	ifq->nr_bufs = nr_bufs;

	c = netgpu_cache_create(ifq->nr_bufs, NUMA_NO_NODE);
	if (IS_ERR(c))
		return PTR_ERR(c);
	ifq->free = c;
	/* Device memory and host memory: the host's is for copies. */
	if (nr_cpu && nr_cpu < nr_bufs) {
		c = netgpu_cache_create(nr_cpu, NUMA_NO_NODE);
		if (IS_ERR(c))
			return PTR_ERR(c);
		ifq->copy = c;
	}
	for (i = 0; i < ifq->nr_areas; i++) {
		struct netgpu_ifq_area *a = &ifq->areas[i];

		a->home = a->cpu && ifq->copy ? ifq->copy : ifq->free;
		for (j = 0; j < a->nr; j++)
			netgpu_niov_put_home(&a->niovs[j]);
	}

	ifq->fill = netgpu_queue_create(NETGPU_QUEUE_FILL, fill->entries);
	if (IS_ERR(ifq->fill)) {
		err = PTR_ERR(ifq->fill);
		ifq->fill = NULL;
		return err;
	}
	return 0;
}

/**
 * netgpu_ifq_create() - create an interface queue of a context's regions
 * @mc: the context's memory side; the caller keeps it for the call
 * @fill: in/out: the fill ring's geometry (validated here)
 *
 * Holds every region attached to @mc, and its map for @mc's device,
 * until the queue is freed (or the device goes): the regions' buffers are
 * what the queue hands the NIC.  Regions attached later are not part of
 * the queue.
 *
 * Context: Process context, may sleep.
 * Return: the queue with one reference (the owner's); ERR_PTR(-EINVAL)
 * for a bad geometry, with no region attached or with a buffer that is
 * not DMA-contiguous; -EBUSY if a region is another queue's (each buffer
 * is handed to one NIC queue at most); -E2BIG for more buffers than a
 * queue takes; -ENOMEM.
 */
struct netgpu_ifq *netgpu_ifq_create(struct netgpu_memctx *mc,
				     struct netgpu_queue_geom *fill)
{
	struct netgpu_mem_hold *holds;
	struct netgpu_ifq *ifq;
	int n, i, err;

	err = netgpu_queue_validate_geometry(NETGPU_QUEUE_FILL, fill);
	if (err)
		return ERR_PTR(err);

	ifq = kzalloc(sizeof(*ifq), GFP_KERNEL_ACCOUNT);
	if (!ifq)
		return ERR_PTR(-ENOMEM);
	refcount_set(&ifq->ref, 1);
	ifq->state = NETGPU_IFQ_NEW;
	ifq->dma_dev = get_device(mc->dev);
	spin_lock_init(&ifq->fill_lock);
	init_waitqueue_head(&ifq->wait);
	INIT_LIST_HEAD(&ifq->stuck);
	INIT_DELAYED_WORK(&ifq->retry, netgpu_ifq_retry_work);

	n = netgpu_memctx_hold(mc, &holds);
	if (n <= 0) {
		put_device(ifq->dma_dev);
		kfree(ifq);
		return ERR_PTR(n ?: -EINVAL);
	}
	ifq->areas = kcalloc(n, sizeof(*ifq->areas), GFP_KERNEL_ACCOUNT);
	if (!ifq->areas) {
		for (i = 0; i < n; i++)
			netgpu_mem_hold_put(&holds[i]);
		kvfree(holds);
		put_device(ifq->dma_dev);
		kfree(ifq);
		return ERR_PTR(-ENOMEM);
	}
	/* The holds are the areas' now: netgpu_ifq_free() drops them. */
	ifq->nr_areas = n;
	for (i = 0; i < n; i++) {
		ifq->areas[i].ifq = ifq;
		ifq->areas[i].h = holds[i];
	}

	err = netgpu_ifq_init_bufs(ifq, holds, fill);
	kvfree(holds);
	if (err) {
		netgpu_ifq_free(ifq);
		return ERR_PTR(err);
	}
	return ifq;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_create);

/*
 * The checks of mainline's __net_mp_open_rxq(), less those of 6.12's
 * missing header-split configuration.  Under rtnl_lock.
 */
static int netgpu_ifq_check_rxq(struct net_device *dev, u32 idx)
{
	struct netdev_rx_queue *rxq;

	if (idx >= dev->real_num_rx_queues)
		return -EINVAL;
	if (dev_xdp_prog_count(dev))
		return -EEXIST;
	rxq = __netif_get_rx_queue(dev, idx);
	if (rxq->mp_params.mp_ops)
		return -EEXIST;
#ifdef CONFIG_XDP_SOCKETS
	if (rxq->pool)
		return -EBUSY;
#endif
	return 0;
}

/**
 * netgpu_ifq_check_dev() - whether a device can bind an rx queue
 * @dev: the device
 *
 * The device must have the queue-management API (netdev_queue_mgmt_ops,
 * all four calls) and be up.
 *
 * Context: Process context, under rtnl_lock.
 * Return: 0, -EOPNOTSUPP without the API, -ENETDOWN if the device is
 * down.
 */
int netgpu_ifq_check_dev(struct net_device *dev)
{
	const struct netdev_queue_mgmt_ops *qops = dev->queue_mgmt_ops;

	ASSERT_RTNL();
	if (!qops || !qops->ndo_queue_mem_alloc || !qops->ndo_queue_mem_free ||
	    !qops->ndo_queue_start || !qops->ndo_queue_stop)
		return -EOPNOTSUPP;
	if (!netif_running(dev))
		return -ENETDOWN;
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_check_dev);

static void netgpu_ifq_set_state(struct netgpu_ifq *ifq,
				 enum netgpu_ifq_state state)
{
	spin_lock_bh(&ifq->fill_lock);
	ifq->state = state;
	/* Only a bound queue can starve, or be kicked. */
	if (state != NETGPU_IFQ_BOUND && ifq->starved)
		netgpu_ifq_unstarve(ifq);
	spin_unlock_bh(&ifq->fill_lock);
	wake_up_all(&ifq->wait);
}

/**
 * netgpu_ifq_bind() - make an interface queue the provider of an rx queue
 * @ifq: a new queue
 * @dev: the device; the caller holds it
 * @rxq: in: the rx queue (ignored with @any); out: the queue bound
 * @any: bind the first rx queue that can be bound
 *
 * Needs CAP_NET_ADMIN in the device's network namespace: the queue sees
 * every packet of the rx queue, whichever socket it is for.  Sets the rx
 * queue's provider parameters and restarts it (netdev_rx_queue_restart():
 * the driver builds a new page_pool, which picks netgpu up, and stops the
 * old one); a driver whose new pool does not use the provider fails the
 * restart with -ENODATA and keeps its old queue, as does any failure of
 * the restart.  On success the queue holds @dev (a tracked reference)
 * until netgpu_ifq_unbind() or netgpu_ifq_dev_gone().
 *
 * Context: Process context, under rtnl_lock.
 * Return: 0; -EPERM without the capability; -EOPNOTSUPP or -ENETDOWN
 * (netgpu_ifq_check_dev()); -EINVAL for a queue the device does not
 * have; -EEXIST if XDP is attached or the queue has a provider already;
 * -EBUSY if it has an AF_XDP pool; -EBUSY with @any when no queue is
 * free; -EALREADY if @ifq was bound before; or the restart's error.
 */
int netgpu_ifq_bind(struct netgpu_ifq *ifq, struct net_device *dev,
		    u32 *rxq, bool any)
{
	struct netdev_rx_queue *q;
	u32 idx;
	int err;

	ASSERT_RTNL();
	if (!ns_capable(dev_net(dev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (ifq->state != NETGPU_IFQ_NEW)
		return -EALREADY;
	err = netgpu_ifq_check_dev(dev);
	if (err)
		return err;

	if (any) {
		for (idx = 0; idx < dev->real_num_rx_queues; idx++)
			if (!netgpu_ifq_check_rxq(dev, idx))
				break;
		if (idx == dev->real_num_rx_queues)
			return dev_xdp_prog_count(dev) ? -EEXIST : -EBUSY;
	} else {
		idx = *rxq;
		err = netgpu_ifq_check_rxq(dev, idx);
		if (err)
			return err;
	}

	q = __netif_get_rx_queue(dev, idx);
	netgpu_ifq_set_mp_params(ifq, &q->mp_params);
	/*
	 * The driver's new pool refills while the queue restarts: the names
	 * its tracepoints give the queue are set first, published with the
	 * state under the fill lock.
	 */
	ifq->rxq = idx;
	ifq->ifindex = dev->ifindex;
	netgpu_ifq_set_state(ifq, NETGPU_IFQ_BOUND);
	err = netdev_rx_queue_restart(dev, idx);
	if (err) {
		q->mp_params.mp_priv = NULL;
		q->mp_params.mp_ops = NULL;
		netgpu_ifq_set_state(ifq, NETGPU_IFQ_NEW);
		return err;
	}
	netdev_hold(dev, &ifq->tracker, GFP_KERNEL);
	ifq->netdev = dev;
	*rxq = idx;
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_bind);

/* Take the provider off the rx queue, if it is still ours. */
static bool netgpu_ifq_clear_rxq(struct netgpu_ifq *ifq)
{
	struct netdev_rx_queue *q;

	q = __netif_get_rx_queue(ifq->netdev, ifq->rxq);
	if (q->mp_params.mp_ops != &netgpu_mp_ops ||
	    q->mp_params.mp_priv != ifq)
		return false;
	q->mp_params.mp_priv = NULL;
	q->mp_params.mp_ops = NULL;
	return true;
}

static void netgpu_ifq_drop_dev(struct netgpu_ifq *ifq,
				enum netgpu_ifq_state state)
{
	netgpu_ifq_set_state(ifq, state);
	netdev_put(ifq->netdev, &ifq->tracker);
	ifq->netdev = NULL;
}

/*
 * Tell user space that @ifq's unbind could not restart its rx queue
 * (@err, NETGPU_RXQ_STATE=stuck), or that a retry finally did or the
 * device went down (@err 0, NETGPU_RXQ_STATE=unbound): a change event of
 * the net device, with NETGPU_RXQ=<index> (netgpu.rst, "Unbinding").
 * Only the transitions: the retries in between say nothing.
 */
static void netgpu_ifq_uevent(struct netgpu_ifq *ifq, int err)
{
	char rxq[32], state[32], errno_env[32];
	char *envp[4] = {};

	envp[0] = rxq;
	envp[1] = state;
	if (err)
		envp[2] = errno_env;
	snprintf(rxq, sizeof(rxq), "NETGPU_RXQ=%u", ifq->rxq);
	snprintf(state, sizeof(state), "NETGPU_RXQ_STATE=%s",
		 err ? "stuck" : "unbound");
	snprintf(errno_env, sizeof(errno_env), "NETGPU_ERR=%d", err);
	kobject_uevent_env(&ifq->netdev->dev.kobj, KOBJ_CHANGE, envp);
}

/**
 * netgpu_ifq_unbind() - restart the rx queue without netgpu
 * @ifq: the queue
 *
 * Nothing to do unless @ifq is bound.  The rx queue restarts with a pool
 * of ordinary pages (unless the device is down: its pools are gone); the
 * old pool lets go of the buffers the NIC held, and of the others as the
 * stack and user space give them back (it holds @ifq until then).  The
 * regions are unmapped for the device at once: the memory of buffers
 * still in the stack stays, its DMA mapping does not.  A restart that
 * fails (no memory) leaves the old pool with the rx queue: it gets no
 * more buffers from @ifq, which keeps the device and the maps the pool
 * may still write through and retries the restart every second, until
 * it succeeds or the device goes (netgpu_ifq_netdev_gone()), whether or
 * not the queue's owner is still there.  The failure and the end of it
 * are change uevents of the device (NETGPU_RXQ_STATE=stuck, =unbound).
 *
 * Context: Process context, under rtnl_lock.
 */
void netgpu_ifq_unbind(struct netgpu_ifq *ifq)
{
	int err = 0;

	ASSERT_RTNL();
	if (ifq->state != NETGPU_IFQ_BOUND)
		return;
	/* No more handouts, from the old pool or anything in between. */
	netgpu_ifq_set_state(ifq, NETGPU_IFQ_UNBOUND);
	/*
	 * A device that is down has no pool: clearing the parameters is
	 * enough (6.12's restart does not check, drivers answer anything).
	 */
	if (netgpu_ifq_clear_rxq(ifq) && netif_running(ifq->netdev)) {
		err = netdev_rx_queue_restart(ifq->netdev, ifq->rxq);
		if (err && err != -ENETDOWN)
			netdev_warn(ifq->netdev,
				    "netgpu: rx queue %u not restarted: %d\n",
				    ifq->rxq, err);
	}
	trace_netgpu_unbind(ifq->ifindex, ifq->rxq, err);
	/*
	 * A failed restart leaves the old pool with the NIC: keep the maps
	 * and the device, retry, and let NETDEV_UNREGISTER find the queue
	 * if the device goes first (the late unmap of io_uring's zcrx,
	 * f12ecf5e1c5e, otherwise).  The retry holds a reference.
	 */
	if (err && err != -ENETDOWN) {
		netgpu_ifq_get(ifq);
		ifq->stuck_err = err;
		ifq->stuck_tries = 1;
		list_add_tail(&ifq->stuck, &netgpu_ifq_stuck);
		queue_delayed_work(system_wq, &ifq->retry, NETGPU_IFQ_RETRY);
		netgpu_ifq_uevent(ifq, err);
		return;
	}
	/*
	 * Restarted, or down: no queue of the device holds a buffer to
	 * write, so the maps go now, not when a pool that the stack keeps
	 * alive finally lets the queue go (by then the device may be gone).
	 */
	netgpu_ifq_unmap(ifq);
	netgpu_ifq_drop_dev(ifq, NETGPU_IFQ_UNBOUND);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_unbind);

/*
 * The retry of a restart that failed at unbind: until it succeeds (then
 * the maps and the device go as an unbind's do), or the device went
 * (netgpu_ifq_netdev_gone() took the queue off the list and did that).
 * Drops the list's reference once the queue is off it.
 */
static void netgpu_ifq_retry_work(struct work_struct *work)
{
	struct netgpu_ifq *ifq = container_of(to_delayed_work(work),
					      struct netgpu_ifq, retry);
	int err = 0;

	rtnl_lock();
	if (!list_empty(&ifq->stuck)) {
		/*
		 * With the provider's parameters cleared nothing kept the
		 * channels from shrinking (ethtool -L): a queue gone took
		 * the old pool with it.  6.12's restart checks no bounds.
		 */
		if (netif_running(ifq->netdev) &&
		    ifq->rxq < ifq->netdev->real_num_rx_queues) {
			err = netdev_rx_queue_restart(ifq->netdev, ifq->rxq);
			ifq->stuck_tries++;
		}
		if (err && err != -ENETDOWN) {
			ifq->stuck_err = err;
			queue_delayed_work(system_wq, &ifq->retry,
					   NETGPU_IFQ_RETRY);
			rtnl_unlock();
			return;
		}
		list_del_init(&ifq->stuck);
		trace_netgpu_unbind(ifq->ifindex, ifq->rxq, err);
		netgpu_ifq_uevent(ifq, 0);
		netgpu_ifq_unmap(ifq);
		netgpu_ifq_drop_dev(ifq, NETGPU_IFQ_UNBOUND);
	}
	rtnl_unlock();
	netgpu_ifq_put(ifq);
}

/**
 * netgpu_ifq_stuck_show() - /sys/kernel/debug/netgpu/stuck
 * @m: the seq_file
 * @unused: unused
 *
 * The rx queues an unbind could not restart (review 2: a failure seen
 * only as a netdev_warn() when the queue's file was closed, so that no
 * user could see it): one line per queue, then their number::
 *
 *   <device> rxq <index> err <last error> tries <restarts tried>
 *   stuck <N>
 *
 * Each such queue still runs netgpu's old pool, which gives the NIC no
 * buffer: the device receives nothing there until a retry (every
 * second) restarts it, or the device goes.
 *
 * Context: Process context.  Takes rtnl_lock.
 * Return: 0.
 */
int netgpu_ifq_stuck_show(struct seq_file *m, void *unused)
{
	struct netgpu_ifq *ifq;
	u32 nr = 0;

	rtnl_lock();
	list_for_each_entry(ifq, &netgpu_ifq_stuck, stuck) {
		seq_printf(m, "%s rxq %u err %d tries %u\n",
			   netdev_name(ifq->netdev), ifq->rxq, ifq->stuck_err,
			   ifq->stuck_tries);
		nr++;
	}
	rtnl_unlock();
	seq_printf(m, "stuck %u\n", nr);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_stuck_show);

/**
 * netgpu_ifq_netdev_gone() - a device with queues stuck at unbind goes
 * @dev: the device, at NETDEV_UNREGISTER
 *
 * The queues whose unbind could not restart their rx queue still hold
 * @dev and their maps: the driver stopped its queues, so the maps go
 * now, before the device does, and so does the reference (the retry
 * lets the queue go).  Call it before the owners' netgpu_ifq_dev_gone().
 *
 * Context: Process context, under rtnl_lock.
 */
void netgpu_ifq_netdev_gone(struct net_device *dev)
{
	struct netgpu_ifq *ifq, *tmp;

	ASSERT_RTNL();
	list_for_each_entry_safe(ifq, tmp, &netgpu_ifq_stuck, stuck) {
		if (ifq->netdev != dev)
			continue;
		list_del_init(&ifq->stuck);
		trace_netgpu_unbind(ifq->ifindex, ifq->rxq, -ENODEV);
		netgpu_ifq_unmap(ifq);
		netgpu_ifq_drop_dev(ifq, NETGPU_IFQ_DEAD);
		/*
		 * The list's reference: ours to drop if the retry was only
		 * pending; a retry already running (waiting for rtnl_lock)
		 * finds the queue off the list and drops it itself.
		 */
		if (cancel_delayed_work(&ifq->retry))
			netgpu_ifq_put(ifq);
	}
}
EXPORT_SYMBOL_GPL(netgpu_ifq_netdev_gone);

/**
 * netgpu_ifq_revoked() - whether a region of an interface queue was revoked
 * @ifq: the queue
 *
 * A queue holds its regions while it lives; a region its user removed
 * (or its provider revoked) must not be handed to the NIC any longer:
 * the owner unbinds such a queue (netgpu_ifq_unbind()).
 *
 * Context: Any context.
 * Return: true if a region of @ifq was revoked.
 */
bool netgpu_ifq_revoked(const struct netgpu_ifq *ifq)
{
	u32 i;

	for (i = 0; i < ifq->nr_areas; i++)
		if (netgpu_mem_hold_revoked(&ifq->areas[i].h))
			return true;
	return false;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_revoked);

/**
 * netgpu_ifq_holds() - whether an interface queue holds a region
 * @ifq: the queue
 * @r: the region
 *
 * Context: Any context.
 * Return: true if @r is one of @ifq's areas: the queue may hand its
 * buffers to the NIC (while bound) and holds its DMA map.
 */
bool netgpu_ifq_holds(const struct netgpu_ifq *ifq,
		      const struct netgpu_region *r)
{
	u32 i;

	for (i = 0; i < ifq->nr_areas; i++)
		if (ifq->areas[i].h.r == r)
			return true;
	return false;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_holds);

/**
 * netgpu_ifq_dev_gone() - the device of an interface queue is going away
 * @ifq: the queue
 *
 * For NETDEV_UNREGISTER: the driver stopped its queues, so the device
 * writes no buffer any more.  The queue stops for good (poll() reports
 * it), drops the device and its holds on the DMA maps, so that they are
 * unmapped now rather than when the last buffer comes back.  Buffers the
 * stack and user space hold stay valid memory and still come back.
 *
 * Context: Process context, under rtnl_lock.
 */
void netgpu_ifq_dev_gone(struct netgpu_ifq *ifq)
{
	ASSERT_RTNL();
	if (ifq->state == NETGPU_IFQ_BOUND) {
		netgpu_ifq_clear_rxq(ifq);
		netgpu_ifq_drop_dev(ifq, NETGPU_IFQ_DEAD);
		trace_netgpu_unbind(ifq->ifindex, ifq->rxq, -ENODEV);
	} else {
		netgpu_ifq_set_state(ifq, NETGPU_IFQ_DEAD);
	}
	netgpu_ifq_unmap(ifq);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_dev_gone);

/**
 * netgpu_ifq_scrub() - take back every buffer user space holds
 * @ifq: the queue, which no receive path hands buffers to any more
 *
 * For the queue's owner going away: each user reference is dropped with
 * its page_pool reference, so that the pools' in-flight counts can reach
 * zero.  Races safely with fill-ring returns of the same buffers.
 *
 * Context: Process context, may sleep.
 */
void netgpu_ifq_scrub(struct netgpu_ifq *ifq)
{
	u64 scrubbed = 0;
	u32 i, j;

	/*
	 * The receive path hands out no buffer after this, nor takes the
	 * queue for its context's (whose address may be reused).
	 */
	spin_lock_bh(&ifq->fill_lock);
	ifq->scrubbed = true;
	WRITE_ONCE(ifq->owner, NULL);
	spin_unlock_bh(&ifq->fill_lock);

	for (i = 0; i < ifq->nr_areas; i++) {
		struct netgpu_ifq_area *a = &ifq->areas[i];

		for (j = 0; j < a->nr; j++) {
			struct netgpu_niov *n = &a->niovs[j];
			int nr = atomic_xchg(&n->uref, 0);

			/*
			 * As a fill-ring return would: a pool still with the
			 * NIC (an unbind whose restart failed) may post it.
			 */
			if (nr && READ_ONCE(n->niov.pp)) {
				spin_lock_bh(&ifq->fill_lock);
				if (a->h.map)
					netgpu_niov_sync_for_device(n);
				spin_unlock_bh(&ifq->fill_lock);
			}
			if (nr)
				netgpu_niov_unref(n, nr);
			scrubbed += nr;
			cond_resched();
		}
	}
	spin_lock_bh(&ifq->fill_lock);
	ifq->cnt.scrubbed += scrubbed;
	spin_unlock_bh(&ifq->fill_lock);
	trace_netgpu_scrub(ifq->ifindex, ifq->rxq, scrubbed);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_scrub);

/**
 * netgpu_ifq_walk_break() - a break of a walk over a queue's buffers
 * @ifq: the queue
 *
 * Every NETGPU_IFQ_WALK_BATCH buffers, netgpu_ifq_get_stats() and
 * netgpu_ifq_account() break their walks here, with the fill lock not
 * held and bottom halves enabled (review 2, L3: a queue has up to 2^24
 * buffers, and its refill needs the lock).  A KUnit case sees each break
 * through kunit_activate_static_stub().
 *
 * Context: Process context, may sleep.
 */
VISIBLE_IF_KUNIT void netgpu_ifq_walk_break(struct netgpu_ifq *ifq)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_ifq_walk_break, ifq);
	cond_resched();
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ifq_walk_break);

/**
 * netgpu_ifq_get_stats() - add an interface queue's counters
 * @ifq: the queue
 * @st: the sums to add to
 *
 * The fill counters, and a snapshot of where the buffers are: on the
 * free list, held by user space, shared by the stack, or with the NIC
 * and the pools' caches or in one skb (``bufs_nic``).
 *
 * Context: Process context.
 */
void netgpu_ifq_get_stats(struct netgpu_ifq *ifq, struct netgpu_stats *st)
{
	u32 i, j;

	spin_lock_bh(&ifq->fill_lock);
	st->fill_taken += ifq->cnt.taken;
	st->fill_unaligned += ifq->cnt.unaligned;
	st->fill_no_region += ifq->cnt.no_region;
	st->fill_never_given += ifq->cnt.never_given;
	st->fill_twice += ifq->cnt.twice;
	st->fill_in_nic += ifq->cnt.in_nic;
	st->fill_in_stack += ifq->cnt.in_stack;
	if (ifq->fill)
		st->fill_bad_index += ifq->fill->cons.bad_prod;
	spin_unlock_bh(&ifq->fill_lock);

	for (i = 0; i < ifq->nr_areas; i++) {
		for (j = 0; j < ifq->areas[i].nr; j++) {
			struct netgpu_niov *n = &ifq->areas[i].niovs[j];

			/* A copy is in no pool. */
			if (atomic_read(&n->uref))
				st->bufs_user++;
			else if (!READ_ONCE(n->niov.pp))
				st->bufs_cache++;
			else if (atomic_long_read(&n->niov.pp_ref_count) > 1)
				st->bufs_stack++;
			else
				st->bufs_nic++;
			if (!((j + 1) % NETGPU_IFQ_WALK_BATCH))
				netgpu_ifq_walk_break(ifq);
		}
		cond_resched();
	}
}
EXPORT_SYMBOL_GPL(netgpu_ifq_get_stats);

/**
 * netgpu_ifq_account() - add an interface queue's buffers and returns
 * @ifq: the queue
 * @a: the sums to add to (&struct netgpu_account)
 *
 * Under the fill lock, dropped every NETGPU_IFQ_WALK_BATCH buffers, so
 * that the refill, the handouts and the fill ring's returns do not move
 * a buffer while it is counted: each buffer is
 * counted where it is (in a pool, or a copy user space holds), the free
 * lists by their own counts.  Returns to the free list from other
 * contexts (a pool letting go of a buffer) take the cache's lock only: a
 * buffer on its way there may be missed under traffic, never at rest.
 *
 * Context: Process context; takes the fill lock (BH).
 */
void netgpu_ifq_account(struct netgpu_ifq *ifq, struct netgpu_account *a)
{
	u32 i, j;

	spin_lock_bh(&ifq->fill_lock);
	a->total += ifq->nr_bufs;
	a->free += netgpu_cache_count(ifq->free);
	if (ifq->copy)
		a->free += netgpu_cache_count(ifq->copy);
	a->returned += ifq->cnt.taken;
	a->scrubbed += ifq->cnt.scrubbed;
	for (i = 0; i < ifq->nr_areas; i++) {
		for (j = 0; j < ifq->areas[i].nr; j++) {
			struct netgpu_niov *n = &ifq->areas[i].niovs[j];
			int uref = atomic_read(&n->uref);

			a->urefs += uref;
			if (READ_ONCE(n->niov.pp))
				a->pool++;
			else if (uref)
				a->copies++;
			/*
			 * Not a whole queue (up to 2^24 buffers) with BH
			 * off: at rest nothing moves in between.
			 */
			if (!((j + 1) % NETGPU_IFQ_WALK_BATCH)) {
				spin_unlock_bh(&ifq->fill_lock);
				netgpu_ifq_walk_break(ifq);
				spin_lock_bh(&ifq->fill_lock);
			}
		}
	}
	spin_unlock_bh(&ifq->fill_lock);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_account);

/**
 * netgpu_ifq_poll() - poll() of an interface queue's file
 * @ifq: the queue
 * @file: the file
 * @wait: poll table
 *
 * Context: Process context.
 * Return: ``EPOLLOUT | EPOLLWRNORM`` while the fill ring has room, and
 * ``EPOLLPRI`` while the queue is starved (NETGPU_RING_NEED_WAKEUP);
 * ``EPOLLERR | EPOLLHUP`` once the queue stopped (unbound, device gone).
 */
__poll_t netgpu_ifq_poll(struct netgpu_ifq *ifq, struct file *file,
			 poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &ifq->wait, wait);
	spin_lock_bh(&ifq->fill_lock);
	if (ifq->state != NETGPU_IFQ_BOUND) {
		mask = EPOLLERR | EPOLLHUP;
	} else {
		if (netgpu_queue_nb_avail(ifq->fill) <
		    netgpu_queue_nentries(ifq->fill))
			mask |= EPOLLOUT | EPOLLWRNORM;
		if (ifq->starved)
			mask |= EPOLLPRI;
	}
	spin_unlock_bh(&ifq->fill_lock);
	return mask;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_poll);

/**
 * netgpu_ifq_wakeup() - kick a starved queue user space gave buffers to
 * @ifq: the queue
 *
 * NETGPU_IFQ_IOCTL_WAKEUP.  A queue that ran dry receives nothing until
 * its driver refills the ring, which without a kick waits for the next
 * interrupt of a packet the ring had room for, or for a watchdog: this
 * schedules the rx queue's NAPI instance, whose poll refills, in a
 * driver that retries its refill at each poll.  Nothing to do while the
 * queue is not starved.
 *
 * The flag can stay up while the pool is fed again from its recycle
 * ring, which does not ask the provider: such a kick only runs one
 * poll too many.
 *
 * Context: Process context; takes rtnl_lock while the queue is starved
 * (the driver sets and clears its queues' NAPI instances under it,
 * netif_queue_set_napi()).
 * Return: 0 (kicked, or not starved); -ENODEV if the queue is not
 * bound; -ENETDOWN if the device is down or detached (suspended, in
 * error recovery); -EOPNOTSUPP if the driver names no NAPI instance for
 * the rx queue; -EINTR on a fatal signal while waiting for rtnl_lock.
 */
int netgpu_ifq_wakeup(struct netgpu_ifq *ifq)
{
	struct net_device *dev;
	struct napi_struct *napi;
	bool starved;
	int err = 0;

	/* As user space read the flag: under the lock that wrote it. */
	spin_lock_bh(&ifq->fill_lock);
	if (ifq->state != NETGPU_IFQ_BOUND)
		err = -ENODEV;
	starved = ifq->starved;
	spin_unlock_bh(&ifq->fill_lock);
	if (err || !starved)
		return err;

	if (rtnl_lock_killable())
		return -EINTR;
	/* The state changes under rtnl_lock too: bound, @dev is held. */
	dev = ifq->netdev;
	if (ifq->state != NETGPU_IFQ_BOUND) {
		err = -ENODEV;
		goto out;
	}
	/*
	 * Down, or detached (suspended, in error recovery): the driver's
	 * poll must not refill a ring it is taking down.
	 */
	if (!netif_running(dev) || !netif_device_present(dev)) {
		err = -ENETDOWN;
		goto out;
	}
	/* The core refuses fewer queues than a bound one needs. */
	if (WARN_ON_ONCE(ifq->rxq >= dev->real_num_rx_queues)) {
		err = -ENODEV;
		goto out;
	}
	napi = __netif_get_rx_queue(dev, ifq->rxq)->napi;
	if (!napi) {
		err = -EOPNOTSUPP;
		goto out;
	}
	/* napi_schedule() raises NET_RX_SOFTIRQ: it runs at the enable. */
	local_bh_disable();
	if (napi_schedule(napi))
		atomic_long_inc(&ifq->wakeups);
	local_bh_enable();
out:
	rtnl_unlock();
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_wakeup);

/**
 * netgpu_ifq_mmap() - map an interface queue's fill ring
 * @ifq: the queue
 * @vma: the mapping, at NETGPU_OFF_FILL_RING
 *
 * Context: Process context, mmap lock held.
 * Return: 0 or netgpu_queue_mmap()'s error.
 */
int netgpu_ifq_mmap(struct netgpu_ifq *ifq, struct vm_area_struct *vma)
{
	return netgpu_queue_mmap(ifq->fill, vma);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_mmap);

/* ===== The receive path's side ===== */

/* The list copies come from: NULL if the queue has no host memory. */
static struct netgpu_cache *netgpu_ifq_copy_list(struct netgpu_ifq *ifq)
{
	/* Without @copy the areas are all host memory, or none is. */
	if (ifq->copy)
		return ifq->copy;
	return ifq->areas[0].cpu ? ifq->free : NULL;
}

/**
 * netgpu_ifq_can_copy() - may the receive path copy into this queue?
 * @ifq: the queue
 *
 * Context: Any context.
 * Return: true if @ifq is bound and has host memory.
 */
bool netgpu_ifq_can_copy(struct netgpu_ifq *ifq)
{
	return READ_ONCE(ifq->state) == NETGPU_IFQ_BOUND &&
	       netgpu_ifq_copy_list(ifq);
}
EXPORT_SYMBOL_GPL(netgpu_ifq_can_copy);

/**
 * netgpu_ifq_rx_niov() - describe data the NIC wrote into a buffer
 * @ifq: the queue @nm belongs to (netgpu_ifq_of_netmem())
 * @nm: the buffer, a frag of an skb the caller holds
 * @off: offset of the data in the buffer
 * @len: its length
 * @desc: the rx descriptor to fill in
 *
 * Makes the data visible to the CPU (a sync for the CPU while the device
 * has the memory mapped) and hands the buffer to user space: a user
 * reference, with its page_pool reference, that the fill ring or the
 * scrub gives back.
 *
 * Context: Any context.
 * Return: 0; -ENODEV once the queue's owner scrubbed it (its file was
 * closed with data still queued on a socket): nothing would take a
 * reference back, and a pool the NIC kept (an unbind whose restart
 * failed) may post the buffer again; -EFAULT (and a warning) for data
 * past the buffer's end.
 */
int netgpu_ifq_rx_niov(struct netgpu_ifq *ifq, netmem_ref nm, u32 off,
		       u32 len, struct netgpu_rx_desc *desc)
{
	struct netgpu_niov *n = netgpu_niov_from_netmem(nm);
	struct netgpu_ifq_area *a = n->area;
	u64 boff = ((u64)n->buf.index << PAGE_SHIFT) + off;

	/* The pool is order 0: no frag crosses a buffer's end. */
	if (WARN_ON_ONCE(off >= PAGE_SIZE || len > PAGE_SIZE - off))
		return -EFAULT;
	/* The map goes under this lock when the device does. */
	spin_lock_bh(&ifq->fill_lock);
	if (ifq->scrubbed) {
		spin_unlock_bh(&ifq->fill_lock);
		return -ENODEV;
	}
	if (a->h.map)
		netgpu_dmamap_sync_for_cpu(a->h.map, boff, len);
	if (len)
		n->handed |= netgpu_niov_granules(off, len);
	/* Under the lock: a scrub starting now sees the reference. */
	page_pool_ref_netmem(nm);
	__netgpu_niov_get_uref(ifq, n);
	spin_unlock_bh(&ifq->fill_lock);

	desc->addr = a->h.start + boff;
	desc->len = len;
	desc->flags = 0;
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_rx_niov);

/*
 * skb_copy_bits() for the readable bytes of an skb, from its linear part
 * and page frags only (not its frag list): 6.12's skb_copy_bits() refuses
 * every frag of an skb that has an unreadable one, page frags included.
 */
static int netgpu_skb_copy_readable(const struct sk_buff *skb, u32 off,
				    u8 *to, u32 len)
{
	u32 start = skb_headlen(skb), end, n;
	int i;

	if (off < start) {
		n = min(len, start - off);
		memcpy(to, skb->data + off, n);
		off += n;
		to += n;
		len -= n;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags && len; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		end = start + skb_frag_size(frag);
		if (off < end) {
			u32 foff = skb_frag_off(frag) + off - start;
			struct page *page;

			if (skb_frag_is_net_iov(frag))
				return -EFAULT;
			page = skb_frag_page(frag);
			n = min(len, end - off);
			n = min_t(u32, n, PAGE_SIZE - offset_in_page(foff));
			memcpy_from_page(to, nth_page(page, foff >> PAGE_SHIFT),
					 offset_in_page(foff), n);
			off += n;
			to += n;
			len -= n;
			if (off < end) {
				i--;	/* the rest of this frag, next page */
				continue;
			}
		}
		start = end;
	}
	return len ? -EFAULT : 0;
}

/* Write @len bytes of @skb from @off into the host buffer @n. */
static int netgpu_niov_copy_skb(struct netgpu_niov *n,
				const struct sk_buff *skb, u32 off, u32 len)
{
	u64 addr = netgpu_niov_addr(n);
	struct page *page;
	void *va;
	int ret;

	ret = netgpu_region_get_pages(n->buf.region, addr, &page, 1);
	if (ret != 1)
		return ret < 0 ? ret : -EFAULT;
	va = kmap_local_page(page);
	ret = netgpu_skb_copy_readable(skb, off, va, len);
	kunmap_local(va);
	put_page(page);
	return ret;
}

/**
 * netgpu_ifq_rx_copy() - copy data that arrived in ordinary memory
 * @ifq: a queue of the socket's context
 * @skb: the data's skb (the caller holds it)
 * @off: offset of the data in @skb: in its linear part or page frags
 *	(a frag list's skbs are passed on their own)
 * @len: its length; at most a buffer's worth is copied
 * @desc: the rx descriptor to fill in (NETGPU_RX_DESC_COPY)
 *
 * Copies into a free host buffer of @ifq, which user space then holds as
 * any buffer of an rx descriptor.  The CPU writes host memory only.
 *
 * Context: Any context.
 * Return: the number of bytes copied; -EOPNOTSUPP if @ifq has no host
 * memory or is not bound; -ENOBUFS if no host buffer is free;
 * -EFAULT if @skb is shorter than claimed, or the region's pages are
 * gone (revoked).
 */
int netgpu_ifq_rx_copy(struct netgpu_ifq *ifq, const struct sk_buff *skb,
		       u32 off, u32 len, struct netgpu_rx_desc *desc)
{
	struct netgpu_cache *list = NULL;
	struct netgpu_buf *buf = NULL;
	struct netgpu_niov *n;
	int err;

	len = min_t(u32, len, PAGE_SIZE);
	spin_lock_bh(&ifq->fill_lock);
	/* Bound: the scrub, which runs after unbind, sees the reference. */
	if (ifq->state == NETGPU_IFQ_BOUND)
		list = netgpu_ifq_copy_list(ifq);
	if (list)
		buf = netgpu_cache_get_napi(list);
	if (buf) {
		n = container_of(buf, struct netgpu_niov, buf);
		/* In no pool: the user's reference is the only one. */
		atomic_long_set(&n->niov.pp_ref_count, 1);
		__netgpu_niov_get_uref(ifq, n);
	}
	spin_unlock_bh(&ifq->fill_lock);
	if (!buf)
		return list ? -ENOBUFS : -EOPNOTSUPP;

	err = netgpu_niov_copy_skb(n, skb, off, len);
	if (err) {
		/* Unless the scrub took it meanwhile: back to the list. */
		if (netgpu_niov_put_uref(n))
			netgpu_niov_unref(n, 1);
		return err;
	}
	desc->addr = netgpu_niov_addr(n);
	desc->len = len;
	desc->flags = NETGPU_RX_DESC_COPY;
	return len;
}
EXPORT_SYMBOL_GPL(netgpu_ifq_rx_copy);
