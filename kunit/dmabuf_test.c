// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the netgpu dma-buf memory provider against the mock
 * GPU exporter (mock_gpu.c): mapping for a mock NIC device, sg segments
 * of every shape, the exporter's kernel fences waited for before any
 * address is published, the buffer pinned (never moved) while mapped,
 * revocation by the region's owner with contexts attached, exporter
 * refusals, the fd entry point, and the references the region holds on
 * the buffer.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-direct.h>
#include <linux/fcntl.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/io.h>
#include <linux/kthread.h>
#include <linux/miscdevice.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/udmabuf.h>

#include "fail_nth.h"
#include "mem_priv.h"
#include "mock_gpu.h"
#include "splat.h"

MODULE_IMPORT_NS(DMA_BUF);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

KUNIT_DEFINE_ACTION_WRAPPER(dmabuf_put_action, dma_buf_put, struct dma_buf *);

#define DMABUF_BASE	0x70000000ULL

/* ===== Helpers ===== */

struct dmabuf_fix {
	struct netgpu_mem	*mem;
	struct device		*dev[2];
};

static int dmabuf_test_init(struct kunit *test)
{
	struct dmabuf_fix *f;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->dev[0] = mock_dma_device(test, "netgpu-dmabuf-nic0");
	if (IS_ERR(f->dev[0]))
		return PTR_ERR(f->dev[0]);
	f->dev[1] = mock_dma_device(test, "netgpu-dmabuf-nic1");
	if (IS_ERR(f->dev[1]))
		return PTR_ERR(f->dev[1]);
	f->mem = mock_mem(test);
	test->priv = f;
	return 0;
}

static struct mock_gpu_buf *dmabuf_buf(struct kunit *test,
				       const unsigned int *orders,
				       unsigned int n)
{
	struct mock_gpu_buf *buf = mock_gpu_buf_create(test, orders, n);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	return buf;
}

static struct netgpu_region *dmabuf_region(struct kunit *test,
					   struct mock_gpu_buf *buf, u64 addr)
{
	struct dmabuf_fix *f = test->priv;

	return mock_region_get(test, f->mem,
			       netgpu_dmabuf_add_region(f->mem, buf->dmabuf,
							addr));
}

/*
 * One attachment, mapping and pin at the exporter per map: netgpu's
 * attachments are static, so the mock (a dynamic exporter) pins for each,
 * whatever CONFIG_DMABUF_MOVE_NOTIFY says.
 */
static void expect_exporter(struct kunit *test, struct mock_gpu_buf *buf,
			    int maps)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->attachments), maps);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->mappings), maps);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->pins), maps);
}

/*
 * Check every chunk of @buf through @mc: at its start, inside, at its
 * last byte; the DMA-contiguous length always runs to the chunk's end.
 */
static void expect_segments(struct kunit *test, struct netgpu_memctx *mc,
			    struct mock_gpu_buf *buf, u64 addr)
{
	bool direct = !device_iommu_mapped(mc->dev);
	struct netgpu_mem_loc loc;
	u64 off = 0, size, probes[3];
	phys_addr_t phys;
	unsigned int i, j;

	for (i = 0; i < buf->nr_chunks; i++) {
		size = PAGE_SIZE << buf->orders[i];
		phys = page_to_phys(buf->pages[i]);
		probes[0] = 0;
		probes[1] = size / 2 + 123;
		probes[2] = size - 1;
		for (j = 0; j < ARRAY_SIZE(probes); j++) {
			u64 p = probes[j];
			int err = mock_lookup(mc, addr + off + p, &loc);

			KUNIT_ASSERT_EQ_MSG(test, err, 0, "chunk %u +%llu", i,
					    p);
			KUNIT_EXPECT_EQ_MSG(test, loc.off, off + p,
					    "chunk %u +%llu", i, p);
			KUNIT_EXPECT_EQ_MSG(test, loc.len, size - p,
					    "chunk %u +%llu", i, p);
			if (direct)
				KUNIT_EXPECT_EQ_MSG(test, loc.dma, phys + p,
						    "chunk %u +%llu", i, p);
		}
		off += size;
	}
	KUNIT_EXPECT_EQ(test, off, buf->size);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, addr + off, &loc), -EFAULT);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, addr - 1, &loc), -EFAULT);
}

/*
 * What the device writes at the DMA address netgpu hands out for each
 * chunk lands in the exporter's current pages of that chunk.  Only with
 * dma-direct, where a DMA address names a physical one.
 */
static void expect_device_writes(struct kunit *test, struct netgpu_memctx *mc,
				 struct mock_gpu_buf *buf, u64 addr, u8 byte)
{
	struct netgpu_mem_loc loc;
	u64 off = 0, size;
	unsigned int i;
	u8 *cpu;

