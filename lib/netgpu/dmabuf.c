// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu dma-buf memory provider: device memory (a GPU's, or any other
 * exporter's) imported as a dma-buf.
 *
 * Each DMA map is a static attachment of the buffer to the NIC's device
 * (dma_buf_attach(): no importer ops, no move_notify), as devmem TCP
 * binds a dma-buf.  For a static importer a dynamic exporter pins the
 * buffer at attach and unpins it at detach, so the placement, and with
 * it the sg table, stays put for the life of the map: the exporter
 * cannot move the memory under the NIC.
 *
 * The importer is deliberately not dynamic.  A dynamic importer learns of
 * a move from move_notify, under the buffer's dma_resv lock, and must
 * have stopped using the old placement by the time the move's fences
 * signal: stop the device synchronously there, or put a fence of its own
 * in the resv for the exporter to wait on.  netgpu can do neither: the
 * DMA addresses netgpu_memctx_lookup() hands out sit in a NIC's rx
 * descriptors, and the device writes to them until whoever owns the ring
 * takes them back; netgpu owns neither the ring nor a fence for those
 * writes.  Revoking the region from move_notify, asynchronously, as this
 * provider once did, let the exporter free the old placement while the
 * NIC still wrote into it.  So a region is never revoked by its exporter,
 * only by its owner (netgpu_region_revoke(): the user unregisters it, or
 * the device goes away).
 *
 * The price: peer-to-peer is an importer op (allow_peer2peer), so a
 * static importer cannot ask for it, and an exporter that could hand the
 * NIC device memory through a PCI BAR may pin the buffer in system
 * memory instead.  devmem TCP pays the same.
 *
 * A map is handed to the core only once the exporter's kernel fences
 * (DMA_RESV_USAGE_KERNEL: a move or clear still running, possibly
 * started by the pin itself) have signalled, as dma_buf_map_attachment()
 * requires: until then the memory behind the sg table is not the
 * buffer's content yet, and nothing of it may be published.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "mem_priv.h"

MODULE_IMPORT_NS(DMA_BUF);

/**
 * struct netgpu_dmabuf_region - a region backed by a dma-buf
 * @r: core region
 * @dmabuf: the buffer (a reference is held)
 */
struct netgpu_dmabuf_region {
	struct netgpu_region	r;
	struct dma_buf		*dmabuf;
};

/**
 * struct netgpu_dmabuf_seg - one DMA-contiguous segment of a mapping
 * @off: offset in the buffer of its first byte
 * @len: bytes
 * @dma: DMA address of its first byte
 */
struct netgpu_dmabuf_seg {
	u64			off;
	u64			len;
	dma_addr_t		dma;
};

/**
 * struct netgpu_dmabuf_map - a dma-buf attached and mapped for a device
 * @map: core map
 * @attach: static attachment of the buffer to the device; a dynamic
 *	exporter keeps the buffer pinned while it exists
 * @sgt: the exporter's mapping
 * @nr_segs: entries of @segs
 * @segs: the mapping's segments, sorted by offset, for lookups
 */
struct netgpu_dmabuf_map {
	struct netgpu_dmamap	map;
	struct dma_buf_attachment *attach;
	struct sg_table		*sgt;
	unsigned int		nr_segs;
	struct netgpu_dmabuf_seg *segs;
};

static struct netgpu_dmabuf_region *to_dmabuf_region(struct netgpu_region *r)
{
	return container_of(r, struct netgpu_dmabuf_region, r);
}

static struct netgpu_dmabuf_map *to_dmabuf_map(const struct netgpu_dmamap *map)
{
	return container_of(map, struct netgpu_dmabuf_map, map);
}

