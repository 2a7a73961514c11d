// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the netgpu shared queue (lib/netgpu/queue.c).
 *
 * Entries are derived from their sequence number (entry_make()), so every
 * read checks itself.  Where a case plays user space it writes the shared
 * header and the slots directly, as a process that mapped the ring would.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/tracepoint.h>
#include <linux/wait.h>
#include <trace/events/kmem.h>

#include "fail_nth.h"
#include "leak.h"
#include "queue.h"
#include "splat.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* Largest batch any case passes, in entries. */
#define QT_BATCH	64

union qt_entry {
	u64 addr;
	struct netgpu_rx_desc desc;
};

KUNIT_DEFINE_ACTION_WRAPPER(netgpu_queue_destroy_wrapper, netgpu_queue_destroy,
			    struct netgpu_queue *);
KUNIT_DEFINE_ACTION_WRAPPER(fput_wrapper, fput, struct file *);

static const char *const qt_type_name[] = {
	[NETGPU_QUEUE_FILL] = "fill",
	[NETGPU_QUEUE_RX] = "rx",
	[NETGPU_QUEUE_COMPLETION] = "completion",
};

static u32 qt_entry_size(enum netgpu_queue_type type)
{
	return type == NETGPU_QUEUE_RX ? sizeof(struct netgpu_rx_desc) :
					 sizeof(u64);
}

static u64 qt_mmap_offset(enum netgpu_queue_type type)
{
	switch (type) {
	case NETGPU_QUEUE_FILL:
		return NETGPU_OFF_FILL_RING;
	case NETGPU_QUEUE_RX:
		return NETGPU_OFF_RX_RING;
	default:
		return NETGPU_OFF_COMPLETION_RING;
	}
}

/* Entry @seq: never zero (fresh rings are), different for every @seq. */
static void entry_make(enum netgpu_queue_type type, u64 seq, void *buf, u32 i)
{
	u64 addr = seq * 4096 + 0x5a;

	if (type == NETGPU_QUEUE_RX) {
		struct netgpu_rx_desc *d = (struct netgpu_rx_desc *)buf + i;

		d->addr = addr;
		d->len = (u32)seq + 1;
		d->flags = (u32)(seq >> 32) ^ 0xf00d;
	} else {
		((u64 *)buf)[i] = addr;
	}
}

static void entries_make(enum netgpu_queue_type type, u64 seq, void *buf,
			 u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		entry_make(type, seq + i, buf, i);
}

static bool entry_ok(enum netgpu_queue_type type, u64 seq, const void *buf,
		     u32 i)
{
	union qt_entry want;

	entry_make(type, seq, &want, 0);
	return !memcmp((const u8 *)buf + i * qt_entry_size(type), &want,
		       qt_entry_size(type));
}

/* Index of the first of @n entries that is not entry @seq + i, or @n. */
static u32 entries_check(enum netgpu_queue_type type, u64 seq,
			 const void *buf, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!entry_ok(type, seq + i, buf, i))
			return i;
	return n;
}

static struct netgpu_queue *qt_create(struct kunit *test,
				      enum netgpu_queue_type type, u32 n)
{
	struct netgpu_queue *q;
	int ret;

	q = netgpu_queue_create(type, n);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	ret = kunit_add_action_or_reset(test, netgpu_queue_destroy_wrapper, q);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return q;
}

/* Slot of index @idx, as user space sees it. */
static void *qt_slot(struct netgpu_queue *q, enum netgpu_queue_type type,
		     u32 idx)
{
	u32 mask = netgpu_queue_nentries(q) - 1;

	return (u8 *)(netgpu_queue_ring(q) + 1) +
	       (size_t)(idx & mask) * qt_entry_size(type);
}

static void user_set_prod(struct netgpu_queue *q, u32 v)
{
	WRITE_ONCE(netgpu_queue_ring(q)->prod, v);
}

static void user_set_cons(struct netgpu_queue *q, u32 v)
{
	WRITE_ONCE(netgpu_queue_ring(q)->cons, v);
}

static u32 user_prod(struct netgpu_queue *q)
{
	return READ_ONCE(netgpu_queue_ring(q)->prod);
}

static u32 user_cons(struct netgpu_queue *q)
{
	return READ_ONCE(netgpu_queue_ring(q)->cons);
}

static struct netgpu_queue_stats qt_stats(struct netgpu_queue *q)
{
	struct netgpu_queue_stats st;

	netgpu_queue_get_stats(q, &st);
	return st;
}

/* The typed entry calls, for the cases that run over queue types. */
static u32 qt_reserve(struct netgpu_queue *q, enum netgpu_queue_type type,
		      const void *in, u32 n)
{
	if (type == NETGPU_QUEUE_RX)
		return netgpu_queue_prod_reserve_desc_batch(q, in, n);
	return netgpu_queue_prod_reserve_addr_batch(q, in, n);
}

static u32 qt_peek(struct netgpu_queue *q, enum netgpu_queue_type type,
		   void *out, u32 max)
{
	if (type == NETGPU_QUEUE_RX)
		return netgpu_queue_cons_peek_desc_batch(q, out, max);
	return netgpu_queue_cons_peek_addr_batch(q, out, max);
}

/* ===== Test cases ===== */

/* --- geometry --- */

struct qt_geom_case {
	const char *desc;
	enum netgpu_queue_type type;
	u32 entries;
	u32 entry_size;
	int err;
	u32 want;
};

#define MAXE	NETGPU_QUEUE_MAX_ENTRIES

