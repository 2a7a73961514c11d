// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu socket queues: TCP payload in netgpu buffers becomes rx ring
 * descriptors.  See the DOC in sock.h.
 */

#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/file.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <trace/events/netgpu.h>
#include <uapi/linux/netgpu.h>

#include "ctx.h"
#include "nic.h"
#include "queue.h"
#include "sock.h"
#include "tx.h"

/*
 * Plain TCP over IPv4 or IPv6, no upper layer owning the receive queue:
 * kTLS and sockmap keep pointers into it (tls_strp's anchor), MPTCP and
 * others replace recvmsg.  Checked at attach and at every read, under
 * the socket lock for the latter: an upper layer can be added later.
 */
static bool netgpu_sockq_plain_tcp(struct sock *sk)
{
	return sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6) &&
	       READ_ONCE(sk->sk_prot)->recvmsg == tcp_recvmsg &&
	       !inet_csk(sk)->icsk_ulp_ops &&
	       !READ_ONCE(sk->sk_user_data);
}

/**
 * netgpu_sockq_create() - attach a TCP socket to a context
 * @ctx: the context; the caller holds a reference for the queue
 * @sock_file: the socket's file; the queue takes over the caller's
 *	reference on success
 * @rx: in/out: the rx ring's geometry (validated here)
 * @cq: in/out: the completion ring's geometry (validated here), or NULL
 *	for a queue that only receives
 *
 * Context: Process context, may sleep.
 * Return: the queue; ERR_PTR(-ENOTSOCK) for a file that is no socket,
 * -EOPNOTSUPP for a socket that is not plain TCP over IPv4 or IPv6
 * (another protocol, or an upper layer such as kTLS or MPTCP owning its
 * receive path), -EINVAL for a bad geometry, -ENOMEM.
 */
struct netgpu_sockq *netgpu_sockq_create(struct netgpu_ctx *ctx,
					 struct file *sock_file,
					 struct netgpu_queue_geom *rx,
					 struct netgpu_queue_geom *cq)
{
	struct socket *sock = sock_from_file(sock_file);
	struct netgpu_sockq *sq;
	struct sock *sk;
	int err;

	if (!sock)
		return ERR_PTR(-ENOTSOCK);
	sk = sock->sk;
	if (!sk || !netgpu_sockq_plain_tcp(sk))
		return ERR_PTR(-EOPNOTSUPP);
	err = netgpu_queue_validate_geometry(NETGPU_QUEUE_RX, rx);
	if (!err && cq)
		err = netgpu_queue_validate_geometry(NETGPU_QUEUE_COMPLETION, cq);
	if (err)
		return ERR_PTR(err);

	sq = kzalloc(sizeof(*sq), GFP_KERNEL_ACCOUNT);
	if (!sq)
		return ERR_PTR(-ENOMEM);
	sq->rx = netgpu_queue_create(NETGPU_QUEUE_RX, rx->entries);
	if (IS_ERR(sq->rx)) {
		err = PTR_ERR(sq->rx);
		goto err_free;
	}
	if (cq) {
		sq->tx = netgpu_txq_create(cq);
		if (IS_ERR(sq->tx)) {
			err = PTR_ERR(sq->tx);
			netgpu_queue_destroy(sq->rx);
			goto err_free;
		}
	}
	sq->ctx = ctx;
	sq->sock_file = sock_file;
	INIT_LIST_HEAD(&sq->node);
	return sq;

err_free:
	kfree(sq);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_create);

/**
 * netgpu_sockq_check_attach() - whether a socket may join a context
 * @sock_file: the socket's file
 * @net: the network namespace of the context's device
 *
 * What ATTACH_SOCKET promises beyond netgpu_sockq_create(): a socket of
 * the device's namespace (a socket of another one never carries the
 * device's traffic: its data, copied into the context's memory, would
 * cross namespaces) with a stream to read: not a listening socket
 * (accept() makes the sockets that have one), nor a closed one with
 * nothing queued (never connected, or read to its end).  A socket still
 * connecting, or closing with data queued, is taken.  The state is a
 * snapshot; a read of a socket that was reset later reports it.  Checked
 * before netgpu_sockq_create() allocates the ring; a file that is no
 * TCP socket passes, for netgpu_sockq_create() to refuse.
 *
 * Context: Process context.
 * Return: 0; -EXDEV for another namespace; -ENOTCONN for a listening
 * socket, or a closed one with nothing to read.
 */
