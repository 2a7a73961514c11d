// SPDX-License-Identifier: GPL-2.0-only
/*
 * Splats attributed to the netgpu KUnit case that was running.
 *
 * KASAN, lockdep, DEBUG_ATOMIC_SLEEP, debugobjects and WARN_ON() report
 * through the kernel log and let the code (and the case) carry on: a
 * case whose code splats still passes in KUnit's eyes.  As
 * mm/kfence/kfence_test.c does, a probe on the console tracepoint sees
 * every line as it is logged, on any CPU and in any context; it counts
 * the lines that head a splat, by kind, and keeps the first of each.
 * The suites' .exit hook (netgpu_splat_exit(), run by KUnit after each
 * case, in the case's cleanup thread) first releases the case's
 * resources, so that what their release prints counts too, then fails
 * the case for every kind of splat seen since the previous case ended,
 * unless the case declared it with netgpu_splat_expect(), in which case
 * it fails if that splat was *not* seen.
 *
 * A splat is the current case's when it appears between the end of the
 * previous case and the end of this one's cleanup: one that another
 * thread prints then (a kworker the case queued, a timer) counts, and so
 * would an unrelated one.  The host-side console scan (scripts/scan-log)
 * still runs over the whole log.
 *
 * kmemleak reports only objects at least 5 s old, on a scan, after it
 * saw them unchanged by an earlier scan, and has no in-kernel interface
 * to ask for one: kmemleak_scan() is static and only its debugfs file's
 * write("scan") reaches it.  netgpu_splat_kmemleak_scan() therefore
 * mounts debugfs privately, opens "kmemleak", waits for the case's
 * objects to be old enough and writes "scan" twice through the file's
 * ->write() from a user page (kmemleak_write() copies its command with
 * strncpy_from_user(), and the file has no ->write_iter() for
 * kernel_write()).  That costs about 5 s and two scans, so only cases
 * that ask for it pay it: the fault sweeps (netgpu_kunit_need_fail_nth())
 * and suites whose .exit is netgpu_splat_exit_kmemleak().
 *
 * Under TCG with KASAN the wait and the two scans take about 20 s of a
 * guest of 1 GiB: for the 24 sweeps of the suites' boot, 8 of its 11
 * minutes.  A boot that asks kmemleak for a scan itself once the suites
 * are done (scripts/kmemleak-boot, whose console make check fails on
 * any "unreferenced object") may pass netgpu_splat.case_scan=0: the
 * sweeps then run without their own scans and every leak is still
 * reported, by allocation backtrace rather than by case.  So do the
 * suites whose .exit is netgpu_splat_exit_kmemleak() (netgpu_torture's
 * campaign).  A case that expects a leak (the armed canary's) scans
 * regardless.  kunit.py's boots,
 * which have no user space to scan, keep the default: every sweep is
 * scanned.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <trace/events/printk.h>

#include "splat.h"

/* Built in (every kunitconfig of the tree), not "splat.": */
#ifndef MODULE
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "netgpu_splat."
#endif

static bool case_scan = true;
module_param(case_scan, bool, 0444);
MODULE_PARM_DESC(case_scan,
		 "kmemleak scan after each case that asks for one (default true; false: the boot scans once at its end)");

/* kmemleak's MSECS_MIN_AGE (mm/kmemleak.c), and some margin. */
#define SPLAT_KMEMLEAK_MIN_AGE_MS	(5000 + 250)
#define SPLAT_LINE_LEN			192

static const char * const splat_names[NETGPU_SPLAT_NR] = {
	[NETGPU_SPLAT_KASAN]	= "KASAN",
	[NETGPU_SPLAT_LOCKDEP]	= "lockdep",
	[NETGPU_SPLAT_SLEEP]	= "sleep-in-atomic",
	[NETGPU_SPLAT_LEAK]	= "kmemleak",
	[NETGPU_SPLAT_WARNING]	= "WARNING",
	[NETGPU_SPLAT_BUG]	= "BUG",
};