static const struct qt_geom_case qt_geom_cases[] = {
	{ "fill 1", NETGPU_QUEUE_FILL, 1, 8, 0, 1 },
	{ "fill 2", NETGPU_QUEUE_FILL, 2, 8, 0, 2 },
	{ "fill 3 rounds to 4", NETGPU_QUEUE_FILL, 3, 8, 0, 4 },
	{ "fill 1000 rounds to 1024", NETGPU_QUEUE_FILL, 1000, 8, 0, 1024 },
	{ "rx 5 rounds to 8", NETGPU_QUEUE_RX, 5, 16, 0, 8 },
	{ "rx 4096", NETGPU_QUEUE_RX, 4096, 16, 0, 4096 },
	{ "completion 129 rounds to 256", NETGPU_QUEUE_COMPLETION, 129, 8, 0,
	  256 },
	{ "fill max-1 rounds to max", NETGPU_QUEUE_FILL, MAXE - 1, 8, 0, MAXE },
	{ "rx max", NETGPU_QUEUE_RX, MAXE, 16, 0, MAXE },
	{ "fill 0 entries", NETGPU_QUEUE_FILL, 0, 8, -EINVAL },
	{ "rx 0 entries", NETGPU_QUEUE_RX, 0, 16, -EINVAL },
	{ "completion 0 entries", NETGPU_QUEUE_COMPLETION, 0, 8, -EINVAL },
	{ "fill entry size 16", NETGPU_QUEUE_FILL, 64, 16, -EINVAL },
	{ "completion entry size 16", NETGPU_QUEUE_COMPLETION, 64, 16,
	  -EINVAL },
	{ "rx entry size 8", NETGPU_QUEUE_RX, 64, 8, -EINVAL },
	{ "fill entry size 0", NETGPU_QUEUE_FILL, 64, 0, -EINVAL },
	{ "fill entry size 4", NETGPU_QUEUE_FILL, 64, 4, -EINVAL },
	{ "rx entry size 24", NETGPU_QUEUE_RX, 64, 24, -EINVAL },
	{ "rx entry size U32_MAX", NETGPU_QUEUE_RX, 64, U32_MAX, -EINVAL },
	{ "bad size and 0 entries", NETGPU_QUEUE_RX, 0, 8, -EINVAL },
	{ "bad size and too many", NETGPU_QUEUE_RX, U32_MAX, 8, -EINVAL },
	{ "fill max+1", NETGPU_QUEUE_FILL, MAXE + 1, 8, -E2BIG },
	{ "rx max*2", NETGPU_QUEUE_RX, MAXE * 2, 16, -E2BIG },
	{ "fill 2^31 (size overflows 32-bit)", NETGPU_QUEUE_FILL, 1U << 31, 8,
	  -E2BIG },
	{ "rx 2^31+1 (power of two overflows u32)", NETGPU_QUEUE_RX,
	  (1U << 31) + 1, 16, -E2BIG },
	{ "completion U32_MAX", NETGPU_QUEUE_COMPLETION, U32_MAX, 8, -E2BIG },
	{ "rx U32_MAX", NETGPU_QUEUE_RX, U32_MAX, 16, -E2BIG },
	{ "unknown type", NETGPU_QUEUE_NR_TYPES, 64, 8, -EINVAL },
	{ "type -1", (enum netgpu_queue_type)-1, 64, 8, -EINVAL },
};

static void qt_geom_desc(const struct qt_geom_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qt_geom, qt_geom_cases, qt_geom_desc);

static void netgpu_queue_test_geometry(struct kunit *test)
{
	const struct qt_geom_case *c = test->param_value;
	struct netgpu_queue_geom geom = {
		.entries = c->entries,
		.entry_size = c->entry_size,
		.mmap_offset = 0x1111,
		.mmap_size = 0x2222,
	};
	struct netgpu_queue_geom orig = geom;
	struct netgpu_queue *q;
	int ret;

	ret = netgpu_queue_validate_geometry(c->type, &geom);
	KUNIT_EXPECT_EQ(test, ret, c->err);
	if (c->err) {
		/* Refused: nothing reported back. */
		KUNIT_EXPECT_EQ(test, memcmp(&geom, &orig, sizeof(geom)), 0);
		return;
	}

	KUNIT_EXPECT_EQ(test, geom.entries, c->want);
	KUNIT_EXPECT_EQ(test, geom.entry_size, c->entry_size);
	KUNIT_EXPECT_EQ(test, geom.mmap_offset, qt_mmap_offset(c->type));
	KUNIT_EXPECT_EQ(test, geom.mmap_size,
			(u64)PAGE_ALIGN(sizeof(struct netgpu_ring) +
					(size_t)c->want * c->entry_size));

	/* What was reported is what create() makes and mmap() accepts. */
	q = qt_create(test, c->type, geom.entries);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nentries(q), geom.entries);
	KUNIT_EXPECT_EQ(test, (u64)netgpu_queue_ring_size(q), geom.mmap_size);
	KUNIT_EXPECT_EQ(test,
			netgpu_queue_mmap_check(q, geom.mmap_offset >> PAGE_SHIFT,
						geom.mmap_size), 0);
}

static void netgpu_queue_test_create_invalid(struct kunit *test)
{
	static const u32 bad[] = { 0, 3, 6, 1000, MAXE + 1, MAXE * 2,
				   1U << 31, U32_MAX };
	struct netgpu_queue *q;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		q = netgpu_queue_create(NETGPU_QUEUE_FILL, bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(q), -EINVAL,
				    "nentries %u", bad[i]);
		if (!IS_ERR(q))
			netgpu_queue_destroy(q);
	}
	q = netgpu_queue_create(NETGPU_QUEUE_NR_TYPES, 8);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(q), -EINVAL);
	if (!IS_ERR(q))
		netgpu_queue_destroy(q);

	/* NULL is a valid no-op, as for kfree(). */
	netgpu_queue_destroy(NULL);
}

/*
 * Fail the 1st, 2nd, ... allocation of create() until one run completes
 * without reaching the injected fault.  A fault that create() survives
 * (another allocator absorbed it, kmemleak's object cache for instance) is
 * not the end of the sweep.  Every create that fails must leave nothing
 * allocated, and every destroy must free what its create allocated: the
 * kmem tracepoints see each kmalloc of this thread, the queue's own and
 * vmalloc's bookkeeping alike.
 */
static void netgpu_queue_test_create_fault(struct kunit *test)
{
	unsigned int nth, left, failed = 0, leaks = 0;
	struct netgpu_queue *q;
	u32 free;
	struct netgpu_leak *lk;

	netgpu_kunit_need_fail_nth(test);
	lk = netgpu_leak_start(test);
	for (nth = 1; nth < 1000; nth++) {
		netgpu_leak_open(lk);
		netgpu_fail_nth_set(nth);
		q = netgpu_queue_create(NETGPU_QUEUE_RX, 64);
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		if (IS_ERR(q)) {
			leaks += netgpu_leak_close(test, lk, "failed create", nth);
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(q), -ENOMEM,
					    "fail_nth %u", nth);
			failed++;
			continue;
		}
		free = netgpu_queue_nb_free(q);
		netgpu_queue_destroy(q);
		leaks += netgpu_leak_close(test, lk, "create and destroy", nth);
		KUNIT_EXPECT_EQ(test, free, 64U);
		if (left)
			break;
	}
	kunit_info(test, "%u of %u injected faults failed create(); %u kmallocs tracked, %u leaked",
		   failed, nth - 1, lk->seen, leaks);
	KUNIT_EXPECT_LT(test, nth, 1000U);
	/*
	 * At least the queue itself (the 1st allocation).  Which of the
	 * ring's allocations fail create() depends on what kmemleak's and
	 * vmalloc's own allocations absorb in this boot, so no more is
	 * certain.
	 */
	KUNIT_EXPECT_GE(test, failed, 1U);
	/* The tracker saw the queues' kzalloc()s at least. */
	KUNIT_EXPECT_GT(test, lk->seen, 0U);
}

