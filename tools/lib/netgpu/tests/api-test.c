// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api-test: libnetgpu's argument checking, error strings and ioctl
 * arguments, without a kernel.
 *
 * Built twice.  Against libnetgpu.a (NG_HOOKS) a fake ioctl() stands in
 * for the kernel: it checks every argument struct the library passes
 * (reserved fields zero, sizes, flags), answers with ring geometries and
 * memfds to map (the real offsets: the rx ring's is 2 GiB), bad
 * geometries that must give -EPROTO without leaking the fd, and RECV
 * statuses for netgpu_rx_loop()'s recv() path (a socketpair).  Against
 * libnetgpu.so, the checks that need no hook: the exported ABI works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef NG_HOOKS
#include "netgpu_priv.h"
#else
#include "netgpu.h"
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		fprintf(stderr, "api-test: %s:%d: FAILED: %s\n",	\
			__func__, __LINE__, #cond);			\
		failures++;						\
	}								\
} while (0)

/* ===== Without a kernel: arguments the library refuses itself ===== */

static void check_args(void)
{
	struct netgpu_send_iov iov = { .addr = 4096, .len = 0 };
	struct netgpu_rx_ops ops = {};
	struct netgpu_ifq *ifq = (void *)1;
	struct netgpu_sockq *sq = (void *)1;
	struct netgpu_ring_info ri;
	struct netgpu_stats st;
	struct netgpu_recv r;
	long page = sysconf(_SC_PAGESIZE);
	char *mem = (char *)(uintptr_t)(16 * page);
	uint64_t bytes = 1, a = 0;

	CHECK(netgpu_area_add_host(-1, mem, page) == -EBADF);
	CHECK(netgpu_area_add_host(3, NULL, page) == -EINVAL);
	CHECK(netgpu_area_add_host(3, mem, 0) == -EINVAL);
	CHECK(netgpu_area_add_host(3, mem + 1, page) == -EINVAL);
	CHECK(netgpu_area_add_host(3, mem, page + 1) == -EINVAL);
	CHECK(netgpu_area_add_dmabuf(-1, 4, 0, 0) == -EBADF);
	CHECK(netgpu_area_add_dmabuf(3, -1, 0, 0) == -EBADF);
	CHECK(netgpu_area_add_dmabuf(3, 4, 100, 0) == -EINVAL);
	CHECK(netgpu_area_remove(-1, 1) == -EBADF);
	CHECK(netgpu_area_remove(3, 0) == -EINVAL);

	CHECK(netgpu_ctx_attach_dev(-1, 1) == -EBADF);
	CHECK(netgpu_ctx_attach_dev(3, 0) == -ENODEV);
	CHECK(netgpu_ctx_attach_dev(3, -5) == -ENODEV);
	CHECK(netgpu_ctx_attach_region(-1, 3, 1) == -EBADF);
	CHECK(netgpu_ctx_attach_region(3, -1, 1) == -EBADF);
	CHECK(netgpu_ctx_attach_region(3, 4, 0) == -EINVAL);
	CHECK(netgpu_ctx_detach_region(3, -1, 1) == -EBADF);
	CHECK(netgpu_ctx_detach_region(3, 4, 0) == -EINVAL);

	CHECK(netgpu_ifq_bind(3, 0, 64, NULL) == -EINVAL);
	CHECK(netgpu_ifq_bind(3, -2, 64, &ifq) == -EINVAL);
	CHECK(netgpu_ifq_bind(-1, 0, 64, &ifq) == -EBADF);
	CHECK(netgpu_ifq_bind(3, 0, 0, &ifq) == -EINVAL);
	CHECK(netgpu_ifq_bind(3, 0, NETGPU_QUEUE_MAX_ENTRIES + 1, &ifq) ==
	      -E2BIG);
	CHECK(ifq == (void *)1);	/* untouched on error */
	CHECK(netgpu_sockq_attach(3, 4, 64, 0, NULL) == -EINVAL);
	CHECK(netgpu_sockq_attach(-1, 4, 64, 0, &sq) == -EBADF);
	CHECK(netgpu_sockq_attach(3, -1, 64, 0, &sq) == -EBADF);
	CHECK(netgpu_sockq_attach(3, 4, 0, 0, &sq) == -EINVAL);
	CHECK(netgpu_sockq_attach(3, 4, NETGPU_QUEUE_MAX_ENTRIES + 1, 0, &sq) ==
	      -E2BIG);
	CHECK(netgpu_sockq_attach(3, 4, 64, NETGPU_QUEUE_MAX_ENTRIES + 1,
				  &sq) == -E2BIG);
	CHECK(sq == (void *)1);

	/* NULL handles */
	netgpu_ifq_close(NULL);
	netgpu_sockq_close(NULL);
	CHECK(netgpu_ifq_fd(NULL) == -EINVAL);
	CHECK(netgpu_ifq_queue_id(NULL) == 0);
	CHECK(netgpu_sockq_fd(NULL) == -EINVAL);
	CHECK(netgpu_fill_nb_free(NULL) == -EINVAL);
	CHECK(netgpu_fill_submit(NULL, &a, 1) == -EINVAL);
	CHECK(netgpu_fill_submit_all(NULL, &a, 1, 0) == -EINVAL);
	CHECK(netgpu_fill_pending(NULL, NULL, 0) == -EINVAL);
	CHECK(netgpu_fill_pending(ifq, NULL, 1) == -EINVAL);
	CHECK(netgpu_rx_nb_avail(NULL) == -EINVAL);
	CHECK(netgpu_rx_peek(NULL, NULL, 0) == -EINVAL);
	CHECK(netgpu_rx_release(NULL, 0) == -EINVAL);
	CHECK(netgpu_cq_nb_avail(NULL) == -EINVAL);
	CHECK(netgpu_cq_peek(NULL, &a, 1) == -EINVAL);
	CHECK(netgpu_cq_release(NULL, 0) == -EINVAL);
	CHECK(netgpu_cq_wait(NULL, 0) == -EINVAL);
	CHECK(netgpu_fill_info(NULL, &ri) == -EINVAL);
	CHECK(netgpu_rx_info(NULL, &ri) == -EINVAL);
	CHECK(netgpu_cq_info(NULL, &ri) == -EINVAL);
	CHECK(netgpu_sockq_recv(NULL, 0, &r) == -EINVAL);
	CHECK(netgpu_sockq_send(NULL, &iov, 1, 0, 0, &bytes) == -EINVAL);
	CHECK(bytes == 0);
	CHECK(netgpu_rx_loop(NULL, NULL, &ops, NULL) == -EINVAL);
	CHECK(netgpu_get_stats(-1, &st) == -EBADF);
	CHECK(netgpu_get_stats(3, NULL) == -EINVAL);
}

