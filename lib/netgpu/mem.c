// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu memory: areas, regions, per-device DMA maps, the context-side
 * lookup and the memory provider registry.  See DOC: netgpu memory in
 * mem.h for the lifetime rules and the lock order.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/kmod.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "mem.h"

/* ===== Provider registry ===== */

/*
 * Protects: netgpu_mem_ops_tbl.  Ordering: leaf.  Regions hold a module
 * reference on their provider, so a provider unregisters (from its module
 * exit) only once it has no regions.
 */
static DEFINE_MUTEX(netgpu_mem_ops_lock);
static const struct netgpu_mem_ops *netgpu_mem_ops_tbl[NETGPU_MEMTYPE_MAX] = {
	[NETGPU_MEMTYPE_HOST]	= &netgpu_host_ops,
	[NETGPU_MEMTYPE_DMABUF]	= &netgpu_dmabuf_ops,
};

/**
 * netgpu_mem_register_provider() - make a memory type available
 * @ops: the provider; @ops->type picks its slot
 *
 * Context: Process context.  Takes the registry mutex.
 * Return: 0, -EINVAL for a type out of range or incomplete ops, -EEXIST
 * if the slot is taken.
 */
int netgpu_mem_register_provider(const struct netgpu_mem_ops *ops)
{
	int err = 0;

	if (!ops->type || ops->type >= NETGPU_MEMTYPE_MAX || !ops->add ||
	    !ops->release || !ops->map || !ops->unmap || !ops->dma)
		return -EINVAL;

	mutex_lock(&netgpu_mem_ops_lock);
	if (netgpu_mem_ops_tbl[ops->type])
		err = -EEXIST;
	else
		netgpu_mem_ops_tbl[ops->type] = ops;
	mutex_unlock(&netgpu_mem_ops_lock);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_mem_register_provider);

/**
 * netgpu_mem_unregister_provider() - withdraw a memory type
 * @ops: the provider, as registered
 *
 * Regions already created keep their provider (they hold its module).
 *
 * Context: Process context.  Takes the registry mutex.
 */
void netgpu_mem_unregister_provider(const struct netgpu_mem_ops *ops)
{
	if (!ops->type || ops->type >= NETGPU_MEMTYPE_MAX)
		return;
	mutex_lock(&netgpu_mem_ops_lock);
	if (netgpu_mem_ops_tbl[ops->type] == ops)
		netgpu_mem_ops_tbl[ops->type] = NULL;
	mutex_unlock(&netgpu_mem_ops_lock);
}
EXPORT_SYMBOL_GPL(netgpu_mem_unregister_provider);

static const struct netgpu_mem_ops *__netgpu_mem_get_ops(u32 type)
{
	const struct netgpu_mem_ops *ops;

	mutex_lock(&netgpu_mem_ops_lock);
	ops = netgpu_mem_ops_tbl[type];
	if (ops && !try_module_get(ops->owner))
		ops = NULL;
	mutex_unlock(&netgpu_mem_ops_lock);
	return ops;
}

/* The provider of @type with a module reference, or ERR_PTR(). */
static const struct netgpu_mem_ops *netgpu_mem_get_ops(u32 type)
{
	const struct netgpu_mem_ops *ops;

	if (!type || type >= NETGPU_MEMTYPE_MAX)
		return ERR_PTR(-EINVAL);

	ops = __netgpu_mem_get_ops(type);
	if (!ops && IS_ENABLED(CONFIG_MODULES)) {
		request_module("netgpu-mem-%u", type);
		ops = __netgpu_mem_get_ops(type);
	}
	return ops ?: ERR_PTR(-EOPNOTSUPP);
}

/* ===== Areas ===== */

/**
 * netgpu_mem_create() - create a memory area for the calling process
 *
 * Host memory registered in the area is charged to the caller's user
 * against RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK now.
 *
 * Context: Process context.
 * Return: the area, or NULL without memory.
 */
struct netgpu_mem *netgpu_mem_create(void)
{
	struct netgpu_mem *mem;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return NULL;