	for (i = 0; i < buf->nr_chunks; i++) {
		size = PAGE_SIZE << buf->orders[i];
		KUNIT_ASSERT_EQ(test, mock_lookup(mc, addr + off + 100, &loc),
				0);
		KUNIT_ASSERT_EQ(test, loc.len, size - 100);
		/* The device: loc.len bytes at loc.dma. */
		memset(phys_to_virt(dma_to_phys(mc->dev, loc.dma)), byte,
		       loc.len);
		cpu = page_address(buf->pages[i]);
		KUNIT_EXPECT_PTR_EQ_MSG(test, memchr_inv(cpu + 100, byte,
							 size - 100), NULL,
					"chunk %u", i);
		off += size;
	}
}

/*
 * attach in a kthread, for attaches that block on the exporter's fence.
 * @progress is completed by whichever comes first: someone waiting on
 * the fence (the mock's enable_signaling), or the attach returning.
 */
struct dmabuf_attacher {
	struct netgpu_memctx	*mc;
	struct netgpu_region	*r;
	struct mock_gpu_buf	*buf;
	struct task_struct	*task;
	struct completion	progress;
	bool			killable;
	bool			returned;
	int			err;
};

static int dmabuf_attacher_fn(void *data)
{
	struct dmabuf_attacher *a = data;

	if (a->killable)
		allow_signal(SIGKILL);
	a->err = netgpu_memctx_attach(a->mc, a->r);
	flush_signals(current);
	WRITE_ONCE(a->returned, true);
	complete(&a->progress);
	return 0;
}

/* Signal the fence (a blocked attach returns) and join the thread. */
static void dmabuf_attacher_stop(void *data)
{
	struct dmabuf_attacher *a = data;

	mock_gpu_signal_fence(a->buf);
	kthread_stop(a->task);
	put_task_struct(a->task);
	a->buf->fence_waited = NULL;
}

static struct dmabuf_attacher *
dmabuf_attacher_start(struct kunit *test, struct netgpu_memctx *mc,
		      struct netgpu_region *r, struct mock_gpu_buf *buf,
		      bool killable)
{
	struct dmabuf_attacher *a;
	struct task_struct *task;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->mc = mc;
	a->r = r;
	a->buf = buf;
	a->killable = killable;
	init_completion(&a->progress);
	buf->fence_waited = &a->progress;
	task = kthread_create(dmabuf_attacher_fn, a, "netgpu-dmabuf-att");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* kthread_stop() after the thread has returned needs it. */
	get_task_struct(task);
	a->task = task;
	mock_defer(test, dmabuf_attacher_stop, a);
	wake_up_process(task);
	return a;
}

/* A guard against hanging the boot: no case relies on it expiring. */
#define DMABUF_HANG_GUARD	(30 * HZ)

static void dmabuf_wait(struct kunit *test, struct completion *done)
{
	KUNIT_ASSERT_GT_MSG(test,
			    wait_for_completion_timeout(done,
							DMABUF_HANG_GUARD),
			    0UL, "stuck for 30 s");
}

/* ===== Test cases ===== */

/* Attach maps the buffer for the device; detach unmaps and detaches. */
static void netgpu_dmabuf_test_map(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 0, 0, 0 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *a, *b;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	KUNIT_EXPECT_EQ(test, r->start, DMABUF_BASE);
	KUNIT_EXPECT_EQ(test, r->len, 4 * PAGE_SIZE);
	/* Nothing is attached before a context needs it. */
	expect_exporter(test, buf, 0);

	a = mock_memctx(test, f->dev[0]);
	b = mock_memctx(test, f->dev[1]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(a, r), 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, a, buf, DMABUF_BASE);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(b, r), 0);
	expect_exporter(test, buf, 2);
	expect_segments(test, b, buf, DMABUF_BASE);

	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(a, r), 0);
	expect_exporter(test, buf, 1);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(b, r), 0);
	expect_exporter(test, buf, 0);
}

struct seg_shape {
	const char		*name;
	unsigned int		nr;
	unsigned int		orders[8];
};

