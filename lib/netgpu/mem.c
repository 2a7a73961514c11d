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
#include <linux/device.h>
#include <linux/err.h>
#include <linux/kmod.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "mem_priv.h"

/*
 * Deferred releases, revocations and unmaps run here rather than on a
 * system workqueue: the built-in providers hold no module reference, so
 * netgpu_mem_exit() must drain them before the library's text goes.
 */
static struct workqueue_struct *netgpu_mem_wq;

/**
 * netgpu_mem_init() - bring up the memory unit
 *
 * Context: Process context, from the library's init.
 * Return: 0 or -ENOMEM.
 */
int netgpu_mem_init(void)
{
	netgpu_mem_wq = alloc_workqueue("netgpu_mem", WQ_UNBOUND, 0);
	return netgpu_mem_wq ? 0 : -ENOMEM;
}

/**
 * netgpu_mem_exit() - wait for the memory unit's deferred work
 *
 * Runs every release, revocation and unmap still queued, then frees the
 * workqueue.
 *
 * Context: Process context, from the library's exit.
 */
void netgpu_mem_exit(void)
{
	destroy_workqueue(netgpu_mem_wq);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * netgpu_mem_flush() - wait for the memory unit's deferred work
 *
 * For tests: revocations, releases and unmaps queued so far have run
 * when this returns.
 *
 * Context: Process context, may sleep; no core lock held.
 */
void netgpu_mem_flush(void)
{
	flush_workqueue(netgpu_mem_wq);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_mem_flush);
#endif

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

	mem = kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT);
	if (!mem)
		return NULL;

	xa_init_flags(&mem->regions, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
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
 * Return: the region's id (> 0), or -EINVAL (bad type, range or flag),
 * -EOVERFLOW (the range does not fit this machine's unsigned long),
 * -EOPNOTSUPP (no provider for the type), -ENODEV (area closed, also by
 * a close running concurrently; or the memory's provider is going
 * away), -EBUSY (no id left), -ENOMEM, or the provider's error.  On
 * error nothing is left behind.
 */
int netgpu_mem_add_region(struct netgpu_mem *mem,
			  const struct netgpu_region_desc *desc)
{
	const struct netgpu_mem_ops *ops;
	struct netgpu_region *r;
	u32 id;
	int err;

	if (desc->flags & ~NETGPU_REGION_DESC_P2PDMA)
		return -EINVAL;
	ops = netgpu_mem_get_ops(desc->type);
	if (IS_ERR(ops))
		return PTR_ERR(ops);

	/*
	 * The region's reference on the area, taken first: a close running
	 * meanwhile drops the open reference and must not free @mem under
	 * us.
	 */
	refcount_inc(&mem->ref);
	r = ops->add(mem, desc);
	if (IS_ERR(r)) {
		module_put(ops->owner);
		netgpu_mem_put(mem);
		return PTR_ERR(r);
	}
	/* From here on, netgpu_region_put() undoes everything. */
	r->ops = ops;
	r->mem = mem;

	/*
	 * The provider computed the page count in an unsigned long: on
	 * 32-bit it must cover @len exactly, and every page index of the
	 * region must fit the context's xarray index.
	 */
	if (!r->nr_pages || r->len != (u64)r->nr_pages << PAGE_SHIFT ||
	    (r->start >> PAGE_SHIFT) + r->nr_pages - 1 > ULONG_MAX) {
		netgpu_region_put(r);
		return -EOVERFLOW;
	}

	xa_lock(&mem->regions);
	/* Sets r->id under the lock, before anyone can find r. */
	err = __xa_alloc(&mem->regions, &r->id, r, xa_limit_31b, GFP_KERNEL);
	/*
	 * A closed area takes no region: closed before, or by a close that
	 * ran while __xa_alloc() dropped the lock to allocate a node, whose
	 * sweep may have missed r (or waits for the lock to unlink it, and
	 * then finds it gone).
	 */
	if (!err && mem->closed) {
		__xa_erase(&mem->regions, r->id);
		err = -ENODEV;
	}
	/*
	 * Nor one its provider revoked already (its device went while it
	 * was being added): the caller would get the id of a region that
	 * can never be attached.  One revoked from here on stays, revoked,
	 * for the caller to remove.
	 */
	if (!err && READ_ONCE(r->revoked)) {
		__xa_erase(&mem->regions, r->id);
		err = -ENODEV;
	}
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
 * Context: Process context.  Takes the area's xa_lock, which is neither
 * bh- nor irq-safe.
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
static void netgpu_region_free_work(struct work_struct *work);

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
	mutex_init(&r->revoke_lock);
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->maps);
	INIT_LIST_HEAD(&r->atts);
	INIT_WORK(&r->revoke_work, netgpu_region_revoke_work);
	INIT_WORK(&r->free_work, netgpu_region_free_work);
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
	mutex_destroy(&r->revoke_lock);
	ops->release(r);
	/* Not safe to reference r afterwards. */
	module_put(ops->owner);
	netgpu_mem_put(mem);
}

static void netgpu_region_free_work(struct work_struct *work)
{
	netgpu_region_free(container_of(work, struct netgpu_region,
					free_work));
}

/**
 * netgpu_region_put() - drop a region reference
 * @r: the region
 *
 * The last reference releases the provider's memory (unpin and unaccount,
 * or drop the dma-buf), the provider module and the area.  The release
 * may sleep: dropped in interrupt context, or with bottom halves or
 * interrupts disabled (the data path), it runs later from a work item.
 *
 * Context: Any context.  In process context the last reference releases
 * at once and may sleep: it must not be dropped there under a spinlock or
 * rcu_read_lock() (a PREEMPT_NONE kernel cannot tell; drop it after
 * leaving the read section).
 */
void netgpu_region_put(struct netgpu_region *r)
{
	if (!refcount_dec_and_test(&r->ref))
		return;
	if (in_interrupt() || irqs_disabled())
		queue_work(netgpu_mem_wq, &r->free_work);
	else
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

	for (i = 0; i < att->r->nr_pages; i++) {
		xa_erase(&mc->xa, first + i);
		cond_resched();
	}
	list_del(&att->mc_node);
}

/**
 * netgpu_memctx_revoke_done() - a revocation is done with a context
 * @mc: the context, whose @revokers count the caller raised
 *
 * The last touch of @mc by a revocation: once the count drops to zero,
 * netgpu_memctx_release() may return and its caller free @mc.  Out of
 * line so that a KUnit test can hold a revocation here.
 *
 * Context: Any context.
 */
VISIBLE_IF_KUNIT void netgpu_memctx_revoke_done(struct netgpu_memctx *mc)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_memctx_revoke_done, mc);
	/* wake_up_var() only hashes the address: @mc may be gone by then. */
	if (atomic_dec_and_test(&mc->revokers))
		wake_up_var(&mc->revokers);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_memctx_revoke_done);

