/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu zero-copy transmit: TCP sends from the regions of a context,
 * completed on a socket queue's completion ring.
 */
#ifndef _NETGPU_TX_H
#define _NETGPU_TX_H

#include <linux/llist.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/netgpu.h>

/**
 * DOC: netgpu transmit path
 *
 * NETGPU_SOCKQ_IOCTL_SEND sends ranges of the context's address space
 * (the regions attached to it, as the rx descriptors name them) on the
 * socket queue's TCP socket, without a CPU copy of the payload where the
 * device can gather: each range becomes page frags of the region's pinned
 * pages in the socket's skbs (tcp_sendmsg() with an ITER_BVEC source and
 * a &struct ubuf_info of ours, the mechanism of MSG_ZEROCOPY and of
 * io_uring's send_zc), so that any driver with scatter-gather transmits
 * them as it transmits MSG_ZEROCOPY data.
 *
 * **Completion.**  A send's &struct netgpu_tx_req is the ubuf_info of its
 * skbs: every skb holding the payload (the write and retransmit queues,
 * clones handed to the device or to taps, GSO segments, copies made for
 * retransmission) holds a reference, and the send holds one while it
 * feeds tcp_sendmsg().  The last reference, dropped wherever the last skb
 * is freed (softirq, the device's completion, process context), writes
 * the send's user_data into the completion ring: from then on neither
 * the stack nor the device reads the ranges.  A path that must not keep
 * user pages (a local receiver's skb_orphan_frags_rx(), a device
 * without scatter-gather) copies them first; the send then completes
 * as "copied" (counted in tx_copied) as soon as the copy is made.
 *
 * **Room.**  A send is accepted only when the completion ring can take
 * its completion: the ring's free slots less the completions still
 * pending.  A full ring is -ENOBUFS before anything is sent, so that a
 * completion is never lost for want of room.
 *
 * **Memory.**  Each range lies in one region attached to the context; the
 * send holds a reference on the regions it reads until it completes, so
 * that a region removed (or detached) while bytes of it are in flight
 * stays pinned until the last skb is gone.  Host regions only: a dma-buf
 * region's memory has no pages the stack could hold, and 6.12's TX skbs
 * carry no net_iov (-EOPNOTSUPP).
 *
 * **Lifetime.**  The completion ring (&struct netgpu_txq) is shared by the
 * socket queue and its pending sends: closing the socket-queue fd does
 * not wait for the stack, and the last pending completion frees the ring.
 */

struct netgpu_memctx;
struct netgpu_queue;
struct netgpu_queue_geom;
struct netgpu_region;
struct netgpu_send;
struct netgpu_send_iov;
struct netgpu_stats;
struct socket;

/**
 * struct netgpu_txq - the transmit side of a socket queue
 * @ref: the socket queue's reference and one per pending send
 * @lock: the completion ring's producer side, @pending
 * @cq: the completion ring
 * @pending: sends accepted and not yet completed (ring slots held for
 *	them)
 * @wq: woken when a completion is written
 * @sends: sends accepted
 * @bytes: bytes they put in the socket
 * @completions: completions written
 * @copied: sends the stack had to copy (some of) the payload of
 * @lost: completions the ring had no room for: a bug (each accepted send
 *	holds a slot; the consumer index user space writes is sanitised)
 */
struct netgpu_txq {
	refcount_t		ref;
	spinlock_t		lock;	/* cq producer, pending */
	struct netgpu_queue	*cq;
	u32			pending;
	wait_queue_head_t	wq;
	atomic64_t		sends;
	atomic64_t		bytes;
	atomic64_t		completions;
	atomic64_t		copied;
	atomic64_t		lost;
};

/* A send may read this many regions (one reference each) */
#define NETGPU_TX_MAX_REGIONS	NETGPU_SEND_MAX_IOV

/**
 * struct netgpu_tx_req - one send, the ubuf_info of its skbs
 * @ubuf: what the stack references (&ubuf_info.refcnt)
 * @txq: the completion ring (a reference is held)
 * @user_data: what the completion says
 * @copied: an skb of the send was copied (zerocopy_success false)
 * @used: an skb holding the send's pages was freed with them (without
 *	one, the stack copied the payload in tcp_sendmsg(): no
 *	scatter-gather on the route)
 * @nr_regions: entries of @regions
 * @regions: the regions the send reads (a reference on each)
 * @done: on the list of completed sends whose references process context
 *	drops
 */
struct netgpu_tx_req {
	struct ubuf_info	ubuf;
	struct llist_node	done;
	struct netgpu_txq	*txq;
	u64			user_data;
	bool			copied;
	bool			used;
	unsigned int		nr_regions;
	struct netgpu_region	*regions[NETGPU_TX_MAX_REGIONS];
};

#if IS_ENABLED(CONFIG_NETGPU_NIC)
struct netgpu_txq *netgpu_txq_create(struct netgpu_queue_geom *geom);
void netgpu_txq_put(struct netgpu_txq *txq);
int netgpu_txq_send(struct netgpu_txq *txq, struct netgpu_memctx *mc,
		    struct socket *sock, const struct netgpu_send_iov *iov,
		    u32 nr_iov, u64 user_data, u32 flags, u64 *bytes);
__poll_t netgpu_txq_poll(struct netgpu_txq *txq, struct file *file,
			 struct poll_table_struct *wait);
void netgpu_txq_get_stats(struct netgpu_txq *txq, struct netgpu_stats *st);
#endif

#if IS_ENABLED(CONFIG_NETGPU_NIC) && IS_ENABLED(CONFIG_KUNIT)
struct netgpu_tx_req *netgpu_tx_req_alloc(struct netgpu_txq *txq,
					  u64 user_data);
void netgpu_tx_req_abort(struct netgpu_tx_req *req);
void netgpu_tx_flush(void);
#endif

#endif /* _NETGPU_TX_H */
