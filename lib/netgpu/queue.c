// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu shared queue: a single-producer/single-consumer ring of fixed-size
 * entries shared with user space, in the manner of net/xdp/xsk_queue.h.
 *
 * The kernel may sit at either end (fill ring: user space produces, the
 * kernel consumes; rx and completion rings: the other way round), and tests
 * put it at both.  Each end keeps its own copies of the indices in its own
 * half of &struct netgpu_queue and only ever publishes them; it reads the
 * other end's index from the shared header, checks it, and ignores it when
 * it is impossible.
 *
 * Memory ordering.  The shared state is a circular buffer as described in
 * Documentation/core-api/circular-buffers.rst:
 *
 *   producer                         consumer
 *
 *   if (LOAD ->cons) {      (A)      LOAD.acq ->prod      (C)
 *      STORE $entries                LOAD $entries
 *      STORE.rel ->prod     (B)      STORE.rel ->cons     (D)
 *   }
 *
 *   (A) pairs with (D), and (B) pairs with (C).
 *
 * (B) orders the entry stores before the index store: a consumer that sees
 * the new ->prod also sees the entries below it.  (C) keeps the consumer
 * from loading entries before it loaded the ->prod that covers them.
 * (A) is a control dependency: the producer stores into a slot only if the
 * ->cons it loaded says the slot is free, so the stores cannot move before
 * the load.  (D) orders the consumer's entry loads before the ->cons store
 * that hands the slots back, so the producer cannot overwrite an entry the
 * consumer has not read yet.  Every site below carries its letter.
 *
 * Untrusted indices.  User space can write anything into ->prod and ->cons
 * at any time.  Slots are always masked, so no index reaches outside the
 * entry array, and counts are clamped to what the private indices allow:
 *
 * - the consumer accepts a ->prod only if it neither goes back behind
 *   entries it has already seen nor runs more than a ring ahead of its own
 *   index, i.e. ``prod - cons`` stays within [seen, nentries];
 * - the producer accepts a ->cons only if it neither goes back behind the
 *   last ->cons it accepted nor passes the last index it submitted.
 *
 * An impossible index is ignored: the consumer sees no new entries (the
 * ring looks empty past what it has already seen), the producer sees no
 * new space (the ring looks full), and the event is counted in
 * &struct netgpu_queue_stats.  The next read of a sane index recovers.
 * Neither end ever reads back its own index from the shared header.
 */

#include <kunit/visibility.h>
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "queue.h"

/**
 * struct netgpu_queue - kernel side of a shared ring
 * @ring: the shared header, followed by the entries (vmalloc_user())
 * @entries: first entry, just past @ring's header
 * @type: what the queue carries
 * @entry_size: size of one entry, fixed by @type
 * @nentries: number of entries, a power of two
 * @mask: @nentries - 1
 * @ring_size: bytes allocated for @ring, a multiple of PAGE_SIZE
 * @prod: the producer's half, touched by the producer only
 * @prod.head: next entry to reserve
 * @prod.pub: last index stored into ->prod
 * @prod.cons: last ->cons accepted; @prod.cons <= @prod.pub <= @prod.head
 * @prod.bad_cons: impossible ->cons values ignored
 * @cons: the consumer's half, touched by the consumer only
 * @cons.tail: next entry to peek; also the last index stored into ->cons
 * @cons.prod: last ->prod accepted; @cons.tail <= @cons.prod <=
 *	@cons.tail + @nentries
 * @cons.bad_prod: impossible ->prod values ignored
 *
 * Inequalities are modulo 2^32, relative to the lower bound.
 */
struct netgpu_queue {
	struct netgpu_ring *ring;
	void *entries;
	enum netgpu_queue_type type;
	u32 entry_size;
	u32 nentries;
	u32 mask;
	size_t ring_size;

	struct {
		u32 head;
		u32 pub;
		u32 cons;
		u64 bad_cons;
	} prod ____cacheline_aligned_in_smp;

	struct {
		u32 tail;
		u32 prod;
		u64 bad_prod;
	} cons ____cacheline_aligned_in_smp;
};

