/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netgpu socket queues: the receive path of one TCP socket into an rx
 * ring.
 */
#ifndef _NETGPU_SOCK_H
#define _NETGPU_SOCK_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/types.h>

/**
 * DOC: netgpu socket receive path
 *
 * A socket queue (&struct netgpu_sockq) ties one TCP socket to an rx
 * ring user space maps.  NETGPU_SOCKQ_IOCTL_RECV reads the socket with
 * tcp_read_sock() and netgpu's actor, in the caller's process context
 * under the socket lock, as io_uring's zero-copy receive does:
 *
 * - a frag in a buffer of one of the context's interface queues becomes
 *   a descriptor of where it lies; the buffer gets a user reference;
 * - a frag of another context's queue or of another memory provider
 *   (devmem) is refused: the read fails with -EFAULT, the data stays;
 * - bytes in ordinary memory (the linear part, page frags: data that
 *   arrived before the bind or in a packet the NIC did not split) are
 *   copied into a free host buffer of a bound queue of the context, or,
 *   with none, left in the socket: the read stops there and says so, and
 *   recv() returns exactly those bytes (tcp_recvmsg() stops where
 *   unreadable data starts);
 * - a full rx ring stops the read; the data stays queued and TCP's
 *   window closes until user space makes room.
 *
 * Why process context rather than the socket's data_ready callback in
 * softirq (the RFC's netgpu_data_ready()): the reader needs the socket
 * lock to walk the receive queue (tcp_read_sock()), which a callback
 * running under the socket's spinlock in softirq does not have; a full
 * ring there could only drop or queue on a list of our own, whereas in
 * process context it just stops and TCP's flow control does the rest;
 * and the copy into host memory may fault in region pages only in
 * process context.  The cost is a system call per batch, which one read
 * amortises over a whole ring.
 *
 * **Lifetime.**  The queue holds the socket's file and a reference on the
 * context; closing its file drops both.  Buffers in the ring or held by
 * user space stay user references of their interface queues, which the
 * scrub at the interface queue's close takes back.
 *
 * **Locks.**  The socket lock serializes readers and so the ring's
 * producer; under it, an interface queue's fill lock (netgpu_ifq_rx_*()).
 * The context's lock is never held with the socket lock: a read picks
 * its copy queue under the context's lock, drops it, then reads; waits
 * (netgpu_sockq_wait()) hold neither, nor any queue.
 */

struct file;
struct poll_table_struct;
struct sk_buff;
struct vm_area_struct;
struct netgpu_ctx;
struct netgpu_ifq;
struct netgpu_queue;
struct netgpu_queue_geom;
struct netgpu_recv;
struct netgpu_send;
struct netgpu_send_iov;
struct netgpu_txq;
struct netgpu_stats;

/**
 * struct netgpu_sockq_counters - what a socket queue did
 * @descs: descriptors written
 * @bytes: bytes they describe
 * @copied: of @bytes, copied into host buffers
 * @refused: frags of another context or provider met
 *
 * Atomic: written by the reader, read by GET_STATS without the socket
 * lock.
 */
struct netgpu_sockq_counters {
	atomic64_t	descs;
	atomic64_t	bytes;
	atomic64_t	copied;
	atomic64_t	refused;
};

/**
 * struct netgpu_sockq - a TCP socket attached to a context
 * @ctx: the context (a reference is held)
 * @sock_file: the socket's file (a reference is held)
 * @rx: the rx ring; its producer side under the socket lock
 * @tx: the transmit side (a reference is held), or NULL for a queue
 *	attached without a completion ring
 * @cnt: counters
 * @node: in &netgpu_ctx.sockqs, under &netgpu_ctx.lock
 */
struct netgpu_sockq {
	struct netgpu_ctx		*ctx;
	struct file			*sock_file;
	struct netgpu_queue		*rx;
	struct netgpu_txq		*tx;
	struct netgpu_sockq_counters	cnt;
	struct list_head		node;
};

/**
 * struct netgpu_recv_state - one read of a socket queue
 * @sq: the queue
 * @copy: an interface queue of the context to copy readable bytes into
 *	(a reference is held), or NULL
 * @descs: descriptors written
 * @copies: of @descs, copies
 * @bytes: bytes described
 * @copied: of @bytes, bytes copied
 * @status: NETGPU_RECV_* status bits
 * @err: the error that stopped the read, or 0
 */
struct netgpu_recv_state {
	struct netgpu_sockq	*sq;
	struct netgpu_ifq	*copy;
	u32			descs;
	u32			copies;
	u64			bytes;
	u64			copied;
	u32			status;
	int			err;
};

#if IS_ENABLED(CONFIG_NETGPU_NIC)
struct net;
struct netgpu_sockq *netgpu_sockq_create(struct netgpu_ctx *ctx,
					 struct file *sock_file,
					 struct netgpu_queue_geom *rx,
					 struct netgpu_queue_geom *cq);
int netgpu_sockq_check_attach(struct file *sock_file, const struct net *net);
void netgpu_sockq_destroy(struct netgpu_sockq *sq);
int netgpu_sockq_recv(struct netgpu_sockq *sq, struct netgpu_ifq *copy,
		      struct netgpu_recv *r);
long netgpu_sockq_rcvtimeo(struct netgpu_sockq *sq, bool nonblock);
int netgpu_sockq_wait(struct netgpu_sockq *sq, long *timeo);
__poll_t netgpu_sockq_poll(struct netgpu_sockq *sq, struct file *file,
			   struct poll_table_struct *wait);
int netgpu_sockq_mmap(struct netgpu_sockq *sq, struct vm_area_struct *vma);
void netgpu_sockq_get_stats(struct netgpu_sockq *sq, struct netgpu_stats *st);
int netgpu_sockq_send(struct netgpu_sockq *sq, struct netgpu_send *s,
		      const struct netgpu_send_iov *iov);
#else
/* Without the NIC interface no socket queue exists. */
static inline void netgpu_sockq_get_stats(struct netgpu_sockq *sq,
					  struct netgpu_stats *st)
{
}
#endif

#if IS_ENABLED(CONFIG_NETGPU_NIC) && IS_ENABLED(CONFIG_KUNIT)
int netgpu_sockq_recv_skb(struct netgpu_recv_state *st, struct sk_buff *skb,
			  u32 offset, u32 len);
#endif

#endif /* _NETGPU_SOCK_H */
