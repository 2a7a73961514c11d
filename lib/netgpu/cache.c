// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu buffer cache: the free buffers of one interface queue, in a
 * lockless tier for the NIC's NAPI context and a locked tier for puts
 * from anywhere else.  See the DOC comment in cache.h.
 *
 * Both tiers are sized at creation for every buffer the queue owns, so no
 * put allocates, and the hand-over between the tiers swaps two arrays.
 */

#include <linux/err.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "cache.h"

/* any_stat_inc is intended to be used under c->lock */
#define any_stat_inc(c, __stat)	(++(c)->any_stats.__stat)

/**
 * netgpu_cache_create() - create the buffer cache of an interface queue
 * @capacity: number of buffers attached to the queue; each tier gets
 *	that many slots, so no put ever needs memory
 * @nid: NUMA node for the cache's memory, or NUMA_NO_NODE
 *
 * The cache is made of one allocation: it either exists whole or
 * nothing was allocated.  It is charged to the caller's memory cgroup
 * (up to 256 MiB at %NETGPU_CACHE_MAX_CAPACITY).
 *
 * Context: process context, may sleep.
 * Return: the empty cache; ERR_PTR(-EINVAL) when @capacity is 0 or above
 * %NETGPU_CACHE_MAX_CAPACITY; ERR_PTR(-ENOMEM) when memory is short.
 */
struct netgpu_cache *netgpu_cache_create(u32 capacity, int nid)
{
	struct netgpu_cache *c;

	might_sleep();

	if (!capacity || capacity > NETGPU_CACHE_MAX_CAPACITY)
		return ERR_PTR(-EINVAL);

	/* Can't overflow: 2 * NETGPU_CACHE_MAX_CAPACITY slots fit an int. */
	c = kvzalloc_node(struct_size(c, slots, 2 * (size_t)capacity),
			  GFP_KERNEL_ACCOUNT | __GFP_NOWARN, nid);
	if (!c)
		return ERR_PTR(-ENOMEM);

	c->capacity = capacity;
	c->napi = c->slots;
	c->any = c->slots + capacity;
	spin_lock_init(&c->lock);

	return c;
}
EXPORT_SYMBOL_GPL(netgpu_cache_create);

static void netgpu_cache_release_tier(struct netgpu_buf **tier, u32 count,
				      void (*release)(struct netgpu_buf *buf,
						      void *arg),
				      void *arg)
{
	u32 i;

	for (i = 0; i < count; i++)
		release(tier[i], arg);
}

/**
 * netgpu_cache_destroy() - hand every cached buffer back and free the cache
 * @c: the cache, or NULL
 * @release: called once for each buffer the cache holds; may be NULL
 *	only when the cache is empty
 * @arg: passed to @release
 *
 * The queue must be quiesced: NAPI stopped, and no put in progress or to
 * come.  It is not safe to reference @c afterwards.
 *
 * Context: process context, may sleep; @release runs in the caller's
 * context, without any cache lock held.
 */
void netgpu_cache_destroy(struct netgpu_cache *c,
			  void (*release)(struct netgpu_buf *buf, void *arg),
			  void *arg)
{
	if (!c)
		return;
	might_sleep();

	/* Quiesced: nobody else touches either tier any more. */
	if (WARN_ON_ONCE(!release && (c->napi_count || c->any_count)))
		return;	/* leak the cache rather than lose its buffers */

	if (release) {
		netgpu_cache_release_tier(c->napi, c->napi_count, release, arg);
		netgpu_cache_release_tier(c->any, c->any_count, release, arg);
	}

	kvfree(c);
}
EXPORT_SYMBOL_GPL(netgpu_cache_destroy);