/* --- wrap-around --- */

struct qt_size_case {
	enum netgpu_queue_type type;
	u32 nentries;
};

static const struct qt_size_case qt_size_cases[] = {
	{ NETGPU_QUEUE_FILL, 1 },
	{ NETGPU_QUEUE_FILL, 2 },
	{ NETGPU_QUEUE_RX, 4 },
	{ NETGPU_QUEUE_COMPLETION, 8 },
	{ NETGPU_QUEUE_RX, 64 },
	{ NETGPU_QUEUE_FILL, 256 },
};

static void qt_size_desc(const struct qt_size_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, %u entries",
		 qt_type_name[c->type], c->nentries);
}

KUNIT_ARRAY_PARAM(qt_size, qt_size_cases, qt_size_desc);

/*
 * From every start position, in the first lap and in the lap where the u32
 * indices wrap: fill the ring in one batch, check the slots, drain it in
 * two releases.
 */
static void netgpu_queue_test_wrap(struct kunit *test)
{
	const struct qt_size_case *c = test->param_value;
	const u32 n = c->nentries;
	const u32 laps[] = { 0, 0U - n };
	struct netgpu_queue *q;
	union qt_entry *in, *out;
	unsigned int lap;
	u32 pos, i;

	q = qt_create(test, c->type, n);
	in = kunit_kcalloc(test, n + 1, sizeof(*in), GFP_KERNEL);
	out = kunit_kcalloc(test, n + 1, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);

	for (lap = 0; lap < ARRAY_SIZE(laps); lap++) {
		for (pos = 0; pos < n; pos++) {
			u32 start = laps[lap] + pos;
			u64 seq = (u64)lap << 32 | pos << 8;
			u32 got, first;

			netgpu_queue_set_index(q, start);
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_free(q), n);
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_avail(q), 0U);

			entries_make(c->type, seq, in, n + 1);
			got = qt_reserve(q, c->type, in, n + 1);
			KUNIT_ASSERT_EQ_MSG(test, got, n, "start %#x", start);
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_free(q), 0U);
			netgpu_queue_prod_submit(q);
			KUNIT_ASSERT_EQ(test, user_prod(q), start + n);

			/* Entry i sits in slot (start + i) & mask. */
			for (i = 0; i < n; i++) {
				void *slot = qt_slot(q, c->type, start + i);

				KUNIT_ASSERT_TRUE_MSG(test,
						      entry_ok(c->type, seq + i,
							       slot, 0),
						      "start %#x entry %u",
						      start, i);
			}

			got = qt_peek(q, c->type, out, n + 1);
			KUNIT_ASSERT_EQ(test, got, n);
			KUNIT_ASSERT_EQ_MSG(test,
					    entries_check(c->type, seq, out, n), n,
					    "start %#x", start);

			first = n / 2 ? n / 2 : 1;
			netgpu_queue_cons_release(q, first);
			KUNIT_ASSERT_EQ(test, user_cons(q), start + first);
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_free(q), first);
			netgpu_queue_cons_release(q, n - first);
			KUNIT_ASSERT_EQ(test, user_cons(q), start + n);
			KUNIT_ASSERT_TRUE(test, netgpu_queue_empty(q));
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_free(q), n);
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_avail(q), 0U);
		}
	}
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, 0ULL);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, 0ULL);
}

/* --- full and empty edges, single operations --- */

static void netgpu_queue_test_full_empty(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_COMPLETION;
	struct netgpu_queue *q = qt_create(test, t, 8);
	u64 in[8], out[9], e;
	u32 i;

	/* Empty: nothing to peek, everything free. */
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 0U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 9), 0U);
	KUNIT_EXPECT_FALSE(test, netgpu_queue_cons_peek_addr(q, &e));
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 8U);
	KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));

	/* Fill with single reserves; the ninth is refused. */
	for (i = 0; i < 8; i++) {
		entry_make(t, i, &e, 0);
		KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr(q, e), 0);
	}
	entry_make(t, 8, &e, 0);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr(q, e), -ENOSPC);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr_batch(q, &e, 1), 0U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 0U);

	/* Reserved is not submitted: the consumer sees nothing yet. */
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 0U);
	KUNIT_EXPECT_FALSE(test, netgpu_queue_cons_peek_addr(q, &e));
	KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, user_prod(q), 0U);

	netgpu_queue_prod_submit(q);
	KUNIT_EXPECT_EQ(test, user_prod(q), 8U);
	KUNIT_EXPECT_FALSE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 8U);

	/* Peeking twice reads the same entry; release moves on. */
	KUNIT_EXPECT_TRUE(test, netgpu_queue_cons_peek_addr(q, &e));
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 0, &e, 0));
	KUNIT_EXPECT_TRUE(test, netgpu_queue_cons_peek_addr(q, &e));
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 0, &e, 0));
	netgpu_queue_cons_release(q, 1);
	KUNIT_EXPECT_EQ(test, user_cons(q), 1U);

	/* One slot back; a batch of 5 gets exactly one in. */
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 1U);
	entries_make(t, 8, in, 5);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr_batch(q, in, 5), 1U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr_batch(q, in + 1, 4),
			0U);
	netgpu_queue_prod_submit(q);
	KUNIT_EXPECT_EQ(test, user_prod(q), 9U);

	/* Full again, across the slot boundary: entries 1..8. */
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 8U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 9), 8U);
	KUNIT_EXPECT_EQ(test, entries_check(t, 1, out, 8), 8U);
	netgpu_queue_cons_release(q, 8);

	KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 0U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 8U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 9), 0U);

	/* A submit with nothing reserved stores nothing. */
	user_set_prod(q, 42);
	netgpu_queue_prod_submit(q);
	KUNIT_EXPECT_EQ(test, user_prod(q), 42U);

	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, 0ULL);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, 0ULL);
}

/* --- a caller's misuse: a warning and a harmless result --- */

enum qt_misuse {
	QT_RESERVE_ADDR_ON_RX,
	QT_RESERVE_DESC_ON_FILL,
	QT_PEEK_ADDR_ON_RX,
	QT_PEEK_DESC_ON_COMPLETION,
	QT_RELEASE_PAST_PEEK,
};

