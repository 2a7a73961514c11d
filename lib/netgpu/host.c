// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu host memory provider: pages of the calling process, pinned
 * FOLL_LONGTERM, DMA-mapped page by page.  Accounting follows io_uring's
 * registered buffers: unless the area's creator had CAP_IPC_LOCK, the
 * pages are charged to the creator's user (locked_vm) against the
 * RLIMIT_MEMLOCK of the task registering them; and, as RDMA does, to
 * that task's mm->pinned_vm (VmPin in /proc/<pid>/status) in every case.
 *
 * A region added with NETGPU_REGION_DESC_P2PDMA is a mapping of PCI
 * peer-to-peer memory instead (a device's BAR with ZONE_DEVICE pages, as
 * the mmap() of /sys/bus/pci/devices/<bdf>/p2pmem/allocate gives): its
 * pages are pinned with FOLL_PCI_P2PDMA, which GUP does not take with
 * FOLL_LONGTERM (the provider's pagemap must stay removable; its removal
 * waits for the pins); they are charged nowhere, since they are not RAM
 * (RLIMIT_MEMLOCK and VmPin bound what a process takes from reclaim; the
 * device's published memory is bounded by its BAR, and allocating it
 * takes the sysfs file's permission); and they are mapped for a device
 * with dma_map_sgtable(), the DMA API's P2PDMA-aware path, once
 * pci_p2pdma_distance() says the device reaches them.  The CPU never
 * touches them: no syncs, no copies into them, no transmit from them
 * (&netgpu_region.device).  Without CONFIG_PCI_P2PDMA such a region is
 * refused with -EOPNOTSUPP and the rest is compiled out.
 *
 * The provider may go at any time: its driver unbound (sysfs unbind,
 * rmmod) or the device hot-unplugged.  Its pagemap's removal
 * (memunmap_pages(), from the driver's devres) waits for every page to
 * be freed, under the device's lock, so a pin held across it would hang
 * the unbind for as long as the region lives, which user space decides.
 * A PCI bus notifier (BUS_NOTIFY_UNBIND_DRIVER, before the driver's
 * remove and its devres) takes the memory back first: every region over
 * the device's memory is revoked (netgpu_region_revoke_provider(): the
 * queues holding it stop, its maps are retired), its pages are unpinned
 * once the last map is unmapped (the NIC writes nowhere by then), and the
 * notifier returns when they are; from then until the driver is gone, a
 * region over that device's memory is refused (-ENODEV).  It revokes
 * every region of the device before it waits for any; the wait (for the
 * contexts' revoke work: their lock, rtnl_lock) is shown to lockdep
 * through netgpu_p2p_revoke_map, and says in the log every 10 s which
 * region it still waits for.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mem_priv.h"

/* pin_user_pages_fast() counts pages in an int. */
#define NETGPU_HOST_MAX_PAGES	((unsigned long)INT_MAX)

/**
 * struct netgpu_host_region - a region of pinned user pages
 * @r: core region
 * @pages: @r.nr_pages pinned pages
 * @user: user charged, or NULL when not accounted
 * @acct_pages: pages charged to @user
 * @mm: the mm the pages were pinned from, charged in its pinned_vm
 *	(a reference is held: mmgrab()); NULL for peer-to-peer memory
 * @provider: peer-to-peer memory (@r.device): the PCI device that
 *	published it (a reference is held until the region is freed, so
 *	that the pointer names that device and no later one); else NULL
 * @p2p_node: peer-to-peer memory: in netgpu_host_p2p_regions while
 *	pinned
 * @p2p_maps: peer-to-peer memory: DMA maps not unmapped yet (and map
 *	ops running)
 * @p2p_gone: peer-to-peer memory: the provider is going away; no new
 *	map, and the last one unmapped unpins the pages
 * @unpinned: peer-to-peer memory: the pages were unpinned before the
 *	region's release (its provider went)
 * @unpin_done: completed when @unpinned is set
 * @p2p_revoking: peer-to-peer memory: in the list of the regions the bus
 *	notifier revokes and waits for (its own, on its stack); only the
 *	notifier that set @p2p_gone touches it
 *
 * The p2p fields (but @p2p_revoking) and @unpinned are under
 * netgpu_host_p2p_lock.
 */
struct netgpu_host_region {
	struct netgpu_region	r;
	struct page		**pages;
	struct user_struct	*user;
	unsigned long		acct_pages;
	struct mm_struct	*mm;
	struct pci_dev		*provider;
	struct list_head	p2p_node;
	unsigned int		p2p_maps;
	bool			p2p_gone;
	bool			unpinned;
	struct completion	unpin_done;
	struct list_head	p2p_revoking;
};

/**
 * struct netgpu_host_map - DMA addresses of a host region's pages
 * @map: core map
 * @sgt: peer-to-peer memory: the pages, one segment each, as
 *	dma_map_sgtable() mapped them; else unused (@sgt.sgl NULL: RAM is
 *	mapped page by page)
 * @nr_pages: entries in @dma
 * @dma: one per page
 */
struct netgpu_host_map {
	struct netgpu_dmamap	map;
	struct sg_table		sgt;
	unsigned long		nr_pages;
	dma_addr_t		dma[];
};

static struct netgpu_host_region *to_host_region(struct netgpu_region *r)
{
	return container_of(r, struct netgpu_host_region, r);
}

static const struct netgpu_host_map *
to_host_map(const struct netgpu_dmamap *map)
{
	return container_of(map, struct netgpu_host_map, map);
}

/*
 * Protects: netgpu_host_p2p_regions, netgpu_host_p2p_going, and the p2p
 * fields and &netgpu_host_region.unpinned of each peer-to-peer region.
 * Ordering: a leaf.  Taken in the map op (under &netgpu_region.lock and
 * &netgpu_memctx.lock), the unmap and release ops, the add op, and the
 * bus notifier (under the provider's device_lock), which never holds it
 * across a revocation or a wait.  Unpinning under it frees pages of the
 * provider's pagemap, which takes none of our locks.
 */
static DEFINE_MUTEX(netgpu_host_p2p_lock);

/* Peer-to-peer regions still pinned (&netgpu_host_region.p2p_node). */
static LIST_HEAD(netgpu_host_p2p_regions);

/**
 * struct netgpu_host_p2p_going - a PCI device whose driver is going away
 * @node: in netgpu_host_p2p_going
 * @pdev: the device; its driver core reference outlives the entry, which
 *	goes at BUS_NOTIFY_UNBOUND_DRIVER, BUS_NOTIFY_BIND_DRIVER or
 *	BUS_NOTIFY_DEL_DEVICE
 *
 * From BUS_NOTIFY_UNBIND_DRIVER (or DRIVER_NOT_BOUND: the probe failed
 * after publishing) until its driver's devres is released, the device
 * may still have published memory whose mappings user space can pin: a
 * region over it created then would hang the pagemap's removal, so it is
 * refused.
 */
struct netgpu_host_p2p_going {
	struct list_head	node;
	struct pci_dev		*pdev;
};

static LIST_HEAD(netgpu_host_p2p_going);

/**
 * netgpu_host_account_window() - between the read of a charge and its store
 * @user: the user being charged
 *
 * Does nothing.  netgpu_host_account() calls it after it read and checked
 * @user's locked_vm and before its compare-and-exchange, so that a KUnit
 * case can charge @user there as another task would
 * (kunit_activate_static_stub()) and see the exchange fail and retry.
 *
 * Context: Process context.
 */
VISIBLE_IF_KUNIT void netgpu_host_account_window(struct user_struct *user)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_account_window, user);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_account_window);