/**
 * netgpu_mem_synchronize_rcu() - wait for the lookups of unpublished pages
 *
 * synchronize_rcu(), the memory unit's every grace period.  Out of line
 * so that a KUnit test can count them (kunit_activate_static_stub()):
 * releasing a context waits for one, however many regions it detaches
 * (review 2, LM2), and not under rtnl_lock.
 *
 * Context: Process context, may sleep; no spinlock or RCU read side held.
 */
VISIBLE_IF_KUNIT void netgpu_mem_synchronize_rcu(void)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_mem_synchronize_rcu);
	synchronize_rcu();
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_mem_synchronize_rcu);

/* Retire maps whose last attachment went; see netgpu_dmamap_retire(). */
static void netgpu_dmamap_retire(struct netgpu_dmamap *map);

/*
 * netgpu_region_revoke() and netgpu_region_revoke_provider(): the area
 * drops its link to @r when @unlink says so.
 */
static void __netgpu_region_revoke(struct netgpu_region *r, bool unlink)
{
	struct netgpu_dmamap *map, *map_tmp;
	struct netgpu_mem_att *att, *tmp;
	LIST_HEAD(maps);
	LIST_HEAD(atts);

	might_sleep();
	WRITE_ONCE(r->revoked, true);

	mutex_lock(&r->revoke_lock);
	mutex_lock(&r->lock);
	r->dead = true;
	list_for_each_entry_safe(att, tmp, &r->atts, r_node) {
		struct netgpu_memctx *mc = att->mc;

		/* Keeps mc: netgpu_memctx_release() waits for it. */
		atomic_inc(&mc->revokers);
		mutex_lock(&mc->lock);
		netgpu_memctx_unpublish(mc, att);
		mutex_unlock(&mc->lock);
		if (mc->revoked)
			mc->revoked(mc);
		netgpu_memctx_revoke_done(mc);
		list_move(&att->r_node, &atts);
	}
	list_splice_init(&r->maps, &maps);
	mutex_unlock(&r->lock);

	/* Wait for lookups that found an attachment before it went. */
	netgpu_mem_synchronize_rcu();

	list_for_each_entry_safe(map, map_tmp, &maps, node) {
		list_del(&map->node);
		netgpu_dmamap_retire(map);
	}
	if (unlink)
		netgpu_mem_unlink(r->mem, r->id, r);
	list_for_each_entry_safe(att, tmp, &atts, r_node) {
		list_del(&att->r_node);
		kfree(att);
		/* The caller's reference keeps r. */
		netgpu_region_put(r);
	}
	mutex_unlock(&r->revoke_lock);
}