static const enum qt_misuse qt_misuses[] = {
	QT_RESERVE_ADDR_ON_RX, QT_RESERVE_DESC_ON_FILL, QT_PEEK_ADDR_ON_RX,
	QT_PEEK_DESC_ON_COMPLETION, QT_RELEASE_PAST_PEEK,
};

static const char *const qt_misuse_name[] = {
	[QT_RESERVE_ADDR_ON_RX] = "reserve_addr on rx",
	[QT_RESERVE_DESC_ON_FILL] = "reserve_desc on fill",
	[QT_PEEK_ADDR_ON_RX] = "peek_addr on rx",
	[QT_PEEK_DESC_ON_COMPLETION] = "peek_desc on completion",
	[QT_RELEASE_PAST_PEEK] = "release past the peek",
};

static void qt_misuse_desc(const enum qt_misuse *m, char *desc)
{
	strscpy(desc, qt_misuse_name[*m], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qt_misuse, qt_misuses, qt_misuse_desc);

/*
 * An entry helper of the wrong ring type (a kernel caller's bug) warns
 * once and moves nothing: no entry written or read, no index changed;
 * releasing more than the last peek returned warns and hands back only
 * what was there.  Each misuse is its own case: one warning site each.
 */
static void netgpu_queue_test_misuse(struct kunit *test)
{
	const enum qt_misuse *m = test->param_value;
	enum netgpu_queue_type t = *m == QT_RESERVE_DESC_ON_FILL ?
				   NETGPU_QUEUE_FILL :
				   *m == QT_PEEK_DESC_ON_COMPLETION ?
				   NETGPU_QUEUE_COMPLETION : NETGPU_QUEUE_RX;
	struct netgpu_queue *q = qt_create(test, t, 8);
	union qt_entry e[4] = {};
	u32 i;

	/* Three entries for the consumer, the real way. */
	entries_make(t, 0, e, 3);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, t == NETGPU_QUEUE_RX ?
				netgpu_queue_prod_reserve_desc_batch(q, &e[i].desc, 1) :
				netgpu_queue_prod_reserve_addr_batch(q, &e[i].addr, 1),
				1U);
	netgpu_queue_prod_submit(q);
	KUNIT_ASSERT_EQ(test, user_prod(q), 3U);
	memset(e, 0, sizeof(e));

	netgpu_splat_expect(test, NETGPU_SPLAT_WARNING);
	switch (*m) {
	case QT_RESERVE_ADDR_ON_RX:
		KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_addr_batch(q, &e[0].addr, 1),
				0U);
		break;
	case QT_RESERVE_DESC_ON_FILL:
		KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_desc_batch(q, &e[0].desc, 1),
				0U);
		break;
	case QT_PEEK_ADDR_ON_RX:
		KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, &e[0].addr, 4),
				0U);
		break;
	case QT_PEEK_DESC_ON_COMPLETION:
		KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_desc_batch(q, &e[0].desc, 4),
				0U);
		break;
	case QT_RELEASE_PAST_PEEK:
		KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_desc_batch(q, &e[0].desc, 4),
				3U);
		netgpu_queue_cons_release(q, 5);
		KUNIT_EXPECT_EQ(test, user_cons(q), 3U);
		KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));
		return;
	}
	/* Nothing read into the caller's buffer, no index moved. */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(e, 0, sizeof(e)));
	netgpu_queue_prod_submit(q);
	KUNIT_EXPECT_EQ(test, user_prod(q), 3U);
	KUNIT_EXPECT_EQ(test, user_cons(q), 0U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 3U);
}

/*
 * Random batch sizes at both ends, single-threaded, against a model of
 * the ring: every count and every entry is predicted.
 */
static void netgpu_queue_test_batch_model(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_RX;
	const u32 n = 16, seed = 0x5eed1;
	struct netgpu_queue *q = qt_create(test, t, n);
	struct netgpu_rx_desc in[20], out[20];
	u64 produced = 0, submitted = 0, consumed = 0;
	struct rnd_state rnd;
	unsigned int iter;

	prandom_seed_state(&rnd, seed);
	for (iter = 0; iter < 20000; iter++) {
		u32 r = prandom_u32_state(&rnd);
		u32 want = (r >> 8) % (ARRAY_SIZE(in) + 1), got, expect;

		switch (r % 4) {
		case 0:	/* reserve, maybe more than fits */
			expect = min_t(u32, want, n - (produced - consumed));
			entries_make(t, produced, in, want);
			got = netgpu_queue_prod_reserve_desc_batch(q, in, want);
			KUNIT_ASSERT_EQ_MSG(test, got, expect, "iter %u", iter);
			produced += got;
			break;
		case 1:
			netgpu_queue_prod_submit(q);
			submitted = produced;
			KUNIT_ASSERT_EQ(test, user_prod(q), (u32)submitted);
			break;
		case 2:	/* peek, maybe more than there is, release some */
			expect = min_t(u32, want, submitted - consumed);
			got = netgpu_queue_cons_peek_desc_batch(q, out, want);
			KUNIT_ASSERT_EQ_MSG(test, got, expect, "iter %u", iter);
			KUNIT_ASSERT_EQ_MSG(test,
					    entries_check(t, consumed, out, got),
					    got, "iter %u", iter);
			got = r & 0x80000000 ? got : got / 2;
			netgpu_queue_cons_release(q, got);
			consumed += got;
			KUNIT_ASSERT_EQ(test, user_cons(q), (u32)consumed);
			break;
		default:
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_avail(q),
					(u32)(submitted - consumed));
			KUNIT_ASSERT_EQ(test, netgpu_queue_nb_free(q),
					(u32)(n - (produced - consumed)));
			KUNIT_ASSERT_EQ(test, netgpu_queue_empty(q),
					submitted == consumed);
			break;
		}
	}
	kunit_info(test, "seed %#x: %llu entries through a %u-entry ring",
		   seed, consumed, n);
	KUNIT_EXPECT_GT(test, consumed, 10000ULL);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, 0ULL);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, 0ULL);
}

/* --- hostile indices --- */