/* Charge @nr_pages to @user against the caller's RLIMIT_MEMLOCK. */
static int netgpu_host_account(struct user_struct *user,
			       unsigned long nr_pages)
{
	unsigned long limit, cur, new;

	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	cur = atomic_long_read(&user->locked_vm);
	do {
		if (check_add_overflow(cur, nr_pages, &new) || new > limit)
			return -ENOMEM;
		netgpu_host_account_window(user);
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

static void netgpu_host_unaccount(struct user_struct *user,
				  unsigned long nr_pages)
{
	atomic_long_sub(nr_pages, &user->locked_vm);
}

/*
 * Every page of [@start, @end) is in a writable mapping of ordinary pages
 * of the caller's (what the FOLL_WRITE | FOLL_LONGTERM pin takes):
 * checked before anything is sized by the length, which user space
 * chooses, so that a huge PROT_NONE reservation is refused as cheaply as
 * a hole.  The pin finds any other reason to refuse a page.
 */
static int netgpu_host_check_mapped(unsigned long start, unsigned long end)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int err = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (start < end) {
		vma = vma_lookup(mm, start);
		if (!vma || !(vma->vm_flags & VM_WRITE) ||
		    (vma->vm_flags & (VM_IO | VM_PFNMAP))) {
			err = -EFAULT;
			break;
		}
		start = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return err;
}

/**
 * netgpu_host_p2p_pgmap() - the P2PDMA pagemap of a page
 * @page: a pinned page of a peer-to-peer region
 *
 * Out of line so that a KUnit test can take pages of anonymous memory
 * for peer-to-peer memory (kunit_activate_static_stub()): no test
 * machine has a device publishing such memory.
 *
 * Context: Any context.
 * Return: the page's pagemap (one BAR of one device) if it is PCI
 * peer-to-peer memory, else NULL.
 */
VISIBLE_IF_KUNIT struct dev_pagemap *netgpu_host_p2p_pgmap(struct page *page)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_p2p_pgmap, page);
	return is_pci_p2pdma_page(page) ? page->pgmap : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_pgmap);

/**
 * netgpu_host_p2p_provider() - the PCI device that published a pagemap
 * @pgmap: a P2PDMA pagemap, from netgpu_host_p2p_pgmap()
 *
 * The P2PDMA core keeps the provider of a pagemap to itself: it is found
 * as the device with published peer-to-peer memory one of whose memory
 * BARs holds the pagemap's range.  Memory a device keeps for its own
 * driver (pci_p2pmem_publish() not called) is not found.  Out of line
 * for KUnit's static stubs.
 *
 * Context: Process context (walks the PCI devices).
 * Return: the device with a reference (pci_dev_put() it), or NULL.
 */
VISIBLE_IF_KUNIT struct pci_dev *
netgpu_host_p2p_provider(struct dev_pagemap *pgmap)
{
	struct pci_dev *pdev = NULL;
	int bar;

	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_p2p_provider, pgmap);
	/* The reference the walk holds on the device found is the caller's. */
	for_each_pci_dev(pdev) {
		if (!pci_has_p2pmem(pdev))
			continue;
		for (bar = 0; bar < PCI_STD_NUM_BARS; bar++)
			if ((pci_resource_flags(pdev, bar) & IORESOURCE_MEM) &&
			    pgmap->range.start >= pci_resource_start(pdev, bar) &&
			    pgmap->range.end <= pci_resource_end(pdev, bar))
				return pdev;
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_provider);

