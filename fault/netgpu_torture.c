// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu torture campaign: the control path (regions registered,
 * attached to contexts, detached, unregistered) and the data path
 * (lock-free address lookups; buffers taken from the cache in NAPI
 * context, handed over through a queue and given back from another
 * thread) run at once from several threads for a bounded time, while
 * regions are revoked under them (their device goes away) and the mock
 * GPU tries to evict their buffers, and each control operation
 * fails one of its allocations with a chosen probability
 * (current->fail_nth).
 *
 * Armed by netgpu_torture.duration_ms=<ms> on the command line (fault/
 * and `make torture-control`); unarmed, the case is skipped.  It prints the seed
 * and parameters it runs with, progress every two seconds, and a report:
 * operations and their results, faults injected, findings.  A finding is
 * a result the contracts do not allow (an errno outside the operation's
 * set, a lookup that disagrees with its region, an allocation on the
 * data path, a buffer lost or duplicated, a mapping or pin left behind);
 * any finding fails the case.  Every thread draws its operations from
 * its own generator seeded from the printed seed, so a campaign repeats
 * the same operation streams; their interleaving is the scheduler's.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "buf.h"
#include "cache.h"
#include "mem_priv.h"
#include "mock_gpu.h"
#include "queue.h"
#include "splat.h"

MODULE_IMPORT_NS(DMA_BUF);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "netgpu_torture."

static unsigned long seed;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "Seed of every operation stream (0: a random one, printed)");

static unsigned int duration_ms;
module_param(duration_ms, uint, 0444);
MODULE_PARM_DESC(duration_ms, "Length of the campaign in ms (0: skip it)");

static unsigned int fail_permille = 100;
module_param(fail_permille, uint, 0444);
MODULE_PARM_DESC(fail_permille, "Control operations run with one allocation failing, per 1000");

static unsigned int control_threads = 2;
module_param(control_threads, uint, 0444);
MODULE_PARM_DESC(control_threads, "Threads registering, attaching, detaching, unregistering");

static unsigned int lookup_threads = 2;
module_param(lookup_threads, uint, 0444);
MODULE_PARM_DESC(lookup_threads, "Threads looking addresses up (data path)");

static unsigned int revoke_ms = 50;
module_param(revoke_ms, uint, 0444);
MODULE_PARM_DESC(revoke_ms, "Mean interval between mock GPU revocations in ms (0: none)");

#define TT_SLOTS	8		/* regions, at fixed addresses */
#define TT_SPAN		SZ_1M		/* address space of a slot */
#define TT_BASE		0x7e0000000000ULL
#define TT_CTXS		3		/* contexts, on two devices */
#define TT_MAX_BUFS	256		/* mock GPU buffers kept at once */
#define TT_CHUNKS	4		/* largest sg table of a buffer */
#define TT_NBUFS	64		/* data path buffers */
#define TT_MAX_THREADS	16
#define TT_FINDINGS_SHOWN 10

enum tt_op {
	TT_ADD, TT_ATTACH, TT_DETACH, TT_GET, TT_UNREGISTER, TT_REVOKED,
	TT_LOOKUP, TT_TRYGET, TT_EXPORTER_REVOKE, TT_RX, TT_COMPLETE,
	TT_NR_OPS
};

static const char * const tt_op_names[TT_NR_OPS] = {
	[TT_ADD] = "add", [TT_ATTACH] = "attach", [TT_DETACH] = "detach",
	[TT_GET] = "get", [TT_UNREGISTER] = "unregister",
	[TT_REVOKED] = "drop-revoked", [TT_LOOKUP] = "lookup",
	[TT_TRYGET] = "tryget", [TT_EXPORTER_REVOKE] = "exporter-revoke",
	[TT_RX] = "rx", [TT_COMPLETE] = "complete",
};

/* Results counted per operation: 0 and the errnos the contracts allow. */
enum tt_res { TT_OK, TT_ENOMEM, TT_ENODEV, TT_EEXIST, TT_ENOENT, TT_EFAULT,
	      TT_OTHER, TT_NR_RES };

