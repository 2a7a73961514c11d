// SPDX-License-Identifier: GPL-2.0-only
/*
 * A mock NIC for netgpu's KUnit suites; see mock_nic.h.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/bottom_half.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool/helpers.h>

#include "mock_gpu.h"
#include "mock_nic.h"
#include "nic.h"
#include "queue.h"

static void mock_nic_free_action(void *ndev)
{
	free_netdev(ndev);
}

static struct mock_nic *mock_nic_of(struct net_device *dev)
{
	return *(struct mock_nic **)netdev_priv(dev);
}

/* What a driver with the devmem contract creates for rx queue 0. */
static struct page_pool *mock_nic_rxq_pool(struct mock_nic *nic)
{
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.order = 0,
		.pool_size = 256,
		.nid = NUMA_NO_NODE,
		.dev = nic->dma_dev,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE,
		.netdev = nic->ndev,
		.queue_idx = 0,
	};

	ASSERT_RTNL();
	if (!nic->ignore_mp)
		pp.flags |= PP_FLAG_ALLOW_UNREADABLE_NETMEM;
	return page_pool_create(&pp);
}

/*
 * The rx queue's NAPI poll (with_napi): what a driver's refill does,
 * one buffer from the queue's pool, kept for the case.
 */
static int mock_nic_poll(struct napi_struct *napi, int budget)
{
	struct mock_nic *nic = container_of(napi, struct mock_nic, napi);

	if (nic->pp && !nic->polled)
		nic->polled = page_pool_alloc_netmems(nic->pp, GFP_ATOMIC |
						      __GFP_NOWARN);
	atomic_inc(&nic->polls);
	napi_complete_done(napi, 0);
	complete(&nic->poll_done);
	return 0;
}

static int mock_nic_open(struct net_device *dev)
{
	struct mock_nic *nic = mock_nic_of(dev);
	struct page_pool *pp = mock_nic_rxq_pool(nic);

	if (IS_ERR(pp))
		return PTR_ERR(pp);
	nic->pp = pp;
	if (nic->with_napi) {
		napi_enable(&nic->napi);
		netif_queue_set_napi(dev, 0, NETDEV_QUEUE_TYPE_RX, &nic->napi);
	}
	return 0;
}

static int mock_nic_stop(struct net_device *dev)
{
	struct mock_nic *nic = mock_nic_of(dev);

	if (nic->with_napi) {
		netif_queue_set_napi(dev, 0, NETDEV_QUEUE_TYPE_RX, NULL);
		napi_disable(&nic->napi);
	}
	page_pool_destroy(nic->pp);
	nic->pp = NULL;
	return 0;
}

static netdev_tx_t mock_nic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops mock_nic_netdev_ops = {
	.ndo_open	= mock_nic_open,
	.ndo_stop	= mock_nic_stop,
	.ndo_start_xmit	= mock_nic_xmit,
};

/* The per-queue memory of the queue-management API: the pool. */
struct mock_nic_qmem {
	struct page_pool	*pp;
};

static int mock_nic_mem_alloc(struct net_device *dev, void *mem, int idx)
{
	struct mock_nic *nic = mock_nic_of(dev);
	struct mock_nic_qmem *q = mem;

	if (!netif_running(dev))
		return -ENETDOWN;
	if (nic->fail_alloc)
		return nic->fail_alloc;
	q->pp = mock_nic_rxq_pool(nic);
	return PTR_ERR_OR_ZERO(q->pp);
}

static void mock_nic_mem_free(struct net_device *dev, void *mem)
{
	struct mock_nic_qmem *q = mem;

	page_pool_destroy(q->pp);
}

static int mock_nic_start(struct net_device *dev, void *mem, int idx)
{
	struct mock_nic *nic = mock_nic_of(dev);
	struct mock_nic_qmem *q = mem;

	if (nic->fail_start && q->pp->mp_ops)
		return nic->fail_start;
	nic->pp = q->pp;
	return 0;
}