/**
 * netgpu_host_p2p_distance() - can a device reach a provider's memory?
 * @provider: the PCI device whose peer-to-peer memory a region holds
 * @dev: the device to map the region for (a PCI function)
 *
 * pci_p2pdma_distance(), verbose: a refusal says in the kernel log which
 * devices and why (no common upstream bridge, ACS redirection, a host
 * bridge not trusted with peer-to-peer traffic).  Out of line so that a
 * KUnit test can pick the answer.
 *
 * Context: Process context.
 * Return: the distance (>= 0), or -1 if @dev cannot reach the memory.
 */
VISIBLE_IF_KUNIT int netgpu_host_p2p_distance(struct pci_dev *provider,
					      struct device *dev)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_p2p_distance, provider, dev);
	return pci_p2pdma_distance(provider, dev, true);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_distance);

/*
 * Every page of the pinned peer-to-peer region @hr is P2PDMA memory of
 * one pagemap, whose device published it: that device becomes
 * @hr->provider.  -EINVAL for ordinary memory in the range, memory of two
 * pagemaps (two BARs or devices: one distance must answer for all of
 * it), or memory nobody published.
 */
static int netgpu_host_p2p_check(struct netgpu_host_region *hr)
{
	struct dev_pagemap *pgmap;
	unsigned long i;

	pgmap = netgpu_host_p2p_pgmap(hr->pages[0]);
	if (!pgmap)
		return -EINVAL;
	for (i = 1; i < hr->r.nr_pages; i++) {
		if (netgpu_host_p2p_pgmap(hr->pages[i]) != pgmap)
			return -EINVAL;
		cond_resched();
	}
	hr->provider = netgpu_host_p2p_provider(pgmap);
	return hr->provider ? 0 : -EINVAL;
}

static bool netgpu_host_p2p_is_going(struct pci_dev *pdev)
{
	struct netgpu_host_p2p_going *g;

	lockdep_assert_held(&netgpu_host_p2p_lock);
	list_for_each_entry(g, &netgpu_host_p2p_going, node)
		if (g->pdev == pdev)
			return true;
	return false;
}

/*
 * List the pinned peer-to-peer region @hr for the bus notifier, unless its
 * provider is being unbound (-ENODEV): the notifier revokes the regions
 * listed before it marked the device, the mark refuses those after.  The
 * region is complete enough for a revocation from here on (@mem, @ops:
 * the core sets the same once add returns).
 */
static int netgpu_host_p2p_list(struct netgpu_host_region *hr,
				struct netgpu_mem *mem)
{
	int err = 0;

	hr->r.ops = &netgpu_host_ops;
	hr->r.mem = mem;
	init_completion(&hr->unpin_done);
	mutex_lock(&netgpu_host_p2p_lock);
	if (netgpu_host_p2p_is_going(hr->provider))
		err = -ENODEV;
	else
		list_add_tail(&hr->p2p_node, &netgpu_host_p2p_regions);
	mutex_unlock(&netgpu_host_p2p_lock);
	return err;
}

/*
 * The provider of @hr is going and no map of @hr is left: the NIC writes
 * none of its pages any more, so their pins go now, not when user space
 * lets the region go (the provider's pagemap waits for them).
 */
static void netgpu_host_p2p_unpin(struct netgpu_host_region *hr)
{
	lockdep_assert_held(&netgpu_host_p2p_lock);
	if (hr->unpinned)
		return;
	list_del(&hr->p2p_node);
	/* A BAR: no page cache, nothing to write back or dirty. */
	unpin_user_pages(hr->pages, hr->r.nr_pages);
	hr->unpinned = true;
	complete_all(&hr->unpin_done);
}

/* A map of @hr was unmapped, or the map op did not make it after all. */
static void netgpu_host_p2p_put_map(struct netgpu_host_region *hr)
{
	mutex_lock(&netgpu_host_p2p_lock);
	if (WARN_ON_ONCE(!hr->p2p_maps)) {
		mutex_unlock(&netgpu_host_p2p_lock);
		return;
	}
	hr->p2p_maps--;
	if (!hr->p2p_maps && hr->p2p_gone)
		netgpu_host_p2p_unpin(hr);
	mutex_unlock(&netgpu_host_p2p_lock);
}

