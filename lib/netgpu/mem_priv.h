/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu memory, core-private: attachments, the providers built into the
 * library and the functions KUnit replaces with static stubs.  For mem.c,
 * the built-in providers and the memory suites only.
 */
#ifndef _NETGPU_MEM_PRIV_H
#define _NETGPU_MEM_PRIV_H

#include "mem_provider.h"

/**
 * struct netgpu_mem_att - a region attached to a context
 * @r: region (a reference is held)
 * @map: DMA map for the context's device (a reference is held)
 * @mc: context
 * @r_node: in @r->atts, under &netgpu_region.lock
 * @mc_node: in @mc->atts, under &netgpu_memctx.lock
 */
struct netgpu_mem_att {
	struct netgpu_region	*r;
	struct netgpu_dmamap	*map;
	struct netgpu_memctx	*mc;
	struct list_head	r_node;
	struct list_head	mc_node;
};

/* The library's init and exit */
int netgpu_mem_init(void);
void netgpu_mem_exit(void);
#if IS_ENABLED(CONFIG_PCI_P2PDMA)
int netgpu_host_init(void);
void netgpu_host_exit(void);
#else
static inline int netgpu_host_init(void)
{
	return 0;
}

static inline void netgpu_host_exit(void)
{
}
#endif

/* Providers built into the library */
extern const struct netgpu_mem_ops netgpu_host_ops;
extern const struct netgpu_mem_ops netgpu_dmabuf_ops;

#if IS_ENABLED(CONFIG_KUNIT)
/* Out of line for KUnit static stubs */
int netgpu_memctx_store(struct netgpu_memctx *mc, unsigned long index,
			struct netgpu_mem_att *att);
void netgpu_memctx_revoke_done(struct netgpu_memctx *mc);
void netgpu_mem_synchronize_rcu(void);
dma_addr_t netgpu_host_map_page(struct device *dev, struct page *page);
void netgpu_host_unmap_page(struct device *dev, dma_addr_t dma);
void netgpu_host_account_window(struct user_struct *user);
struct dev_pagemap;
struct pci_dev;
struct dev_pagemap *netgpu_host_p2p_pgmap(struct page *page);
struct pci_dev *netgpu_host_p2p_provider(struct dev_pagemap *pgmap);
int netgpu_host_p2p_distance(struct pci_dev *provider, struct device *dev);
bool netgpu_host_p2p_has_mem(struct pci_dev *pdev);
void netgpu_host_p2p_wait_window(struct pci_dev *pdev);
struct notifier_block;
int netgpu_host_p2p_notify(struct notifier_block *nb, unsigned long action,
			   void *data);
void netgpu_mem_flush(void);
#endif

#endif /* _NETGPU_MEM_PRIV_H */