	xa_init_flags(&mem->regions, XA_FLAGS_ALLOC1);
	mem->user = get_uid(current_user());
	mem->account = !capable(CAP_IPC_LOCK);
	refcount_set(&mem->ref, 1);
	return mem;
}
EXPORT_SYMBOL_GPL(netgpu_mem_create);

static void netgpu_mem_put(struct netgpu_mem *mem)
{
	if (!refcount_dec_and_test(&mem->ref))
		return;
	/* Not safe to reference mem afterwards. */
	xa_destroy(&mem->regions);
	free_uid(mem->user);
	kfree(mem);
}

/* Drop @mem's link to @r, if it still has it. */
static void netgpu_mem_unlink(struct netgpu_mem *mem, u32 id,
			      struct netgpu_region *r)
{
	if (xa_cmpxchg(&mem->regions, id, r, NULL, 0) == r)
		netgpu_region_put(r);
}

/**
 * netgpu_mem_close() - close a memory area
 * @mem: the area
 *
 * Drops the area's reference on each of its regions: a region still
 * attached to a context lives on until it is detached.
 *
 * Context: Process context, may sleep.
 */
void netgpu_mem_close(struct netgpu_mem *mem)
{
	struct netgpu_region *r;
	unsigned long id;

	xa_lock(&mem->regions);
	mem->closed = true;
	xa_unlock(&mem->regions);

	xa_for_each(&mem->regions, id, r)
		netgpu_mem_unlink(mem, id, r);

	netgpu_mem_put(mem);
}
EXPORT_SYMBOL_GPL(netgpu_mem_close);

/**
 * netgpu_mem_add_region() - register memory as a region of an area
 * @mem: the area
 * @desc: what to register; @desc->type picks the provider
 *
 * Context: Process context, may sleep.  Host memory is pinned from
 * current->mm and charged to the area's user.
 * Return: the region's id (> 0), or -EINVAL (bad type or range),
 * -EOPNOTSUPP (no provider for the type), -ENODEV (area closed),
 * -ENOMEM, or the provider's error.  On error nothing is left behind.
 */
int netgpu_mem_add_region(struct netgpu_mem *mem,
			  const struct netgpu_region_desc *desc)
{
	const struct netgpu_mem_ops *ops;
	struct netgpu_region *r;
	u32 id;
	int err;

	ops = netgpu_mem_get_ops(desc->type);
	if (IS_ERR(ops))
		return PTR_ERR(ops);

	r = ops->add(mem, desc);
	if (IS_ERR(r)) {
		module_put(ops->owner);
		return PTR_ERR(r);
	}
	/* From here on, netgpu_region_put() undoes everything. */
	r->ops = ops;
	r->mem = mem;
	refcount_inc(&mem->ref);

	xa_lock(&mem->regions);
	if (mem->closed)
		err = -ENODEV;
	else
		/* Sets r->id under the lock, before anyone can find r. */
		err = __xa_alloc(&mem->regions, &r->id, r, xa_limit_31b,
				 GFP_KERNEL);
	/* Once unlocked, a revocation may free r: return the copy. */
	id = r->id;
	xa_unlock(&mem->regions);

	if (err) {
		netgpu_region_put(r);
		return err;
	}
	return id;
}
EXPORT_SYMBOL_GPL(netgpu_mem_add_region);

/**
 * netgpu_mem_get_region() - look a region up by id and take a reference
 * @mem: the area
 * @id: the id netgpu_mem_add_region() returned
 *
 * The reference keeps the region alive after the area drops it (close or
 * revocation); release it with netgpu_region_put().
 *
 * Context: Any context.  Takes the area's xa_lock.
 * Return: the region, or ERR_PTR(-ENOENT).
 */
struct netgpu_region *netgpu_mem_get_region(struct netgpu_mem *mem, u32 id)
{
	struct netgpu_region *r;