static struct netgpu_region *
netgpu_host_add(struct netgpu_mem *mem, const struct netgpu_region_desc *desc)
{
	bool p2p = desc->flags & NETGPU_REGION_DESC_P2PDMA;
	struct netgpu_host_region *hr;
	unsigned long nr_pages;
	unsigned long pinned;
	u64 start, end, pages64;
	unsigned int gup;
	int err, ret;

	if (desc->flags & ~NETGPU_REGION_DESC_P2PDMA)
		return ERR_PTR(-EINVAL);
	/* Without P2PDMA the compiler drops every use of p2p below. */
	if (p2p && !IS_ENABLED(CONFIG_PCI_P2PDMA))
		return ERR_PTR(-EOPNOTSUPP);

	/*
	 * Whole pages only, as the uapi says: the NIC writes whole buffers,
	 * so a range rounded outwards would let it write bytes around the
	 * region that the caller never gave.
	 */
	if (!desc->len || !PAGE_ALIGNED(desc->addr) ||
	    !PAGE_ALIGNED(desc->len))
		return ERR_PTR(-EINVAL);
	/* Pages of the caller's own mm: a kernel thread has none. */
	if (!current->mm)
		return ERR_PTR(-EFAULT);
	/* The range must not wrap. */
	if (check_add_overflow(desc->addr, desc->len, &end))
		return ERR_PTR(-EOVERFLOW);
	/* A user address and length fit an unsigned long (32-bit). */
	if (end > ULONG_MAX)
		return ERR_PTR(-EOVERFLOW);
	if (!access_ok(u64_to_user_ptr(desc->addr), desc->len))
		return ERR_PTR(-EFAULT);
	start = desc->addr;
	/* Counted in 64 bits, narrowed once it is known to fit. */
	pages64 = (end - start) >> PAGE_SHIFT;
	if (pages64 > NETGPU_HOST_MAX_PAGES)
		return ERR_PTR(-E2BIG);
	nr_pages = pages64;

	hr = kzalloc(sizeof(*hr), GFP_KERNEL_ACCOUNT);
	if (!hr)
		return ERR_PTR(-ENOMEM);
	netgpu_region_init(&hr->r, start, end - start);
	hr->r.device = p2p;

	/*
	 * Charge first: it is what bounds an unprivileged caller.  Device
	 * memory is not RAM: not charged (see the top of this file).
	 */
	if (mem->account && !p2p) {
		err = netgpu_host_account(mem->user, nr_pages);
		if (err)
			goto err_free;
		hr->user = get_uid(mem->user);
		hr->acct_pages = nr_pages;
	}

	/*
	 * User-sized: a range of nothing is refused before the array is
	 * made; a huge mapped one fails quietly, without the OOM killer
	 * (a privileged caller is not bounded by RLIMIT_MEMLOCK).
	 */
	err = netgpu_host_check_mapped(start, end);
	if (err)
		goto err_unaccount;
	hr->pages = kvmalloc_array(nr_pages, sizeof(*hr->pages),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN |
				   __GFP_RETRY_MAYFAIL);
	if (!hr->pages) {
		err = -ENOMEM;
		goto err_unaccount;
	}
	if (!p2p) {
		hr->mm = current->mm;
		mmgrab(hr->mm);
		atomic64_add(nr_pages, &hr->mm->pinned_vm);
	}

	/*
	 * Without FOLL_PCI_P2PDMA GUP refuses peer-to-peer pages; it takes
	 * them only without FOLL_LONGTERM (the pair is a WARN and -EINVAL).
	 * A short pin stops where something failed; ask again from there
	 * to learn why (-EFAULT for a hole, -ENOMEM, ...).
	 */
	gup = p2p ? FOLL_WRITE | FOLL_PCI_P2PDMA : FOLL_WRITE | FOLL_LONGTERM;
	for (pinned = 0; pinned < nr_pages; pinned += ret) {
		ret = pin_user_pages_fast(start + (pinned << PAGE_SHIFT),
					  nr_pages - pinned, gup,
					  hr->pages + pinned);
		if (ret <= 0) {
			/* Release what we did get. */
			unpin_user_pages(hr->pages, pinned);
			err = ret ?: -EFAULT;
			goto err_free_pages;
		}
	}
	if (p2p) {
		err = netgpu_host_p2p_check(hr);
		if (!err) {
			err = netgpu_host_p2p_list(hr, mem);
			if (err)
				pci_dev_put(hr->provider);
		}
		if (err) {
			unpin_user_pages(hr->pages, nr_pages);
			goto err_free_pages;
		}
	}
	return &hr->r;

err_free_pages:
	if (hr->mm) {
		atomic64_sub(nr_pages, &hr->mm->pinned_vm);
		mmdrop(hr->mm);
	}
	kvfree(hr->pages);
err_unaccount:
	if (hr->user) {
		netgpu_host_unaccount(hr->user, hr->acct_pages);
		free_uid(hr->user);
	}
err_free:
	mutex_destroy(&hr->r.lock);
	mutex_destroy(&hr->r.revoke_lock);
	kfree(hr);
	return ERR_PTR(err);
}

static void netgpu_host_release(struct netgpu_region *r)
{
	struct netgpu_host_region *hr = to_host_region(r);

	if (hr->provider) {
		mutex_lock(&netgpu_host_p2p_lock);
		/* Unless the provider took the pages back already. */
		if (!hr->unpinned) {
			list_del(&hr->p2p_node);
			/* A BAR: no page cache, nothing to write back or dirty. */
			unpin_user_pages(hr->pages, r->nr_pages);
		}
		mutex_unlock(&netgpu_host_p2p_lock);
		pci_dev_put(hr->provider);
	} else {
		/*
		 * The device wrote them: dirty, or reclaim may drop what it
		 * wrote.
		 */
		unpin_user_pages_dirty_lock(hr->pages, r->nr_pages, true);
		atomic64_sub(r->nr_pages, &hr->mm->pinned_vm);
		mmdrop(hr->mm);
	}
	if (hr->user) {
		netgpu_host_unaccount(hr->user, hr->acct_pages);
		free_uid(hr->user);
	}
	kvfree(hr->pages);
	kfree(hr);
}

