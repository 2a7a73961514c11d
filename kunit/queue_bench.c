// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark of the netgpu shared queue against ptr_ring, in the same boot:
 * one thread produces a batch and consumes it again, QB_ENTRIES entries in
 * all, for batches of 1, 16 and 64.  ptr_ring produces a batch under one
 * producer_lock and consumes it with ptr_ring_consume_batched().  Each
 * side is timed QB_REPS times, alternately, and the best run counts.
 */

#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "queue.h"

#define QB_ENTRIES	BIT(20)
#define QB_RING		1024
#define QB_REPS		5
#define QB_MAX_BATCH	64

static const u32 qb_batches[] = { 1, 16, 64 };

static void qb_batch_desc(const u32 *batch, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "batch %u", *batch);
}

KUNIT_ARRAY_PARAM(qb_batch, qb_batches, qb_batch_desc);

/* Returns the time taken, or 0 if an entry went missing or astray. */
static u64 qb_run_netgpu(struct netgpu_queue *q, u32 batch)
{
	u64 in[QB_MAX_BATCH], out[QB_MAX_BATCH];
	u64 start, end, sum = 0, want = 0;
	u32 done, i, got;

	start = ktime_get_ns();
	for (done = 0; done < QB_ENTRIES; done += batch) {
		for (i = 0; i < batch; i++)
			in[i] = done + i + 1;
		if (netgpu_queue_prod_reserve_addr_batch(q, in, batch) != batch)
			return 0;
		netgpu_queue_prod_submit(q);
		got = netgpu_queue_cons_peek_addr_batch(q, out, batch);
		netgpu_queue_cons_release(q, got);
		for (i = 0; i < got; i++)
			sum += out[i];
	}
	end = ktime_get_ns();

	want = (u64)QB_ENTRIES * (QB_ENTRIES + 1) / 2;
	return sum == want ? end - start : 0;
}

static u64 qb_run_ptr_ring(struct ptr_ring *r, u32 batch)
{
	void *out[QB_MAX_BATCH];
	u64 start, end, sum = 0, want = 0;
	u32 done, i;
	int got;

	start = ktime_get_ns();
	for (done = 0; done < QB_ENTRIES; done += batch) {
		spin_lock(&r->producer_lock);
		for (i = 0; i < batch; i++)
			if (__ptr_ring_produce(r, (void *)(unsigned long)(done + i + 1)))
				break;
		spin_unlock(&r->producer_lock);
		if (i != batch)
			return 0;
		got = ptr_ring_consume_batched(r, out, batch);
		for (i = 0; i < got; i++)
			sum += (unsigned long)out[i];
	}
	end = ktime_get_ns();

	want = (u64)QB_ENTRIES * (QB_ENTRIES + 1) / 2;
	return sum == want ? end - start : 0;
}

/* Hundredths of a nanosecond per entry. */
static u64 qb_centi_ns(u64 ns)
{
	return div_u64(ns * 100, QB_ENTRIES);
}

static void netgpu_queue_bench_batch(struct kunit *test)
{
	const u32 batch = *(const u32 *)test->param_value;
	u64 best_q = U64_MAX, best_r = U64_MAX, q_c, r_c, ratio;
	struct netgpu_queue *q;
	struct ptr_ring r;
	unsigned int rep;
	int ret;

	q = netgpu_queue_create(NETGPU_QUEUE_FILL, QB_RING);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	ret = ptr_ring_init(&r, QB_RING, GFP_KERNEL);
	if (ret) {
		netgpu_queue_destroy(q);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}

	for (rep = 0; rep < QB_REPS; rep++) {
		u64 tq = qb_run_netgpu(q, batch);
		u64 tr = qb_run_ptr_ring(&r, batch);

		KUNIT_EXPECT_NE_MSG(test, tq, 0ULL, "netgpu lost entries");
		KUNIT_EXPECT_NE_MSG(test, tr, 0ULL, "ptr_ring lost entries");
		if (tq)
			best_q = min(best_q, tq);
		if (tr)
			best_r = min(best_r, tr);
	}
	ptr_ring_cleanup(&r, NULL);
	netgpu_queue_destroy(q);
	if (best_q == U64_MAX || best_r == U64_MAX)
		return;

	q_c = qb_centi_ns(best_q);
	r_c = max(qb_centi_ns(best_r), 1ULL);
	ratio = div64_u64(q_c * 1000, r_c);
	kunit_info(test,
		   "BENCH queue/produce_consume_batch%u: netgpu %llu.%02llu ns/op, ptr_ring %llu.%02llu ns/op, ratio %llu.%03llu (iterations=%lu ring=%u batch=%u best-of=%u)",
		   batch, q_c / 100, q_c % 100, r_c / 100, r_c % 100,
		   ratio / 1000, ratio % 1000, QB_ENTRIES, QB_RING, batch,
		   QB_REPS);
}

static struct kunit_case queue_bench_cases[] = {
	KUNIT_CASE_PARAM_ATTR(netgpu_queue_bench_batch, qb_batch_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite queue_bench_suite = {
	.name = "netgpu_queue_bench",
	.test_cases = queue_bench_cases,
	.attr.speed = KUNIT_SPEED_SLOW,
};

kunit_test_suite(queue_bench_suite);

MODULE_DESCRIPTION("Benchmark of the netgpu shared queue against ptr_ring");
MODULE_LICENSE("GPL");
