/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A mock NIC for netgpu's KUnit suites: a net_device that is never
 * registered, whose parent is a DMA-capable KUnit device, and page_pools
 * created on its rx queue 0 as a driver with the devmem contract creates
 * them (PP_FLAG_ALLOW_UNREADABLE_NETMEM, DMA mapping and sync on, order
 * 0, DMA_FROM_DEVICE), so that whatever provider the queue's parameters
 * name is the pool's provider.  Plus what such a driver does with the
 * buffers: allocate in its NAPI context, build header-split skbs whose
 * payload frags are the buffers (marked for recycling, checksum
 * verified), and hand them to the stack.
 *
 * Everything here is exported with EXPORT_SYMBOL_IF_KUNIT().
 */
#ifndef _NETGPU_MOCK_NIC_H
#define _NETGPU_MOCK_NIC_H

#include <linux/completion.h>
#include <linux/netdevice.h>
#include <net/netmem.h>

struct device;
struct kunit;
struct net_device;
struct page_pool;
struct sk_buff;
struct netgpu_ifq;

/**
 * struct mock_nic - the mock NIC of a test
 * @ndev: the device; freed when the test ends
 * @dma_dev: its parent, the device pools map for
 * @pp: the rx queue's page_pool while a registered NIC is up
 * @fail_alloc: the next queue restarts fail their mem_alloc with this
 * @fail_start: the next queue restarts fail to start a queue whose pool
 *	has a memory provider, with this
 * @ignore_mp: the driver creates pools without
 *	PP_FLAG_ALLOW_UNREADABLE_NETMEM, as a driver without memory-provider
 *	support does
 * @with_napi: set before mock_nic_register(): the rx queue has a NAPI
 *	instance, named to the core with netif_queue_set_napi() while the
 *	device is up; its poll allocates one buffer (@polled)
 * @napi: that instance
 * @polls: polls run
 * @polled: the buffer the last poll allocated, if any; the case frees it
 * @poll_done: completed by each poll
 */
struct mock_nic {
	struct net_device	*ndev;
	struct device		*dma_dev;
	struct page_pool	*pp;
	int			fail_alloc;
	int			fail_start;
	bool			ignore_mp;
	bool			with_napi;
	struct napi_struct	napi;
	atomic_t		polls;
	netmem_ref		polled;
	struct completion	poll_done;
};

/**
 * enum mock_nic_qop - a queue-management call the NIC may lack
 * @MOCK_NIC_QOPS_ALL: none: the whole API
 * @MOCK_NIC_NO_MEM_ALLOC: ndo_queue_mem_alloc
 * @MOCK_NIC_NO_MEM_FREE: ndo_queue_mem_free
 * @MOCK_NIC_NO_START: ndo_queue_start
 * @MOCK_NIC_NO_STOP: ndo_queue_stop
 */
enum mock_nic_qop {
	MOCK_NIC_QOPS_ALL,
	MOCK_NIC_NO_MEM_ALLOC,
	MOCK_NIC_NO_MEM_FREE,
	MOCK_NIC_NO_START,
	MOCK_NIC_NO_STOP,
};

/* The header bytes mock_nic_rx_skb() puts in the linear part */
#define MOCK_NIC_HLEN	66

struct mock_nic *mock_nic_create(struct kunit *test, struct device *dma_dev);
struct page_pool *mock_nic_pool(struct mock_nic *nic, struct netgpu_ifq *ifq,
				struct device *dev, unsigned int order,
				enum dma_data_direction dir);
void mock_nic_pool_destroy(struct page_pool *pp);
void mock_nic_register(struct kunit *test, struct mock_nic *nic);
void mock_nic_unregister(struct kunit *test, struct mock_nic *nic);
void mock_nic_leak(struct kunit *test, struct mock_nic *nic);
void mock_nic_set_qops(struct mock_nic *nic, enum mock_nic_qop without);
s32 mock_nic_inflight(const struct page_pool *pp);
netmem_ref mock_nic_alloc(struct page_pool *pp);
void mock_nic_fill(struct netgpu_ifq *ifq, u64 addr);
struct sk_buff *mock_nic_rx_skb(struct mock_nic *nic, const netmem_ref *nms,
				unsigned int nr, unsigned int frag_len);

#endif /* _NETGPU_MOCK_NIC_H */