/* The header lines of scripts/scan-log, by kind: the first match wins. */
static const struct {
	const char *needle;
	enum netgpu_splat kind;
} splat_patterns[] = {
	{ "BUG: KASAN",					NETGPU_SPLAT_KASAN },
	{ "new suspected memory leak",			NETGPU_SPLAT_LEAK },
	{ "unreferenced object",			NETGPU_SPLAT_LEAK },
	{ "possible circular locking dependency",	NETGPU_SPLAT_LOCKDEP },
	{ "possible recursive locking",			NETGPU_SPLAT_LOCKDEP },
	{ "inconsistent lock state",			NETGPU_SPLAT_LOCKDEP },
	{ "possible irq lock inversion",		NETGPU_SPLAT_LOCKDEP },
	{ "suspicious RCU usage",			NETGPU_SPLAT_LOCKDEP },
	{ "held lock freed",				NETGPU_SPLAT_LOCKDEP },
	{ "bad unlock balance",				NETGPU_SPLAT_LOCKDEP },
	{ "DEBUG_LOCKS_WARN_ON",			NETGPU_SPLAT_LOCKDEP },
	{ "sleeping function called from invalid context", NETGPU_SPLAT_SLEEP },
	{ "scheduling while atomic",			NETGPU_SPLAT_SLEEP },
	{ "WARNING:",					NETGPU_SPLAT_WARNING },
	{ "BUG:",					NETGPU_SPLAT_BUG },
	{ "Oops",					NETGPU_SPLAT_BUG },
	{ "general protection fault",			NETGPU_SPLAT_BUG },
	{ "Kernel panic",				NETGPU_SPLAT_BUG },
	{ "kernel BUG",					NETGPU_SPLAT_BUG },
	{ "UBSAN:",					NETGPU_SPLAT_BUG },
	{ "ODEBUG:",					NETGPU_SPLAT_BUG },
	{ "list_add corruption",			NETGPU_SPLAT_BUG },
	{ "list_del corruption",			NETGPU_SPLAT_BUG },
	{ "refcount_t:",				NETGPU_SPLAT_BUG },
	{ "self-detected stall",			NETGPU_SPLAT_BUG },
	{ "detected stalls on CPU",			NETGPU_SPLAT_BUG },
	{ "blocked for more than",			NETGPU_SPLAT_BUG },
};

/*
 * What the probe saw since the last reset.  The probe runs in any
 * context, NMI included, so it takes no lock: a count per kind, and the
 * first line of each kind, claimed with a cmpxchg and published with a
 * release once copied.  The case's hooks read and reset it.
 */
static struct {
	atomic_t count[NETGPU_SPLAT_NR];
	atomic_t claimed[NETGPU_SPLAT_NR];
	int ready[NETGPU_SPLAT_NR];
	char line[NETGPU_SPLAT_NR][SPLAT_LINE_LEN];
	/* Set by the case's threads, read by its .exit. */
	unsigned long expected;
	bool want_kmemleak;
	unsigned long since;		/* jiffies at the reset */
} splat;

static DEFINE_MUTEX(splat_mutex);	/* the probe's registration */
static unsigned int splat_users;
static bool splat_registered;

static void netgpu_splat_probe(void *ignore, const char *buf, size_t len)
{
	enum netgpu_splat kind = NETGPU_SPLAT_NR;
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(splat_patterns); i++) {
		if (strnstr(buf, splat_patterns[i].needle, len)) {
			kind = splat_patterns[i].kind;
			break;
		}
	}
	if (kind == NETGPU_SPLAT_NR)
		return;
	atomic_inc(&splat.count[kind]);
	if (atomic_cmpxchg(&splat.claimed[kind], 0, 1))
		return;
	/* @buf is not NUL-terminated. */
	n = min(len, sizeof(splat.line[kind]) - 1);
	memcpy(splat.line[kind], buf, n);
	splat.line[kind][n] = '\0';
	/* Pairs with splat_verdict(): the line is copied before ready. */
	smp_store_release(&splat.ready[kind], 1);
}

static void splat_reset(void)
{
	int k;

	for (k = 0; k < NETGPU_SPLAT_NR; k++) {
		WRITE_ONCE(splat.ready[k], 0);
		atomic_set(&splat.count[k], 0);
		/* After ready[]: the next claim's line is published anew. */
		atomic_set_release(&splat.claimed[k], 0);
	}
	WRITE_ONCE(splat.expected, 0);
	WRITE_ONCE(splat.want_kmemleak, false);
	WRITE_ONCE(splat.since, jiffies);
}

