/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu shared queue: a single-producer/single-consumer ring of fixed-size
 * entries in vmalloc memory that user space maps.
 */

#ifndef _LIB_NETGPU_QUEUE_H
#define _LIB_NETGPU_QUEUE_H

#include <asm/barrier.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/types.h>
#include <uapi/linux/netgpu.h>

struct vm_area_struct;

/* The ring layout, entries and geometry are user ABI: uapi/linux/netgpu.h */

/* Kernel API */

/**
 * DOC: netgpu queue operations
 *
 * One vocabulary for both ends, as in net/xdp/xsk_queue.h:
 *
 *   producer                           consumer
 *
 *   RESERVE entries (copy them in)     PEEK at entries (copy them out)
 *   SUBMIT them (publish ->prod)       RELEASE them (publish ->cons)
 *
 * Entry calls are typed by ring kind: ``_addr`` for the fill and
 * completion rings (a __u64 buffer address), ``_desc`` for the rx ring
 * (&struct netgpu_rx_desc).  ``_batch`` takes a count; ``nb_`` returns
 * one.  Either end may be the kernel or user space; the kernel side of
 * each end works on its own cached copies of the indices and trusts
 * nothing user space writes into the shared header or the entries.  One
 * producer and one consumer may run in parallel; the caller serializes
 * each end.
 *
 * The per-entry operations are inline and work on the cached indices;
 * only the refresh of a cached index from the shared header is out of
 * line (__netgpu_queue_prod_refresh(), __netgpu_queue_cons_refresh()).
 */

/**
 * enum netgpu_queue_type - what a queue carries
 * @NETGPU_QUEUE_FILL: buffer addresses given to the kernel (__u64)
 * @NETGPU_QUEUE_RX: received data (&struct netgpu_rx_desc)
 * @NETGPU_QUEUE_COMPLETION: buffer addresses given back (__u64)
 * @NETGPU_QUEUE_NR_TYPES: number of types
 */
enum netgpu_queue_type {
	NETGPU_QUEUE_FILL,
	NETGPU_QUEUE_RX,
	NETGPU_QUEUE_COMPLETION,
	NETGPU_QUEUE_NR_TYPES,
};

/**
 * struct netgpu_queue_stats - indices user space got wrong
 * @bad_prod: the consumer read a producer index that was behind the entries
 *	it had already seen or more than a ring ahead of its own index, and
 *	ignored it
 * @bad_cons: the producer read a consumer index that was behind the one it
 *	had already seen or ahead of the last index it submitted, and ignored
 *	it
 */
struct netgpu_queue_stats {
	u64 bad_prod;
	u64 bad_cons;
};

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
 * @prod.cached_prod: next entry to reserve
 * @prod.submitted: last index stored into ->prod
 * @prod.cached_cons: last ->cons accepted; @prod.cached_cons <=
 *	@prod.submitted <= @prod.cached_prod
 * @prod.bad_cons: impossible ->cons values ignored
 * @cons: the consumer's half, touched by the consumer only
 * @cons.cached_cons: next entry to peek; also the last index stored into
 *	->cons
 * @cons.cached_prod: last ->prod accepted; @cons.cached_cons <=
 *	@cons.cached_prod <= @cons.cached_cons + @nentries
 * @cons.bad_prod: impossible ->prod values ignored
 *
 * Inequalities are modulo 2^32, relative to the lower bound.  Only the
 * inline operations below and queue.c touch the fields.
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
		u32 cached_prod;
		u32 submitted;
		u32 cached_cons;
		u64 bad_cons;
	} prod ____cacheline_aligned_in_smp;

	struct {
		u32 cached_cons;
		u32 cached_prod;
		u64 bad_prod;
	} cons ____cacheline_aligned_in_smp;
};

int netgpu_queue_validate_geometry(enum netgpu_queue_type type,
				   struct netgpu_queue_geom *geom);
struct netgpu_queue *netgpu_queue_create(enum netgpu_queue_type type,
					 u32 nentries);
