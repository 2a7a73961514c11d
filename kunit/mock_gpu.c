// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mock GPU for netgpu's KUnit suites: a dynamic dma-buf exporter (it has
 * pin/unpin) of kernel pages that moves unpinned buffers when asked, a
 * mock DMA device for the NIC side, and the helpers the memory suites
 * share.  See mock_gpu.h.
 */

#include <kunit/device.h>
#include <kunit/resource.h>
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poison.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "mem.h"
#include "mock_gpu.h"

MODULE_IMPORT_NS(DMA_BUF);

static atomic_t mock_gpu_nr_bufs = ATOMIC_INIT(0);

/* ===== The fence a map may leave pending ===== */

/**
 * struct mock_gpu_fence - a kernel fence of a mock GPU buffer
 * @base: the fence; first, so that dma_fence_free() frees it all
 * @lock: the fence's lock
 * @waited: completed by the first wait on the fence, or NULL
 */
struct mock_gpu_fence {
	struct dma_fence	base;
	spinlock_t		lock;	/* base */
	struct completion	*waited;
};

static const char *mock_gpu_fence_driver_name(struct dma_fence *fence)
{
	return "netgpu_mock_gpu";
}

static const char *mock_gpu_fence_timeline_name(struct dma_fence *fence)
{
	return "move";
}

/* The first waiter turns signalling on: tell the test someone waits. */
static bool mock_gpu_fence_enable_signaling(struct dma_fence *fence)
{
	struct mock_gpu_fence *f = container_of(fence, struct mock_gpu_fence,
						base);

	if (f->waited)
		complete(f->waited);
	return true;
}

static const struct dma_fence_ops mock_gpu_fence_ops = {
	.get_driver_name	= mock_gpu_fence_driver_name,
	.get_timeline_name	= mock_gpu_fence_timeline_name,
	.enable_signaling	= mock_gpu_fence_enable_signaling,
};

/* Add an unsignalled kernel fence to the buffer's resv (held). */
static int mock_gpu_add_fence(struct mock_gpu_buf *buf)
{
	struct dma_resv *resv = buf->dmabuf->resv;
	struct mock_gpu_fence *f;
	int err;

	dma_resv_assert_held(resv);
	err = dma_resv_reserve_fences(resv, 1);
	if (err)
		return err;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	f->waited = READ_ONCE(buf->fence_waited);
	dma_fence_init(&f->base, &mock_gpu_fence_ops, &f->lock,
		       buf->fence_ctx, ++buf->fence_seqno);
	dma_resv_add_fence(resv, &f->base, DMA_RESV_USAGE_KERNEL);
	/* The initial reference is the buffer's, until signalled. */
	WRITE_ONCE(buf->fence, &f->base);
	WRITE_ONCE(buf->fence_at_map, false);
	return 0;
}

/**
 * mock_gpu_signal_fence() - signal the fence a map left pending
 * @buf: the buffer
 *
 * Does nothing if there is none (any more).
 *
 * Context: Process context.
 */
void mock_gpu_signal_fence(struct mock_gpu_buf *buf)
{
	struct dma_fence *fence = xchg(&buf->fence, NULL);

	if (!fence)
		return;
	dma_fence_signal(fence);
	dma_fence_put(fence);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_signal_fence);

/* ===== The exporter ===== */

static int mock_gpu_attach(struct dma_buf *dmabuf,
			   struct dma_buf_attachment *attach)
{
	struct mock_gpu_buf *buf = dmabuf->priv;

	if (READ_ONCE(buf->fail_attach))
		return READ_ONCE(buf->fail_attach);
	atomic_inc(&buf->attachments);
	return 0;
}

static void mock_gpu_detach(struct dma_buf *dmabuf,
			    struct dma_buf_attachment *attach)
{
	struct mock_gpu_buf *buf = dmabuf->priv;

	atomic_dec(&buf->attachments);
}

static int mock_gpu_pin(struct dma_buf_attachment *attach)
{
	struct mock_gpu_buf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	atomic_inc(&buf->pins);
	return 0;
}

static void mock_gpu_unpin(struct dma_buf_attachment *attach)
{
	struct mock_gpu_buf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	atomic_dec(&buf->pins);
}