/**
 * netgpu_splat_suite_init() - .suite_init of every netgpu suite
 * @suite: the suite
 *
 * Registers the console probe (the first suite to run does; later ones
 * share it) and forgets what was logged before.  Without the console
 * tracepoint (CONFIG_TRACEPOINTS=n) the suite runs unprobed: splats are
 * left to the host-side console scan and netgpu_splat_probing() is
 * false.
 *
 * Context: Process context, may sleep.
 * Return: 0.  The suite runs, probed or not.
 */
int netgpu_splat_suite_init(struct kunit_suite *suite)
{
	int err;

	mutex_lock(&splat_mutex);
	if (!splat_users++) {
		err = register_trace_console(netgpu_splat_probe, NULL);
		splat_registered = !err;
		if (err)
			pr_info("netgpu splat: no console tracepoint (%d): %s runs with splats not attributed to cases\n",
				err, suite->name);
	}
	mutex_unlock(&splat_mutex);
	splat_reset();
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_splat_suite_init);

/**
 * netgpu_splat_suite_exit() - .suite_exit of every netgpu suite
 * @suite: the suite
 *
 * Unregisters the console probe when the last suite that uses it ends,
 * and waits until no CPU runs it any more.
 *
 * Context: Process context, may sleep.
 */
void netgpu_splat_suite_exit(struct kunit_suite *suite)
{
	mutex_lock(&splat_mutex);
	if (!WARN_ON_ONCE(!splat_users) && !--splat_users && splat_registered) {
		unregister_trace_console(netgpu_splat_probe, NULL);
		tracepoint_synchronize_unregister();
		splat_registered = false;
	}
	mutex_unlock(&splat_mutex);
}
EXPORT_SYMBOL_GPL(netgpu_splat_suite_exit);

/**
 * netgpu_splat_probing() - whether the console probe is registered
 *
 * Context: Any context.
 * Return: true while a netgpu suite runs with the console probe.
 */
bool netgpu_splat_probing(void)
{
	return READ_ONCE(splat_registered);
}
EXPORT_SYMBOL_GPL(netgpu_splat_probing);

/**
 * netgpu_splat_seen() - how many lines of a kind of splat the probe saw
 * @kind: the kind
 *
 * Counts since the end of the previous case (or the start of the suite).
 *
 * Context: Any context.
 * Return: the number of header lines of @kind logged.
 */
unsigned int netgpu_splat_seen(enum netgpu_splat kind)
{
	if (WARN_ON_ONCE(kind >= NETGPU_SPLAT_NR))
		return 0;
	return atomic_read(&splat.count[kind]);
}
EXPORT_SYMBOL_GPL(netgpu_splat_seen);

/**
 * netgpu_splat_expect() - declare that the current case splats on purpose
 * @test: the case
 * @kind: the splat it provokes
 *
 * The case's .exit then fails it unless the probe saw a splat of @kind,
 * instead of failing it because the probe did.  Splats of other kinds
 * still fail it.
 *
 * Context: Process context, the case's thread.
 */
void netgpu_splat_expect(struct kunit *test, enum netgpu_splat kind)
{
	KUNIT_ASSERT_LT(test, kind, NETGPU_SPLAT_NR);
	set_bit(kind, &splat.expected);
}
EXPORT_SYMBOL_GPL(netgpu_splat_expect);

/**
 * netgpu_splat_want_kmemleak() - ask for a kmemleak scan after the case
 * @test: the case
 *
 * netgpu_splat_exit() then runs netgpu_splat_kmemleak_scan() once the
 * case's resources are released, unless the case was skipped, so that
 * an object the case leaked fails it.  netgpu_kunit_need_fail_nth()
 * calls it: every fault sweep is leak-checked, by its own scan or, in a
 * boot with netgpu_splat.case_scan=0, by the boot's scan at its end.
 *
 * Context: Process context, the case's thread.
 */
void netgpu_splat_want_kmemleak(struct kunit *test)
{
	WRITE_ONCE(splat.want_kmemleak, true);
}
EXPORT_SYMBOL_GPL(netgpu_splat_want_kmemleak);