/* The kernel consumes; user space writes ->prod (and scribbles ->cons). */
static void netgpu_queue_test_hostile_prod(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_FILL;
	struct netgpu_queue *q = qt_create(test, t, 8);
	u64 out[16], bad = 0;
	u32 i, got;

	/* User space produces entries 0..4; the kernel consumes them. */
	for (i = 0; i < 5; i++)
		entry_make(t, i, qt_slot(q, t, i), 0);
	user_set_prod(q, 5);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 16), 5U);
	KUNIT_EXPECT_EQ(test, entries_check(t, 0, out, 5), 5U);
	netgpu_queue_cons_release(q, 5);
	KUNIT_ASSERT_EQ(test, user_cons(q), 5U);

	/* prod behind cons: the ring looks empty. */
	user_set_prod(q, 3);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 0U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 16), 0U);
	bad += 2;
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, bad);
	KUNIT_EXPECT_EQ(test, user_cons(q), 5U);

	/* prod - cons > entries: ignored too. */
	user_set_prod(q, 5 + 9);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 0U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, ++bad);

	/* prod - cons == entries is a full ring, not an error. */
	for (i = 5; i < 13; i++)
		entry_make(t, i, qt_slot(q, t, i), 0);
	user_set_prod(q, 13);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 8U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, bad);

	/* The kernel never reads its own index back. */
	user_set_cons(q, 0xdeadbeef);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 2), 2U);
	KUNIT_EXPECT_EQ(test, entries_check(t, 5, out, 2), 2U);
	netgpu_queue_cons_release(q, 2);
	KUNIT_EXPECT_EQ(test, user_cons(q), 7U);

	/* prod going back behind entries already seen: nothing lost. */
	user_set_prod(q, 10);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_avail(q), 6U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, ++bad);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 16), 6U);
	KUNIT_EXPECT_EQ(test, entries_check(t, 7, out, 6), 6U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, ++bad);
	netgpu_queue_cons_release(q, 6);
	KUNIT_EXPECT_EQ(test, user_cons(q), 13U);

	/* Every impossible value from here (cons == 13). */
	{
		static const u32 impossible[] = {
			12, 0, 5, 13 + 9, 13 + 100, 0x80000000, 0x7fffffff,
			U32_MAX, 13 + 0x80000000,
		};

		for (i = 0; i < ARRAY_SIZE(impossible); i++) {
			user_set_prod(q, impossible[i]);
			KUNIT_EXPECT_EQ_MSG(test, netgpu_queue_nb_avail(q), 0U,
					    "prod %#x", impossible[i]);
			got = netgpu_queue_cons_peek_addr_batch(q, out, 16);
			KUNIT_EXPECT_EQ_MSG(test, got, 0U, "prod %#x",
					    impossible[i]);
			bad += 2;
		}
		KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, bad);
	}

	/* A sane value again: the queue recovers. */
	entry_make(t, 13, qt_slot(q, t, 13), 0);
	user_set_prod(q, 14);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 16), 1U);
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 13, out, 0));
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, bad);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, 0ULL);
}

/* The kernel produces; user space writes ->cons (and scribbles ->prod). */
static void netgpu_queue_test_hostile_cons(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_RX;
	struct netgpu_queue *q = qt_create(test, t, 8);
	struct netgpu_rx_desc in[8];
	u64 bad = 0;

	entries_make(t, 0, in, 8);
	KUNIT_ASSERT_EQ(test, netgpu_queue_prod_reserve_desc_batch(q, in, 8), 8U);
	netgpu_queue_prod_submit(q);

	/* cons past what was submitted: the ring stays full. */
	user_set_cons(q, 9);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 0U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_desc_batch(q, in, 1), 0U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);
	KUNIT_EXPECT_FALSE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);

	/* cons behind 0 (wrapped): ignored. */
	user_set_cons(q, U32_MAX);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 0U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);

	/* A real release of 3. */
	user_set_cons(q, 3);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 3U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, bad);

	/* cons going back: the 3 slots stay free, nothing more. */
	user_set_cons(q, 2);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 3U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);

	/* Reserved but not submitted cannot be consumed yet. */
	entries_make(t, 8, in, 3);
	KUNIT_ASSERT_EQ(test, netgpu_queue_prod_reserve_desc_batch(q, in, 3), 3U);
	user_set_cons(q, 10);
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 0U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, ++bad);

	/* The kernel never reads ->prod back: submit rewrites it. */
	user_set_prod(q, 0xdeadbeef);
	netgpu_queue_prod_submit(q);
	KUNIT_EXPECT_EQ(test, user_prod(q), 11U);
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 8, qt_slot(q, t, 8), 0));
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 10, qt_slot(q, t, 10), 0));
	/* Slots user space has not released still hold their entries. */
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 3, qt_slot(q, t, 3), 0));
	KUNIT_EXPECT_TRUE(test, entry_ok(t, 7, qt_slot(q, t, 7), 0));

	/* Everything consumed. */
	user_set_cons(q, 11);
	KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, netgpu_queue_nb_free(q), 8U);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, bad);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, 0ULL);
}

/*
 * The fast paths work against the cached indices: while the cached copy
 * covers a call, the shared index is not read at all, so a bogus value
 * there goes unseen (and uncounted) until a call needs more.
 */
static void netgpu_queue_test_cached_indices(struct kunit *test)
{
	struct netgpu_queue *fq = qt_create(test, NETGPU_QUEUE_FILL, 8);
	struct netgpu_queue *rq = qt_create(test, NETGPU_QUEUE_RX, 8);
	struct netgpu_rx_desc in[8];
	u64 out[8];
	u32 i;

	/* Consumer: one refresh sees all 8, the next 4 come from the cache. */
	for (i = 0; i < 8; i++)
		entry_make(NETGPU_QUEUE_FILL, i, qt_slot(fq, NETGPU_QUEUE_FILL, i),
			   0);
	user_set_prod(fq, 8);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(fq, out, 4), 4U);
	netgpu_queue_cons_release(fq, 4);
	user_set_prod(fq, 0xdeadbeef);
	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(fq, out, 4), 4U);
	KUNIT_EXPECT_EQ(test, entries_check(NETGPU_QUEUE_FILL, 4, out, 4), 4U);
	KUNIT_EXPECT_EQ(test, qt_stats(fq).bad_prod, 0ULL);
	/* Asking for more than the cache covers reads ->prod, and refuses it. */
	KUNIT_EXPECT_EQ(test, netgpu_queue_cons_peek_addr_batch(fq, out, 5), 4U);
	KUNIT_EXPECT_EQ(test, qt_stats(fq).bad_prod, 1ULL);

	/* Producer: 8 free in the cache; ->cons is read only when short. */
	entries_make(NETGPU_QUEUE_RX, 0, in, 8);
	user_set_cons(rq, 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_desc_batch(rq, in, 4),
			4U);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_desc_batch(rq, in + 4,
								   4), 4U);
	KUNIT_EXPECT_EQ(test, qt_stats(rq).bad_cons, 0ULL);
	KUNIT_EXPECT_EQ(test, netgpu_queue_prod_reserve_desc(rq, in), -ENOSPC);
	KUNIT_EXPECT_EQ(test, qt_stats(rq).bad_cons, 1ULL);
	netgpu_queue_prod_submit(rq);
	KUNIT_EXPECT_EQ(test, user_prod(rq), 8U);
	KUNIT_EXPECT_TRUE(test, entry_ok(NETGPU_QUEUE_RX, 7,
					 qt_slot(rq, NETGPU_QUEUE_RX, 7), 0));
}

