// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu zero-copy transmit: ranges of a context's regions sent as page
 * frags, completed on a completion ring.  See the DOC in tx.h.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/bvec.h>
#include <linux/export.h>
#include <linux/llist.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <uapi/linux/netgpu.h>

#include "mem.h"
#include "mem_provider.h"
#include "queue.h"
#include "tx.h"

/* Pages fed to one tcp_sendmsg_locked() call */
#define NETGPU_TX_CHUNK		32

/* As io_uring's notifications: the pages outlive the skbs (regions held) */
#define NETGPU_TX_UBUF_FLAGS	(SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN)

/*
 * What a completion leaves to process context: the region references
 * (whose last put may sleep) and the ring (vfree()).  One list for the
 * library, drained by one work item that no txq owns, so that the last
 * reference on a txq may go from the work itself.
 */
static LLIST_HEAD(netgpu_tx_done);
static void netgpu_tx_done_work(struct work_struct *work);
static DECLARE_WORK(netgpu_tx_done_wk, netgpu_tx_done_work);

/* What one send works with, off the stack */
struct netgpu_tx_scratch {
	struct netgpu_region	*rs[NETGPU_SEND_MAX_IOV];
	struct page		*pages[NETGPU_TX_CHUNK];
	struct bio_vec		bv[NETGPU_TX_CHUNK];
};

/**
 * netgpu_txq_create() - a completion ring for a socket queue
 * @geom: in/out: the ring's geometry (validated here)
 *
 * Context: Process context, may sleep.
 * Return: the txq, holding one reference for the socket queue;
 * ERR_PTR(-EINVAL) or ERR_PTR(-E2BIG) for a bad geometry, -ENOMEM.
 */
struct netgpu_txq *netgpu_txq_create(struct netgpu_queue_geom *geom)
{
	struct netgpu_txq *txq;
	int err;

	err = netgpu_queue_validate_geometry(NETGPU_QUEUE_COMPLETION, geom);
	if (err)
		return ERR_PTR(err);
	txq = kzalloc(sizeof(*txq), GFP_KERNEL_ACCOUNT);
	if (!txq)
		return ERR_PTR(-ENOMEM);
	txq->cq = netgpu_queue_create(NETGPU_QUEUE_COMPLETION, geom->entries);
	if (IS_ERR(txq->cq)) {
		err = PTR_ERR(txq->cq);
		kfree(txq);
		return ERR_PTR(err);
	}
	refcount_set(&txq->ref, 1);
	spin_lock_init(&txq->lock);
	init_waitqueue_head(&txq->wq);
	return txq;
}
EXPORT_SYMBOL_GPL(netgpu_txq_create);

/**
 * netgpu_txq_put() - drop a reference on a txq
 * @txq: the txq
 *
 * The last reference frees the ring (mappings keep its pages).
 *
 * Context: Process context, may sleep.
 */
void netgpu_txq_put(struct netgpu_txq *txq)
{
	might_sleep();
	if (!refcount_dec_and_test(&txq->ref))
		return;
	WARN_ON_ONCE(txq->pending);
	netgpu_queue_destroy(txq->cq);
	kfree(txq);
}
EXPORT_SYMBOL_GPL(netgpu_txq_put);

static void netgpu_tx_req_free(struct netgpu_tx_req *req)
{
	struct netgpu_txq *txq = req->txq;
	unsigned int i;

	for (i = 0; i < req->nr_regions; i++)
		netgpu_region_put(req->regions[i]);
	kfree(req);
	netgpu_txq_put(txq);
}

static void netgpu_tx_done_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&netgpu_tx_done);
	struct netgpu_tx_req *req, *tmp;

	llist_for_each_entry_safe(req, tmp, list, done) {
		netgpu_tx_req_free(req);
		cond_resched();
	}
}

/* Writes the completion: the last skb holding the send is gone. */
static void netgpu_tx_req_complete(struct netgpu_tx_req *req)
{
	struct netgpu_txq *txq = req->txq;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&txq->lock, flags);
	err = netgpu_queue_prod_reserve_addr(txq->cq, req->user_data);
	if (!err)
		netgpu_queue_prod_submit(txq->cq);
	WRITE_ONCE(txq->pending, txq->pending - 1);
	spin_unlock_irqrestore(&txq->lock, flags);
	/* The slot was held since netgpu_tx_req_alloc(): never without room */
	if (WARN_ON_ONCE(err))
		atomic64_inc(&txq->lost);
	else
		atomic64_inc(&txq->completions);
	/* As io_uring's zc_used: no skb took the pages, TCP copied them. */
	if (READ_ONCE(req->copied) || !READ_ONCE(req->used))
		atomic64_inc(&txq->copied);
	wake_up_poll(&txq->wq, EPOLLRDBAND | EPOLLOUT | EPOLLWRNORM);

	if (llist_add(&req->done, &netgpu_tx_done))
		schedule_work(&netgpu_tx_done_wk);
}

