// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu contexts: attach a device and regions, (later) bind queues.
 *
 * See the DOC in ctx.h for the lifetimes and the lock order.
 */

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <uapi/linux/netgpu.h>

#include "ctx.h"
#include "nic.h"
#include "queue.h"
#include "sock.h"

/*
 * Contexts holding a device (&netgpu_ctx.node).  Protects: membership.
 * Ordering: rtnl_lock is the lock, so that NETDEV_UNREGISTER (called
 * under it) sees every context that holds the device going away.
 */
static LIST_HEAD(netgpu_ctx_list);

/* The last &netgpu_ctx.id given. */
static atomic_t netgpu_ctx_last_id = ATOMIC_INIT(0);

/* /sys/kernel/debug/netgpu/, for the accounting file. */
static struct dentry *netgpu_ctx_debugfs;

/* Releases the memory side of contexts whose device went (release_work). */
static struct workqueue_struct *netgpu_ctx_wq;

static void netgpu_ctx_revoke_work(struct work_struct *work);
static void netgpu_ctx_release_work(struct work_struct *work);

/**
 * netgpu_ctx_create() - create a context
 *
 * Context: Process context.
 * Return: the context with one reference (its file's), or NULL without
 * memory.
 */
struct netgpu_ctx *netgpu_ctx_create(void)
{
	struct netgpu_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	refcount_set(&ctx->ref, 1);
	ctx->id = atomic_inc_return(&netgpu_ctx_last_id);
	mutex_init(&ctx->lock);
	mutex_init(&ctx->stats_lock);
	ctx->state = NETGPU_CTX_NEW;
	INIT_LIST_HEAD(&ctx->node);
	INIT_LIST_HEAD(&ctx->ifqs);
	INIT_LIST_HEAD(&ctx->sockqs);
	INIT_WORK(&ctx->revoke_work, netgpu_ctx_revoke_work);
	INIT_WORK(&ctx->release_work, netgpu_ctx_release_work);
	return ctx;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_create);

/**
 * netgpu_ctx_get() - take a reference on a context
 * @ctx: the context; the caller holds a reference already
 *
 * Context: Any context.
 */
void netgpu_ctx_get(struct netgpu_ctx *ctx)
{
	refcount_inc(&ctx->ref);
}
EXPORT_SYMBOL_GPL(netgpu_ctx_get);

/* -ENODEV unless a device is attached: none yet, or it went away. */
static int netgpu_ctx_check_attached(struct netgpu_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	/* NETDEV_UNREGISTER marks it dead under rtnl_lock alone. */
	return READ_ONCE(ctx->state) == NETGPU_CTX_ATTACHED ? 0 : -ENODEV;
}

/**
 * struct netgpu_ifq_file - the file of an interface queue
 * @ctx: the context (a reference is held)
 * @ifq: the queue (the owner's reference)
 * @node: in &netgpu_ctx.ifqs
 */
/* The device of @ctx goes: so do its queues' bindings and DMA maps. */
static void netgpu_ctx_ifqs_dev_gone(struct netgpu_ctx *ctx)
{
	struct netgpu_ifq_file *qf;

	list_for_each_entry(qf, &ctx->ifqs, node)
		netgpu_ifq_dev_gone(qf->ifq);
}

/* A queue of @ctx (its file open, bound or not) holds @r. */
static bool netgpu_ctx_queue_holds(struct netgpu_ctx *ctx,
				   struct netgpu_region *r)
{
	struct netgpu_ifq_file *qf;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(qf, &ctx->ifqs, node)
		if (netgpu_ifq_holds(qf->ifq, r))
			return true;
	return false;
}

/*
 * A region that queues of @ctx may hold was revoked (its user removed
 * it, or its provider went): the NIC gets none of its buffers any more.
 * Those queues are unbound as closing their files would unbind them;
 * poll() on the files reports it, the stream goes on in ordinary memory,
 * and the buffers already received stay valid until given back.  The
 * PCI bus notifier of a peer-to-peer provider going waits for this work
 * (host.c): netgpu_p2p_revoke_map shows lockdep what it takes.
 */
static void netgpu_ctx_revoke_work(struct work_struct *work)
{
	struct netgpu_ctx *ctx = container_of(work, struct netgpu_ctx,
					      revoke_work);
	struct netgpu_ifq_file *qf;

	lock_map_acquire(&netgpu_p2p_revoke_map);
	mutex_lock(&ctx->lock);
	rtnl_lock();
	list_for_each_entry(qf, &ctx->ifqs, node)
		if (netgpu_ifq_revoked(qf->ifq))
			netgpu_ifq_unbind(qf->ifq);
	rtnl_unlock();
	mutex_unlock(&ctx->lock);
	lock_map_release(&netgpu_p2p_revoke_map);
}

/**
 * netgpu_ctx_queue_revoke() - queue the revoke work of a context
 * @ctx: the context
 *
 * queue_work() on system_wq, out of line so that a KUnit case can queue
 * the work where it holds it (kunit_activate_static_stub()): behind a
 * blocked item of its own ordered workqueue, while the last reference
 * goes.
 *
 * Context: Any context; netgpu_region_revoke() calls it under the
 * region's locks.
 */
VISIBLE_IF_KUNIT void netgpu_ctx_queue_revoke(struct netgpu_ctx *ctx)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_ctx_queue_revoke, ctx);
	queue_work(system_wq, &ctx->revoke_work);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ctx_queue_revoke);

/*
 * Under the region's locks: the work does the rest.  Without the NIC
 * interface no queue exists to unbind.
 */