static struct sg_table *mock_gpu_map(struct dma_buf_attachment *attach,
				     enum dma_data_direction dir)
{
	struct mock_gpu_buf *buf = attach->dmabuf->priv;
	bool zero = READ_ONCE(buf->zero_len_sg);
	bool split = !zero && READ_ONCE(buf->split_sg);
	struct scatterlist *sg;
	bool fenced = false;
	struct sg_table *sgt;
	unsigned int i;
	int err;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (buf->revoked)
		return ERR_PTR(-ENODEV);
	if (READ_ONCE(buf->fail_map))
		return ERR_PTR(READ_ONCE(buf->fail_map));

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	/* With zero_len_sg: empty, chunk 0, empty, ..., chunk n-1, empty. */
	/* With split_sg: chunk 0 in two entries, then chunk 1, ... */
	err = sg_alloc_table(sgt, zero ? 2 * buf->nr_chunks + 1 :
			     buf->nr_chunks + split, GFP_KERNEL);
	if (err)
		goto err_free;
	for_each_sgtable_sg(sgt, sg, i) {
		if (zero && !(i & 1))
			sg_set_page(sg, buf->pages[0], 0, 0);
		else if (zero)
			sg_set_page(sg, buf->pages[i / 2],
				    PAGE_SIZE << buf->orders[i / 2], 0);
		else if (split && i == 0)
			sg_set_page(sg, buf->pages[0], PAGE_SIZE / 2, 0);
		else if (split && i == 1)
			sg_set_page(sg, buf->pages[0],
				    (PAGE_SIZE << buf->orders[0]) - PAGE_SIZE / 2,
				    PAGE_SIZE / 2);
		else
			sg_set_page(sg, buf->pages[i - split],
				    PAGE_SIZE << buf->orders[i - split], 0);
	}
	/*
	 * As drm_gem_map_dma_buf() and udmabuf: the CPU's view is the
	 * exporter's business (begin/end_cpu_access), not the mapping's.
	 * Also what lets two devices map the same pages (DMA API debugging
	 * refuses overlapping mappings that sync).
	 */
	err = dma_map_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (err)
		goto err_table;
	if (READ_ONCE(buf->fence_at_map)) {
		err = mock_gpu_add_fence(buf);
		if (err)
			goto err_unmap;
		fenced = true;
	}
	atomic_inc(&buf->mappings);
	if (fenced)
		complete(&buf->fenced);
	return sgt;

err_unmap:
	dma_unmap_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(err);
}

static void mock_gpu_unmap(struct dma_buf_attachment *attach,
			   struct sg_table *sgt, enum dma_data_direction dir)
{
	struct mock_gpu_buf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	dma_unmap_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
	if (lockdep_rtnl_is_held())
		atomic_inc(&buf->unmaps_rtnl);
	atomic_dec(&buf->mappings);
}

static void mock_gpu_free_pages(struct mock_gpu_buf *buf, struct page **pages)
{
	unsigned int i;

	for (i = 0; pages && i < buf->nr_chunks; i++)
		if (pages[i])
			__free_pages(pages[i], buf->orders[i]);
	kfree(pages);
}

static void mock_gpu_free(struct mock_gpu_buf *buf)
{
	mock_gpu_free_pages(buf, buf->pages);
	kfree(buf->orders);
	kfree(buf);
}

static void mock_gpu_release(struct dma_buf *dmabuf)
{
	struct mock_gpu_buf *buf = dmabuf->priv;

	WARN_ON(atomic_read(&buf->attachments) ||
		atomic_read(&buf->mappings) || atomic_read(&buf->pins));
	/* A test that failed before signalling it. */
	mock_gpu_signal_fence(buf);
	mock_gpu_free(buf);
	atomic_dec(&mock_gpu_nr_bufs);
}

static const struct dma_buf_ops mock_gpu_dmabuf_ops = {
	.attach		= mock_gpu_attach,
	.detach		= mock_gpu_detach,
	.pin		= mock_gpu_pin,
	.unpin		= mock_gpu_unpin,
	.map_dma_buf	= mock_gpu_map,
	.unmap_dma_buf	= mock_gpu_unmap,
	.release	= mock_gpu_release,
};

