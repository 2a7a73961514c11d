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

#define NETGPU_FAIL_NTH_ARGS \
	"failslab.ignore_gfp_wait=N fail_page_alloc.ignore_gfp_wait=N fail_page_alloc.min_order=0"

/**
 * netgpu_kunit_need_fail_nth() - skip unless fail_nth fails what may sleep
 * @test: the case
 *
 * The fault-injection sweeps fail GFP_KERNEL slab and page allocations
 * through current->fail_nth.  failslab and fail_page_alloc ignore
 * allocations that may sleep unless the kernel is booted with
 * %NETGPU_FAIL_NTH_ARGS (and built with FAILSLAB and FAIL_PAGE_ALLOC):
 * without them a sweep would see every allocation succeed and prove
 * nothing.  Probe both allocators once and skip the case, naming the
 * boot options, when either cannot be failed.
 *
 * Context: Process context, the case's thread.
 */
static inline void netgpu_kunit_need_fail_nth(struct kunit *test)
{
	struct page *page;
	void *p;

	current->fail_nth = 1;
	p = kmalloc(8, GFP_KERNEL);
	current->fail_nth = 1;
	page = alloc_page(GFP_KERNEL);
	current->fail_nth = 0;
	kfree(p);
	if (page)
		__free_page(page);
	if (p || page)
		kunit_skip(test, "GFP_KERNEL allocations cannot be failed: boot with "
			   NETGPU_FAIL_NTH_ARGS);
}

#endif /* _NETGPU_FAIL_NTH_H */