static const struct {
	u32 entry_size;
	u64 mmap_offset;
} netgpu_queue_types[NETGPU_QUEUE_NR_TYPES] = {
	[NETGPU_QUEUE_FILL] = {
		.entry_size = sizeof(u64),
		.mmap_offset = NETGPU_OFF_FILL_RING,
	},
	[NETGPU_QUEUE_RX] = {
		.entry_size = sizeof(struct netgpu_rx_desc),
		.mmap_offset = NETGPU_OFF_RX_RING,
	},
	[NETGPU_QUEUE_COMPLETION] = {
		.entry_size = sizeof(u64),
		.mmap_offset = NETGPU_OFF_COMPLETION_RING,
	},
};

static_assert(sizeof(struct netgpu_ring) == 2 * NETGPU_RING_ALIGN);
static_assert(offsetof(struct netgpu_ring, cons) == NETGPU_RING_ALIGN);
static_assert(sizeof(struct netgpu_rx_desc) == 16);
static_assert((NETGPU_QUEUE_MAX_ENTRIES & (NETGPU_QUEUE_MAX_ENTRIES - 1)) == 0);
/* The largest ring, page aligned, fits size_t even on 32-bit. */
static_assert(sizeof(struct netgpu_ring) +
	      (u64)NETGPU_QUEUE_MAX_ENTRIES * sizeof(struct netgpu_rx_desc) <=
	      SIZE_MAX - PAGE_SIZE);

static size_t netgpu_queue_bytes(u32 entry_size, u32 nentries)
{
	/* Can't overflow: nentries <= NETGPU_QUEUE_MAX_ENTRIES, see above. */
	return PAGE_ALIGN(sizeof(struct netgpu_ring) +
			  (size_t)nentries * entry_size);
}

/* ===== Setup ===== */

/**
 * netgpu_queue_validate_geometry() - check a ring geometry from user space
 * @type: the queue the geometry is for
 * @geom: the geometry, in kernel memory; updated on success
 *
 * On success @geom->entries is rounded up to a power of two and
 * @geom->mmap_offset and @geom->mmap_size are filled in, for the caller to
 * report back; on error @geom is left as it was.
 *
 * Context: Any context.
 * Return: 0; -EINVAL if @type is unknown, @geom->entry_size is not the
 * entry size of @type or @geom->entries is 0; -E2BIG if @geom->entries is
 * above %NETGPU_QUEUE_MAX_ENTRIES (this includes every count whose power
 * of two or ring size would not fit).
 */
int netgpu_queue_validate_geometry(enum netgpu_queue_type type,
				   struct netgpu_queue_geom *geom)
{
	u32 nentries = geom->entries;

	if ((unsigned int)type >= NETGPU_QUEUE_NR_TYPES)
		return -EINVAL;
	if (geom->entry_size != netgpu_queue_types[type].entry_size)
		return -EINVAL;
	if (!nentries)
		return -EINVAL;
	/*
	 * Also keeps roundup_pow_of_two() below U32_MAX and the ring size
	 * below SIZE_MAX: the maximum is itself a power of two.
	 */
	if (nentries > NETGPU_QUEUE_MAX_ENTRIES)
		return -E2BIG;

	nentries = roundup_pow_of_two(nentries);
	geom->entries = nentries;
	geom->mmap_offset = netgpu_queue_types[type].mmap_offset;
	geom->mmap_size = netgpu_queue_bytes(geom->entry_size, nentries);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_queue_validate_geometry);

/**
 * netgpu_queue_create() - allocate a queue and its ring
 * @type: what the queue carries
 * @nentries: number of entries, a power of two (see
 *	netgpu_queue_validate_geometry())
 *
 * The ring is zeroed vmalloc_user() memory, so netgpu_queue_mmap() can map
 * it.  It is not charged to a memory cgroup; the caller bounds it, for
 * instance by %NETGPU_QUEUE_MAX_ENTRIES.
 *
 * Context: Process context; may sleep.
 * Return: the queue, ERR_PTR(-EINVAL) for an unknown @type or a bad
 * @nentries, ERR_PTR(-ENOMEM) if an allocation failed.
 */
struct netgpu_queue *netgpu_queue_create(enum netgpu_queue_type type,
					 u32 nentries)
{
	struct netgpu_queue *q;

	if ((unsigned int)type >= NETGPU_QUEUE_NR_TYPES)
		return ERR_PTR(-EINVAL);
	if (!is_power_of_2(nentries) || nentries > NETGPU_QUEUE_MAX_ENTRIES)
		return ERR_PTR(-EINVAL);

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);

	q->type = type;
	q->entry_size = netgpu_queue_types[type].entry_size;
	q->nentries = nentries;
	q->mask = nentries - 1;
	q->ring_size = netgpu_queue_bytes(q->entry_size, nentries);

	/* Zeroed, SHMLBA aligned and VM_USERMAP, for remap_vmalloc_range(). */
	q->ring = vmalloc_user(q->ring_size);
	if (!q->ring)
		goto err_free;
	q->entries = q->ring + 1;

	return q;

