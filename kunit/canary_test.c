// SPDX-License-Identifier: GPL-2.0-only
/*
 * The netgpu canary: cases that KUnit reports as passed but that leave a
 * splat in the kernel log.  `make check` boots the test kernel once with
 * netgpu_canary.arm=1 and this suite alone, asks kmemleak for a scan
 * after it, and fails unless its console scan catches every splat below.
 * Unarmed (the default run), every case is skipped.
 */

#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "netgpu_canary."

static bool arm;
module_param(arm, bool, 0444);
MODULE_PARM_DESC(arm, "Let the canary cases splat (default: skip them)");

static int canary_init(struct kunit *test)
{
	if (!arm)
		kunit_skip(test, "boot with netgpu_canary.arm=1 to arm");
	return 0;
}

/* ===== Test cases ===== */

static void netgpu_canary_test_warning(struct kunit *test)
{
	WARN(1, "netgpu canary: deliberate warning");
	KUNIT_SUCCEED(test);
}

static void netgpu_canary_test_sleep_in_atomic(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);

	spin_lock(&lock);
	might_sleep();
	spin_unlock(&lock);
	KUNIT_SUCCEED(test);
}

/* Only a kmemleak scan finds this one: the armed boot asks for one. */
static void netgpu_canary_test_leak(struct kunit *test)
{
	void *p = kmalloc(64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	/* Make the compiler keep the allocation it could see is unused. */
	OPTIMIZER_HIDE_VAR(p);
	KUNIT_SUCCEED(test);
}

/* Last: lockdep turns itself off after its first report. */
static void netgpu_canary_test_lock_inversion(struct kunit *test)
{
	static DEFINE_MUTEX(a);
	static DEFINE_MUTEX(b);

	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);

	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
	KUNIT_SUCCEED(test);
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
	.init = canary_init,
	.test_cases = canary_test_cases,
};

kunit_test_suite(canary_test_suite);

MODULE_DESCRIPTION("netgpu canary: splats that KUnit does not see");
MODULE_LICENSE("GPL");
