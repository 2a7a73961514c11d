// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the netgpu host memory provider, on real user memory:
 * the test case's kthread gets an mm through kunit_vm_mmap() and
 * registers pages of it.  Checks pinning, RLIMIT_MEMLOCK accounting
 * (with CAP_IPC_LOCK dropped from the test's credentials), unaligned
 * ranges, the refusal matrix and that every error path unpins and
 * unaccounts.  DMA mapping failures are injected through the provider's
 * static stubs (netgpu_host_map_page()); accounting corner cases charge a
 * private user_struct the test owns instead of the machine's root user.
 * Regions of PCI peer-to-peer memory (NETGPU_REGION_DESC_P2PDMA) are
 * anonymous memory that the P2PDMA stubs (netgpu_host_p2p_pgmap(),
 * _provider(), _distance(), _has_mem()) present as such, with a PCI
 * device of the test machine standing in for the provider and the NIC.
 */

#include <kunit/resource.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/memremap.h>
#include <linux/notifier.h>
#include <linux/pagemap.h>
#include <linux/pci.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swiotlb.h>
#include <linux/uaccess.h>

#include "fail_nth.h"
#include "mem_priv.h"
#include "mock_gpu.h"
#include "splat.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* ===== Helpers ===== */

/* @nr_pages of user memory; writable memory is written once, so present. */
static u64 host_mmap(struct kunit *test, unsigned long nr_pages,
		     unsigned long prot)
{
	u64 addr;

	addr = kunit_vm_mmap(test, NULL, 0, nr_pages << PAGE_SHIFT, prot,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, addr, 0);
	if (prot & PROT_WRITE)
		KUNIT_ASSERT_EQ(test, clear_user(u64_to_user_ptr(addr),
						 nr_pages << PAGE_SHIFT), 0);
	return addr;
}

/* How many of @nr_pages pages at @addr are pinned (absent: not). */
static unsigned long host_pinned(struct kunit *test, u64 addr,
				 unsigned long nr_pages)
{
	unsigned long i, n = 0;
	struct page *page;

	for (i = 0; i < nr_pages; i++) {
		if (get_user_pages_fast(addr + (i << PAGE_SHIFT), 1, 0,
					&page) != 1)
			continue;
		n += folio_maybe_dma_pinned(page_folio(page));
		put_page(page);
	}
	return n;
}

static long host_locked(void)
{
	return atomic_long_read(&current_user()->locked_vm);
}

static unsigned long host_user_locked(struct user_struct *user)
{
	return atomic_long_read(&user->locked_vm);
}

/* RLIMIT_MEMLOCK of this case's kthread (its own signal_struct). */
static void host_set_memlock(unsigned long pages)
{
	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK].rlim_cur = pages << PAGE_SHIFT;
	task_unlock(current->group_leader);
}

/* An area created with or without CAP_IPC_LOCK. */
static struct netgpu_mem *host_area(struct kunit *test, bool ipc_lock)
{
	const struct cred *old;
	struct netgpu_mem *mem;
	struct cred *cred;

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	if (ipc_lock)
		cap_raise(cred->cap_effective, CAP_IPC_LOCK);
	else
		cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	mem = netgpu_mem_create();
	revert_creds(old);
	put_cred(cred);

	KUNIT_ASSERT_NOT_NULL(test, mem);
	mock_defer(test, mock_mem_close_action, mem);
	KUNIT_ASSERT_EQ(test, mem->account, !ipc_lock);
	return mem;
}

static int host_add(struct netgpu_mem *mem, u64 addr, u64 len)
{
	struct netgpu_region_desc d = {
		.type = NETGPU_MEMTYPE_HOST, .addr = addr, .len = len,
	};

	return netgpu_mem_add_region(mem, &d);
}

static struct netgpu_memctx *host_ctx(struct kunit *test)
{
	struct device *dev;

	dev = mock_dma_device(test, "netgpu-host-nic");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	return mock_memctx(test, dev);
}

/*
 * An area without CAP_IPC_LOCK that charges @user, a user_struct of the
 * test's own, instead of the machine's root user.  The test keeps a
 * reference, so free_uid() never frees @user; the area gets its real
 * user back just before it is closed, and @user outlives it.
 */
struct host_fake {
	struct user_struct user;
	struct netgpu_mem *mem;
	struct user_struct *real;
};

static void host_fake_close_action(void *ctx)
{
	struct host_fake *fake = ctx;

	fake->mem->user = fake->real;
	netgpu_mem_close(fake->mem);
}

/* @locked_vm pages already charged to the fake user. */
static struct host_fake *host_fake_area(struct kunit *test,
					unsigned long locked_vm)
{
	struct host_fake *fake;
	const struct cred *old;
	struct cred *cred;

	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	refcount_set(&fake->user.__count, 1);
	atomic_long_set(&fake->user.locked_vm, locked_vm);

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);
	fake->mem = netgpu_mem_create();
	revert_creds(old);
	put_cred(cred);
	KUNIT_ASSERT_NOT_NULL(test, fake->mem);

	fake->real = fake->mem->user;
	fake->mem->user = &fake->user;
	mock_defer(test, host_fake_close_action, fake);
	KUNIT_ASSERT_TRUE(test, fake->mem->account);
	return fake;
}

/* DMA calls of the host provider seen through its static stubs. */
#define HOST_DMA_MAX	16

struct host_dma_log {
	int fail_at;
	int calls;
	int nr_mapped, nr_unmapped;
	dma_addr_t mapped[HOST_DMA_MAX];
	dma_addr_t unmapped[HOST_DMA_MAX];
};

/* Map call number log->fail_at (from 0) fails, the others are real. */
static dma_addr_t host_stub_map_page(struct device *dev, struct page *page)
{
	struct kunit *test = kunit_get_current_test();
	struct host_dma_log *log = test->priv;
	dma_addr_t dma;

	if (log->calls++ == log->fail_at)
		return DMA_MAPPING_ERROR;
	dma = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_FALSE(test, dma_mapping_error(dev, dma));
	KUNIT_ASSERT_LT(test, log->nr_mapped, HOST_DMA_MAX);
	log->mapped[log->nr_mapped++] = dma;
	return dma;
}

static void host_stub_unmap_page(struct device *dev, dma_addr_t dma)
{
	struct kunit *test = kunit_get_current_test();
	struct host_dma_log *log = test->priv;

	KUNIT_ASSERT_LT(test, log->nr_unmapped, HOST_DMA_MAX);
	log->unmapped[log->nr_unmapped++] = dma;
	dma_unmap_page(dev, dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
}

static int host_dma_count(const dma_addr_t *v, int n, dma_addr_t dma)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i] == dma;
	return c;
}

/* Every address mapped was unmapped exactly once, and nothing else. */
static void host_dma_expect_balanced(struct kunit *test,
				     const struct host_dma_log *log)
{
	int i;

	KUNIT_EXPECT_EQ(test, log->nr_unmapped, log->nr_mapped);
	for (i = 0; i < log->nr_mapped; i++)
		KUNIT_EXPECT_EQ_MSG(test, host_dma_count(log->unmapped,
							 log->nr_unmapped,
							 log->mapped[i]),
				    host_dma_count(log->mapped, log->nr_mapped,
						   log->mapped[i]),
				    "mapping %d", i);
}

/*
 * Page @i of the region at @addr, attached to @mc, is found @off bytes
 * in: offset, length and DMA address as the region's map has them;
 * without an IOMMU or bouncing, the DMA address is the page's.
 */
static void host_expect_lookup(struct kunit *test, struct netgpu_memctx *mc,
			       u64 addr, int i, unsigned int off)
{
	u64 a = addr + i * PAGE_SIZE + off;
	struct netgpu_mem_loc loc;
	struct page *page;

	KUNIT_ASSERT_EQ(test, mock_lookup(mc, a, &loc), 0);
	KUNIT_EXPECT_EQ(test, loc.off, i * PAGE_SIZE + off);
	KUNIT_EXPECT_EQ(test, loc.len, PAGE_SIZE - off);
	KUNIT_EXPECT_EQ(test, loc.dma & ~PAGE_MASK, off);
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(a, 1, 0, &page), 1);
	if (!device_iommu_mapped(mc->dev) &&
	    !is_swiotlb_force_bounce(mc->dev))
		KUNIT_EXPECT_EQ(test, loc.dma & PAGE_MASK,
				page_to_phys(page));
	put_page(page);
}

/* ===== Test cases ===== */

