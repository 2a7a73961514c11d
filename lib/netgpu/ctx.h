/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu contexts: a device of one network namespace, the regions
 * attached for it, and (later) its interface and socket queues.
 */
#ifndef _NETGPU_CTX_H
#define _NETGPU_CTX_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "mem.h"

/**
 * DOC: netgpu contexts
 *
 * A context (&struct netgpu_ctx, one per open of /dev/netgpu) attaches
 * one network device, by ifindex in a network namespace and with
 * CAP_NET_ADMIN in that namespace's user namespace, for its whole life.
 * The device's DMA device (its parent) is what the context's regions are
 * mapped for, through the memory side of the context (&struct
 * netgpu_memctx).
 *
 * Lifetime: the context lives while its file or any interface queue,
 * socket queue or other user holds a reference (netgpu_ctx_get(),
 * netgpu_ctx_put()).  Region attachments do not hold it: they live in
 * its memory side, which the context releases when it goes.  The device
 * is held with a tracked reference (netdev_hold()) from
 * netgpu_ctx_attach_dev() until the context goes or the device is
 * unregistered (or leaves the namespace: NETDEV_UNREGISTER either way),
 * whichever comes first.  On NETDEV_UNREGISTER the context detaches
 * every region, drops the device at once (unregister_netdevice() does
 * not wait for the context's file to close) and is dead: every later
 * call fails with -ENODEV, except netgpu_ctx_get_stats().
 *
 * Lock order of the control path, outermost first (the memory unit's
 * order, netgpu memory DOC in mem.h, continues it):
 *
 *   &netgpu_ctx.lock  ->  rtnl_lock  ->  &netgpu_region.revoke_lock  ->
 *   &netgpu_region.lock  ->  &netgpu_memctx.lock  ->  provider locks
 *
 * rtnl_lock protects the list of contexts holding a device (the
 * notifier walks it under rtnl) and serializes attaching a device with
 * its unregistration.  The context's lock comes first: it is held for
 * long (a mapping of every page of a region, a dma-buf's fences, a walk
 * of every buffer), and nothing may wait for it holding rtnl_lock, which
 * every rtnetlink user on the machine waits for; NETDEV_UNREGISTER does
 * not take it.  The area's xa_lock stays a leaf: regions are
 * looked up (netgpu_mem_get_region()) before the context's lock is
 * taken.  The ioctls wait for the context's lock killably (-EINTR),
 * as for rtnl_lock.  GET_STATS takes neither: it walks the queues under
 * &netgpu_ctx.stats_lock, a lock of its own.  Nothing here runs in
 * atomic context; every entry point may sleep.
 *
 * The provider of a peer-to-peer region going away waits, under its PCI
 * device's lock (the bus notifier, host.c), for the revoke work of the
 * contexts holding the region, which takes &netgpu_ctx.lock and then
 * rtnl_lock: neither may be held waiting for a PCI device's lock.  The
 * device lock is not validated by lockdep; the wait and the work are,
 * as netgpu_p2p_revoke_map (mem.h).
 */

struct net;
struct netgpu_queue_geom;
struct netgpu_stats;

/**
 * enum netgpu_ctx_state - the device side of a context
 * @NETGPU_CTX_NEW: no device attached yet
 * @NETGPU_CTX_ATTACHED: a device is attached and held
 * @NETGPU_CTX_DEAD: the device was unregistered (or left the namespace)
 *	while attached; everything was detached from it
 */
enum netgpu_ctx_state {
	NETGPU_CTX_NEW,
	NETGPU_CTX_ATTACHED,
	NETGPU_CTX_DEAD,
};

/**
 * struct netgpu_ctx - a netgpu context
 * @ref: one for the open file, one per interface or socket queue, one
 *	per transient user; the context is freed when it drops to zero
 * @lock: Protects: @state, @netdev, @dma_dev and the initialisation and
 *	release of @mc.  Ordering: before rtnl_lock and every lock of
 *	the memory unit.  A mutex: held across allocations and DMA mapping.
 * @state: &enum netgpu_ctx_state; written under rtnl_lock and @lock,
 *	except that NETDEV_UNREGISTER marks it dead under rtnl_lock alone
 *	(the ioctls hold @lock for long: ATTACH_REGION across a mapping or
 *	a dma-buf's fences, BIND_QUEUE across the queue's making); read
 *	under @lock alone with READ_ONCE().  A caller that saw it attached
 *	finishes; the release work, which takes @lock, undoes what it did
 * @netdev: the device while @state is %NETGPU_CTX_ATTACHED, held through
 *	@tracker
 * @tracker: @netdev's reference tracker
 * @dma_dev: @netdev's parent, which the regions are mapped for; a
 *	reference is held while @mc is initialised
 * @mc: the memory side: the attached regions; initialised at attach,
 *	released when the device goes or the context is freed
 * @node: in the list of contexts holding a device, under rtnl_lock, while
 *	@state is %NETGPU_CTX_ATTACHED
 * @ifqs: the interface queues' files, under rtnl_lock and @lock (either
 *	is enough to read; NETDEV_UNREGISTER reads it under rtnl_lock, a
 *	RECV under RCU alone, a GET_STATS under @stats_lock alone)
 * @sockqs: the socket queues (&struct netgpu_sockq), under @lock (read
 *	by a GET_STATS under @stats_lock alone)
 * @stats_lock: Protects: the queues on @ifqs and @sockqs from being
 *	freed while a GET_STATS walks them without @lock: a queue's
 *	release takes it once after unlinking the queue, before freeing
 *	it.  Ordering: taken with no other lock held; the queues' fill
 *	locks nest inside.
 * @revoke_work: unbinds the queues holding a region that was revoked
 * @release_work: releases the memory side and drops the device after
 *	NETDEV_UNREGISTER, outside rtnl_lock (holds a reference)
 * @id: a number for the accounting (netgpu_ctx_account()), unique while
 *	the library is loaded
 * @descs: rx descriptors the context's socket queues wrote, counted at
 *	each (destroyed queues included)
 * @gone_returned: fill-ring returns (&struct netgpu_ifq_counters.taken)
 *	of interface queues whose files were closed; under @lock
 * @gone_scrubbed: user references the scrubs of those queues took back;
 *	under @lock
 */