void netgpu_queue_destroy(struct netgpu_queue *q);

u32 __netgpu_queue_prod_refresh(struct netgpu_queue *q);
u32 __netgpu_queue_cons_refresh(struct netgpu_queue *q);

int netgpu_queue_mmap_check(const struct netgpu_queue *q, unsigned long pgoff,
			    unsigned long size);
int netgpu_queue_mmap(struct netgpu_queue *q, struct vm_area_struct *vma);

void netgpu_queue_get_stats(const struct netgpu_queue *q,
			    struct netgpu_queue_stats *stats);

#if IS_ENABLED(CONFIG_NETGPU_KUNIT_TEST)
void netgpu_queue_set_index(struct netgpu_queue *q, u32 idx);
#endif

static inline struct netgpu_ring *netgpu_queue_ring(const struct netgpu_queue *q)
{
	return q->ring;
}

static inline u32 netgpu_queue_nentries(const struct netgpu_queue *q)
{
	return q->nentries;
}

/**
 * netgpu_queue_write_flags() - set the flags word user space reads
 * @q: the queue
 * @flags: its new value (NETGPU_RING_* flags)
 *
 * The kernel is the only writer of &struct netgpu_ring.flags and never
 * reads it back: the caller keeps its own copy.  A plain store, marked
 * as user space reads it concurrently; whatever ordering the flag needs
 * against the indices is the caller's barrier.
 *
 * Context: Any context; the caller serializes its writes.
 */
static inline void netgpu_queue_write_flags(struct netgpu_queue *q, u32 flags)
{
	WRITE_ONCE(q->ring->flags, flags);
}

/* The largest mapping netgpu_queue_mmap() accepts, a multiple of PAGE_SIZE. */
static inline size_t netgpu_queue_ring_size(const struct netgpu_queue *q)
{
	return q->ring_size;
}

/*
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
 * consumer has not read yet.  Every site carries its letter; (A) and (C)
 * are in the refreshes, in queue.c.
 *
 * Each end works against its cached copy of the other end's index and
 * refreshes it only when the cached copy says there is not enough room
 * (producer) or not enough entries (consumer).  Neither end ever reads
 * back its own index from the shared header.
 */

/* Functions for producers */

/* Up to @n free slots, from the cached ->cons unless that is short. */
static inline u32 __netgpu_queue_prod_nb_free(struct netgpu_queue *q, u32 n)
{
	u32 free = q->nentries - (q->prod.cached_prod - q->prod.cached_cons);

	if (unlikely(free < n))
		free = __netgpu_queue_prod_refresh(q);
	return min(n, free);
}

/**
 * netgpu_queue_prod_reserve_addr_batch() - reserve and write addresses
 * @q: a fill or completion queue
 * @addrs: @n buffer addresses
 * @n: number of entries to write
 *
 * Copies as many of @addrs as there is room for into the ring.  They are
 * not visible to the consumer before netgpu_queue_prod_submit().
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the number of entries written, from 0 (ring full, or @q is an
 * rx queue, which warns) to @n.
 */
static inline u32
netgpu_queue_prod_reserve_addr_batch(struct netgpu_queue *q, const u64 *addrs,
				     u32 n)
{
	u64 *slots = q->entries;
	u32 i;

	if (WARN_ON_ONCE(q->entry_size != sizeof(*slots)))
		return 0;
	n = __netgpu_queue_prod_nb_free(q, n);

	/* A, matches D: the stores depend on @n, read from ->cons. */
	for (i = 0; i < n; i++)
		WRITE_ONCE(slots[(q->prod.cached_prod + i) & q->mask],
			   addrs[i]);
	q->prod.cached_prod += n;
	return n;
}

/**
 * netgpu_queue_prod_reserve_desc_batch() - reserve and write descriptors
 * @q: an rx queue
 * @descs: @n descriptors
 * @n: number of entries to write
 *
 * As netgpu_queue_prod_reserve_addr_batch(), for the rx ring.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the number of entries written, from 0 (ring full, or @q is not
 * an rx queue, which warns) to @n.
 */