/* Registered pages are pinned until the region goes, and DMA-mapped. */
static void netgpu_host_test_pin(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	u64 addr;
	int i;

	addr = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 0);
	r = mock_region_get(test, mem, host_add(mem, addr, 4 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 4);
	KUNIT_EXPECT_EQ(test, r->start, addr);
	KUNIT_EXPECT_EQ(test, r->nr_pages, 4);

	mc = host_ctx(test);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	for (i = 0; i < 4; i++)
		host_expect_lookup(test, mc, addr, i, 7);

	kunit_release_action(test, mock_memctx_release_action, mc);
	kunit_release_action(test, mock_region_put_action, r);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 4);
	kunit_release_action(test, mock_mem_close_action, mem);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 0);
}

/* Without CAP_IPC_LOCK pinned pages count against RLIMIT_MEMLOCK. */
static void netgpu_host_test_memlock(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	struct netgpu_mem *priv = host_area(test, true);
	long base = host_locked();
	u64 addr;

	addr = host_mmap(test, 32, PROT_READ | PROT_WRITE);
	host_set_memlock(base + 8);

	KUNIT_EXPECT_GT(test, host_add(mem, addr, 4 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 4);
	/* Over the limit: refused, nothing pinned or charged. */
	KUNIT_EXPECT_EQ(test, host_add(mem, addr + 4 * PAGE_SIZE,
				       5 * PAGE_SIZE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 4);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr + 4 * PAGE_SIZE, 5), 0);
	/* Exactly up to the limit. */
	KUNIT_EXPECT_GT(test, host_add(mem, addr + 4 * PAGE_SIZE,
				       4 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 8);
	KUNIT_EXPECT_EQ(test, host_add(mem, addr + 8 * PAGE_SIZE, PAGE_SIZE),
			-ENOMEM);

	/* CAP_IPC_LOCK: not charged, not limited. */
	KUNIT_EXPECT_GT(test, host_add(priv, addr + 8 * PAGE_SIZE,
				       16 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 8);
	/*
	 * Unlimited, but 4 TiB of nothing is refused before an array of a
	 * billion page pointers is sized by it (before, -ENOMEM once the
	 * allocation failed; a length whose array fitted in memory ran the
	 * OOM killer: netgpu-fuzz found it).
	 */
	KUNIT_EXPECT_EQ(test, host_add(priv, 0x10000, 1ULL << 42),
			BITS_PER_LONG == 32 ? -EOVERFLOW : -EFAULT);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 8);

	kunit_release_action(test, mock_mem_close_action, mem);
	KUNIT_EXPECT_EQ(test, host_locked(), base);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 8), 0);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr + 8 * PAGE_SIZE, 16), 16);
}

/*
 * An unaligned start or length is refused, not rounded outwards: the NIC
 * writes whole buffers, and the bytes around a rounded range were never
 * given.  Nothing is pinned or charged; the aligned range then works.
 */
static void netgpu_host_test_unaligned(struct kunit *test)
{
	static const struct {
		u64 off, len;
	} cases[] = {
		{ 100, PAGE_SIZE },
		{ PAGE_SIZE - 1, 2 },
		{ 0, 1 },
		{ 5, PAGE_SIZE - 5 },
		{ PAGE_SIZE + 1, 2 * PAGE_SIZE },
		{ 0, 2 * PAGE_SIZE - 100 },
		{ 8, 2 * PAGE_SIZE },
	};
	struct netgpu_mem *mem = host_area(test, false);
	struct netgpu_region_desc d = { .type = NETGPU_MEMTYPE_HOST };
	long base = host_locked();
	struct netgpu_region *r;
	unsigned int i;
	u64 addr;

	addr = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		d.addr = addr + cases[i].off;
		d.len = cases[i].len;
		KUNIT_EXPECT_EQ_MSG(test, netgpu_mem_add_region(mem, &d),
				    -EINVAL, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, host_pinned(test, addr, 4), 0,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, host_locked(), base, "case %u", i);
	}
	r = mock_region_get(test, mem, host_add(mem, addr + PAGE_SIZE,
						2 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, r->start, addr + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, r->nr_pages, 2);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 2);
}

/* Bad ranges are refused and leave nothing pinned or charged. */
static void netgpu_host_test_refusals(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	long base = host_locked();
	u64 rw, ro, hole, gone;
	struct {
		const char *what;
		u64 addr, len;
		int err;
	} cases[] = {
		{ "zero length", 0, 0, -EINVAL },
		{ "wraps", U64_MAX - PAGE_SIZE + 1, 2 * PAGE_SIZE, -EOVERFLOW },
		{ "unaligned, would wrap rounded", U64_MAX - 10, 5, -EINVAL },
		{ "kernel address", (u64)PAGE_OFFSET, PAGE_SIZE, -EFAULT },
		/* On 32-bit no user range holds that many pages. */
		{ "too many pages", 0x10000,
		  ((u64)INT_MAX + 1) << PAGE_SHIFT,
		  BITS_PER_LONG == 32 ? -EOVERFLOW : -E2BIG },
		{ "over RLIMIT_MEMLOCK", 0x10000, SZ_256M, -ENOMEM },
		{ "read-only", 0, 4 * PAGE_SIZE, -EFAULT },
		{ "hole after 2 pages", 0, 4 * PAGE_SIZE, -EFAULT },
		{ "unmapped", 0, 2 * PAGE_SIZE, -EFAULT },
	};
	unsigned int i;

	rw = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	ro = host_mmap(test, 4, PROT_READ);
	hole = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	KUNIT_ASSERT_EQ(test, vm_munmap(hole + 2 * PAGE_SIZE, 2 * PAGE_SIZE),
			0);
	gone = host_mmap(test, 2, PROT_READ | PROT_WRITE);
	KUNIT_ASSERT_EQ(test, vm_munmap(gone, 2 * PAGE_SIZE), 0);
	cases[0].addr = rw;
	cases[6].addr = ro;
	cases[7].addr = hole;
	cases[8].addr = gone;

	host_set_memlock(base + 64);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_EXPECT_EQ_MSG(test, host_add(mem, cases[i].addr,
						   cases[i].len),
				    cases[i].err, "%s", cases[i].what);
		KUNIT_EXPECT_EQ_MSG(test, host_locked(), base, "%s",
				    cases[i].what);
	}
	KUNIT_EXPECT_EQ(test, host_pinned(test, rw, 4), 0);
	KUNIT_EXPECT_EQ(test, host_pinned(test, ro, 4), 0);
	KUNIT_EXPECT_EQ(test, host_pinned(test, hole, 2), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
}

/*
 * Pages come back up to the region's end and never past it: from the
 * last page only one, and nothing is written after what is returned.
 */
static void netgpu_host_test_get_pages_bounded(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, true);
	struct page *pages[6];
	struct netgpu_region *r;
	struct page *poison;
	u64 addr;
	int i, n;

	poison = ERR_PTR(-ENOENT);
	addr = host_mmap(test, 3, PROT_READ | PROT_WRITE);
	r = mock_region_get(test, mem, host_add(mem, addr, 3 * PAGE_SIZE));

	for (i = 0; i < (int)ARRAY_SIZE(pages); i++)
		pages[i] = poison;
	n = netgpu_region_get_pages(r, addr + 2 * PAGE_SIZE, pages, 4);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_PTR_EQ(test, pages[1], poison);
	for (i = 0; i < n && i < (int)ARRAY_SIZE(pages); i++)
		put_page(pages[i]);

	n = netgpu_region_get_pages(r, addr, pages, 5);
	KUNIT_EXPECT_EQ(test, n, 3);
	KUNIT_EXPECT_PTR_EQ(test, pages[3], poison);
	for (i = 0; i < n && i < (int)ARRAY_SIZE(pages); i++)
		put_page(pages[i]);

	KUNIT_EXPECT_EQ(test, netgpu_region_get_pages(r, addr + 3 * PAGE_SIZE,
						      pages, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, netgpu_region_get_pages(r, addr - 1, pages, 1),
			-EFAULT);
}

/* Far from the case's other mappings: nothing to merge with. */
#define HOST_SWEEP_BASE	(64ULL * SZ_1G)

/*
 * Add a region, failing its 1st, 2nd, ... allocation (including the page
 * faults of pinning) until it succeeds untouched; after each failure
 * -ENOMEM, and pins and memlock accounting exactly as before.
 */