err_free:
	kfree(q);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_GPL(netgpu_queue_create);

/**
 * netgpu_queue_destroy() - free a queue and its ring
 * @q: the queue, or NULL
 *
 * Mappings of the ring keep its pages until they are unmapped; @q itself
 * must not be used afterwards.
 *
 * Context: Process context.
 */
void netgpu_queue_destroy(struct netgpu_queue *q)
{
	if (!q)
		return;

	vfree(q->ring);
	kfree(q);
}
EXPORT_SYMBOL_GPL(netgpu_queue_destroy);

/* ===== Entry copies ===== */

/* No barriers here: callers order these against the indices (A-D). */
static void netgpu_queue_write(struct netgpu_queue *q, u32 idx,
			       const void *src, u32 n)
{
	u32 i;

	if (q->entry_size == sizeof(u64)) {
		const u64 *from = src;
		u64 *slot = q->entries;

		for (i = 0; i < n; i++)
			slot[(idx + i) & q->mask] = from[i];
	} else {
		const struct netgpu_rx_desc *from = src;
		struct netgpu_rx_desc *slot = q->entries;

		for (i = 0; i < n; i++)
			slot[(idx + i) & q->mask] = from[i];
	}
}

/* Each entry is loaded once: user space may rewrite it as we read. */
static void netgpu_queue_read(struct netgpu_queue *q, u32 idx, void *dst,
			      u32 n)
{
	u32 i;

	if (q->entry_size == sizeof(u64)) {
		const u64 *slot = q->entries;
		u64 *to = dst;

		for (i = 0; i < n; i++)
			to[i] = READ_ONCE(slot[(idx + i) & q->mask]);
	} else {
		const struct netgpu_rx_desc *slot = q->entries;
		struct netgpu_rx_desc *to = dst;

		for (i = 0; i < n; i++) {
			const struct netgpu_rx_desc *d = &slot[(idx + i) & q->mask];

			to[i].addr = READ_ONCE(d->addr);
			to[i].len = READ_ONCE(d->len);
			to[i].flags = READ_ONCE(d->flags);
		}
	}
}

/* ===== Producer ===== */

/* Read ->cons, accept it if possible; returns the free slots. */
static noinline u32 netgpu_queue_prod_refresh(struct netgpu_queue *q)
{
	u32 cons = READ_ONCE(q->ring->cons); /* A, matches D */

	/*
	 * Can't go back and can't pass what was submitted: ->cons must lie
	 * in [prod.cons, prod.pub].  Both tests in one, modulo 2^32.
	 */
	if (likely(cons - q->prod.cons <= q->prod.pub - q->prod.cons))
		q->prod.cons = cons;
	else
		q->prod.bad_cons++; /* producer context, serialized */

	return q->nentries - (q->prod.head - q->prod.cons);
}

/**
 * netgpu_queue_prod_reserve_batch() - reserve and write entries
 * @q: the queue
 * @entries: array of @n entries of the queue's entry type
 * @n: number of entries to write
 *
 * Copies as many of @entries as there is room for into the ring.  They
 * are not visible to the consumer before netgpu_queue_prod_submit().
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the number of entries written, from 0 (ring full) to @n.
 */
u32 netgpu_queue_prod_reserve_batch(struct netgpu_queue *q,
				    const void *entries, u32 n)
{
	u32 free = q->nentries - (q->prod.head - q->prod.cons);

	if (unlikely(free < n))
		free = netgpu_queue_prod_refresh(q);
	n = min(n, free);
	if (!n)
		return 0;

	/* A, matches D: the stores depend on @free, read from ->cons. */
	netgpu_queue_write(q, q->prod.head, entries, n);
	q->prod.head += n;
	return n;
}
EXPORT_SYMBOL_GPL(netgpu_queue_prod_reserve_batch);

/**
 * netgpu_queue_prod_submit() - publish the reserved entries
 * @q: the queue
 *
 * Context: Any context; serialized with the other producer calls on @q.
 */