/*
 * Kernel at both ends, user space writing random values into both indices
 * in between: counts stay within the ring, and nothing outside the entries
 * (header padding, the rest of the last page) is ever written.
 */
static void netgpu_queue_test_hostile_fuzz(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_FILL;
	const u32 n = 4, seed = 0xf022;
	struct netgpu_queue *q = qt_create(test, t, n);
	struct netgpu_ring *ring = netgpu_queue_ring(q);
	size_t used = sizeof(*ring) + n * qt_entry_size(t);
	struct netgpu_queue_stats st;
	struct rnd_state rnd;
	unsigned int iter;
	u64 *in, *out;

	/* Off the stack: 1 KiB, over FRAME_WARN on 32-bit. */
	in = kunit_kcalloc(test, QT_BATCH, sizeof(*in), GFP_KERNEL);
	out = kunit_kcalloc(test, QT_BATCH, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	prandom_seed_state(&rnd, seed);
	entries_make(t, 0, in, QT_BATCH);
	for (iter = 0; iter < 50000; iter++) {
		u32 r = prandom_u32_state(&rnd), v = prandom_u32_state(&rnd);
		u32 want = (r >> 4) % (QT_BATCH + 1), got;

		switch (r % 8) {
		case 0:	/* anything */
			user_set_prod(q, v);
			break;
		case 1:	/* anything */
			user_set_cons(q, v);
			break;
		case 2:	/* near the kernel's own index */
			user_set_prod(q, user_cons(q) + (v % 32) - 16);
			break;
		case 3:
			user_set_cons(q, user_prod(q) + (v % 32) - 16);
			break;
		case 4:
			got = netgpu_queue_prod_reserve_addr_batch(q, in, want);
			KUNIT_ASSERT_LE(test, got, min(want, n));
			netgpu_queue_prod_submit(q);
			break;
		case 5:
			got = netgpu_queue_cons_peek_addr_batch(q, out, want);
			KUNIT_ASSERT_LE(test, got, min(want, n));
			netgpu_queue_cons_release(q, v % (got + 1));
			break;
		case 6:
			KUNIT_ASSERT_LE(test, netgpu_queue_nb_avail(q), n);
			break;
		default:
			KUNIT_ASSERT_LE(test, netgpu_queue_nb_free(q), n);
			break;
		}
	}

	KUNIT_EXPECT_NULL(test, memchr_inv(ring->pad1, 0, sizeof(ring->pad1)));
	KUNIT_EXPECT_NULL(test, memchr_inv(ring->pad2, 0, sizeof(ring->pad2)));
	KUNIT_EXPECT_EQ(test, ring->flags, 0U);
	KUNIT_EXPECT_NULL(test, memchr_inv(ring->pad3, 0, sizeof(ring->pad3)));
	KUNIT_ASSERT_LT(test, used, netgpu_queue_ring_size(q));
	KUNIT_EXPECT_NULL(test, memchr_inv((u8 *)ring + used, 0,
					   netgpu_queue_ring_size(q) - used));

	netgpu_queue_get_stats(q, &st);
	kunit_info(test, "seed %#x: bad_prod %llu bad_cons %llu", seed,
		   st.bad_prod, st.bad_cons);
	KUNIT_EXPECT_GT(test, st.bad_prod, 0ULL);
	KUNIT_EXPECT_GT(test, st.bad_cons, 0ULL);
}

/* --- two-thread stress --- */

#define QT_STRESS_ENTRIES	BIT(20)
#define QT_STRESS_RING		64

struct qt_stress {
	struct netgpu_queue *q;
	enum netgpu_queue_type type;
	u32 seed;
	bool stop;
	/* Either thread waits here for the other to submit or release. */
	wait_queue_head_t wq;
	struct completion prod_done;
	struct completion cons_done;
	/* written by the consumer thread, read after cons_done */
	u64 received;
	u64 bad_seq;
	bool mismatch;
	u64 empty_waits;
	/* written by the producer thread, read after prod_done */
	u64 sent;
	u64 full_waits;
	/* each thread's batch: off the stack (1 KiB, FRAME_WARN on 32-bit) */
	union qt_entry prod_buf[QT_BATCH];
	union qt_entry cons_buf[QT_BATCH];
};

/*
 * After a submit or a release: wake the other thread if it sleeps.  The
 * barrier in wq_has_sleeper() orders our index store before the check,
 * against the one in prepare_to_wait() before the sleeper's own check.
 */
static void qt_stress_kick(struct qt_stress *s)
{
	if (wq_has_sleeper(&s->wq))
		wake_up(&s->wq);
}

/*
 * Spin a little before sleeping until the other thread kicks.  Sleeping
 * lets a round-robin TCG run the other vCPU instead of this spinning one;
 * the sleeps time out as a backstop only.  Returns false when it is time
 * to sleep.
 */
static bool qt_stress_spin(unsigned int *spins)
{
	if (++*spins < 64) {
		cpu_relax();
		return true;
	}
	*spins = 0;
	return false;
}

static int qt_stress_producer(void *arg)
{
	struct qt_stress *s = arg;
	union qt_entry *buf = s->prod_buf;
	unsigned int spins = 0;
	struct rnd_state rnd;

	prandom_seed_state(&rnd, s->seed);
	while (s->sent < QT_STRESS_ENTRIES && !READ_ONCE(s->stop)) {
		u32 r = prandom_u32_state(&rnd);
		u32 want = min_t(u64, r % QT_BATCH + 1,
				 QT_STRESS_ENTRIES - s->sent);
		u32 got;

		entries_make(s->type, s->sent, buf, want);
		got = qt_reserve(s->q, s->type, buf, want);
		s->sent += got;
		/* Hold some batches back, but never when the ring is full. */
		if (got < want || (r & 0x300)) {
			netgpu_queue_prod_submit(s->q);
			qt_stress_kick(s);
		}
		if (got) {
			spins = 0;
		} else if (!qt_stress_spin(&spins)) {
			s->full_waits++;
			wait_event_timeout(s->wq, netgpu_queue_nb_free(s->q) ||
					   READ_ONCE(s->stop), HZ);
		}
	}
	netgpu_queue_prod_submit(s->q);
	qt_stress_kick(s);
	kthread_complete_and_exit(&s->prod_done, 0);
}

static int qt_stress_consumer(void *arg)
{
	struct qt_stress *s = arg;
	union qt_entry *buf = s->cons_buf;
	unsigned int spins = 0;
	struct rnd_state rnd;

	prandom_seed_state(&rnd, ~s->seed);
	while (s->received < QT_STRESS_ENTRIES && !READ_ONCE(s->stop)) {
		u32 r = prandom_u32_state(&rnd);
		u32 got, ok, rel;

		got = qt_peek(s->q, s->type, buf, r % QT_BATCH + 1);
		if (!got) {
			if (qt_stress_spin(&spins))
				continue;
			s->empty_waits++;
			wait_event_timeout(s->wq, netgpu_queue_nb_avail(s->q) ||
					   READ_ONCE(s->stop), HZ);
			continue;
		}
		spins = 0;
		ok = entries_check(s->type, s->received, buf, got);
		if (ok != got) {
			s->bad_seq = s->received + ok;
			s->mismatch = true;
			WRITE_ONCE(s->stop, true);
			break;
		}
		/* Sometimes hand back only part of what was read. */
		rel = (r & 0xc00) ? got : (r >> 16) % (got + 1);
		netgpu_queue_cons_release(s->q, rel);
		s->received += rel;
		if (rel)
			qt_stress_kick(s);
	}
	kthread_complete_and_exit(&s->cons_done, 0);
}

static const enum netgpu_queue_type qt_stress_types[] = {
	NETGPU_QUEUE_FILL, NETGPU_QUEUE_RX,
};

static void qt_stress_desc(const enum netgpu_queue_type *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", qt_type_name[*t]);
}

KUNIT_ARRAY_PARAM(qt_stress, qt_stress_types, qt_stress_desc);

/*
 * A kernel producer and a kernel consumer on two threads move 2^20
 * entries through a 64-entry ring with random batch sizes; the consumer
 * checks every entry against its sequence number.
 */
static void netgpu_queue_test_stress(struct kunit *test)
{
	const enum netgpu_queue_type *t = test->param_value;
	struct task_struct *prod, *cons;
	struct netgpu_queue *q;
	struct qt_stress *s;
	unsigned long cons_done = 0;
	unsigned int secs;
	bool timed_out;
	u64 start, ns;

	/*
	 * Not test-managed: should a thread fail to stop, its state is
	 * leaked rather than freed under it.
	 */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	q = netgpu_queue_create(*t, QT_STRESS_RING);
	if (IS_ERR(q)) {
		kfree(s);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	}
	s->q = q;
	s->type = *t;
	s->seed = 0x57e55 + *t;
	init_waitqueue_head(&s->wq);
	init_completion(&s->prod_done);
	init_completion(&s->cons_done);

	start = ktime_get_ns();
	cons = kthread_run(qt_stress_consumer, s, "netgpu_qt_cons");
	if (IS_ERR(cons)) {
		netgpu_queue_destroy(q);
		kfree(s);
		KUNIT_ASSERT_FALSE(test, IS_ERR(cons));
	}
	prod = kthread_run(qt_stress_producer, s, "netgpu_qt_prod");
	if (IS_ERR(prod))
		complete(&s->prod_done);

	/* Each completion is consumed by the one wait that sees it. */
	for (secs = 0; secs < 60; secs += 10) {
		cons_done = wait_for_completion_timeout(&s->cons_done, 10 * HZ);
		if (cons_done)
			break;
		kunit_info(test, "%us: sent %llu received %llu", secs + 10,
			   READ_ONCE(s->sent), READ_ONCE(s->received));
	}
	timed_out = !cons_done;
	WRITE_ONCE(s->stop, true);
	wake_up(&s->wq);
	if (!cons_done)
		cons_done = wait_for_completion_timeout(&s->cons_done, 10 * HZ);
	if (!cons_done ||
	    !wait_for_completion_timeout(&s->prod_done, 10 * HZ)) {
		KUNIT_FAIL(test, "stress threads do not stop; leaking them");
		return;
	}
	ns = ktime_get_ns() - start;

	kunit_info(test, "seed %#x: %llu of %llu entries sent, %llu received in %llu ms; slept %llu times on a full ring, %llu on an empty one",
		   s->seed, s->sent, (u64)QT_STRESS_ENTRIES, s->received,
		   div_u64(ns, NSEC_PER_MSEC), s->full_waits, s->empty_waits);
	KUNIT_EXPECT_FALSE(test, IS_ERR(prod));
	KUNIT_EXPECT_FALSE(test, timed_out);
	KUNIT_EXPECT_FALSE_MSG(test, s->mismatch, "wrong entry at seq %llu",
			       s->bad_seq);
	KUNIT_EXPECT_EQ(test, s->received, (u64)QT_STRESS_ENTRIES);
	KUNIT_EXPECT_EQ(test, s->sent, (u64)QT_STRESS_ENTRIES);
	KUNIT_EXPECT_TRUE(test, netgpu_queue_empty(q));
	KUNIT_EXPECT_EQ(test, user_prod(q), QT_STRESS_ENTRIES);
	KUNIT_EXPECT_EQ(test, user_cons(q), QT_STRESS_ENTRIES);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_prod, 0ULL);
	KUNIT_EXPECT_EQ(test, qt_stats(q).bad_cons, 0ULL);
	netgpu_queue_destroy(q);
	kfree(s);
}

