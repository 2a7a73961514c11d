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
 * it is impossible.  The per-entry operations are inline in queue.h, with
 * the memory ordering (A-D); this file holds setup, mapping and the two
 * refreshes of a cached index.
 *
 * Untrusted indices.  User space can write anything into ->prod and ->cons
 * at any time.  Slots are always masked, so no index reaches outside the
 * entry array, and counts are clamped to what the cached indices allow:
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
 * ->flags is the kernel's to write; the kernel never reads it back.
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

static_assert(sizeof(struct netgpu_ring) == 3 * NETGPU_RING_ALIGN);
static_assert(offsetof(struct netgpu_ring, cons) == NETGPU_RING_ALIGN);
static_assert(offsetof(struct netgpu_ring, flags) == 2 * NETGPU_RING_ALIGN);
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

/* Setup */

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

/*
 * vmalloc_user() charged to the caller's memory cgroup: a ring is up to
 * 16 MiB of kernel memory that any holder of a context may ask for.
 * Zeroed pages, mapped VM_USERMAP for remap_vmalloc_range(); vfree()
 * frees them and the array (VM_MAP_PUT_PAGES).  Page-aligned, not
 * SHMLBA-aligned as vmalloc_user()'s: an architecture with aliasing
 * caches (not the ones netgpu is tested on) would need the alignment.
 */
static void *netgpu_queue_alloc_ring(size_t size)
{
	unsigned int i, nr = PAGE_ALIGN(size) >> PAGE_SHIFT;
	struct page **pages;
	void *ring;

	pages = kvcalloc(nr, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	ring = vmap(pages, nr, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		    PAGE_KERNEL);
	if (ring)
		return ring;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/**
 * netgpu_queue_create() - allocate a queue and its ring
 * @type: what the queue carries
 * @nentries: number of entries, a power of two (see
 *	netgpu_queue_validate_geometry())
 *
 * The ring is zeroed memory mapped as vmalloc_user() maps it, so
 * netgpu_queue_mmap() can map it, and charged to the caller's memory
 * cgroup; the caller bounds it too, for instance by
 * %NETGPU_QUEUE_MAX_ENTRIES.
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

	q->ring = netgpu_queue_alloc_ring(q->ring_size);
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

/* Functions for producers */

/**
 * __netgpu_queue_prod_refresh() - read ->cons afresh
 * @q: the queue
 *
 * Slow path of the inline producer calls of queue.h, which call it only
 * when the cached ->cons leaves too little room: accepts ->cons if it is
 * possible (see above) and counts it in @q's stats otherwise.
 *
 * Context: Any context; serialized with the other producer calls on @q.
 * Return: the free slots, from 0 to the queue's entry count.
 */
noinline u32 __netgpu_queue_prod_refresh(struct netgpu_queue *q)
{
	u32 cons = READ_ONCE(q->ring->cons); /* A, matches D */

	/*
	 * Can't go back and can't pass what was submitted: ->cons must lie
	 * in [cached_cons, submitted].  Both tests in one, modulo 2^32.
	 */
	if (likely(cons - q->prod.cached_cons <=
		   q->prod.submitted - q->prod.cached_cons))
		q->prod.cached_cons = cons;
	else
		q->prod.bad_cons++; /* producer context, serialized */

	return q->nentries - (q->prod.cached_prod - q->prod.cached_cons);
}
EXPORT_SYMBOL_GPL(__netgpu_queue_prod_refresh);

/* Functions for consumers */

/**
 * __netgpu_queue_cons_refresh() - read ->prod afresh
 * @q: the queue
 *
 * Slow path of the inline consumer calls of queue.h, which call it only
 * when the cached ->prod covers too few entries: accepts ->prod if it is
 * possible (see above) and counts it in @q's stats otherwise.
 *
 * Context: Any context; serialized with the other consumer calls on @q.
 * Return: the entries available, from 0 to the queue's entry count.
 */
noinline u32 __netgpu_queue_cons_refresh(struct netgpu_queue *q)
{
	u32 prod = smp_load_acquire(&q->ring->prod); /* C, matches B */
	u32 seen = q->cons.cached_prod - q->cons.cached_cons;

	/*
	 * Can't go back behind entries already seen and can't run more than
	 * a ring ahead of ->cons: ->prod must lie in [cached_prod,
	 * cached_cons + nentries].  Both tests in one, modulo 2^32.
	 */
	if (likely(prod - q->cons.cached_prod <= q->nentries - seen))
		q->cons.cached_prod = prod;
	else
		q->cons.bad_prod++; /* consumer context, serialized */

	return q->cons.cached_prod - q->cons.cached_cons;
}
EXPORT_SYMBOL_GPL(__netgpu_queue_cons_refresh);

/* Mapping */

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
 * Return: 0, -EINVAL for a wrong offset, a mapping larger than the ring
 * or one not MAP_SHARED, -EPERM for an executable one (PROT_EXEC; the
 * mapping can never become executable), or the error of
 * remap_vmalloc_range().
 */
int netgpu_queue_mmap(struct netgpu_queue *q, struct vm_area_struct *vma)
{
	int ret;

	ret = netgpu_queue_mmap_check(q, vma->vm_pgoff,
				      vma->vm_end - vma->vm_start);
	if (ret)
		return ret;
	/*
	 * Shared with the kernel, never executable: a private mapping
	 * would take user space's writes (fill returns) to a copy the
	 * kernel never reads, an executable one would be writable code
	 * (io_uring's and AF_XDP's rings refuse both too).
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYEXEC);

	return remap_vmalloc_range(vma, q->ring, 0);
}
EXPORT_SYMBOL_GPL(netgpu_queue_mmap);

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
	q->prod.cached_prod = idx;
	q->prod.submitted = idx;
	q->prod.cached_cons = idx;
	q->cons.cached_cons = idx;
	q->cons.cached_prod = idx;
	WRITE_ONCE(q->ring->prod, idx);
	WRITE_ONCE(q->ring->cons, idx);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_queue_set_index);
#endif