static void netgpu_ctx_region_revoked(struct netgpu_memctx *mc)
{
	struct netgpu_ctx *ctx = container_of(mc, struct netgpu_ctx, mc);

	if (IS_ENABLED(CONFIG_NETGPU_NIC))
		netgpu_ctx_queue_revoke(ctx);
}

#if IS_ENABLED(CONFIG_NETGPU_NIC)
/*
 * A queue was unlinked from @ctx's lists (under @ctx->lock): once a
 * GET_STATS walk that may have found it there is over, it may be freed.
 */
static void netgpu_ctx_stats_barrier(struct netgpu_ctx *ctx)
{
	mutex_lock(&ctx->stats_lock);
	mutex_unlock(&ctx->stats_lock);
}

/*
 * The file of @ifq was closed and the queue scrubbed: its returns and
 * the references its scrub took stay counted in @ctx (the queue itself
 * may live on in a pool, but is no longer the context's).
 */
static void netgpu_ctx_ifq_gone(struct netgpu_ctx *ctx,
				struct netgpu_ifq *ifq)
{
	struct netgpu_account a = {};

	netgpu_ifq_account(ifq, &a);
	mutex_lock(&ctx->lock);
	ctx->gone_returned += a.returned;
	ctx->gone_scrubbed += a.scrubbed;
	mutex_unlock(&ctx->lock);
}

static int netgpu_ifq_file_release(struct inode *inode, struct file *file)
{
	struct netgpu_ifq_file *qf = file->private_data;
	struct netgpu_ctx *ctx = qf->ctx;

	mutex_lock(&ctx->lock);
	rtnl_lock();
	list_del_rcu(&qf->node);
	netgpu_ifq_unbind(qf->ifq);
	rtnl_unlock();
	mutex_unlock(&ctx->lock);
	/*
	 * A RECV that found the queue under RCU has its own reference; a
	 * GET_STATS walk may be reading it.
	 */
	synchronize_rcu();
	netgpu_ctx_stats_barrier(ctx);

	/* Unbound: no receive path hands buffers to user space any more. */
	netgpu_ifq_scrub(qf->ifq);
	netgpu_ctx_ifq_gone(ctx, qf->ifq);
	netgpu_ifq_put(qf->ifq);
	netgpu_ctx_put(ctx);
	kfree(qf);
	return 0;
}

static __poll_t netgpu_ifq_file_poll(struct file *file, poll_table *wait)
{
	struct netgpu_ifq_file *qf = file->private_data;

	return netgpu_ifq_poll(qf->ifq, file, wait);
}

static int netgpu_ifq_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct netgpu_ifq_file *qf = file->private_data;

	return netgpu_ifq_mmap(qf->ifq, vma);
}

static long netgpu_ifq_file_ioctl(struct file *file, unsigned int cmd,
				  unsigned long arg)
{
	struct netgpu_ifq_file *qf = file->private_data;

	return netgpu_ifq_ioctl_user(qf->ifq, cmd, (void __user *)arg);
}

/*
 * Its context's id (netlink's netgpu nest) and, while it is bound, its
 * device and queue (set by the bind, before the file exists; left as
 * they were by an unbind, so not shown then).
 */
static void netgpu_ifq_file_show_fdinfo(struct seq_file *m, struct file *file)
{
	const struct netgpu_ifq *ifq = ((struct netgpu_ifq_file *)file->private_data)->ifq;

	seq_printf(m, "netgpu-ctx-id:\t%u\n", ifq->ctx_id);
	if (READ_ONCE(ifq->state) == NETGPU_IFQ_BOUND)
		seq_printf(m, "netgpu-ifindex:\t%d\nnetgpu-rx-queue:\t%u\n",
			   ifq->ifindex, ifq->rxq);
}