/* --- mmap --- */

static void netgpu_queue_test_mmap_check(struct kunit *test)
{
	enum netgpu_queue_type t, other;

	for (t = 0; t < NETGPU_QUEUE_NR_TYPES; t++) {
		/* 512 rx entries take two pages and a bit: three pages. */
		struct netgpu_queue *q = qt_create(test, t, 512);
		unsigned long pgoff = qt_mmap_offset(t) >> PAGE_SHIFT;
		unsigned long size = netgpu_queue_ring_size(q);

		KUNIT_EXPECT_EQ(test, size,
				PAGE_ALIGN(sizeof(struct netgpu_ring) +
					   512 * qt_entry_size(t)));
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff, size), 0);
		KUNIT_EXPECT_EQ(test,
				netgpu_queue_mmap_check(q, pgoff, PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff, 1), 0);

		/* Larger than the ring. */
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff, size + 1),
				-EINVAL);
		KUNIT_EXPECT_EQ(test,
				netgpu_queue_mmap_check(q, pgoff,
							size + PAGE_SIZE),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff, ULONG_MAX),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff, 0),
				-EINVAL);

		/* Anywhere but its own offset, the other rings' included. */
		for (other = 0; other < NETGPU_QUEUE_NR_TYPES; other++) {
			unsigned long o = qt_mmap_offset(other) >> PAGE_SHIFT;

			if (other != t)
				KUNIT_EXPECT_EQ(test,
						netgpu_queue_mmap_check(q, o,
									PAGE_SIZE),
						-EINVAL);
		}
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff + 1,
							      PAGE_SIZE), -EINVAL);
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, pgoff - 1,
							      PAGE_SIZE), -EINVAL);
		KUNIT_EXPECT_EQ(test, netgpu_queue_mmap_check(q, ULONG_MAX,
							      PAGE_SIZE), -EINVAL);
	}
}