int netgpu_sockq_check_attach(struct file *sock_file, const struct net *net)
{
	struct socket *sock = sock_from_file(sock_file);
	struct sock *sk = sock ? sock->sk : NULL;
	int state;

	/* Not TCP: for netgpu_sockq_create() to refuse (-EOPNOTSUPP). */
	if (!sk || sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP)
		return 0;
	if (!net_eq(sock_net(sk), net))
		return -EXDEV;
	state = READ_ONCE(sk->sk_state);
	if (state == TCP_LISTEN ||
	    (state == TCP_CLOSE && skb_queue_empty_lockless(&sk->sk_receive_queue)))
		return -ENOTCONN;
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_sockq_check_attach);

/**
 * netgpu_sockq_destroy() - free a socket queue
 * @sq: the queue, no longer read
 *
 * Drops the socket's file and the rings (a mapping of one keeps its
 * pages).  The buffers its descriptors named stay user references of
 * their interface queues; sends still in the stack keep the completion
 * ring and complete into it.
 *
 * Context: Process context.
 */
void netgpu_sockq_destroy(struct netgpu_sockq *sq)
{
	if (sq->tx)
		netgpu_txq_put(sq->tx);
	netgpu_queue_destroy(sq->rx);
	fput(sq->sock_file);
	kfree(sq);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_destroy);

/* One descriptor into the ring: the caller checked there is room. */
static void netgpu_recv_post(struct netgpu_recv_state *st,
			     const struct netgpu_rx_desc *d)
{
	if (!WARN_ON_ONCE(netgpu_queue_prod_reserve_desc(st->sq->rx, d)))
		trace_netgpu_rx_desc(st->sq->ctx->id, d->addr, d->len,
				     d->flags);
	/* At once, not after the pass: the accounting counts handouts. */
	atomic64_inc(&st->sq->ctx->descs);
	st->descs++;
	st->bytes += d->len;
	if (d->flags & NETGPU_RX_DESC_COPY) {
		st->copies++;
		st->copied += d->len;
	}
}

/*
 * No room for a descriptor: the read stops, the data stays queued.
 * fail_netgpu_rx_ring makes a ring with room read as full.
 */
static bool netgpu_recv_ring_full(struct netgpu_recv_state *st)
{
	if (netgpu_queue_nb_free(st->sq->rx) &&
	    !netgpu_should_fail(NETGPU_FAIL_RX_RING))
		return false;
	st->status |= NETGPU_RECV_RING_FULL;
	return true;
}

/*
 * Bytes in ordinary memory with no host buffer to copy them into: recv()
 * returns them if the whole skb is readable (tcp_recvmsg() refuses an
 * skb with unreadable frags as a whole), else nothing can.
 */
static void netgpu_recv_no_copy(struct netgpu_recv_state *st,
				const struct sk_buff *head)
{
	if (skb_frags_readable(head))
		st->status |= NETGPU_RECV_READABLE;
	else
		st->err = -EFAULT;
}

