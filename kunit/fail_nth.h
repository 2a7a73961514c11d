/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For netgpu's KUnit cases that fail allocations with current->fail_nth.
 */
#ifndef _NETGPU_FAIL_NTH_H
#define _NETGPU_FAIL_NTH_H

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "splat.h"

#define NETGPU_FAIL_NTH_ARGS \
	"failslab.ignore_gfp_wait=N fail_page_alloc.ignore_gfp_wait=N fail_page_alloc.min_order=0"

/**
 * netgpu_fail_nth_set() - fail the n-th allocation the current task makes
 * @n: which one (1: the next), 0 to disarm
 *
 * current->fail_nth exists only with CONFIG_FAULT_INJECTION; without it
 * this does nothing (and netgpu_kunit_need_fail_nth() skips the sweep).
 *
 * Context: Process context, the case's thread.
 */
static inline void netgpu_fail_nth_set(unsigned int n)
{
#ifdef CONFIG_FAULT_INJECTION
	current->fail_nth = n;
#endif
}

/**
 * netgpu_fail_nth_left() - what is left of the current task's fail_nth
 *
 * Context: Process context, the case's thread.
 * Return: 0 if the armed allocation failed (or none was armed), else
 * how many allocations were still to come before it.
 */
static inline unsigned int netgpu_fail_nth_left(void)
{
#ifdef CONFIG_FAULT_INJECTION
	return READ_ONCE(current->fail_nth);
#else
	return 0;
#endif
}

/**
 * netgpu_kunit_need_fail_nth() - skip unless fail_nth fails what may sleep
 * @test: the case
 *
 * The fault-injection sweeps fail GFP_KERNEL slab and page allocations
 * through current->fail_nth.  failslab and fail_page_alloc ignore
 * allocations that may sleep unless the kernel is booted with
 * %NETGPU_FAIL_NTH_ARGS (and built with FAILSLAB and FAIL_PAGE_ALLOC):
 * without them a sweep would see every allocation succeed and prove
 * nothing.  Skip the case, naming what is missing, without
 * CONFIG_FAULT_INJECTION, or when a probe of both allocators shows that
 * either cannot be failed.  A sweep that runs is leak-checked: the
 * suite's .exit (netgpu_splat_exit()) has kmemleak scan after it.
 *
 * Context: Process context, the case's thread.
 */
static inline void netgpu_kunit_need_fail_nth(struct kunit *test)
{
	struct page *page;
	void *p;

	NETGPU_TEST_REQUIRES(test, IS_ENABLED(CONFIG_FAULT_INJECTION));
	netgpu_fail_nth_set(1);
	p = kmalloc(8, GFP_KERNEL);
	netgpu_fail_nth_set(1);
	page = alloc_page(GFP_KERNEL);
	netgpu_fail_nth_set(0);
	kfree(p);
	if (page)
		__free_page(page);
	if (p || page)
		kunit_skip(test, "GFP_KERNEL allocations cannot be failed: boot with "
			   NETGPU_FAIL_NTH_ARGS);
	netgpu_splat_want_kmemleak(test);
}

#endif /* _NETGPU_FAIL_NTH_H */
