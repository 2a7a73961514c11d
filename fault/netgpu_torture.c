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
 * operations, their results and how many were checked, faults injected,
 * findings.
 *
 * The campaign keeps a model of what the library's state must be: per
 * slot its region, the contexts it is attached to and whether its
 * exporter revoked it; per data-path buffer whether it is out of the
 * cache and where in the completion order it was queued.  Every result
 * is checked against the errno set the model's state allows, not a set
 * every state allows: -EEXIST only for an attach of a region attached
 * there, -ENOENT only for a detach of one that is not, -ENOMEM only from
 * an operation whose armed allocation failed.  So are lookups, whenever
 * no operation on their slot ran meanwhile: a hit, with the slot's
 * region, inside an attached region; -EFAULT outside; -ENODEV or -EFAULT
 * inside one being revoked.  After each operation the exporter's
 * attachments, mappings and pins of the slot's buffer are the model's
 * count of DMA maps.  A result the model does not allow, a buffer lost
 * or duplicated, an allocation on the data path or a mapping or pin left
 * behind is a finding, and any finding fails the case, as does a kind of
 * operation whose results were never checked.  Every thread draws the
 * same number of values per operation from its own generator seeded from
 * the printed seed, so a campaign repeats the same operation streams;
 * their interleaving is the scheduler's.
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

/* Results counted per operation: 0 and the errnos an operation may return. */
enum tt_res { TT_OK, TT_ENOMEM, TT_ENODEV, TT_EEXIST, TT_ENOENT, TT_EFAULT,
	      TT_EBUSY, TT_OTHER, TT_NR_RES };

static const char * const tt_res_names[TT_NR_RES] = {
	"ok", "ENOMEM", "ENODEV", "EEXIST", "ENOENT", "EFAULT", "EBUSY",
	"other",
};

/* A set of results: TT_R(OK) | TT_R(ENOMEM). */
#define TT_R(res)	BIT(TT_##res)

/*
 * Context i is on device tt_dev_of(i): contexts 0 and 1 share nic0 (and
 * so a region's DMA map), context 2 is on nic1.
 */
static unsigned int tt_dev_of(unsigned int ctx)
{
	return ctx * 2 / TT_CTXS;
}

/**
 * struct tt_slot - an address slot and the model of its region
 * @lock: serializes the operations on the slot (control threads, the
 *	revoke thread) and protects every field below but @gen
 * @gen: odd while an operation under @lock may change what lookups of the
 *	slot see; see tt_model_begin()
 * @buf: the mock GPU buffer the next region of the slot is registered from
 * @r: the slot's region (a reference is held), or NULL
 * @rbuf: the buffer @r was registered from (@buf, until the exporter
 *	revokes it and the slot gets a new one)
 * @addr: first address of the slot
 * @len: length of @r
 * @attached: contexts @r is attached to, a bit per context
 * @revoked: @r was revoked by its exporter (netgpu_region_revoke_async());
 *	its attachments go when the work runs
 *
 * The model is what the contracts say the library's state is after each
 * operation: @r, @len, @attached and @revoked are written under @lock
 * inside tt_model_begin()/tt_model_end() with WRITE_ONCE() and read
 * locklessly by lookups.
 */
struct tt_slot {
	struct mutex		lock;	/* see above */
	atomic_t		gen;
	struct mock_gpu_buf	*buf;
	struct netgpu_region	*r;
	struct mock_gpu_buf	*rbuf;
	u64			addr;
	u64			len;
	u32			attached;
	bool			revoked;
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
	/*
	 * The completion queue's model: the rx side numbers each buffer it
	 * queues (sent[], nr_sent: rx thread only), completions must come
	 * back in that order (nr_done: the completing side only).  sent[] is
	 * ordered before its completion by the queue (B, matches C).
	 */
	u64			sent[TT_NBUFS];
	u64			nr_sent;
	u64			nr_done;

	atomic64_t		ops[TT_NR_OPS][TT_NR_RES];
	atomic64_t		checked[TT_NR_OPS];	/* against the model */
	atomic64_t		lookup_hits;	/* checked, a hit expected */
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
	case -EBUSY: return TT_EBUSY;
	default: return err < 0 ? TT_OTHER : TT_OK;
	}
}

/* "ok|ENOMEM": the results of @set, for a finding. */
static const char *tt_res_set(char *buf, size_t size, u32 set)
{
	unsigned int res;
	int len = 0;

	buf[0] = '\0';
	for (res = 0; res < TT_NR_RES; res++)
		if (set & BIT(res))
			len += scnprintf(buf + len, size - len, "%s%s",
					 len ? "|" : "", tt_res_names[res]);
	return buf;
}

