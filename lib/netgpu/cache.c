// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu buffer cache: the free buffers of one interface queue, in a
 * lockless tier for the NIC's NAPI context and a locked tier for puts
 * from anywhere else.  See the DOC comment in cache.h.
 *
 * The RFC's netgpu_pgcache grew by GFP_ATOMIC chunks on the put path and
 * dropped the buffer when that allocation failed.  Here both tiers are
 * sized at creation for every buffer the queue owns, so no put
 * allocates, and the hand-over between the tiers swaps two arrays.
 */

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "cache.h"

#if IS_ENABLED(CONFIG_NETGPU_KUNIT_TEST)
atomic_t netgpu_cache_nr_allocs = ATOMIC_INIT(0);
EXPORT_SYMBOL_GPL(netgpu_cache_nr_allocs);

static void netgpu_cache_count_alloc(int delta)
{
	atomic_add(delta, &netgpu_cache_nr_allocs);
}
#else
static void netgpu_cache_count_alloc(int delta) { }
#endif

/**
 * netgpu_cache_create() - create the buffer cache of an interface queue
 * @capacity: number of buffers attached to the queue; each tier gets
 *	that many slots, so no put ever needs memory
 * @nid: NUMA node for the cache's memory, or NUMA_NO_NODE
 *
 * The cache is made of one allocation: it either exists whole or
 * nothing was allocated.
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
			  GFP_KERNEL | __GFP_NOWARN, nid);
	if (!c)
		return ERR_PTR(-ENOMEM);
	netgpu_cache_count_alloc(1);

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

	netgpu_cache_count_alloc(-1);
	kvfree(c);
}
EXPORT_SYMBOL_GPL(netgpu_cache_destroy);

/**
 * netgpu_cache_put_overflow() - report a put into a full tier
 * @c: the cache
 * @buf: the buffer that did not fit
 *
 * Slow path of netgpu_cache_put_napi() and netgpu_cache_put_any(): the
 * tier already holds as many buffers as were attached to the queue, so
 * the caller put more than it owns.  The buffer is not dropped: the
 * caller keeps it and handles the error.  Reported without a backtrace
 * so that the tests exercising it leave a clean log.
 *
 * Context: any context.
 * Return: -ENOSPC.
 */
noinline int netgpu_cache_put_overflow(struct netgpu_cache *c,
				       struct netgpu_buf *buf)
{
	pr_err_ratelimited("netgpu: buffer cache full (capacity %u): put refused, the caller keeps the buffer\n",
			   c->capacity);
	return -ENOSPC;
}
EXPORT_SYMBOL_GPL(netgpu_cache_put_overflow);

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
 * which is a caller bug (more buffers put than attached): @buf stays the
 * caller's.
 */
int netgpu_cache_put_any(struct netgpu_cache *c, struct netgpu_buf *buf)
{
	u32 count;

	lockdep_assert_no_hardirq();

	spin_lock_bh(&c->lock);
	count = c->any_count;
	if (unlikely(count >= c->capacity)) {
		spin_unlock_bh(&c->lock);
		return netgpu_cache_put_overflow(c, buf);
	}
	c->any[count] = buf;
	/* Pairs with the READ_ONCE()s of the NAPI context's peeks. */
	WRITE_ONCE(c->any_count, count + 1);
	spin_unlock_bh(&c->lock);

	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_cache_put_any);

/**
 * netgpu_cache_get_slow() - take a buffer when the NAPI tier is empty
 * @c: the cache
 *
 * Slow path of netgpu_cache_get_napi(), which calls it only when the
 * NAPI tier is empty: moves every buffer of the locked tier to the NAPI
 * tier in one batch (the two arrays are exchanged under the lock), then
 * takes one.
 *
 * Context: the queue's NAPI context (softirq, or BH disabled).
 * Return: a buffer now owned by the caller, or NULL when both tiers are
 * empty.
 */
noinline struct netgpu_buf *netgpu_cache_get_slow(struct netgpu_cache *c)
{
	u32 count;

	lockdep_assert_in_softirq();

	/*
	 * Peek without the lock: a zero may miss a put in progress, which
	 * the next get will see.  Matches the WRITE_ONCE() in put_any.
	 */
	if (!READ_ONCE(c->any_count))
		return NULL;

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

	c->napi_count = --count;
	return c->napi[count];
}
EXPORT_SYMBOL_GPL(netgpu_cache_get_slow);