KUNIT_DEFINE_ACTION_WRAPPER(mock_gpu_put_action, dma_buf_put,
			    struct dma_buf *);

/**
 * mock_gpu_buf_create_sized() - export chunks as a buffer of a given size
 * @test: the test; it holds a reference on the dma-buf until it ends
 * @orders: allocation order of each chunk (each one sg entry)
 * @nr_chunks: number of chunks (0: an empty buffer)
 * @size: the size the dma-buf claims, whatever the chunks add up to: an
 *	exporter whose mapping covers less or more than its buffer, or one
 *	of a size that is not a page multiple
 *
 * Context: Process context.
 * Return: the buffer, or an ERR_PTR().
 */
struct mock_gpu_buf *mock_gpu_buf_create_sized(struct kunit *test,
					       const unsigned int *orders,
					       unsigned int nr_chunks,
					       size_t size)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct mock_gpu_buf *buf;
	struct dma_buf *dmabuf;
	unsigned int i;
	int err;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->nr_chunks = nr_chunks;
	buf->orders = kcalloc(nr_chunks, sizeof(*orders), GFP_KERNEL);
	buf->pages = kcalloc(nr_chunks, sizeof(*buf->pages), GFP_KERNEL);
	if (!buf->orders || !buf->pages)
		goto err_nomem;
	for (i = 0; i < nr_chunks; i++) {
		buf->orders[i] = orders[i];
		buf->pages[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, orders[i]);
		if (!buf->pages[i])
			goto err_nomem;
	}
	buf->size = size;
	init_completion(&buf->fenced);
	buf->fence_ctx = dma_fence_context_alloc(1);

	exp.ops = &mock_gpu_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = O_RDWR;
	exp.priv = buf;
	exp.exp_name = "netgpu_mock_gpu";
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		mock_gpu_free(buf);
		return ERR_CAST(dmabuf);
	}
	buf->dmabuf = dmabuf;
	atomic_inc(&mock_gpu_nr_bufs);

	err = kunit_add_action_or_reset(test, mock_gpu_put_action, dmabuf);
	if (err)
		return ERR_PTR(err);
	return buf;

err_nomem:
	mock_gpu_free(buf);
	return ERR_PTR(-ENOMEM);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_buf_create_sized);

/**
 * mock_gpu_buf_create() - export a buffer of chunks of given orders
 * @test: the test; it holds a reference on the dma-buf until it ends
 * @orders: allocation order of each chunk (each one sg entry)
 * @nr_chunks: number of chunks
 *
 * Context: Process context.
 * Return: the buffer, or an ERR_PTR().
 */
struct mock_gpu_buf *mock_gpu_buf_create(struct kunit *test,
					 const unsigned int *orders,
					 unsigned int nr_chunks)
{
	size_t size = 0;
	unsigned int i;

	for (i = 0; i < nr_chunks; i++)
		size += PAGE_SIZE << orders[i];
	return mock_gpu_buf_create_sized(test, orders, nr_chunks, size);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_buf_create);

/**
 * mock_gpu_buf_put() - drop the test's reference on a buffer early
 * @test: the test that created @buf
 * @buf: the buffer
 *
 * What the test would drop when it ends: the buffer is freed once the
 * importers' references are gone too, so the test must not use @buf
 * afterwards.  For tests that go through more buffers than they can keep.
 *
 * Context: Process context.
 */
void mock_gpu_buf_put(struct kunit *test, struct mock_gpu_buf *buf)
{
	kunit_release_action(test, mock_gpu_put_action, buf->dmabuf);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_buf_put);

/**
 * mock_gpu_move() - evict a buffer, as a GPU's memory manager would
 * @buf: the buffer
 *
 * Refused while any importer has it pinned (a static importer's
 * attachment pins it), as TTM does not evict pinned buffers.  Otherwise,
 * under the buffer's dma_resv lock: tells the dynamic importers
 * (move_notify), waits for every fence of the resv (a fence a map left
 * pending must have been signalled), copies the content to
 * newly allocated pages, poisons the old ones (POISON_FREE) and frees
 * them.  An importer that still wrote through its old mapping would write
 * into freed pages, which KASAN reports.
 *
 * Context: Process context.  Takes the buffer's dma_resv lock.
 * Return: 0 if the buffer moved, -EBUSY if it is pinned, -ENOMEM.
 */