/**
 * netgpu_host_map_page() - DMA-map one page of a host region
 * @dev: the device
 * @page: the page
 *
 * dma_map_page() of the whole page for the device to write (the NIC
 * reads none of the user's memory: with an IOMMU it cannot), without
 * CPU syncs:
 * the page may be mapped for several devices at once, and the data path
 * syncs each buffer when it hands it over (netgpu_dmamap_sync_for_cpu()
 * and _for_device()), as page_pool does.  Out of line so that a KUnit
 * test can make it fail with kunit_activate_static_stub(): without an
 * IOMMU or swiotlb, dma-direct fails a mapping only with a WARNING.
 *
 * Context: Process context.
 * Return: the DMA address; check it with dma_mapping_error().
 */
VISIBLE_IF_KUNIT dma_addr_t netgpu_host_map_page(struct device *dev,
						 struct page *page)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_map_page, dev, page);
	return dma_map_page_attrs(dev, page, 0, PAGE_SIZE, DMA_FROM_DEVICE,
				  DMA_ATTR_SKIP_CPU_SYNC);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_map_page);

/**
 * netgpu_host_unmap_page() - undo netgpu_host_map_page()
 * @dev: the device
 * @dma: what netgpu_host_map_page() returned for it
 *
 * Context: Process context.
 */
VISIBLE_IF_KUNIT void netgpu_host_unmap_page(struct device *dev,
					     dma_addr_t dma)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_unmap_page, dev, dma);
	dma_unmap_page_attrs(dev, dma, PAGE_SIZE, DMA_FROM_DEVICE,
			     DMA_ATTR_SKIP_CPU_SYNC);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_unmap_page);

/* A map of @r's pages, its addresses to fill, or NULL without memory. */
static struct netgpu_host_map *netgpu_host_map_alloc(struct netgpu_region *r)
{
	struct netgpu_host_map *hm;

	/* User-sized, like the page array: may be huge, fail quietly. */
	hm = kvzalloc(struct_size(hm, dma, r->nr_pages),
		      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!hm)
		return NULL;
	hm->map.r = r;
	hm->nr_pages = r->nr_pages;
	return hm;
}

/*
 * Map the peer-to-peer region @hr for @dev, refused with -EREMOTEIO unless
 * @dev reaches the provider: the decision belongs here, as the device is
 * known only now.  One dma_map_sgtable() of the pages, one segment each
 * (what the NIC takes; PCI's default DMA segment limit is 64 KiB), which
 * maps each with the PCI bus address when the path stays below a common
 * switch (sg_dma_is_bus_address()) and through the host bridge (or its
 * IOMMU) otherwise; it refuses, -EREMOTEIO too, where P2PDMA's own
 * decision differs from the distance.  Never bounced (swiotlb refuses
 * P2PDMA pages), never synced: the CPU does not touch the memory.
 */
static struct netgpu_dmamap *netgpu_host_p2p_map(struct netgpu_host_region *hr,
						 struct device *dev)
{
	struct netgpu_region *r = &hr->r;
	struct netgpu_host_map *hm;
	struct scatterlist *sg;
	unsigned long i = 0, k, n;
	unsigned int j;
	int err;

	/*
	 * The DMA API maps peer-to-peer memory for a PCI function only
	 * (pci_p2pdma_map_type()); pci_p2pdma_distance() would take the
	 * nearest PCI parent of another device.  A device with none, such
	 * as netdevsim's, is refused here, quietly.
	 */
	if (!dev_is_pci(dev))
		return ERR_PTR(-EREMOTEIO);
	if (netgpu_host_p2p_distance(hr->provider, dev) < 0)
		return ERR_PTR(-EREMOTEIO);

	/*
	 * Counted from here: a revocation of the going provider waits for
	 * the core's region lock, which the caller holds, before it can
	 * retire the map, and unpins once the count is back to zero.
	 */
	mutex_lock(&netgpu_host_p2p_lock);
	err = hr->p2p_gone ? -ENODEV : 0;
	if (!err)
		hr->p2p_maps++;
	mutex_unlock(&netgpu_host_p2p_lock);
	if (err)
		return ERR_PTR(err);