static int mock_nic_qstop(struct net_device *dev, void *mem, int idx)
{
	struct mock_nic *nic = mock_nic_of(dev);
	struct mock_nic_qmem *q = mem;

	q->pp = nic->pp;
	nic->pp = NULL;
	return 0;
}

static const struct netdev_queue_mgmt_ops mock_nic_qops = {
	.ndo_queue_mem_size	= sizeof(struct mock_nic_qmem),
	.ndo_queue_mem_alloc	= mock_nic_mem_alloc,
	.ndo_queue_mem_free	= mock_nic_mem_free,
	.ndo_queue_start	= mock_nic_start,
	.ndo_queue_stop		= mock_nic_qstop,
};

/* The same API with one call missing, as an incomplete driver has it. */
static const struct netdev_queue_mgmt_ops mock_nic_qops_without[] = {
	[MOCK_NIC_NO_MEM_ALLOC] = {
		.ndo_queue_mem_size	= sizeof(struct mock_nic_qmem),
		.ndo_queue_mem_free	= mock_nic_mem_free,
		.ndo_queue_start	= mock_nic_start,
		.ndo_queue_stop		= mock_nic_qstop,
	},
	[MOCK_NIC_NO_MEM_FREE] = {
		.ndo_queue_mem_size	= sizeof(struct mock_nic_qmem),
		.ndo_queue_mem_alloc	= mock_nic_mem_alloc,
		.ndo_queue_start	= mock_nic_start,
		.ndo_queue_stop		= mock_nic_qstop,
	},
	[MOCK_NIC_NO_START] = {
		.ndo_queue_mem_size	= sizeof(struct mock_nic_qmem),
		.ndo_queue_mem_alloc	= mock_nic_mem_alloc,
		.ndo_queue_mem_free	= mock_nic_mem_free,
		.ndo_queue_stop		= mock_nic_qstop,
	},
	[MOCK_NIC_NO_STOP] = {
		.ndo_queue_mem_size	= sizeof(struct mock_nic_qmem),
		.ndo_queue_mem_alloc	= mock_nic_mem_alloc,
		.ndo_queue_mem_free	= mock_nic_mem_free,
		.ndo_queue_start	= mock_nic_start,
	},
};

/**
 * mock_nic_set_qops() - the queue-management API the NIC has
 * @nic: a NIC of mock_nic_register()
 * @without: the call it lacks, or %MOCK_NIC_QOPS_ALL for the whole API
 *	(what mock_nic_register() gives it)
 *
 * Context: Process context, under rtnl_lock.
 */
void mock_nic_set_qops(struct mock_nic *nic, enum mock_nic_qop without)
{
	ASSERT_RTNL();
	if (without == MOCK_NIC_QOPS_ALL)
		nic->ndev->queue_mgmt_ops = &mock_nic_qops;
	else
		nic->ndev->queue_mgmt_ops = &mock_nic_qops_without[without];
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_set_qops);

static void mock_nic_unregister_action(void *ndev)
{
	unregister_netdev(ndev);
}

/**
 * mock_nic_register() - make the NIC a registered, running device
 * @test: the test
 * @nic: a NIC of mock_nic_create()
 *
 * The device gets the queue-management API (a new page_pool per restart,
 * "new pool, same NAPI"), is registered and brought up; @nic->pp is its
 * rx queue's pool while it is up.  With @nic->with_napi, its rx queue
 * has a NAPI instance while it is up.  Unregistered when the test ends.
 *
 * Context: Process context, the test's thread; takes rtnl_lock.
 */