/**
 * netgpu_region_revoke() - detach a region from everything and unmap it
 * @r: the region; the caller holds a reference
 *
 * For providers whose memory goes away (the device removed, the owner
 * withdrawing it).  Lookups fail from the moment this is called; one
 * already running keeps a valid map until it leaves its RCU read section.
 * The region is detached from every context, every DMA map is retired
 * (unmapped now, or when the last buffer the device still holds comes
 * back: netgpu_dmamap_inflight_sub()) and the area drops it; it is freed
 * when the last reference goes, never before its maps are unmapped.  (A
 * provider that keeps the region in its area for its user to remove calls
 * netgpu_region_revoke_provider() instead.)  Idempotent, and
 * serialized: a caller racing another returns only once that one is
 * done.  Allocates nothing, so it cannot fail.
 *
 * Context: Process context, may sleep.  Takes the region's and the
 * contexts' locks.
 */
void netgpu_region_revoke(struct netgpu_region *r)
{
	__netgpu_region_revoke(r, true);
}
EXPORT_SYMBOL_GPL(netgpu_region_revoke);

/**
 * netgpu_region_revoke_provider() - revoke a region whose memory went away
 * @r: the region; the caller holds a reference
 *
 * For a provider whose memory is taken back by its owner (the PCI device
 * that published it unbound from its driver, or removed): as
 * netgpu_region_revoke(), but the region keeps its id in its area until
 * its user removes it (NETGPU_MEM_IOCTL_REMOVE_REGION) or closes the
 * area.  The user did not ask for it: it learns of it from the queues
 * that stop and from the -ENODEV of a later attach, and its id is not
 * given to another region meanwhile.  What backs the region is the
 * provider's to release once its maps are unmapped (the region's own
 * memory stays until the last reference goes).
 *
 * Context: Process context, may sleep.  Takes the region's and the
 * contexts' locks.
 */
void netgpu_region_revoke_provider(struct netgpu_region *r)
{
	__netgpu_region_revoke(r, false);
}
EXPORT_SYMBOL_GPL(netgpu_region_revoke_provider);

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
 * item, which holds its own reference.  The caller holds a reference on
 * @r (regions are not freed after a grace period).  For owners that must revoke
 * under locks the core must not take, such as a device-removal path
 * holding a spinlock.
 *
 * Context: Any context; takes no lock.
 */