static const struct seg_shape seg_shapes[] = {
	{ "one page",		1, { 0 } },
	{ "one 16-page segment", 1, { 4 } },
	{ "many single pages",	8, { 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "mixed sizes",	6, { 0, 2, 1, 0, 3, 0 } },
	{ "large then small",	3, { 5, 0, 1 } },
};

static void seg_shape_desc(const struct seg_shape *s, char *desc)
{
	strscpy(desc, s->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(seg_shape, seg_shapes, seg_shape_desc);

/* Address -> DMA follows the sg table whatever its segment sizes. */
static void netgpu_dmabuf_test_segments(struct kunit *test)
{
	const struct seg_shape *s = test->param_value;
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, s->orders, s->nr);
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_segments(test, mc, buf, DMABUF_BASE);
}

/*
 * The region's owner revokes it (its device goes away) with contexts
 * attached, from a context that cannot sleep: every lookup fails with
 * -ENODEV at once, while the deferred detach waits (for the region lock
 * the test holds); then the region leaves every context and the area,
 * every attachment is unmapped, detached and unpinned, and the exporter
 * may move the buffer again.
 */
static void netgpu_dmabuf_test_revoke(struct kunit *test)
{
	static const unsigned int orders[] = { 1, 0, 2 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc[3];
	struct netgpu_mem_loc loc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;
	unsigned int i;
	u32 id;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	id = r->id;
	for (i = 0; i < 3; i++) {
		mc[i] = mock_memctx(test, f->dev[i / 2]);
		KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc[i], r), 0);
		KUNIT_EXPECT_EQ(test, mock_lookup(mc[i], DMABUF_BASE, &loc), 0);
	}
	expect_exporter(test, buf, 2);

	mutex_lock(&r->lock);
	netgpu_region_revoke_async(r);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, mock_lookup(mc[i], DMABUF_BASE, &loc),
				-ENODEV);
	/* Still attached and mapped: the work cannot have run. */
	KUNIT_EXPECT_FALSE(test, list_empty(&mc[0]->atts));
	expect_exporter(test, buf, 2);
	mutex_unlock(&r->lock);
	netgpu_region_flush_revoke(r);

	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, mock_lookup(mc[i], DMABUF_BASE, &loc),
				-EFAULT);
		KUNIT_EXPECT_TRUE(test, list_empty(&mc[i]->atts));
		KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc[i], r), -ENOENT);
	}
	expect_exporter(test, buf, 0);
	KUNIT_EXPECT_EQ(test, mock_gpu_move(buf), 0);
	KUNIT_EXPECT_PTR_EQ(test, netgpu_mem_get_region(f->mem, id),
			    ERR_PTR(-ENOENT));
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc[0], r), -ENODEV);
	expect_exporter(test, buf, 0);
	/* Only the test's own references are left: the region's, buffer's. */
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 1);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 2);
	kunit_release_action(test, mock_region_put_action, r);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 1);
}

/*
 * A map waits for the exporter's kernel fence (a move still running when
 * its map op returned the sg table): until the fence signals, attach does
 * not return and no address of the region is published; then both.
 */
static void netgpu_dmabuf_test_waits_for_kernel_fence(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1 };
	struct dmabuf_fix *f = test->priv;
	struct dmabuf_attacher *a;
	struct netgpu_mem_loc loc;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	buf->fence_at_map = true;
	a = dmabuf_attacher_start(test, mc, r, buf, false);

	/* The exporter has mapped, its fence pending. */
	dmabuf_wait(test, &buf->fenced);
	/* Someone waits on the fence, or attach returned without. */
	dmabuf_wait(test, &a->progress);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(a->returned),
			       "attach returned %d, fence pending", a->err);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, DMABUF_BASE, &loc), -EFAULT);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, DMABUF_BASE + PAGE_SIZE, &loc),
			-EFAULT);

	mock_gpu_signal_fence(buf);
	/*
	 * Let attach return before kthread_stop(): it sets TIF_NOTIFY_SIGNAL,
	 * which would interrupt a wait the signalled fence has not ended yet.
	 */
	dmabuf_wait(test, &a->progress);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(a->returned));
	kunit_release_action(test, dmabuf_attacher_stop, a);
	KUNIT_EXPECT_EQ(test, a->err, 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, mc, buf, DMABUF_BASE);
}

/*
 * A caller killed while its attach waits for the exporter's kernel fence
 * gets -ERESTARTSYS and leaves nothing behind: no address published, the
 * exporter's attachment, mapping and pin given back, the region as
 * before.  Once the fence signals, the same context attaches.
 */
static void netgpu_dmabuf_test_fence_wait_killed(struct kunit *test)
{
	static const unsigned int orders[] = { 1, 0 };
	struct dmabuf_fix *f = test->priv;
	struct dmabuf_attacher *a;
	struct netgpu_mem_loc loc;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	buf->fence_at_map = true;
	a = dmabuf_attacher_start(test, mc, r, buf, true);

	dmabuf_wait(test, &buf->fenced);
	dmabuf_wait(test, &a->progress);
	KUNIT_ASSERT_FALSE_MSG(test, READ_ONCE(a->returned),
			       "attach returned %d, fence pending", a->err);
	send_sig(SIGKILL, a->task, 1);
	dmabuf_wait(test, &a->progress);
	KUNIT_EXPECT_EQ(test, a->err, -ERESTARTSYS);
	expect_exporter(test, buf, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 2);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, DMABUF_BASE, &loc), -EFAULT);

	kunit_release_action(test, dmabuf_attacher_stop, a);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, mc, buf, DMABUF_BASE);
}