static const char * const tt_res_names[TT_NR_RES] = {
	"ok", "ENOMEM", "ENODEV", "EEXIST", "ENOENT", "EFAULT", "other",
};

struct tt_slot {
	struct mutex		lock;	/* buf, r */
	struct mock_gpu_buf	*buf;
	struct netgpu_region	*r;	/* a reference is held */
	u64			addr;
};

struct tt {
	struct kunit		*test;
	struct netgpu_mem	*mem;
	struct netgpu_memctx	ctx[TT_CTXS];
	struct tt_slot		slot[TT_SLOTS];

	struct mutex		bufs_lock;	/* bufs, nr_bufs, retired */
	struct mock_gpu_buf	*bufs[TT_MAX_BUFS];
	unsigned int		nr_bufs;
	unsigned int		retired;	/* given back to make room */

	struct netgpu_cache	*cache;
	struct netgpu_queue	*compq;
	struct netgpu_buf	dbuf[TT_NBUFS];
	unsigned long		owned[BITS_TO_LONGS(TT_NBUFS)];	/* out of the cache */

	atomic64_t		ops[TT_NR_OPS][TT_NR_RES];
	atomic64_t		faults;
	atomic_t		findings;
};

/* ===== Bookkeeping ===== */

static __printf(2, 3) void tt_finding(struct tt *t, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (atomic_inc_return(&t->findings) > TT_FINDINGS_SHOWN)
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	kunit_err(t->test, "torture: finding: %pV", &vaf);
	va_end(args);
}

static enum tt_res tt_res_of(int err)
{
	switch (err) {
	case -ENOMEM: return TT_ENOMEM;
	case -ENODEV: return TT_ENODEV;
	case -EEXIST: return TT_EEXIST;
	case -ENOENT: return TT_ENOENT;
	case -EFAULT: return TT_EFAULT;
	default: return err < 0 ? TT_OTHER : TT_OK;
	}
}

/*
 * Count @err as a result of @op; a finding unless it is 0 or one of the
 * errnos in @allowed (bits of &enum tt_res).
 */
static void tt_count(struct tt *t, enum tt_op op, int err, u32 allowed)
{
	enum tt_res res = tt_res_of(err);

	atomic64_inc(&t->ops[op][res]);
	if (res != TT_OK && !(allowed & BIT(res)))
		tt_finding(t, "%s returned %d", tt_op_names[op], err);
}

/*
 * Arm a fault for the next operation of this thread with probability
 * fail_permille: its n-th allocation fails, n in 1..8.  Return whether
 * one was armed.
 */
static bool tt_arm(struct rnd_state *rnd)
{
	if (prandom_u32_state(rnd) % 1000 >= fail_permille)
		return false;
	current->fail_nth = 1 + prandom_u32_state(rnd) % 8;
	return true;
}

/* Disarm after the operation; count the fault if it was injected. */
static void tt_disarm(struct tt *t, bool armed)
{
	if (!armed)
		return;
	/* fail_nth reaches 0 when the armed allocation fails. */
	if (!READ_ONCE(current->fail_nth))
		atomic64_inc(&t->faults);
	current->fail_nth = 0;
}

/* ===== Control path ===== */

/*
 * A buffer the exporter gave up and nothing maps or attaches any more:
 * its region is gone or dead, so nothing will again.  Bufs lock held.
 */
static int tt_retired_buf(struct tt *t)
{
	struct mock_gpu_buf *buf;
	unsigned int i;

	for (i = 0; i < t->nr_bufs; i++) {
		buf = t->bufs[i];
		if (READ_ONCE(buf->revoked) && !atomic_read(&buf->attachments) &&
		    !atomic_read(&buf->mappings) && !atomic_read(&buf->pins))
			return i;
	}
	return -1;
}

/* A new buffer of random chunks; NULL when no slot for it is free. */
static struct mock_gpu_buf *tt_new_buf(struct tt *t, struct rnd_state *rnd)
{
	unsigned int orders[TT_CHUNKS], n, i;
	struct mock_gpu_buf *buf;
	int old = -1;