/* [@off, @off + @len) of @skb, readable: copy into host buffers. */
static int netgpu_recv_readable(struct netgpu_recv_state *st,
				const struct sk_buff *head,
				const struct sk_buff *skb, u32 off, u32 len)
{
	struct netgpu_rx_desc d;
	u32 done = 0;
	int ret;

	if (!st->copy) {
		netgpu_recv_no_copy(st, head);
		trace_netgpu_copy_fallback(st->sq->ctx->id, len, 0);
		return 0;
	}
	while (done < len && !netgpu_recv_ring_full(st)) {
		ret = netgpu_ifq_rx_copy(st->copy, skb, off + done, len - done,
					 &d);
		if (ret == -ENOBUFS) {
			st->status |= NETGPU_RECV_NO_BUFFERS;
			break;
		}
		if (ret == -EOPNOTSUPP) {
			/* The queue was unbound since the read began. */
			netgpu_recv_no_copy(st, head);
			break;
		}
		if (ret < 0) {
			st->err = ret;
			break;
		}
		netgpu_recv_post(st, &d);
		done += ret;
	}
	trace_netgpu_copy_fallback(st->sq->ctx->id, len, done);
	return done;
}

/* [@off, @off + @len) of a net_iov frag: ours to describe, or refused. */
static int netgpu_recv_niov(struct netgpu_recv_state *st,
			    const skb_frag_t *frag, u32 off, u32 len)
{
	netmem_ref nm = skb_frag_netmem(frag);
	struct netgpu_ifq *ifq = netgpu_ifq_of_netmem(nm);
	struct netgpu_rx_desc d;
	int err;

	if (!ifq || READ_ONCE(ifq->owner) != st->sq->ctx) {
		atomic64_inc(&st->sq->cnt.refused);
		st->err = -EFAULT;
		return 0;
	}
	if (netgpu_recv_ring_full(st))
		return 0;
	err = netgpu_ifq_rx_niov(ifq, nm, skb_frag_off(frag) + off, len, &d);
	if (err) {
		st->err = err;
		return 0;
	}
	netgpu_recv_post(st, &d);
	return len;
}

static int netgpu_recv_walk(struct netgpu_recv_state *st,
			    const struct sk_buff *head, struct sk_buff *skb,
			    u32 offset, u32 len)
{
	u32 start = skb_headlen(skb), end, n, done = 0;
	struct sk_buff *frag_iter;
	int i, ret;

	if (offset < start) {
		n = min(len, start - offset);
		ret = netgpu_recv_readable(st, head, skb, offset, n);
		done += ret;
		if (ret < n)
			return done;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags && done < len; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		end = start + skb_frag_size(frag);
		if (offset + done < end) {
			u32 off = offset + done - start;

			n = min(len - done, end - (offset + done));
			if (skb_frag_is_net_iov(frag))
				ret = netgpu_recv_niov(st, frag, off, n);
			else
				ret = netgpu_recv_readable(st, head, skb,
							   offset + done, n);
			done += ret;
			if (ret < n)
				return done;
		}
		start = end;
	}
	skb_walk_frags(skb, frag_iter) {
		if (done >= len)
			break;
		end = start + frag_iter->len;
		if (offset + done < end) {
			n = min(len - done, end - (offset + done));
			ret = netgpu_recv_walk(st, head, frag_iter,
					       offset + done - start, n);
			done += ret;
			if (ret < n)
				return done;
		}
		start = end;
	}
	return done;
}

/**
 * netgpu_sockq_recv_skb() - the receive actor on one skb
 * @st: the read
 * @skb: an skb of the socket's receive queue
 * @offset: first byte to read
 * @len: bytes to read
 *
 * Walks the linear part, the frags and the frag list of @skb in stream
 * order, describing, copying or stopping as the socket receive path's DOC
 * says; what stops it is left in @st.
 *
 * Context: Process context, under the socket lock (tcp_read_sock()).
 * Return: the bytes consumed, from 0 to @len.
 */
VISIBLE_IF_KUNIT int netgpu_sockq_recv_skb(struct netgpu_recv_state *st,
					   struct sk_buff *skb, u32 offset,
					   u32 len)
{
	if (st->err || st->status)
		return 0;
	return netgpu_recv_walk(st, skb, skb, offset, len);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_sockq_recv_skb);

static int netgpu_sockq_actor(read_descriptor_t *desc, struct sk_buff *skb,
			      unsigned int offset, size_t len)
{
	return netgpu_sockq_recv_skb(desc->arg.data, skb, offset,
				     min_t(size_t, len, U32_MAX));
}