static inline u32
netgpu_queue_prod_reserve_desc_batch(struct netgpu_queue *q,
				     const struct netgpu_rx_desc *descs, u32 n)
{
	struct netgpu_rx_desc *slots = q->entries;
	u32 i;

	if (WARN_ON_ONCE(q->entry_size != sizeof(*slots)))
		return 0;
	n = __netgpu_queue_prod_nb_free(q, n);

	/* A, matches D: the stores depend on @n, read from ->cons. */
	for (i = 0; i < n; i++) {
		struct netgpu_rx_desc *d =
			&slots[(q->prod.cached_prod + i) & q->mask];

		WRITE_ONCE(d->addr, descs[i].addr);
		WRITE_ONCE(d->len, descs[i].len);
		WRITE_ONCE(d->flags, descs[i].flags);
	}
	q->prod.cached_prod += n;
	return n;
}

/**
 * netgpu_queue_prod_reserve_addr() - reserve and write one address
 * @q: a fill or completion queue
 * @addr: the buffer address
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: 0, or -ENOSPC if the ring is full.
 */
static inline int netgpu_queue_prod_reserve_addr(struct netgpu_queue *q,
						 u64 addr)
{
	return netgpu_queue_prod_reserve_addr_batch(q, &addr, 1) ? 0 : -ENOSPC;
}

/**
 * netgpu_queue_prod_reserve_desc() - reserve and write one descriptor
 * @q: an rx queue
 * @desc: the descriptor
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: 0, or -ENOSPC if the ring is full.
 */
static inline int netgpu_queue_prod_reserve_desc(struct netgpu_queue *q,
						 const struct netgpu_rx_desc *desc)
{
	return netgpu_queue_prod_reserve_desc_batch(q, desc, 1) ? 0 : -ENOSPC;
}

/**
 * netgpu_queue_prod_submit() - publish the reserved entries
 * @q: the queue
 *
 * Context: Any context; serialized with the other producer calls on @q.
 */
static inline void netgpu_queue_prod_submit(struct netgpu_queue *q)
{
	if (q->prod.submitted == q->prod.cached_prod)
		return;

	q->prod.submitted = q->prod.cached_prod;
	smp_store_release(&q->ring->prod, q->prod.submitted); /* B, matches C */
}

/**
 * netgpu_queue_nb_free() - free slots for the producer
 * @q: the queue
 *
 * Reads the consumer's index afresh.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the number of entries a reserve can write now, from 0 to the
 * queue's entry count.
 */
static inline u32 netgpu_queue_nb_free(struct netgpu_queue *q)
{
	return __netgpu_queue_prod_refresh(q);
}

/**
 * netgpu_queue_empty() - has the consumer released every submitted entry?
 * @q: the queue
 *
 * Reserved entries not yet submitted do not count.  The answer rests on
 * ->cons, which user space writes when it is the consumer: a process that
 * stops releasing, dies with the ring still mapped elsewhere or writes an
 * impossible index keeps it false for ever.  Teardown must never wait for
 * it to become true; tear the queue down whatever it says.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: true if the consumer's index has reached the last submitted one.
 */
static inline bool netgpu_queue_empty(struct netgpu_queue *q)
{
	__netgpu_queue_prod_refresh(q);
	return q->prod.cached_cons == q->prod.submitted;
}

/* Functions for consumers */

/* Up to @max entries, from the cached ->prod unless that is short. */
static inline u32 __netgpu_queue_cons_nb_avail(struct netgpu_queue *q,
					       u32 max)
{
	u32 avail = q->cons.cached_prod - q->cons.cached_cons;

	if (unlikely(avail < max))
		avail = __netgpu_queue_cons_refresh(q);
	return min(max, avail);
}