void mock_nic_register(struct kunit *test, struct mock_nic *nic)
{
	struct net_device *dev = nic->ndev;

	dev->netdev_ops = &mock_nic_netdev_ops;
	dev->queue_mgmt_ops = &mock_nic_qops;
	eth_hw_addr_random(dev);
	/*
	 * Nothing may take device references behind the cases' backs once
	 * it is up (they count them): no IPv6 autoconfiguration (DAD, router
	 * solicitations and their neighbours and routes) and no multicast
	 * (MLD reports).
	 */
	dev->priv_flags |= IFF_NO_ADDRCONF;
	dev->flags &= ~IFF_MULTICAST;
	/* Deleted by free_netdev(). */
	if (nic->with_napi) {
		init_completion(&nic->poll_done);
		netif_napi_add(dev, &nic->napi, mock_nic_poll);
	}
	KUNIT_ASSERT_EQ(test, register_netdev(dev), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							mock_nic_unregister_action,
							dev), 0);
	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_open(dev, NULL), 0);
	rtnl_unlock();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, nic->pp);
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_register);

/**
 * mock_nic_unregister() - unregister the NIC now, not when the test ends
 * @test: the test
 * @nic: a NIC of mock_nic_register()
 *
 * Context: Process context, the test's thread; takes rtnl_lock.
 */
void mock_nic_unregister(struct kunit *test, struct mock_nic *nic)
{
	kunit_release_action(test, mock_nic_unregister_action, nic->ndev);
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_unregister);

/**
 * mock_nic_create() - a mock NIC for the test
 * @test: the test
 * @dma_dev: the DMA device its pools map for (mock_dma_device())
 *
 * Context: Process context, the test's thread.
 * Return: the NIC; the test fails if it cannot be made.
 */
struct mock_nic *mock_nic_create(struct kunit *test, struct device *dma_dev)
{
	struct mock_nic *nic;

	nic = kunit_kzalloc(test, sizeof(*nic), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, nic);
	nic->ndev = alloc_etherdev_mqs(sizeof(nic), 1, 1);
	KUNIT_ASSERT_NOT_NULL(test, nic->ndev);
	*(struct mock_nic **)netdev_priv(nic->ndev) = nic;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							mock_nic_free_action,
							nic->ndev), 0);
	SET_NETDEV_DEV(nic->ndev, dma_dev);
	nic->dma_dev = dma_dev;
	return nic;
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_create);

/**
 * mock_nic_leak() - never free the NIC's device
 * @test: the test
 * @nic: the NIC, unregistered
 *
 * For a case whose pool did not go away: the pool is still on the
 * device's list, freeing the device would corrupt it.
 *
 * Context: Process context, the test's thread.
 */
void mock_nic_leak(struct kunit *test, struct mock_nic *nic)
{
	kunit_remove_action(test, mock_nic_free_action, nic->ndev);
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_leak);

/**
 * mock_nic_pool() - a page_pool on the NIC's rx queue 0
 * @nic: the NIC
 * @ifq: the provider: the queue's parameters name it while the pool is
 *	created (NULL: no provider, a pool of pages)
 * @dev: the device the pool maps for (@nic's DMA device, or another one
 *	to see the provider refuse it)
 * @order: page order of the pool
 * @dir: DMA direction of the pool
 *
 * The pool picks its provider up at creation, under rtnl_lock, as
 * page_pool_init() requires; the queue's parameters are cleared again
 * afterwards.  The test destroys the pool (mock_nic_pool_destroy()).
 *
 * Context: Process context.
 * Return: the pool, or an ERR_PTR() of page_pool_create() (the
 * provider's init error among them).
 */
struct page_pool *mock_nic_pool(struct mock_nic *nic, struct netgpu_ifq *ifq,
				struct device *dev, unsigned int order,
				enum dma_data_direction dir)
{
	struct netdev_rx_queue *rxq = __netif_get_rx_queue(nic->ndev, 0);
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV |
			 PP_FLAG_ALLOW_UNREADABLE_NETMEM,
		.order = order,
		.pool_size = 256,
		.nid = NUMA_NO_NODE,
		.dev = dev,
		.dma_dir = dir,
		.max_len = PAGE_SIZE << order,
		.netdev = nic->ndev,
		.queue_idx = 0,
	};
	struct page_pool *pool;

	rtnl_lock();
	if (ifq)
		netgpu_ifq_set_mp_params(ifq, &rxq->mp_params);
	pool = page_pool_create(&pp);
	rxq->mp_params.mp_priv = NULL;
	rxq->mp_params.mp_ops = NULL;
	rtnl_unlock();
	return pool;
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_pool);