	n = 1 + prandom_u32_state(rnd) % TT_CHUNKS;
	for (i = 0; i < n; i++)
		orders[i] = prandom_u32_state(rnd) % 3;

	mutex_lock(&t->bufs_lock);
	if (t->nr_bufs == TT_MAX_BUFS) {
		/* Give a retired buffer back to make room. */
		old = tt_retired_buf(t);
		if (old < 0) {
			mutex_unlock(&t->bufs_lock);
			return NULL;
		}
	}
	buf = mock_gpu_buf_create(t->test, orders, n);
	if (IS_ERR(buf)) {
		buf = NULL;
	} else if (old < 0) {
		t->bufs[t->nr_bufs++] = buf;
	} else {
		mock_gpu_buf_put(t->test, t->bufs[old]);
		t->bufs[old] = buf;
		t->retired++;
	}
	mutex_unlock(&t->bufs_lock);
	return buf;
}

/* Register the slot's buffer as a region; the slot lock is held. */
static void tt_add(struct tt *t, struct tt_slot *s, struct rnd_state *rnd)
{
	struct netgpu_region *r;
	bool armed;
	int id;

	armed = tt_arm(rnd);
	id = netgpu_dmabuf_add_region(t->mem, s->buf->dmabuf, s->addr);
	tt_disarm(t, armed);
	/* Adding allocates and can fail; nothing else is allowed. */
	tt_count(t, TT_ADD, id, BIT(TT_ENOMEM));
	if (id <= 0)
		return;

	r = netgpu_mem_get_region(t->mem, id);
	/* -ENOENT: revoked since, and dropped by the area. */
	tt_count(t, TT_GET, PTR_ERR_OR_ZERO(r), BIT(TT_ENOENT));
	if (IS_ERR(r))
		return;
	if (r->start != s->addr || r->len != s->buf->size)
		tt_finding(t, "region %u at %#llx+%llu, registered %#llx+%zu",
			   id, r->start, r->len, s->addr, s->buf->size);
	s->r = r;
}

static void tt_control_op(struct tt *t, struct tt_slot *s,
			  struct rnd_state *rnd)
{
	struct netgpu_memctx *mc = &t->ctx[prandom_u32_state(rnd) % TT_CTXS];
	struct netgpu_region *r = s->r, *g;
	u32 op = prandom_u32_state(rnd) % 16;
	bool armed;
	int err;

	if (!r) {
		tt_add(t, s, rnd);
		return;
	}
	if (READ_ONCE(r->revoked)) {
		/* Revoked (its device went): wait for the detach, then drop. */
		netgpu_region_flush_revoke(r);
		err = netgpu_memctx_detach(mc, r);
		tt_count(t, TT_REVOKED, err, BIT(TT_ENOENT));
		if (!err)
			tt_finding(t, "revoked region %u still attached", r->id);
		netgpu_region_put(r);
		s->r = NULL;
		return;
	}

	if (op < 7) {
		armed = tt_arm(rnd);
		err = netgpu_memctx_attach(mc, r);
		tt_disarm(t, armed);
		/* -ENODEV: revoked, or the exporter refuses to map it. */
		tt_count(t, TT_ATTACH, err,
			 BIT(TT_ENOMEM) | BIT(TT_EEXIST) | BIT(TT_ENODEV));
	} else if (op < 13) {
		err = netgpu_memctx_detach(mc, r);
		tt_count(t, TT_DETACH, err, BIT(TT_ENOENT));
	} else if (op < 15) {
		g = netgpu_mem_get_region(t->mem, r->id);
		tt_count(t, TT_GET, PTR_ERR_OR_ZERO(g), BIT(TT_ENOENT));
		if (!IS_ERR(g)) {
			if (g != r)
				tt_finding(t, "id %u names another region",
					   r->id);
			netgpu_region_put(g);
		}
	} else {
		/* The user unregisters it: detached everywhere, unmapped. */
		netgpu_region_revoke(r);
		tt_count(t, TT_UNREGISTER, 0, 0);
		netgpu_region_put(r);
		s->r = NULL;
	}
}

/* ===== Threads ===== */

struct tt_thread {
	struct tt		*t;
	struct task_struct	*task;
	struct rnd_state	rnd;
};

