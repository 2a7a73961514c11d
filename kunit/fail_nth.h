/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For netgpu's KUnit cases that fail allocations with current->fail_nth.
 */
#ifndef _NETGPU_FAIL_NTH_H
#define _NETGPU_FAIL_NTH_H

#include <kunit/test.h>
#include <linux/fault-inject.h>
#include <linux/gfp.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "mem.h"
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

/*
 * Arming a netgpu fault point writes the fields of its struct fault_attr,
 * which exist only with CONFIG_FAULT_INJECTION (on which
 * CONFIG_NETGPU_FAULT_INJECTION depends): without it, the benchmark
 * kernel's config among others, the cases that arm a point skip.
 */
#if IS_ENABLED(CONFIG_NETGPU_FAULT_INJECTION)
/**
 * struct netgpu_fault_saved - a fault point's settings before a case armed it
 * @attr: the point's attribute
 * @probability: its probability
 * @interval: its interval
 * @times: its times
 * @space: its space
 * @verbose: its verbosity
 * @task_filter: its task filter
 */
struct netgpu_fault_saved {
	struct fault_attr	*attr;
	unsigned long		probability;
	unsigned long		interval;
	int			times;
	int			space;
	unsigned long		verbose;
	bool			task_filter;
};

static inline void netgpu_kunit_fault_restore(void *arg)
{
	struct netgpu_fault_saved *s = arg;

	/* Disarmed first: netgpu_should_fail() reads the probability. */
	WRITE_ONCE(s->attr->probability, s->probability);
	s->attr->interval = s->interval;
	atomic_set(&s->attr->times, s->times);
	atomic_set(&s->attr->space, s->space);
	s->attr->verbose = s->verbose;
	s->attr->task_filter = s->task_filter;
}

#endif /* CONFIG_NETGPU_FAULT_INJECTION */

/**
 * netgpu_kunit_fault_arm() - make a netgpu fault point fail once
 * @test: the case; the point's settings are restored when it ends
 * @point: the point (&enum netgpu_fault_point)
 *
 * Probability 100, interval 1, times 1, no task filter, quiet: the next
 * pass through the point fails, the later ones do not (times is spent).
 * Skips the case without CONFIG_NETGPU_FAULT_INJECTION.
 *
 * Context: Process context, the case's thread.
 */
static inline void netgpu_kunit_fault_arm(struct kunit *test,
					  enum netgpu_fault_point point)
{
#if IS_ENABLED(CONFIG_NETGPU_FAULT_INJECTION)
	struct fault_attr *attr = netgpu_fault_attr(point);
	struct netgpu_fault_saved *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->attr = attr;
	s->probability = attr->probability;
	s->interval = attr->interval;
	s->times = atomic_read(&attr->times);
	s->space = atomic_read(&attr->space);
	s->verbose = attr->verbose;
	s->task_filter = attr->task_filter;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							netgpu_kunit_fault_restore,
							s), 0);
	attr->verbose = 0;
	attr->task_filter = false;
	attr->interval = 1;
	atomic_set(&attr->space, 0);
	atomic_set(&attr->times, 1);
	WRITE_ONCE(attr->probability, 100);
#else
	kunit_skip(test, "Test requires: CONFIG_NETGPU_FAULT_INJECTION");
#endif
}

#endif /* _NETGPU_FAIL_NTH_H */