static void check_strerror(void)
{
	static const struct { int err; const char *has; } t[] = {
		{ EPERM, "CAP_NET_ADMIN" }, { ENODEV, "interface queue" },
		{ EBUSY, "region id" }, { EEXIST, "overlapping" },
		{ EINVAL, "completion ring" },
		{ E2BIG, "NETGPU_QUEUE_MAX_ENTRIES" }, { ENOTTY, "netgpu fd" },
		{ EXDEV, "network namespace" }, { ENOTCONN, "listening" },
		{ ENOBUFS, "completion ring is full" },
		{ EOPNOTSUPP, "dma-buf" }, { EFAULT, "another context" },
		{ EAGAIN, "NETGPU_RECV_NONBLOCK" }, { ENOMEM, "RLIMIT_MEMLOCK" },
		{ EPROTO, "ABI" }, { ENOENT, "region" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		CHECK(strstr(netgpu_strerror(-t[i].err), t[i].has));
		/* Positive or negative: the same text. */
		CHECK(netgpu_strerror(t[i].err) == netgpu_strerror(-t[i].err));
		/* And it starts with the C library's words. */
		CHECK(!strncmp(netgpu_strerror(t[i].err), strerror(t[i].err),
			       strlen(strerror(t[i].err))));
	}
	CHECK(!strcmp(netgpu_strerror(-EISDIR), strerror(EISDIR)));
	CHECK(!strcmp(netgpu_strerror(0), "Success"));
}

#ifdef NG_HOOKS
/* ===== A fake kernel behind the ioctls ===== */

enum { GEOM_OK, GEOM_NOT_POW2, GEOM_SHORT, GEOM_ENTRY_SIZE, GEOM_FEWER };

static struct {
	int geom;			/* how to answer BIND and ATTACH */
	int last_fd;			/* the memfd handed out */
	unsigned long last_req;
	uint32_t recv_status[4];	/* RECV answers, in turn, then EOF */
	int recv_calls;
	int wakeups;			/* NETGPU_IFQ_IOCTL_WAKEUP calls */
} fk;

static int zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return 0;
	return 1;
}