	err = -ENOMEM;
	hm = netgpu_host_map_alloc(r);
	if (!hm)
		goto err_put;
	/* add checked that the page count fits an int. */
	err = sg_alloc_table_from_pages_segment(&hm->sgt, hr->pages,
						r->nr_pages, 0, r->len,
						PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (err)
		goto err_free;
	/* fail_netgpu_dma_map: the mapping fails. */
	err = -ENOMEM;
	if (netgpu_should_fail(NETGPU_FAIL_DMA_MAP))
		goto err_free_table;
	err = dma_map_sgtable(dev, &hm->sgt, DMA_FROM_DEVICE,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (err)
		goto err_free_table;
	/* Page by page: an IOMMU may have merged segments. */
	for_each_sgtable_dma_sg(&hm->sgt, sg, j) {
		n = min_t(unsigned long, sg_dma_len(sg) >> PAGE_SHIFT,
			  hm->nr_pages - i);
		for (k = 0; k < n; k++)
			hm->dma[i++] = sg_dma_address(sg) + (k << PAGE_SHIFT);
	}
	if (WARN_ON_ONCE(i != hm->nr_pages)) {
		err = -EIO;
		goto err_unmap;
	}
	return &hm->map;

err_unmap:
	dma_unmap_sgtable(dev, &hm->sgt, DMA_FROM_DEVICE,
			  DMA_ATTR_SKIP_CPU_SYNC);
err_free_table:
	sg_free_table(&hm->sgt);
err_free:
	kvfree(hm);
err_put:
	netgpu_host_p2p_put_map(hr);
	return ERR_PTR(err);
}

static struct netgpu_dmamap *netgpu_host_map(struct netgpu_region *r,
					     struct device *dev)
{
	struct netgpu_host_region *hr = to_host_region(r);
	struct netgpu_host_map *hm;
	unsigned long i;

	if (r->device)
		return netgpu_host_p2p_map(hr, dev);

	hm = netgpu_host_map_alloc(r);
	if (!hm)
		return ERR_PTR(-ENOMEM);

	for (i = 0; i < r->nr_pages; i++) {
		/* fail_netgpu_dma_map: this page's mapping fails. */
		if (netgpu_should_fail(NETGPU_FAIL_DMA_MAP))
			goto err_unmap;
		hm->dma[i] = netgpu_host_map_page(dev, hr->pages[i]);
		if (dma_mapping_error(dev, hm->dma[i]))
			goto err_unmap;
		cond_resched();
	}
	return &hm->map;

err_unmap:
	while (i--) {
		netgpu_host_unmap_page(dev, hm->dma[i]);
		cond_resched();
	}
	kvfree(hm);
	return ERR_PTR(-ENOMEM);
}

static void netgpu_host_unmap(struct netgpu_dmamap *map)
{
	struct netgpu_host_map *hm = container_of(map, struct netgpu_host_map,
						  map);
	unsigned long i;

	if (hm->sgt.sgl) {
		struct netgpu_host_region *hr = to_host_region(map->r);

		dma_unmap_sgtable(map->dev, &hm->sgt, DMA_FROM_DEVICE,
				  DMA_ATTR_SKIP_CPU_SYNC);
		sg_free_table(&hm->sgt);
		kvfree(hm);
		/* The core's reference on the region keeps hr. */
		netgpu_host_p2p_put_map(hr);
		return;
	}
	for (i = 0; i < hm->nr_pages; i++) {
		netgpu_host_unmap_page(map->dev, hm->dma[i]);
		cond_resched();
	}
	kvfree(hm);
}

static int netgpu_host_dma(const struct netgpu_dmamap *map, u64 off,
			   dma_addr_t *dma, u64 *len)
{
	const struct netgpu_host_map *hm = to_host_map(map);
	unsigned long idx = off >> PAGE_SHIFT;

	if (idx >= hm->nr_pages)
		return -EFAULT;
	*dma = hm->dma[idx] + offset_in_page(off);
	*len = PAGE_SIZE - offset_in_page(off);
	return 0;
}

static int netgpu_host_get_pages(struct netgpu_region *r, u64 off,
				 struct page **pages, unsigned int count)
{
	struct netgpu_host_region *hr = to_host_region(r);
	unsigned long idx = off >> PAGE_SHIFT;
	unsigned int i, n;

	/* netgpu_region_get_pages() refuses device memory before this. */
	if (idx >= r->nr_pages)
		return 0;
	/* Pages idx .. nr_pages - 1 remain; not one more. */
	n = min_t(unsigned long, count, r->nr_pages - idx);
	for (i = 0; i < n; i++) {
		pages[i] = hr->pages[idx + i];
		get_page(pages[i]);
	}
	return n;
}

/*
 * Sync the pages of bytes [@off, @off + @len) of @map: @for_cpu picks
 * for_cpu (true) or for_device.  Pages are mapped one by one, so each
 * page is its own DMA mapping.  Peer-to-peer memory is never synced: the
 * CPU does not touch it, and it is never bounced.
 */
static void netgpu_host_sync(const struct netgpu_dmamap *map, u64 off,
			     u64 len, bool for_cpu)
{
	const struct netgpu_host_map *hm = to_host_map(map);
	unsigned long idx = off >> PAGE_SHIFT;
	u64 end;

	if (hm->sgt.sgl || check_add_overflow(off, len, &end))
		return;
	while (off < end && idx < hm->nr_pages) {
		size_t pgoff = offset_in_page(off);
		size_t n = min_t(u64, PAGE_SIZE - pgoff, end - off);

		if (for_cpu)
			dma_sync_single_range_for_cpu(map->dev, hm->dma[idx],
						      pgoff, n,
						      DMA_FROM_DEVICE);
		else
			dma_sync_single_range_for_device(map->dev,
							 hm->dma[idx], pgoff,
							 n, DMA_FROM_DEVICE);
		off += n;
		idx++;
	}
}

static void netgpu_host_sync_for_cpu(const struct netgpu_dmamap *map,
				     u64 off, u64 len)
{
	netgpu_host_sync(map, off, len, true);
}

static void netgpu_host_sync_for_device(const struct netgpu_dmamap *map,
					u64 off, u64 len)
{
	netgpu_host_sync(map, off, len, false);
}

/* Built in: no module reference on the library's own code. */
const struct netgpu_mem_ops netgpu_host_ops = {
	.owner		= NULL,
	.type		= NETGPU_MEMTYPE_HOST,
	.name		= "host",
	.add		= netgpu_host_add,
	.release	= netgpu_host_release,
	.map		= netgpu_host_map,
	.unmap		= netgpu_host_unmap,
	.dma		= netgpu_host_dma,
	.get_pages	= netgpu_host_get_pages,
	.sync_for_cpu	= netgpu_host_sync_for_cpu,
	.sync_for_device = netgpu_host_sync_for_device,
};

/* ===== The providers of peer-to-peer memory going away ===== */

#ifdef CONFIG_LOCKDEP
/*
 * The contexts' revoke work (netgpu_ctx_revoke_work(): &netgpu_ctx.lock,
 * rtnl_lock, a queue's restart) as one lock, so that lockdep sees the bus
 * notifier wait for it: the work holds it for its whole body, the notifier
 * for read across its wait for the pins, as flush_work() does with a
 * work's map.  rtnl_lock or a context's lock held by whatever makes a PCI
 * driver unbind (which then waits here) closes a cycle lockdep reports.
 * The device lock the driver core holds is invisible to lockdep (not
 * validated), the bus notifier's rwsem is not.
 */
struct lockdep_map netgpu_p2p_revoke_map =
	STATIC_LOCKDEP_MAP_INIT("netgpu_p2p_revoke", &netgpu_p2p_revoke_map);
#endif

/* How long the notifier waits for a region's pins before it says so. */
#define NETGPU_HOST_P2P_WAIT_WARN	(10 * HZ)

/**
 * netgpu_host_p2p_has_mem() - may a PCI device have pages in a region?
 * @pdev: a PCI device whose driver is being unbound (or failed to probe)
 *
 * A region's provider was found among the devices with published
 * peer-to-peer memory (netgpu_host_p2p_provider()), whose P2PDMA state
 * is set up (pci_p2pdma_add_resource()) before that and stays until the
 * release of the driver's devres, which comes after the bus notifier:
 * without it, no region over the device's memory exists or is being made,
 * and none can be until the driver is gone.  Not pci_has_p2pmem(): a
 * driver may unpublish its memory under a region.  Out of line for
 * KUnit's static stubs (no device of a test machine has such memory).
 *
 * Context: Any context.
 * Return: true if it may.
 */
VISIBLE_IF_KUNIT bool netgpu_host_p2p_has_mem(struct pci_dev *pdev)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_p2p_has_mem, pdev);
#if IS_ENABLED(CONFIG_PCI_P2PDMA)
	return rcu_access_pointer(pdev->p2pdma);
#else
	return false;
#endif
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_has_mem);

