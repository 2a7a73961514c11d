/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu shared queue: a single-producer/single-consumer ring of fixed-size
 * entries in vmalloc memory that user space maps.
 */

#ifndef _LIB_NETGPU_QUEUE_H
#define _LIB_NETGPU_QUEUE_H

#include <linux/errno.h>
#include <linux/types.h>

struct vm_area_struct;

/* ===== Shared with user space (to move to include/uapi/linux/netgpu.h) ===== */

/**
 * DOC: netgpu ring layout
 *
 * A ring is one mapping: a &struct netgpu_ring header, then the entries,
 * starting at byte ``sizeof(struct netgpu_ring)`` (256).  The entry count is
 * a power of two; entry ``i`` lives in slot ``i & (entries - 1)``.  ``prod``
 * and ``cons`` are free-running u32 indices: the producer writes ``prod``,
 * the consumer writes ``cons``, and ``prod - cons`` (mod 2^32) is the number
 * of entries in the ring.
 *
 * The two indices are NETGPU_RING_ALIGN bytes apart so that they sit on
 * different cache lines, and on different 128-byte line pairs for the
 * adjacent-line prefetcher of x86.  The layout is fixed whatever the
 * kernel's cache line size, so that user space needs no offsets.
 *
 * Entry formats: the fill and completion rings carry a buffer address
 * (__u64), the rx ring a &struct netgpu_rx_desc.  The ring of each type is
 * mapped at its own offset, ``NETGPU_OFF_*_RING``.
 */
#define NETGPU_RING_ALIGN		128

#define NETGPU_OFF_FILL_RING		0x000000000ULL
#define NETGPU_OFF_RX_RING		0x080000000ULL
#define NETGPU_OFF_COMPLETION_RING	0x100000000ULL

/* A power of two, so that no count up to it rounds past it. */
#define NETGPU_QUEUE_MAX_ENTRIES	0x100000U	/* 2^20 */

/**
 * struct netgpu_ring - header of a mapped ring
 * @prod: producer index, written by the producer only
 * @pad1: keeps @cons off @prod's cache lines
 * @cons: consumer index, written by the consumer only
 * @pad2: keeps the entries off @cons's cache lines
 */
struct netgpu_ring {
	__u32 prod;
	__u32 pad1[NETGPU_RING_ALIGN / sizeof(__u32) - 1];
	__u32 cons;
	__u32 pad2[NETGPU_RING_ALIGN / sizeof(__u32) - 1];
};

/**
 * struct netgpu_rx_desc - entry of the rx ring
 * @addr: address of the data in the registered memory
 * @len: length of the data
 * @flags: reserved, 0
 */
struct netgpu_rx_desc {
	__u64 addr;
	__u32 len;
	__u32 flags;
};

/**
 * struct netgpu_queue_geom - ring geometry asked for by user space
 * @entries: in: entry count; out: rounded up to a power of two
 * @entry_size: in: size of one entry, must be that of the queue type
 * @mmap_offset: out: offset to pass to mmap()
 * @mmap_size: out: bytes to map (header and entries)
 */
struct netgpu_queue_geom {
	__u32 entries;
	__u32 entry_size;
	__u64 mmap_offset;
	__u64 mmap_size;
};

/* ===== Kernel API ===== */

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
 * ``_batch`` takes a count; ``nb_`` returns one.  Either end may be the
 * kernel or user space; the kernel side of each end works on its own
 * private copies of the indices and trusts nothing user space writes into
 * the shared header or the entries.  One producer and one consumer may run
 * in parallel; the caller serializes each end.
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

struct netgpu_queue;

int netgpu_queue_validate_geometry(enum netgpu_queue_type type,
				   struct netgpu_queue_geom *geom);
struct netgpu_queue *netgpu_queue_create(enum netgpu_queue_type type,
					 u32 nentries);
void netgpu_queue_destroy(struct netgpu_queue *q);

u32 netgpu_queue_prod_reserve_batch(struct netgpu_queue *q,
				    const void *entries, u32 n);
void netgpu_queue_prod_submit(struct netgpu_queue *q);
u32 netgpu_queue_nb_free(struct netgpu_queue *q);
bool netgpu_queue_empty(struct netgpu_queue *q);

u32 netgpu_queue_cons_peek_batch(struct netgpu_queue *q, void *entries,
				 u32 max);
void netgpu_queue_cons_release(struct netgpu_queue *q, u32 n);
u32 netgpu_queue_nb_avail(struct netgpu_queue *q);

int netgpu_queue_mmap_check(const struct netgpu_queue *q, unsigned long pgoff,
			    unsigned long size);
int netgpu_queue_mmap(struct netgpu_queue *q, struct vm_area_struct *vma);

struct netgpu_ring *netgpu_queue_ring(const struct netgpu_queue *q);
u32 netgpu_queue_nentries(const struct netgpu_queue *q);
size_t netgpu_queue_ring_size(const struct netgpu_queue *q);
void netgpu_queue_get_stats(const struct netgpu_queue *q,
			    struct netgpu_queue_stats *stats);

#if IS_ENABLED(CONFIG_NETGPU_KUNIT_TEST)
void netgpu_queue_set_index(struct netgpu_queue *q, u32 idx);
#endif

/**
 * netgpu_queue_prod_reserve() - reserve and write one entry
 * @q: the queue
 * @entry: the entry, of the queue's entry type
 *
 * Context: Any context; serialized with the other producer calls.
 * Return: 0, or -ENOSPC if the ring is full.
 */
static inline int netgpu_queue_prod_reserve(struct netgpu_queue *q,
					    const void *entry)
{
	return netgpu_queue_prod_reserve_batch(q, entry, 1) ? 0 : -ENOSPC;
}

/**
 * netgpu_queue_cons_peek() - read the next entry without consuming it
 * @q: the queue
 * @entry: where to copy the entry, of the queue's entry type
 *
 * Context: Any context; serialized with the other consumer calls.
 * Return: true if an entry was copied, false if the ring is empty.
 */
static inline bool netgpu_queue_cons_peek(struct netgpu_queue *q, void *entry)
{
	return netgpu_queue_cons_peek_batch(q, entry, 1);
}

#endif /* _LIB_NETGPU_QUEUE_H */
