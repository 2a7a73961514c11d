/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu buffer cache: the free buffers of one interface queue.
 */
#ifndef _NETGPU_CACHE_H
#define _NETGPU_CACHE_H

#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <net/net_debug.h>

#include "buf.h"

/**
 * DOC: netgpu buffer cache
 *
 * The cache keeps the free buffers of one interface queue between the
 * moments user space (or the stack) gives them back and the NIC driver
 * refills its rx ring.  It has two tiers:
 *
 * - the **NAPI tier**, a stack used without any lock or atomic operation,
 *   only from the NAPI context of the queue (softirq, or process context
 *   with BH disabled, one CPU at a time as NAPI guarantees):
 *   netgpu_cache_get_napi(), netgpu_cache_put_napi(),
 *   netgpu_cache_count(), netgpu_cache_avail();
 * - the **locked tier**, an array under a spinlock for puts from any
 *   other context (process, softirq, another CPU): netgpu_cache_put_any().
 *
 * When the NAPI tier runs empty, a get hands the whole locked tier over
 * to it in one batch: both tiers are arrays of the same size and the
 * hand-over swaps them under the lock, whatever the number of buffers.
 *
 * **Capacity.** Each tier has room for the cache's capacity, set at
 * creation to the number of buffers attached to the queue.  Every
 * attached buffer is at any time with the NIC, with user space or in this
 * cache, so the cache never holds more than its capacity and a put never
 * needs memory: nothing is allocated after netgpu_cache_create(), and no
 * buffer can be lost to a failed allocation.  A put into a full tier
 * means the caller put a buffer it did not own, or more buffers than it
 * attached: the put fails with -ENOSPC, counts it in the cache's
 * statistics, and the caller still owns the buffer.
 *
 * **Counts** are exact: netgpu_cache_count() adds both tiers.
 *
 * **Statistics** (&struct netgpu_cache_stats) count hits, hand-overs and
 * refused puts per cache, each in the context that owns its tier, for
 * netgpu_cache_get_stats().
 *
 * **Teardown** (netgpu_cache_destroy()) hands every cached buffer back
 * to its owner exactly once.
 */

/**
 * struct netgpu_cache_napi_stats - NAPI-tier statistics
 * @hits: gets served by the NAPI tier as it was
 * @refills: gets that first handed the locked tier over to the NAPI tier
 * @empty: gets that found both tiers empty
 * @overflows: NAPI puts refused because the NAPI tier was full
 *
 * Written by the queue's NAPI context only.  A successful get counts in
 * either @hits or @refills.
 */
struct netgpu_cache_napi_stats {
	u64 hits;
	u64 refills;
	u64 empty;
	u64 overflows;
};

/**
 * struct netgpu_cache_any_stats - locked-tier statistics
 * @puts: buffers put into the locked tier
 * @overflows: puts refused because the locked tier was full
 *
 * Written under the cache lock only.
 */
struct netgpu_cache_any_stats {
	u64 puts;
	u64 overflows;
};

/**
 * struct netgpu_cache_stats - statistics of one buffer cache
 * @napi: the NAPI tier's counters
 * @any: the locked tier's counters
 */
struct netgpu_cache_stats {
	struct netgpu_cache_napi_stats napi;
	struct netgpu_cache_any_stats any;
};

/**
 * struct netgpu_cache - free buffers of one interface queue
 * @napi: the NAPI tier, a stack of @napi_count buffers
 * @napi_count: number of buffers in @napi
 * @capacity: slots in each tier
 * @napi_stats: counters of the NAPI context
 * @lock: protects @any and @any_count, @any_stats, and the exchange of
 *	@napi and @any
 * @any: the locked tier, @any_count buffers
 * @any_count: number of buffers in @any; written under @lock, read
 *	without it by the NAPI context (READ_ONCE) as a hint
 * @any_stats: counters of the locked tier
 * @slots: storage of both tiers, 2 * @capacity entries
 *
 * The NAPI fields and the locked tier sit on separate cache lines: puts
 * from other CPUs do not bounce the NAPI context's line.
 */
struct netgpu_cache {
	/* NAPI tier: only the queue's NAPI context reads or writes these. */
	struct netgpu_buf	**napi;
	u32			napi_count;
	u32			capacity;
	struct netgpu_cache_napi_stats napi_stats;