/*
 * While attached the buffer is pinned: the exporter's attempt to move it
 * is refused, the DMA addresses netgpu hands out stay those of the
 * exporter's pages, and what the device writes there lands in them.
 * Detached, the buffer moves (content and all), and a new attach maps
 * the pages it moved to.
 */
static void netgpu_dmabuf_test_pinned_while_attached(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 2, 1 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_mem_loc loc;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;
	struct page *before;
	dma_addr_t dma;

	if (device_iommu_mapped(f->dev[0]))
		kunit_skip(test, "Test requires: dma-direct (no IOMMU)");
	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_exporter(test, buf, 1);
	KUNIT_ASSERT_EQ(test, mock_lookup(mc, DMABUF_BASE + PAGE_SIZE, &loc),
			0);
	dma = loc.dma;
	before = buf->pages[1];

	KUNIT_EXPECT_EQ(test, mock_gpu_move(buf), -EBUSY);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->moves), 0);
	KUNIT_EXPECT_PTR_EQ(test, buf->pages[1], before);
	KUNIT_ASSERT_EQ(test, mock_lookup(mc, DMABUF_BASE + PAGE_SIZE, &loc),
			0);
	KUNIT_EXPECT_EQ(test, loc.dma, dma);
	expect_segments(test, mc, buf, DMABUF_BASE);
	expect_device_writes(test, mc, buf, DMABUF_BASE, 0x5a);

	KUNIT_ASSERT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	expect_exporter(test, buf, 0);
	KUNIT_ASSERT_EQ(test, mock_gpu_move(buf), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->moves), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->moves_mapped), 0);
	KUNIT_EXPECT_PTR_NE(test, buf->pages[1], before);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(page_address(buf->pages[1]) + 100,
					     0x5a, (PAGE_SIZE << 2) - 100),
			    NULL);

	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_segments(test, mc, buf, DMABUF_BASE);
	expect_device_writes(test, mc, buf, DMABUF_BASE, 0xa5);
}

/*
 * A refused attach: nothing at the exporter, no lookup, no map, and only
 * the area's and the test's references on the region.
 */
static void expect_refused(struct kunit *test, struct netgpu_memctx *mc,
			   struct netgpu_region *r, struct mock_gpu_buf *buf)
{
	expect_exporter(test, buf, 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 2);
}

/*
 * The exporter's refusals come back as its errno, and a mapping that
 * fails at netgpu's fault point as -ENOMEM; each leaves nothing.
 */
static void netgpu_dmabuf_test_exporter_refuses(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);

	buf->fail_attach = -EBUSY;
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -EBUSY);
	expect_refused(test, mc, r, buf);
	buf->fail_attach = 0;

	buf->fail_map = -EIO;
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -EIO);
	expect_refused(test, mc, r, buf);
	buf->fail_map = 0;

	/* fail_netgpu_dma_map, once: -ENOMEM, the exporter not asked. */
	netgpu_kunit_fault_arm(test, NETGPU_FAIL_DMA_MAP);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -ENOMEM);
	expect_refused(test, mc, r, buf);

	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, mc, buf, DMABUF_BASE);
}

/* Bad arguments are refused without taking a buffer reference. */
static void netgpu_dmabuf_test_bad_args(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 0 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_region_desc d = { .type = NETGPU_MEMTYPE_DMABUF };
	struct mock_gpu_buf *buf;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	d.dmabuf = buf->dmabuf;

	d.addr = DMABUF_BASE + 1;
	KUNIT_EXPECT_EQ(test, netgpu_mem_add_region(f->mem, &d), -EINVAL);
	d.addr = DMABUF_BASE;
	d.len = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, netgpu_mem_add_region(f->mem, &d), -EINVAL);
	d.len = 0;
	d.addr = round_down(U64_MAX, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, netgpu_mem_add_region(f->mem, &d), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, netgpu_dmabuf_add_region_fd(f->mem, -1,
							  DMABUF_BASE),
			-EBADF);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 1);
	KUNIT_EXPECT_TRUE(test, xa_empty(&f->mem->regions));
	/* The whole buffer, by explicit length, is fine. */
	d.addr = DMABUF_BASE;
	d.len = 2 * PAGE_SIZE;
	KUNIT_EXPECT_GT(test, netgpu_mem_add_region(f->mem, &d), 0);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 2);
}

/*
 * The ioctl-facing entry point takes a dma-buf fd of the caller.  An fd
 * that is open but no dma-buf (a memfd) is refused with -EINVAL, one that
 * is not open with -EBADF, and neither takes anything.
 */
