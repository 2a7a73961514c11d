/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For netgpu's KUnit cases that check an operation freed every kmalloc it
 * made: probes on the kmem tracepoints record the allocations of the
 * case's own thread between netgpu_leak_open() and netgpu_leak_close()
 * and forget those freed again, whether or not the unit under test knows
 * it made them.  Page and kmem_cache allocations are not recorded
 * (vmalloc frees its vmap areas lazily), but vmalloc's own bookkeeping is
 * kmalloc'ed, so a leaked vmalloc area shows too.
 */
#ifndef _NETGPU_LEAK_H
#define _NETGPU_LEAK_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <trace/events/kmem.h>

#define NETGPU_LEAK_MAX	32

struct netgpu_leak {
	raw_spinlock_t		lock;
	struct task_struct	*task;
	bool			on;
	bool			overflow;
	u32			nr;		/* live entries in @ptr */
	u32			seen;		/* allocations recorded in all */
	const void		*ptr[NETGPU_LEAK_MAX];
	unsigned long		site[NETGPU_LEAK_MAX];
	size_t			size[NETGPU_LEAK_MAX];
	gfp_t			gfp[NETGPU_LEAK_MAX];
};

static inline void netgpu_leak_kmalloc(void *data, unsigned long call_site,
				       const void *ptr, size_t bytes_req,
				       size_t bytes_alloc, gfp_t gfp_flags,
				       int node)
{
	struct netgpu_leak *lk = data;
	unsigned long flags;
	u32 i;

	if (!ptr || current != lk->task || !in_task() || !READ_ONCE(lk->on))
		return;
	raw_spin_lock_irqsave(&lk->lock, flags);
	/* kmalloc() of more than a slab's worth reports the same object twice. */
	for (i = 0; i < lk->nr; i++)
		if (lk->ptr[i] == ptr)
			goto out;
	if (lk->nr < NETGPU_LEAK_MAX) {
		lk->ptr[lk->nr] = ptr;
		lk->site[lk->nr] = call_site;
		lk->size[lk->nr] = bytes_req;
		lk->gfp[lk->nr] = gfp_flags;
		WRITE_ONCE(lk->nr, lk->nr + 1);
	} else {
		lk->overflow = true;
	}
	lk->seen++;
out:
	raw_spin_unlock_irqrestore(&lk->lock, flags);
}

static inline void netgpu_leak_forget(struct netgpu_leak *lk, const void *ptr)
{
	unsigned long flags;
	u32 i;

	/* Every kfree() of the system comes here: nothing tracked, no lock. */
	if (!READ_ONCE(lk->nr))
		return;
	raw_spin_lock_irqsave(&lk->lock, flags);
	for (i = 0; i < lk->nr; i++) {
		if (lk->ptr[i] != ptr)
			continue;
		WRITE_ONCE(lk->nr, lk->nr - 1);
		lk->ptr[i] = lk->ptr[lk->nr];
		lk->site[i] = lk->site[lk->nr];
		lk->size[i] = lk->size[lk->nr];
		lk->gfp[i] = lk->gfp[lk->nr];
		break;
	}
	raw_spin_unlock_irqrestore(&lk->lock, flags);
}

static inline void netgpu_leak_kfree(void *data, unsigned long call_site,
				     const void *ptr)
{
	netgpu_leak_forget(data, ptr);
}

static inline void netgpu_leak_kmem_cache_free(void *data,
					       unsigned long call_site,
					       const void *ptr,
					       const struct kmem_cache *s)
{
	netgpu_leak_forget(data, ptr);
}

static inline void netgpu_leak_unregister(struct netgpu_leak *lk, int up_to)
{
	if (up_to > 2)
		unregister_trace_kmem_cache_free(netgpu_leak_kmem_cache_free, lk);
	if (up_to > 1)
		unregister_trace_kfree(netgpu_leak_kfree, lk);
	if (up_to > 0)
		unregister_trace_kmalloc(netgpu_leak_kmalloc, lk);
	/* No probe runs on @lk once this returns. */
	tracepoint_synchronize_unregister();
}

static inline void netgpu_leak_stop(void *arg)
{
	netgpu_leak_unregister(arg, 3);
}

/* Probes on the kmem tracepoints for the rest of the case. */
static inline struct netgpu_leak *netgpu_leak_start(struct kunit *test)
{
	struct netgpu_leak *lk;
	int ret, up = 0;

	lk = kunit_kzalloc(test, sizeof(*lk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lk);
	raw_spin_lock_init(&lk->lock);
	lk->task = current;

	ret = register_trace_kmalloc(netgpu_leak_kmalloc, lk);
	if (ret)
		goto err_skip;
	up = 1;
	ret = register_trace_kfree(netgpu_leak_kfree, lk);
	if (ret)
		goto err_skip;
	up = 2;
	ret = register_trace_kmem_cache_free(netgpu_leak_kmem_cache_free, lk);
	if (ret)
		goto err_skip;

	ret = kunit_add_action_or_reset(test, netgpu_leak_stop, lk);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return lk;

err_skip:
	netgpu_leak_unregister(lk, up);
	kunit_skip(test, "Test requires: CONFIG_TRACEPOINTS (kmem tracepoints: %d)",
		   ret);
	return NULL;
}

static inline void netgpu_leak_open(struct netgpu_leak *lk)
{
	WRITE_ONCE(lk->on, true);
}

/*
 * Close the window and expect nothing it allocated to be live; @what
 * names the window in the failure.  Returns the number of leaks.
 */
static inline u32 netgpu_leak_close(struct kunit *test, struct netgpu_leak *lk,
				    const char *what, unsigned int nth)
{
	unsigned long flags;
	u32 i, nr;

	WRITE_ONCE(lk->on, false);
	raw_spin_lock_irqsave(&lk->lock, flags);
	nr = lk->nr;
	raw_spin_unlock_irqrestore(&lk->lock, flags);

	KUNIT_EXPECT_FALSE_MSG(test, lk->overflow, "%s: over %u allocations",
			       what, NETGPU_LEAK_MAX);
	for (i = 0; i < nr; i++)
		KUNIT_FAIL(test, "%s (fail_nth %u) leaked %zu bytes from %pS",
			   what, nth, lk->size[i], (void *)lk->site[i]);
	/* Start the next window empty whatever was left. */
	raw_spin_lock_irqsave(&lk->lock, flags);
	WRITE_ONCE(lk->nr, 0);
	lk->overflow = false;
	raw_spin_unlock_irqrestore(&lk->lock, flags);
	return nr;
}

#endif /* _NETGPU_LEAK_H */