int mock_gpu_move(struct mock_gpu_buf *buf)
{
	struct dma_resv *resv = buf->dmabuf->resv;
	struct page **old, **new;
	unsigned int i;
	size_t len;
	int err = 0;

	dma_resv_lock(resv, NULL);
	if (atomic_read(&buf->pins)) {
		err = -EBUSY;
		goto out;
	}
	new = kcalloc(buf->nr_chunks, sizeof(*new), GFP_KERNEL);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < buf->nr_chunks; i++) {
		new[i] = alloc_pages(GFP_KERNEL, buf->orders[i]);
		if (!new[i]) {
			mock_gpu_free_pages(buf, new);
			err = -ENOMEM;
			goto out;
		}
	}

	dma_buf_move_notify(buf->dmabuf);
	dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);
	if (atomic_read(&buf->mappings))
		atomic_inc(&buf->moves_mapped);
	old = buf->pages;
	for (i = 0; i < buf->nr_chunks; i++) {
		len = PAGE_SIZE << buf->orders[i];
		memcpy(page_address(new[i]), page_address(old[i]), len);
		memset(page_address(old[i]), POISON_FREE, len);
	}
	WRITE_ONCE(buf->pages, new);
	mock_gpu_free_pages(buf, old);
	atomic_inc(&buf->moves);
out:
	dma_resv_unlock(resv);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_move);

/**
 * mock_gpu_revoke() - the GPU gives a buffer up
 * @buf: the buffer
 *
 * From now on maps fail with -ENODEV; the buffer is evicted
 * (mock_gpu_move()) unless pinned.  Mappings that exist stay valid:
 * nothing takes pinned memory from its importers.
 *
 * Context: Process context.  Takes the buffer's dma_resv lock.
 * Return: as mock_gpu_move().
 */
int mock_gpu_revoke(struct mock_gpu_buf *buf)
{
	dma_resv_lock(buf->dmabuf->resv, NULL);
	WRITE_ONCE(buf->revoked, true);
	dma_resv_unlock(buf->dmabuf->resv);
	return mock_gpu_move(buf);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_revoke);

/**
 * mock_gpu_live_bufs() - number of exported buffers not yet released
 *
 * Context: Any context.
 * Return: the count.
 */
int mock_gpu_live_bufs(void)
{
	return atomic_read(&mock_gpu_nr_bufs);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_live_bufs);

/**
 * mock_gpu_file_count() - references on the buffer's file
 * @buf: the buffer
 *
 * Context: Any context.
 * Return: the count.
 */
long mock_gpu_file_count(struct mock_gpu_buf *buf)
{
	return file_count(buf->dmabuf->file);
}
EXPORT_SYMBOL_IF_KUNIT(mock_gpu_file_count);

/**
 * mock_dma_device() - a device to DMA-map for, as a NIC's
 * @test: the test; the device goes when it ends
 * @name: unique within the test
 *
 * A KUnit device with a 64-bit DMA mask and no limit on DMA segments
 * (DMA API debugging checks sg segments against it): maps for it are
 * real dma_map_* calls (dma-direct, or an IOMMU if the machine has one).
 *
 * Context: Process context.
 * Return: the device or an ERR_PTR().
 */
struct device *mock_dma_device(struct kunit *test, const char *name)
{
	struct device *dev;
	int err;

	dev = kunit_device_register(test, name);
	if (IS_ERR(dev))
		return dev;
	dev->dma_parms = devm_kzalloc(dev, sizeof(*dev->dma_parms),
				      GFP_KERNEL);
	if (!dev->dma_parms)
		return ERR_PTR(-ENOMEM);
	dma_set_max_seg_size(dev, UINT_MAX);
	err = dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err)
		return ERR_PTR(err);
	return dev;
}
EXPORT_SYMBOL_IF_KUNIT(mock_dma_device);

/* ===== Helpers shared by the memory suites ===== */

