/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A mock GPU for netgpu's KUnit suites: a dma-buf exporter of kernel
 * pages (memory that is not the test's user memory) in chunks of chosen
 * sizes, so the importer sees sg segments of any shape, which tests can
 * make refuse attach or map, misbehave (zero-length sg entries, a size
 * the mapping does not match), revoke on demand, and whose live
 * attachments, mappings and pins they can count.
 *
 * Also the helpers the memory suites share: kunit actions releasing
 * netgpu memory objects, contexts and regions tied to the test, and the
 * lookup under RCU.
 */
#ifndef _NETGPU_MOCK_GPU_H
#define _NETGPU_MOCK_GPU_H

#include <kunit/resource.h>
#include <linux/atomic.h>
#include <linux/types.h>

struct device;
struct dma_buf;
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
 * @revoked: mock_gpu_revoke() ran; maps fail with -ENODEV
 * @attachments: live attachments
 * @mappings: live mappings
 * @pins: live pins
 * @nr_chunks: entries of @orders and @pages
 * @orders: allocation order of each chunk, one sg entry each
 * @pages: first page of each chunk
 */
struct mock_gpu_buf {
	struct dma_buf	*dmabuf;
	size_t		size;
	int		fail_attach;
	int		fail_map;
	bool		zero_len_sg;
	bool		revoked;
	atomic_t	attachments;
	atomic_t	mappings;
	atomic_t	pins;
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
void mock_gpu_revoke(struct mock_gpu_buf *buf);
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
