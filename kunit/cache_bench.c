// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmarks of the netgpu buffer cache against its in-tree peers, in
 * the same boot: page_pool's recycling paths and ptr_ring.
 *
 * One operation is one buffer taken and given back.  Each measurement
 * runs BENCH_ROUNDS rounds of "take BENCH_BATCH buffers, give them back",
 * the way a NAPI poll refills an rx ring; netgpu and the peer alternate
 * BENCH_REPS times and the best time of each is kept.  Only the ratios of
 * one boot mean something (QEMU under TCG).
 *
 * - NAPI (lockless) path: get and put in one BH-disabled section, against
 *   page_pool's alloc cache (struct pp_alloc_cache, the array the NAPI
 *   tier copies: the fast-path lines of __page_pool_get_cached() and
 *   page_pool_recycle_in_cache(), net/core/page_pool.c, run on the
 *   cache's own struct, statistics off as in the bench kernel), the like
 *   for like; against page_pool_alloc_pages() +
 *   page_pool_put_full_page(..., true), page_pool's whole
 *   direct-recycling path (a page's refcount and pp_ref, its NUMA node,
 *   the sync hook around that same array: more work than the NAPI tier
 *   does, so its ratio says what a page costs, not that the NAPI tier is
 *   faster than page_pool's cache); and ptr_ring_consume() +
 *   ptr_ring_produce().
 * - Locked path: get in a BH-disabled section, puts from process context
 *   (netgpu_cache_put_any()), against the same page_pool fast path,
 *   page_pool's ring path (page_pool_put_full_page(..., false)) and
 *   ptr_ring_produce_bh().
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/dma-direction.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/ptr_ring.h>
#include <linux/slab.h>
#include <net/page_pool/helpers.h>

#include "cache.h"

#define BENCH_BATCH	32
#define BENCH_ROUNDS	4096
#define BENCH_REPS	7
#define BENCH_GFP	(GFP_ATOMIC | __GFP_NOWARN)
#define BENCH_OPS	((u64)BENCH_BATCH * BENCH_ROUNDS)
/* Rounds per BH-disabled section on the NAPI path (a NAPI poll or so). */
#define BENCH_NAPI_ROUNDS 16

struct bench_ctx {
	struct kunit		*test;
	struct netgpu_cache	*c;
	struct netgpu_buf	bufs[BENCH_BATCH];
	struct page_pool	*pp;
	struct ptr_ring		ring;
	bool			ring_ok;
	struct pp_alloc_cache	alloc;
	void			*held[BENCH_BATCH];
	unsigned long		errors;
};

static void bench_release(struct netgpu_buf *buf, void *arg)
{
}

static void bench_ctx_free(void *arg)
{
	struct bench_ctx *b = arg;

	netgpu_cache_destroy(b->c, bench_release, NULL);
	if (b->ring_ok)
		ptr_ring_cleanup(&b->ring, NULL);
	if (b->pp)
		page_pool_destroy(b->pp);
	kfree(b);
}

/* A buffer stored in page_pool's alloc cache, and back. */
static netmem_ref bench_netmem(void *p)
{
	return (__force netmem_ref)(unsigned long)p;
}

static void *bench_ptr(netmem_ref netmem)
{
	return (void *)(__force unsigned long)netmem;
}

static struct bench_ctx *bench_setup(struct kunit *test)
{
	struct page_pool_params pp = {
		.order		= 0,
		.pool_size	= 256,
		.nid		= NUMA_NO_NODE,
		.dma_dir	= DMA_FROM_DEVICE,
	};
	struct bench_ctx *b;
	struct page *page;
	int i;

	/* A dummy device, gone after the pool (actions run in reverse). */
	pp.dev = kunit_device_register(test, "netgpu_cache_bench");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pp.dev);

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, bench_ctx_free, b));
	b->test = test;

	b->c = netgpu_cache_create(BENCH_BATCH, NUMA_NO_NODE);
	if (IS_ERR(b->c)) {
		b->c = NULL;
		KUNIT_FAIL_AND_ABORT(test, "netgpu_cache_create");
	}
	for (i = 0; i < BENCH_BATCH; i++)
		KUNIT_ASSERT_EQ(test, netgpu_cache_put_any(b->c, &b->bufs[i]),
				0);

	/* page_pool's alloc cache holds the same buffers, as netmem. */
	for (i = 0; i < BENCH_BATCH; i++)
		b->alloc.cache[b->alloc.count++] = bench_netmem(&b->bufs[i]);
	KUNIT_ASSERT_EQ(test, ptr_ring_init(&b->ring, BENCH_BATCH, GFP_KERNEL),
			0);
	b->ring_ok = true;
	for (i = 0; i < BENCH_BATCH; i++)
		KUNIT_ASSERT_EQ(test, ptr_ring_produce_bh(&b->ring, &b->bufs[i]),
				0);

	/* No PP_FLAG_DMA_MAP: the dummy device is never DMA-mapped to. */
	b->pp = page_pool_create(&pp);
	if (IS_ERR(b->pp)) {
		b->pp = NULL;
		KUNIT_FAIL_AND_ABORT(test, "page_pool_create");
	}
	/* Warm up: BENCH_BATCH pages in the pool's direct cache. */
	local_bh_disable();
	for (i = 0; i < BENCH_BATCH; i++) {
		page = page_pool_alloc_pages(b->pp, BENCH_GFP);
		b->held[i] = page;
	}
	for (i = 0; i < BENCH_BATCH; i++)
		if (b->held[i])
			page_pool_put_full_page(b->pp, b->held[i], true);
	local_bh_enable();
	for (i = 0; i < BENCH_BATCH; i++)
		KUNIT_ASSERT_NOT_NULL(test, b->held[i]);

	return b;
}