/**
 * netgpu_cache_put_any() - give a buffer back from any context
 * @c: the cache
 * @buf: a buffer the caller owns
 *
 * Puts @buf into the locked tier.  Never allocates.  With no more
 * buffers in the cache than were attached to the queue it always
 * succeeds.
 *
 * Context: process or softirq context, any CPU; not in hard IRQ context
 * or with interrupts disabled.  Takes and releases the cache lock (BH).
 * Return: 0 when @c now owns @buf; -ENOSPC when the locked tier is full,
 * which is a caller bug (more buffers put than attached), counted in
 * &netgpu_cache_any_stats.overflows: @buf stays the caller's.
 */
int netgpu_cache_put_any(struct netgpu_cache *c, struct netgpu_buf *buf)
{
	u32 count;
	int ret = 0;

	lockdep_assert_no_hardirq();
	/* A NULL in a tier would read as "cache empty" to a get. */
	DEBUG_NET_WARN_ON_ONCE(!buf);

	spin_lock_bh(&c->lock);
	count = c->any_count;
	if (unlikely(count >= c->capacity)) {
		any_stat_inc(c, overflows);
		ret = -ENOSPC;
	} else {
		c->any[count] = buf;
		/* Pairs with the READ_ONCE()s of the NAPI context's peeks. */
		WRITE_ONCE(c->any_count, count + 1);
		any_stat_inc(c, puts);
	}
	spin_unlock_bh(&c->lock);

	return ret;
}
EXPORT_SYMBOL_GPL(netgpu_cache_put_any);

/**
 * __netgpu_cache_get_slow() - take a buffer when the NAPI tier is empty
 * @c: the cache
 *
 * Slow path of netgpu_cache_get_napi(), which calls it only when the
 * NAPI tier is empty; not for other callers.  Moves every buffer of the
 * locked tier to the NAPI tier in one batch (the two arrays are
 * exchanged under the lock), then takes one.
 *
 * Context: the queue's NAPI context (softirq, or BH disabled).
 * Return: a buffer now owned by the caller, or NULL when both tiers are
 * empty.
 */
noinline struct netgpu_buf *__netgpu_cache_get_slow(struct netgpu_cache *c)
{
	u32 count;

	lockdep_assert_in_softirq();
	/* A caller bug: the swap below would hide the NAPI tier's buffers. */
	DEBUG_NET_WARN_ON_ONCE(c->napi_count);

	/*
	 * Peek without the lock: a zero may miss a put in progress, which
	 * the next get will see.  Matches the WRITE_ONCE() in put_any.
	 */
	if (!READ_ONCE(c->any_count)) {
		netgpu_cache_napi_stat_inc(c, empty);
		return NULL;
	}

	/*
	 * Only this context takes buffers out of the locked tier, so it
	 * still holds at least the one seen above: no second test of the
	 * count.  The NAPI tier is empty, so the locked tier gets its array.
	 */
	spin_lock(&c->lock);
	count = c->any_count;
	swap(c->napi, c->any);
	WRITE_ONCE(c->any_count, 0);
	spin_unlock(&c->lock);

	netgpu_cache_napi_stat_inc(c, refills);
	c->napi_count = --count;
	return c->napi[count];
}
EXPORT_SYMBOL_GPL(__netgpu_cache_get_slow);

/**
 * netgpu_cache_get_stats() - read a cache's statistics
 * @c: the cache
 * @stats: filled in
 *
 * The locked tier's counters are read under the cache lock and are
 * exact; the NAPI tier's are written by the NAPI context without a lock
 * and are exact only while that context is quiet.
 *
 * Context: process or softirq context; takes the cache lock (BH).
 */
void netgpu_cache_get_stats(struct netgpu_cache *c,
			    struct netgpu_cache_stats *stats)
{
	stats->napi.hits = READ_ONCE(c->napi_stats.hits);
	stats->napi.refills = READ_ONCE(c->napi_stats.refills);
	stats->napi.empty = READ_ONCE(c->napi_stats.empty);
	stats->napi.overflows = READ_ONCE(c->napi_stats.overflows);

	spin_lock_bh(&c->lock);
	stats->any = c->any_stats;
	spin_unlock_bh(&c->lock);
}
EXPORT_SYMBOL_GPL(netgpu_cache_get_stats);