	xa_lock(&mem->regions);
	r = xa_load(&mem->regions, id);
	/* The area's link holds a reference while r is in the array. */
	if (r)
		refcount_inc(&r->ref);
	xa_unlock(&mem->regions);
	return r ?: ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_GPL(netgpu_mem_get_region);

/* ===== Regions ===== */

static void netgpu_region_revoke_work(struct work_struct *work);

/**
 * netgpu_region_init() - initialise the core part of a new region
 * @r: the region, embedded in the provider's structure
 * @start: first address (page-aligned)
 * @len: length in bytes (a non-zero page multiple)
 *
 * For providers' add op.  The region starts with one reference, the one
 * its area's link will hold.
 *
 * Context: Any context.
 */
void netgpu_region_init(struct netgpu_region *r, u64 start, u64 len)
{
	r->start = start;
	r->len = len;
	r->nr_pages = len >> PAGE_SHIFT;
	refcount_set(&r->ref, 1);
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->maps);
	INIT_LIST_HEAD(&r->atts);
	INIT_WORK(&r->revoke_work, netgpu_region_revoke_work);
}
EXPORT_SYMBOL_GPL(netgpu_region_init);

/**
 * netgpu_region_tryget() - take a reference on a region found under RCU
 * @r: region from netgpu_memctx_lookup()
 *
 * Context: Any context, under rcu_read_lock().
 * Return: true if a reference was taken.
 */
bool netgpu_region_tryget(struct netgpu_region *r)
{
	return refcount_inc_not_zero(&r->ref);
}
EXPORT_SYMBOL_GPL(netgpu_region_tryget);

static void netgpu_region_free(struct netgpu_region *r)
{
	const struct netgpu_mem_ops *ops = r->ops;
	struct netgpu_mem *mem = r->mem;

	WARN_ON_ONCE(!list_empty(&r->atts) || !list_empty(&r->maps));
	mutex_destroy(&r->lock);
	ops->release(r);
	/* Not safe to reference r afterwards. */
	module_put(ops->owner);
	netgpu_mem_put(mem);
}

/**
 * netgpu_region_put() - drop a region reference
 * @r: the region
 *
 * The last reference releases the provider's memory (unpin and unaccount,
 * or drop the dma-buf), the provider module and the area.
 *
 * Context: Process context, may sleep.
 */
void netgpu_region_put(struct netgpu_region *r)
{
	if (refcount_dec_and_test(&r->ref))
		netgpu_region_free(r);
}
EXPORT_SYMBOL_GPL(netgpu_region_put);

/* Remove @att's entries from its context's xarray and list. */
static void netgpu_memctx_unpublish(struct netgpu_memctx *mc,
				    struct netgpu_mem_att *att)
{
	unsigned long first = att->r->start >> PAGE_SHIFT;
	unsigned long i;

	lockdep_assert_held(&mc->lock);

	for (i = 0; i < att->r->nr_pages; i++)
		xa_erase(&mc->xa, first + i);
	list_del(&att->mc_node);
}

/**
 * netgpu_region_revoke() - detach a region from everything and unmap it
 * @r: the region; the caller holds a reference
 *
 * For providers whose memory goes away (dma-buf moved or its exporter
 * gone, device removal).  Lookups fail from the moment this is called;
 * one already running keeps a valid map until it leaves its RCU read
 * section.  The region is detached from every context, every DMA map is
 * unmapped and the area drops it; it is freed when the last reference
 * goes.  Idempotent.  Allocates nothing, so it cannot fail.
 *
 * Context: Process context, may sleep.  Takes the region's and the
 * contexts' locks.
 */
void netgpu_region_revoke(struct netgpu_region *r)
{
	struct netgpu_dmamap *map, *map_tmp;
	struct netgpu_mem_att *att, *tmp;
	LIST_HEAD(maps);
	LIST_HEAD(atts);

	might_sleep();
	WRITE_ONCE(r->revoked, true);

	mutex_lock(&r->lock);
	r->dead = true;
	list_for_each_entry_safe(att, tmp, &r->atts, r_node) {
		/* The context waits for its list to empty before it dies. */
		mutex_lock(&att->mc->lock);
		netgpu_memctx_unpublish(att->mc, att);
		mutex_unlock(&att->mc->lock);
		list_move(&att->r_node, &atts);
	}
	list_splice_init(&r->maps, &maps);
	mutex_unlock(&r->lock);

	/* Wait for lookups that found an attachment before it went. */
	synchronize_rcu();

	list_for_each_entry_safe(map, map_tmp, &maps, node) {
		list_del(&map->node);
		r->ops->unmap(map);
	}
	netgpu_mem_unlink(r->mem, r->id, r);
	list_for_each_entry_safe(att, tmp, &atts, r_node) {
		list_del(&att->r_node);
		kfree(att);
		/* The caller's reference keeps r. */
		netgpu_region_put(r);
	}
}
EXPORT_SYMBOL_GPL(netgpu_region_revoke);