/*
 * Count @err as a result of @op that was checked against the model (the
 * caller reports a disagreement); return whether @expected (a set of
 * TT_R()) holds it.
 */
static bool tt_record(struct tt *t, enum tt_op op, int err, u32 expected)
{
	enum tt_res res = tt_res_of(err);

	atomic64_inc(&t->ops[op][res]);
	atomic64_inc(&t->checked[op]);
	return expected & BIT(res);
}

/*
 * Count @err as a result of @op checked against the model: a finding
 * unless it is in @expected, exactly what the model's state allows.
 */
static void tt_expect(struct tt *t, enum tt_op op, int err, u32 expected)
{
	char set[64];

	if (!tt_record(t, op, err, expected))
		tt_finding(t, "%s returned %d, the model allows %s",
			   tt_op_names[op], err,
			   tt_res_set(set, sizeof(set), expected));
}

/*
 * Count @err as a result of @op the model cannot decide (a lookup that
 * raced an operation on its slot): a finding unless it is 0 or in
 * @allowed, what any state allows.
 */
static void tt_count(struct tt *t, enum tt_op op, int err, u32 allowed)
{
	enum tt_res res = tt_res_of(err);

	atomic64_inc(&t->ops[op][res]);
	if (res != TT_OK && !(allowed & BIT(res)))
		tt_finding(t, "%s returned %d", tt_op_names[op], err);
}

/**
 * struct tt_draw - the values a control thread draws for one operation
 * @slot: the slot
 * @ctx: the context
 * @op: which operation, 0..15
 * @arm: per mille: a fault is armed below fail_permille
 * @nth: the allocation the fault fails, 1..8
 *
 * Drawn whole for every operation, whichever runs, so that a thread's
 * stream of draws is the seed's alone.
 */
struct tt_draw {
	u32	slot;
	u32	ctx;
	u32	op;
	u32	arm;
	u32	nth;
};

static void tt_draw(struct rnd_state *rnd, struct tt_draw *d)
{
	d->slot = prandom_u32_state(rnd) % TT_SLOTS;
	d->ctx = prandom_u32_state(rnd) % TT_CTXS;
	d->op = prandom_u32_state(rnd) % 16;
	d->arm = prandom_u32_state(rnd) % 1000;
	d->nth = 1 + prandom_u32_state(rnd) % 8;
}

/*
 * Arm a fault for the next operation of this thread if the draw says so:
 * its n-th allocation fails.  Return whether one was armed.
 */
static bool tt_arm(const struct tt_draw *d)
{
	if (d->arm >= fail_permille)
		return false;
	current->fail_nth = d->nth;
	return true;
}

/*
 * Disarm after the operation.  Return whether the armed allocation was
 * reached and failed: only then may the operation fail with -ENOMEM.
 */
static bool tt_disarm(struct tt *t, bool armed)
{
	bool injected;

	if (!armed)
		return false;
	/* fail_nth reaches 0 when the armed allocation fails. */
	injected = !READ_ONCE(current->fail_nth);
	if (injected)
		atomic64_inc(&t->faults);
	current->fail_nth = 0;
	return injected;
}

/* ===== The model ===== */

/*
 * The model of a slot is exact for a lookup only if no operation on the
 * slot ran during it.  Writers, serialized by the slot's lock, make ->gen
 * odd before they change anything and even again after; a lookup checks
 * its result against the model only if ->gen was even and the same
 * before and after it (a seqcount read that does not retry: the writers
 * sleep, in synchronize_rcu() among others, which must not wait for a
 * reader spinning in an RCU read section).  seqcount_t is not used: its
 * write side would make KCSAN take every access of the library's control
 * path for an atomic one (kcsan_nestable_atomic_begin()).
 *
 *	writer (slot lock)		lookup
 *	gen++ (odd)			g = gen (acquire)	(C)
 *	smp_wmb()		(A)	model, netgpu_memctx_lookup()
 *	library calls, model		smp_rmb()		(D)
 *	smp_wmb()		(B)	exact if g is even and gen == g
 *	gen++ (even)
 *
 * (A) pairs with (D): a lookup that saw a change made after the odd count
 * reads the odd count, or a later one, the second time.  (B) pairs with
 * (C): a lookup that read the even count sees every change made before
 * it.  The one change outside the window is the revoke work's, whose
 * every step the model allows while ->revoked is set.
 */
