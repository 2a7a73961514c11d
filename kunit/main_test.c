// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the library's bring-up: its units come up in order, and
 * a unit that fails takes down the ones before it, so that a module load
 * that fails leaves nothing registered.
 *
 * The cases take the library down and up again, as unloading and loading
 * the module would: nothing of it may be in use.  The suite is linked
 * first (lib/netgpu/Makefile), so that it runs before any other suite
 * has made contexts, regions or deferred work.
 */

#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/module.h>

#include "ctx.h"
#include "fail_nth.h"
#include "mem_priv.h"
#include "splat.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct main_state {
	struct kunit *test;
	bool down;
};

/* Whatever happens to the case, the library is up again after it. */
static void main_units_up(void *arg)
{
	struct main_state *st = arg;

	if (st->down)
		KUNIT_EXPECT_EQ(st->test, netgpu_units_init(), 0);
}

static bool *main_take_down(struct kunit *test)
{
	struct main_state *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, st);
	st->test = test;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, main_units_up,
							st), 0);
	/* Deferred region work of the boot so far, then the units. */
	netgpu_mem_flush();
	netgpu_units_exit();
	st->down = true;
	return &st->down;
}

/*
 * Down and up again: the exit unregistered everything (a notifier or a
 * misc device left registered makes the next init fail with -EEXIST or
 * -EBUSY and warn), twice in a row.
 */
static void netgpu_main_test_exit_init(struct kunit *test)
{
	bool *down = main_take_down(test);
	int i;

	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, netgpu_units_init(), 0);
		*down = false;
		netgpu_units_exit();
		*down = true;
	}
}

/* @name at the debugfs root is there (a reference taken and dropped). */
static bool main_debugfs_has(const char *name)
{
	struct dentry *d = debugfs_lookup(name, NULL);

	if (IS_ERR_OR_NULL(d))
		return false;
	dput(d);
	return true;
}

/*
 * The exit removes what the init made at the debugfs root: netgpu/ (the
 * accounting and stuck files) and, with the fault points and
 * CONFIG_FAULT_INJECTION_DEBUG_FS, each point's directory.  One left
 * behind makes the next init's directory fail with -EEXIST (only a
 * pr_err), its files live on over freed data after a module unload
 * (review 2, tests.md section 5, mutant 12).
 */
static void netgpu_main_test_exit_removes_debugfs(struct kunit *test)
{
	static const char *const dirs[] = {
		"netgpu", "fail_netgpu_refill", "fail_netgpu_dma_map",
		"fail_netgpu_rx_ring", "fail_netgpu_tx",
	};
	/* fault.c makes the points' directories only with both. */
	bool points = IS_ENABLED(CONFIG_NETGPU_FAULT_INJECTION) &&
		      IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS);
	int n = points ? ARRAY_SIZE(dirs) : 1;
	bool *down;
	int i;

	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_DEBUG_FS));
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_TRUE_MSG(test, main_debugfs_has(dirs[i]),
				      "%s before the exit", dirs[i]);
	down = main_take_down(test);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_FALSE_MSG(test, main_debugfs_has(dirs[i]),
				       "%s after the exit", dirs[i]);
	KUNIT_ASSERT_EQ(test, netgpu_units_init(), 0);
	*down = false;
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE_MSG(test, main_debugfs_has(dirs[i]),
				      "%s after the init", dirs[i]);
}

/*
 * Every allocation of the bring-up failed in turn: the init fails with
 * -ENOMEM and takes down the units that came up before the failing one,
 * which the next attempt proves (it registers the same notifier and
 * devices again), and kmemleak checks (the workqueue of the memory unit).
 */
static void netgpu_main_test_init_fail_nth(struct kunit *test)
{
	bool *down;
	unsigned int left;
	int n, err, faults = 0;

	netgpu_kunit_need_fail_nth(test);
	down = main_take_down(test);
	/*
	 * The bound is not the count: the sweep ends once an init does not
	 * reach its n-th allocation (more than 255 since the fourth fault
	 * point's debugfs files).
	 */
	for (n = 1; n < 1024; n++) {
		netgpu_fail_nth_set(n);
		err = netgpu_units_init();
		left = netgpu_fail_nth_left();
		netgpu_fail_nth_set(0);
		if (err) {
			faults++;
			KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "fail_nth=%d", n);
			continue;
		}
		*down = false;
		/* Up without reaching the n-th allocation: all swept. */
		if (left)
			break;
		/* A failure the bring-up tolerates (a uevent, say). */
		netgpu_units_exit();
		*down = true;
	}
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_NE(test, left, 0);
	KUNIT_EXPECT_GT(test, faults, 0);
}

static struct kunit_case main_test_cases[] = {
	KUNIT_CASE(netgpu_main_test_exit_init),
	KUNIT_CASE(netgpu_main_test_exit_removes_debugfs),
	KUNIT_CASE_SLOW(netgpu_main_test_init_fail_nth),
	{}
};

static struct kunit_suite main_test_suite = {
	.name = "netgpu_main",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.exit = netgpu_splat_exit,
	.test_cases = main_test_cases,
};

kunit_test_suite(main_test_suite);

MODULE_DESCRIPTION("KUnit tests for the netgpu library's bring-up");
MODULE_LICENSE("GPL");