static void netgpu_host_test_add_fail_nth(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	long base = host_locked();
	int n, id, left, faults = 0;
	u64 addr;

	netgpu_kunit_need_fail_nth(test);
	host_set_memlock(base + 64);
	for (n = 1; n < 1000; n++) {
		/*
		 * Fresh memory each time, alone in its own 1 GiB: pinning
		 * faults pages in, which allocates page tables and the
		 * mapping's anon_vma (the user pages themselves are highmem
		 * allocations, which fail_page_alloc leaves alone).
		 */
		addr = kunit_vm_mmap(test, NULL, HOST_SWEEP_BASE + n * SZ_1G,
				     8 * PAGE_SIZE, PROT_READ | PROT_WRITE,
				     MAP_ANONYMOUS | MAP_PRIVATE, 0);
		KUNIT_ASSERT_NE(test, addr, 0);

		netgpu_fail_nth_set(n);
		id = host_add(mem, addr, 8 * PAGE_SIZE);
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);

		if (id > 0 && left)
			break;
		if (id > 0) {
			struct netgpu_region *r = netgpu_mem_get_region(mem, id);

			/* A fault something below absorbed: undo. */
			KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
			netgpu_region_revoke(r);
			netgpu_region_put(r);
			KUNIT_EXPECT_EQ(test, host_locked(), base);
			continue;
		}
		faults++;
		KUNIT_EXPECT_EQ_MSG(test, id, -ENOMEM, "fail_nth=%d", n);
		KUNIT_EXPECT_EQ_MSG(test, host_locked(), base, "fail_nth=%d",
				    n);
		KUNIT_EXPECT_EQ_MSG(test, host_pinned(test, addr, 8), 0,
				    "fail_nth=%d", n);
		KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
	}
	KUNIT_EXPECT_LT(test, n, 1000);
	KUNIT_EXPECT_GT(test, faults, 0);
	KUNIT_EXPECT_EQ(test, host_locked(), base + 8);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 8), 8);
	kunit_info(test, "%d allocations, %d faults", n - 1, faults);
}

/*
 * Four pages of host memory as a region of @mem, a context, and their
 * DMA mappings made through stubs that log into @log (test->priv).
 */
static struct netgpu_region *host_dma_region(struct kunit *test,
					     struct netgpu_mem *mem, long base,
					     struct host_dma_log *log,
					     struct netgpu_memctx **mc,
					     u64 *addr)
{
	struct netgpu_region *r;

	host_set_memlock(base + 64);
	*addr = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	r = mock_region_get(test, mem, host_add(mem, *addr, 4 * PAGE_SIZE));
	*mc = host_ctx(test);
	test->priv = log;
	kunit_activate_static_stub(test, netgpu_host_map_page,
				   host_stub_map_page);
	kunit_activate_static_stub(test, netgpu_host_unmap_page,
				   host_stub_unmap_page);
	return r;
}

/* A refused attach left no mapping, map, attachment or reference. */
static void host_expect_unattached(struct kunit *test,
				   const struct host_dma_log *log,
				   struct netgpu_memctx *mc,
				   struct netgpu_region *r, unsigned int ref)
{
	host_dma_expect_balanced(test, log);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, list_empty(&r->atts));
	KUNIT_EXPECT_TRUE(test, list_empty(&mc->atts));
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
}

/*
 * A DMA mapping failing at any page of the region: -ENOMEM, every page
 * mapped before it unmapped exactly once, no map, attachment, region
 * reference, pin or charge left; then the region still attaches.
 */
static void netgpu_host_test_map_error(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	long base = host_locked();
	struct host_dma_log log;
	struct netgpu_mem_loc loc;
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	unsigned int ref;
	int fail_at, err;
	u64 addr;

	r = host_dma_region(test, mem, base, &log, &mc, &addr);
	ref = refcount_read(&r->ref);

	for (fail_at = 0; fail_at < 4; fail_at++) {
		memset(&log, 0, sizeof(log));
		log.fail_at = fail_at;
		err = netgpu_memctx_attach(mc, r);
		KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "fail_at=%d", fail_at);
		KUNIT_EXPECT_EQ_MSG(test, log.calls, fail_at + 1,
				    "fail_at=%d", fail_at);
		KUNIT_EXPECT_EQ_MSG(test, log.nr_mapped, fail_at,
				    "fail_at=%d", fail_at);
		host_expect_unattached(test, &log, mc, r, ref);
		KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 4);
		KUNIT_EXPECT_EQ(test, host_locked(), base + 4);
	}

	/* No failure: all four mapped, and the detach unmaps them all. */
	memset(&log, 0, sizeof(log));
	log.fail_at = -1;
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	KUNIT_EXPECT_EQ(test, log.nr_mapped, 4);
	rcu_read_lock();
	err = netgpu_memctx_lookup(mc, addr + 3 * PAGE_SIZE + 5, &loc);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, loc.dma, log.mapped[3] + 5);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	host_dma_expect_balanced(test, &log);
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
}

/*
 * fail_netgpu_dma_map armed: the attach fails with -ENOMEM before the
 * first page is mapped, and leaves nothing (no map, attachment, region
 * reference, mapping); the point is spent, so the next attach maps all
 * four pages.
 */
static void netgpu_host_test_fail_dma_map(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	long base = host_locked();
	struct host_dma_log log = { .fail_at = -1 };
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	unsigned int ref;
	u64 addr;

	r = host_dma_region(test, mem, base, &log, &mc, &addr);
	ref = refcount_read(&r->ref);

	netgpu_kunit_fault_arm(test, NETGPU_FAIL_DMA_MAP);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -ENOMEM);
	KUNIT_EXPECT_EQ(test, log.calls, 0);
	host_expect_unattached(test, &log, mc, r, ref);

	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	KUNIT_EXPECT_EQ(test, log.nr_mapped, 4);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	host_dma_expect_balanced(test, &log);
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
}

/*
 * The map of a region too big for one allocation fails with -ENOMEM, and
 * quietly: the DMA address array is sized by the user.  The largest
 * region add accepts has INT_MAX / sizeof(struct page *) pages (its page
 * array is the largest kvmalloc() allows): its DMA address array, header
 * included, is over INT_MAX, where kvmalloc() WARNs unless __GFP_NOWARN.
 * With ULONG_MAX pages struct_size() saturates.  No test machine pins a
 * TiB: the page count is forged for the call, whose allocation fails
 * before any page is looked at.
 */
static void netgpu_host_test_map_huge(struct kunit *test)
{
	static const unsigned long nr[] = {
		INT_MAX / sizeof(struct page *), ULONG_MAX,
	};
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_dmamap *map;
	struct netgpu_region *r;
	struct device *dev;
	unsigned int i;
	u64 addr;

	addr = host_mmap(test, 1, PROT_READ | PROT_WRITE);
	r = mock_region_get(test, mem, host_add(mem, addr, PAGE_SIZE));
	dev = mock_dma_device(test, "netgpu-host-huge");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);

	for (i = 0; i < ARRAY_SIZE(nr); i++) {
		mutex_lock(&r->lock);
		r->nr_pages = nr[i];
		map = r->ops->map(r, dev);
		r->nr_pages = 1;
		mutex_unlock(&r->lock);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(map), -ENOMEM,
				    "%lu pages", nr[i]);
		if (!IS_ERR(map))
			r->ops->unmap(map);
	}
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
}

/*
 * Byte offsets past the region have no DMA address: -EFAULT, and the
 * outputs untouched.  The last byte has one, one byte long.
 */
static void netgpu_host_test_dma_bounds(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, true);
	const u64 bad[] = {
		3 * PAGE_SIZE, 3 * PAGE_SIZE + 1, 4 * PAGE_SIZE - 1,
		1ULL << 40, U64_MAX,
	};
	struct netgpu_mem_loc loc;
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	dma_addr_t dma;
	unsigned int i;
	u64 addr, len;
	int err;

	addr = host_mmap(test, 3, PROT_READ | PROT_WRITE);
	r = mock_region_get(test, mem, host_add(mem, addr, 3 * PAGE_SIZE));
	mc = host_ctx(test);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	rcu_read_lock();
	err = netgpu_memctx_lookup(mc, addr + 3 * PAGE_SIZE - 1, &loc);
	rcu_read_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, loc.len, 1);

	rcu_read_lock();
	err = r->ops->dma(loc.map, r->len - 1, &dma, &len);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, dma, loc.dma);
	KUNIT_EXPECT_EQ(test, len, 1);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		dma = 0x5a5a;
		len = 0xa5a5;
		rcu_read_lock();
		err = r->ops->dma(loc.map, bad[i], &dma, &len);
		rcu_read_unlock();
		KUNIT_EXPECT_EQ_MSG(test, err, -EFAULT, "off %llx", bad[i]);
		KUNIT_EXPECT_EQ(test, dma, 0x5a5a);
		KUNIT_EXPECT_EQ(test, len, 0xa5a5);
	}
}