void netgpu_queue_prod_submit(struct netgpu_queue *q)
{
	if (q->prod.pub == q->prod.head)
		return;

	q->prod.pub = q->prod.head;
	smp_store_release(&q->ring->prod, q->prod.pub); /* B, matches C */
}
EXPORT_SYMBOL_GPL(netgpu_queue_prod_submit);

/**
 * netgpu_queue_nb_free() - free slots for the producer
 * @q: the queue
 *
 * Reads the consumer's index afresh.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the number of entries netgpu_queue_prod_reserve_batch() can
 * write now, from 0 to the queue's entry count.
 */
u32 netgpu_queue_nb_free(struct netgpu_queue *q)
{
	return netgpu_queue_prod_refresh(q);
}
EXPORT_SYMBOL_GPL(netgpu_queue_nb_free);

/**
 * netgpu_queue_empty() - has the consumer released every submitted entry?
 * @q: the queue
 *
 * Asked by the producer, for instance before it tears a queue down.
 * Reserved entries not yet submitted do not count.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: true if the consumer's index has reached the last submitted one.
 */
bool netgpu_queue_empty(struct netgpu_queue *q)
{
	netgpu_queue_prod_refresh(q);
	return q->prod.cons == q->prod.pub;
}
EXPORT_SYMBOL_GPL(netgpu_queue_empty);

/* ===== Consumer ===== */

/* Read ->prod, accept it if possible; returns the entries available. */
static noinline u32 netgpu_queue_cons_refresh(struct netgpu_queue *q)
{
	u32 prod = smp_load_acquire(&q->ring->prod); /* C, matches B */
	u32 seen = q->cons.prod - q->cons.tail;

	/*
	 * Can't go back behind entries already seen and can't run more than
	 * a ring ahead of ->cons: ->prod must lie in [cons.prod, cons.tail +
	 * nentries].  Both tests in one, modulo 2^32.
	 */
	if (likely(prod - q->cons.prod <= q->nentries - seen))
		q->cons.prod = prod;
	else
		q->cons.bad_prod++; /* consumer context, serialized */

	return q->cons.prod - q->cons.tail;
}

/**
 * netgpu_queue_cons_peek_batch() - read entries without consuming them
 * @q: the queue
 * @entries: array for up to @max entries of the queue's entry type
 * @max: most entries to read
 *
 * Copies the oldest entries of the ring into @entries.  They stay in the
 * ring until netgpu_queue_cons_release(); a second peek reads them again,
 * from the ring, so the caller must check each copy it uses: user space may
 * have written anything into it.
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: the number of entries copied, from 0 (ring empty) to @max.
 */
u32 netgpu_queue_cons_peek_batch(struct netgpu_queue *q, void *entries,
				 u32 max)
{
	u32 avail = q->cons.prod - q->cons.tail;

	if (unlikely(avail < max))
		avail = netgpu_queue_cons_refresh(q);
	max = min(max, avail);

	/* No barrier: ordered after C by the acquire in the refresh. */
	netgpu_queue_read(q, q->cons.tail, entries, max);
	return max;
}
EXPORT_SYMBOL_GPL(netgpu_queue_cons_peek_batch);

/**
 * netgpu_queue_cons_release() - consume peeked entries
 * @q: the queue
 * @n: number of entries to hand back to the producer, at most the number
 *	the last peek returned
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 */
void netgpu_queue_cons_release(struct netgpu_queue *q, u32 n)
{
	u32 avail = q->cons.prod - q->cons.tail;

	/* A caller bug: never hand back entries the producer is writing. */
	if (WARN_ON_ONCE(n > avail))
		n = avail;
	if (!n)
		return;

	q->cons.tail += n;
	smp_store_release(&q->ring->cons, q->cons.tail); /* D, matches A */
}
EXPORT_SYMBOL_GPL(netgpu_queue_cons_release);

/**
 * netgpu_queue_nb_avail() - entries available to the consumer
 * @q: the queue
 *
 * Reads the producer's index afresh.
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: the number of entries a peek can return now, from 0 to the
 * queue's entry count.
 */
u32 netgpu_queue_nb_avail(struct netgpu_queue *q)
{
	return netgpu_queue_cons_refresh(q);
}
EXPORT_SYMBOL_GPL(netgpu_queue_nb_avail);

/* ===== Mapping ===== */