static void netgpu_region_revoke_work(struct work_struct *work)
{
	struct netgpu_region *r = container_of(work, struct netgpu_region,
					       revoke_work);

	netgpu_region_revoke(r);
	netgpu_region_put(r);
}

/**
 * netgpu_region_revoke_async() - revoke a region from any context
 * @r: the region
 *
 * Makes lookups fail at once and runs netgpu_region_revoke() from a work
 * item, which holds its own reference.  For callbacks that run under
 * locks the core must not take, such as a dma-buf importer's move_notify
 * under the buffer's dma_resv lock.
 *
 * Context: Any context; takes no lock.
 */
void netgpu_region_revoke_async(struct netgpu_region *r)
{
	WRITE_ONCE(r->revoked, true);
	if (!refcount_inc_not_zero(&r->ref))
		return;
	/* Never the last reference: the pending work holds one. */
	if (!queue_work(system_unbound_wq, &r->revoke_work))
		refcount_dec(&r->ref);
}
EXPORT_SYMBOL_GPL(netgpu_region_revoke_async);

/**
 * netgpu_region_flush_revoke() - wait for a pending asynchronous revoke
 * @r: the region; the caller holds a reference
 *
 * Context: Process context, may sleep.  No core lock may be held.
 */
void netgpu_region_flush_revoke(struct netgpu_region *r)
{
	flush_work(&r->revoke_work);
}
EXPORT_SYMBOL_GPL(netgpu_region_flush_revoke);

/**
 * netgpu_region_get_pages() - take references on a region's pages
 * @r: the region
 * @addr: address of the first page
 * @pages: where to store them
 * @count: how many are wanted
 *
 * Never goes past the end of the region (the RFC's get_pages read one
 * entry past its page array).
 *
 * Context: Any context.
 * Return: the number of pages stored (at most @count), -EFAULT if @addr
 * is outside @r, -EOPNOTSUPP if the memory has no pages.
 */
int netgpu_region_get_pages(struct netgpu_region *r, u64 addr,
			    struct page **pages, unsigned int count)
{
	if (!r->ops->get_pages)
		return -EOPNOTSUPP;
	if (addr < r->start || addr - r->start >= r->len)
		return -EFAULT;
	return r->ops->get_pages(r, addr - r->start, pages, count);
}
EXPORT_SYMBOL_GPL(netgpu_region_get_pages);

/* ===== DMA maps ===== */

/* The map of @r for @dev with a new reference: the existing one or new. */
static struct netgpu_dmamap *netgpu_region_get_map(struct netgpu_region *r,
						   struct device *dev)
{
	struct netgpu_dmamap *map;

	lockdep_assert_held(&r->lock);

	list_for_each_entry(map, &r->maps, node) {
		if (map->dev == dev) {
			/* Never zero: unlinked under r->lock when it is. */
			refcount_inc(&map->ref);
			return map;
		}
	}

	map = r->ops->map(r, dev);
	if (IS_ERR(map))
		return map;
	map->r = r;
	map->dev = dev;
	refcount_set(&map->ref, 1);
	list_add_tail(&map->node, &r->maps);
	return map;
}

/* Drop a map reference; return the map if it must now be unmapped. */
static struct netgpu_dmamap *netgpu_region_put_map(struct netgpu_region *r,
						   struct netgpu_dmamap *map)
{
	lockdep_assert_held(&r->lock);

	if (!refcount_dec_and_test(&map->ref))
		return NULL;
	list_del(&map->node);
	return map;
}

/* ===== Contexts ===== */

/**
 * netgpu_memctx_init() - initialise the memory side of a context
 * @mc: the context's memory state
 * @dev: the device its NIC DMAs with (must have a DMA mask)
 *
 * Context: Any context.
 */