/* Answer a ring geometry the way GEOM_* says; 0 or -1. */
static int fake_geom(struct netgpu_queue_geom *g, uint64_t off, int fd)
{
	struct stat sb;
	uint64_t size;

	if (g->mmap_offset || g->mmap_size || !g->entries)
		return -1;
	while (g->entries & (g->entries - 1))
		g->entries++;
	g->mmap_offset = off;
	size = sizeof(struct netgpu_ring) + (uint64_t)g->entries * g->entry_size;
	g->mmap_size = (size + 4095) & ~4095ULL;
	switch (fk.geom) {
	case GEOM_NOT_POW2:
		g->entries += 1;
		break;
	case GEOM_SHORT:
		g->mmap_size = sizeof(struct netgpu_ring);
		break;
	case GEOM_ENTRY_SIZE:
		g->entry_size *= 2;
		break;
	case GEOM_FEWER:
		g->entries /= 2;
		break;
	}
	/* Grow the file to cover the ring, never shrink it. */
	if (fstat(fd, &sb))
		return -1;
	size = off + g->mmap_size + 4096;
	return (uint64_t)sb.st_size >= size || !ftruncate(fd, size) ? 0 : -1;
}

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	fk.last_req = req;
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	switch (req) {
	case NETGPU_MEM_IOCTL_ADD_REGION: {
		struct netgpu_add_region *ar = arg;

		CHECK(!ar->flags && !ar->pad && zero(ar->resv, sizeof(ar->resv)));
		CHECK(ar->type == NETGPU_REGION_HOST ? !ar->dmabuf_fd :
		      ar->type == NETGPU_REGION_DMABUF);
		return 7;
	}
	case NETGPU_MEM_IOCTL_REMOVE_REGION: {
		struct netgpu_remove_region *rr = arg;

		CHECK(rr->region_id == 7 && !rr->flags && !rr->resv);
		return 0;
	}
	case NETGPU_CTX_IOCTL_ATTACH_DEV: {
		struct netgpu_attach_dev *ad = arg;

		CHECK(ad->ifindex == 2 && !ad->flags && !ad->resv);
		return 0;
	}
	case NETGPU_CTX_IOCTL_ATTACH_REGION:
	case NETGPU_CTX_IOCTL_DETACH_REGION: {
		struct netgpu_attach_region *at = arg;

		CHECK(at->mem_fd == 5 && at->region_id == 7 && !at->flags &&
		      !at->pad && !at->resv);
		return 0;
	}
	case NETGPU_CTX_IOCTL_BIND_QUEUE: {
		struct netgpu_bind_queue *bq = arg;
		int mfd = memfd_create("fill", MFD_CLOEXEC);

		CHECK(zero(bq->resv, sizeof(bq->resv)));
		CHECK(bq->flags == NETGPU_BIND_QUEUE_ANY ? !bq->queue_id :
		      !bq->flags);
		CHECK(bq->fill.entry_size == 8);
		if (bq->flags)
			bq->queue_id = 3;
		if (mfd < 0 || fake_geom(&bq->fill, NETGPU_OFF_FILL_RING, mfd))
			return -1;
		fk.last_fd = mfd;
		return mfd;
	}
	case NETGPU_CTX_IOCTL_ATTACH_SOCKET: {
		struct netgpu_attach_socket *as = arg;
		int mfd = memfd_create("sockq", MFD_CLOEXEC);

		CHECK(as->sock_fd == 4 && !as->flags &&
		      zero(as->resv, sizeof(as->resv)));
		CHECK(as->rx.entry_size == sizeof(struct netgpu_rx_desc));
		if (mfd < 0 || fake_geom(&as->rx, NETGPU_OFF_RX_RING, mfd))
			return -1;
		if (as->completion.entries || as->completion.entry_size) {
			CHECK(as->completion.entry_size == 8);
			if (fake_geom(&as->completion,
				      NETGPU_OFF_COMPLETION_RING, mfd))
				return -1;
		}
		fk.last_fd = mfd;
		return mfd;
	}
	case NETGPU_SOCKQ_IOCTL_RECV: {
		struct netgpu_recv *r = arg;

		CHECK(r->flags == NETGPU_RECV_NONBLOCK && !r->status &&
		      !r->descs && !r->copies && !r->bytes &&
		      zero(r->resv, sizeof(r->resv)));
		r->status = fk.recv_calls < 4 ? fk.recv_status[fk.recv_calls] :
			    NETGPU_RECV_EOF;
		fk.recv_calls++;
		return 0;
	}
	case NETGPU_SOCKQ_IOCTL_SEND: {
		struct netgpu_send *s = arg;
		const struct netgpu_send_iov *iov =
			(const void *)(uintptr_t)s->iov;

		CHECK(s->nr_iov == 2 && s->user_data == 99 &&
		      s->flags == NETGPU_SEND_MORE && !s->bytes &&
		      zero(s->resv, sizeof(s->resv)));
		s->bytes = iov[0].len + iov[1].len;
		return 0;
	}
	case NETGPU_IFQ_IOCTL_WAKEUP:
		CHECK(fd == fk.last_fd && !arg);
		fk.wakeups++;
		/* The library must not pass this on: errno as it was. */
		errno = EOPNOTSUPP;
		return -1;
	case NETGPU_IOCTL_GET_STATS: {
		struct netgpu_stats *st = arg;

		CHECK(zero(st, sizeof(*st)));
		st->tx_lost = 0;
		st->rx_descs = 42;
		return 0;
	}
	}
	errno = ENOTTY;
	return -1;
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/*
 * The fake kernel's end of a ring: the header of the queue's memfd at
 * @off, mapped a second time (the geometries above are one page).
 */