/* ===== One measurement each: nanoseconds for BENCH_OPS operations ===== */

static u64 bench_netgpu_napi(struct bench_ctx *b)
{
	struct netgpu_buf **held = (struct netgpu_buf **)b->held;
	u64 t0 = ktime_get_ns();
	int r, k, i;

	for (r = 0; r < BENCH_ROUNDS; r += BENCH_NAPI_ROUNDS) {
		local_bh_disable();
		for (k = 0; k < BENCH_NAPI_ROUNDS; k++) {
			for (i = 0; i < BENCH_BATCH; i++)
				held[i] = netgpu_cache_get_napi(b->c);
			for (i = 0; i < BENCH_BATCH; i++)
				if (unlikely(!held[i] ||
					     netgpu_cache_put_napi(b->c, held[i])))
					b->errors++;
		}
		local_bh_enable();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_netgpu_locked(struct bench_ctx *b)
{
	struct netgpu_buf **held = (struct netgpu_buf **)b->held;
	u64 t0 = ktime_get_ns();
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++)
			held[i] = netgpu_cache_get_napi(b->c);
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++)
			if (unlikely(!held[i] ||
				     netgpu_cache_put_any(b->c, held[i])))
				b->errors++;
	}
	return ktime_get_ns() - t0;
}

static u64 bench_pp_fast(struct bench_ctx *b)
{
	struct page **held = (struct page **)b->held;
	u64 t0 = ktime_get_ns();
	int r, k, i;

	for (r = 0; r < BENCH_ROUNDS; r += BENCH_NAPI_ROUNDS) {
		local_bh_disable();
		for (k = 0; k < BENCH_NAPI_ROUNDS; k++) {
			for (i = 0; i < BENCH_BATCH; i++)
				held[i] = page_pool_alloc_pages(b->pp, BENCH_GFP);
			for (i = 0; i < BENCH_BATCH; i++) {
				if (unlikely(!held[i])) {
					b->errors++;
					continue;
				}
				page_pool_put_full_page(b->pp, held[i], true);
			}
		}
		local_bh_enable();
	}
	return ktime_get_ns() - t0;
}

/*
 * page_pool's alloc cache alone: __page_pool_get_cached()'s fast path and
 * page_pool_recycle_in_cache(), line for line, on the struct page_pool
 * keeps them in; what the NAPI tier copies.
 */
static u64 bench_pp_alloc_cache(struct bench_ctx *b)
{
	struct pp_alloc_cache *a = &b->alloc;
	u64 t0 = ktime_get_ns();
	netmem_ref netmem;
	int r, k, i;

	for (r = 0; r < BENCH_ROUNDS; r += BENCH_NAPI_ROUNDS) {
		local_bh_disable();
		for (k = 0; k < BENCH_NAPI_ROUNDS; k++) {
			for (i = 0; i < BENCH_BATCH; i++) {
				netmem = 0;
				if (likely(a->count))
					netmem = a->cache[--a->count];
				b->held[i] = bench_ptr(netmem);
			}
			for (i = 0; i < BENCH_BATCH; i++) {
				if (unlikely(!b->held[i] ||
					     a->count == PP_ALLOC_CACHE_SIZE)) {
					b->errors++;
					continue;
				}
				a->cache[a->count++] = bench_netmem(b->held[i]);
			}
		}
		local_bh_enable();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_pp_ring(struct bench_ctx *b)
{
	struct page **held = (struct page **)b->held;
	u64 t0 = ktime_get_ns();
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++)
			held[i] = page_pool_alloc_pages(b->pp, BENCH_GFP);
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++) {
			if (unlikely(!held[i])) {
				b->errors++;
				continue;
			}
			page_pool_put_full_page(b->pp, held[i], false);
		}
	}
	return ktime_get_ns() - t0;
}

