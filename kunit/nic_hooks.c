// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test hooks for the NIC boots (kunit/e1000e/run.sh): what a real
 * system does to a NIC driver that no program can ask for in a QEMU
 * guest with no suspend and no netpoll.  Built into the test kernel only
 * (CONFIG_NETGPU_KUNIT_TEST), in debugfs, root only:
 *
 * /sys/kernel/debug/netgpu_test/pm, written "freeze <ifname>" or
 *	"thaw <ifname>": the device's dev_pm_ops .freeze or .thaw, as the
 *	PM core calls them around a hibernation image (the device stays
 *	awake for it: a runtime PM reference is taken at freeze and given
 *	back at thaw; one device frozen at a time, -EBUSY otherwise).
 *	User space keeps running in between, which a real freeze does not
 *	allow: the hook is how a case reaches what the kernel may do to a
 *	detached device meanwhile (a memory provider's unbind from a
 *	kernel path, PCI error recovery).
 *
 * /sys/kernel/debug/netgpu_test/poll0, written "<ifname> [<times>]":
 *	what netpoll does to the device's first NAPI instance, <times>
 *	times (default 1): its ->poll() with a budget of 0 and hardware
 *	interrupts off, as netpoll's poll_one_napi() makes it.  The hook
 *	owns the instance by scheduling it (netpoll owns it through NPSVC
 *	instead), then completes it (rescheduled for the softirq if an
 *	interrupt came meanwhile): a stricter model of netpoll, about the
 *	refill a budget-0 poll may or may not make.
 *
 * /sys/kernel/debug/netgpu_test/refill_napi, written "<ifname>": the
 *	next refill of a netgpu queue of that device made in process
 *	context, allowed to sleep, with the carrier off (a driver posting
 *	its ring while it brings the queue up, not its NAPI poll) logs
 *	whether the device's NAPI was enabled then:
 *	"netgpu_test: refill of <ifname> with NAPI enabled|disabled".
 *	A poll (busy polling, netpoll) may run concurrently with a refill
 *	made while NAPI is enabled, on a pool that has one consumer.
 *
 * The interface name is looked up in the writer's network namespace.
 */

#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/init.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/pm.h>
#include <linux/pm_runtime.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/gfp.h>
#include <linux/jump_label.h>
#include <linux/preempt.h>
#include <net/net_namespace.h>

#include "nic.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static struct dentry *nic_hooks_dir;
/* The device frozen by the hook, awake until its thaw; one at a time. */
static DEFINE_MUTEX(nic_hooks_lock);
static struct device *nic_hooks_frozen;

/*
 * A user write of fewer than @size bytes, NUL-terminated in @buf; *@args
 * is its text without leading and trailing white space.
 */