static void netgpu_dmabuf_test_fd(struct kunit *test)
{
	static const unsigned int orders[] = { 0 };
	struct dmabuf_fix *f = test->priv;
	struct mock_gpu_buf *buf;
	unsigned int regions = 0;
	unsigned long index;
	struct file *memfd;
	int fd, mfd, id;
	void *entry;
	long before;

	if (!current->files)
		kunit_skip(test, "Test requires: a file table");
	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	get_dma_buf(buf->dmabuf);
	fd = dma_buf_fd(buf->dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(buf->dmabuf);
		kunit_skip(test, "no fd: %d", fd);
	}

	id = netgpu_dmabuf_add_region_fd(f->mem, fd, DMABUF_BASE);
	KUNIT_EXPECT_GT(test, id, 0);
	/* The fd, the test and the region. */
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 3);

	memfd = shmem_file_setup("netgpu-not-a-dmabuf", PAGE_SIZE, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, memfd);
	mfd = get_unused_fd_flags(O_CLOEXEC);
	if (mfd < 0)
		fput(memfd);
	KUNIT_ASSERT_GE(test, mfd, 0);
	fd_install(mfd, memfd);
	before = file_count(memfd);
	KUNIT_EXPECT_EQ(test, netgpu_dmabuf_add_region_fd(f->mem, mfd,
							  DMABUF_BASE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, file_count(memfd), before);
	close_fd(mfd);

	close_fd(fd);
	KUNIT_EXPECT_EQ(test, netgpu_dmabuf_add_region_fd(f->mem, fd,
							  DMABUF_BASE),
			-EBADF);
	KUNIT_EXPECT_EQ(test, netgpu_dmabuf_add_region_fd(f->mem, mfd,
							  DMABUF_BASE),
			-EBADF);
	xa_for_each(&f->mem->regions, index, entry)
		regions++;
	KUNIT_EXPECT_EQ(test, regions, 1);
	kunit_release_action(test, mock_mem_close_action, f->mem);
	/* close_fd() defers the fput; the area's is synchronous. */
	flush_delayed_fput();
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), 1);
}

/*
 * RFC netgpu_detach_region() ended with an extra fput() ("nvidia bug"):
 * revocation dropped a reference it did not own.  After revocation and
 * close, the buffer holds exactly the references it had before, and is
 * still alive and usable.
 */
static void netgpu_dmabuf_test_rfc_no_extra_put(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 0 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc[2];
	struct netgpu_region *r;
	struct mock_gpu_buf *buf;
	struct netgpu_mem *mem;
	int live, id;
	long before;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	/* Buffers of earlier cases may still be on their way out. */
	flush_delayed_fput();
	live = mock_gpu_live_bufs();
	before = mock_gpu_file_count(buf);

	id = netgpu_dmabuf_add_region(f->mem, buf->dmabuf, DMABUF_BASE);
	KUNIT_ASSERT_GT(test, id, 0);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), before + 1);
	r = netgpu_mem_get_region(f->mem, id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	mc[0] = mock_memctx(test, f->dev[0]);
	mc[1] = mock_memctx(test, f->dev[1]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc[0], r), 0);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc[1], r), 0);

	netgpu_region_revoke(r);
	netgpu_region_put(r);
	kunit_release_action(test, mock_mem_close_action, f->mem);

	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), before);
	flush_delayed_fput();
	KUNIT_EXPECT_EQ(test, mock_gpu_live_bufs(), live);
	expect_exporter(test, buf, 0);

	/* Still a buffer one can register. */
	mem = mock_mem(test);
	KUNIT_EXPECT_GT(test, netgpu_dmabuf_add_region(mem, buf->dmabuf,
						       DMABUF_BASE), 0);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), before + 1);
}

/*
 * Add a dma-buf region failing its 1st, 2nd, ... allocation until it
 * succeeds untouched: -ENOMEM, and the buffer's references as before.
 */
static void netgpu_dmabuf_test_add_fail_nth(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1 };
	struct dmabuf_fix *f = test->priv;
	struct mock_gpu_buf *buf;
	int n, id, left, faults = 0;
	long before;

	netgpu_kunit_need_fail_nth(test);
	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	before = mock_gpu_file_count(buf);
	for (n = 1; n < 1000; n++) {
		netgpu_fail_nth_set(n);
		id = netgpu_dmabuf_add_region(f->mem, buf->dmabuf,
					      DMABUF_BASE);
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		if (id > 0 && left)
			break;
		if (id > 0) {
			struct netgpu_region *r;

			r = netgpu_mem_get_region(f->mem, id);
			KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
			netgpu_region_revoke(r);
			netgpu_region_put(r);
			continue;
		}
		faults++;
		KUNIT_EXPECT_EQ_MSG(test, id, -ENOMEM, "fail_nth=%d", n);
		KUNIT_EXPECT_EQ_MSG(test, mock_gpu_file_count(buf), before,
				    "fail_nth=%d", n);
		KUNIT_EXPECT_TRUE(test, xa_empty(&f->mem->regions));
	}
	KUNIT_EXPECT_LT(test, n, 1000);
	KUNIT_EXPECT_GT(test, faults, 0);
	KUNIT_EXPECT_EQ(test, mock_gpu_file_count(buf), before + 1);
	expect_exporter(test, buf, 0);
}

