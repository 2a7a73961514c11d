/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu's tracepoints: the receive path's buffer handling as the NIC,
 * the stack and user space see it (Documentation/networking/netgpu.rst,
 * "Tracepoints").  A queue is named by its device's ifindex and rx queue
 * index (of the device it was last bound to); a socket queue by its
 * context's id.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM netgpu

#if !defined(_TRACE_NETGPU_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NETGPU_H

#include <linux/tracepoint.h>

#ifndef __NETGPU_TRACE_ENUMS
#define __NETGPU_TRACE_ENUMS
/* Why a fill-ring entry was not taken back (GET_STATS' fill_* counters). */
enum netgpu_fill_reason {
	NETGPU_FILL_UNALIGNED,
	NETGPU_FILL_NO_REGION,
	NETGPU_FILL_NEVER_GIVEN,
	NETGPU_FILL_TWICE,
	NETGPU_FILL_IN_NIC,
	NETGPU_FILL_IN_STACK,
};
#endif /* __NETGPU_TRACE_ENUMS */

TRACE_DEFINE_ENUM(NETGPU_FILL_UNALIGNED);
TRACE_DEFINE_ENUM(NETGPU_FILL_NO_REGION);
TRACE_DEFINE_ENUM(NETGPU_FILL_NEVER_GIVEN);
TRACE_DEFINE_ENUM(NETGPU_FILL_TWICE);
TRACE_DEFINE_ENUM(NETGPU_FILL_IN_NIC);
TRACE_DEFINE_ENUM(NETGPU_FILL_IN_STACK);

#define netgpu_show_fill_reason(reason)				\
	__print_symbolic(reason,					\
			 { NETGPU_FILL_UNALIGNED, "unaligned" },	\
			 { NETGPU_FILL_NO_REGION, "no_region" },	\
			 { NETGPU_FILL_NEVER_GIVEN, "never_given" },	\
			 { NETGPU_FILL_TWICE, "twice" },		\
			 { NETGPU_FILL_IN_NIC, "in_nic" },		\
			 { NETGPU_FILL_IN_STACK, "in_stack" })

/*
 * A refill of the queue's page_pool (its slow path, in the driver's
 * allocation context): buffers taken back from the fill ring and from
 * the free list, and how many the pool's cache holds after it.
 */
TRACE_EVENT(netgpu_refill,
	TP_PROTO(int ifindex, u32 rxq, u32 from_fill, u32 from_free,
		 u32 cached),
	TP_ARGS(ifindex, rxq, from_fill, from_free, cached),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, rxq)
		__field(u32, from_fill)
		__field(u32, from_free)
		__field(u32, cached)
	),
	TP_fast_assign(
		__entry->ifindex = ifindex;
		__entry->rxq = rxq;
		__entry->from_fill = from_fill;
		__entry->from_free = from_free;
		__entry->cached = cached;
	),
	TP_printk("ifindex=%d rxq=%u fill=%u free=%u cached=%u",
		  __entry->ifindex, __entry->rxq, __entry->from_fill,
		  __entry->from_free, __entry->cached)
);

/* A fill-ring entry skipped: @addr is what user space wrote. */
TRACE_EVENT(netgpu_fill_reject,
	TP_PROTO(int ifindex, u32 rxq, u64 addr,
		 enum netgpu_fill_reason reason),
	TP_ARGS(ifindex, rxq, addr, reason),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, rxq)
		__field(u64, addr)
		__field(unsigned int, reason)
	),
	TP_fast_assign(
		__entry->ifindex = ifindex;
		__entry->rxq = rxq;
		__entry->addr = addr;
		__entry->reason = reason;
	),
	TP_printk("ifindex=%d rxq=%u addr=0x%llx reason=%s",
		  __entry->ifindex, __entry->rxq, __entry->addr,
		  netgpu_show_fill_reason(__entry->reason))
);

/*
 * A refill found no buffer at all, on the fill ring or the free list:
 * the NIC gets none until user space gives some back.
 */
TRACE_EVENT(netgpu_starve,
	TP_PROTO(int ifindex, u32 rxq),
	TP_ARGS(ifindex, rxq),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, rxq)
	),
	TP_fast_assign(
		__entry->ifindex = ifindex;
		__entry->rxq = rxq;
	),
	TP_printk("ifindex=%d rxq=%u", __entry->ifindex, __entry->rxq)
);

/*
 * An rx descriptor written into a socket queue's ring: a buffer's bytes
 * at @addr of the region address space, @flags as the descriptor's.
 */
TRACE_EVENT(netgpu_rx_desc,
	TP_PROTO(u32 ctx, u64 addr, u32 len, u32 flags),
	TP_ARGS(ctx, addr, len, flags),
	TP_STRUCT__entry(
		__field(u32, ctx)
		__field(u64, addr)
		__field(u32, len)
		__field(u32, flags)
	),
	TP_fast_assign(
		__entry->ctx = ctx;
		__entry->addr = addr;
		__entry->len = len;
		__entry->flags = flags;
	),
	TP_printk("ctx=%u addr=0x%llx len=%u flags=0x%x", __entry->ctx,
		  __entry->addr, __entry->len, __entry->flags)
);

/*
 * Bytes of the stream in ordinary memory (before the queue was bound, or
 * a packet the NIC did not split): @len of them met, @copied copied into
 * host buffers; the rest stays queued (no buffer, a full ring) or is
 * left to recv() (no copy queue).
 */
TRACE_EVENT(netgpu_copy_fallback,
	TP_PROTO(u32 ctx, u32 len, u32 copied),
	TP_ARGS(ctx, len, copied),
	TP_STRUCT__entry(
		__field(u32, ctx)
		__field(u32, len)
		__field(u32, copied)
	),
	TP_fast_assign(
		__entry->ctx = ctx;
		__entry->len = len;
		__entry->copied = copied;
	),
	TP_printk("ctx=%u len=%u copied=%u", __entry->ctx, __entry->len,
		  __entry->copied)
);

/*
 * A bound queue unbound: @err is its rx queue's restart (0 also for a
 * device that is down: nothing to restart; any other error leaves the
 * queue stuck, retried every second, and the retry that restarts it at
 * last traces again, with 0 or -ENETDOWN), or -ENODEV for a queue, bound
 * or stuck, whose device went away.
 */
TRACE_EVENT(netgpu_unbind,
	TP_PROTO(int ifindex, u32 rxq, int err),
	TP_ARGS(ifindex, rxq, err),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, rxq)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->ifindex = ifindex;
		__entry->rxq = rxq;
		__entry->err = err;
	),
	TP_printk("ifindex=%d rxq=%u err=%d", __entry->ifindex,
		  __entry->rxq, __entry->err)
);

/*
 * The scrub of a queue whose file was closed: the user references it
 * took back from buffers user space still held.
 */
TRACE_EVENT(netgpu_scrub,
	TP_PROTO(int ifindex, u32 rxq, u64 scrubbed),
	TP_ARGS(ifindex, rxq, scrubbed),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, rxq)
		__field(u64, scrubbed)
	),
	TP_fast_assign(
		__entry->ifindex = ifindex;
		__entry->rxq = rxq;
		__entry->scrubbed = scrubbed;
	),
	TP_printk("ifindex=%d rxq=%u scrubbed=%llu", __entry->ifindex,
		  __entry->rxq, __entry->scrubbed)
);

#endif /* _TRACE_NETGPU_H */

#include <trace/define_trace.h>