void netgpu_region_revoke_async(struct netgpu_region *r)
{
	WRITE_ONCE(r->revoked, true);
	if (!refcount_inc_not_zero(&r->ref))
		return;
	/* Never the last reference: the pending work holds one. */
	if (!queue_work(netgpu_mem_wq, &r->revoke_work))
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
 * Never goes past the end of the region.
 *
 * Context: Any context.
 * Return: the number of pages stored (at most @count), -EFAULT if @addr
 * is outside @r, -EOPNOTSUPP if the memory has no pages or is a device's
 * (&netgpu_region.device: its pages are not for the CPU nor the stack).
 */
int netgpu_region_get_pages(struct netgpu_region *r, u64 addr,
			    struct page **pages, unsigned int count)
{
	/* Tests stand in for a provider that fails. */
	KUNIT_STATIC_STUB_REDIRECT(netgpu_region_get_pages, r, addr, pages,
				   count);
	if (!r->ops->get_pages || r->device)
		return -EOPNOTSUPP;
	if (addr < r->start || addr - r->start >= r->len)
		return -EFAULT;
	return r->ops->get_pages(r, addr - r->start, pages, count);
}
EXPORT_SYMBOL_GPL(netgpu_region_get_pages);

/**
 * netgpu_region_cpu_writable() - may the CPU write a region's memory?
 * @r: the region
 *
 * True for memory with pages the kernel may map (host memory): the
 * receive path copies data that arrived in ordinary memory only there,
 * never into device memory (a dma-buf, or host pages of a device's PCI
 * peer-to-peer memory).
 *
 * Context: Any context.
 */
bool netgpu_region_cpu_writable(const struct netgpu_region *r)
{
	return r->ops->get_pages && !r->device;
}
EXPORT_SYMBOL_GPL(netgpu_region_cpu_writable);

/* ===== DMA maps ===== */

static void netgpu_dmamap_unmap(struct netgpu_dmamap *map)
{
	struct netgpu_region *r = map->r;
	struct device *dev = map->dev;

	r->ops->unmap(map);
	/* Not safe to reference map afterwards. */
	put_device(dev);
	netgpu_region_put(r);
}

static void netgpu_dmamap_unmap_work(struct work_struct *work)
{
	netgpu_dmamap_unmap(container_of(work, struct netgpu_dmamap,
					 unmap_work));
}

/*
 * The last attachment of @map went and lookups that found it have left
 * their read sections: unmap it now, or when the last buffer in flight
 * comes back.  Until then the map holds its region, and with it the
 * memory the device may still write to.
 */
static void netgpu_dmamap_retire(struct netgpu_dmamap *map)
{
	/* The caller holds a reference on the region. */
	refcount_inc(&map->r->ref);
	if (atomic_long_dec_and_test(&map->inflight))
		netgpu_dmamap_unmap(map);
}

/**
 * netgpu_dmamap_inflight_add() - count buffers of a map handed out
 * @map: the map, from netgpu_memctx_lookup()
 * @n: how many buffers the device, the stack or user space now holds
 *
 * A map whose last attachment goes is unmapped only once every buffer
 * counted here came back through netgpu_dmamap_inflight_sub(): the
 * device may write to a buffer until then.
 *
 * Context: Any context, under the rcu_read_lock() of the lookup that
 * returned @map, or while holding an in-flight count on @map already.
 */
void netgpu_dmamap_inflight_add(struct netgpu_dmamap *map, long n)
{
	/* Never from zero: the bias or the caller's count is held. */
	WARN_ON_ONCE(atomic_long_add_return(n, &map->inflight) <= n);
}
EXPORT_SYMBOL_GPL(netgpu_dmamap_inflight_add);

/**
 * netgpu_dmamap_inflight_sub() - buffers of a map came back
 * @map: the map
 * @n: how many buffers, counted by netgpu_dmamap_inflight_add()
 *
 * The last buffer of a map that is no longer attached unmaps it, from a
 * work item.
 *
 * Context: Any context.  @map may be gone when this returns.
 */
void netgpu_dmamap_inflight_sub(struct netgpu_dmamap *map, long n)
{
	long left = atomic_long_sub_return(n, &map->inflight);

	if (WARN_ON_ONCE(left < 0))
		return;
	if (!left)
		queue_work(netgpu_mem_wq, &map->unmap_work);
}
EXPORT_SYMBOL_GPL(netgpu_dmamap_inflight_sub);

#if IS_ENABLED(CONFIG_KUNIT)
struct static_key_false netgpu_data_path_stubs = STATIC_KEY_FALSE_INIT;
EXPORT_SYMBOL_IF_KUNIT(netgpu_data_path_stubs);
#endif

/**
 * netgpu_dmamap_sync_for_cpu() - make what the device wrote visible
 * @map: the map; the caller holds an in-flight count on it
 * @off: byte offset in the map's region
 * @len: bytes
 *
 * Before user space may read a buffer the device wrote: with swiotlb or
 * non-coherent DMA the data reaches the pages only here.  A KUnit case
 * may redirect it (kunit_activate_static_stub(), with
 * netgpu_data_path_stubs on) to count the syncs.
 *
 * Context: Any context.
 */
void netgpu_dmamap_sync_for_cpu(const struct netgpu_dmamap *map, u64 off,
				u64 len)
{
#if IS_ENABLED(CONFIG_KUNIT)
	if (static_branch_unlikely(&netgpu_data_path_stubs))
		KUNIT_STATIC_STUB_REDIRECT(netgpu_dmamap_sync_for_cpu, map, off,
					   len);
#endif
	/* Never past the region: off and len are u64, page indices not. */
	if (off >= map->r->len || len > map->r->len - off)
		return;
	if (map->r->ops->sync_for_cpu)
		map->r->ops->sync_for_cpu(map, off, len);
}
EXPORT_SYMBOL_GPL(netgpu_dmamap_sync_for_cpu);

/**
 * netgpu_dmamap_sync_for_device() - give a buffer back to the device
 * @map: the map; the caller holds an in-flight count on it
 * @off: byte offset in the map's region
 * @len: bytes
 *
 * Before every handout of a buffer to the device, the first included:
 * maps are made without CPU syncs (DMA_ATTR_SKIP_CPU_SYNC), so this is
 * what cleans the CPU's cache lines over the buffer on a non-coherent
 * system, as page_pool's PP_FLAG_DMA_SYNC_DEV does.  A KUnit case may
 * redirect it (kunit_activate_static_stub(), with
 * netgpu_data_path_stubs on) to count the syncs.
 *
 * Context: Any context.
 */
void netgpu_dmamap_sync_for_device(const struct netgpu_dmamap *map, u64 off,
				   u64 len)
{
#if IS_ENABLED(CONFIG_KUNIT)
	if (static_branch_unlikely(&netgpu_data_path_stubs))
		KUNIT_STATIC_STUB_REDIRECT(netgpu_dmamap_sync_for_device, map,
					   off, len);
#endif
	if (off >= map->r->len || len > map->r->len - off)
		return;
	if (map->r->ops->sync_for_device)
		map->r->ops->sync_for_device(map, off, len);
}
EXPORT_SYMBOL_GPL(netgpu_dmamap_sync_for_device);

/**
 * netgpu_dmamap_dma() - DMA address of a byte of a mapped region
 * @map: the map; the caller holds an in-flight count on it, or is in the
 *	RCU read section of the lookup that returned it
 * @off: byte offset in the map's region
 * @dma: where to store the DMA address
 * @len: where to store the number of bytes DMA-contiguous from @dma
 *
 * Context: Any context.
 * Return: 0, or -EFAULT if @off is outside the region.
 */
int netgpu_dmamap_dma(const struct netgpu_dmamap *map, u64 off,
		      dma_addr_t *dma, u64 *len)
{
	if (off >= map->r->len)
		return -EFAULT;
	return map->r->ops->dma(map, off, dma, len);
}
EXPORT_SYMBOL_GPL(netgpu_dmamap_dma);

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
	/* An unmap deferred until buffers come back outlives its users. */
	map->dev = get_device(dev);
	refcount_set(&map->ref, 1);
	atomic_long_set(&map->inflight, 1);
	INIT_WORK(&map->unmap_work, netgpu_dmamap_unmap_work);
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
	/* One entry per page: charged to the user's memory cgroup. */
	xa_init_flags(&mc->xa, XA_FLAGS_ACCOUNT);
	INIT_LIST_HEAD(&mc->atts);
	atomic_set(&mc->revokers, 0);
	mc->revoked = NULL;
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
		cond_resched();
	}
	return 0;