/* Everything read, and the peer sent its FIN: the stream is over. */
static bool netgpu_sockq_eof(struct sock *sk)
{
	return (sk->sk_shutdown & RCV_SHUTDOWN) &&
	       skb_queue_empty(&sk->sk_receive_queue);
}

/*
 * Urgent data at the head of the stream stops tcp_read_sock() before
 * the byte, for ever: only tcp_recvmsg() passes the mark.  Pass it as it
 * does: skip the byte unless SO_OOBINLINE (it is read with MSG_OOB, or
 * lost, as for recv()), then forget the mark.  Only a byte that arrived:
 * a segment may announce the mark at rcv_nxt before the byte
 * (TCP_URG_NOTYET); skipping it then would put copied_seq past rcv_nxt
 * (tcp_check_urg() has the same guard).  Once it arrives tcp_urg()
 * marks it valid and the next pass skips it.
 */
static void netgpu_sockq_pass_urg(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (likely(!tp->urg_data) || tp->urg_seq != tp->copied_seq ||
	    !before(tp->copied_seq, tp->rcv_nxt))
		return;
	if (!sock_flag(sk, SOCK_URGINLINE))
		WRITE_ONCE(tp->copied_seq, tp->copied_seq + 1);
	WRITE_ONCE(tp->urg_data, 0);
	tcp_fast_path_check(sk);
}

/**
 * netgpu_sockq_recv() - move a socket's data into its rx ring, once
 * @sq: the queue
 * @copy: an interface queue to copy readable bytes into (the caller
 *	holds a reference), or NULL
 * @r: out: &struct netgpu_recv's status, descs, copies and bytes
 *
 * One pass of NETGPU_SOCKQ_IOCTL_RECV (see the uapi header): reads until
 * the receive queue is empty, the ring is full or something stops the
 * read.  Never waits: netgpu_sockq_wait() does, between passes, so that
 * the caller holds nothing (@copy) while it sleeps.
 *
 * Context: Process context, may sleep.  Takes the socket lock.
 * Return: 0 with something to report in @r; -EAGAIN with nothing at all
 * (no data, no end of stream); -ENOTCONN (a listening or closed socket),
 * -EOPNOTSUPP (an upper layer took the socket over since it was
 * attached), the socket's error; -EFAULT if the read stopped at data it
 * may not describe before writing any descriptor; -ENODEV for data of a
 * queue whose file was closed.
 */
int netgpu_sockq_recv(struct netgpu_sockq *sq, struct netgpu_ifq *copy,
		      struct netgpu_recv *r)
{
	struct sock *sk = sock_from_file(sq->sock_file)->sk;
	struct netgpu_recv_state st = { .sq = sq, .copy = copy };
	read_descriptor_t desc = { .arg.data = &st, .count = 1 };
	int ret = 0;

	lock_sock(sk);
	if (!netgpu_sockq_plain_tcp(sk)) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	netgpu_sockq_pass_urg(sk);
	ret = tcp_read_sock(sk, &desc, netgpu_sockq_actor);
	if (st.descs || st.status || st.err || ret < 0)
		goto out;
	ret = -EAGAIN;
	if (sk->sk_err)
		ret = sock_error(sk);
	else if (sk->sk_state == TCP_CLOSE && !netgpu_sockq_eof(sk))
		ret = -ENOTCONN;
out:
	/* An error first, as recv() does: the end of the stream next time. */
	if ((ret >= 0 || ret == -EAGAIN) && netgpu_sockq_eof(sk))
		st.status |= NETGPU_RECV_EOF;
	netgpu_queue_prod_submit(sq->rx);
	release_sock(sk);