static const struct file_operations netgpu_ifq_fops = {
	.owner		= THIS_MODULE,
	.release	= netgpu_ifq_file_release,
	.show_fdinfo	= netgpu_ifq_file_show_fdinfo,
	.poll		= netgpu_ifq_file_poll,
	.mmap		= netgpu_ifq_file_mmap,
	.unlocked_ioctl	= netgpu_ifq_file_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/*
 * An interface queue of @ctx's regions for @queue_id, made without
 * rtnl_lock: it allocates, and walks every page of the regions.
 */
static struct netgpu_ifq *netgpu_ctx_new_ifq(struct netgpu_ctx *ctx,
					     struct netgpu_queue_geom *fill)
{
	lockdep_assert_held(&ctx->lock);

	struct netgpu_ifq *ifq;

	/* Set at registration; rechecked, with the rest, under rtnl_lock. */
	if (!ctx->netdev->queue_mgmt_ops)
		return ERR_PTR(-EOPNOTSUPP);
	ifq = netgpu_ifq_create(&ctx->mc, fill);
	if (!IS_ERR(ifq)) {
		ifq->owner = ctx;
		ifq->ctx_id = ctx->id;
	}
	return ifq;
}

/**
 * netgpu_ctx_ifq_getfile() - the file of a bound interface queue
 * @qf: what the file's private data will be
 *
 * anon_inode_getfile(), out of line so that a KUnit case can make it
 * fail after the bind (kunit_activate_static_stub()) with buffers
 * handed out meanwhile.
 *
 * Context: Process context.
 * Return: the file, or an ERR_PTR().
 */
VISIBLE_IF_KUNIT struct file *netgpu_ctx_ifq_getfile(struct netgpu_ifq_file *qf)
{
	KUNIT_STATIC_STUB_REDIRECT(netgpu_ctx_ifq_getfile, qf);
	return anon_inode_getfile("[netgpu-ifq]", &netgpu_ifq_fops, qf,
				  O_RDWR | O_CLOEXEC);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ctx_ifq_getfile);

/*
 * Bind @ifq (the caller's reference): its file, not yet installed.  An
 * error after the bind leaves the reference in *@scrub, for the caller
 * to scrub once it dropped the locks (as closing the file would: a
 * socket queue of @ctx may have handed buffers out since the bind).
 */
static struct file *netgpu_ctx_bind_ifq(struct netgpu_ctx *ctx,
					struct netgpu_ifq *ifq, u32 *queue_id,
					bool any, struct netgpu_ifq **scrub)
{
	struct netgpu_ifq_file *qf;
	struct file *file;
	int err;

	ASSERT_RTNL();
	lockdep_assert_held(&ctx->lock);

	/* The device may have gone since the queue was made. */
	err = netgpu_ctx_check_attached(ctx) ?:
	      netgpu_ifq_check_dev(ctx->netdev);
	/*
	 * Or a region it holds was removed: its revoke work ran before the
	 * queue was on the list, or will see it there and unbind it.
	 */
	if (!err && netgpu_ifq_revoked(ifq))
		err = -ENODEV;
	if (err)
		goto err_put_ifq;
	qf = kzalloc(sizeof(*qf), GFP_KERNEL_ACCOUNT);
	err = qf ? netgpu_ifq_bind(ifq, ctx->netdev, queue_id, any) : -ENOMEM;
	if (err)
		goto err_free;
	qf->ctx = ctx;
	qf->ifq = ifq;
	file = netgpu_ctx_ifq_getfile(qf);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto err_unbind;
	}
	netgpu_ctx_get(ctx);
	list_add_tail_rcu(&qf->node, &ctx->ifqs);
	return file;

err_unbind:
	netgpu_ifq_unbind(ifq);
	kfree(qf);
	*scrub = ifq;
	return ERR_PTR(err);
err_free:
	kfree(qf);
err_put_ifq:
	netgpu_ifq_put(ifq);
	return ERR_PTR(err);
}

/*
 * Bound, but no file: what closing it would have done, outside
 * rtnl_lock (the scrub walks every buffer).  Without the scrub the user
 * references taken since the bind stayed for ever.
 */
static void netgpu_ctx_bind_failed(struct netgpu_ctx *ctx,
				   struct netgpu_ifq *ifq)
{
	netgpu_ifq_scrub(ifq);
	netgpu_ctx_ifq_gone(ctx, ifq);
	netgpu_ifq_put(ifq);
}
#else
static struct netgpu_ifq *netgpu_ctx_new_ifq(struct netgpu_ctx *ctx,
					     struct netgpu_queue_geom *fill)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct file *netgpu_ctx_bind_ifq(struct netgpu_ctx *ctx,
					struct netgpu_ifq *ifq, u32 *queue_id,
					bool any, struct netgpu_ifq **scrub)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void netgpu_ctx_bind_failed(struct netgpu_ctx *ctx,
				   struct netgpu_ifq *ifq)
{
}
#endif

/*
 * Undo netgpu_ctx_attach_dev()'s memory side, leaving the context dead
 * or to be freed: detaches every region (unmapping them for the device,
 * or retiring their maps until the buffers the device holds come back),
 * then drops the DMA device and the device.  The context is off the
 * notifier's list and its queues were told the device went (under
 * rtnl_lock); this needs only @ctx->lock.
 */
static void netgpu_ctx_release_dev_locked(struct netgpu_ctx *ctx,
					  enum netgpu_ctx_state state)
{
	lockdep_assert_held(&ctx->lock);

	netgpu_memctx_release(&ctx->mc);
	put_device(ctx->dma_dev);
	ctx->dma_dev = NULL;
	netdev_put(ctx->netdev, &ctx->tracker);
	ctx->netdev = NULL;
	WRITE_ONCE(ctx->state, state);
}

static void netgpu_ctx_free(struct netgpu_ctx *ctx)
{
	bool attached;

	mutex_lock(&ctx->lock);
	rtnl_lock();
	/* Or the notifier detached it: DEAD or NEW, nothing held. */
	attached = ctx->state == NETGPU_CTX_ATTACHED;
	if (attached) {
		/* Off the notifier's list; no queue is left (each held @ctx). */
		list_del_init(&ctx->node);
		netgpu_ctx_ifqs_dev_gone(ctx);
	}
	rtnl_unlock();
	mutex_unlock(&ctx->lock);
	/*
	 * The grace period and the unmaps of every region without
	 * rtnl_lock, which every rtnetlink user on the machine waits for.
	 * The device is still held: its unregistration waits for the
	 * netdev_put() below, so the regions are unmapped before it goes.
	 */
	if (attached) {
		mutex_lock(&ctx->lock);
		netgpu_ctx_release_dev_locked(ctx, NETGPU_CTX_DEAD);
		mutex_unlock(&ctx->lock);
	}
	/* The memory context is released: no revocation queues it again. */
	cancel_work_sync(&ctx->revoke_work);

	mutex_destroy(&ctx->stats_lock);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
}

/**
 * netgpu_ctx_put() - drop a reference on a context
 * @ctx: the context
 *
 * The last reference detaches the regions, drops the device and frees
 * the context; it is not safe to reference @ctx afterwards.
 *
 * Context: Process context, may sleep: the last reference takes
 * rtnl_lock, so no caller may hold it (a queue torn down under rtnl_lock
 * must defer its put).
 */
