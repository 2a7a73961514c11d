/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A mock GPU for netgpu's KUnit suites: a dynamic dma-buf exporter (it
 * has pin/unpin) of kernel pages in chunks of chosen sizes, so the
 * importer sees sg segments of any shape.  Like a GPU driver's memory
 * manager it moves a buffer it is asked to evict (new pages, the old ones
 * poisoned and freed) unless the buffer is pinned, which it refuses, as
 * TTM does not evict pinned buffers.  Tests can make it refuse attach or
 * map, misbehave (zero-length sg entries, a size the mapping does not
 * match), leave a kernel fence pending at map time, as a move still
 * running would, and count its live attachments, mappings and pins.
 *
 * Also the helpers the memory suites share: kunit actions releasing
 * netgpu memory objects, contexts and regions tied to the test, and the
 * lookup under RCU.
 *
 * Everything here is exported with EXPORT_SYMBOL_IF_KUNIT(): users need
 * MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING).
 */
#ifndef _NETGPU_MOCK_GPU_H
#define _NETGPU_MOCK_GPU_H

#include <kunit/resource.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/types.h>

struct device;
struct dma_buf;
struct dma_fence;
struct kunit;
struct page;
struct netgpu_mem;
struct netgpu_mem_loc;
struct netgpu_memctx;
struct netgpu_region;

/**
 * struct mock_gpu_buf - one exported buffer
 * @dmabuf: the dma-buf (the test holds a reference until it ends)
 * @size: bytes the dma-buf says it has (the chunks' unless created with
 *	mock_gpu_buf_create_sized())
 * @fail_attach: errno the next attaches fail with (0: succeed)
 * @fail_map: errno the next maps fail with (0: succeed)
 * @zero_len_sg: the next maps put a zero-length sg entry before each
 *	chunk and after the last one
 * @split_sg: the next maps (without @zero_len_sg) give the first chunk
 *	two sg entries, split in the middle of its first page, as an
 *	exporter of memory in sub-page pieces does
 * @fence_at_map: the next map adds an unsignalled kernel fence
 *	(DMA_RESV_USAGE_KERNEL) to the buffer's resv before it returns, as
 *	a move still running would; cleared by that map
 * @fence_waited: if set, completed when someone first waits on that
 *	fence (its enable_signaling op)
 * @revoked: mock_gpu_revoke() ran; maps fail with -ENODEV
 * @fenced: completed by the map that added the fence, just before it
 *	returns the sg table
 * @fence: that fence until mock_gpu_signal_fence()
 * @fence_ctx: the buffer's fence context
 * @fence_seqno: last fence sequence number
 * @attachments: live attachments
 * @mappings: live mappings
 * @unmaps_rtnl: unmaps done by a task holding rtnl_lock (with lockdep)
 * @pins: live pins
 * @moves: times mock_gpu_move() moved the buffer
 * @moves_mapped: of those, moves done while an importer still mapped the
 *	buffer: only a dynamic importer may see that (it was told by
 *	move_notify), for anything else it is a bug
 * @nr_chunks: entries of @orders and @pages
 * @orders: allocation order of each chunk, one sg entry each
 * @pages: first page of each chunk; replaced by a move (under the resv)
 */
struct mock_gpu_buf {
	struct dma_buf	*dmabuf;
	size_t		size;
	int		fail_attach;
	int		fail_map;
	bool		zero_len_sg;
	bool		split_sg;
	bool		fence_at_map;
	struct completion *fence_waited;
	bool		revoked;
	struct completion fenced;
	struct dma_fence *fence;
	u64		fence_ctx;
	u64		fence_seqno;
	atomic_t	attachments;
	atomic_t	mappings;
	atomic_t	unmaps_rtnl;
	atomic_t	pins;
	atomic_t	moves;
	atomic_t	moves_mapped;
	unsigned int	nr_chunks;
	unsigned int	*orders;
	struct page	**pages;
};

struct mock_gpu_buf *mock_gpu_buf_create(struct kunit *test,
					 const unsigned int *orders,
					 unsigned int nr_chunks);
struct mock_gpu_buf *mock_gpu_buf_create_sized(struct kunit *test,
					       const unsigned int *orders,
					       unsigned int nr_chunks,
					       size_t size);
void mock_gpu_buf_put(struct kunit *test, struct mock_gpu_buf *buf);
int mock_gpu_move(struct mock_gpu_buf *buf);
int mock_gpu_revoke(struct mock_gpu_buf *buf);
void mock_gpu_signal_fence(struct mock_gpu_buf *buf);
int mock_gpu_live_bufs(void);
long mock_gpu_file_count(struct mock_gpu_buf *buf);
struct device *mock_dma_device(struct kunit *test, const char *name);

/* Shared by the memory suites */
void mock_mem_close_action(void *mem);
void mock_region_put_action(void *r);
void mock_memctx_release_action(void *mc);
void mock_defer(struct kunit *test, kunit_action_t *action, void *ctx);
struct netgpu_mem *mock_mem(struct kunit *test);
struct netgpu_region *mock_region_get(struct kunit *test,
				      struct netgpu_mem *mem, int id);
struct netgpu_memctx *mock_memctx(struct kunit *test, struct device *dev);
int mock_lookup(struct netgpu_memctx *mc, u64 addr,
		struct netgpu_mem_loc *loc);

#endif /* _NETGPU_MOCK_GPU_H */