	atomic64_add(st.descs, &sq->cnt.descs);
	atomic64_add(st.bytes, &sq->cnt.bytes);
	atomic64_add(st.copied, &sq->cnt.copied);
	r->status = st.status;
	r->descs = st.descs;
	r->copies = st.copies;
	r->bytes = st.bytes;
	if (st.descs || st.status)
		return 0;
	if (st.err)
		return st.err;
	return ret < 0 ? ret : -EAGAIN;
}
EXPORT_SYMBOL_GPL(netgpu_sockq_recv);

/**
 * netgpu_sockq_rcvtimeo() - how long a read of the socket may wait
 * @sq: the queue
 * @nonblock: the caller asked not to wait
 *
 * Context: Any context.
 * Return: the socket's SO_RCVTIMEO, or 0 with @nonblock.
 */
long netgpu_sockq_rcvtimeo(struct netgpu_sockq *sq, bool nonblock)
{
	return sock_rcvtimeo(sock_from_file(sq->sock_file)->sk, nonblock);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_rcvtimeo);

/**
 * netgpu_sockq_wait() - wait for the socket to receive more
 * @sq: the queue
 * @timeo: in/out: the time left (netgpu_sockq_rcvtimeo())
 *
 * Returns once an skb arrives after those already queued (data the last
 * pass could not move stays queued: waiting for "not empty" would spin),
 * the socket fails or is shut down (unless it was already: that too
 * would spin), a signal is pending or @timeo runs out.
 *
 * Context: Process context, may sleep.  Takes the socket lock.
 * Return: 0 to read again; -EAGAIN when @timeo ran out (at once if 0);
 * -EINTR or -ERESTARTSYS on a signal.
 */
int netgpu_sockq_wait(struct netgpu_sockq *sq, long *timeo)
{
	struct sock *sk = sock_from_file(sq->sock_file)->sk;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sk_buff *tail;
	bool shut;
	int ret = 0;

	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);
	lock_sock(sk);
	tail = skb_peek_tail(&sk->sk_receive_queue);
	shut = sk->sk_shutdown & RCV_SHUTDOWN;
	if (!sk->sk_err) {
		/* As sk_wait_data(), which misses errors and shutdowns. */
		add_wait_queue(sk_sleep(sk), &wait);
		sk_set_bit(SOCKWQ_ASYNC_WAITDATA, sk);
		sk_wait_event(sk, timeo,
			      READ_ONCE(sk->sk_err) ||
			      skb_peek_tail(&sk->sk_receive_queue) != tail ||
			      (!shut && (READ_ONCE(sk->sk_shutdown) &
					 RCV_SHUTDOWN)), &wait);
		sk_clear_bit(SOCKWQ_ASYNC_WAITDATA, sk);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	if (signal_pending(current))
		ret = sock_intr_errno(*timeo);
	else if (!*timeo)
		ret = -EAGAIN;
	release_sock(sk);
	return ret;
}
EXPORT_SYMBOL_GPL(netgpu_sockq_wait);

/**
 * netgpu_sockq_poll() - poll() of a socket queue's file
 * @sq: the queue
 * @file: the file
 * @wait: poll table
 *
 * Waits on the socket: data queued on it is what the next
 * NETGPU_SOCKQ_IOCTL_RECV moves.
 *
 * Context: Process context.
 * Return: ``EPOLLIN | EPOLLRDNORM`` while the rx ring holds descriptors
 * user space has not consumed or the socket has data; the socket's
 * ``EPOLLRDHUP``, ``EPOLLHUP`` and ``EPOLLERR``; with a completion ring,
 * ``EPOLLRDBAND`` while it holds completions and ``EPOLLOUT |
 * EPOLLWRNORM`` while a send would be accepted (room in the socket's
 * send buffer and for one more completion).
 */