void netgpu_memctx_init(struct netgpu_memctx *mc, struct device *dev)
{
	mc->dev = dev;
	mutex_init(&mc->lock);
	xa_init(&mc->xa);
	INIT_LIST_HEAD(&mc->atts);
}
EXPORT_SYMBOL_GPL(netgpu_memctx_init);

static bool netgpu_memctx_overlaps(struct netgpu_memctx *mc,
				   struct netgpu_region *r)
{
	unsigned long index = r->start >> PAGE_SHIFT;

	lockdep_assert_held(&mc->lock);
	return xa_find(&mc->xa, &index, index + r->nr_pages - 1, XA_PRESENT);
}

/**
 * netgpu_memctx_store() - publish one page of an attachment
 * @mc: the context
 * @index: the page (address >> PAGE_SHIFT)
 * @att: the attachment
 *
 * xa_store() retries a node allocation that failed under the xarray's
 * lock, so a single injected fault (fail_nth) never makes it fail: a
 * KUnit test replaces this function (a static stub) to fail the store
 * of a chosen page.
 *
 * Context: Process context, under @mc->lock.
 * Return: 0 or -ENOMEM.
 */
VISIBLE_IF_KUNIT int netgpu_memctx_store(struct netgpu_memctx *mc,
					 unsigned long index,
					 struct netgpu_mem_att *att)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_memctx_store, mc, index, att);
	/* Stores are ordered after the initialisation of *att. */
	return xa_err(xa_store(&mc->xa, index, att, GFP_KERNEL));
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_memctx_store);

/* Make @att visible to lookups, page by page; all or nothing. */
static int netgpu_memctx_publish(struct netgpu_memctx *mc,
				 struct netgpu_mem_att *att)
{
	unsigned long first = att->r->start >> PAGE_SHIFT;
	unsigned long i;
	int err;

	lockdep_assert_held(&mc->lock);

	for (i = 0; i < att->r->nr_pages; i++) {
		err = netgpu_memctx_store(mc, first + i, att);
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	while (i--)
		xa_erase(&mc->xa, first + i);
	return err;
}

/**
 * netgpu_memctx_attach() - attach a region to a context
 * @mc: the context
 * @r: the region; the caller holds a reference
 *
 * Maps the region for the context's device, or shares the map another
 * context on that device made, and makes its addresses visible to
 * netgpu_memctx_lookup().  The attachment holds a region reference.
 *
 * Context: Process context, may sleep.  Takes the region's lock, then the
 * context's.
 * Return: 0, -EEXIST if the region overlaps one already attached (or is
 * attached), -ENODEV if it was revoked, -ENOMEM, or the provider's map
 * error.  On error nothing is left behind.
 */
int netgpu_memctx_attach(struct netgpu_memctx *mc, struct netgpu_region *r)
{
	struct netgpu_mem_att *att;
	struct netgpu_dmamap *map;
	int err;

	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;

	mutex_lock(&r->lock);
	if (r->dead || READ_ONCE(r->revoked)) {
		err = -ENODEV;
		goto err_unlock_region;
	}
	mutex_lock(&mc->lock);
	if (netgpu_memctx_overlaps(mc, r)) {
		err = -EEXIST;
		goto err_unlock_ctx;
	}

	map = netgpu_region_get_map(r, mc->dev);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
		goto err_unlock_ctx;
	}
	att->r = r;
	att->map = map;
	att->mc = mc;

	err = netgpu_memctx_publish(mc, att);
	if (err)
		goto err_put_map;

	list_add_tail(&att->mc_node, &mc->atts);
	list_add_tail(&att->r_node, &r->atts);
	refcount_inc(&r->ref);
	mutex_unlock(&mc->lock);
	mutex_unlock(&r->lock);
	return 0;

err_put_map:
	map = netgpu_region_put_map(r, map);
	mutex_unlock(&mc->lock);
	mutex_unlock(&r->lock);
	/* Lookups may have seen part of what was published. */
	synchronize_rcu();
	if (map)
		r->ops->unmap(map);
	kfree(att);
	return err;

err_unlock_ctx:
	mutex_unlock(&mc->lock);
err_unlock_region:
	mutex_unlock(&r->lock);
	kfree(att);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_memctx_attach);