static int tt_control_thread(void *data)
{
	struct tt_thread *th = data;
	struct tt *t = th->t;
	struct tt_slot *s;

	while (!kthread_should_stop()) {
		s = &t->slot[prandom_u32_state(&th->rnd) % TT_SLOTS];
		mutex_lock(&s->lock);
		tt_control_op(t, s, &th->rnd);
		mutex_unlock(&s->lock);
		cond_resched();
	}
	return 0;
}

/* Check a successful lookup of @addr in slot @s against its region. */
static void tt_check_loc(struct tt *t, u64 slot_addr, u64 addr,
			 const struct netgpu_mem_loc *loc)
{
	const struct netgpu_region *r = loc->r;

	if (r->start != slot_addr || addr < r->start ||
	    addr - r->start >= r->len || loc->off != addr - r->start ||
	    !loc->len || loc->len > r->len - loc->off)
		tt_finding(t, "lookup of %#llx: region %#llx+%llu, off %llu, len %llu",
			   addr, r->start, r->len, loc->off, loc->len);
}

/* The data path allocates nothing: an armed first allocation stays armed. */
static void tt_data_armed(struct tt *t, const char *what)
{
	if (current->fail_nth != 1)
		tt_finding(t, "%s allocated memory", what);
	current->fail_nth = 0;
}

static int tt_lookup_thread(void *data)
{
	struct tt_thread *th = data;
	struct tt *t = th->t;
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	struct netgpu_region *r;
	u32 slot, x;
	u64 addr;
	int err;

	while (!kthread_should_stop()) {
		x = prandom_u32_state(&th->rnd);
		mc = &t->ctx[x % TT_CTXS];
		slot = (x / TT_CTXS) % TT_SLOTS;
		/* Up to a quarter beyond the largest buffer: misses too. */
		addr = t->slot[slot].addr + prandom_u32_state(&th->rnd) %
		       (TT_CHUNKS * (PAGE_SIZE << 2) * 5 / 4);
		r = NULL;

		current->fail_nth = 1;
		rcu_read_lock();
		err = netgpu_memctx_lookup(mc, addr, &loc);
		if (!err) {
			tt_check_loc(t, t->slot[slot].addr, addr, &loc);
			if (!(x & (3 << 24)) && netgpu_region_tryget(loc.r))
				r = loc.r;
		}
		rcu_read_unlock();
		tt_data_armed(t, "lookup");
		tt_count(t, TT_LOOKUP, err, BIT(TT_EFAULT) | BIT(TT_ENODEV));

		if (r) {
			/* The reference keeps the region past the RCU section. */
			if (r->start != t->slot[slot].addr)
				tt_finding(t, "region held by tryget changed");
			tt_count(t, TT_TRYGET, 0, 0);
			netgpu_region_put(r);
		}
		cond_resched();
	}
	return 0;
}

static int tt_revoke_thread(void *data)
{
	struct tt_thread *th = data;
	struct tt *t = th->t;
	struct mock_gpu_buf *buf;
	struct tt_slot *s;
	unsigned long ms;

	while (!kthread_should_stop()) {
		ms = revoke_ms / 2 + prandom_u32_state(&th->rnd) % revoke_ms;
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			break;
		}
		schedule_timeout(msecs_to_jiffies(ms));
		s = &t->slot[prandom_u32_state(&th->rnd) % TT_SLOTS];
		/* The buffer that replaces the revoked one. */
		buf = tt_new_buf(t, &th->rnd);
		if (!buf)
			continue;	/* TT_MAX_BUFS kept, none retired yet */
		mutex_lock(&s->lock);
		/*
		 * The GPU gives the buffer up and tries to evict it: refused
		 * while a region maps it (a static importer pins), so its
		 * pages never move under a map.  Then the region's device
		 * goes away: its owner revokes it, from any context.
		 */
		mock_gpu_revoke(s->buf);
		if (atomic_read(&s->buf->moves_mapped))
			tt_finding(t, "the exporter moved a buffer a region maps");
		if (s->r)
			netgpu_region_revoke_async(s->r);
		s->buf = buf;
		mutex_unlock(&s->lock);
		tt_count(t, TT_EXPORTER_REVOKE, 0, 0);
	}
	return 0;
}