static u64 bench_ptr_ring_napi(struct bench_ctx *b)
{
	u64 t0 = ktime_get_ns();
	int r, k, i;

	for (r = 0; r < BENCH_ROUNDS; r += BENCH_NAPI_ROUNDS) {
		local_bh_disable();
		for (k = 0; k < BENCH_NAPI_ROUNDS; k++) {
			for (i = 0; i < BENCH_BATCH; i++)
				b->held[i] = ptr_ring_consume(&b->ring);
			for (i = 0; i < BENCH_BATCH; i++)
				if (unlikely(!b->held[i] ||
					     ptr_ring_produce(&b->ring,
							      b->held[i])))
					b->errors++;
		}
		local_bh_enable();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_ptr_ring_locked(struct bench_ctx *b)
{
	u64 t0 = ktime_get_ns();
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++)
			b->held[i] = ptr_ring_consume(&b->ring);
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++)
			if (unlikely(!b->held[i] ||
				     ptr_ring_produce_bh(&b->ring, b->held[i])))
				b->errors++;
	}
	return ktime_get_ns() - t0;
}

/*
 * Alternate @ours and @peer BENCH_REPS times (after one warm-up each),
 * keep the best of each and print the one BENCH line of the case.
 */
static void bench_compare(struct kunit *test, const char *name,
			  u64 (*ours)(struct bench_ctx *b),
			  const char *peer_name,
			  u64 (*peer)(struct bench_ctx *b))
{
	struct bench_ctx *b = bench_setup(test);
	u64 best_ours = U64_MAX, best_peer = U64_MAX, t;
	u64 ours_cns, peer_cns;	/* centi-nanoseconds per op */
	int rep;

	ours(b);
	peer(b);
	for (rep = 0; rep < BENCH_REPS; rep++) {
		t = ours(b);
		best_ours = min(best_ours, t);
		t = peer(b);
		best_peer = min(best_peer, t);
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, b->errors, 0);

	ours_cns = div64_u64(best_ours * 100, BENCH_OPS);
	peer_cns = div64_u64(best_peer * 100, BENCH_OPS);
	t = div64_u64(best_ours * 1000, max_t(u64, best_peer, 1));
	kunit_info(test,
		   "BENCH cache/%s: netgpu %llu.%02llu ns/op, %s %llu.%02llu ns/op, ratio %llu.%03llu (batch %d, rounds %d, best of %d, op = get+put of one buffer)",
		   name, ours_cns / 100, ours_cns % 100, peer_name,
		   peer_cns / 100, peer_cns % 100, t / 1000, t % 1000,
		   BENCH_BATCH, BENCH_ROUNDS, BENCH_REPS);
}

/* ===== Benchmarks ===== */

static void netgpu_cache_bench_napi_vs_pp_alloc_cache(struct kunit *test)
{
	bench_compare(test, "napi_vs_pp_alloc_cache", bench_netgpu_napi,
		      "pp_alloc_cache", bench_pp_alloc_cache);
}

static void netgpu_cache_bench_napi_vs_page_pool(struct kunit *test)
{
	bench_compare(test, "napi_vs_page_pool", bench_netgpu_napi,
		      "page_pool", bench_pp_fast);
}

static void netgpu_cache_bench_napi_vs_ptr_ring(struct kunit *test)
{
	bench_compare(test, "napi_vs_ptr_ring", bench_netgpu_napi,
		      "ptr_ring", bench_ptr_ring_napi);
}

static void netgpu_cache_bench_locked_vs_page_pool(struct kunit *test)
{
	bench_compare(test, "locked_vs_page_pool", bench_netgpu_locked,
		      "page_pool", bench_pp_fast);
}

static void netgpu_cache_bench_locked_vs_page_pool_ring(struct kunit *test)
{
	bench_compare(test, "locked_vs_page_pool_ring", bench_netgpu_locked,
		      "page_pool_ring", bench_pp_ring);
}

static void netgpu_cache_bench_locked_vs_ptr_ring(struct kunit *test)
{
	bench_compare(test, "locked_vs_ptr_ring", bench_netgpu_locked,
		      "ptr_ring", bench_ptr_ring_locked);
}

static struct kunit_case cache_bench_cases[] = {
	KUNIT_CASE_SLOW(netgpu_cache_bench_napi_vs_pp_alloc_cache),
	KUNIT_CASE_SLOW(netgpu_cache_bench_napi_vs_page_pool),
	KUNIT_CASE_SLOW(netgpu_cache_bench_napi_vs_ptr_ring),
	KUNIT_CASE_SLOW(netgpu_cache_bench_locked_vs_page_pool),
	KUNIT_CASE_SLOW(netgpu_cache_bench_locked_vs_page_pool_ring),
	KUNIT_CASE_SLOW(netgpu_cache_bench_locked_vs_ptr_ring),
	{}
};

static struct kunit_suite cache_bench_suite = {
	.name = "netgpu_cache_bench",
	.test_cases = cache_bench_cases,
	.attr.speed = KUNIT_SPEED_SLOW,
};

kunit_test_suite(cache_bench_suite);

MODULE_DESCRIPTION("Benchmarks of the netgpu buffer cache");
MODULE_LICENSE("GPL");