	/*
	 * Locked tier.
	 * Protects: any, any_count, any_stats, and swapping napi with any.
	 * Ordering: innermost; nothing else is taken under it.
	 */
	spinlock_t		lock ____cacheline_aligned_in_smp;
	struct netgpu_buf	**any;
	u32			any_count;
	struct netgpu_cache_any_stats any_stats;

	struct netgpu_buf	*slots[] ____cacheline_aligned_in_smp;
};

/* Largest capacity netgpu_cache_create() accepts. */
#define NETGPU_CACHE_MAX_CAPACITY	BIT(24)

struct netgpu_cache *netgpu_cache_create(u32 capacity, int nid);
void netgpu_cache_destroy(struct netgpu_cache *c,
			  void (*release)(struct netgpu_buf *buf, void *arg),
			  void *arg);
int netgpu_cache_put_any(struct netgpu_cache *c, struct netgpu_buf *buf);
void netgpu_cache_get_stats(struct netgpu_cache *c,
			    struct netgpu_cache_stats *stats);
struct netgpu_buf *__netgpu_cache_get_slow(struct netgpu_cache *c);

/* netgpu_cache_napi_stat_inc() is intended for the queue's NAPI context */
#define netgpu_cache_napi_stat_inc(c, __stat)	(++(c)->napi_stats.__stat)

/**
 * netgpu_cache_get_napi() - take a free buffer from the cache
 * @c: the cache
 *
 * Takes the most recently put buffer of the NAPI tier; when that tier is
 * empty, first moves the whole locked tier into it.
 *
 * Context: the queue's NAPI context (softirq, or BH disabled), never
 * concurrently with another NAPI-tier call on @c.
 * Return: a buffer now owned by the caller, or NULL when the cache is
 * empty (the caller then pulls from the fill ring).
 */
static inline struct netgpu_buf *netgpu_cache_get_napi(struct netgpu_cache *c)
{
	lockdep_assert_in_softirq();

	/* fast path */
	if (likely(c->napi_count)) {
		netgpu_cache_napi_stat_inc(c, hits);
		return c->napi[--c->napi_count];
	}

	return __netgpu_cache_get_slow(c);
}

/**
 * netgpu_cache_put_napi() - give a buffer back from NAPI context
 * @c: the cache
 * @buf: a buffer the caller owns
 *
 * Never allocates.  With no more buffers in the cache than were attached
 * to the queue it always succeeds.
 *
 * Context: the queue's NAPI context (softirq, or BH disabled), never
 * concurrently with another NAPI-tier call on @c.
 * Return: 0 when @c now owns @buf; -ENOSPC when the NAPI tier is full,
 * which is a caller bug (more buffers put than attached), counted in
 * &netgpu_cache_napi_stats.overflows: @buf stays the caller's.
 */
static inline int netgpu_cache_put_napi(struct netgpu_cache *c,
					struct netgpu_buf *buf)
{
	lockdep_assert_in_softirq();
	/* A NULL in a tier would read as "cache empty" to a get. */
	DEBUG_NET_WARN_ON_ONCE(!buf);

	/* fast path */
	if (likely(c->napi_count < c->capacity)) {
		c->napi[c->napi_count++] = buf;
		return 0;
	}

	netgpu_cache_napi_stat_inc(c, overflows);
	return -ENOSPC;
}

/**
 * netgpu_cache_count() - number of buffers in the cache
 * @c: the cache
 *
 * Adds both tiers.  Only the NAPI context takes buffers out of the cache,
 * so the count its caller sees can only grow (by concurrent puts) until
 * the caller itself gets buffers.
 *
 * Context: the queue's NAPI context (softirq, or BH disabled).
 * Return: the number of buffers netgpu_cache_get_napi() can return now.
 */
static inline u32 netgpu_cache_count(const struct netgpu_cache *c)
{
	lockdep_assert_in_softirq();

	/* No lock: a stale any_count only misses puts still in progress. */
	return c->napi_count + READ_ONCE(c->any_count);
}

/**
 * netgpu_cache_avail() - whether @n buffers can be taken from the cache
 * @c: the cache
 * @n: number of buffers wanted
 *
 * Context: the queue's NAPI context (softirq, or BH disabled).
 * Return: true when the next @n calls to netgpu_cache_get_napi() all
 * return a buffer.
 */
static inline bool netgpu_cache_avail(const struct netgpu_cache *c, u32 n)
{
	return netgpu_cache_count(c) >= n;
}

#endif /* _NETGPU_CACHE_H */
