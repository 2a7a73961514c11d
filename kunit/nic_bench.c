// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmarks of the netgpu memory provider against page_pool's own page
 * recycling, in the same boot, on the mock NIC.
 *
 * One operation is one buffer going round: the driver allocates it from
 * its page_pool (NAPI context), the stack lets go of it, and it comes
 * back for the next allocation.
 *
 * - user_return: netgpu's full zero-copy round, the buffer handed to
 *   user space (a user reference), the skb freed, user space writing its
 *   address into the fill ring, the provider's refill taking it back;
 *   against page_pool recycling pages freed outside NAPI (its ptr_ring),
 *   the path a page takes when the stack frees it elsewhere.
 * - recycle: netgpu buffers freed by the stack without user space (the
 *   pool recycles the net_iovs itself), against the same page path: what
 *   the provider costs when it is not called.
 * - user_return_vs_devmem: the same netgpu round against devmem TCP's
 *   (net/core/devmem.c, bound to a second mock NIC's queue 0 as the
 *   netlink BIND_RX binds it, a mock GPU's dma-buf): the buffer comes
 *   from its pool, tcp_recvmsg_dmabuf() takes the user's pp reference
 *   and a token in an xarray (reserved and filled in a skb's frags at a
 *   time, as its tcp_xa_pool does), the skb is freed, SO_DEVMEM_DONTNEED
 *   erases the token and puts the reference (napi_pp_put_page()), the
 *   pool recycles it.
 *
 * Each measurement runs BENCH_ROUNDS rounds of BENCH_BATCH buffers; the
 * two sides alternate BENCH_REPS times and the best of each is kept.
 * Only the ratios of one boot mean something (QEMU under TCG).
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/dma-direction.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/dma-buf.h>
#include <linux/fdtable.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff_ref.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <net/netmem.h>
#include <net/page_pool/helpers.h>
#include <uapi/linux/netgpu.h>

/* devmem TCP's binding API is net/core's own (no public header). */
#include "../../net/core/devmem.h"

#include "mem.h"
#include "mock_gpu.h"
#include "mock_nic.h"
#include "nic.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define BENCH_BATCH	32
#define BENCH_ROUNDS	2048
#define BENCH_REPS	7
#define BENCH_OPS	((u64)BENCH_BATCH * BENCH_ROUNDS)

struct nic_bench {
	struct mock_nic		*nic;
	struct netgpu_ifq	*ifq;
	struct page_pool	*ng;
	struct page_pool	*pages;
	netmem_ref		held[BENCH_BATCH];
	unsigned long		errors;
	/* devmem TCP's side (user_return_vs_devmem) */
	struct mock_nic		*dm_nic;
	struct net_devmem_dmabuf_binding *binding;
	struct xarray		tokens;
	u32			tok[BENCH_BATCH];
};

static void nic_bench_free(void *arg)
{
	struct nic_bench *b = arg;

	xa_destroy(&b->tokens);

	if (b->ng)
		page_pool_destroy(b->ng);
	if (b->pages)
		page_pool_destroy(b->pages);
	if (b->ifq)
		netgpu_ifq_put(b->ifq);
}

static struct nic_bench *nic_bench_setup(struct kunit *test)
{
	struct netgpu_queue_geom g = { .entries = 2 * BENCH_BATCH,
				       .entry_size = 8 };
	struct netgpu_region_desc d = { .type = NETGPU_MEMTYPE_HOST };
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP,
		.pool_size = 256,
		.nid = NUMA_NO_NODE,
		.dma_dir = DMA_FROM_DEVICE,
	};
	struct netgpu_region *r;
	struct netgpu_memctx *mc;
	struct netgpu_mem *mem;
	struct nic_bench *b;
	struct device *dma;
	int id;

	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	xa_init_flags(&b->tokens, XA_FLAGS_ALLOC1);
	dma = mock_dma_device(test, "netgpu-nic-bench");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dma);
	b->nic = mock_nic_create(test, dma);
	mem = mock_mem(test);
	d.len = BENCH_BATCH * PAGE_SIZE;
	d.addr = kunit_vm_mmap(test, NULL, 0, d.len, PROT_READ | PROT_WRITE,
			       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, d.addr, 0);
	KUNIT_ASSERT_EQ(test, clear_user(u64_to_user_ptr(d.addr), d.len), 0);
	id = netgpu_mem_add_region(mem, &d);
	mc = mock_memctx(test, dma);
	r = mock_region_get(test, mem, id);
	KUNIT_ASSERT_EQ(test, netgpu_memctx_attach(mc, r), 0);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nic_bench_free,
							b), 0);
	b->ifq = netgpu_ifq_create(mc, &g);
	if (IS_ERR(b->ifq)) {
		b->ifq = NULL;
		KUNIT_FAIL_AND_ABORT(test, "netgpu_ifq_create");
	}
	/* Bound as far as the provider can tell; the bench drives the pool. */
	b->ifq->state = NETGPU_IFQ_BOUND;
	b->ng = mock_nic_pool(b->nic, b->ifq, dma, 0, DMA_FROM_DEVICE);
	if (IS_ERR(b->ng)) {
		b->ng = NULL;
		KUNIT_FAIL_AND_ABORT(test, "netgpu page_pool");
	}
	pp.dev = dma;
	b->pages = page_pool_create(&pp);
	if (IS_ERR(b->pages)) {
		b->pages = NULL;
		KUNIT_FAIL_AND_ABORT(test, "page_pool");
	}
	return b;
}