/*
 * &ubuf_info_ops.complete: once per skb that held the send when it is
 * freed (@skb), and once for the sender's own reference (@skb NULL).
 */
static void netgpu_tx_ubuf_complete(struct sk_buff *skb,
				    struct ubuf_info *uarg,
				    bool zerocopy_success)
{
	struct netgpu_tx_req *req = container_of(uarg, struct netgpu_tx_req,
						 ubuf);

	if (!zerocopy_success)
		WRITE_ONCE(req->copied, true);
	else if (skb)
		WRITE_ONCE(req->used, true);
	if (refcount_dec_and_test(&uarg->refcnt))
		netgpu_tx_req_complete(req);
}

static const struct ubuf_info_ops netgpu_tx_ubuf_ops = {
	.complete	= netgpu_tx_ubuf_complete,
};

/**
 * netgpu_tx_req_alloc() - a send's request, with a completion slot
 * @txq: the completion ring
 * @user_data: what the completion will say
 *
 * Holds a slot of the ring (the send fails rather than lose its
 * completion) and a reference on @txq.  The caller's reference on
 * &netgpu_tx_req.ubuf is the one the first skb's complete, or
 * netgpu_tx_req_abort(), drops.
 *
 * Context: Process context, may sleep.
 * Return: the request, ERR_PTR(-ENOBUFS) when the ring has no slot left,
 * ERR_PTR(-ENOMEM).
 */
VISIBLE_IF_KUNIT struct netgpu_tx_req *netgpu_tx_req_alloc(struct netgpu_txq *txq,
							   u64 user_data)
{
	struct netgpu_tx_req *req;
	bool room;

	req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
	if (!req)
		return ERR_PTR(-ENOMEM);
	spin_lock_irq(&txq->lock);
	room = netgpu_queue_nb_free(txq->cq) > txq->pending;
	if (room)
		WRITE_ONCE(txq->pending, txq->pending + 1);
	spin_unlock_irq(&txq->lock);
	if (!room) {
		kfree(req);
		return ERR_PTR(-ENOBUFS);
	}
	req->ubuf.ops = &netgpu_tx_ubuf_ops;
	req->ubuf.flags = NETGPU_TX_UBUF_FLAGS;
	refcount_set(&req->ubuf.refcnt, 1);
	refcount_inc(&txq->ref);
	req->txq = txq;
	req->user_data = user_data;
	return req;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_tx_req_alloc);

/**
 * netgpu_tx_req_abort() - end a request no skb took
 * @req: the request; the caller holds the only reference
 *
 * Gives its slot back, without a completion.
 *
 * Context: Process context, may sleep.
 */
VISIBLE_IF_KUNIT void netgpu_tx_req_abort(struct netgpu_tx_req *req)
{
	struct netgpu_txq *txq = req->txq;

	spin_lock_irq(&txq->lock);
	WRITE_ONCE(txq->pending, txq->pending - 1);
	spin_unlock_irq(&txq->lock);
	/* A slot is free again: EPOLLOUT for a poller that waits for one. */
	wake_up_poll(&txq->wq, EPOLLOUT | EPOLLWRNORM);
	netgpu_tx_req_free(req);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_tx_req_abort);

/**
 * netgpu_tx_flush() - wait for completed sends to let their memory go
 *
 * Context: Process context, may sleep.
 */
VISIBLE_IF_KUNIT void netgpu_tx_flush(void)
{
	flush_work(&netgpu_tx_done_wk);
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_tx_flush);

/*
 * The region of each range, held by @req: a range starts in a region
 * attached to @mc and ends in it.
 */
static int netgpu_tx_resolve(struct netgpu_memctx *mc, struct netgpu_tx_req *req,
			     const struct netgpu_send_iov *iov, u32 nr_iov,
			     struct netgpu_region **rs)
{
	struct netgpu_mem_loc loc;
	struct netgpu_region *r;
	unsigned int j;
	u32 i;
	int err;