/*
 * A charge that would wrap the user's locked_vm is refused even when
 * RLIMIT_MEMLOCK is unlimited (the wrapped total would be under any
 * limit); one that reaches the top without wrapping is over the limit.
 * Nothing is pinned, charged or referenced afterwards.
 */
static void netgpu_host_test_memlock_overflow(struct kunit *test)
{
	struct host_fake *fake = host_fake_area(test, ULONG_MAX - 1);
	struct user_struct *user = &fake->user;
	struct netgpu_mem *mem = fake->mem;
	u64 addr;

	addr = host_mmap(test, 4, PROT_READ | PROT_WRITE);
	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK].rlim_cur = RLIM_INFINITY;
	task_unlock(current->group_leader);

	KUNIT_EXPECT_EQ(test, host_add(mem, addr, 4 * PAGE_SIZE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), ULONG_MAX - 1);
	KUNIT_EXPECT_EQ(test, host_add(mem, addr, 2 * PAGE_SIZE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), ULONG_MAX - 1);

	atomic_long_set(&user->locked_vm, ULONG_MAX - 4);
	KUNIT_EXPECT_EQ(test, host_add(mem, addr, 4 * PAGE_SIZE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), ULONG_MAX - 4);

	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
	KUNIT_EXPECT_EQ(test, refcount_read(&user->__count), 1);
}

/*
 * A length whose page count does not fit (2^32 + 1 pages, or on 32-bit
 * more than an unsigned long holds) is refused before anything is pinned
 * or charged: on 32-bit it must not be narrowed into a small region.
 */
static void netgpu_host_test_huge_len(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	const u64 len = BIT_ULL(32 + PAGE_SHIFT) + PAGE_SIZE;
	long locked = host_locked();
	int id, expect;
	u64 addr;

	addr = host_mmap(test, 1, PROT_READ | PROT_WRITE);
	if (BITS_PER_LONG == 32)
		expect = -EOVERFLOW;
	else if (addr + len > TASK_SIZE_MAX)
		expect = -EFAULT;	/* past the end of user space */
	else
		expect = -E2BIG;
	id = host_add(mem, addr, len);
	KUNIT_EXPECT_EQ(test, id, expect);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 1), 0);
	KUNIT_EXPECT_EQ(test, host_locked(), locked);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
}

/*
 * What the device writes reaches the user's pages through
 * netgpu_dmamap_sync_for_cpu(): under swiotlb=force the write lands in a
 * bounce slot and is not in the page before the sync.  Without bouncing
 * the data is there at once and the sync is harmless.
 */
static void netgpu_host_test_sync_for_cpu(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_memctx *mc = host_ctx(test);
	struct netgpu_mem_loc loc;
	struct netgpu_region *r;
	struct page *page;
	void *dev_mem;
	u64 addr, at;
	phys_addr_t phys;
	bool bounced;
	u8 buf[64];
	int err;

	addr = host_mmap(test, 2, PROT_READ | PROT_WRITE);
	at = addr + PAGE_SIZE + 128;
	r = mock_region_get(test, mem, host_add(mem, addr, 2 * PAGE_SIZE));
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	rcu_read_lock();
	err = netgpu_memctx_lookup(mc, at, &loc);
	if (!err)
		netgpu_dmamap_inflight_add(loc.map, 1);
	rcu_read_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);

	/* The device writes where the DMA address says: a bounce slot? */
	phys = dma_to_phys(mc->dev, loc.dma);
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(at, 1, 0, &page), 1);
	bounced = phys != page_to_phys(page) + offset_in_page(at);
	put_page(page);
	/* Through a temporary mapping: the page may be highmem on 32-bit. */
	dev_mem = kmap_local_pfn(PHYS_PFN(phys));
	memset(dev_mem + offset_in_page(phys), 0xab, sizeof(buf));
	kunmap_local(dev_mem);
	KUNIT_ASSERT_EQ(test, copy_from_user(buf, u64_to_user_ptr(at),
					     sizeof(buf)), 0);
	if (bounced)
		KUNIT_EXPECT_NE(test, buf[0], 0xab);
	if (is_swiotlb_force_bounce(mc->dev))
		KUNIT_EXPECT_TRUE(test, bounced);

	netgpu_dmamap_sync_for_cpu(loc.map, loc.off, sizeof(buf));
	KUNIT_ASSERT_EQ(test, copy_from_user(buf, u64_to_user_ptr(at),
					     sizeof(buf)), 0);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(buf, 0xab, sizeof(buf)), NULL);
	/* And back to the device, for the next packet. */
	netgpu_dmamap_sync_for_device(loc.map, loc.off, sizeof(buf));
	netgpu_dmamap_inflight_sub(loc.map, 1);
	kunit_info(test, "device write %s", bounced ?
		   "bounced through swiotlb" : "direct, not bounced");
}

/*
 * Pinned pages show in the registering mm's pinned_vm (VmPin), charged
 * or not, and come off when the region goes.
 */
static void netgpu_host_test_pinned_vm(struct kunit *test)
{
	struct netgpu_mem *mem;
	u64 addr;
	s64 base;
	int i;

	/* The case's kthread has an mm from its first mapping on. */
	addr = host_mmap(test, 3, PROT_READ | PROT_WRITE);
	base = atomic64_read(&current->mm->pinned_vm);
	for (i = 0; i < 2; i++) {
		mem = netgpu_mem_create();
		KUNIT_ASSERT_NOT_NULL(test, mem);
		KUNIT_EXPECT_GT(test, host_add(mem, addr, 3 * PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm),
				base + 3);
		netgpu_mem_close(mem);
		KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm),
				base);
	}
}

/*
 * Pages the device may have written are marked dirty when they are
 * unpinned, or reclaim could drop what it wrote.
 */
static void netgpu_host_test_unpin_dirties(struct kunit *test)
{
	struct netgpu_mem *mem;
	struct folio *folio;
	struct page *page;
	u64 addr;

	addr = host_mmap(test, 1, PROT_READ | PROT_WRITE);
	mem = netgpu_mem_create();
	KUNIT_ASSERT_NOT_NULL(test, mem);
	if (host_add(mem, addr, PAGE_SIZE) <= 0) {
		netgpu_mem_close(mem);
		KUNIT_FAIL(test, "host_add failed");
		return;
	}
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(addr, 1, 0, &page), 1);
	folio = page_folio(page);
	/* As if written back since the user last wrote it. */
	folio_lock(folio);
	folio_clear_dirty_for_io(folio);
	folio_unlock(folio);
	KUNIT_EXPECT_FALSE(test, folio_test_dirty(folio));

	netgpu_mem_close(mem);
	KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(folio));
	KUNIT_EXPECT_TRUE(test, folio_test_dirty(folio));
	put_page(page);
}

struct host_mmap_holder {
	struct mm_struct	*mm;
	struct completion	held;
	struct completion	release;
};

static int host_mmap_holder_fn(void *data)
{
	struct host_mmap_holder *h = data;

	mmap_write_lock(h->mm);
	complete(&h->held);
	wait_for_completion(&h->release);
	mmap_write_unlock(h->mm);
	return 0;
}

/*
 * A caller killed while another thread holds its mmap lock: -EINTR from
 * the mapping check, nothing charged, pinned or added.
 */
static void netgpu_host_test_killed(struct kunit *test)
{
	struct netgpu_mem *mem = host_area(test, false);
	struct host_mmap_holder h = {};
	long base = host_locked();
	s64 pinned_vm;
	int id;
	u64 addr;

	addr = host_mmap(test, 2, PROT_READ | PROT_WRITE);
	h.mm = current->mm;
	pinned_vm = atomic64_read(&h.mm->pinned_vm);
	host_set_memlock(base + 64);
	init_completion(&h.held);
	init_completion(&h.release);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, kthread_run(host_mmap_holder_fn, &h,
						       "netgpu-mmap"));
	wait_for_completion(&h.held);

	allow_signal(SIGKILL);
	send_sig(SIGKILL, current, 1);
	id = host_add(mem, addr, 2 * PAGE_SIZE);
	flush_signals(current);
	disallow_signal(SIGKILL);
	complete(&h.release);

	KUNIT_EXPECT_EQ(test, id, -EINTR);
	KUNIT_EXPECT_EQ(test, host_locked(), base);
	KUNIT_EXPECT_EQ(test, atomic64_read(&h.mm->pinned_vm), pinned_vm);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 2), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
	/* Not killed: it adds. */
	KUNIT_EXPECT_GT(test, host_add(mem, addr, 2 * PAGE_SIZE), 0);
}