/**
 * netgpu_host_p2p_wait_window() - the bus notifier is about to wait
 * @pdev: the device whose driver is going
 *
 * Does nothing.  netgpu_host_p2p_wait() calls it once every region of
 * @pdev is revoked, right before it sleeps for their pins, so that a
 * KUnit case can tell that sleep from the others before it (the RCU
 * grace period of a revocation, a mutex) by the notifier's task state.
 *
 * Context: Process context.
 */
VISIBLE_IF_KUNIT void netgpu_host_p2p_wait_window(struct pci_dev *pdev)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_host_p2p_wait_window, pdev);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_wait_window);

/*
 * The pins of the regions on @revoking, each revoked: until the last map
 * of each is unmapped (the queues holding it stopped by the contexts'
 * revoke work, or the last buffer the NIC held given back).  The pagemap's
 * removal would wait for the pins anyway, and the driver's remove, next,
 * must not see the NIC write into its BAR.  Every 10 s still waiting
 * says which region, and how many of its maps are left, in the log: a
 * wait the hung-task detector, woken by each timeout, no longer reports.
 */
static void netgpu_host_p2p_wait(struct pci_dev *pdev,
				 struct list_head *revoking)
{
	struct netgpu_host_region *hr;
	unsigned int maps;

	lock_map_acquire_read(&netgpu_p2p_revoke_map);
	netgpu_host_p2p_wait_window(pdev);
	list_for_each_entry(hr, revoking, p2p_revoking) {
		while (!wait_for_completion_timeout(&hr->unpin_done,
						    NETGPU_HOST_P2P_WAIT_WARN)) {
			mutex_lock(&netgpu_host_p2p_lock);
			maps = hr->p2p_maps;
			mutex_unlock(&netgpu_host_p2p_lock);
			pr_warn_ratelimited("%s: unbind waits for region %u: %u DMA map%s not unmapped yet\n",
					    pci_name(pdev), hr->r.id, maps,
					    maps == 1 ? "" : "s");
		}
	}
	lock_map_release(&netgpu_p2p_revoke_map);
}

/*
 * @pdev's driver is going: mark the device, so that no region is made
 * over its memory from now on, revoke every region there is over it,
 * then wait until all their pages are unpinned.
 */
