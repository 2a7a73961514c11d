// SPDX-License-Identifier: GPL-2.0-only
/*
 * The netgpu canary: cases that splat on purpose, each of a kind the
 * netgpu suites' console probe (splat.c) must catch: a WARNING, a
 * sleep-in-atomic report, a leak kmemleak reports and a lockdep report.
 * Each case declares its splat (netgpu_splat_expect()) and passes only
 * if the probe saw it: the armed canary proves that a splat fails a
 * netgpu case.  Booted with netgpu_canary.arm=2 instead, the cases leave
 * their splats undeclared, as any other case would, and the probe must
 * fail each one.  `make check` boots the test kernel with this suite
 * alone both ways, and also requires its host-side console scan to
 * catch every splat.  Unarmed (the default run), every case is skipped.
 */

#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/debug_locks.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "splat.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "netgpu_canary."

/*
 * 0: skip every case.  1: each case declares its splat and passes only if
 * the probe saw it.  2: the same splats, undeclared, as any other case's
 * would be: the probe must fail every case.
 */
static unsigned int arm;
module_param(arm, uint, 0444);
MODULE_PARM_DESC(arm, "1: splat and expect the probe to see it, 2: splat undeclared (default 0: skip)");

static void canary_expect(struct kunit *test, enum netgpu_splat kind)
{
	if (arm == 1)
		netgpu_splat_expect(test, kind);
}

static int canary_init(struct kunit *test)
{
	if (!arm)
		kunit_skip(test, "boot with netgpu_canary.arm=1 to arm");
	NETGPU_TEST_REQUIRES(test, netgpu_splat_probing());
	return 0;
}

/* ===== Test cases ===== */

/* A WARN() fails the case that runs it. */
static void netgpu_canary_test_warning(struct kunit *test)
{
	canary_expect(test, NETGPU_SPLAT_WARNING);
	WARN(1, "netgpu canary: deliberate warning");
	/* The probe runs in printk(), before WARN() returns. */
	KUNIT_EXPECT_GT(test, netgpu_splat_seen(NETGPU_SPLAT_WARNING), 0u);
}

/* A might_sleep() under a spinlock fails the case that runs it. */
static void netgpu_canary_test_sleep_in_atomic(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);

	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP));
	canary_expect(test, NETGPU_SPLAT_SLEEP);
	spin_lock(&lock);
	might_sleep();
	spin_unlock(&lock);
	KUNIT_EXPECT_GT(test, netgpu_splat_seen(NETGPU_SPLAT_SLEEP), 0u);
}

/*
 * Allocate and drop the only pointer, in a frame of its own that
 * canary_scrub() then overwrites: kmemleak scans the stacks of live
 * tasks, and a stale copy of the pointer would hide the leak.
 */
static noinline bool canary_leak(void)
{
	void *p = kmalloc(64, GFP_KERNEL);

	OPTIMIZER_HIDE_VAR(p);
	return p;
}

static noinline void canary_scrub(void)
{
	char frame[512];

	memset(frame, 0, sizeof(frame));
	OPTIMIZER_HIDE_VAR(frame[0]);
}

/*
 * A leaked allocation fails the case that leaks it: kmemleak scans after
 * the case (in its .exit, about 5 s later) and reports the object.
 */
static void netgpu_canary_test_leak(struct kunit *test)
{
	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_DEBUG_KMEMLEAK));
	canary_expect(test, NETGPU_SPLAT_LEAK);
	netgpu_splat_want_kmemleak(test);
	KUNIT_ASSERT_TRUE(test, canary_leak());
	canary_scrub();
}

/*
 * A lock inversion fails the case that takes the locks.  Last: lockdep
 * turns itself off after its first report.
 */
static void netgpu_canary_test_lock_inversion(struct kunit *test)
{
	static DEFINE_MUTEX(a);
	static DEFINE_MUTEX(b);

	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_PROVE_LOCKING));
	KUNIT_ASSERT_TRUE_MSG(test, debug_locks,
			      "lockdep is off: an earlier report turned it off");
	canary_expect(test, NETGPU_SPLAT_LOCKDEP);
	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);

	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
	KUNIT_EXPECT_GT(test, netgpu_splat_seen(NETGPU_SPLAT_LOCKDEP), 0u);
}

static struct kunit_case canary_test_cases[] = {
	KUNIT_CASE(netgpu_canary_test_warning),
	KUNIT_CASE(netgpu_canary_test_sleep_in_atomic),
	KUNIT_CASE(netgpu_canary_test_leak),
	KUNIT_CASE(netgpu_canary_test_lock_inversion),
	{}
};

static struct kunit_suite canary_test_suite = {
	.name = "netgpu_canary",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.init = canary_init,
	.exit = netgpu_splat_exit,
	.test_cases = canary_test_cases,
};

kunit_test_suite(canary_test_suite);

MODULE_DESCRIPTION("netgpu canary: splats the console probe must catch");
MODULE_LICENSE("GPL");