err_erase:
	while (i--) {
		xa_erase(&mc->xa, first + i);
		cond_resched();
	}
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
 * error (the host provider's -EREMOTEIO: peer-to-peer memory the device
 * cannot reach).  On error nothing is left behind.
 */
int netgpu_memctx_attach(struct netgpu_memctx *mc, struct netgpu_region *r)
{
	struct netgpu_mem_att *att;
	struct netgpu_dmamap *map;
	int err;

	att = kzalloc(sizeof(*att), GFP_KERNEL_ACCOUNT);
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
	netgpu_mem_synchronize_rcu();
	if (map)
		netgpu_dmamap_retire(map);
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

/*
 * Unlink @r's attachment from @mc; *@map is its map to retire (or NULL)
 * once lookups already running are done.  Returns the attachment, or
 * NULL if @r is not attached (any more).
 */
static struct netgpu_mem_att *
netgpu_memctx_unlink(struct netgpu_memctx *mc, struct netgpu_region *r,
		     struct netgpu_dmamap **map)
{
	struct netgpu_mem_att *att, *found = NULL;

	mutex_lock(&r->lock);
	mutex_lock(&mc->lock);
	list_for_each_entry(att, &mc->atts, mc_node) {
		if (att->r == r) {
			found = att;
			break;
		}
	}
	if (found) {
		netgpu_memctx_unpublish(mc, found);
		list_del(&found->r_node);
		*map = netgpu_region_put_map(r, found->map);
	}
	mutex_unlock(&mc->lock);
	mutex_unlock(&r->lock);
	return found;
}

/**
 * netgpu_memctx_detach() - detach a region from a context
 * @mc: the context
 * @r: the region; the caller holds a reference
 *
 * Retires the region's map for the device if this was the last context
 * there, after lookups already running have finished: it is unmapped at
 * once, or when the last of its buffers in flight comes back.
 *
 * Context: Process context, may sleep.  Takes the region's lock, then the
 * context's.
 * Return: 0, or -ENOENT if @r is not attached (any more: a revocation may
 * have detached it).
 */
int netgpu_memctx_detach(struct netgpu_memctx *mc, struct netgpu_region *r)
{
	struct netgpu_dmamap *map = NULL;
	struct netgpu_mem_att *att;

	att = netgpu_memctx_unlink(mc, r, &map);
	if (!att)
		return -ENOENT;
	netgpu_mem_synchronize_rcu();
	if (map)
		netgpu_dmamap_retire(map);
	kfree(att);
	netgpu_region_put(r);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_memctx_detach);

/**
 * netgpu_memctx_release() - detach every region from a context
 * @mc: the context
 *
 * Returns once no revocation touches @mc any more: the caller may free it.
 *
 * Context: Process context, may sleep.  No lookup may run on @mc any more.
 */
void netgpu_memctx_release(struct netgpu_memctx *mc)
{
	struct netgpu_mem_att *att, *tmp;
	struct netgpu_dmamap *map;
	struct netgpu_region *r;
	LIST_HEAD(gone);

	/*
	 * Unpublish every attachment, then one grace period for all of
	 * them, then retire the maps: not a grace period per region (the
	 * caller may hold rtnl_lock: NETDEV_UNREGISTER).
	 */
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

		/* Lock order: region first.  NULL: revoked meanwhile. */
		map = NULL;
		att = netgpu_memctx_unlink(mc, r, &map);
		if (att) {
			/* No longer on any list: its nodes are ours. */
			att->map = map;
			list_add_tail(&att->mc_node, &gone);
		}
		netgpu_region_put(r);
	}
	if (!list_empty(&gone))
		netgpu_mem_synchronize_rcu();
	list_for_each_entry_safe(att, tmp, &gone, mc_node) {
		r = att->r;
		if (att->map)
			netgpu_dmamap_retire(att->map);
		kfree(att);
		netgpu_region_put(r);
		cond_resched();
	}
	/* A revocation may have unlinked the last attachment for us. */
	wait_var_event(&mc->revokers, !atomic_read(&mc->revokers));
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

/**
 * netgpu_memctx_hold() - hold every region attached to a context
 * @mc: the context
 * @holds: where to store a new array of the holds (kvfree() it)
 *
 * For the one user that hands the regions' buffers to a device for
 * longer than an RCU read section (an interface queue): each region is
 * held, and its map with an in-flight count, so that neither a detach
 * nor a revocation unmaps it until netgpu_mem_hold_unmap() or
 * netgpu_mem_hold_put().  A region is held by one holder at a time: a
 * second would hand the same memory to another queue.  A region revoked
 * or detached meanwhile stops being found by lookups; what the holder
 * does with its buffers is its business.
 *
 * Context: Process context, may sleep.  Takes @mc->lock.
 * Return: the number of holds stored (0 with none attached: *@holds is
 * then NULL), -EBUSY if another holder holds one of the regions, or
 * -ENOMEM.
 */
int netgpu_memctx_hold(struct netgpu_memctx *mc,
		       struct netgpu_mem_hold **holds)
{
	struct netgpu_mem_att *att;
	struct netgpu_mem_hold *h;
	int n = 0, i = 0;

	mutex_lock(&mc->lock);
	list_for_each_entry(att, &mc->atts, mc_node)
		n++;
	*holds = NULL;
	if (!n)
		goto out_unlock;
	h = kvcalloc(n, sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h) {
		n = -ENOMEM;
		goto out_unlock;
	}
	/* Attached: the region's reference and the map's bias are held. */
	list_for_each_entry(att, &mc->atts, mc_node) {
		if (atomic_cmpxchg(&att->r->holder, 0, 1)) {
			while (i--)
				netgpu_mem_hold_put(&h[i]);
			kvfree(h);
			n = -EBUSY;
			goto out_unlock;
		}
		refcount_inc(&att->r->ref);
		netgpu_dmamap_inflight_add(att->map, 1);
		h[i].r = att->r;
		h[i].map = att->map;
		h[i].start = att->r->start;
		h[i].nr_pages = att->r->nr_pages;
		i++;
	}
	*holds = h;
out_unlock:
	mutex_unlock(&mc->lock);
	return n;
}
EXPORT_SYMBOL_GPL(netgpu_memctx_hold);

/**
 * netgpu_mem_hold_unmap() - let go of a held map, keep the region
 * @h: a hold
 *
 * For a holder whose device can no longer write the buffers (the device
 * went, or its queue was restarted without them): the map is unmapped
 * here (from a work item) if it was retired and this was its last buffer
 * in flight.  Does nothing the second time.
 *
 * Context: Any context.
 */
void netgpu_mem_hold_unmap(struct netgpu_mem_hold *h)
{
	if (!h->map)
		return;
	netgpu_dmamap_inflight_sub(h->map, 1);
	h->map = NULL;
}
EXPORT_SYMBOL_GPL(netgpu_mem_hold_unmap);

/**
 * netgpu_mem_hold_revoked() - whether a held region was revoked
 * @h: the hold
 *
 * A revoked region is no longer found by lookups; its holder decides
 * when to stop handing its buffers to a device (an interface queue
 * unbinds).
 *
 * Context: Any context.
 * Return: true once netgpu_region_revoke() (or the asynchronous form)
 * was called on the region.
 */
bool netgpu_mem_hold_revoked(const struct netgpu_mem_hold *h)
{
	return READ_ONCE(h->r->revoked);
}
EXPORT_SYMBOL_GPL(netgpu_mem_hold_revoked);

/**
 * netgpu_mem_hold_put() - drop what netgpu_memctx_hold() took
 * @h: one hold
 *
 * Unmaps as netgpu_mem_hold_unmap() unless that ran, and lets the region
 * be held again.
 *
 * Context: Any context (the region's release is deferred where it must).
 */
void netgpu_mem_hold_put(struct netgpu_mem_hold *h)
{
	netgpu_mem_hold_unmap(h);
	atomic_set(&h->r->holder, 0);
	netgpu_region_put(h->r);
}
EXPORT_SYMBOL_GPL(netgpu_mem_hold_put);