/* Give a buffer taken in NAPI context straight back to the cache. */
static void tt_recycle(struct tt *t, struct netgpu_buf *b)
{
	u64 idx = b - t->dbuf;

	clear_bit(idx, t->owned);
	if (netgpu_cache_put_napi(t->cache, b))
		tt_finding(t, "put_napi of buffer %llu refused", idx);
}

/* NAPI side: take buffers from the cache, complete them or recycle them. */
static int tt_rx_thread(void *data)
{
	struct tt_thread *th = data;
	struct tt *t = th->t;
	struct netgpu_buf *b;
	u32 n, i, x;
	u64 idx;

	while (!kthread_should_stop()) {
		x = prandom_u32_state(&th->rnd);
		n = 1 + x % 16;
		current->fail_nth = 1;
		local_bh_disable();
		for (i = 0; i < n; i++) {
			b = netgpu_cache_get_napi(t->cache);
			if (!b)
				break;
			idx = b - t->dbuf;
			if (idx >= TT_NBUFS ||
			    test_and_set_bit(idx, t->owned)) {
				tt_finding(t, "cache returned buffer %lld twice or foreign",
					   idx);
				break;
			}
			if (x & BIT(8 + i)) {
				/* Dropped packet: straight back to the cache. */
				tt_recycle(t, b);
				continue;
			}
			if (netgpu_queue_prod_reserve_addr(t->compq, idx)) {
				/* Completion ring full: recycle it. */
				tt_recycle(t, b);
				break;
			}
			tt_count(t, TT_RX, 0, 0);
		}
		netgpu_queue_prod_submit(t->compq);
		local_bh_enable();
		tt_data_armed(t, "rx");
		cond_resched();
	}
	return 0;
}

/* Give completed buffers back; returns how many. */
static u32 tt_complete(struct tt *t)
{
	u64 idx[16];
	u32 n, i;

	n = netgpu_queue_cons_peek_addr_batch(t->compq, idx, ARRAY_SIZE(idx));
	for (i = 0; i < n; i++) {
		if (idx[i] >= TT_NBUFS || !test_and_clear_bit(idx[i], t->owned)) {
			tt_finding(t, "completion of buffer %llu not handed out",
				   idx[i]);
			continue;
		}
		if (netgpu_cache_put_any(t->cache, &t->dbuf[idx[i]]))
			tt_finding(t, "put_any of buffer %llu refused", idx[i]);
		tt_count(t, TT_COMPLETE, 0, 0);
	}
	netgpu_queue_cons_release(t->compq, n);
	return n;
}

/* User side: consume completions, give the buffers back to the cache. */
static int tt_complete_thread(void *data)
{
	struct tt_thread *th = data;

	while (!kthread_should_stop()) {
		current->fail_nth = 1;
		tt_complete(th->t);
		tt_data_armed(th->t, "complete");
		cond_resched();
	}
	return 0;
}

/* ===== The campaign ===== */

static void tt_release_buf(struct netgpu_buf *b, void *arg)
{
	struct tt *t = arg;
	u64 idx = b - t->dbuf;

	/* Reuses the ownership bits: set once per buffer released. */
	if (idx >= TT_NBUFS || test_and_set_bit(idx, t->owned))
		tt_finding(t, "cache holds buffer %llu twice or foreign", idx);
}

/* Start thread number *@nr of @th running @fn; count it on success. */
static int tt_start(struct tt *t, int (*fn)(void *), const char *name,
		    struct tt_thread *th, unsigned int *nr)
{
	struct tt_thread *me = &th[*nr];
	struct task_struct *task;

	me->t = t;
	prandom_seed_state(&me->rnd, seed + (*nr + 1) * 0x9e3779b97f4a7c15ULL);
	task = kthread_run(fn, me, "netgpu_tt_%s", name);
	if (IS_ERR(task))
		return PTR_ERR(task);
	get_task_struct(task);
	me->task = task;
	(*nr)++;
	return 0;
}