static struct netgpu_ring *kernel_end(int fd, uint64_t off)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)off);

	return p == MAP_FAILED ? NULL : p;
}

/* netgpu_*_info(): @ri is the geometry fake_geom() answered. */
static int info_is(const struct netgpu_ring_info *ri, uint32_t entries,
		   uint32_t entry_size, uint64_t off)
{
	return ri->geom.entries == entries &&
	       ri->geom.entry_size == entry_size &&
	       ri->geom.mmap_offset == off && ri->geom.mmap_size == 4096 &&
	       !ri->pad;
}

/*
 * The ring diagnostics: the geometry as answered, and the header's words
 * as they are in the shared mapping now (what the kernel wrote behind
 * the library's back included), not the library's cached indices.
 */
static void check_info(void)
{
	struct netgpu_ring *k, *kcq;
	struct netgpu_ring_info ri;
	struct netgpu_ifq *ifq = NULL;
	struct netgpu_sockq *sq = NULL;
	uint64_t c[4] = { 4096, 8192, 12288, 16384 };

	netgpu__sys.ioctl = fake_ioctl;
	CHECK(netgpu_ifq_bind(3, 0, 60, &ifq) == 0);
	CHECK(netgpu_fill_info(ifq, NULL) == -EINVAL);
	CHECK(netgpu_fill_info(ifq, &ri) == 0);
	CHECK(info_is(&ri, 64, 8, NETGPU_OFF_FILL_RING));
	CHECK(!ri.prod && !ri.cons && !ri.flags);
	CHECK(netgpu_fill_submit(ifq, c, 4) == 4);
	k = kernel_end(netgpu_ifq_fd(ifq), NETGPU_OFF_FILL_RING);
	CHECK(k != NULL);
	if (k) {
		__atomic_store_n(&k->cons, 3, __ATOMIC_RELEASE);
		__atomic_store_n(&k->flags, 0x5, __ATOMIC_RELAXED);
		CHECK(netgpu_fill_info(ifq, &ri) == 0);
		CHECK(ri.prod == 4 && ri.cons == 3 && ri.flags == 0x5);
		/*
		 * ->prod: what the library published last.  The queue
		 * starved (NETGPU_RING_NEED_WAKEUP): the submit kicks it,
		 * once, and a failed kick is not the submit's error.
		 */
		fk.wakeups = 0;
		errno = 0;
		CHECK(netgpu_fill_submit(ifq, c, 4) == 4);
		CHECK(fk.wakeups == 1 && errno == 0);
		CHECK(netgpu_fill_info(ifq, &ri) == 0 && ri.prod == 8);
		/* Only bits the library does not know: no kick. */
		__atomic_store_n(&k->cons, 8, __ATOMIC_RELEASE);
		__atomic_store_n(&k->flags, 0x4, __ATOMIC_RELAXED);
		CHECK(netgpu_fill_submit(ifq, c, 1) == 1);
		CHECK(fk.wakeups == 1);
		munmap(k, 4096);
	}
	netgpu_ifq_close(ifq);

	/* A socket queue without a completion ring: no cq to report. */
	CHECK(netgpu_sockq_attach(3, 4, 60, 0, &sq) == 0);
	CHECK(netgpu_cq_info(sq, &ri) == -EINVAL);
	CHECK(netgpu_rx_info(sq, NULL) == -EINVAL);
	CHECK(netgpu_rx_info(sq, &ri) == 0);
	CHECK(info_is(&ri, 64, sizeof(struct netgpu_rx_desc),
		      NETGPU_OFF_RX_RING));
	netgpu_sockq_close(sq);

	CHECK(netgpu_sockq_attach(3, 4, 60, 5, &sq) == 0);
	CHECK(netgpu_cq_info(sq, NULL) == -EINVAL);
	CHECK(netgpu_cq_info(sq, &ri) == 0);
	CHECK(info_is(&ri, 8, 8, NETGPU_OFF_COMPLETION_RING));
	CHECK(!ri.prod && !ri.cons && !ri.flags);
	k = kernel_end(netgpu_sockq_fd(sq), NETGPU_OFF_RX_RING);
	kcq = kernel_end(netgpu_sockq_fd(sq), NETGPU_OFF_COMPLETION_RING);
	CHECK(k && kcq);
	if (k && kcq) {
		/* Each ring its own header. */
		__atomic_store_n(&k->prod, 7, __ATOMIC_RELEASE);
		__atomic_store_n(&kcq->prod, 2, __ATOMIC_RELEASE);
		__atomic_store_n(&kcq->flags, 0x80, __ATOMIC_RELAXED);
		CHECK(netgpu_rx_info(sq, &ri) == 0);
		CHECK(ri.prod == 7 && !ri.cons && !ri.flags);
		CHECK(netgpu_cq_info(sq, &ri) == 0);
		CHECK(ri.prod == 2 && !ri.cons && ri.flags == 0x80);
		CHECK(netgpu_cq_peek(sq, c, 4) == 2 &&
		      netgpu_cq_release(sq, 2) == 0);
		CHECK(netgpu_cq_info(sq, &ri) == 0);
		CHECK(ri.prod == 2 && ri.cons == 2);
	}
	if (k)
		munmap(k, 4096);
	if (kcq)
		munmap(kcq, 4096);
	netgpu_sockq_close(sq);
	netgpu__sys.ioctl = NULL;
}