static void netgpu_host_p2p_unbind(struct pci_dev *pdev)
{
	struct netgpu_host_region *hr, *tmp;
	struct netgpu_host_p2p_going *g;
	LIST_HEAD(revoking);

	/*
	 * Most devices have no peer-to-peer memory, and a probe deferred
	 * or failed ends here too: nothing to mark, nothing to allocate.
	 * Race-free: see netgpu_host_p2p_has_mem().
	 */
	if (!netgpu_host_p2p_has_mem(pdev))
		return;

	/*
	 * A few bytes, and a notifier cannot fail: without the mark a
	 * region made during the unbind would hang it.
	 */
	g = kmalloc(sizeof(*g), GFP_KERNEL | __GFP_NOFAIL);
	g->pdev = pdev;
	mutex_lock(&netgpu_host_p2p_lock);
	if (!netgpu_host_p2p_is_going(pdev)) {
		list_add_tail(&g->node, &netgpu_host_p2p_going);
		g = NULL;
	}
	/*
	 * Under the same lock as the mark: every region listed is here,
	 * every one listed from now on is refused (netgpu_host_p2p_list()).
	 */
	list_for_each_entry(hr, &netgpu_host_p2p_regions, p2p_node) {
		if (hr->provider != pdev || hr->p2p_gone)
			continue;
		/* No new map from here on. */
		hr->p2p_gone = true;
		/* Unless it is being freed: its release unpins. */
		if (netgpu_region_tryget(&hr->r))
			list_add_tail(&hr->p2p_revoking, &revoking);
	}
	mutex_unlock(&netgpu_host_p2p_lock);
	/* Marked already: a probe that failed, then an unbind. */
	kfree(g);

	/*
	 * Every region first, then the wait for all: their contexts' revoke
	 * work runs for all of them at once.  Each is detached from every
	 * context (their queues holding it stop, from a work item) and its
	 * maps retired: unmapped now, or once those queues let go of them.
	 */
	list_for_each_entry(hr, &revoking, p2p_revoking) {
		netgpu_region_revoke_provider(&hr->r);
		mutex_lock(&netgpu_host_p2p_lock);
		if (!hr->p2p_maps)
			netgpu_host_p2p_unpin(hr);
		mutex_unlock(&netgpu_host_p2p_lock);
	}
	netgpu_host_p2p_wait(pdev, &revoking);
	list_for_each_entry_safe(hr, tmp, &revoking, p2p_revoking) {
		list_del(&hr->p2p_revoking);
		netgpu_region_put(&hr->r);
	}
}

/* @pdev's driver is gone (its memory with it), or a new one is coming. */
static void netgpu_host_p2p_forget(struct pci_dev *pdev)
{
	struct netgpu_host_p2p_going *g, *tmp;

	mutex_lock(&netgpu_host_p2p_lock);
	list_for_each_entry_safe(g, tmp, &netgpu_host_p2p_going, node) {
		if (g->pdev == pdev) {
			list_del(&g->node);
			kfree(g);
		}
	}
	mutex_unlock(&netgpu_host_p2p_lock);
}

/**
 * netgpu_host_p2p_notify() - the PCI bus notifier of the host provider
 * @nb: the notifier block
 * @action: a BUS_NOTIFY_* event
 * @data: the PCI device's &struct device
 *
 * BUS_NOTIFY_UNBIND_DRIVER comes before the driver's remove and the
 * release of its devres (the pagemap of its published memory among
 * them), for an unbind through sysfs, a module's removal and a hot
 * unplug alike; DRIVER_NOT_BOUND before a failed probe's devres.  Every
 * region over the device's memory is revoked and its pages unpinned
 * before this returns, and regions over it are refused until the driver
 * is gone (UNBOUND_DRIVER), another probes (BIND_DRIVER) or the device
 * is deleted (DEL_DEVICE).
 *
 * Waiting for the pins waits for the contexts' work that stops the
 * queues holding the region (&netgpu_ctx.lock, then rtnl_lock), under the
 * device's lock that the driver core holds: nothing may wait for a PCI
 * device's lock holding either (memunmap_pages() would wait for the same
 * work in the same place without this notifier).  Lockdep sees that wait
 * as a read of netgpu_p2p_revoke_map, which the work holds.  A device
 * without peer-to-peer memory costs a call and no allocation.
 *
 * Context: Process context, under the device's lock.
 * Return: NOTIFY_DONE.
 */
VISIBLE_IF_KUNIT int __maybe_unused
netgpu_host_p2p_notify(struct notifier_block *nb, unsigned long action,
		       void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	if (!IS_ENABLED(CONFIG_PCI_P2PDMA))
		return NOTIFY_DONE;
	switch (action) {
	case BUS_NOTIFY_UNBIND_DRIVER:
	case BUS_NOTIFY_DRIVER_NOT_BOUND:
		netgpu_host_p2p_unbind(pdev);
		break;
	case BUS_NOTIFY_UNBOUND_DRIVER:
	case BUS_NOTIFY_BIND_DRIVER:
	case BUS_NOTIFY_DEL_DEVICE:
		netgpu_host_p2p_forget(pdev);
		break;
	}
	return NOTIFY_DONE;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_host_p2p_notify);

#if IS_ENABLED(CONFIG_PCI_P2PDMA)
static struct notifier_block netgpu_host_p2p_nb = {
	.notifier_call	= netgpu_host_p2p_notify,
};

/**
 * netgpu_host_init() - watch the providers of peer-to-peer memory
 *
 * Context: Process context, from the library's init.
 * Return: 0, or bus_register_notifier()'s error.
 */
int netgpu_host_init(void)
{
	return bus_register_notifier(&pci_bus_type, &netgpu_host_p2p_nb);
}

/**
 * netgpu_host_exit() - stop watching them
 *
 * No region may be left: every file holding one is closed before the
 * module can go.
 *
 * Context: Process context, from the library's exit.
 */
void netgpu_host_exit(void)
{
	struct netgpu_host_p2p_going *g, *tmp;

	bus_unregister_notifier(&pci_bus_type, &netgpu_host_p2p_nb);
	/* Devices whose driver went with none bound since. */
	list_for_each_entry_safe(g, tmp, &netgpu_host_p2p_going, node) {
		list_del(&g->node);
		kfree(g);
	}
	WARN_ON_ONCE(!list_empty(&netgpu_host_p2p_regions));
}
#endif