static int splat_kmemleak_cmd(struct file *f, char __user *ubuf,
			      const char *cmd)
{
	size_t len = strlen(cmd);
	loff_t pos = 0;
	ssize_t ret;

	if (copy_to_user(ubuf, cmd, len))
		return -EFAULT;
	ret = f->f_op->write(f, ubuf, len, &pos);
	return ret < 0 ? ret : 0;
}

/*
 * Print the objects of kmemleak's report allocated since the last reset
 * (its report lists every leak not cleared since boot; "jiffies" is the
 * allocation time).  Return how many there are, or -ENOMEM.
 */
static int splat_kmemleak_report(struct kunit *test, struct file *f,
				 char __user *ubuf)
{
	unsigned int before = 0, mine = 0, lines = 0;
	char *buf, *cur, *line;
	bool print = false;
	size_t got = 0;
	loff_t pos = 0;
	ssize_t n;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (got < PAGE_SIZE - 1) {
		n = f->f_op->read(f, ubuf, PAGE_SIZE - 1 - got, &pos);
		if (n <= 0 || copy_from_user(buf + got, ubuf, n))
			break;
		got += n;
	}
	buf[got] = '\0';

	cur = buf;
	while ((line = strsep(&cur, "\n"))) {
		unsigned long when;
		char *j;

		if (str_has_prefix(line, "unreferenced object")) {
			/* The next line says when; decide there. */
			print = false;
			j = cur ? strstr(cur, "jiffies ") : NULL;
			if (j && sscanf(j, "jiffies %lu", &when) == 1 &&
			    time_after_eq(when, READ_ONCE(splat.since)))
				print = true;
			if (print)
				mine++;
			else
				before++;
		}
		if (print && *line && lines++ < 40)
			kunit_err(test, "%s", line);
	}
	if (before)
		kunit_info(test, "kmemleak also reports %u objects allocated before this case\n",
			   before);
	kfree(buf);
	return mine;
}

/**
 * netgpu_splat_kmemleak_scan() - have kmemleak scan for leaks now
 * @test: the case (owns the user page the command is written from)
 *
 * Waits until objects allocated up to now are old enough for kmemleak to
 * report (5 s), then scans twice (a new object is reported only by a
 * scan after the one that first saw it).  A leak found shows as
 * kmemleak's "N new suspected memory leaks" line, which the console
 * probe counts as %NETGPU_SPLAT_LEAK; the objects allocated since the
 * previous case are then printed from kmemleak's report.  When every new
 * suspect was allocated before that, the count is taken back: they are
 * an earlier case's, left to the host-side console scan.  Objects still
 * referenced from anywhere kmemleak scans (a stale copy of a pointer
 * included) are not reported.
 *
 * Context: Process context, may sleep (seconds).  Run it after the
 * case's resources are released.
 * Return: 0 if the scans ran, -EOPNOTSUPP without CONFIG_DEBUG_KMEMLEAK,
 * else the error that prevented them (kmemleak off: -EPERM).
 */
int netgpu_splat_kmemleak_scan(struct kunit *test)
{
	struct file_system_type *fs;
	struct vfsmount *mnt;
	unsigned long ubuf;
	unsigned int seen;
	struct file *f;
	int err, i;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		return -EOPNOTSUPP;
	fs = get_fs_type("debugfs");
	if (!fs)
		return -ENODEV;
	mnt = kern_mount(fs);
	module_put(fs->owner);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	f = file_open_root_mnt(mnt, "kmemleak", O_RDWR, 0);
	if (IS_ERR(f)) {
		err = PTR_ERR(f);
		goto out_mnt;
	}
	err = -ENOMEM;
	ubuf = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (!ubuf || IS_ERR_VALUE(ubuf) || !f->f_op->write || !f->f_op->read)
		goto out_file;

	msleep(SPLAT_KMEMLEAK_MIN_AGE_MS);
	seen = netgpu_splat_seen(NETGPU_SPLAT_LEAK);
	for (i = 0; i < 2; i++) {
		err = splat_kmemleak_cmd(f, (char __user *)ubuf, "scan");
		if (err)
			goto out_file;
	}
	/*
	 * New leaks all allocated before this case are an earlier case's
	 * (one that did not ask for a scan): leave them to the host-side
	 * console scan rather than fail this case for them.
	 */
	if (netgpu_splat_seen(NETGPU_SPLAT_LEAK) > seen &&
	    !splat_kmemleak_report(test, f, (char __user *)ubuf)) {
		kunit_info(test, "kmemleak's new suspects predate this case: not counted\n");
		atomic_set(&splat.count[NETGPU_SPLAT_LEAK], seen);
	}
out_file:
	fput(f);
out_mnt:
	kern_unmount(mnt);
	return err;
}
EXPORT_SYMBOL_GPL(netgpu_splat_kmemleak_scan);