void netgpu_ctx_put(struct netgpu_ctx *ctx)
{
	might_sleep();
	if (refcount_dec_and_test(&ctx->ref))
		netgpu_ctx_free(ctx);
}
EXPORT_SYMBOL_GPL(netgpu_ctx_put);

/**
 * netgpu_ctx_attach_dev() - attach a network device to a context
 * @ctx: the context
 * @net: the network namespace @ifindex is in (the caller's)
 * @ifindex: the device
 *
 * The caller needs CAP_NET_ADMIN in the user namespace owning @net.  The
 * device must be able to DMA: its parent device (the one its driver maps
 * buffers for) must exist and have a DMA mask; a purely software device
 * (loopback) has none.  The device is looked up and held under
 * rtnl_lock, so that its NETDEV_UNREGISTER cannot run before the context
 * is on the list the notifier walks.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock, then rtnl_lock.
 * Return: 0; -EPERM without the capability; -ENODEV if @net has no such
 * device, or the context's device was unregistered; -EBUSY if a device is
 * attached already; -EOPNOTSUPP if the device has no DMA device; -EINTR
 * if killed while waiting for @ctx->lock or rtnl_lock.
 */
int netgpu_ctx_attach_dev(struct netgpu_ctx *ctx, struct net *net,
			  int ifindex)
{
	struct net_device *dev;
	struct device *parent;
	int err;

	/* Before the lookup: no probing of other namespaces' ifindexes. */
	if (!ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;

	if (mutex_lock_killable(&ctx->lock))
		return -EINTR;
	if (rtnl_lock_killable()) {
		mutex_unlock(&ctx->lock);
		return -EINTR;
	}
	if (ctx->state != NETGPU_CTX_NEW) {
		err = ctx->state == NETGPU_CTX_DEAD ? -ENODEV : -EBUSY;
		goto out_unlock;
	}
	/* Under rtnl_lock: only registered devices, none unregistering. */
	dev = __dev_get_by_index(net, ifindex);
	if (!dev) {
		err = -ENODEV;
		goto out_unlock;
	}
	parent = dev->dev.parent;
	if (!parent || !parent->dma_mask) {
		err = -EOPNOTSUPP;
		goto out_unlock;
	}

	netdev_hold(dev, &ctx->tracker, GFP_KERNEL);
	ctx->netdev = dev;
	ctx->dma_dev = get_device(parent);
	netgpu_memctx_init(&ctx->mc, parent);
	ctx->mc.revoked = netgpu_ctx_region_revoked;
	WRITE_ONCE(ctx->state, NETGPU_CTX_ATTACHED);
	list_add_tail(&ctx->node, &netgpu_ctx_list);
	err = 0;

out_unlock:
	rtnl_unlock();
	mutex_unlock(&ctx->lock);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_attach_dev);

/**
 * netgpu_ctx_attach_region() - attach a region of a memory area
 * @ctx: the context
 * @mem: the area; the caller keeps it open (holds its file) for the call
 * @id: the region, as netgpu_mem_add_region() returned it
 *
 * Maps the region for the context's DMA device (or shares the map of
 * another context on that device); the attachment holds the region until
 * it is detached, the region revoked or the context's device detached.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock, then the
 * region's and the memory context's locks.
 * Return: 0; -ENOENT if @mem has no region @id; -ENODEV if no device is
 * attached (never, or it was unregistered) or the region is being
 * revoked; -EEXIST if the region, or one overlapping it, is attached
 * already; -ENOMEM; or the provider's map error (-EREMOTEIO: peer-to-peer
 * memory the device cannot reach); -EINTR if killed while waiting for
 * @ctx->lock.  On error nothing is left behind.
 */
int netgpu_ctx_attach_region(struct netgpu_ctx *ctx, struct netgpu_mem *mem,
			     u32 id)
{
	struct netgpu_region *r;
	int err;

	/* The area's xa_lock is a leaf: look up before taking ctx->lock. */
	r = netgpu_mem_get_region(mem, id);
	if (IS_ERR(r))
		return PTR_ERR(r);

	if (mutex_lock_killable(&ctx->lock)) {
		netgpu_region_put(r);
		return -EINTR;
	}
	err = netgpu_ctx_check_attached(ctx);
	if (!err)
		err = netgpu_memctx_attach(&ctx->mc, r);
	mutex_unlock(&ctx->lock);

	netgpu_region_put(r);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_attach_region);

/**
 * netgpu_ctx_detach_region() - detach a region of a memory area
 * @ctx: the context
 * @mem: the area; the caller keeps it open for the call
 * @id: the region
 *
 * Context: Process context, may sleep.  Takes @ctx->lock, then the
 * region's and the memory context's locks.
 * A region an interface queue of @ctx holds stays attached until the
 * queue's file is closed: detached, a later removal of the region would
 * not reach the queue, which would go on handing it to the NIC.
 *
 * Return: 0; -ENOENT if @mem has no region @id or it is not attached to
 * @ctx; -ENODEV if no device is attached (never, or it was unregistered,
 * which detached every region); -EBUSY if a queue of @ctx holds it;
 * -EINTR if killed while waiting for @ctx->lock.
 */
int netgpu_ctx_detach_region(struct netgpu_ctx *ctx, struct netgpu_mem *mem,
			     u32 id)
{
	struct netgpu_region *r;
	int err;

	r = netgpu_mem_get_region(mem, id);
	if (IS_ERR(r))
		return PTR_ERR(r);

	if (mutex_lock_killable(&ctx->lock)) {
		netgpu_region_put(r);
		return -EINTR;
	}
	err = netgpu_ctx_check_attached(ctx);
	if (!err && netgpu_ctx_queue_holds(ctx, r))
		err = -EBUSY;
	if (!err)
		err = netgpu_memctx_detach(&ctx->mc, r);
	mutex_unlock(&ctx->lock);

	netgpu_region_put(r);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_detach_region);

/**
 * netgpu_ctx_bind_queue() - bind an rx queue of the context's device
 * @ctx: the context
 * @queue_id: in: the rx queue (ignored with @any); out: the queue bound
 * @any: bind any rx queue not bound yet
 * @fill: in/out: the fill ring's geometry
 *
 * Creates an interface queue of the regions attached to @ctx and makes
 * it the page_pool memory provider of the rx queue (the NIC interface,
 * nic.h), and returns its file: the fill ring is mapped from it, poll()
 * reports room in the ring and the queue stopping, closing it unbinds
 * the queue and takes back the buffers user space held.
 *
 * The queue is made under @ctx->lock alone (it allocates and walks every
 * page of the regions), then bound under rtnl_lock too.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock, then
 * rtnl_lock.
 * Return: the queue's file (O_RDWR; the caller installs it in a file
 * descriptor, or fput()s it, which unbinds); ERR_PTR(-ENODEV) if no
 * device is attached, or a region was removed while the queue was made;
 * -EINVAL if @queue_id is not an rx queue of the device, for a bad
 * geometry or with no region attached; -E2BIG for a fill ring of more
 * entries than a ring takes, or more buffers than a queue takes;
 * -EOPNOTSUPP if
 * the device has no queue-management API (or the kernel no NIC
 * interface); -ENETDOWN if it is down; -EBUSY if a region is another
 * queue's, or (netgpu_ifq_bind()) the rx queue has an AF_XDP pool or no
 * queue is free; -EEXIST, -EPERM, -ENOMEM, -EINTR (killed while waiting
 * for @ctx->lock or rtnl_lock), or the driver's error from the queue
 * restart.  On error nothing is left behind and the rx
 * queue runs as before.
 */
struct file *netgpu_ctx_bind_queue(struct netgpu_ctx *ctx, u32 *queue_id,
				   bool any, struct netgpu_queue_geom *fill)
{
	struct netgpu_ifq *ifq;
	struct file *file;
	int err;

	struct netgpu_ifq *scrub = NULL;

	/*
	 * @ctx->lock across the whole call: the regions the queue holds
	 * cannot be detached before it is bound (or gone).  Long (a queue
	 * restart; on e1000e a link reset), and the context's other calls
	 * wait (not a RECV, which picks its copy queue under RCU, nor a
	 * GET_STATS, which walks the queues under @ctx->stats_lock), but
	 * nothing waits for @ctx->lock holding rtnl_lock, and a caller
	 * killed while it waits returns.
	 */
	if (mutex_lock_killable(&ctx->lock))
		return ERR_PTR(-EINTR);
	err = netgpu_ctx_check_attached(ctx);
	/* Racy against a change of the count: the NIC unit rechecks. */
	if (!err && !any &&
	    *queue_id >= READ_ONCE(ctx->netdev->real_num_rx_queues))
		err = -EINVAL;
	ifq = err ? ERR_PTR(err) : netgpu_ctx_new_ifq(ctx, fill);
	if (IS_ERR(ifq)) {
		mutex_unlock(&ctx->lock);
		return ERR_CAST(ifq);
	}
	if (rtnl_lock_killable()) {
		mutex_unlock(&ctx->lock);
		netgpu_ifq_put(ifq);
		return ERR_PTR(-EINTR);
	}
	file = netgpu_ctx_bind_ifq(ctx, ifq, queue_id, any, &scrub);
	rtnl_unlock();
	mutex_unlock(&ctx->lock);
	if (scrub)
		netgpu_ctx_bind_failed(ctx, scrub);
	return file;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_bind_queue);

#if IS_ENABLED(CONFIG_NETGPU_NIC)
static int netgpu_sockq_file_release(struct inode *inode, struct file *file)
{
	struct netgpu_sockq *sq = file->private_data;
	struct netgpu_ctx *ctx = sq->ctx;

	mutex_lock(&ctx->lock);
	list_del_rcu(&sq->node);
	mutex_unlock(&ctx->lock);
	netgpu_ctx_stats_barrier(ctx);
	netgpu_sockq_destroy(sq);
	netgpu_ctx_put(ctx);
	return 0;
}

static __poll_t netgpu_sockq_file_poll(struct file *file, poll_table *wait)
{
	return netgpu_sockq_poll(file->private_data, file, wait);
}

static int netgpu_sockq_file_mmap(struct file *file,
				  struct vm_area_struct *vma)
{
	return netgpu_sockq_mmap(file->private_data, vma);
}

static long netgpu_sockq_file_ioctl(struct file *file, unsigned int cmd,
				    unsigned long arg)
{
	return netgpu_sockq_ioctl_user(file->private_data, cmd,
				       (void __user *)arg);
}

static const struct file_operations netgpu_sockq_fops = {
	.owner		= THIS_MODULE,
	.release	= netgpu_sockq_file_release,
	.poll		= netgpu_sockq_file_poll,
	.mmap		= netgpu_sockq_file_mmap,
	.unlocked_ioctl	= netgpu_sockq_file_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* A socket queue of @sock_file (the caller's reference) and its file. */
static struct file *netgpu_ctx_new_sockq(struct netgpu_ctx *ctx,
					 struct file *sock_file,
					 struct netgpu_queue_geom *rx,
					 struct netgpu_queue_geom *cq)
{
	struct netgpu_sockq *sq;
	struct file *file;
	int err;

	lockdep_assert_held(&ctx->lock);

	err = netgpu_sockq_check_attach(sock_file, dev_net(ctx->netdev));
	if (err) {
		fput(sock_file);
		return ERR_PTR(err);
	}
	sq = netgpu_sockq_create(ctx, sock_file, rx, cq);
	if (IS_ERR(sq)) {
		fput(sock_file);
		return ERR_CAST(sq);
	}
	file = anon_inode_getfile("[netgpu-sockq]", &netgpu_sockq_fops, sq,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		netgpu_sockq_destroy(sq);
		return file;
	}
	netgpu_ctx_get(ctx);
	list_add_tail_rcu(&sq->node, &ctx->sockqs);
	return file;
}

/*
 * The first bound queue of @ctx with host memory, referenced, or NULL.
 * Under RCU, not the context's lock, which a BIND_QUEUE or a queue's
 * close holds while it waits for rtnl_lock: a receive does not wait for
 * the machine's rtnetlink traffic.  A file on the list holds its queue
 * until a grace period after it left the list.
 */
static struct netgpu_ifq *netgpu_ctx_copy_ifq(struct netgpu_ctx *ctx)
{
	struct netgpu_ifq *copy = NULL;
	struct netgpu_ifq_file *qf;

	rcu_read_lock();
	list_for_each_entry_rcu(qf, &ctx->ifqs, node) {
		if (netgpu_ifq_can_copy(qf->ifq)) {
			copy = qf->ifq;
			netgpu_ifq_get(copy);
			break;
		}
	}
	rcu_read_unlock();
	return copy;
}

/**
 * netgpu_ctx_recv() - NETGPU_SOCKQ_IOCTL_RECV of a socket queue
 * @sq: the queue
 * @r: in/out: &struct netgpu_recv
 *
 * Reads (netgpu_sockq_recv()) until there is something to report, or,
 * with NETGPU_RECV_NONBLOCK, once.  Each pass picks the interface queue
 * readable bytes are copied into afresh: the first bound queue of the
 * context with host memory, if any; none is held while waiting.
 *
 * Context: Process context, may sleep.  Takes the socket lock; not the
 * context's (the copy queue is found under RCU).
 * Return: as netgpu_sockq_recv(), or netgpu_sockq_wait()'s error.
 */
int netgpu_ctx_recv(struct netgpu_sockq *sq, struct netgpu_recv *r)
{
	long timeo = netgpu_sockq_rcvtimeo(sq, r->flags & NETGPU_RECV_NONBLOCK);
	struct netgpu_ifq *copy;
	int ret;

	for (;;) {
		copy = netgpu_ctx_copy_ifq(sq->ctx);
		ret = netgpu_sockq_recv(sq, copy, r);
		if (copy)
			netgpu_ifq_put(copy);
		if (ret != -EAGAIN)
			return ret;
		ret = netgpu_sockq_wait(sq, &timeo);
		if (ret)
			return ret;
	}
}
EXPORT_SYMBOL_GPL(netgpu_ctx_recv);
#else
static struct file *netgpu_ctx_new_sockq(struct netgpu_ctx *ctx,
					 struct file *sock_file,
					 struct netgpu_queue_geom *rx,
					 struct netgpu_queue_geom *cq)
{
	fput(sock_file);
	return ERR_PTR(-EOPNOTSUPP);
}
#endif

/**
 * netgpu_ctx_attach_socket() - attach a TCP socket to the context
 * @ctx: the context
 * @sock_fd: the socket's file descriptor in the caller's file table
 * @rx: in/out: the rx ring's geometry
 * @cq: in/out: the completion ring's geometry, or NULL for a queue that
 *	only receives
 *
 * The socket queue holds the socket's file and the context until its own
 * file is closed.  Several queues may read one socket; the stream is then
 * split between their rings in the order of their reads.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock.
 * Return: the socket queue's file, not yet installed; ERR_PTR(-ENODEV) if
 * no device is attached; -EINVAL or -E2BIG for a bad geometry (see
 * netgpu_queue_validate_geometry(), checked before the descriptor);
 * -EBADF for a descriptor that is not open; the
 * errors of netgpu_sockq_create() (-ENOTSOCK for a file that is no
 * socket, -EOPNOTSUPP for a socket that is not plain TCP) and of
 * netgpu_sockq_check_attach() (-EXDEV for a socket of another network
 * namespace than the device's, -ENOTCONN for a listening socket or a
 * closed one with nothing to read); -EOPNOTSUPP without the NIC
 * interface; -ENOMEM; -EINTR if killed while waiting for @ctx->lock.
 */
struct file *netgpu_ctx_attach_socket(struct netgpu_ctx *ctx, int sock_fd,
				      struct netgpu_queue_geom *rx,
				      struct netgpu_queue_geom *cq)
{
	struct file *sock_file, *file;
	int err;

	if (mutex_lock_killable(&ctx->lock))
		return ERR_PTR(-EINTR);
	err = netgpu_ctx_check_attached(ctx);
	if (err) {
		file = ERR_PTR(err);
		goto out;
	}
	/* The arguments before the descriptor, as every other command. */
	err = netgpu_queue_validate_geometry(NETGPU_QUEUE_RX, rx);
	if (!err && cq)
		err = netgpu_queue_validate_geometry(NETGPU_QUEUE_COMPLETION,
						     cq);
	if (err) {
		file = ERR_PTR(err);
		goto out;
	}
	sock_file = fget(sock_fd);
	if (!sock_file) {
		file = ERR_PTR(-EBADF);
		goto out;
	}
	file = netgpu_ctx_new_sockq(ctx, sock_file, rx, cq);
out:
	mutex_unlock(&ctx->lock);
	return file;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_attach_socket);

/**
 * netgpu_ctx_get_stats() - the counters of a context's queues
 * @ctx: the context
 * @stats: where to store them
 *
 * The sums over the context's interface and socket queues (all 0 with
 * none).  Works on a dead context too: counters are of interest after
 * the device went away.
 *
 * Not under @ctx->lock, which a BIND_QUEUE holds while it waits for
 * rtnl_lock (and an ATTACH_REGION across a mapping): the queues are
 * walked under @ctx->stats_lock, which a queue's release takes after
 * unlinking it and before freeing it.  Each queue's counters are read
 * as its own fd's GET_STATS reads them, without the context.
 *
 * Context: Process context, may sleep.  Takes @ctx->stats_lock, then the
 * interface queues' fill locks.
 * Return: 0, or -EINTR if killed while waiting for another GET_STATS.
 */
int netgpu_ctx_get_stats(struct netgpu_ctx *ctx, struct netgpu_stats *stats)
{
	struct netgpu_ifq_file *qf;
	struct netgpu_sockq *sq;

	if (mutex_lock_killable(&ctx->stats_lock))
		return -EINTR;
	memset(stats, 0, sizeof(*stats));
	list_for_each_entry_rcu(qf, &ctx->ifqs, node,
				lockdep_is_held(&ctx->stats_lock))
		netgpu_ifq_get_stats(qf->ifq, stats);
	list_for_each_entry_rcu(sq, &ctx->sockqs, node,
				lockdep_is_held(&ctx->stats_lock))
		netgpu_sockq_get_stats(sq, stats);
	mutex_unlock(&ctx->stats_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_get_stats);

/**
 * netgpu_ctx_account() - account for every buffer of a context
 * @ctx: the context
 * @a: out: the counts (&struct netgpu_account)
 *
 * Sums its interface queues (netgpu_ifq_account(), each walked under its
 * fill lock) and adds what the queues whose files were closed gave back.
 * The invariants: @a->lost is 0 (each buffer is on a free list, in a
 * pool or a copy user space holds) and @a->urefs equals
 * @a->outstanding (each user reference is one a descriptor handed out
 * and nothing took back).  Exact at rest; under traffic a snapshot may
 * be off by what moves during it, and the reader takes another.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock, then the
 * queues' fill locks.
 */
VISIBLE_IF_KUNIT void netgpu_ctx_account(struct netgpu_ctx *ctx,
					 struct netgpu_account *a)
{
	struct netgpu_ifq_file *qf;

	memset(a, 0, sizeof(*a));
	mutex_lock(&ctx->lock);
	a->id = ctx->id;
	list_for_each_entry(qf, &ctx->ifqs, node)
		netgpu_ifq_account(qf->ifq, a);
	a->returned += ctx->gone_returned;
	a->scrubbed += ctx->gone_scrubbed;
	/* After the walk: a descriptor is written after its reference. */
	a->descs = atomic64_read(&ctx->descs);
	mutex_unlock(&ctx->lock);
	a->lost = (s64)(a->total - a->free - a->pool - a->copies);
	a->outstanding = (s64)(a->descs - a->returned - a->scrubbed);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ctx_account);

/**
 * netgpu_ctx_accounting_show() - /sys/kernel/debug/netgpu/accounting
 * @m: the seq_file
 * @unused: unused
 *
 * One line per context holding a device (netgpu_ctx_account()), then the
 * number of contexts::
 *
 *   ctx <id> total <T> free <F> pool <P> copies <C> lost <L> urefs <U>
 *   descs <D> returned <R> scrubbed <S> outstanding <O>   (one line)
 *   contexts <N>
 *
 * Context: Process context.  Takes rtnl_lock (the list of contexts),
 * then, without it, each context's lock.
 * Return: 0, or -ENOMEM.
 */
VISIBLE_IF_KUNIT int netgpu_ctx_accounting_show(struct seq_file *m,
						void *unused)
{
	struct netgpu_ctx **ctxs, *ctx;
	struct netgpu_account a;
	u32 i, nr = 0;

	/*
	 * Referenced under rtnl_lock, counted without it: each context's
	 * lock is taken first (&struct netgpu_ctx), and may be held long.
	 */
	rtnl_lock();
	list_for_each_entry(ctx, &netgpu_ctx_list, node)
		nr++;
	ctxs = kmalloc_array(nr, sizeof(*ctxs), GFP_KERNEL);
	if (!ctxs) {
		rtnl_unlock();
		return -ENOMEM;
	}
	nr = 0;
	list_for_each_entry(ctx, &netgpu_ctx_list, node) {
		/* Not one being freed (netgpu_ctx_free() waits for rtnl). */
		if (refcount_inc_not_zero(&ctx->ref))
			ctxs[nr++] = ctx;
	}
	rtnl_unlock();

	for (i = 0; i < nr; i++) {
		netgpu_ctx_account(ctxs[i], &a);
		seq_printf(m,
			   "ctx %u total %llu free %llu pool %llu copies %llu lost %lld urefs %llu descs %llu returned %llu scrubbed %llu outstanding %lld\n",
			   a.id, a.total, a.free, a.pool, a.copies, a.lost,
			   a.urefs, a.descs, a.returned, a.scrubbed,
			   a.outstanding);
		netgpu_ctx_put(ctxs[i]);
	}
	kfree(ctxs);
	seq_printf(m, "contexts %u\n", nr);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ctx_accounting_show);

DEFINE_SHOW_ATTRIBUTE(netgpu_ctx_accounting);
DEFINE_SHOW_ATTRIBUTE(netgpu_ifq_stuck);

/*
 * NETDEV_UNREGISTER, under rtnl_lock: also raised when a device leaves
 * its namespace.  Detach every context holding @dev, so that
 * unregister_netdevice() does not wait for their files to close.
 *
 * Without @ctx->lock: an ATTACH_REGION mapping 2^28 pages or waiting on
 * a dma-buf's fences, a BIND_QUEUE making its queue hold it, and every
 * rtnetlink user would wait behind them.
 * What this touches is rtnl_lock's too: the list, @ctx->netdev, the
 * queues' files (&netgpu_ctx.ifqs) and their states; @ctx->state is the
 * one field written here without @ctx->lock (&struct netgpu_ctx).
 */
static int netgpu_ctx_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct netgpu_ctx *ctx, *tmp;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	ASSERT_RTNL();
	/* Queues stuck at unbind first: they hold the device too. */
	netgpu_ifq_netdev_gone(dev);
	list_for_each_entry_safe(ctx, tmp, &netgpu_ctx_list, node) {
		/* ->netdev changes under rtnl_lock, which we hold. */
		if (ctx->netdev != dev)
			continue;
		/*
		 * Its last reference went: netgpu_ctx_free(), waiting for
		 * rtnl_lock, detaches it (it has no queue left, each held
		 * a reference), and the device's unregistration waits for
		 * its netdev_put().  A reference now would be on freed
		 * memory by the time the work ran.
		 */
		if (!refcount_inc_not_zero(&ctx->ref))
			continue;
		/* Dead at once: every later call fails with -ENODEV. */
		list_del_init(&ctx->node);
		netgpu_ctx_ifqs_dev_gone(ctx);
		WRITE_ONCE(ctx->state, NETGPU_CTX_DEAD);
		/*
		 * The regions' grace period and unmaps without rtnl_lock:
		 * the work holds the device, whose unregistration waits for
		 * it (netdev_wait_allrefs()), so they still happen before
		 * the device goes.  A namespace move does not wait: the
		 * device lives on, its maps go a moment later.  The work
		 * has the reference taken above.
		 */
		queue_work(netgpu_ctx_wq, &ctx->release_work);
	}
	return NOTIFY_DONE;
}

static void netgpu_ctx_release_work(struct work_struct *work)
{
	struct netgpu_ctx *ctx = container_of(work, struct netgpu_ctx,
					      release_work);

	mutex_lock(&ctx->lock);
	netgpu_ctx_release_dev_locked(ctx, NETGPU_CTX_DEAD);
	mutex_unlock(&ctx->lock);
	netgpu_ctx_put(ctx);
}

static struct notifier_block netgpu_ctx_netdev_nb = {
	.notifier_call = netgpu_ctx_netdev_event,
};

/**
 * netgpu_ctx_init() - register the context unit's device notifier
 *
 * Context: Process context (the library's init).
 * Return: 0, -ENOMEM (its workqueue) or the error of
 * register_netdevice_notifier().
 */
int netgpu_ctx_init(void)
{
	int err;

	netgpu_ctx_wq = alloc_workqueue("netgpu_ctx", WQ_UNBOUND, 0);
	if (!netgpu_ctx_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&netgpu_ctx_netdev_nb);
	if (err)
		destroy_workqueue(netgpu_ctx_wq);
	return err;
}

/**
 * netgpu_ctx_exit() - unregister the context unit's device notifier
 *
 * No context may be left: every file holding one is closed before the
 * module can go.
 *
 * Context: Process context (the library's exit).
 */
void netgpu_ctx_exit(void)
{
	unregister_netdevice_notifier(&netgpu_ctx_netdev_nb);
	destroy_workqueue(netgpu_ctx_wq);
	WARN_ON_ONCE(!list_empty(&netgpu_ctx_list));
}

/**
 * netgpu_ctx_debugfs_init() - make /sys/kernel/debug/netgpu/
 *
 * accounting (netgpu_ctx_accounting_show()) and stuck
 * (netgpu_ifq_stuck_show()).  Without debugfs, or its memory, the
 * library works without the file, as debugfs users do.
 *
 * Context: Process context (the library's init).
 * Return: 0.
 */
int netgpu_ctx_debugfs_init(void)
{
	netgpu_ctx_debugfs = debugfs_create_dir("netgpu", NULL);
	debugfs_create_file("accounting", 0400, netgpu_ctx_debugfs, NULL,
			    &netgpu_ctx_accounting_fops);
	debugfs_create_file("stuck", 0400, netgpu_ctx_debugfs, NULL,
			    &netgpu_ifq_stuck_fops);
	return 0;
}

/**
 * netgpu_ctx_debugfs_exit() - remove /sys/kernel/debug/netgpu/
 *
 * Waits for readers of the accounting file to finish.
 *
 * Context: Process context (the library's exit).
 */
void netgpu_ctx_debugfs_exit(void)
{
	debugfs_remove_recursive(netgpu_ctx_debugfs);
	netgpu_ctx_debugfs = NULL;
}