static void tt_setup(struct kunit *test, struct tt *t, struct rnd_state *rnd)
{
	struct device *dev[2];
	unsigned int i;

	t->test = test;
	mutex_init(&t->bufs_lock);
	dev[0] = mock_dma_device(test, "netgpu-torture-nic0");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev[0]));
	dev[1] = mock_dma_device(test, "netgpu-torture-nic1");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev[1]));
	for (i = 0; i < TT_CTXS; i++)
		netgpu_memctx_init(&t->ctx[i], dev[i * 2 / TT_CTXS]);
	t->mem = netgpu_mem_create();
	KUNIT_ASSERT_NOT_NULL(test, t->mem);
	for (i = 0; i < TT_SLOTS; i++) {
		mutex_init(&t->slot[i].lock);
		t->slot[i].addr = TT_BASE + (u64)i * TT_SPAN;
		t->slot[i].buf = tt_new_buf(t, rnd);
		KUNIT_ASSERT_NOT_NULL(test, t->slot[i].buf);
	}

	t->cache = netgpu_cache_create(TT_NBUFS, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->cache));
	/* Smaller than the buffers in flight: the NAPI side sees it full. */
	t->compq = netgpu_queue_create(NETGPU_QUEUE_COMPLETION, TT_NBUFS / 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(t->compq));
	for (i = 0; i < TT_NBUFS; i++) {
		t->dbuf[i].index = i;
		KUNIT_ASSERT_EQ(test, netgpu_cache_put_any(t->cache, &t->dbuf[i]),
				0);
	}
}

/* Undo everything; the exporter must be left with nothing mapped. */
static void tt_teardown(struct kunit *test, struct tt *t)
{
	unsigned long until = jiffies + 10 * HZ;
	unsigned int i, busy;
	u32 count;

	/* The data path: every buffer back in the cache, each once. */
	while (tt_complete(t))
		;
	if (!bitmap_empty(t->owned, TT_NBUFS))
		tt_finding(t, "%u buffers neither cached nor completed",
			   bitmap_weight(t->owned, TT_NBUFS));
	local_bh_disable();
	count = netgpu_cache_count(t->cache);
	local_bh_enable();
	if (count != TT_NBUFS)
		tt_finding(t, "cache holds %u of %u buffers", count, TT_NBUFS);
	bitmap_zero(t->owned, TT_NBUFS);
	netgpu_cache_destroy(t->cache, tt_release_buf, t);
	if (!bitmap_full(t->owned, TT_NBUFS))
		tt_finding(t, "%u buffers lost by the cache",
			   TT_NBUFS - bitmap_weight(t->owned, TT_NBUFS));
	netgpu_queue_destroy(t->compq);

	/* The control path: contexts, the slots' references, the area. */
	for (i = 0; i < TT_SLOTS; i++)
		if (t->slot[i].r)
			netgpu_region_flush_revoke(t->slot[i].r);
	for (i = 0; i < TT_CTXS; i++)
		netgpu_memctx_release(&t->ctx[i]);
	for (i = 0; i < TT_SLOTS; i++)
		if (t->slot[i].r)
			netgpu_region_put(t->slot[i].r);
	netgpu_mem_close(t->mem);

	/* Revocations still queued hold their regions until they run. */
	do {
		busy = 0;
		for (i = 0; i < t->nr_bufs; i++)
			busy += atomic_read(&t->bufs[i]->attachments) +
				atomic_read(&t->bufs[i]->mappings) +
				atomic_read(&t->bufs[i]->pins);
		if (busy)
			msleep(20);
	} while (busy && time_before(jiffies, until));
	if (busy)
		tt_finding(t, "%u attachments, mappings or pins left at the exporter",
			   busy);
}