/**
 * netgpu_queue_cons_peek_addr_batch() - read addresses without consuming
 * @q: a fill or completion queue
 * @addrs: array for up to @max addresses
 * @max: most entries to read
 *
 * Copies the oldest entries of the ring into @addrs.  They stay in the
 * ring until netgpu_queue_cons_release(); a second peek reads them again,
 * from the ring, so the caller must check each copy it uses: user space
 * may have written anything into it.
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: the number of entries copied, from 0 (ring empty, or @q is an
 * rx queue, which warns) to @max.
 */
static inline u32
netgpu_queue_cons_peek_addr_batch(struct netgpu_queue *q, u64 *addrs, u32 max)
{
	const u64 *slots = q->entries;
	u32 i;

	if (WARN_ON_ONCE(q->entry_size != sizeof(*slots)))
		return 0;
	max = __netgpu_queue_cons_nb_avail(q, max);

	/*
	 * No barrier: ordered after C by the acquire of the refresh that
	 * accepted these entries.  Each entry is loaded once: user space
	 * may rewrite it as we read.
	 */
	for (i = 0; i < max; i++)
		addrs[i] = READ_ONCE(slots[(q->cons.cached_cons + i) & q->mask]);
	return max;
}

/**
 * netgpu_queue_cons_peek_desc_batch() - read descriptors without consuming
 * @q: an rx queue
 * @descs: array for up to @max descriptors
 * @max: most entries to read
 *
 * As netgpu_queue_cons_peek_addr_batch(), for the rx ring.
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: the number of entries copied, from 0 (ring empty, or @q is not
 * an rx queue, which warns) to @max.
 */
static inline u32
netgpu_queue_cons_peek_desc_batch(struct netgpu_queue *q,
				  struct netgpu_rx_desc *descs, u32 max)
{
	const struct netgpu_rx_desc *slots = q->entries;
	u32 i;

	if (WARN_ON_ONCE(q->entry_size != sizeof(*slots)))
		return 0;
	max = __netgpu_queue_cons_nb_avail(q, max);

	/* As for addresses: no barrier, each field loaded once. */
	for (i = 0; i < max; i++) {
		const struct netgpu_rx_desc *d =
			&slots[(q->cons.cached_cons + i) & q->mask];

		descs[i].addr = READ_ONCE(d->addr);
		descs[i].len = READ_ONCE(d->len);
		descs[i].flags = READ_ONCE(d->flags);
	}
	return max;
}

/**
 * netgpu_queue_cons_peek_addr() - read the next address without consuming it
 * @q: a fill or completion queue
 * @addr: where to copy the address
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: true if an entry was copied, false if the ring is empty.
 */
static inline bool netgpu_queue_cons_peek_addr(struct netgpu_queue *q,
					       u64 *addr)
{
	return netgpu_queue_cons_peek_addr_batch(q, addr, 1);
}

/**
 * netgpu_queue_cons_peek_desc() - read the next descriptor without consuming it
 * @q: an rx queue
 * @desc: where to copy the descriptor
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: true if an entry was copied, false if the ring is empty.
 */
static inline bool netgpu_queue_cons_peek_desc(struct netgpu_queue *q,
					       struct netgpu_rx_desc *desc)
{
	return netgpu_queue_cons_peek_desc_batch(q, desc, 1);
}

/**
 * netgpu_queue_cons_release() - consume peeked entries
 * @q: the queue
 * @n: number of entries to hand back to the producer, at most the number
 *	the last peek returned
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 */
static inline void netgpu_queue_cons_release(struct netgpu_queue *q, u32 n)
{
	u32 avail = q->cons.cached_prod - q->cons.cached_cons;

	/* A caller bug: never hand back entries the producer is writing. */
	if (WARN_ON_ONCE(n > avail))
		n = avail;
	if (!n)
		return;

	q->cons.cached_cons += n;
	smp_store_release(&q->ring->cons, q->cons.cached_cons); /* D, matches A */
}

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
static inline u32 netgpu_queue_nb_avail(struct netgpu_queue *q)
{
	return __netgpu_queue_cons_refresh(q);
}

#endif /* _LIB_NETGPU_QUEUE_H */