struct netgpu_ctx {
	refcount_t		ref;
	struct mutex		lock;	/* state, netdev, dma_dev, mc */
	enum netgpu_ctx_state	state;
	struct net_device	*netdev;
	netdevice_tracker	tracker;
	struct device		*dma_dev;
	struct netgpu_memctx	mc;
	struct list_head	node;
	struct list_head	ifqs;
	struct list_head	sockqs;
	struct mutex		stats_lock;	/* walks of ifqs, sockqs */
	struct work_struct	revoke_work;
	struct work_struct	release_work;
	u32			id;
	atomic64_t		descs;
	u64			gone_returned;
	u64			gone_scrubbed;
};

/**
 * struct netgpu_account - where a context's buffers are, and its counts
 * @id: the context's &netgpu_ctx.id
 * @total: buffers of its interface queues
 * @free: of @total, on their free lists (counted on the lists)
 * @pool: of @total, in a page_pool (``niov.pp`` set)
 * @copies: of @total, in no pool and held by user space (copies)
 * @lost: @total - @free - @pool - @copies: 0 at rest
 * @urefs: user references held, over every buffer
 * @descs: rx descriptors its socket queues wrote
 * @returned: buffers user space gave back through fill rings
 * @scrubbed: user references the scrubs took back
 * @outstanding: @descs - @returned - @scrubbed: @urefs at rest
 */
struct netgpu_account {
	u32	id;
	u64	total;
	u64	free;
	u64	pool;
	u64	copies;
	s64	lost;
	u64	urefs;
	u64	descs;
	u64	returned;
	u64	scrubbed;
	s64	outstanding;
};

struct netgpu_ctx *netgpu_ctx_create(void);
void netgpu_ctx_get(struct netgpu_ctx *ctx);
void netgpu_ctx_put(struct netgpu_ctx *ctx);

int netgpu_ctx_attach_dev(struct netgpu_ctx *ctx, struct net *net,
			  int ifindex);
int netgpu_ctx_attach_region(struct netgpu_ctx *ctx, struct netgpu_mem *mem,
			     u32 id);
int netgpu_ctx_detach_region(struct netgpu_ctx *ctx, struct netgpu_mem *mem,
			     u32 id);
struct file *netgpu_ctx_bind_queue(struct netgpu_ctx *ctx, u32 *queue_id,
				   bool any, struct netgpu_queue_geom *fill);
struct file *netgpu_ctx_attach_socket(struct netgpu_ctx *ctx, int sock_fd,
				      struct netgpu_queue_geom *rx,
				      struct netgpu_queue_geom *cq);
int netgpu_ctx_get_stats(struct netgpu_ctx *ctx, struct netgpu_stats *stats);

int netgpu_ctx_init(void);
void netgpu_ctx_exit(void);
int netgpu_ctx_debugfs_init(void);
void netgpu_ctx_debugfs_exit(void);

/* The misc devices, dev.c */
int netgpu_dev_init(void);
void netgpu_dev_exit(void);

/**
 * struct netgpu_ifq_file - an interface queue's file
 * @ctx: the context that bound the queue (a reference)
 * @ifq: the queue (the owner's reference)
 * @node: in &netgpu_ctx.ifqs (RCU: a RECV picks its copy queue without
 *	the context's lock)
 */
struct netgpu_ifq_file {
	struct netgpu_ctx	*ctx;
	struct netgpu_ifq	*ifq;
	struct list_head	node;
};

#if IS_ENABLED(CONFIG_KUNIT)
struct seq_file;
struct file *netgpu_ctx_ifq_getfile(struct netgpu_ifq_file *qf);
void netgpu_ctx_queue_revoke(struct netgpu_ctx *ctx);
void netgpu_ctx_account(struct netgpu_ctx *ctx, struct netgpu_account *a);
int netgpu_ctx_accounting_show(struct seq_file *m, void *unused);

/* The library's bring-up, netgpu_main.c */
int netgpu_units_init(void);
void netgpu_units_exit(void);
#endif

struct netgpu_ifq;
struct netgpu_sockq;
struct netgpu_recv;
int netgpu_ctx_recv(struct netgpu_sockq *sq, struct netgpu_recv *r);
long netgpu_sockq_ioctl_user(struct netgpu_sockq *sq, unsigned int cmd,
			     void __user *uarg);
long netgpu_ifq_ioctl_user(struct netgpu_ifq *ifq, unsigned int cmd,
			   void __user *uarg);

#if IS_ENABLED(CONFIG_KUNIT)
struct file;
long netgpu_mem_ioctl_user(struct netgpu_mem *mem, unsigned int cmd,
			   void __user *uarg);
long netgpu_ctx_ioctl_user(struct netgpu_ctx *ctx, unsigned int cmd,
			   void __user *uarg);
struct file *netgpu_mem_file_create(void);
struct netgpu_mem *netgpu_mem_from_file(struct file *file);
#endif

#endif /* _NETGPU_CTX_H */