static void splat_verdict(struct kunit *test)
{
	unsigned long expected = READ_ONCE(splat.expected);
	unsigned int count[NETGPU_SPLAT_NR];
	int k;

	/* Before the verdict's own lines, which quote the splats. */
	for (k = 0; k < NETGPU_SPLAT_NR; k++)
		count[k] = atomic_read(&splat.count[k]);
	for (k = 0; k < NETGPU_SPLAT_NR; k++) {
		unsigned int n = count[k];
		/* Pairs with the probe's release: ready, then the line. */
		const char *line = smp_load_acquire(&splat.ready[k]) ?
				   splat.line[k] : "(line not recorded)";

		if (test_bit(k, &expected)) {
			if (!n)
				KUNIT_FAIL(test, "expected a %s splat, the console probe saw none",
					   splat_names[k]);
			else
				kunit_info(test, "the console probe saw the expected %s splat (%u lines), first: %s\n",
					   splat_names[k], n, line);
		} else if (n) {
			KUNIT_FAIL(test, "%s splat during the case (%u lines), first: %s",
				   splat_names[k], n, line);
		}
	}
}

static void splat_exit(struct kunit *test, bool kmemleak)
{
	int err;

	/*
	 * Release the case's resources now rather than after .exit, so that
	 * what their release prints (and leaks) is the case's.  KUnit's own
	 * kunit_cleanup() after .exit then finds nothing left but what the
	 * scan below allocates.
	 */
	kunit_cleanup(test);
	current->kunit_test = test;

	if (!case_scan && !test_bit(NETGPU_SPLAT_LEAK, &splat.expected))
		kmemleak = false;
	else if (READ_ONCE(splat.want_kmemleak))
		kmemleak = true;
	if (kmemleak && test->status != KUNIT_SKIPPED) {
		err = netgpu_splat_kmemleak_scan(test);
		if (err == -EOPNOTSUPP)
			kunit_info(test, "no kmemleak (CONFIG_DEBUG_KMEMLEAK): leaks not checked\n");
		else if (err)
			kunit_info(test, "kmemleak scan failed (%d): leaks not checked\n", err);
		if (err && test_bit(NETGPU_SPLAT_LEAK, &splat.expected))
			KUNIT_FAIL(test, "expected a leak, kmemleak could not scan (%d)", err);
	}
	if (netgpu_splat_probing())
		splat_verdict(test);
	splat_reset();
}

/**
 * netgpu_splat_exit() - .exit of every netgpu suite
 * @test: the case that just ran
 *
 * Releases the case's resources (kunit_cleanup()), runs a kmemleak scan
 * if the case asked for one, then fails the case for every kind of
 * splat the console probe saw since the previous case, and for every
 * kind it expected but did not see.
 *
 * Context: Process context, KUnit's cleanup thread of the case.
 */
void netgpu_splat_exit(struct kunit *test)
{
	splat_exit(test, false);
}
EXPORT_SYMBOL_GPL(netgpu_splat_exit);

/**
 * netgpu_splat_exit_kmemleak() - .exit of suites whose every case is leak-checked
 * @test: the case that just ran
 *
 * As netgpu_splat_exit(), with a kmemleak scan after every case that was
 * not skipped (about 5 s each: for suites of few, long cases), unless
 * the boot passed netgpu_splat.case_scan=0 and scans at its end.
 *
 * Context: Process context, KUnit's cleanup thread of the case.
 */
void netgpu_splat_exit_kmemleak(struct kunit *test)
{
	splat_exit(test, true);
}
EXPORT_SYMBOL_GPL(netgpu_splat_exit_kmemleak);

MODULE_DESCRIPTION("netgpu KUnit: splats and leaks attributed to cases");
MODULE_LICENSE("GPL");