/* Before the NIC is unregistered: the binding holds no device reference. */
static void nic_bench_unbind_devmem(void *arg)
{
	struct nic_bench *b = arg;

	rtnl_lock();
	net_devmem_unbind_dmabuf(b->binding);
	rtnl_unlock();
}

/*
 * devmem TCP on a second mock NIC: a dma-buf of 512 pages bound to its
 * queue 0, the restarted queue's pool allocating from the binding.
 */
static void nic_bench_devmem(struct kunit *test, struct nic_bench *b)
{
	static unsigned int orders[32];
	struct mock_gpu_buf *buf;
	int fd, i, err;

	if (!IS_ENABLED(CONFIG_NET_DEVMEM))
		kunit_skip(test, "Test requires: CONFIG_NET_DEVMEM");
	if (!current->files)
		kunit_skip(test, "Test requires: a file table");
	for (i = 0; i < ARRAY_SIZE(orders); i++)
		orders[i] = 4;
	buf = mock_gpu_buf_create(test, orders, ARRAY_SIZE(orders));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	b->dm_nic = mock_nic_create(test, b->nic->dma_dev);
	mock_nic_register(test, b->dm_nic);

	get_dma_buf(buf->dmabuf);
	fd = dma_buf_fd(buf->dmabuf, O_CLOEXEC);
	if (fd < 0)
		dma_buf_put(buf->dmabuf);
	KUNIT_ASSERT_GE(test, fd, 0);
	rtnl_lock();
	b->binding = net_devmem_bind_dmabuf(b->dm_nic->ndev, fd, NULL);
	err = PTR_ERR_OR_ZERO(b->binding);
	if (!err)
		err = net_devmem_bind_dmabuf_to_queue(b->dm_nic->ndev, 0,
						      b->binding, NULL);
	if (err && !IS_ERR(b->binding))
		net_devmem_unbind_dmabuf(b->binding);
	if (err)
		b->binding = NULL;
	rtnl_unlock();
	close_fd(fd);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							nic_bench_unbind_devmem,
							b), 0);
	KUNIT_ASSERT_NOT_NULL(test, b->dm_nic->pp);
	KUNIT_ASSERT_PTR_EQ(test, (void *)b->dm_nic->pp->mp_priv,
			    (void *)b->binding);
}

static u64 nic_bench_addr(netmem_ref nm)
{
	return netgpu_niov_addr(netgpu_niov_from_netmem(nm));
}

/* ===== One measurement each: nanoseconds for BENCH_OPS operations ===== */

static u64 bench_ng_user_return(struct nic_bench *b)
{
	u64 t0 = ktime_get_ns();
	struct netgpu_niov *n;
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++) {
			b->held[i] = page_pool_alloc_netmems(b->ng, GFP_ATOMIC);
			if (unlikely(!b->held[i])) {
				b->errors++;
				continue;
			}
			/* Handed to user space, then the skb goes. */
			n = netgpu_niov_from_netmem(b->held[i]);
			netgpu_niov_get_uref(n);
			page_pool_put_full_netmem(b->ng, b->held[i], true);
		}
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++)
			if (b->held[i])
				mock_nic_fill(b->ifq, nic_bench_addr(b->held[i]));
	}
	return ktime_get_ns() - t0;
}

static u64 bench_ng_recycle(struct nic_bench *b)
{
	u64 t0 = ktime_get_ns();
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++)
			b->held[i] = page_pool_alloc_netmems(b->ng, GFP_ATOMIC);
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++) {
			if (unlikely(!b->held[i])) {
				b->errors++;
				continue;
			}
			page_pool_put_full_netmem(b->ng, b->held[i], false);
		}
	}
	return ktime_get_ns() - t0;
}

static u64 bench_pp_ring(struct nic_bench *b)
{
	u64 t0 = ktime_get_ns();
	int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++)
			b->held[i] = page_pool_alloc_netmems(b->pages,
							     GFP_ATOMIC);
		local_bh_enable();
		for (i = 0; i < BENCH_BATCH; i++) {
			if (unlikely(!b->held[i])) {
				b->errors++;
				continue;
			}
			page_pool_put_full_netmem(b->pages, b->held[i], false);
		}
	}
	return ktime_get_ns() - t0;
}