static int nic_hooks_args(const char __user *ubuf, size_t len, char *buf,
			  size_t size, char **args)
{
	if (!len || len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	*args = strim(buf);
	return **args ? 0 : -EINVAL;
}

static struct net_device *nic_hooks_dev(const char *name)
{
	struct net_device *dev;

	dev = dev_get_by_name(current->nsproxy->net_ns, name);
	return dev ?: ERR_PTR(-ENODEV);
}

/* Called with @parent's device lock held, as the PM core calls. */
static int nic_hooks_pm_locked(struct device *parent, bool freeze)
{
	const struct dev_pm_ops *pm;

	if (!parent->driver || !parent->driver->pm)
		return -EOPNOTSUPP;
	pm = parent->driver->pm;
	if (!(freeze ? pm->freeze : pm->thaw))
		return -EOPNOTSUPP;
	return freeze ? pm->freeze(parent) : pm->thaw(parent);
}

static int nic_hooks_pm(struct device *parent, bool freeze)
{
	int err;

	if (!parent)
		return -EOPNOTSUPP;
	guard(mutex)(&nic_hooks_lock);
	if (freeze ? !!nic_hooks_frozen : nic_hooks_frozen != parent)
		return -EBUSY;
	/* As device_prepare(): awake for the transition. */
	if (freeze)
		pm_runtime_get_sync(parent);
	/* The driver, read under the lock that keeps it bound. */
	device_lock(parent);
	err = nic_hooks_pm_locked(parent, freeze);
	device_unlock(parent);
	if (freeze && !err) {
		nic_hooks_frozen = get_device(parent);
		return 0;
	}
	pm_runtime_put(parent);
	if (!freeze) {
		/*
		 * Thawed, or left to the driver by a thaw that failed or
		 * found it unbound: never frozen by us again either way.
		 */
		put_device(nic_hooks_frozen);
		nic_hooks_frozen = NULL;
	}
	return err;
}

static ssize_t nic_hooks_pm_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct net_device *dev;
	char buf[64], *args, *name;
	bool freeze;
	int err;

	err = nic_hooks_args(ubuf, len, buf, sizeof(buf), &args);
	if (err)
		return err;
	if (str_has_prefix(args, "freeze "))
		freeze = true;
	else if (str_has_prefix(args, "thaw "))
		freeze = false;
	else
		return -EINVAL;
	name = skip_spaces(strchr(args, ' '));
	dev = nic_hooks_dev(name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	err = nic_hooks_pm(dev->dev.parent, freeze);
	dev_put(dev);
	return err ?: len;
}

/* One netpoll-style poll of @napi; false if it was not ours to poll. */
static bool nic_hooks_poll0(struct napi_struct *napi)
{
	unsigned long flags;
	int work;

	/*
	 * Scheduled by us, so no softirq polls it meanwhile.  netpoll's
	 * poll_one_napi() does not take SCHED (it owns the instance through
	 * NPSVC and poll_owner) and may poll one the softirq is not
	 * polling: the hook is a stricter model of it, about one thing
	 * only, a ->poll() with a budget of 0 and interrupts off.
	 */
	if (!napi_schedule_prep(napi))
		return false;
	local_irq_save(flags);
	work = napi->poll(napi, 0);
	local_irq_restore(flags);
	WARN_ONCE(work, "%ps: %d done on a budget of 0\n", napi->poll, work);
	/*
	 * Ours to complete: no interrupt was masked for it.  An interrupt
	 * meanwhile found it scheduled and marked it missed: then it is
	 * scheduled again, and the softirq polls it.
	 */
	local_bh_disable();
	napi_complete_done(napi, 0);
	local_bh_enable();
	return true;
}

static ssize_t nic_hooks_poll0_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct napi_struct *napi;
	struct net_device *dev;
	unsigned int times = 1, i, done = 0;
	char buf[64], *name, *sp;
	int err;

	err = nic_hooks_args(ubuf, len, buf, sizeof(buf), &name);
	if (err)
		return err;
	sp = strchr(name, ' ');
	if (sp) {
		*sp = '\0';
		if (kstrtouint(skip_spaces(sp + 1), 0, &times) || !times ||
		    times > 10000)
			return -EINVAL;
	}
	dev = nic_hooks_dev(name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	rtnl_lock();
	napi = list_first_entry_or_null(&dev->napi_list, struct napi_struct,
					dev_list);
	rtnl_unlock();
	if (!napi) {
		dev_put(dev);
		return -EOPNOTSUPP;
	}
	/* The instance lives as long as the device is registered. */
	for (i = 0; i < times; i++) {
		if (nic_hooks_poll0(napi))
			done++;
		cond_resched();
	}
	dev_put(dev);
	pr_info("netgpu_test: poll0 %s: %u of %u polls with a budget of 0\n",
		name, done, times);
	return len;
}

/*
 * The device whose next bring-up refill refill_napi reports, by index in
 * its namespace (0: disarmed): no reference held, so an armed device
 * still unregisters.
 */
static DEFINE_SPINLOCK(nic_hooks_refill_lock);
static struct net *nic_hooks_refill_net;
static int nic_hooks_refill_ifindex;

/* NAPI disabled: napi_disable() leaves SCHED and NPSVC set. */
static bool nic_hooks_napi_disabled(struct napi_struct *napi)
{
	return test_bit(NAPI_STATE_SCHED, &napi->state) &&
	       test_bit(NAPI_STATE_NPSVC, &napi->state);
}

/* Disarms and returns true if @dev is the armed device. */
static bool nic_hooks_refill_take(struct net_device *dev)
{
	bool match;

	spin_lock(&nic_hooks_refill_lock);
	match = nic_hooks_refill_ifindex == dev->ifindex &&
		net_eq(nic_hooks_refill_net, dev_net(dev));
	if (match) {
		nic_hooks_refill_ifindex = 0;
		nic_hooks_refill_net = NULL;
	}
	spin_unlock(&nic_hooks_refill_lock);
	return match;
}

static void nic_hooks_refill(struct net_device *dev, gfp_t gfp)
{
	struct napi_struct *napi;

	if (!dev || !READ_ONCE(nic_hooks_refill_ifindex) || !in_task() ||
	    !gfpflags_allow_blocking(gfp) || netif_carrier_ok(dev))
		return;
	/* Once per arming. */
	if (!nic_hooks_refill_take(dev))
		return;
	napi = list_first_entry_or_null(&dev->napi_list, struct napi_struct,
					dev_list);
	pr_info("netgpu_test: refill of %s with NAPI %s\n", dev->name,
		!napi ? "absent" :
		nic_hooks_napi_disabled(napi) ? "disabled" : "enabled");
}

static ssize_t nic_hooks_refill_napi_write(struct file *file,
					   const char __user *ubuf, size_t len,
					   loff_t *ppos)
{
	struct net_device *dev;
	char buf[64], *name;
	int err;

	err = nic_hooks_args(ubuf, len, buf, sizeof(buf), &name);
	if (err)
		return err;
	dev = nic_hooks_dev(name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	/*
	 * The namespace is only compared, never dereferenced: a stale one
	 * cannot match a live device's.  A new arming replaces the old.
	 */
	spin_lock(&nic_hooks_refill_lock);
	nic_hooks_refill_net = dev_net(dev);
	WRITE_ONCE(nic_hooks_refill_ifindex, dev->ifindex);
	spin_unlock(&nic_hooks_refill_lock);
	dev_put(dev);
	static_branch_enable(&netgpu_refill_hook_on);
	return len;
}

static const struct file_operations nic_hooks_refill_napi_fops = {
	.owner = THIS_MODULE,
	.write = nic_hooks_refill_napi_write,
	.llseek = noop_llseek,
};

static const struct file_operations nic_hooks_pm_fops = {
	.owner = THIS_MODULE,
	.write = nic_hooks_pm_write,
	.llseek = noop_llseek,
};

static const struct file_operations nic_hooks_poll0_fops = {
	.owner = THIS_MODULE,
	.write = nic_hooks_poll0_write,
	.llseek = noop_llseek,
};

static int __init nic_hooks_init(void)
{
	nic_hooks_dir = debugfs_create_dir("netgpu_test", NULL);
	debugfs_create_file("pm", 0200, nic_hooks_dir, NULL,
			    &nic_hooks_pm_fops);
	debugfs_create_file("poll0", 0200, nic_hooks_dir, NULL,
			    &nic_hooks_poll0_fops);
	debugfs_create_file("refill_napi", 0200, nic_hooks_dir, NULL,
			    &nic_hooks_refill_napi_fops);
	/* Before the key can be on; never cleared while it may be. */
	netgpu_refill_hook = nic_hooks_refill;
	return 0;
}

/*
 * No module_exit(): netgpu_refill_hook keeps pointing here, and a
 * refill may be in it, so the module (when it is one) stays loaded.
 */
module_init(nic_hooks_init);
MODULE_DESCRIPTION("netgpu test hooks for the NIC boots");
MODULE_LICENSE("GPL");