/*
 * Map (first attach on a device: static attach, exporter attach, pin
 * and sg table, segment table) failing its 1st, 2nd, ... allocation:
 * -ENOMEM, and the exporter's attachments, mappings and pins as before.
 */
static void netgpu_dmabuf_test_map_fail_nth(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 2, 0 };
	struct dmabuf_fix *f = test->priv;
	int n, err, left, faults = 0;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	netgpu_kunit_need_fail_nth(test);
	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	for (n = 1; n < 1000; n++) {
		netgpu_fail_nth_set(n);
		err = netgpu_memctx_attach(mc, r);
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		if (!err && left)
			break;
		if (!err) {
			KUNIT_ASSERT_EQ(test, netgpu_memctx_detach(mc, r), 0);
			continue;
		}
		faults++;
		KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "fail_nth=%d", n);
		expect_exporter(test, buf, 0);
		KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
		KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
		KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 2);
	}
	KUNIT_EXPECT_LT(test, n, 1000);
	KUNIT_EXPECT_GT(test, faults, 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, mc, buf, DMABUF_BASE);
}

/* ----- Exporters that misbehave ----- */

/* A buffer of no size, or of a size that is not a page multiple, is refused. */
static void netgpu_dmabuf_test_bad_size(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 0 };
	struct dmabuf_fix *f = test->priv;
	struct mock_gpu_buf *bufs[2];
	unsigned int i;

	bufs[0] = mock_gpu_buf_create_sized(test, orders, 0, 0);
	bufs[1] = mock_gpu_buf_create_sized(test, orders, 2, PAGE_SIZE + 512);
	for (i = 0; i < ARRAY_SIZE(bufs); i++) {
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, bufs[i]);
		KUNIT_EXPECT_EQ(test, netgpu_dmabuf_add_region(f->mem,
							       bufs[i]->dmabuf,
							       DMABUF_BASE),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, mock_gpu_file_count(bufs[i]), 1);
	}
	KUNIT_EXPECT_TRUE(test, xa_empty(&f->mem->regions));
}

/* Zero-length sg entries anywhere in the table are skipped. */
static void netgpu_dmabuf_test_zero_length_sg(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 2, 1 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = dmabuf_buf(test, orders, ARRAY_SIZE(orders));
	buf->zero_len_sg = true;
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_exporter(test, buf, 1);
	expect_segments(test, mc, buf, DMABUF_BASE);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	expect_exporter(test, buf, 0);
}

/*
 * An exporter that maps less than its buffer: attach fails with -EINVAL
 * (no address of the region may be without DMA), and the mapping and
 * attachment are given back.
 */
static void netgpu_dmabuf_test_short_map(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;

	buf = mock_gpu_buf_create_sized(test, orders, ARRAY_SIZE(orders),
					4 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	r = dmabuf_region(test, buf, DMABUF_BASE);
	KUNIT_EXPECT_EQ(test, r->len, 4 * PAGE_SIZE);
	mc = mock_memctx(test, f->dev[0]);

	KUNIT_EXPECT_EQ(test, netgpu_memctx_attach(mc, r), -EINVAL);
	expect_exporter(test, buf, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
	KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
	KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 2);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, DMABUF_BASE, &loc), -EFAULT);
}

/*
 * An exporter that maps more than its buffer: the region ends where the
 * buffer does, the segment across the end is cut there, and the dma op
 * refuses offsets past it.
 */
static void netgpu_dmabuf_test_long_map(struct kunit *test)
{
	static const unsigned int orders[] = { 0, 1, 0 };
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc;
	struct netgpu_mem_loc loc;
	struct mock_gpu_buf *buf;
	struct netgpu_region *r;
	bool direct;
	dma_addr_t dma;
	u64 len;

	buf = mock_gpu_buf_create_sized(test, orders, ARRAY_SIZE(orders),
					2 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	r = dmabuf_region(test, buf, DMABUF_BASE);
	mc = mock_memctx(test, f->dev[0]);
	direct = !device_iommu_mapped(mc->dev);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);
	expect_exporter(test, buf, 1);

	KUNIT_ASSERT_EQ(test, mock_lookup(mc, DMABUF_BASE + 100, &loc), 0);
	KUNIT_EXPECT_EQ(test, loc.len, PAGE_SIZE - 100);
	/* The second chunk is two pages; one is in the buffer. */
	KUNIT_ASSERT_EQ(test, mock_lookup(mc, DMABUF_BASE + PAGE_SIZE + 100,
					  &loc), 0);
	KUNIT_EXPECT_EQ(test, loc.off, PAGE_SIZE + 100);
	KUNIT_EXPECT_EQ(test, loc.len, PAGE_SIZE - 100);
	if (direct)
		KUNIT_EXPECT_EQ(test, loc.dma,
				page_to_phys(buf->pages[1]) + 100);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc, DMABUF_BASE + 2 * PAGE_SIZE,
					  &loc), -EFAULT);

	/* Past the end of the mapping, through the op itself. */
	KUNIT_EXPECT_EQ(test, r->ops->dma(loc.map, r->len, &dma, &len),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, r->ops->dma(loc.map, U64_MAX, &dma, &len),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, r->ops->dma(loc.map, r->len - 1, &dma, &len),
			0);
	KUNIT_EXPECT_EQ(test, len, 1);
	KUNIT_EXPECT_EQ(test, netgpu_memctx_detach(mc, r), 0);
	expect_exporter(test, buf, 0);
}