	for (i = 0; i < nr_iov; i++) {
		if (!iov[i].len || iov[i].addr + iov[i].len < iov[i].addr)
			return -EINVAL;
		rcu_read_lock();
		err = netgpu_memctx_lookup(mc, iov[i].addr, &loc);
		if (err)
			goto unlock;
		r = loc.r;
		if (!netgpu_region_cpu_writable(r)) {
			err = -EOPNOTSUPP;
			goto unlock;
		}
		if (iov[i].len > r->len - loc.off) {
			err = -EINVAL;
			goto unlock;
		}
		rs[i] = r;
		for (j = 0; j < req->nr_regions; j++)
			if (req->regions[j] == r)
				goto unlock;
		if (netgpu_region_tryget(r))
			req->regions[req->nr_regions++] = r;
		else
			err = -ENODEV;
unlock:
		rcu_read_unlock();
		if (err)
			return err;
	}
	return 0;
}

/*
 * [@addr, @addr + @len) of @r into the socket, a chunk of pages at a time,
 * the socket locked by the caller.
 * Return: 0 when all of it went, 1 when the socket took less (the send
 * ends there), or the error of a chunk nothing of which went.
 */
static int netgpu_tx_push(struct sock *sk, struct netgpu_tx_req *req,
			  struct netgpu_region *r, u64 addr, u64 len,
			  int flags, bool last, struct netgpu_tx_scratch *sc,
			  u64 *sent)
{
	struct msghdr msg = { .msg_ubuf = &req->ubuf };
	unsigned int off, n, k;
	size_t bytes, seg;
	int got, ret;

	while (len) {
		off = addr & (PAGE_SIZE - 1);
		n = min_t(u64, DIV_ROUND_UP_ULL(off + len, PAGE_SIZE),
			  NETGPU_TX_CHUNK);
		/* fail_netgpu_tx: as a region revoked under the send */
		if (netgpu_should_fail(NETGPU_FAIL_TX))
			return -ENODEV;
		got = netgpu_region_get_pages(r, addr - off, sc->pages, n);
		if (got <= 0)
			return got ? got : -EFAULT;
		bytes = 0;
		for (k = 0; k < got; k++) {
			seg = min_t(u64, PAGE_SIZE - off, len - bytes);
			bvec_set_page(&sc->bv[k], sc->pages[k], seg, off);
			bytes += seg;
			off = 0;
		}
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, sc->bv, got, bytes);
		msg.msg_flags = flags | MSG_ZEROCOPY | MSG_NOSIGNAL;
		if (!last || bytes < len)
			msg.msg_flags |= MSG_MORE;
		ret = tcp_sendmsg_locked(sk, &msg, bytes);
		for (k = 0; k < got; k++)
			put_page(sc->pages[k]);
		if (ret < 0)
			return ret;
		*sent += ret;
		if ((size_t)ret < bytes)
			return 1;
		addr += ret;
		len -= ret;
	}
	return 0;
}

/*
 * The ranges, in order, into @sock under one hold of its lock: the LSM's
 * sendmsg check first (as sock_sendmsg() makes it), then
 * tcp_sendmsg_locked() a chunk at a time on a socket that is still
 * plain TCP.  0, or the error that ended the send (*@sent tells whether
 * anything went before it).
 */
static int netgpu_tx_send_locked(struct socket *sock, struct netgpu_tx_req *req,
				 const struct netgpu_send_iov *iov, u32 nr_iov,
				 int msg_flags, u32 flags,
				 struct netgpu_tx_scratch *sc, u64 *sent)
{
	struct msghdr msg = {};
	struct sock *sk = sock->sk;
	u64 total = 0;
	int err;
	u32 i;

	for (i = 0; i < nr_iov; i++)
		total += iov[i].len;
	err = security_socket_sendmsg(sock, &msg, min_t(u64, total, INT_MAX));
	if (err)
		return err;
	lock_sock(sk);
	if (READ_ONCE(sk->sk_prot)->sendmsg != tcp_sendmsg)
		err = -EOPNOTSUPP;
	for (i = 0; !err && i < nr_iov; i++)
		err = netgpu_tx_push(sk, req, sc->rs[i], iov[i].addr, iov[i].len,
				     msg_flags, i == nr_iov - 1 &&
				     !(flags & NETGPU_SEND_MORE), sc, sent);
	release_sock(sk);
	return err;
}