/**
 * netgpu_queue_mmap_check() - may user space map this range of the ring?
 * @q: the queue
 * @pgoff: offset of the mapping, in pages
 * @size: length of the mapping, in bytes
 *
 * Context: Any context.
 * Return: 0 if @pgoff is the offset of @q's type (``NETGPU_OFF_*_RING``)
 * and @size is not 0 and at most the ring size; -EINVAL otherwise.
 */
int netgpu_queue_mmap_check(const struct netgpu_queue *q, unsigned long pgoff,
			    unsigned long size)
{
	if (pgoff != netgpu_queue_types[q->type].mmap_offset >> PAGE_SHIFT)
		return -EINVAL;
	if (!size || size > q->ring_size)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_queue_mmap_check);

/**
 * netgpu_queue_mmap() - map the ring into user space
 * @q: the queue
 * @vma: the mapping, from a file's ->mmap()
 *
 * Maps the whole ring, header first, once netgpu_queue_mmap_check()
 * accepts the offset and size of @vma.  The mapping holds references to
 * the ring's pages; @q may be destroyed before it goes away.
 *
 * Context: Process context, mmap lock held (->mmap()).
 * Return: 0, -EINVAL for a wrong offset or a mapping larger than the
 * ring, or the error of remap_vmalloc_range().
 */
int netgpu_queue_mmap(struct netgpu_queue *q, struct vm_area_struct *vma)
{
	int ret;

	ret = netgpu_queue_mmap_check(q, vma->vm_pgoff,
				      vma->vm_end - vma->vm_start);
	if (ret)
		return ret;

	return remap_vmalloc_range(vma, q->ring, 0);
}
EXPORT_SYMBOL_GPL(netgpu_queue_mmap);

/* ===== Introspection ===== */

/**
 * netgpu_queue_ring() - the shared header of a queue
 * @q: the queue
 *
 * For the user-facing side and tests, which act as user space on it.
 *
 * Context: Any context.
 * Return: the header; the entries follow it.
 */
struct netgpu_ring *netgpu_queue_ring(const struct netgpu_queue *q)
{
	return q->ring;
}
EXPORT_SYMBOL_GPL(netgpu_queue_ring);

/**
 * netgpu_queue_nentries() - entry count of a queue
 * @q: the queue
 *
 * Context: Any context.
 * Return: the number of entries, a power of two.
 */
u32 netgpu_queue_nentries(const struct netgpu_queue *q)
{
	return q->nentries;
}
EXPORT_SYMBOL_GPL(netgpu_queue_nentries);

/**
 * netgpu_queue_ring_size() - bytes of a queue's ring
 * @q: the queue
 *
 * Context: Any context.
 * Return: the size of the ring, header included, a multiple of PAGE_SIZE:
 * the largest mapping netgpu_queue_mmap() accepts.
 */
size_t netgpu_queue_ring_size(const struct netgpu_queue *q)
{
	return q->ring_size;
}
EXPORT_SYMBOL_GPL(netgpu_queue_ring_size);

/**
 * netgpu_queue_get_stats() - read a queue's counters
 * @q: the queue
 * @stats: filled in
 *
 * Each counter is written by one end only; read them while that end is
 * quiet for exact values.
 *
 * Context: Any context.
 */
void netgpu_queue_get_stats(const struct netgpu_queue *q,
			    struct netgpu_queue_stats *stats)
{
	stats->bad_prod = READ_ONCE(q->cons.bad_prod);
	stats->bad_cons = READ_ONCE(q->prod.bad_cons);
}
EXPORT_SYMBOL_GPL(netgpu_queue_get_stats);

#if IS_ENABLED(CONFIG_NETGPU_KUNIT_TEST)
/**
 * netgpu_queue_set_index() - start a fresh queue at another index
 * @q: a queue nothing has used yet
 * @idx: the index both ends start from
 *
 * For tests of index wrap-around at 2^32.
 *
 * Context: Any context; nothing else may use @q.
 */
void netgpu_queue_set_index(struct netgpu_queue *q, u32 idx)
{
	q->prod.head = idx;
	q->prod.pub = idx;
	q->prod.cons = idx;
	q->cons.tail = idx;
	q->cons.prod = idx;
	WRITE_ONCE(q->ring->prod, idx);
	WRITE_ONCE(q->ring->cons, idx);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_queue_set_index);
#endif
