// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the fault-injection boot options of the netgpu series
 * (patches/0001): with failslab.ignore_gfp_wait=N and
 * fail_page_alloc.ignore_gfp_wait=N (and fail_page_alloc.min_order=0 for
 * order-0 pages) current->fail_nth reaches GFP_KERNEL allocations;
 * without them it does not.
 *
 * The expectation comes from the kernel command line itself, so the same
 * cases prove both settings: `make check` boots the test kernel once with
 * the options and once without, and a switch that does not work fails
 * one of the two boots.  Every netgpu suite's fault-injection sweeps rely
 * on the options being set.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "splat.h"

/* The value of @opt (including its '=') on the command line, or @def. */
static bool cmdline_bool(const char *opt, bool def)
{
	const char *p = strstr(saved_command_line, opt);
	char val[8] = {};
	bool res = def;

	if (!p)
		return def;
	p += strlen(opt);
	strscpy(val, p, min_t(size_t, sizeof(val), strcspn(p, " ") + 1));
	if (kstrtobool(val, &res))
		return def;
	return res;
}

static bool cmdline_has(const char *opt)
{
	return strstr(saved_command_line, opt);
}

/* ===== Test cases ===== */

static void netgpu_fault_test_slab_gfp_kernel(struct kunit *test)
{
	bool ignored = cmdline_bool("failslab.ignore_gfp_wait=", true);
	void *p;

	current->fail_nth = 1;
	p = kmalloc(64, GFP_KERNEL);
	current->fail_nth = 0;
	kfree(p);

	kunit_info(test, "failslab.ignore_gfp_wait=%c", ignored ? 'Y' : 'N');
	if (ignored)
		KUNIT_EXPECT_NOT_NULL(test, p);
	else
		KUNIT_EXPECT_NULL(test, p);
}

static void netgpu_fault_test_slab_gfp_atomic(struct kunit *test)
{
	void *p;

	/* Control: an allocation that cannot sleep is failed either way. */
	current->fail_nth = 1;
	p = kmalloc(64, GFP_ATOMIC | __GFP_NOWARN);
	current->fail_nth = 0;
	kfree(p);

	KUNIT_EXPECT_NULL(test, p);
}

static void netgpu_fault_test_page_gfp_kernel(struct kunit *test)
{
	bool ignored = cmdline_bool("fail_page_alloc.ignore_gfp_wait=", true);
	bool order0 = cmdline_has("fail_page_alloc.min_order=0");
	struct page *page;

	current->fail_nth = 1;
	page = alloc_page(GFP_KERNEL);
	current->fail_nth = 0;
	if (page)
		__free_page(page);

	kunit_info(test, "fail_page_alloc.ignore_gfp_wait=%c min_order=%d",
		   ignored ? 'Y' : 'N', order0 ? 0 : 1);
	if (ignored || !order0)
		KUNIT_EXPECT_NOT_NULL(test, page);
	else
		KUNIT_EXPECT_NULL(test, page);
}

static struct kunit_case fault_inject_test_cases[] = {
	KUNIT_CASE(netgpu_fault_test_slab_gfp_kernel),
	KUNIT_CASE(netgpu_fault_test_slab_gfp_atomic),
	KUNIT_CASE(netgpu_fault_test_page_gfp_kernel),
	{}
};

static struct kunit_suite fault_inject_test_suite = {
	.name = "netgpu_fault",
	.suite_init = netgpu_splat_suite_init,
	.suite_exit = netgpu_splat_suite_exit,
	.exit = netgpu_splat_exit,
	.test_cases = fault_inject_test_cases,
};

kunit_test_suite(fault_inject_test_suite);

MODULE_DESCRIPTION("KUnit tests for the fault-injection boot options");
MODULE_LICENSE("GPL");