/* Another task's charge, made inside netgpu_host_account()'s window. */
static struct {
	struct user_struct *user;
	unsigned long pages;
	int calls;
} host_racer;

static void host_account_window_racing(struct user_struct *user)
{
	/* The first pass only: the retry must then see the new total. */
	if (user == host_racer.user && !host_racer.calls++)
		atomic_long_add(host_racer.pages, &user->locked_vm);
}

/*
 * The memlock charge is a compare-and-exchange that retries: another
 * task charging the same user between the charge's read of locked_vm
 * and its store (a static stub in that window charges 2 pages) is not
 * overwritten, and the retry checks the limit against the new total.
 * Under a limit with room for both, both charges stay (4 + 2) and the
 * window is passed twice; under one with room for either but not both,
 * the retry refuses (-ENOMEM) and the other task's 2 pages stay.
 *
 * Kills the mutant that replaces the loop by a read, a check and
 * atomic_long_set() (the other charge is lost: 4, not 6, and the over-
 * limit add succeeds), and one that checks the limit only before the
 * loop (the second add succeeds at 7 pages over a limit of 5).
 */
static void netgpu_host_test_memlock_retry(struct kunit *test)
{
	struct host_fake *fake = host_fake_area(test, 100);
	struct user_struct *user = &fake->user;
	struct netgpu_mem *mem = fake->mem;
	u64 addr;

	addr = host_mmap(test, 8, PROT_READ | PROT_WRITE);
	host_racer.user = user;
	host_racer.pages = 2;
	host_racer.calls = 0;
	kunit_activate_static_stub(test, netgpu_host_account_window,
				   host_account_window_racing);

	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK].rlim_cur = 106UL << PAGE_SHIFT;
	task_unlock(current->group_leader);
	KUNIT_EXPECT_GT(test, host_add(mem, addr, 4 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), 106);
	KUNIT_EXPECT_EQ(test, host_racer.calls, 2);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 4), 4);

	/* Room for 4 or for the other 2 pages, not for both. */
	host_racer.calls = 0;
	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK].rlim_cur = 111UL << PAGE_SHIFT;
	task_unlock(current->group_leader);
	KUNIT_EXPECT_EQ(test, host_add(mem, addr + 4 * PAGE_SIZE,
				       4 * PAGE_SIZE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), 108);
	KUNIT_EXPECT_EQ(test, host_racer.calls, 1);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr + 4 * PAGE_SIZE, 4), 0);

	kunit_deactivate_static_stub(test, netgpu_host_account_window);
	/* The racer's pages are its own to give back; ours go with the area. */
	atomic_long_sub(4, &user->locked_vm);
	kunit_release_action(test, host_fake_close_action, fake);
	KUNIT_EXPECT_EQ(test, host_user_locked(user), 100);
	KUNIT_EXPECT_EQ(test, host_pinned(test, addr, 8), 0);
}

/* ===== PCI peer-to-peer memory (P2PDMA) ===== */

#define HOST_P2P_PAGES	4

/**
 * struct host_p2p - what the P2PDMA stubs answer, and what they were asked
 * @pages: the region's pages, as the pin will find them
 * @odd: index of a page that is not P2PDMA memory, or -1
 * @other: index of a page of another pagemap, or -1
 * @pgmap: the two pagemaps (never dereferenced: the provider is stubbed)
 * @pdev: a PCI device of the machine (a reference is held); the provider,
 *	and the NIC where the distance is asked
 * @published: the provider stub finds @pdev (else: nobody published it)
 * @unbind_in_provider: the provider stub first sends the unbind of
 *	@pdev's driver (BUS_NOTIFY_UNBIND_DRIVER), once: between the pin
 *	and the listing of the region being made
 * @distance: what the distance stub answers
 * @pgmap_calls: calls of netgpu_host_p2p_pgmap()
 * @provider_calls: calls of netgpu_host_p2p_provider()
 * @distance_calls: calls of netgpu_host_p2p_distance()
 * @asked_provider: the provider the last distance was asked for
 * @asked_dev: the device the last distance was asked for
 * @addr: user address of the pages
 * @wait_window: completed by the wait window stub, if set: the bus
 *	notifier is about to sleep for the pins
 */
struct host_p2p {
	struct page		*pages[HOST_P2P_PAGES];
	int			odd, other;
	struct dev_pagemap	pgmap[2];
	struct pci_dev		*pdev;
	bool			published;
	bool			unbind_in_provider;
	int			distance;
	int			pgmap_calls, provider_calls, distance_calls;
	struct pci_dev		*asked_provider;
	struct device		*asked_dev;
	u64			addr;
	struct completion	*wait_window;
};

/* Not KUNIT_DEFINE_ACTION_WRAPPER(): without CONFIG_PCI, a macro. */
static void host_pci_dev_put(void *pdev)
{
	pci_dev_put(pdev);
}

static struct dev_pagemap *host_p2p_stub_pgmap(struct page *page)
{
	struct host_p2p *p = kunit_get_current_test()->priv;
	int i;

	p->pgmap_calls++;
	for (i = 0; i < HOST_P2P_PAGES; i++) {
		if (page != p->pages[i])
			continue;
		if (i == p->odd)
			return NULL;
		return &p->pgmap[i == p->other];
	}
	return NULL;
}

static struct pci_dev *host_p2p_stub_provider(struct dev_pagemap *pgmap)
{
	struct kunit *test = kunit_get_current_test();
	struct host_p2p *p = test->priv;

	p->provider_calls++;
	KUNIT_EXPECT_PTR_EQ(test, pgmap, &p->pgmap[0]);
	if (p->unbind_in_provider) {
		p->unbind_in_provider = false;
		netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBIND_DRIVER,
				       &p->pdev->dev);
	}
	return p->published ? pci_dev_get(p->pdev) : NULL;
}

/* Every device has peer-to-peer memory: its unbind is looked at. */
static bool host_p2p_stub_has_mem(struct pci_dev *pdev)
{
	return true;
}

static void host_p2p_stub_wait_window(struct pci_dev *pdev)
{
	struct host_p2p *p = kunit_get_current_test()->priv;

	if (p->wait_window)
		complete(p->wait_window);
}

static int host_p2p_stub_distance(struct pci_dev *provider,
				  struct device *dev)
{
	struct host_p2p *p = kunit_get_current_test()->priv;

	p->distance_calls++;
	p->asked_provider = provider;
	p->asked_dev = dev;
	return p->distance;
}

/* Where the pages of @p->addr are now: what the pin will find. */
static void host_p2p_record(struct kunit *test, struct host_p2p *p)
{
	int i;

	for (i = 0; i < HOST_P2P_PAGES; i++) {
		KUNIT_ASSERT_EQ(test, get_user_pages_fast(p->addr + i * PAGE_SIZE,
							  1, 0, &p->pages[i]),
				1);
		put_page(p->pages[i]);
	}
}

/*
 * HOST_P2P_PAGES pages of anonymous memory that the stubs present as
 * P2PDMA memory of one pagemap, published by a PCI device of the
 * machine, reachable (distance 4, a common switch's); every device has
 * such memory as far as the bus notifier asks.
 */
static struct host_p2p *host_p2p_setup(struct kunit *test)
{
	struct host_p2p *p;

	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_PCI_P2PDMA));
	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, NULL);
	if (!p->pdev)
		kunit_skip(test, "Test requires: a PCI device");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, host_pci_dev_put,
							p->pdev), 0);
	p->odd = -1;
	p->other = -1;
	p->published = true;
	p->distance = 4;
	p->addr = host_mmap(test, HOST_P2P_PAGES, PROT_READ | PROT_WRITE);
	host_p2p_record(test, p);
	test->priv = p;
	kunit_activate_static_stub(test, netgpu_host_p2p_pgmap,
				   host_p2p_stub_pgmap);
	kunit_activate_static_stub(test, netgpu_host_p2p_provider,
				   host_p2p_stub_provider);
	kunit_activate_static_stub(test, netgpu_host_p2p_distance,
				   host_p2p_stub_distance);
	kunit_activate_static_stub(test, netgpu_host_p2p_has_mem,
				   host_p2p_stub_has_mem);
	kunit_activate_static_stub(test, netgpu_host_p2p_wait_window,
				   host_p2p_stub_wait_window);
	return p;
}

