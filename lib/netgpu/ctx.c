// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu contexts: attach a device and regions, (later) bind queues.
 *
 * See the DOC in ctx.h for the lifetimes and the lock order.
 */

#include <linux/capability.h>
#include <linux/device.h>
#include <linux/export.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <uapi/linux/netgpu.h>

#include "ctx.h"

/*
 * Contexts holding a device (&netgpu_ctx.node).  Protects: membership.
 * Ordering: rtnl_lock is the lock, so that NETDEV_UNREGISTER (called
 * under it) sees every context that holds the device going away.
 */
static LIST_HEAD(netgpu_ctx_list);

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
	mutex_init(&ctx->lock);
	ctx->state = NETGPU_CTX_NEW;
	INIT_LIST_HEAD(&ctx->node);
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

/*
 * Undo netgpu_ctx_attach_dev(), leaving the context dead or to be freed.
 * Detaches every region (unmapping them for the device, or retiring their
 * maps until the buffers the device holds come back), then drops the
 * DMA device and the device.
 */
static void netgpu_ctx_detach_dev_locked(struct netgpu_ctx *ctx,
					 enum netgpu_ctx_state state)
{
	ASSERT_RTNL();
	lockdep_assert_held(&ctx->lock);

	list_del_init(&ctx->node);
	netgpu_memctx_release(&ctx->mc);
	put_device(ctx->dma_dev);
	ctx->dma_dev = NULL;
	netdev_put(ctx->netdev, &ctx->tracker);
	ctx->netdev = NULL;
	ctx->state = state;
}

static void netgpu_ctx_free(struct netgpu_ctx *ctx)
{
	rtnl_lock();
	mutex_lock(&ctx->lock);
	/* Or the notifier detached it: DEAD or NEW, nothing held. */
	if (ctx->state == NETGPU_CTX_ATTACHED)
		netgpu_ctx_detach_dev_locked(ctx, NETGPU_CTX_DEAD);
	mutex_unlock(&ctx->lock);
	rtnl_unlock();

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
 * Context: Process context, may sleep.  Takes rtnl_lock, then @ctx->lock.
 * Return: 0; -EPERM without the capability; -ENODEV if @net has no such
 * device, or the context's device was unregistered; -EBUSY if a device is
 * attached already; -EOPNOTSUPP if the device has no DMA device; -EINTR
 * if killed while waiting for rtnl_lock.
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

	if (rtnl_lock_killable())
		return -EINTR;
	mutex_lock(&ctx->lock);
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
	ctx->state = NETGPU_CTX_ATTACHED;
	list_add_tail(&ctx->node, &netgpu_ctx_list);
	err = 0;

out_unlock:
	mutex_unlock(&ctx->lock);
	rtnl_unlock();
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_attach_dev);

/* -ENODEV unless a device is attached: none yet, or it went away. */
static int netgpu_ctx_check_attached(struct netgpu_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	return ctx->state == NETGPU_CTX_ATTACHED ? 0 : -ENODEV;
}

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
 * already; -ENOMEM; or the provider's map error.  On error nothing is
 * left behind.
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

	mutex_lock(&ctx->lock);
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
 * Return: 0; -ENOENT if @mem has no region @id or it is not attached to
 * @ctx; -ENODEV if no device is attached (never, or it was unregistered,
 * which detached every region).
 */
int netgpu_ctx_detach_region(struct netgpu_ctx *ctx, struct netgpu_mem *mem,
			     u32 id)
{
	struct netgpu_region *r;
	int err;

	r = netgpu_mem_get_region(mem, id);
	if (IS_ERR(r))
		return PTR_ERR(r);

	mutex_lock(&ctx->lock);
	err = netgpu_ctx_check_attached(ctx);
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
 * Binding goes through the NIC interface unit (netgpu as the page_pool
 * memory provider of the queue), which does not exist yet: until it does,
 * this checks the context and the queue index and then refuses.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock.
 * Return: -ENODEV if no device is attached; -EINVAL if @queue_id is not
 * an rx queue of the device; else -EOPNOTSUPP for now.
 */
int netgpu_ctx_bind_queue(struct netgpu_ctx *ctx, u32 *queue_id, bool any,
			  struct netgpu_queue_geom *fill)
{
	int err;

	mutex_lock(&ctx->lock);
	err = netgpu_ctx_check_attached(ctx);
	if (err)
		goto out_unlock;
	/* Racy against a change of the count: the NIC unit rechecks. */
	if (!any && *queue_id >= READ_ONCE(ctx->netdev->real_num_rx_queues)) {
		err = -EINVAL;
		goto out_unlock;
	}
	err = -EOPNOTSUPP;
out_unlock:
	mutex_unlock(&ctx->lock);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_bind_queue);

/**
 * netgpu_ctx_attach_socket() - attach a TCP socket to the context
 * @ctx: the context
 * @sock_fd: the socket's file descriptor in the caller's file table
 * @rx: in/out: the rx ring's geometry
 *
 * The socket receive path does not exist yet: until it does, this checks
 * the context and then refuses.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock.
 * Return: -ENODEV if no device is attached; else -EOPNOTSUPP for now.
 */
int netgpu_ctx_attach_socket(struct netgpu_ctx *ctx, int sock_fd,
			     struct netgpu_queue_geom *rx)
{
	int err;

	mutex_lock(&ctx->lock);
	err = netgpu_ctx_check_attached(ctx) ?: -EOPNOTSUPP;
	mutex_unlock(&ctx->lock);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_ctx_attach_socket);

/**
 * netgpu_ctx_get_stats() - the counters of a context's interface queues
 * @ctx: the context
 * @stats: where to store them
 *
 * The sums over the context's interface queues.  No queue can be bound
 * yet, so every counter is 0.  Works on a dead context too: counters are
 * of interest after the device went away.
 *
 * Context: Process context, may sleep.  Takes @ctx->lock.
 */
void netgpu_ctx_get_stats(struct netgpu_ctx *ctx, struct netgpu_stats *stats)
{
	mutex_lock(&ctx->lock);
	memset(stats, 0, sizeof(*stats));
	mutex_unlock(&ctx->lock);
}
EXPORT_SYMBOL_GPL(netgpu_ctx_get_stats);

/*
 * NETDEV_UNREGISTER, under rtnl_lock: also raised when a device leaves
 * its namespace.  Detach every context holding @dev, so that
 * unregister_netdevice() does not wait for their files to close.
 */
static int netgpu_ctx_netdev_event(struct notifier_block *nb,
				   unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct netgpu_ctx *ctx, *tmp;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	ASSERT_RTNL();
	list_for_each_entry_safe(ctx, tmp, &netgpu_ctx_list, node) {
		/* ->netdev changes under rtnl_lock, which we hold. */
		if (ctx->netdev != dev)
			continue;
		mutex_lock(&ctx->lock);
		netgpu_ctx_detach_dev_locked(ctx, NETGPU_CTX_DEAD);
		mutex_unlock(&ctx->lock);
	}
	return NOTIFY_DONE;
}

static struct notifier_block netgpu_ctx_netdev_nb = {
	.notifier_call = netgpu_ctx_netdev_event,
};

/**
 * netgpu_ctx_init() - register the context unit's device notifier
 *
 * Context: Process context (the library's init).
 * Return: 0 or the error of register_netdevice_notifier().
 */
int netgpu_ctx_init(void)
{
	return register_netdevice_notifier(&netgpu_ctx_netdev_nb);
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
	WARN_ON_ONCE(!list_empty(&netgpu_ctx_list));
}