static void check_ioctls(void)
{
	struct netgpu_send_iov iov[2] = { { 4096, 10 }, { 8192, 20 } };
	long page = sysconf(_SC_PAGESIZE);
	struct netgpu_ifq *ifq = NULL;
	struct netgpu_sockq *sq = NULL;
	struct netgpu_stats st;
	uint64_t bytes, c[4] = { 4096, 8192, 12288, 16384 };
	int geom;

	netgpu__sys.ioctl = fake_ioctl;
	CHECK(netgpu_area_add_host(5, (void *)(uintptr_t)page, page) == 7);
	CHECK(netgpu_area_add_dmabuf(5, 9, 1ULL << 44, 0) == 7);
	CHECK(netgpu_area_remove(5, 7) == 0);
	CHECK(netgpu_ctx_attach_dev(3, 2) == 0);
	CHECK(netgpu_ctx_attach_region(3, 5, 7) == 0);
	CHECK(fk.last_req == NETGPU_CTX_IOCTL_ATTACH_REGION);
	CHECK(netgpu_ctx_detach_region(3, 5, 7) == 0);
	CHECK(fk.last_req == NETGPU_CTX_IOCTL_DETACH_REGION);
	CHECK(netgpu_get_stats(3, &st) == 0 && st.rx_descs == 42);
	CHECK(netgpu_get_stats(1000, &st) == 0);

	/* Geometries the ABI rules out: -EPROTO, and no fd left open. */
	for (geom = GEOM_NOT_POW2; geom <= GEOM_FEWER; geom++) {
		fk.geom = geom;
		CHECK(netgpu_ifq_bind(3, NETGPU_LIB_QUEUE_ANY, 60, &ifq) ==
		      -EPROTO);
		CHECK(!fd_open(fk.last_fd) && !ifq);
		CHECK(netgpu_sockq_attach(3, 4, 60, 0, &sq) == -EPROTO);
		CHECK(!fd_open(fk.last_fd) && !sq);
	}
	fk.geom = GEOM_OK;

	/* Mapped: the rings work, the fd closes with the handle. */
	CHECK(netgpu_ifq_bind(3, NETGPU_LIB_QUEUE_ANY, 60, &ifq) == 0);
	CHECK(ifq && netgpu_ifq_queue_id(ifq) == 3);
	CHECK(netgpu_ifq_fd(ifq) == fk.last_fd && fd_open(fk.last_fd));
	CHECK(netgpu_fill_nb_free(ifq) == 64);
	CHECK(netgpu_fill_submit(ifq, c, 4) == 4);
	CHECK(netgpu_fill_nb_free(ifq) == 60);
	netgpu_ifq_close(ifq);
	CHECK(!fd_open(fk.last_fd));

	CHECK(netgpu_sockq_attach(3, 4, 60, 0, &sq) == 0);
	CHECK(netgpu_sockq_fd(sq) == fk.last_fd);
	CHECK(netgpu_rx_nb_avail(sq) == 0);
	CHECK(netgpu_cq_nb_avail(sq) == -EINVAL);	/* no completion ring */
	CHECK(netgpu_cq_peek(sq, c, 4) == -EINVAL);
	CHECK(netgpu_cq_release(sq, 0) == -EINVAL);
	CHECK(netgpu_sockq_send(sq, iov, 2, 99, NETGPU_SEND_MORE, &bytes) ==
	      -EINVAL);
	netgpu_sockq_close(sq);
	CHECK(!fd_open(fk.last_fd));

	CHECK(netgpu_sockq_attach(3, 4, 60, 5, &sq) == 0);
	CHECK(netgpu_cq_nb_avail(sq) == 0);
	CHECK(netgpu_cq_peek(sq, c, 4) == 0);
	CHECK(netgpu_sockq_send(sq, iov, 0, 99, 0, &bytes) == -EINVAL);
	CHECK(netgpu_sockq_send(sq, iov, NETGPU_SEND_MAX_IOV + 1, 99, 0,
				&bytes) == -EINVAL);
	CHECK(netgpu_sockq_send(sq, iov, 2, 99, 1U << 7, &bytes) == -EINVAL);
	iov[1].len = 0;
	CHECK(netgpu_sockq_send(sq, iov, 2, 99, 0, &bytes) == -EINVAL);
	iov[1].len = 20;
	CHECK(netgpu_sockq_send(sq, iov, 2, 99, NETGPU_SEND_MORE, &bytes) ==
	      0 && bytes == 30);
	CHECK(netgpu_sockq_send(sq, iov, 2, 99, NETGPU_SEND_MORE, NULL) == 0);
	netgpu_sockq_close(sq);
	CHECK(!fd_open(fk.last_fd));
	netgpu__sys.ioctl = NULL;
}