static int host_add_p2p(struct netgpu_mem *mem, u64 addr, u64 len)
{
	struct netgpu_region_desc d = {
		.type = NETGPU_MEMTYPE_HOST, .addr = addr, .len = len,
		.flags = NETGPU_REGION_DESC_P2PDMA,
	};

	return netgpu_mem_add_region(mem, &d);
}

static unsigned int host_pdev_refs(const struct host_p2p *p)
{
	return kref_read(&p->pdev->dev.kobj.kref);
}

/*
 * A peer-to-peer region: pinned, charged nowhere (neither RLIMIT_MEMLOCK
 * nor VmPin), holding its provider, closed to the CPU (no copies into it,
 * no pages for transmit), the distance not asked before a device is;
 * gone, it unpins and drops the provider.
 *
 * Kills: P2PDMA pages charged like RAM (locked_vm or pinned_vm + 4);
 * pinned FOLL_LONGTERM | FOLL_PCI_P2PDMA (GUP's WARN and -EINVAL); the
 * region not marked device memory (cpu_writable, get_pages gives a
 * page); the distance asked at add; the provider's reference leaked or
 * the pages left pinned at release.
 */
static void netgpu_host_test_p2p_add(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, false);
	long base = host_locked();
	unsigned int refs = host_pdev_refs(p);
	struct netgpu_region *r;
	struct page *page;
	s64 pinned_vm;

	pinned_vm = atomic64_read(&current->mm->pinned_vm);
	host_set_memlock(base + 64);
	r = mock_region_get(test, mem, host_add_p2p(mem, p->addr,
						    HOST_P2P_PAGES * PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, r->device);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES),
			HOST_P2P_PAGES);
	KUNIT_EXPECT_EQ(test, host_locked(), base);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm),
			pinned_vm);
	KUNIT_EXPECT_EQ(test, p->pgmap_calls, HOST_P2P_PAGES);
	KUNIT_EXPECT_EQ(test, p->provider_calls, 1);
	KUNIT_EXPECT_EQ(test, p->distance_calls, 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 1);
	KUNIT_EXPECT_FALSE(test, netgpu_region_cpu_writable(r));
	KUNIT_EXPECT_EQ(test, netgpu_region_get_pages(r, p->addr, &page, 1),
			-EOPNOTSUPP);

	kunit_release_action(test, mock_region_put_action, r);
	kunit_release_action(test, mock_mem_close_action, mem);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs);
	KUNIT_EXPECT_EQ(test, host_locked(), base);
}

/*
 * What a peer-to-peer region refuses, each leaving nothing pinned,
 * charged, added or referenced: a page of ordinary memory in the range,
 * pages of two pagemaps, memory no device published (-EINVAL); a
 * read-only mapping (-EFAULT); a flag with no meaning (-EINVAL).  The
 * same memory without the flag is an ordinary region, which never asks
 * the P2PDMA helpers.
 *
 * Kills: the per-page check dropped (the ordinary page accepted), the
 * one-pagemap check dropped (two accepted), a provider not found taken
 * for one, the pins of a refused region left behind, an ordinary region
 * sent down the P2PDMA path.
 */
static void netgpu_host_test_p2p_refusals(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, false);
	struct netgpu_region_desc d = {
		.type = NETGPU_MEMTYPE_HOST, .addr = p->addr,
		.len = HOST_P2P_PAGES * PAGE_SIZE,
		.flags = NETGPU_REGION_DESC_P2PDMA,
	};
	unsigned int refs = host_pdev_refs(p);
	long base = host_locked();
	unsigned int i;
	u64 ro;
	int id;

	host_set_memlock(base + 64);
	ro = host_mmap(test, HOST_P2P_PAGES, PROT_READ);
	for (i = 0; i < 5; i++) {
		static const char *const what[] = {
			"a page of ordinary memory", "two pagemaps",
			"nobody published it", "read-only", "unknown flag",
		};
		static const int err[] = {
			-EINVAL, -EINVAL, -EINVAL, -EFAULT, -EINVAL,
		};

		p->odd = i == 0 ? 2 : -1;
		p->other = i == 1 ? HOST_P2P_PAGES - 1 : -1;
		p->published = i != 2;
		d.addr = i == 3 ? ro : p->addr;
		d.flags = NETGPU_REGION_DESC_P2PDMA << (i == 4);
		KUNIT_EXPECT_EQ_MSG(test, netgpu_mem_add_region(mem, &d),
				    err[i], "%s", what[i]);
		KUNIT_EXPECT_EQ_MSG(test, host_pinned(test, p->addr,
						      HOST_P2P_PAGES),
				    0, "%s", what[i]);
		KUNIT_EXPECT_EQ_MSG(test, host_locked(), base, "%s", what[i]);
		KUNIT_EXPECT_EQ_MSG(test, host_pdev_refs(p), refs, "%s",
				    what[i]);
		KUNIT_EXPECT_TRUE_MSG(test, xa_empty(&mem->regions), "%s",
				      what[i]);
	}
	KUNIT_EXPECT_EQ(test, p->provider_calls, 1);

	/* Without the flag: host memory as ever, the stubs not asked. */
	p->pgmap_calls = 0;
	p->provider_calls = 0;
	id = host_add(mem, p->addr, HOST_P2P_PAGES * PAGE_SIZE);
	KUNIT_EXPECT_GT(test, id, 0);
	KUNIT_EXPECT_EQ(test, host_locked(), base + HOST_P2P_PAGES);
	KUNIT_EXPECT_EQ(test, p->pgmap_calls, 0);
	KUNIT_EXPECT_EQ(test, p->provider_calls, 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs);
}

/* @p's memory as a region of @mem, and a context on @dev. */
static struct netgpu_region *host_p2p_region(struct kunit *test,
					     struct host_p2p *p,
					     struct netgpu_mem *mem,
					     struct device *dev,
					     struct netgpu_memctx **mc)
{
	struct netgpu_region *r;

	r = mock_region_get(test, mem, host_add_p2p(mem, p->addr,
						    HOST_P2P_PAGES * PAGE_SIZE));
	*mc = mock_memctx(test, dev);
	return r;
}

/*
 * The distance is asked when the region is attached, for the context's
 * device and the region's provider: unreachable (-1), the attach fails
 * with -EREMOTEIO and leaves no map, attachment or reference; so does a
 * mapping failure (fail_netgpu_dma_map: -ENOMEM).  Reachable, every page
 * has its own DMA address (dma-direct without an IOMMU or bouncing: the
 * page's), and the detach unmaps.
 *
 * Kills: the distance ignored, or asked for another device or provider;
 * a refused attach leaving its map; the pages' DMA addresses filled in
 * wrongly from the mapped table.
 */
static void netgpu_host_test_p2p_distance(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	unsigned int ref;
	int i;

	r = host_p2p_region(test, p, mem, &p->pdev->dev, &mc);
	ref = refcount_read(&r->ref);

	p->distance = -1;
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -EREMOTEIO);
	KUNIT_EXPECT_EQ(test, p->distance_calls, 1);
	KUNIT_EXPECT_PTR_EQ(test, p->asked_provider, p->pdev);
	KUNIT_EXPECT_PTR_EQ(test, p->asked_dev, &p->pdev->dev);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, list_empty(&mc->atts));
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);

	p->distance = 4;
	if (IS_ENABLED(CONFIG_NETGPU_FAULT_INJECTION)) {
		netgpu_kunit_fault_arm(test, NETGPU_FAIL_DMA_MAP);
		KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -ENOMEM);
		KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
		KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
		KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
	}

	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	for (i = 0; i < HOST_P2P_PAGES; i++)
		host_expect_lookup(test, mc, p->addr, i, 9);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
}

/*
 * A device that is not a PCI function (netdevsim's bus device, the
 * test's KUnit device) cannot map peer-to-peer memory: -EREMOTEIO at
 * attach, quietly, before any distance is asked (the stub would say
 * reachable) and with nothing left behind.
 *
 * Kills: the check for a PCI function dropped (the stub's distance then
 * accepts and the attach succeeds).
 */
static void netgpu_host_test_p2p_not_pci(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	struct device *dev;
	unsigned int ref;

	dev = mock_dma_device(test, "netgpu-host-p2p-nic");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	KUNIT_ASSERT_FALSE(test, dev_is_pci(dev));
	r = host_p2p_region(test, p, mem, dev, &mc);
	ref = refcount_read(&r->ref);

	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -EREMOTEIO);
	KUNIT_EXPECT_EQ(test, p->distance_calls, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, list_empty(&mc->atts));
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), ref);
}