static int qt_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	return netgpu_queue_mmap(file->private_data, vma);
}

static const struct file_operations qt_fops = {
	.owner = THIS_MODULE,
	.mmap = qt_file_mmap,
};

/*
 * Map a ring into this test's own mm through a file whose ->mmap() is
 * netgpu_queue_mmap(), produce into it with user copies and consume with
 * the kernel API; then have the refused mappings refused.
 */
static void netgpu_queue_test_mmap_real(struct kunit *test)
{
	const enum netgpu_queue_type t = NETGPU_QUEUE_FILL;
	const unsigned long prot = PROT_READ | PROT_WRITE;
	const u32 n = 1024;	/* header + 8 KiB: three pages */
	struct netgpu_queue *q = qt_create(test, t, n);
	unsigned long off = NETGPU_OFF_FILL_RING;
	size_t size = netgpu_queue_ring_size(q);
	struct vm_area_struct *vma;
	u64 in[8], out[8];
	unsigned long addr;
	struct file *file;
	u32 cons;
	int ret;

	file = anon_inode_getfile("[netgpu_queue_test]", &qt_fops, q, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	ret = kunit_add_action_or_reset(test, fput_wrapper, file);
	KUNIT_ASSERT_EQ(test, ret, 0);

	addr = kunit_vm_mmap(test, file, 0, size, prot, MAP_SHARED, off);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user mm");
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr), "mmap: %ld",
			       (long)addr);

	/* User space writes 8 entries into the last page, then ->prod. */
	netgpu_queue_set_index(q, n - 4);
	entries_make(t, 100, in, 8);
	KUNIT_ASSERT_EQ(test,
			copy_to_user((void __user *)(addr + sizeof(struct netgpu_ring) +
						     (n - 4) * sizeof(u64)),
				     in, 4 * sizeof(u64)), 0UL);
	KUNIT_ASSERT_EQ(test,
			copy_to_user((void __user *)(addr + sizeof(struct netgpu_ring)),
				     in + 4, 4 * sizeof(u64)), 0UL);
	KUNIT_ASSERT_EQ(test, put_user(n + 4, (u32 __user *)addr), 0);

	KUNIT_ASSERT_EQ(test, netgpu_queue_cons_peek_addr_batch(q, out, 8), 8U);
	KUNIT_EXPECT_EQ(test, entries_check(t, 100, out, 8), 8U);
	netgpu_queue_cons_release(q, 8);
	ret = get_user(cons, (u32 __user *)(addr + NETGPU_RING_ALIGN));
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, cons, n + 4);

	/* A mapping of the first page only is fine. */
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, PROT_READ, MAP_SHARED,
			     off);
	KUNIT_EXPECT_FALSE(test, IS_ERR_VALUE(addr));

	/* Larger than the ring, or at another ring's offset: refused. */
	addr = kunit_vm_mmap(test, file, 0, size + PAGE_SIZE, prot, MAP_SHARED,
			     off);
	KUNIT_EXPECT_EQ(test, (long)addr, (long)-EINVAL);
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, prot, MAP_SHARED,
			     NETGPU_OFF_RX_RING);
	KUNIT_EXPECT_EQ(test, (long)addr, (long)-EINVAL);
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, prot, MAP_SHARED,
			     PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, (long)addr, (long)-EINVAL);

	/*
	 * Private: user writes would go to a copy the kernel never reads.
	 * Executable: writable code shared with the kernel.  A shared one
	 * can never become executable (no VM_MAYEXEC for mprotect()).
	 */
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, prot, MAP_PRIVATE, off);
	KUNIT_EXPECT_EQ(test, (long)addr, (long)-EINVAL);
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, prot | PROT_EXEC,
			     MAP_SHARED, off);
	KUNIT_EXPECT_EQ(test, (long)addr, (long)-EPERM);
	addr = kunit_vm_mmap(test, file, 0, PAGE_SIZE, prot, MAP_SHARED, off);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, addr);
	KUNIT_EXPECT_TRUE(test, vma && !(vma->vm_flags & VM_MAYEXEC));
	mmap_read_unlock(current->mm);
}

static struct kunit_case queue_test_cases[] = {
	KUNIT_CASE_PARAM(netgpu_queue_test_geometry, qt_geom_gen_params),
	KUNIT_CASE(netgpu_queue_test_create_invalid),
	KUNIT_CASE(netgpu_queue_test_create_fault),
	KUNIT_CASE_PARAM(netgpu_queue_test_wrap, qt_size_gen_params),
	KUNIT_CASE(netgpu_queue_test_full_empty),
	KUNIT_CASE_PARAM(netgpu_queue_test_misuse, qt_misuse_gen_params),
	KUNIT_CASE(netgpu_queue_test_batch_model),
	KUNIT_CASE(netgpu_queue_test_hostile_prod),
	KUNIT_CASE(netgpu_queue_test_hostile_cons),
	KUNIT_CASE(netgpu_queue_test_hostile_fuzz),
	KUNIT_CASE(netgpu_queue_test_cached_indices),
	KUNIT_CASE_PARAM_ATTR(netgpu_queue_test_stress, qt_stress_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE(netgpu_queue_test_mmap_check),
	KUNIT_CASE(netgpu_queue_test_mmap_real),
	{}
};

static struct kunit_suite queue_test_suite = {
	.name = "netgpu_queue",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.exit = netgpu_splat_exit,
	.test_cases = queue_test_cases,
};

kunit_test_suite(queue_test_suite);

MODULE_DESCRIPTION("KUnit tests for the netgpu shared queue");
MODULE_LICENSE("GPL");