static u64 bench_dm_user_return(struct nic_bench *b)
{
	struct page_pool *pp = b->dm_nic->pp;
	u64 t0 = ktime_get_ns();
	int r, i, k, n;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		local_bh_disable();
		for (i = 0; i < BENCH_BATCH; i++) {
			b->held[i] = page_pool_alloc_netmems(pp, GFP_ATOMIC);
			if (unlikely(!b->held[i])) {
				b->errors++;
				continue;
			}
			/* tcp_recvmsg_dmabuf(): the user's reference ... */
			atomic_long_inc(&netmem_to_net_iov(b->held[i])->pp_ref_count);
			/* ... then the skb goes. */
			page_pool_put_full_netmem(pp, b->held[i], true);
		}
		local_bh_enable();
		/*
		 * Its tokens as tcp_recvmsg_dmabuf() takes them, an skb of
		 * up to MAX_SKB_FRAGS frags at a time: reserved under one
		 * xa_lock_bh() (tcp_xa_pool_refill()), filled in under
		 * another (tcp_xa_pool_commit()).
		 */
		for (i = 0; i < BENCH_BATCH; i += n) {
			n = min(BENCH_BATCH - i, MAX_SKB_FRAGS);
			xa_lock_bh(&b->tokens);
			for (k = 0; k < n; k++)
				if (__xa_alloc(&b->tokens, &b->tok[i + k],
					       XA_ZERO_ENTRY, xa_limit_31b,
					       GFP_KERNEL))
					b->errors++;
			xa_unlock_bh(&b->tokens);
			xa_lock_bh(&b->tokens);
			for (k = 0; k < n; k++)
				__xa_cmpxchg(&b->tokens, b->tok[i + k],
					     XA_ZERO_ENTRY,
					     (__force void *)b->held[i + k],
					     GFP_KERNEL);
			xa_unlock_bh(&b->tokens);
		}
		/* SO_DEVMEM_DONTNEED: sock_devmem_dontneed(). */
		xa_lock_bh(&b->tokens);
		for (i = 0; i < BENCH_BATCH; i++)
			if (b->held[i])
				b->held[i] = (__force netmem_ref)
					__xa_erase(&b->tokens, b->tok[i]);
		xa_unlock_bh(&b->tokens);
		for (i = 0; i < BENCH_BATCH; i++)
			if (b->held[i] && !napi_pp_put_page(b->held[i]))
				b->errors++;
	}
	return ktime_get_ns() - t0;
}

static void bench_compare(struct kunit *test, const char *name,
			  u64 (*ours)(struct nic_bench *b),
			  const char *peer_name,
			  u64 (*peer)(struct nic_bench *b))
{
	struct nic_bench *b = nic_bench_setup(test);
	u64 best_ours = U64_MAX, best_peer = U64_MAX, t;
	u64 ours_cns, peer_cns;	/* centi-nanoseconds per op */
	int rep;

	if (peer == bench_dm_user_return)
		nic_bench_devmem(test, b);

	ours(b);
	peer(b);
	for (rep = 0; rep < BENCH_REPS; rep++) {
		t = ours(b);
		best_ours = min(best_ours, t);
		t = peer(b);
		best_peer = min(best_peer, t);
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, b->errors, 0);

	ours_cns = div64_u64(best_ours * 100, BENCH_OPS);
	peer_cns = div64_u64(best_peer * 100, BENCH_OPS);
	t = div64_u64(best_ours * 1000, max_t(u64, best_peer, 1));
	kunit_info(test,
		   "BENCH nic/%s: netgpu %llu.%02llu ns/op, %s %llu.%02llu ns/op, ratio %llu.%03llu (batch %d, rounds %d, best of %d, op = one buffer allocated and back)",
		   name, ours_cns / 100, ours_cns % 100, peer_name,
		   peer_cns / 100, peer_cns % 100, t / 1000, t % 1000,
		   BENCH_BATCH, BENCH_ROUNDS, BENCH_REPS);
}

static void netgpu_nic_bench_user_return(struct kunit *test)
{
	bench_compare(test, "user_return_vs_page_pool_ring",
		      bench_ng_user_return, "page_pool_ring", bench_pp_ring);
}

static void netgpu_nic_bench_recycle(struct kunit *test)
{
	bench_compare(test, "recycle_vs_page_pool_ring", bench_ng_recycle,
		      "page_pool_ring", bench_pp_ring);
}

static void netgpu_nic_bench_user_return_devmem(struct kunit *test)
{
	bench_compare(test, "user_return_vs_devmem", bench_ng_user_return,
		      "devmem", bench_dm_user_return);
}

static struct kunit_case nic_bench_cases[] = {
	KUNIT_CASE_SLOW(netgpu_nic_bench_user_return),
	KUNIT_CASE_SLOW(netgpu_nic_bench_user_return_devmem),
	KUNIT_CASE_SLOW(netgpu_nic_bench_recycle),
	{}
};

static struct kunit_suite nic_bench_suite = {
	.name = "netgpu_nic_bench",
	.test_cases = nic_bench_cases,
	.attr.speed = KUNIT_SPEED_SLOW,
};

kunit_test_suite(nic_bench_suite);

MODULE_DESCRIPTION("Benchmarks of the netgpu memory provider");
MODULE_LICENSE("GPL");
