/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared hooks of netgpu's KUnit suites: splats attributed to the case
 * that was running, a kmemleak scan per case, and the skip macro.
 *
 * A console tracepoint probe (as mm/kfence/kfence_test.c) records every
 * kernel log line that heads a splat while a netgpu case runs, on any
 * CPU and from any context.  The suite's .exit hook, which KUnit runs
 * after every case, fails the case with the first such line.  A case
 * that provokes a splat on purpose declares it with
 * netgpu_splat_expect() and then fails unless the probe saw it.
 *
 * Every netgpu suite sets:
 *
 *	.suite_init = netgpu_splat_suite_init,
 *	.suite_exit = netgpu_splat_suite_exit,
 *	.exit = netgpu_splat_exit,
 */
#ifndef _NETGPU_SPLAT_H
#define _NETGPU_SPLAT_H

#include <kunit/test.h>

/**
 * NETGPU_TEST_REQUIRES() - skip the case unless a condition holds
 * @test: the case
 * @cond: the condition, printed as written: "Test requires: <cond>"
 *
 * As KFENCE_TEST_REQUIRES() of mm/kfence/kfence_test.c.
 */
#define NETGPU_TEST_REQUIRES(test, cond) do {				\
	if (!(cond))							\
		kunit_skip((test), "Test requires: " #cond);		\
} while (0)

/**
 * enum netgpu_splat - the kinds of splat the console probe recognises
 * @NETGPU_SPLAT_KASAN: "BUG: KASAN: ..."
 * @NETGPU_SPLAT_LOCKDEP: lockdep and RCU-lockdep reports ("possible
 *	circular locking dependency", "inconsistent lock state",
 *	"suspicious RCU usage", ...)
 * @NETGPU_SPLAT_SLEEP: "sleeping function called from invalid context",
 *	"scheduling while atomic"
 * @NETGPU_SPLAT_LEAK: kmemleak's "N new suspected memory leaks"
 * @NETGPU_SPLAT_WARNING: any other "WARNING:"
 * @NETGPU_SPLAT_BUG: any other "BUG:", Oops, UBSAN, debugobjects, list
 *	corruption, refcount_t, stalls, hung tasks
 * @NETGPU_SPLAT_NR: the number of kinds
 */
enum netgpu_splat {
	NETGPU_SPLAT_KASAN,
	NETGPU_SPLAT_LOCKDEP,
	NETGPU_SPLAT_SLEEP,
	NETGPU_SPLAT_LEAK,
	NETGPU_SPLAT_WARNING,
	NETGPU_SPLAT_BUG,
	NETGPU_SPLAT_NR
};

int netgpu_splat_suite_init(struct kunit_suite *suite);
void netgpu_splat_suite_exit(struct kunit_suite *suite);
void netgpu_splat_exit(struct kunit *test);
void netgpu_splat_exit_kmemleak(struct kunit *test);
void netgpu_splat_expect(struct kunit *test, enum netgpu_splat kind);
void netgpu_splat_want_kmemleak(struct kunit *test);
unsigned int netgpu_splat_seen(enum netgpu_splat kind);
bool netgpu_splat_probing(void);
int netgpu_splat_kmemleak_scan(struct kunit *test);

#endif /* _NETGPU_SPLAT_H */