static void tt_model_begin(struct tt_slot *s)
{
	lockdep_assert_held(&s->lock);
	atomic_inc(&s->gen);
	smp_wmb(); /* A, matches D */
}

static void tt_model_end(struct tt_slot *s)
{
	lockdep_assert_held(&s->lock);
	smp_wmb(); /* B, matches C */
	atomic_inc(&s->gen);
}

/* The slot has no region any more; in the model's window. */
static void tt_model_clear(struct tt_slot *s)
{
	WRITE_ONCE(s->r, NULL);
	WRITE_ONCE(s->attached, 0);
	WRITE_ONCE(s->revoked, false);
	WRITE_ONCE(s->len, 0);
	s->rbuf = NULL;
}

/* DMA maps the model expects of a region attached to @attached. */
static unsigned int tt_nr_maps(u32 attached)
{
	unsigned long devs = 0;
	unsigned int i;

	for (i = 0; i < TT_CTXS; i++)
		if (attached & BIT(i))
			__set_bit(tt_dev_of(i), &devs);
	return hweight_long(devs);
}

/*
 * The exporter's side of the model: a static attachment per DMA map, each
 * pinning and mapping the buffer once, and nothing left of an attach that
 * failed or a map retired.  Return whether @buf is as expected.
 */
static bool tt_check_buf(struct tt *t, struct mock_gpu_buf *buf,
			 unsigned int maps, const char *when)
{
	int att = atomic_read(&buf->attachments);
	int mapped = atomic_read(&buf->mappings);
	int pins = atomic_read(&buf->pins);

	if (att == maps && mapped == maps && pins == maps)
		return true;
	tt_finding(t, "%s: exporter at %d attachments, %d mappings, %d pins, model at %u",
		   when, att, mapped, pins, maps);
	return false;
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

/*
 * After a revocation ran to its end: the area no longer finds the region
 * by its id (which a new region may have taken since), no context finds
 * its first address, and the exporter has nothing of its buffer attached,
 * mapped or pinned.  Return 0, or -EEXIST if any of it is left.
 */
static int tt_gone(struct tt *t, struct tt_slot *s)
{
	struct netgpu_region *r = s->r, *g;
	struct netgpu_mem_loc loc;
	unsigned int i;
	int err = 0, found;

	g = netgpu_mem_get_region(t->mem, r->id);
	if (!IS_ERR(g)) {
		if (g == r) {
			tt_finding(t, "revoked region %u still in the area",
				   r->id);
			err = -EEXIST;
		}
		netgpu_region_put(g);
	}
	for (i = 0; i < TT_CTXS; i++) {
		rcu_read_lock();
		found = netgpu_memctx_lookup(&t->ctx[i], r->start, &loc);
		rcu_read_unlock();
		if (found != -EFAULT) {
			tt_finding(t, "revoked region %u: lookup in context %u returned %d",
				   r->id, i, found);
			err = -EEXIST;
		}
	}
	if (!tt_check_buf(t, s->rbuf, 0, "revoked region"))
		err = -EEXIST;
	return err;
}

/* Register the slot's buffer as a region; the slot lock is held. */
static void tt_add(struct tt *t, struct tt_slot *s, const struct tt_draw *d)
{
	struct netgpu_region *r;
	bool armed, injected;
	int id;

	armed = tt_arm(d);
	id = netgpu_dmabuf_add_region(t->mem, s->buf->dmabuf, s->addr);
	injected = tt_disarm(t, armed);
	/* Adding allocates: only an injected fault makes it fail. */
	tt_expect(t, TT_ADD, id, TT_R(OK) | (injected ? TT_R(ENOMEM) : 0));
	if (id <= 0)
		return;

	r = netgpu_mem_get_region(t->mem, id);
	/* Nothing revokes it while the slot is locked. */
	tt_expect(t, TT_GET, PTR_ERR_OR_ZERO(r), TT_R(OK));
	if (IS_ERR(r))
		return;
	if (r->start != s->addr || r->len != s->buf->size)
		tt_finding(t, "region %u at %#llx+%llu, registered %#llx+%zu",
			   id, r->start, r->len, s->addr, s->buf->size);
	/* Registered only: neither attached nor mapped. */
	tt_check_buf(t, s->buf, 0, "add");

	tt_model_begin(s);
	s->rbuf = s->buf;
	WRITE_ONCE(s->len, r->len);
	WRITE_ONCE(s->attached, 0);
	WRITE_ONCE(s->revoked, false);
	WRITE_ONCE(s->r, r);
	tt_model_end(s);
}

/* The exporter revoked the region: wait for the revocation, then drop it. */
static void tt_drop_revoked(struct tt *t, struct tt_slot *s,
			    struct netgpu_memctx *mc)
{
	int err;

	tt_model_begin(s);
	netgpu_region_flush_revoke(s->r);
	err = netgpu_memctx_detach(mc, s->r);
	/* The revocation detached it from every context. */
	tt_expect(t, TT_REVOKED, err, TT_R(ENOENT));
	tt_gone(t, s);
	netgpu_region_put(s->r);
	tt_model_clear(s);
	tt_model_end(s);
}

static void tt_attach(struct tt *t, struct tt_slot *s, unsigned int ctx,
		      const struct tt_draw *d)
{
	u32 bit = BIT(ctx), expected;
	bool armed, injected;
	int err;

	tt_model_begin(s);
	armed = tt_arm(d);
	err = netgpu_memctx_attach(&t->ctx[ctx], s->r);
	injected = tt_disarm(t, armed);
	/*
	 * Attached already: -EEXIST.  Not revoked (the model's state here),
	 * so never -ENODEV: the exporter maps a buffer it did not revoke.
	 * -ENOMEM only from an injected fault (the attachment's allocation
	 * comes first, so even when attached).
	 */
	expected = s->attached & bit ? TT_R(EEXIST) : TT_R(OK);
	if (injected)
		expected |= TT_R(ENOMEM);
	tt_expect(t, TT_ATTACH, err, expected);
	if (!err)
		WRITE_ONCE(s->attached, s->attached | bit);
	tt_check_buf(t, s->rbuf, tt_nr_maps(s->attached), "attach");
	tt_model_end(s);
}

static void tt_detach(struct tt *t, struct tt_slot *s, unsigned int ctx)
{
	u32 bit = BIT(ctx);
	int err;

	tt_model_begin(s);
	err = netgpu_memctx_detach(&t->ctx[ctx], s->r);
	/* Detaching allocates nothing. */
	tt_expect(t, TT_DETACH, err,
		  s->attached & bit ? TT_R(OK) : TT_R(ENOENT));
	/* Either way it is not attached there now. */
	WRITE_ONCE(s->attached, s->attached & ~bit);
	/* The last context on a device unmaps at once: nothing in flight. */
	tt_check_buf(t, s->rbuf, tt_nr_maps(s->attached), "detach");
	tt_model_end(s);
}

static void tt_control_op(struct tt *t, struct tt_slot *s,
			  const struct tt_draw *d)
{
	struct netgpu_region *r = s->r, *g;

	if (!r) {
		tt_add(t, s, d);
		return;
	}
	/* Only the revoke thread revokes it, under the slot lock too. */
	if (READ_ONCE(r->revoked) != s->revoked)
		tt_finding(t, "region %u: revoked is %d, the model says %d",
			   r->id, READ_ONCE(r->revoked), s->revoked);
	if (s->revoked) {
		tt_drop_revoked(t, s, &t->ctx[d->ctx]);
		return;
	}

	if (d->op < 7) {
		tt_attach(t, s, d->ctx, d);
	} else if (d->op < 13) {
		tt_detach(t, s, d->ctx);
	} else if (d->op < 15) {
		g = netgpu_mem_get_region(t->mem, r->id);
		/* Not revoked: the area still holds it. */
		tt_expect(t, TT_GET, PTR_ERR_OR_ZERO(g), TT_R(OK));
		if (!IS_ERR(g)) {
			if (g != r)
				tt_finding(t, "id %u names another region",
					   r->id);
			netgpu_region_put(g);
		}
	} else {
		/* The user unregisters it: detached everywhere, unmapped. */
		tt_model_begin(s);
		netgpu_region_revoke(r);
		tt_expect(t, TT_UNREGISTER, tt_gone(t, s), TT_R(OK));
		netgpu_region_put(r);
		tt_model_clear(s);
		tt_model_end(s);
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
	struct tt_draw d;
	struct tt_slot *s;

	while (!kthread_should_stop()) {
		tt_draw(&th->rnd, &d);
		s = &t->slot[d.slot];
		mutex_lock(&s->lock);
		tt_control_op(t, s, &d);
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

/*
 * What the model allows a lookup at @off of a slot whose region is @r
 * (@len bytes, attached to the context if @attached, revoked if
 * @revoked): a hit inside a region attached and not revoked; inside one
 * being revoked, -ENODEV until the revoke work unpublishes it, -EFAULT
 * after; -EFAULT anywhere else.
 */
static u32 tt_lookup_expected(const struct netgpu_region *r, u64 len,
			      bool attached, bool revoked, u64 off)
{
	if (!r || !attached || off >= len)
		return TT_R(EFAULT);
	if (revoked)
		return TT_R(ENODEV) | TT_R(EFAULT);
	return TT_R(OK);
}

/* Check a lookup against the model read before it; see tt_model_begin(). */
static void tt_check_lookup(struct tt *t, const struct tt_slot *s,
			    unsigned int ctx, u64 off, int err,
			    const struct netgpu_mem_loc *loc,
			    const struct netgpu_region *mr, u64 len,
			    bool attached, bool revoked)
{
	u32 expected = tt_lookup_expected(mr, len, attached, revoked, off);
	char set[64];

	if (expected == TT_R(OK))
		atomic64_inc(&t->lookup_hits);
	if (!tt_record(t, TT_LOOKUP, err, expected))
		tt_finding(t, "lookup of %#llx, context %u: %d, model (%s, %llu B, %s) allows %s",
			   s->addr + off, ctx, err,
			   !mr ? "no region" : revoked ? "revoked" : "region",
			   len, attached ? "attached" : "not attached",
			   tt_res_set(set, sizeof(set), expected));
	else if (!err && loc->r != mr)
		tt_finding(t, "lookup of %#llx in context %u found another region than the slot's",
			   s->addr + off, ctx);
}

static int tt_lookup_thread(void *data)
{
	struct tt_thread *th = data;
	struct tt *t = th->t;
	bool attached, revoked, tried, held;
	struct netgpu_region *r, *mr;
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	unsigned int ctx;
	struct tt_slot *s;
	int err, gen;
	u64 off, len;
	u32 x;

	while (!kthread_should_stop()) {
		x = prandom_u32_state(&th->rnd);
		ctx = x % TT_CTXS;
		mc = &t->ctx[ctx];
		s = &t->slot[(x / TT_CTXS) % TT_SLOTS];
		/* Up to a quarter beyond the largest buffer: misses too. */
		off = prandom_u32_state(&th->rnd) %
		      (TT_CHUNKS * (PAGE_SIZE << 2) * 5 / 4);
		r = NULL;
		tried = false;
		held = false;

		gen = atomic_read_acquire(&s->gen); /* C, matches B */
		mr = READ_ONCE(s->r);
		len = READ_ONCE(s->len);
		attached = READ_ONCE(s->attached) & BIT(ctx);
		revoked = READ_ONCE(s->revoked);

		current->fail_nth = 1;
		rcu_read_lock();
		err = netgpu_memctx_lookup(mc, s->addr + off, &loc);
		if (!err) {
			tt_check_loc(t, s->addr, s->addr + off, &loc);
			if (!(x & (3 << 24))) {
				tried = true;
				held = netgpu_region_tryget(loc.r);
				r = loc.r;
			}
		}
		rcu_read_unlock();
		tt_data_armed(t, "lookup");

		smp_rmb(); /* D, matches A */
		if (!(gen & 1) && atomic_read(&s->gen) == gen)
			tt_check_lookup(t, s, ctx, off, err, &loc, mr, len,
					attached, revoked);
		else
			/* An operation on the slot ran meanwhile. */
			tt_count(t, TT_LOOKUP, err,
				 TT_R(EFAULT) | TT_R(ENODEV));

		/*
		 * Whatever the slot's state: what a lookup found is attached,
		 * and the attachment's reference goes only after a grace
		 * period, so the count is never zero here.
		 */
		if (tried)
			tt_expect(t, TT_TRYGET, held ? 0 : -ENOENT, TT_R(OK));
		if (held) {
			/* The reference keeps the region past the RCU section. */
			if (r->start != s->addr)
				tt_finding(t, "region held by tryget changed");
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
	bool pinned;
	int err;

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
		tt_model_begin(s);
		/*
		 * The GPU gives the buffer up and tries to evict it: refused
		 * while a region maps it (a static importer pins), so its
		 * pages never move under a map.  It is mapped exactly when
		 * the slot's region, registered from it, is attached.  Then
		 * the region's device goes away: its owner revokes it, from
		 * any context.
		 */
		pinned = s->r && s->rbuf == s->buf && s->attached;
		err = mock_gpu_revoke(s->buf);
		/* No fault is armed here: never -ENOMEM. */
		tt_expect(t, TT_EXPORTER_REVOKE, err,
			  pinned ? TT_R(EBUSY) : TT_R(OK));
		if (atomic_read(&s->buf->moves_mapped))
			tt_finding(t, "the exporter moved a buffer a region maps");
		if (s->r) {
			netgpu_region_revoke_async(s->r);
			WRITE_ONCE(s->revoked, true);
		}
		s->buf = buf;
		tt_model_end(s);
		mutex_unlock(&s->lock);
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
	int err;

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
			/* One of ours, and free: out of the cache only once. */
			if (idx >= TT_NBUFS)
				err = -EFAULT;
			else if (test_and_set_bit(idx, t->owned))
				err = -EEXIST;
			else
				err = 0;
			if (!tt_record(t, TT_RX, err, TT_R(OK))) {
				tt_finding(t, "cache returned buffer %lld %s",
					   idx, err == -EEXIST ? "twice" :
					   "not of its own");
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
			t->sent[idx] = t->nr_sent++;
		}
		netgpu_queue_prod_submit(t->compq);
		local_bh_enable();
		tt_data_armed(t, "rx");
		cond_resched();
	}
	return 0;
}

/*
 * Give completed buffers back; returns how many.  Each must have been
 * handed out, and come back in the order the rx side queued it.
 */
static u32 tt_complete(struct tt *t)
{
	u64 idx[16];
	u32 n, i;
	int err;

	n = netgpu_queue_cons_peek_addr_batch(t->compq, idx, ARRAY_SIZE(idx));
	for (i = 0; i < n; i++) {
		if (idx[i] >= TT_NBUFS || !test_and_clear_bit(idx[i], t->owned)) {
			tt_record(t, TT_COMPLETE, -ENOENT, TT_R(OK));
			tt_finding(t, "completion of buffer %llu not handed out",
				   idx[i]);
			continue;
		}
		err = 0;
		if (t->sent[idx[i]] != t->nr_done) {
			tt_finding(t, "buffer %llu completed as number %llu, queued as %llu",
				   idx[i], t->nr_done, t->sent[idx[i]]);
			err = -EILSEQ;
			t->nr_done = t->sent[idx[i]];
		}
		t->nr_done++;
		if (netgpu_cache_put_any(t->cache, &t->dbuf[idx[i]])) {
			tt_finding(t, "put_any of buffer %llu refused", idx[i]);
			err = -ENOSPC;
		}
		tt_record(t, TT_COMPLETE, err, TT_R(OK));
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
		netgpu_memctx_init(&t->ctx[i], dev[tt_dev_of(i)]);
	t->mem = netgpu_mem_create();
	KUNIT_ASSERT_NOT_NULL(test, t->mem);
	for (i = 0; i < TT_SLOTS; i++) {
		mutex_init(&t->slot[i].lock);
		atomic_set(&t->slot[i].gen, 0);
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
	if (t->nr_done != t->nr_sent)
		tt_finding(t, "%llu buffers queued for completion, %llu completed",
			   t->nr_sent, t->nr_done);
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
		len += scnprintf(line + len, sizeof(line) - len, "; checked %lld",
				 atomic64_read(&t->checked[op]));
		if (op == TT_LOOKUP)
			scnprintf(line + len, sizeof(line) - len,
				  " (%lld in an attached region)",
				  atomic64_read(&t->lookup_hits));
		kunit_info(test, "torture: %s\n", line);
	}
	kunit_info(test, "torture: faults injected %lld, mock GPU buffers %u (%u of them given back during the campaign), findings %d\n",
		   atomic64_read(&t->faults), t->nr_bufs + t->retired,
		   t->retired, atomic_read(&t->findings));
}

/*
 * Every kind of operation ran and had its results checked against the
 * model at least once, lookups that had to hit included: a campaign
 * that no longer reaches a state checks nothing there.  The exporter's
 * revocations and the drops they lead to need revoke_ms.
 */
static void tt_expect_checked(struct kunit *test, struct tt *t)
{
	unsigned int op;

	for (op = 0; op < TT_NR_OPS; op++) {
		if (!revoke_ms && (op == TT_EXPORTER_REVOKE || op == TT_REVOKED))
			continue;
		KUNIT_EXPECT_GT_MSG(test, atomic64_read(&t->checked[op]), 0,
				    "no %s result checked against the model",
				    tt_op_names[op]);
	}
	KUNIT_EXPECT_GT_MSG(test, atomic64_read(&t->lookup_hits), 0,
			    "no lookup checked in an attached region");
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
	tt_expect_checked(test, t);
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