/* ----- The in-tree udmabuf exporter ----- */

static void dmabuf_put_file(void *file)
{
	fput(file);
}

/* udmabuf's misc device, found through the misc class. */
static struct miscdevice *udmabuf_miscdev(struct kunit *test)
{
	struct miscdevice probe = {
		.minor = MISC_DYNAMIC_MINOR,
		.name = "netgpu-udmabuf-probe",
		.fops = &(const struct file_operations){ .owner = THIS_MODULE },
	};
	struct miscdevice *misc = NULL;
	struct device *dev;

	if (misc_register(&probe))
		return NULL;
	dev = class_find_device_by_name(probe.this_device->class, "udmabuf");
	misc_deregister(&probe);
	if (dev) {
		misc = dev_get_drvdata(dev);
		put_device(dev);
	}
	return misc;
}

/*
 * What a process does with memfd_create() and /dev/udmabuf, from the
 * kernel: a sealed shmem file, its fd, UDMABUF_CREATE on the misc
 * device with the request in user memory.  Returns the dma-buf.
 */
static struct dma_buf *udmabuf_make(struct kunit *test, size_t size)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC };
	struct file *memfd, *ctl;
	struct miscdevice *misc;
	struct dma_buf *dmabuf;
	u64 uarg;
	int fd;
	long ret;

	if (!IS_ENABLED(CONFIG_UDMABUF) || !current->files)
		kunit_skip(test, "Test requires: CONFIG_UDMABUF, a file table");
	misc = udmabuf_miscdev(test);
	if (!misc)
		kunit_skip(test, "Test requires: /dev/udmabuf");

	memfd = shmem_file_setup("netgpu-udmabuf", size, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, memfd);
	/* memfd_create(MFD_ALLOW_SEALING) + F_ADD_SEALS(F_SEAL_SHRINK). */
	SHMEM_I(file_inode(memfd))->seals = F_SEAL_SHRINK;
	mock_defer(test, dmabuf_put_file, memfd);

	ctl = anon_inode_getfile("[udmabuf]", misc->fops, misc, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctl);
	mock_defer(test, dmabuf_put_file, ctl);

	fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd, 0);
	get_file(memfd);
	fd_install(fd, memfd);
	create.memfd = fd;
	create.size = size;

	uarg = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, uarg, 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(u64_to_user_ptr(uarg), &create,
					   sizeof(create)), 0);
	ret = ctl->f_op->unlocked_ioctl(ctl, UDMABUF_CREATE, uarg);
	close_fd(fd);
	KUNIT_ASSERT_GE(test, ret, 0);

	dmabuf = dma_buf_get(ret);
	close_fd(ret);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dmabuf);
	mock_defer(test, dmabuf_put_action, dmabuf);
	return dmabuf;
}

/*
 * The same provider against a real exporter: udmabuf (a static exporter:
 * nothing to pin, mapped by dma_buf_map_attachment()) over shmem pages.
 */
static void netgpu_dmabuf_test_udmabuf(struct kunit *test)
{
	struct dmabuf_fix *f = test->priv;
	struct netgpu_memctx *mc[2];
	struct netgpu_mem_loc loc;
	struct netgpu_region *r;
	struct dma_buf *dmabuf;
	long before;
	u64 off;

	dmabuf = udmabuf_make(test, 8 * PAGE_SIZE);
	before = file_count(dmabuf->file);
	r = mock_region_get(test, f->mem,
			    netgpu_dmabuf_add_region(f->mem, dmabuf,
						     DMABUF_BASE));
	KUNIT_EXPECT_EQ(test, r->len, 8 * PAGE_SIZE);

	mc[0] = mock_memctx(test, f->dev[0]);
	mc[1] = mock_memctx(test, f->dev[1]);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc[0], r), 0);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc[1], r), 0);
	for (off = 0; off < 8 * PAGE_SIZE; off += PAGE_SIZE / 2) {
		KUNIT_ASSERT_EQ(test, mock_lookup(mc[0], DMABUF_BASE + off,
						  &loc), 0);
		KUNIT_EXPECT_EQ(test, loc.dma & ~PAGE_MASK, off & ~PAGE_MASK);
		KUNIT_EXPECT_GE(test, loc.len, PAGE_SIZE - (off & ~PAGE_MASK));
		KUNIT_EXPECT_LE(test, loc.len, 8 * PAGE_SIZE - off);
	}
	KUNIT_EXPECT_EQ(test, mock_lookup(mc[0], DMABUF_BASE + 8 * PAGE_SIZE,
					  &loc), -EFAULT);

	/* Revocation works the same on a static exporter. */
	netgpu_region_revoke(r);
	KUNIT_EXPECT_EQ(test, mock_lookup(mc[1], DMABUF_BASE, &loc),
			-EFAULT);
	KUNIT_EXPECT_TRUE(test, list_empty(&dmabuf->attachments));
	kunit_release_action(test, mock_region_put_action, r);
	KUNIT_EXPECT_EQ(test, file_count(dmabuf->file), before);
}