/**
 * netgpu_memctx_detach() - detach a region from a context
 * @mc: the context
 * @r: the region; the caller holds a reference
 *
 * Unmaps the region for the device if this was the last context there,
 * after lookups already running have finished.
 *
 * Context: Process context, may sleep.  Takes the region's lock, then the
 * context's.
 * Return: 0, or -ENOENT if @r is not attached (any more: a revocation may
 * have detached it).
 */
int netgpu_memctx_detach(struct netgpu_memctx *mc, struct netgpu_region *r)
{
	struct netgpu_mem_att *att, *found = NULL;
	struct netgpu_dmamap *map;

	mutex_lock(&r->lock);
	mutex_lock(&mc->lock);
	list_for_each_entry(att, &mc->atts, mc_node) {
		if (att->r == r) {
			found = att;
			break;
		}
	}
	if (!found) {
		mutex_unlock(&mc->lock);
		mutex_unlock(&r->lock);
		return -ENOENT;
	}
	netgpu_memctx_unpublish(mc, found);
	mutex_unlock(&mc->lock);
	list_del(&found->r_node);
	map = netgpu_region_put_map(r, found->map);
	mutex_unlock(&r->lock);

	synchronize_rcu();
	if (map)
		r->ops->unmap(map);
	kfree(found);
	netgpu_region_put(r);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_memctx_detach);

/**
 * netgpu_memctx_release() - detach every region from a context
 * @mc: the context
 *
 * Context: Process context, may sleep.  No lookup may run on @mc any more.
 */
void netgpu_memctx_release(struct netgpu_memctx *mc)
{
	struct netgpu_mem_att *att;
	struct netgpu_region *r;

	for (;;) {
		mutex_lock(&mc->lock);
		if (list_empty(&mc->atts)) {
			mutex_unlock(&mc->lock);
			break;
		}
		att = list_first_entry(&mc->atts, struct netgpu_mem_att,
				       mc_node);
		r = att->r;
		/* The attachment's reference keeps r while we hold mc->lock. */
		refcount_inc(&r->ref);
		mutex_unlock(&mc->lock);

		/* Lock order: region first.  -ENOENT: revoked meanwhile. */
		netgpu_memctx_detach(mc, r);
		netgpu_region_put(r);
	}
	WARN_ON_ONCE(!xa_empty(&mc->xa));
	xa_destroy(&mc->xa);
	mutex_destroy(&mc->lock);
}
EXPORT_SYMBOL_GPL(netgpu_memctx_release);

/**
 * netgpu_memctx_lookup() - find the DMA address of an address
 * @mc: the context
 * @addr: an address inside a region attached to @mc
 * @loc: where to store the region, map, offset, DMA address and the
 *	length DMA-contiguous from it
 *
 * The data path: takes no lock.  What @loc points to stays valid until
 * the caller leaves its RCU read section; to keep the region longer, take
 * a reference with netgpu_region_tryget() before that.
 *
 * Context: Any context, under rcu_read_lock().
 * Return: 0, -EFAULT if @addr is in no attached region, -ENODEV if its
 * region is being revoked.
 */
int netgpu_memctx_lookup(struct netgpu_memctx *mc, u64 addr,
			 struct netgpu_mem_loc *loc)
{
	unsigned long index = addr >> PAGE_SHIFT;
	struct netgpu_mem_att *att;
	struct netgpu_region *r;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(),
			 "memctx lookup without rcu_read_lock()");

	/* Only a 32-bit unsigned long can truncate the index. */
	if (index != addr >> PAGE_SHIFT)
		return -EFAULT;
	att = xa_load(&mc->xa, index);
	if (!att)
		return -EFAULT;
	r = att->r;
	if (READ_ONCE(r->revoked))
		return -ENODEV;

	loc->r = r;
	loc->map = att->map;
	loc->off = addr - r->start;
	return r->ops->dma(att->map, loc->off, &loc->dma, &loc->len);
}
EXPORT_SYMBOL_GPL(netgpu_memctx_lookup);