/*
 * Add a peer-to-peer region and attach it, failing the 1st, 2nd, ...
 * allocation of the two (the region, its page array; the attachment,
 * the map, its sg_table) until both succeed untouched: after each
 * failure -ENOMEM, no map or attachment, and once the region is gone
 * nothing pinned and the provider's reference dropped.
 *
 * Kills: an error path of the P2PDMA add or map that leaks its pins,
 * its provider reference, its sg_table or its map (kmemleak, run after
 * the case), or returns another errno.
 */
static void netgpu_host_test_p2p_fail_nth(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, false);
	struct netgpu_memctx *mc = mock_memctx(test, &p->pdev->dev);
	unsigned int refs = host_pdev_refs(p);
	long base = host_locked();
	struct netgpu_region *r;
	int n, id, err, left, faults = 0;

	netgpu_kunit_need_fail_nth(test);
	for (n = 1; n < 1000; n++) {
		/* Fresh pages each time, faulted in: the stubs know them. */
		p->addr = host_mmap(test, HOST_P2P_PAGES,
				    PROT_READ | PROT_WRITE);
		host_p2p_record(test, p);
		r = NULL;

		netgpu_fail_nth_set(n);
		id = host_add_p2p(mem, p->addr, HOST_P2P_PAGES * PAGE_SIZE);
		err = id;
		if (id > 0) {
			/* Allocates nothing: the area's link holds r. */
			r = netgpu_mem_get_region(mem, id);
			err = IS_ERR(r) ? PTR_ERR(r) :
			      netgpu_memctx_attach(mc, r);
		}
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(r));

		if (!err && left)
			break;
		if (err) {
			faults++;
			KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "fail_nth=%d",
					    n);
			KUNIT_EXPECT_TRUE_MSG(test, xa_empty(&mc->xa),
					      "fail_nth=%d", n);
			KUNIT_EXPECT_TRUE_MSG(test, !r || list_empty(&r->maps),
					      "fail_nth=%d", n);
		} else {
			/* A fault something below absorbed: undo. */
			KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
		}
		if (r) {
			netgpu_region_revoke(r);
			netgpu_region_put(r);
			r = NULL;
		}
		KUNIT_EXPECT_EQ_MSG(test, host_pinned(test, p->addr,
						      HOST_P2P_PAGES),
				    0, "fail_nth=%d", n);
		KUNIT_EXPECT_EQ_MSG(test, host_pdev_refs(p), refs,
				    "fail_nth=%d", n);
		KUNIT_EXPECT_EQ_MSG(test, host_locked(), base, "fail_nth=%d",
				    n);
		KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));
	}
	KUNIT_EXPECT_LT(test, n, 1000);
	KUNIT_EXPECT_GT(test, faults, 0);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES),
			HOST_P2P_PAGES);
	/*
	 * Attached: the region's reference on its provider, and the map's
	 * on the device it maps for, the same device here.
	 */
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 2);
	kunit_info(test, "%d allocations, %d faults", n - 1, faults);
	if (r) {
		KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
		netgpu_region_put(r);
	}
}

/* ----- The provider going away (its driver unbound) ----- */

/* The driver of @pdev is gone, as far as netgpu knows. */
static void host_p2p_forget_action(void *pdev)
{
	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBOUND_DRIVER,
			       &((struct pci_dev *)pdev)->dev);
}

/*
 * What the driver core sends before the driver of @pdev is removed
 * (nothing is unbound: the notifier is called directly); the end of the
 * unbind (BUS_NOTIFY_UNBOUND_DRIVER) is sent when the test ends.
 */
static void host_p2p_unbind(struct kunit *test, struct pci_dev *pdev)
{
	mock_defer(test, host_p2p_forget_action, pdev);
	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBIND_DRIVER, &pdev->dev);
}

/*
 * The provider's driver unbinding revokes a region over its memory that
 * a context has attached, no buffer out: when the notifier returns, the
 * region is revoked and detached, its map unmapped (the map's reference
 * on the device gone) and its pages unpinned.  The region stays in its
 * area for its user, who did not remove it: an attach is refused with
 * -ENODEV, and the id is its own until the user removes it.  The
 * provider's reference goes with the region.
 *
 * Kills: the notifier removed or ignoring the event (p2p-unbind-ignored:
 * not revoked, 4 pages pinned); the pins left to the region's release
 * (p2p-revoke-pinned); the region dropped from its area (the id free for
 * the next region while the user still holds it).
 */
static void netgpu_host_test_p2p_unbind(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	unsigned int refs = host_pdev_refs(p);
	struct netgpu_region *r, *same;
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	int id;

	id = host_add_p2p(mem, p->addr, HOST_P2P_PAGES * PAGE_SIZE);
	r = mock_region_get(test, mem, id);
	mc = mock_memctx(test, &p->pdev->dev);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 2);

	host_p2p_unbind(test, p->pdev);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(r->revoked));
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, list_empty(&mc->atts));
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, p->addr, &loc), -EFAULT);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 1);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -ENODEV);
	same = netgpu_mem_get_region(mem, id);
	KUNIT_EXPECT_PTR_EQ(test, same, r);
	if (!IS_ERR(same))
		netgpu_region_put(same);

	/* Removed by its user (REMOVE_REGION): now the id goes. */
	netgpu_region_revoke(r);
	KUNIT_EXPECT_PTR_EQ(test, netgpu_mem_get_region(mem, id),
			    ERR_PTR(-ENOENT));
	kunit_release_action(test, mock_region_put_action, r);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
}

/*
 * The unbind of another PCI device's driver, and other events of the
 * provider's (a device added, a driver bound), leave a region alone:
 * attached, mapped, pinned.  Nor does another device's unbind refuse a
 * region over the provider's memory.
 *
 * Kills: the provider not compared (every unbind revoking every region,
 * or refusing every new one); events other than the unbind taken for it.
 */
static void netgpu_host_test_p2p_unbind_other(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	struct netgpu_region *r;
	struct pci_dev *other;
	unsigned int refs;

	/* pci_get_device() drops the reference it starts from. */
	other = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pci_dev_get(p->pdev));
	if (!other)
		kunit_skip(test, "Test requires: a second PCI device");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, host_pci_dev_put,
							other), 0);
	refs = host_pdev_refs(p);

	host_p2p_unbind(test, other);
	r = mock_region_get(test, mem, host_add_p2p(mem, p->addr,
						    HOST_P2P_PAGES * PAGE_SIZE));
	mc = mock_memctx(test, &p->pdev->dev);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);

	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBIND_DRIVER, &other->dev);
	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_ADD_DEVICE, &p->pdev->dev);
	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_BOUND_DRIVER, &p->pdev->dev);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(r->revoked));
	KUNIT_EXPECT_FALSE(test, list_empty(&r->maps));
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, p->addr, &loc), 0);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES),
			HOST_P2P_PAGES);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 2);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
}

/*
 * From the unbind of the provider's driver until it is gone, a region
 * over its memory is refused with -ENODEV, nothing left pinned or
 * referenced: made after the notifier ran, or made while it runs (the
 * unbind arrives after the pin, before the region is listed: the
 * provider stub sends it), when the notifier cannot have seen it; the
 * region made before is revoked meanwhile.  Once the driver is gone
 * (BUS_NOTIFY_UNBOUND_DRIVER), a new driver's memory is taken again.
 *
 * Kills: no mark of the provider going (either region accepted, its
 * pins hanging the pagemap's removal); the mark left after the driver
 * went (the later region refused); the notifier ignoring the event.
 */
static void netgpu_host_test_p2p_unbind_refuses(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	unsigned int refs = host_pdev_refs(p);
	struct netgpu_region *r;

	host_p2p_unbind(test, p->pdev);
	KUNIT_EXPECT_EQ(test, host_add_p2p(mem, p->addr,
					   HOST_P2P_PAGES * PAGE_SIZE),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, p->provider_calls, 1);
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mem->regions));

	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBOUND_DRIVER, &p->pdev->dev);
	r = mock_region_get(test, mem, host_add_p2p(mem, p->addr,
						    HOST_P2P_PAGES * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 1);

	p->unbind_in_provider = true;
	KUNIT_EXPECT_EQ(test, host_add_p2p(mem, p->addr,
					   HOST_P2P_PAGES * PAGE_SIZE),
			-ENODEV);
	KUNIT_EXPECT_FALSE(test, p->unbind_in_provider);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(r->revoked));
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 1);
}