static struct netgpu_region *
netgpu_dmabuf_add(struct netgpu_mem *mem, const struct netgpu_region_desc *desc)
{
	struct netgpu_dmabuf_region *dr;
	struct dma_buf *dmabuf;
	u64 end;
	int err;

	/* No flag means anything for a dma-buf (P2PDMA is host memory's). */
	if (desc->flags || !PAGE_ALIGNED(desc->addr))
		return ERR_PTR(-EINVAL);

	if (desc->dmabuf) {
		dmabuf = desc->dmabuf;
		get_dma_buf(dmabuf);
	} else {
		dmabuf = dma_buf_get(desc->fd);
		if (IS_ERR(dmabuf))
			return ERR_CAST(dmabuf);
	}

	err = -EINVAL;
	if (!dmabuf->size || !PAGE_ALIGNED(dmabuf->size) ||
	    (desc->len && desc->len != dmabuf->size))
		goto err_put;
	err = -EOVERFLOW;
	if (check_add_overflow(desc->addr, (u64)dmabuf->size, &end))
		goto err_put;

	err = -ENOMEM;
	dr = kzalloc(sizeof(*dr), GFP_KERNEL_ACCOUNT);
	if (!dr)
		goto err_put;
	netgpu_region_init(&dr->r, desc->addr, dmabuf->size);
	dr->dmabuf = dmabuf;
	return &dr->r;

err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(err);
}

static void netgpu_dmabuf_release(struct netgpu_region *r)
{
	struct netgpu_dmabuf_region *dr = to_dmabuf_region(r);

	dma_buf_put(dr->dmabuf);
	kfree(dr);
}

/* Build the offset -> DMA table of a mapping; any segment sizes. */
static int netgpu_dmabuf_build_segs(struct netgpu_dmabuf_map *dm, u64 size)
{
	struct scatterlist *sg;
	unsigned int i, n = 0;
	u64 off = 0;

	dm->segs = kvmalloc_array(dm->sgt->nents, sizeof(*dm->segs),
				  GFP_KERNEL_ACCOUNT);
	if (!dm->segs)
		return -ENOMEM;

	for_each_sgtable_dma_sg(dm->sgt, sg, i) {
		if (!sg_dma_len(sg))
			continue;
		if (off >= size)
			break;
		dm->segs[n].off = off;
		dm->segs[n].len = min_t(u64, sg_dma_len(sg), size - off);
		dm->segs[n].dma = sg_dma_address(sg);
		off += dm->segs[n].len;
		n++;
	}
	dm->nr_segs = n;

	/* The exporter mapped less than the buffer. */
	if (off < size) {
		kvfree(dm->segs);
		dm->segs = NULL;
		return -EINVAL;
	}
	return 0;
}

static struct netgpu_dmamap *netgpu_dmabuf_map(struct netgpu_region *r,
					       struct device *dev)
{
	struct dma_buf *dmabuf = to_dmabuf_region(r)->dmabuf;
	struct netgpu_dmabuf_map *dm;
	struct sg_table *sgt;
	long wait;
	int err;

	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	dm->map.r = r;

	/* A dynamic exporter pins the buffer here, until the detach. */
	dm->attach = dma_buf_attach(dmabuf, dev);
	if (IS_ERR(dm->attach)) {
		err = PTR_ERR(dm->attach);
		goto err_free;
	}

	/* fail_netgpu_dma_map: the exporter is not asked. */
	if (netgpu_should_fail(NETGPU_FAIL_DMA_MAP))
		sgt = ERR_PTR(-ENOMEM);
	else
		sgt = dma_buf_map_attachment_unlocked(dm->attach,
						      DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		err = PTR_ERR(sgt);
		goto err_detach;
	}
	dm->sgt = sgt;

	/*
	 * The content is there once the exporter's kernel fences signal.
	 * For a static attachment the core of this kernel waits too
	 * (__map_dma_buf()), so this usually finds them signalled; the
	 * contract is the importer's, and nothing here relies on that.
	 * Interruptible: a killed caller does not wait for the GPU, and
	 * the map fails with -ERESTARTSYS.
	 */
	wait = dma_resv_wait_timeout(dmabuf->resv, DMA_RESV_USAGE_KERNEL,
				     true, MAX_SCHEDULE_TIMEOUT);
	err = wait < 0 ? wait : netgpu_dmabuf_build_segs(dm, r->len);
	if (err)
		goto err_unmap;
	return &dm->map;

err_unmap:
	dma_buf_unmap_attachment_unlocked(dm->attach, sgt, DMA_BIDIRECTIONAL);
err_detach:
	dma_buf_detach(dmabuf, dm->attach);
err_free:
	kfree(dm);
	return ERR_PTR(err);
}