/* ===== netgpu_rx_loop(): bytes in ordinary memory ===== */

static uint64_t got_bytes;

static int no_descs(void *arg, const struct netgpu_rx_desc *d, uint32_t n)
{
	(void)arg;
	(void)d;
	(void)n;
	return -EIO;	/* the ring stays empty */
}

static int some_bytes(void *arg, const void *buf, size_t len)
{
	/* arg: the text written into the socket */
	CHECK(!memcmp(buf, arg, len));
	got_bytes += len;
	return 0;
}

static int stop_bytes(void *arg, const void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 5;
}

static void check_loop_bytes(void)
{
	static const char text[] = "bytes the NIC did not split";
	struct netgpu_rx_ops ops = { no_descs, some_bytes, 1000 };
	struct netgpu_ifq *ifq;
	struct netgpu_sockq *sq;
	int sv[2];

	netgpu__sys.ioctl = fake_ioctl;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(netgpu_ifq_bind(3, 0, 8, &ifq) == 0);
	CHECK(netgpu_sockq_attach(3, 4, 8, 0, &sq) == 0);
	((struct netgpu_sockq *)sq)->sock_fd = sv[0];

	/* READABLE twice (the second: nothing left, recv() says EAGAIN). */
	CHECK(write(sv[1], text, sizeof(text)) == sizeof(text));
	fk.recv_calls = 0;
	fk.recv_status[0] = NETGPU_RECV_READABLE;
	fk.recv_status[1] = NETGPU_RECV_READABLE | NETGPU_RECV_NO_BUFFERS;
	fk.recv_status[2] = 0;
	CHECK(netgpu_rx_loop(sq, ifq, &ops, (void *)text) == 0);
	CHECK(got_bytes == sizeof(text));

	/* Without a bytes callback: -ENOBUFS. */
	ops.bytes = NULL;
	fk.recv_calls = 0;
	CHECK(netgpu_rx_loop(sq, ifq, &ops, (void *)text) == -ENOBUFS);
	/* A callback's stop value comes back. */
	ops.bytes = stop_bytes;
	fk.recv_calls = 0;
	CHECK(write(sv[1], text, 4) == 4);
	CHECK(netgpu_rx_loop(sq, ifq, &ops, (void *)text) == 5);
	/* The socket's end: the loop ends as at EOF. */
	ops.bytes = some_bytes;
	fk.recv_calls = 0;
	close(sv[1]);
	CHECK(netgpu_rx_loop(sq, ifq, &ops, (void *)text) == 0 &&
	      fk.recv_calls == 1);

	netgpu_sockq_close(sq);
	netgpu_ifq_close(ifq);
	close(sv[0]);
	netgpu__sys.ioctl = NULL;
}
#endif /* NG_HOOKS */

int main(void)
{
	check_args();
	check_strerror();
#ifdef NG_HOOKS
	{
		struct netgpu__sys saved = netgpu__sys;

		check_ioctls();
		check_info();
		check_loop_bytes();
		netgpu__sys = saved;
	}
#endif
	printf("api-test: %d of %d checks passed%s\n", checks - failures,
	       checks, failures ? ": FAILED" : "");
	return !!failures;
}