/**
 * netgpu_txq_send() - NETGPU_SOCKQ_IOCTL_SEND
 * @txq: the socket queue's completion ring
 * @mc: the memory of the context whose regions the ranges are in
 * @sock: the TCP socket
 * @iov: @nr_iov ranges (in kernel memory)
 * @nr_iov: 1 to NETGPU_SEND_MAX_IOV
 * @user_data: what the completion says
 * @flags: NETGPU_SEND_NONBLOCK (do not wait for room in the send
 *	buffer), NETGPU_SEND_MORE (more follows: MSG_MORE on the last bytes)
 * @bytes: out: bytes put in the socket
 *
 * Checks every range before sending any byte; then sends them in order
 * until the socket takes less than it was given.  A send that put a byte
 * in the socket completes exactly once on the ring; one that put none
 * gives its slot back and completes never.
 *
 * Context: Process context, may sleep.  Takes the socket lock, once for
 * the whole send (so that nothing another sender writes on the socket
 * lands between its chunks, unless it waits for room in the send buffer,
 * where tcp_sendmsg() lets go of the lock too).
 * Return: 0 with *@bytes > 0; else an error as the uapi header lists,
 * -EOPNOTSUPP for a socket no longer plain TCP (checked under the lock).
 */
int netgpu_txq_send(struct netgpu_txq *txq, struct netgpu_memctx *mc,
		    struct socket *sock, const struct netgpu_send_iov *iov,
		    u32 nr_iov, u64 user_data, u32 flags, u64 *bytes)
{
	struct netgpu_tx_scratch *sc;
	struct netgpu_tx_req *req;
	int msg_flags = flags & NETGPU_SEND_NONBLOCK ? MSG_DONTWAIT : 0;
	u64 sent = 0;
	int err = 0;

	*bytes = 0;
	if (!nr_iov || nr_iov > NETGPU_SEND_MAX_IOV)
		return -EINVAL;
	sc = kmalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc)
		return -ENOMEM;
	req = netgpu_tx_req_alloc(txq, user_data);
	if (IS_ERR(req)) {
		kfree(sc);
		return PTR_ERR(req);
	}
	err = netgpu_tx_resolve(mc, req, iov, nr_iov, sc->rs);
	if (!err)
		err = netgpu_tx_send_locked(sock, req, iov, nr_iov, msg_flags,
					    flags, sc, &sent);
	kfree(sc);

	/* No skb took the send: no completion. */
	if (!sent && refcount_dec_if_one(&req->ubuf.refcnt)) {
		netgpu_tx_req_abort(req);
		return err < 0 ? err : -EAGAIN;
	}
	atomic64_inc(&txq->sends);
	atomic64_add(sent, &txq->bytes);
	*bytes = sent;
	/* The sender's reference; the last skb's completes the send. */
	netgpu_tx_ubuf_complete(NULL, &req->ubuf, true);
	return 0;
}
EXPORT_SYMBOL_GPL(netgpu_txq_send);

/**
 * netgpu_txq_poll() - the transmit side's poll() bits
 * @txq: the txq
 * @file: the socket queue's file
 * @wait: poll table
 *
 * Context: Process context.
 * Return: ``EPOLLRDBAND`` while the completion ring holds entries user
 * space has not consumed; ``EPOLLOUT | EPOLLWRNORM`` while it has room
 * for one more send (the socket's own EPOLLOUT says whether the send
 * buffer has).
 */
__poll_t netgpu_txq_poll(struct netgpu_txq *txq, struct file *file,
			 poll_table *wait)
{
	struct netgpu_ring *ring = netgpu_queue_ring(txq->cq);
	__poll_t mask = 0;
	u32 used;

	poll_wait(file, &txq->wq, wait);
	used = READ_ONCE(ring->prod) - READ_ONCE(ring->cons);
	if (used)
		mask |= EPOLLRDBAND;
	if (min(used, netgpu_queue_nentries(txq->cq)) + READ_ONCE(txq->pending) <
	    netgpu_queue_nentries(txq->cq))
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}
EXPORT_SYMBOL_GPL(netgpu_txq_poll);

/**
 * netgpu_txq_get_stats() - add a txq's counters
 * @txq: the txq
 * @st: the sums to add to
 *
 * Context: Any context.
 */
void netgpu_txq_get_stats(struct netgpu_txq *txq, struct netgpu_stats *st)
{
	st->tx_sends += atomic64_read(&txq->sends);
	st->tx_bytes += atomic64_read(&txq->bytes);
	st->tx_completions += atomic64_read(&txq->completions);
	st->tx_copied += atomic64_read(&txq->copied);
	st->tx_pending += READ_ONCE(txq->pending);
	st->tx_lost += atomic64_read(&txq->lost);
}
EXPORT_SYMBOL_GPL(netgpu_txq_get_stats);