/**
 * mock_mem_close_action() - kunit action: netgpu_mem_close()
 * @mem: the area (&struct netgpu_mem)
 *
 * Context: Process context, may sleep.
 */
void mock_mem_close_action(void *mem)
{
	netgpu_mem_close(mem);
}
EXPORT_SYMBOL_IF_KUNIT(mock_mem_close_action);

/**
 * mock_region_put_action() - kunit action: netgpu_region_put()
 * @r: the region (&struct netgpu_region)
 *
 * Context: Process context, may sleep.
 */
void mock_region_put_action(void *r)
{
	netgpu_region_put(r);
}
EXPORT_SYMBOL_IF_KUNIT(mock_region_put_action);

/**
 * mock_memctx_release_action() - kunit action: netgpu_memctx_release()
 * @mc: the context (&struct netgpu_memctx)
 *
 * Context: Process context, may sleep.
 */
void mock_memctx_release_action(void *mc)
{
	netgpu_memctx_release(mc);
}
EXPORT_SYMBOL_IF_KUNIT(mock_memctx_release_action);

/**
 * mock_defer() - run an action when the test ends
 * @test: the test
 * @action: what to run
 * @ctx: its argument
 *
 * Runs @action(@ctx) at once, and fails the test, if it cannot be
 * registered.
 *
 * Context: Process context, the test's thread.
 */
void mock_defer(struct kunit *test, kunit_action_t *action, void *ctx)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, action, ctx), 0);
}
EXPORT_SYMBOL_IF_KUNIT(mock_defer);

/**
 * mock_mem() - a memory area closed when the test ends
 * @test: the test; fails if the area cannot be created
 *
 * Release it early with kunit_release_action(@test,
 * mock_mem_close_action, area).
 *
 * Context: Process context, the test's thread.
 * Return: the area.
 */
struct netgpu_mem *mock_mem(struct kunit *test)
{
	struct netgpu_mem *mem = netgpu_mem_create();

	KUNIT_ASSERT_NOT_NULL(test, mem);
	mock_defer(test, mock_mem_close_action, mem);
	return mem;
}
EXPORT_SYMBOL_IF_KUNIT(mock_mem);

/**
 * mock_region_get() - a reference on a region just added, for the test
 * @test: the test; fails unless @id is a region of @mem
 * @mem: the area
 * @id: what netgpu_mem_add_region() returned
 *
 * The reference is dropped when the test ends, or earlier with
 * kunit_release_action(@test, mock_region_put_action, region).
 *
 * Context: Process context, the test's thread.
 * Return: the region.
 */
struct netgpu_region *mock_region_get(struct kunit *test,
				      struct netgpu_mem *mem, int id)
{
	struct netgpu_region *r;

	KUNIT_ASSERT_GT(test, id, 0);
	r = netgpu_mem_get_region(mem, id);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	mock_defer(test, mock_region_put_action, r);
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(mock_region_get);

/**
 * mock_memctx() - a context for @dev, released when the test ends
 * @test: the test
 * @dev: the device the context DMAs with
 *
 * Context: Process context, the test's thread.
 * Return: the context.
 */
struct netgpu_memctx *mock_memctx(struct kunit *test, struct device *dev)
{
	struct netgpu_memctx *mc;

	mc = kunit_kzalloc(test, sizeof(*mc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mc);
	netgpu_memctx_init(mc, dev);
	mock_defer(test, mock_memctx_release_action, mc);
	return mc;
}
EXPORT_SYMBOL_IF_KUNIT(mock_memctx);

/**
 * mock_lookup() - netgpu_memctx_lookup() in its own RCU read section
 * @mc: the context
 * @addr: the address
 * @loc: the result; its pointers are only good for comparisons after
 *	this returns
 *
 * Context: Any context.
 * Return: as netgpu_memctx_lookup().
 */
int mock_lookup(struct netgpu_memctx *mc, u64 addr,
		struct netgpu_mem_loc *loc)
{
	int err;

	rcu_read_lock();
	err = netgpu_memctx_lookup(mc, addr, loc);
	rcu_read_unlock();
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mock_lookup);

MODULE_DESCRIPTION("netgpu KUnit mock GPU (dma-buf exporter)");
MODULE_LICENSE("GPL");