static void netgpu_dmabuf_unmap(struct netgpu_dmamap *map)
{
	struct netgpu_dmabuf_map *dm = to_dmabuf_map(map);
	struct dma_buf *dmabuf = dm->attach->dmabuf;

	dma_buf_unmap_attachment_unlocked(dm->attach, dm->sgt,
					  DMA_BIDIRECTIONAL);
	/* Unpins the buffer: the exporter may move it from now on. */
	dma_buf_detach(dmabuf, dm->attach);
	kvfree(dm->segs);
	kfree(dm);
}

static int netgpu_dmabuf_dma(const struct netgpu_dmamap *map, u64 off,
			     dma_addr_t *dma, u64 *len)
{
	const struct netgpu_dmabuf_map *dm = to_dmabuf_map(map);
	unsigned int lo = 0, hi = dm->nr_segs;
	const struct netgpu_dmabuf_seg *seg;

	/*
	 * The last segment starting at or before @off.  There is one:
	 * netgpu_dmabuf_build_segs() leaves at least one segment (the
	 * buffer is not empty) and the first starts at offset 0.
	 */
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (dm->segs[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	seg = &dm->segs[lo];
	/* Past the end of the mapping: the caller's bug, refused. */
	if (off - seg->off >= seg->len)
		return -EFAULT;
	*dma = seg->dma + (off - seg->off);
	*len = seg->len - (off - seg->off);
	return 0;
}

/* Built in: no module reference on the library's own code. */
const struct netgpu_mem_ops netgpu_dmabuf_ops = {
	.owner		= NULL,
	.type		= NETGPU_MEMTYPE_DMABUF,
	.name		= "dmabuf",
	.add		= netgpu_dmabuf_add,
	.release	= netgpu_dmabuf_release,
	.map		= netgpu_dmabuf_map,
	.unmap		= netgpu_dmabuf_unmap,
	.dma		= netgpu_dmabuf_dma,
};

/**
 * netgpu_dmabuf_add_region() - register a dma-buf as a region
 * @mem: the area
 * @dmabuf: the buffer; the region takes its own reference
 * @addr: page-aligned address the buffer's first byte is known by
 *
 * Context: Process context, may sleep.
 * Return: the region id (> 0) or a negative errno, as
 * netgpu_mem_add_region().
 */
int netgpu_dmabuf_add_region(struct netgpu_mem *mem, struct dma_buf *dmabuf,
			     u64 addr)
{
	struct netgpu_region_desc desc = {
		.type	= NETGPU_MEMTYPE_DMABUF,
		.addr	= addr,
		.dmabuf	= dmabuf,
	};

	return netgpu_mem_add_region(mem, &desc);
}
EXPORT_SYMBOL_GPL(netgpu_dmabuf_add_region);

/**
 * netgpu_dmabuf_add_region_fd() - register a dma-buf fd as a region
 * @mem: the area
 * @fd: dma-buf file descriptor of the calling process
 * @addr: page-aligned address the buffer's first byte is known by
 *
 * Context: Process context, may sleep.
 * Return: the region id (> 0), -EBADF if @fd is not open, -EINVAL if it
 * is not a dma-buf, or another negative errno as netgpu_mem_add_region().
 */
int netgpu_dmabuf_add_region_fd(struct netgpu_mem *mem, int fd, u64 addr)
{
	struct netgpu_region_desc desc = {
		.type	= NETGPU_MEMTYPE_DMABUF,
		.addr	= addr,
		.fd	= fd,
	};

	return netgpu_mem_add_region(mem, &desc);
}
EXPORT_SYMBOL_GPL(netgpu_dmabuf_add_region_fd);