__poll_t netgpu_sockq_poll(struct netgpu_sockq *sq, struct file *file,
			   poll_table *wait)
{
	struct netgpu_ring *ring = netgpu_queue_ring(sq->rx);
	__poll_t keep = EPOLLIN | EPOLLRDNORM | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
	__poll_t mask;

	mask = vfs_poll(sq->sock_file, wait);
	if (sq->tx) {
		__poll_t tx = netgpu_txq_poll(sq->tx, file, wait);

		/* Writable: room in the send buffer and in the completion ring. */
		if (!(tx & EPOLLOUT))
			mask &= ~(EPOLLOUT | EPOLLWRNORM);
		mask |= tx & EPOLLRDBAND;
		keep |= EPOLLOUT | EPOLLWRNORM | EPOLLRDBAND;
	}
	mask &= keep;
	if (READ_ONCE(ring->prod) != READ_ONCE(ring->cons))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}
EXPORT_SYMBOL_GPL(netgpu_sockq_poll);

/**
 * netgpu_sockq_mmap() - map a socket queue's rx or completion ring
 * @sq: the queue
 * @vma: the mapping, at NETGPU_OFF_RX_RING or NETGPU_OFF_COMPLETION_RING
 *
 * Context: Process context, mmap lock held.
 * Return: 0 or netgpu_queue_mmap()'s error.
 */
int netgpu_sockq_mmap(struct netgpu_sockq *sq, struct vm_area_struct *vma)
{
	if (sq->tx &&
	    vma->vm_pgoff == NETGPU_OFF_COMPLETION_RING >> PAGE_SHIFT)
		return netgpu_queue_mmap(sq->tx->cq, vma);
	return netgpu_queue_mmap(sq->rx, vma);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_mmap);

/**
 * netgpu_sockq_get_stats() - add a socket queue's counters
 * @sq: the queue
 * @st: the sums to add to
 *
 * Lockless (atomic counters): a context's GET_STATS, which walks its
 * queues under &netgpu_ctx.stats_lock, never waits for a socket lock.
 *
 * Context: Any context.
 */
void netgpu_sockq_get_stats(struct netgpu_sockq *sq, struct netgpu_stats *st)
{
	struct netgpu_ring *ring = netgpu_queue_ring(sq->rx);
	u32 n;

	st->rx_descs += atomic64_read(&sq->cnt.descs);
	st->rx_bytes += atomic64_read(&sq->cnt.bytes);
	st->rx_copied += atomic64_read(&sq->cnt.copied);
	st->rx_refused += atomic64_read(&sq->cnt.refused);
	/* User space writes ->cons: never more than the ring holds. */
	n = READ_ONCE(ring->prod) - READ_ONCE(ring->cons);
	st->bufs_rx_ring += min(n, netgpu_queue_nentries(sq->rx));
	if (sq->tx)
		netgpu_txq_get_stats(sq->tx, st);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_get_stats);

/**
 * netgpu_sockq_send() - NETGPU_SOCKQ_IOCTL_SEND of a socket queue
 * @sq: the queue
 * @s: in/out: the send (its @iov already copied to @iov); @bytes written
 * @iov: @s->nr_iov ranges, in kernel memory
 *
 * Zero-copy transmit (see the DOC in tx.h) on the queue's socket.  A
 * socket taken over by an upper layer since it was attached is refused,
 * here and again under the socket lock the send holds (one taken over
 * between the two checks).
 *
 * Context: Process context, may sleep.
 * Return: 0 or an error, as netgpu_txq_send(); -EINVAL without a
 * completion ring; -EOPNOTSUPP for a socket that is no longer plain TCP.
 */
int netgpu_sockq_send(struct netgpu_sockq *sq, struct netgpu_send *s,
		      const struct netgpu_send_iov *iov)
{
	struct socket *sock = sock_from_file(sq->sock_file);

	if (!sq->tx)
		return -EINVAL;
	if (!netgpu_sockq_plain_tcp(sock->sk) ||
	    READ_ONCE(sock->sk->sk_prot)->sendmsg != tcp_sendmsg)
		return -EOPNOTSUPP;
	return netgpu_txq_send(sq->tx, &sq->ctx->mc, sock, iov, s->nr_iov,
			       s->user_data, s->flags, &s->bytes);
}
EXPORT_SYMBOL_GPL(netgpu_sockq_send);