/**
 * mock_nic_pool_destroy() - the driver's page_pool_destroy()
 * @pp: the pool
 *
 * Context: Process context.
 */
void mock_nic_pool_destroy(struct page_pool *pp)
{
	page_pool_destroy(pp);
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_pool_destroy);

/**
 * mock_nic_inflight() - page_pool_inflight() of a pool
 * @pp: the pool
 *
 * Buffers the pool handed out (to the NIC, the stack, user space, or in
 * its own caches) and not yet released to their provider.
 *
 * Context: Any context; exact when nothing runs on the pool.
 * Return: the count, negative if the accounting is broken.
 */
s32 mock_nic_inflight(const struct page_pool *pp)
{
	return (s32)(READ_ONCE(pp->pages_state_hold_cnt) -
		     atomic_read(&pp->pages_state_release_cnt));
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_inflight);

/**
 * mock_nic_alloc() - allocate a buffer as a driver's NAPI poll does
 * @pp: the pool
 *
 * Context: Process context; runs with BHs off.
 * Return: the netmem, or 0 when the pool has none.
 */
netmem_ref mock_nic_alloc(struct page_pool *pp)
{
	netmem_ref nm;

	local_bh_disable();
	nm = page_pool_alloc_netmems(pp, GFP_ATOMIC | __GFP_NOWARN);
	local_bh_enable();
	return nm;
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_alloc);

/**
 * mock_nic_fill() - give a buffer back as user space does
 * @ifq: the interface queue
 * @addr: the buffer's user address
 *
 * Writes @addr into the fill ring and publishes it (the ring's ordering
 * (A)), as a process does through its mapping.  The caller is the ring's
 * only producer and leaves room in it.
 *
 * Context: Any context.
 */
void mock_nic_fill(struct netgpu_ifq *ifq, u64 addr)
{
	struct netgpu_queue *q = ifq->fill;
	struct netgpu_ring *ring = netgpu_queue_ring(q);
	u64 *slots = q->entries;
	u32 prod = READ_ONCE(ring->prod);

	WRITE_ONCE(slots[prod & q->mask], addr);
	/* Publish the entry after writing it, as a process must (A). */
	smp_store_release(&ring->prod, prod + 1);
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_fill);

/**
 * mock_nic_rx_skb() - a header-split skb of received buffers
 * @nic: the NIC
 * @nms: buffers from a pool of @nic; their references go to the skb
 * @nr: how many (at most MAX_SKB_FRAGS)
 * @frag_len: payload bytes in each
 *
 * MOCK_NIC_HLEN bytes of headers in the linear part, the payload in
 * @nms as netmem frags, recycled to their pool when the skb is freed,
 * its checksum verified by "the device", as a header-split NIC delivers
 * it.
 *
 * Context: Any context.
 * Return: the skb, or NULL without memory (the buffers then stay the
 * caller's).
 */
struct sk_buff *mock_nic_rx_skb(struct mock_nic *nic, const netmem_ref *nms,
				unsigned int nr, unsigned int frag_len)
{
	struct sk_buff *skb;
	unsigned int i;

	if (WARN_ON_ONCE(nr > MAX_SKB_FRAGS))
		return NULL;
	skb = alloc_skb(MOCK_NIC_HLEN + NET_IP_ALIGN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, NET_IP_ALIGN);
	memset(skb_put(skb, MOCK_NIC_HLEN), 0x5a, MOCK_NIC_HLEN);
	for (i = 0; i < nr; i++)
		skb_add_rx_frag_netmem(skb, i, nms[i], 0, frag_len, PAGE_SIZE);
	skb_mark_for_recycle(skb);
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->dev = nic->ndev;
	return skb;
}
EXPORT_SYMBOL_IF_KUNIT(mock_nic_rx_skb);