/*
 * Attach of a udmabuf region failing its 1st, 2nd, ... allocation: a
 * static exporter maps at dma_buf_map_attachment(), whose failures come
 * back as -ENOMEM with the attachment detached and nothing published.
 */
static void netgpu_dmabuf_test_udmabuf_map_fail_nth(struct kunit *test)
{
	struct dmabuf_fix *f = test->priv;
	int n, err, left, faults = 0;
	struct netgpu_memctx *mc;
	struct netgpu_region *r;
	struct dma_buf *dmabuf;

	netgpu_kunit_need_fail_nth(test);
	dmabuf = udmabuf_make(test, 4 * PAGE_SIZE);
	r = mock_region_get(test, f->mem,
			    netgpu_dmabuf_add_region(f->mem, dmabuf,
						     DMABUF_BASE));
	mc = mock_memctx(test, f->dev[0]);
	for (n = 1; n < 1000; n++) {
		netgpu_fail_nth_set(n);
		err = netgpu_memctx_attach(mc, r);
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		if (!err && left)
			break;
		if (!err) {
			KUNIT_ASSERT_EQ(test, netgpu_memctx_detach(mc, r), 0);
			continue;
		}
		faults++;
		KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "fail_nth=%d", n);
		KUNIT_EXPECT_TRUE_MSG(test, list_empty(&dmabuf->attachments),
				      "fail_nth=%d", n);
		KUNIT_EXPECT_TRUE(test, list_empty(&r->maps));
		KUNIT_EXPECT_TRUE(test, xa_empty(&mc->xa));
		KUNIT_EXPECT_EQ(test, refcount_read(&r->ref), 2);
	}
	KUNIT_EXPECT_LT(test, n, 1000);
	KUNIT_EXPECT_GT(test, faults, 0);
	KUNIT_EXPECT_FALSE(test, list_empty(&dmabuf->attachments));
	KUNIT_EXPECT_FALSE(test, xa_empty(&mc->xa));
}

static struct kunit_case dmabuf_test_cases[] = {
	KUNIT_CASE(netgpu_dmabuf_test_map),
	KUNIT_CASE_PARAM(netgpu_dmabuf_test_segments, seg_shape_gen_params),
	KUNIT_CASE(netgpu_dmabuf_test_revoke),
	KUNIT_CASE(netgpu_dmabuf_test_waits_for_kernel_fence),
	KUNIT_CASE(netgpu_dmabuf_test_fence_wait_killed),
	KUNIT_CASE(netgpu_dmabuf_test_pinned_while_attached),
	KUNIT_CASE(netgpu_dmabuf_test_exporter_refuses),
	KUNIT_CASE(netgpu_dmabuf_test_bad_args),
	KUNIT_CASE(netgpu_dmabuf_test_fd),
	KUNIT_CASE(netgpu_dmabuf_test_rfc_no_extra_put),
	KUNIT_CASE(netgpu_dmabuf_test_add_fail_nth),
	KUNIT_CASE(netgpu_dmabuf_test_map_fail_nth),
	KUNIT_CASE(netgpu_dmabuf_test_bad_size),
	KUNIT_CASE(netgpu_dmabuf_test_zero_length_sg),
	KUNIT_CASE(netgpu_dmabuf_test_short_map),
	KUNIT_CASE(netgpu_dmabuf_test_long_map),
	KUNIT_CASE(netgpu_dmabuf_test_udmabuf),
	KUNIT_CASE(netgpu_dmabuf_test_udmabuf_map_fail_nth),
	{}
};

static struct kunit_suite dmabuf_test_suite = {
	.name = "netgpu_dmabuf",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.init = dmabuf_test_init,
	.exit = netgpu_splat_exit,
	.test_cases = dmabuf_test_cases,
};

kunit_test_suite(dmabuf_test_suite);

MODULE_DESCRIPTION("KUnit tests for the netgpu dma-buf memory provider");
MODULE_LICENSE("GPL");