static void tt_report(struct kunit *test, struct tt *t)
{
	char line[160];
	unsigned int op, res;
	int len;
	s64 n;

	for (op = 0; op < TT_NR_OPS; op++) {
		len = scnprintf(line, sizeof(line), "%s:", tt_op_names[op]);
		for (res = 0; res < TT_NR_RES; res++) {
			n = atomic64_read(&t->ops[op][res]);
			if (n)
				len += scnprintf(line + len, sizeof(line) - len,
						 " %s %lld", tt_res_names[res], n);
		}
		kunit_info(test, "torture: %s\n", line);
	}
	kunit_info(test, "torture: faults injected %lld, mock GPU buffers %u (%u of them given back during the campaign), findings %d\n",
		   atomic64_read(&t->faults), t->nr_bufs + t->retired,
		   t->retired, atomic_read(&t->findings));
}

static s64 tt_total_ops(struct tt *t)
{
	unsigned int op, res;
	s64 n = 0;

	for (op = 0; op < TT_NR_OPS; op++)
		for (res = 0; res < TT_NR_RES; res++)
			n += atomic64_read(&t->ops[op][res]);
	return n;
}

static void netgpu_torture_campaign(struct kunit *test)
{
	unsigned int i, nr = 0, elapsed;
	struct rnd_state rnd;
	struct tt_thread *th;
	unsigned long start;
	struct tt *t;
	int err;

	if (!duration_ms)
		kunit_skip(test, "boot with netgpu_torture.duration_ms=<ms> to run it");
	if (!seed)
		seed = get_random_u32() ?: 1;
	control_threads = clamp(control_threads, 1U, 4U);
	lookup_threads = clamp(lookup_threads, 1U, 4U);
	kunit_info(test, "torture: seed=%lu duration_ms=%u fail_permille=%u control_threads=%u lookup_threads=%u revoke_ms=%u\n",
		   seed, duration_ms, fail_permille, control_threads,
		   lookup_threads, revoke_ms);

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	th = kunit_kcalloc(test, TT_MAX_THREADS, sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, th);
	prandom_seed_state(&rnd, seed);
	tt_setup(test, t, &rnd);

	err = 0;
	for (i = 0; i < control_threads && !err; i++)
		err = tt_start(t, tt_control_thread, "control", th, &nr);
	for (i = 0; i < lookup_threads && !err; i++)
		err = tt_start(t, tt_lookup_thread, "lookup", th, &nr);
	if (!err)
		err = tt_start(t, tt_rx_thread, "rx", th, &nr);
	if (!err)
		err = tt_start(t, tt_complete_thread, "complete", th, &nr);
	if (!err && revoke_ms)
		err = tt_start(t, tt_revoke_thread, "revoke", th, &nr);

	start = jiffies;
	while (!err && time_before(jiffies, start + msecs_to_jiffies(duration_ms))) {
		msleep(min(2000U, duration_ms));
		elapsed = min(duration_ms, jiffies_to_msecs(jiffies - start));
		kunit_info(test, "torture: %u/%u ms: %lld operations, %lld faults injected, %d findings\n",
			   elapsed, duration_ms, tt_total_ops(t),
			   atomic64_read(&t->faults),
			   atomic_read(&t->findings));
	}
	for (i = 0; i < nr; i++) {
		kthread_stop(th[i].task);
		put_task_struct(th[i].task);
	}
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "a thread did not start");

	tt_teardown(test, t);
	tt_report(test, t);
	kunit_info(test, "torture: reproduce: make torture-control SEED=%lu DURATION_MS=%u FAIL_PERMILLE=%u CONTROL_THREADS=%u LOOKUP_THREADS=%u REVOKE_MS=%u\n",
		   seed, duration_ms, fail_permille, control_threads,
		   lookup_threads, revoke_ms);
	KUNIT_EXPECT_GT(test, tt_total_ops(t), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->findings), 0);
}

static struct kunit_case netgpu_torture_cases[] = {
	KUNIT_CASE_SLOW(netgpu_torture_campaign),
	{}
};

static struct kunit_suite netgpu_torture_suite = {
	.name = "netgpu_torture",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.exit = netgpu_splat_exit_kmemleak,
	.test_cases = netgpu_torture_cases,
};

kunit_test_suite(netgpu_torture_suite);

MODULE_DESCRIPTION("netgpu torture campaign: control and data paths under faults and revocation");
MODULE_LICENSE("GPL");