/**
 * struct host_p2p_held - a context whose queue holds a region's buffers
 * @mc: the context
 * @holds: what netgpu_memctx_hold() gave (an interface queue's hold)
 * @nr_holds: how many
 * @pdev: the provider, whose unbind the thread sends
 * @test: the case, whose static stubs the thread takes
 * @revoked: completed by @mc's revoked callback
 * @waiting: completed when the thread's notifier is about to sleep for
 *	the pins (the wait window stub)
 * @done: completed when the thread's notifier returned
 * @started: the thread was started
 */
struct host_p2p_held {
	struct netgpu_memctx	mc;
	struct netgpu_mem_hold	*holds;
	int			nr_holds;
	struct pci_dev		*pdev;
	struct kunit		*test;
	struct completion	revoked;
	struct completion	waiting;
	struct completion	done;
	bool			started;
};

static void host_p2p_held_revoked(struct netgpu_memctx *mc)
{
	complete(&container_of(mc, struct host_p2p_held, mc)->revoked);
}

/* The unbind of the provider's driver, as the driver core sends it. */
static int host_p2p_held_thread(void *arg)
{
	struct host_p2p_held *h = arg;

	/* The case's static stubs apply to the notifier. */
	current->kunit_test = h->test;
	netgpu_host_p2p_notify(NULL, BUS_NOTIFY_UNBIND_DRIVER, &h->pdev->dev);
	current->kunit_test = NULL;
	complete_all(&h->done);
	return 0;
}

/*
 * @task sleeps (TASK_UNINTERRUPTIBLE) or @done is completed, whichever
 * is seen first, within 10 s.  A snapshot, exact once @task sleeps where
 * only the case can wake it.
 */
static bool host_task_sleeps(struct task_struct *task, struct completion *done)
{
	unsigned long timeout = jiffies + 10 * HZ;

	while (!completion_done(done) &&
	       READ_ONCE(task->__state) != TASK_UNINTERRUPTIBLE &&
	       time_before(jiffies, timeout))
		msleep(20);
	return !completion_done(done) &&
	       READ_ONCE(task->__state) == TASK_UNINTERRUPTIBLE;
}

static void host_put_task_action(void *task)
{
	put_task_struct(task);
}

/* Like an interface queue that stopped: its holds let go. */
static void host_p2p_held_put(void *arg)
{
	struct host_p2p_held *h = arg;

	while (h->nr_holds)
		netgpu_mem_hold_put(&h->holds[--h->nr_holds]);
	kvfree(h->holds);
	h->holds = NULL;
}

/*
 * The thread's notifier returned (its holds went first), else @h is
 * left to the thread, leaked: a failed case must not free it under it.
 */
static void host_p2p_held_free(void *arg)
{
	struct host_p2p_held *h = arg;

	if (h->started && !wait_for_completion_timeout(&h->done, 10 * HZ))
		return;
	kfree(h);
}

/*
 * The provider's driver unbinds while a context has the region attached
 * and its interface queue holds the buffers (netgpu_memctx_hold(): the
 * NIC may write any of them): the region is revoked at once (the
 * context's revoked callback runs, as ctx.c's queues its revoke work
 * there), but the notifier does not return, and the pages stay mapped
 * and pinned, while the hold does: the notifier's thread, past the wait
 * window (everything revoked), is seen asleep with the notifier not
 * returned; once the holder lets go (the queue's unbind,
 * netgpu_ifq_unmap()), the map is unmapped, the pages unpinned and the
 * notifier returns.
 *
 * Kills: the notifier removed or ignoring the event (no revoked
 * callback within 10 s); the notifier returning without waiting for the
 * pins (p2p-unbind-no-wait: it is seen returned, never asleep); the
 * pages left pinned after the last map went (p2p-revoke-pinned); the
 * notifier not returning once they are.
 */
static void netgpu_host_test_p2p_unbind_held(struct kunit *test)
{
	struct host_p2p *p = host_p2p_setup(test);
	struct netgpu_mem *mem = host_area(test, true);
	unsigned int refs = host_pdev_refs(p);
	struct host_p2p_held *h;
	struct task_struct *task;
	struct netgpu_region *r;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	/* Actions run in reverse: the holds go, then the thread ends. */
	mock_defer(test, host_p2p_forget_action, p->pdev);
	mock_defer(test, host_p2p_held_free, h);
	h->pdev = p->pdev;
	h->test = test;
	init_completion(&h->revoked);
	init_completion(&h->waiting);
	init_completion(&h->done);
	p->wait_window = &h->waiting;
	netgpu_memctx_init(&h->mc, &p->pdev->dev);
	h->mc.revoked = host_p2p_held_revoked;
	mock_defer(test, mock_memctx_release_action, &h->mc);

	r = mock_region_get(test, mem, host_add_p2p(mem, p->addr,
						    HOST_P2P_PAGES * PAGE_SIZE));
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(&h->mc, r), 0);
	h->nr_holds = netgpu_memctx_hold(&h->mc, &h->holds);
	KUNIT_ASSERT_EQ(test, h->nr_holds, 1);
	mock_defer(test, host_p2p_held_put, h);

	task = kthread_create(host_p2p_held_thread, h, "netgpu-p2p-unbind");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* Read until the case ends, even after the thread exits. */
	get_task_struct(task);
	mock_defer(test, host_put_task_action, task);
	h->started = true;
	wake_up_process(task);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&h->revoked,
							    10 * HZ));
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&h->waiting,
							    10 * HZ));
	/* Asleep for the pins, past the revocation's own sleeps. */
	KUNIT_EXPECT_TRUE(test, host_task_sleeps(task, &h->done));
	/* The hold keeps the map: nothing the NIC may write is let go. */
	KUNIT_EXPECT_TRUE(test, READ_ONCE(r->revoked));
	KUNIT_EXPECT_TRUE(test, netgpu_mem_hold_revoked(&h->holds[0]));
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES),
			HOST_P2P_PAGES);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 2);
	KUNIT_EXPECT_FALSE(test, completion_done(&h->done));

	netgpu_mem_hold_unmap(&h->holds[0]);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&h->done,
							    10 * HZ));
	/* The unmap work drops the map's device after the unmap op. */
	netgpu_mem_flush();
	KUNIT_EXPECT_EQ(test, host_pinned(test, p->addr, HOST_P2P_PAGES), 0);
	KUNIT_EXPECT_EQ(test, host_pdev_refs(p), refs + 1);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(&h->mc, r), -ENODEV);
}

static struct kunit_case host_test_cases[] = {
	KUNIT_CASE(netgpu_host_test_pin),
	KUNIT_CASE(netgpu_host_test_memlock),
	KUNIT_CASE(netgpu_host_test_unaligned),
	KUNIT_CASE(netgpu_host_test_refusals),
	KUNIT_CASE(netgpu_host_test_get_pages_bounded),
	KUNIT_CASE(netgpu_host_test_add_fail_nth),
	KUNIT_CASE(netgpu_host_test_fail_dma_map),
	KUNIT_CASE(netgpu_host_test_map_error),
	KUNIT_CASE(netgpu_host_test_map_huge),
	KUNIT_CASE(netgpu_host_test_dma_bounds),
	KUNIT_CASE(netgpu_host_test_memlock_overflow),
	KUNIT_CASE(netgpu_host_test_memlock_retry),
	KUNIT_CASE(netgpu_host_test_huge_len),
	KUNIT_CASE(netgpu_host_test_sync_for_cpu),
	KUNIT_CASE(netgpu_host_test_pinned_vm),
	KUNIT_CASE(netgpu_host_test_unpin_dirties),
	KUNIT_CASE(netgpu_host_test_killed),
	KUNIT_CASE(netgpu_host_test_p2p_add),
	KUNIT_CASE(netgpu_host_test_p2p_refusals),
	KUNIT_CASE(netgpu_host_test_p2p_distance),
	KUNIT_CASE(netgpu_host_test_p2p_not_pci),
	KUNIT_CASE(netgpu_host_test_p2p_fail_nth),
	KUNIT_CASE(netgpu_host_test_p2p_unbind),
	KUNIT_CASE(netgpu_host_test_p2p_unbind_other),
	KUNIT_CASE(netgpu_host_test_p2p_unbind_refuses),
	KUNIT_CASE(netgpu_host_test_p2p_unbind_held),
	{}
};

static struct kunit_suite host_test_suite = {
	.name = "netgpu_host",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.exit = netgpu_splat_exit,
	.test_cases = host_test_cases,
};

kunit_test_suite(host_test_suite);

MODULE_DESCRIPTION("KUnit tests for the netgpu host memory provider");
MODULE_LICENSE("GPL");
