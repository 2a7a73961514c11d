// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ring-test: libnetgpu's rings against a fake kernel, without a kernel.
 *
 * Each ring is a heap allocation of the uapi layout (&struct netgpu_ring,
 * then the entries), its indices started just below 2^32 so that they
 * wrap.  One thread plays the kernel's end with the protocol of
 * lib/netgpu/queue.h, one is the library's user:
 *
 *   check_fill     the user submits seeded addresses, the kernel consumes;
 *                  netgpu_fill_pending() names the last ones submitted
 *   check_rx       the kernel produces seeded descriptors, the user peeks
 *                  and releases them in random batches
 *   check_cq       the same for completions, with netgpu_cq_wait()
 *   check_rx_loop  netgpu_rx_loop() over a fake RECV: the kernel writes a
 *                  seeded stream into page buffers, describes it in the rx
 *                  ring and takes the buffers back from the fill ring
 *
 * and every entry must arrive once and in order.  check_full_empty and
 * check_bad_index do the same single-threaded at the edges.
 *
 * The fake kernel accesses the slots with PLAIN loads and stores, and its
 * own index loads are acquires (not the kernel's control dependency):
 * correct code needs no more, and it makes every ordering of the
 * library's end visible to ThreadSanitizer.  A library ordering (A)-(D)
 * weakened to relaxed leaves a plain slot access of the kernel unordered
 * against the library's atomic one: a data race TSan reports
 * (tests/weaken checks each).  The payload of check_rx_loop is plain on
 * both sides, as a NIC's DMA and the application's reads would be.
 *
 * usage: ring-test [-n ITERATIONS] [-s SEED]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netgpu_priv.h"

#define PAGE		4096ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* Ring indices start here, 2^32 - 37: the tests cross the wrap. */
#define START		0xffffffdbU

static unsigned long long seed = 1;
static unsigned long iterations = 200000;
static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "ring-test: %s:%d: %s: ", __func__,	\
			__LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failures++;						\
		abort_test();						\
	}								\
} while (0)

static void abort_test(void)
{
	fprintf(stderr, "ring-test: FAILED (seed %llu)\n", seed);
	exit(1);
}

/* splitmix64: the seeded values, reproducible from the index alone */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t val(uint64_t tag, uint64_t i)
{
	return mix(seed ^ mix(tag ^ mix(i)));
}

static void relax(void)
{
	sched_yield();
}

/* ===== The fake kernel's end ===== */

struct kring {
	struct netgpu_ring *hdr;
	void *slots;
	uint32_t entries;
	uint32_t mask;
	uint32_t cached_prod;		/* producer: own; consumer: peer's */
	uint32_t cached_cons;		/* consumer: own; producer: peer's */
};

static void kring_alloc(struct kring *k, uint32_t entries, size_t esz)
{
	/* aligned_alloc() wants a multiple of the alignment (C11). */
	size_t size = (sizeof(*k->hdr) + entries * esz + NETGPU_RING_ALIGN - 1) &
		      ~(size_t)(NETGPU_RING_ALIGN - 1);

	k->hdr = aligned_alloc(NETGPU_RING_ALIGN, size);
	if (!k->hdr) {
		perror("aligned_alloc");
		exit(1);
	}
	memset(k->hdr, 0, size);
	k->hdr->prod = START;
	k->hdr->cons = START;
	k->slots = k->hdr + 1;
	k->entries = entries;
	k->mask = entries - 1;
	k->cached_prod = START;
	k->cached_cons = START;
}

/* Producer: free slots, from ->cons loaded with acquire. */
static uint32_t kprod_free(struct kring *k)
{
	k->cached_cons = __atomic_load_n(&k->hdr->cons, __ATOMIC_ACQUIRE);
	return k->entries - (k->cached_prod - k->cached_cons);
}

static void kprod_submit(struct kring *k, uint32_t n)
{
	k->cached_prod += n;
	__atomic_store_n(&k->hdr->prod, k->cached_prod, __ATOMIC_RELEASE);
}

/* Consumer: entries, from ->prod loaded with acquire. */
static uint32_t kcons_avail(struct kring *k)
{
	k->cached_prod = __atomic_load_n(&k->hdr->prod, __ATOMIC_ACQUIRE);
	return k->cached_prod - k->cached_cons;
}

static void kcons_release(struct kring *k, uint32_t n)
{
	k->cached_cons += n;
	__atomic_store_n(&k->hdr->cons, k->cached_cons, __ATOMIC_RELEASE);
}

static uint64_t *kslot64(struct kring *k, uint32_t idx)
{
	return (uint64_t *)k->slots + (idx & k->mask);
}

static struct netgpu_rx_desc *kslot_desc(struct kring *k, uint32_t idx)
{
	return (struct netgpu_rx_desc *)k->slots + (idx & k->mask);
}

/* The library's handles around the fake rings. */
static void wrap_ifq(struct netgpu_ifq *ifq, struct kring *fill)
{
	memset(ifq, 0, sizeof(*ifq));
	ifq->fd = -1;
	ifq->page_mask = ~(PAGE - 1);
	if (netgpu__ring_init(&ifq->fill, fill->hdr, 0, fill->entries,
			      sizeof(uint64_t), 1))
		abort_test();
}

static void wrap_sockq(struct netgpu_sockq *sq, struct kring *rx,
		       struct kring *cq)
{
	memset(sq, 0, sizeof(*sq));
	sq->fd = -1;
	sq->sock_fd = -1;
	if (rx && netgpu__ring_init(&sq->rx, rx->hdr, 0, rx->entries,
				    sizeof(struct netgpu_rx_desc), 0))
		abort_test();
	if (cq && netgpu__ring_init(&sq->cq, cq->hdr, 0, cq->entries,
				    sizeof(uint64_t), 0))
		abort_test();
}

/* poll() for the library: ready at once, no synchronization. */
static int fake_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
	nfds_t i;

	(void)timeout_ms;
	relax();
	for (i = 0; i < nfds; i++)
		fds[i].revents = fds[i].events;
	return nfds;
}

/* ===== Single-threaded: full, empty, wrap, bad indices ===== */

static void check_full_empty(void)
{
	struct kring fill, rx;
	struct netgpu_ifq ifq;
	struct netgpu_sockq sq;
	struct netgpu_rx_desc d[20];
	uint64_t a[20], p[20];
	uint32_t i, round;

	kring_alloc(&fill, 16, sizeof(uint64_t));
	kring_alloc(&rx, 16, sizeof(struct netgpu_rx_desc));
	wrap_ifq(&ifq, &fill);
	wrap_sockq(&sq, &rx, NULL);
	for (i = 0; i < 20; i++)
		a[i] = val(1, i);

	/* Four rounds of 16 from START: the indices wrap in the second. */
	for (round = 0; round < 4; round++) {
		CHECK(netgpu_fill_nb_free(&ifq) == 16, "round %u", round);
		CHECK(netgpu_fill_submit(&ifq, a, 5) == 5, "round %u", round);
		CHECK(netgpu_fill_submit(&ifq, a + 5, 15) == 11, "full");
		CHECK(netgpu_fill_nb_free(&ifq) == 0, "full");
		CHECK(netgpu_fill_submit(&ifq, a, 1) == 0, "full");
		CHECK(netgpu_fill_submit(&ifq, a, 0) == 0, "nothing");
		CHECK(kcons_avail(&fill) == 16, "kernel sees 16");
		for (i = 0; i < 16; i++)
			CHECK(*kslot64(&fill, fill.cached_cons + i) == a[i],
			      "fill entry %u", i);
		CHECK(netgpu_fill_pending(&ifq, NULL, 0) == 16, "16 pending");
		kcons_release(&fill, 3);
		/* Not from the cached ->cons: 13, and which ones. */
		memset(p, 0, sizeof(p));
		CHECK(netgpu_fill_pending(&ifq, p, 20) == 13, "13 pending");
		for (i = 0; i < 13; i++)
			CHECK(p[i] == a[3 + i], "pending entry %u", i);
		CHECK(!p[13], "only 13 copied");
		CHECK(netgpu_fill_pending(&ifq, p, 2) == 13, "all counted");
		CHECK(p[0] == a[3] && p[1] == a[4] && p[2] == a[5],
		      "two copied");
		CHECK(netgpu_fill_nb_free(&ifq) == 3, "3 freed");
		kcons_release(&fill, 13);
		CHECK(netgpu_fill_pending(&ifq, p, 20) == 0, "none pending");

		CHECK(netgpu_rx_nb_avail(&sq) == 0, "empty");
		CHECK(netgpu_rx_peek(&sq, d, 20) == 0, "empty");
		CHECK(netgpu_rx_release(&sq, 1) == -EINVAL, "none peeked");
		CHECK(kprod_free(&rx) == 16, "kernel: 16 free");
		for (i = 0; i < 16; i++) {
			struct netgpu_rx_desc *s = kslot_desc(&rx,
							      rx.cached_prod + i);

			s->addr = a[i];
			s->len = i;
			s->flags = i & 1;
		}
		kprod_submit(&rx, 16);
		CHECK(kprod_free(&rx) == 0, "kernel: full");
		CHECK(netgpu_rx_nb_avail(&sq) == 16, "full");
		CHECK(netgpu_rx_peek(&sq, d, 20) == 16, "all 16");
		CHECK(netgpu_rx_peek(&sq, d, 4) == 4, "peek again");
		for (i = 0; i < 4; i++)
			CHECK(d[i].addr == a[i] && d[i].len == i &&
			      d[i].flags == (i & 1), "desc %u", i);
		CHECK(netgpu_rx_release(&sq, 17) == -EINVAL, "too many");
		CHECK(netgpu_rx_release(&sq, 4) == 0, "4");
		CHECK(kprod_free(&rx) == 4, "kernel: 4 free");
		CHECK(netgpu_rx_peek(&sq, d, 20) == 12, "12 left");
		CHECK(d[0].addr == a[4], "in order");
		CHECK(netgpu_rx_release(&sq, 12) == 0, "12");
		CHECK(netgpu_rx_nb_avail(&sq) == 0, "empty");
	}
	CHECK(fill.hdr->prod == START + 64 && rx.hdr->cons == START + 64,
	      "indices wrapped to %u %u", fill.hdr->prod, rx.hdr->cons);
	free(fill.hdr);
	free(rx.hdr);
}

static void check_bad_index(void)
{
	struct kring fill, rx;
	struct netgpu_ifq ifq;
	struct netgpu_sockq sq;
	struct netgpu_rx_desc d[4];
	uint64_t a[4] = { PAGE, 2 * PAGE, 3 * PAGE, 4 * PAGE }, p[4];

	kring_alloc(&fill, 4, sizeof(uint64_t));
	kring_alloc(&rx, 4, sizeof(struct netgpu_rx_desc));
	wrap_ifq(&ifq, &fill);
	wrap_sockq(&sq, &rx, NULL);

	/* ->prod more than a ring ahead, then behind: refused, kept. */
	__atomic_store_n(&rx.hdr->prod, START + 5, __ATOMIC_RELEASE);
	CHECK(netgpu_rx_peek(&sq, d, 4) == -EPROTO, "a ring ahead");
	__atomic_store_n(&rx.hdr->prod, START + 2, __ATOMIC_RELEASE);
	CHECK(netgpu_rx_peek(&sq, d, 4) == 2, "two");
	__atomic_store_n(&rx.hdr->prod, START + 1, __ATOMIC_RELEASE);
	CHECK(netgpu_rx_peek(&sq, d, 4) == -EPROTO, "behind");
	CHECK(netgpu_rx_peek(&sq, d, 2) == 2, "the two still there");

	/* ->cons past what was submitted, or back: refused, kept. */
	CHECK(netgpu_fill_submit(&ifq, a, 4) == 4, "four");
	__atomic_store_n(&fill.hdr->cons, START + 5, __ATOMIC_RELEASE);
	CHECK(netgpu_fill_submit(&ifq, a, 1) == -EPROTO, "past prod");
	CHECK(netgpu_fill_pending(&ifq, NULL, 0) == -EPROTO, "past prod");
	__atomic_store_n(&fill.hdr->cons, START + 2, __ATOMIC_RELEASE);
	CHECK(netgpu_fill_submit(&ifq, a, 4) == 2, "two freed");
	__atomic_store_n(&fill.hdr->cons, START + 1, __ATOMIC_RELEASE);
	CHECK(netgpu_fill_submit(&ifq, a, 1) == -EPROTO, "back");
	CHECK(netgpu_fill_pending(&ifq, NULL, 0) == -EPROTO, "back");
	/* The cached ->cons kept: 3 and 4, then the two again. */
	__atomic_store_n(&fill.hdr->cons, START + 2, __ATOMIC_RELEASE);
	CHECK(netgpu_fill_pending(&ifq, p, 4) == 4 && p[0] == a[2] &&
	      p[1] == a[3] && p[2] == a[0] && p[3] == a[1], "four pending");
	free(fill.hdr);
	free(rx.hdr);
}

/* ===== Two threads ===== */

struct pair {
	struct kring k;
	int desc;			/* rx descriptors, else u64 entries */
	struct netgpu_ifq ifq;
	struct netgpu_sockq sq;
	unsigned long n;
};

/* The kernel consumes the fill ring: every address, once, in order. */
static void *fill_kernel(void *arg)
{
	struct pair *p = arg;
	unsigned long i = 0;
	uint32_t n, j;

	while (i < p->n) {
		n = kcons_avail(&p->k);
		CHECK(n <= p->k.entries, "%u entries", n);
		if (!n) {
			relax();
			continue;
		}
		n = 1 + val(2, i) % n;	/* any part of them */
		for (j = 0; j < n; j++, i++) {
			uint64_t v = *kslot64(&p->k, p->k.cached_cons + j);

			CHECK(v == val(3, i), "fill entry %lu: %#llx", i,
			      (unsigned long long)v);
		}
		kcons_release(&p->k, n);
	}
	return NULL;
}

static void check_fill(uint32_t entries)
{
	struct pair p = { .n = iterations };
	uint64_t a[40];
	unsigned long i = 0;
	pthread_t t;
	uint32_t n, j;
	int ret;

	kring_alloc(&p.k, entries, sizeof(uint64_t));
	wrap_ifq(&p.ifq, &p.k);
	pthread_create(&t, NULL, fill_kernel, &p);
	while (i < p.n) {
		n = 1 + val(4, i) % 40;
		if (n > p.n - i)
			n = p.n - i;
		for (j = 0; j < n; j++)
			a[j] = val(3, i + j);
		ret = netgpu_fill_submit(&p.ifq, a, n);
		CHECK(ret >= 0 && (uint32_t)ret <= n, "submit: %d", ret);
		if (!ret)
			relax();
		i += ret;
		/*
		 * Now and then: the entries pending are the last ones
		 * submitted, in order, the kernel consuming meanwhile.
		 */
		if (val(16, i) % 8)
			continue;
		ret = netgpu_fill_pending(&p.ifq, a, 40);
		CHECK(ret >= 0 && (uint32_t)ret <= entries && ret <= (long)i,
		      "pending: %d", ret);
		for (j = 0; j < (uint32_t)ret && j < 40; j++)
			CHECK(a[j] == val(3, i - ret + j),
			      "pending entry %u of %d", j, ret);
	}
	pthread_join(t, NULL);
	CHECK(netgpu_fill_nb_free(&p.ifq) == (int)entries, "all consumed");
	CHECK(netgpu_fill_pending(&p.ifq, a, 40) == 0, "none pending");
	free(p.k.hdr);
}

/* The kernel produces seeded descriptors (or completions), in batches. */
static void *cons_kernel(void *arg)
{
	struct pair *p = arg;
	unsigned long i = 0;
	uint32_t n, j;

	while (i < p->n) {
		n = kprod_free(&p->k);
		if (!n) {
			relax();
			continue;
		}
		n = 1 + val(5, i) % n;
		if (n > p->n - i)
			n = p->n - i;
		for (j = 0; j < n; j++) {
			uint32_t idx = p->k.cached_prod + j;

			if (p->desc) {
				struct netgpu_rx_desc *s = kslot_desc(&p->k, idx);

				s->addr = val(6, i + j);
				s->len = val(7, i + j);
				s->flags = val(8, i + j) & 1;
			} else {
				*kslot64(&p->k, idx) = val(9, i + j);
			}
		}
		kprod_submit(&p->k, n);
		i += n;
	}
	return NULL;
}

static void check_rx(uint32_t entries)
{
	struct pair p = { .n = iterations, .desc = 1 };
	struct netgpu_rx_desc d[40];
	unsigned long i = 0;
	pthread_t t;
	uint32_t j, rel;
	int n;

	kring_alloc(&p.k, entries, sizeof(struct netgpu_rx_desc));
	wrap_sockq(&p.sq, &p.k, NULL);
	pthread_create(&t, NULL, cons_kernel, &p);
	while (i < p.n) {
		n = netgpu_rx_peek(&p.sq, d, 1 + val(10, i) % 40);
		CHECK(n >= 0 && (uint32_t)n <= entries, "peek: %d", n);
		if (!n) {
			relax();
			continue;
		}
		rel = 1 + val(11, i) % n;	/* release part of them */
		for (j = 0; j < rel; j++, i++)
			CHECK(d[j].addr == val(6, i) &&
			      d[j].len == (uint32_t)val(7, i) &&
			      d[j].flags == (val(8, i) & 1),
			      "descriptor %lu: %#llx %u %u", i,
			      (unsigned long long)d[j].addr, d[j].len,
			      d[j].flags);
		CHECK(netgpu_rx_release(&p.sq, rel) == 0, "release %u", rel);
	}
	pthread_join(t, NULL);
	CHECK(netgpu_rx_nb_avail(&p.sq) == 0, "nothing more");
	free(p.k.hdr);
}

static void check_cq(uint32_t entries)
{
	struct pair p = { .n = iterations };
	uint64_t c[40];
	unsigned long i = 0;
	pthread_t t;
	int n, j;

	kring_alloc(&p.k, entries, sizeof(uint64_t));
	wrap_sockq(&p.sq, NULL, &p.k);
	netgpu__sys.poll = fake_poll;
	pthread_create(&t, NULL, cons_kernel, &p);
	while (i < p.n) {
		n = netgpu_cq_wait(&p.sq, 1000);
		CHECK(n >= 0 && (uint32_t)n <= entries, "wait: %d", n);
		n = netgpu_cq_peek(&p.sq, c, 1 + val(12, i) % 40);
		CHECK(n >= 0, "peek: %d", n);
		for (j = 0; j < n; j++, i++)
			CHECK(c[j] == val(9, i), "completion %lu: %#llx", i,
			      (unsigned long long)c[j]);
		CHECK(netgpu_cq_release(&p.sq, n) == 0, "release %d", n);
	}
	pthread_join(t, NULL);
	netgpu__sys.poll = poll;
	free(p.k.hdr);
}

/* ===== netgpu_rx_loop() against a fake kernel ===== */

#define NBUF		48
#define MAX_DESC_LEN	3000

struct loop {
	struct kring fill, rx;
	struct netgpu_ifq ifq;
	struct netgpu_sockq sq;
	unsigned char *mem;		/* NBUF page buffers: the region */
	unsigned long n;		/* descriptors to send */
	int done;			/* all sent (release/acquire) */
	/* the kernel's */
	int refs[NBUF];
	unsigned long given_back;
	/* the user's */
	unsigned long got, batches;
	uint64_t pos;			/* stream bytes seen */
};

static struct loop *the_loop;

/* The stream's byte at @pos: one multiply, it runs for every byte. */
static unsigned char stream_byte(uint64_t pos)
{
	return ((pos ^ seed) * 0x9e3779b97f4a7c15ULL) >> 56;
}

/* Length and flags of descriptor i: from i alone, the user checks them. */
static uint32_t desc_len(unsigned long i)
{
	return 1 + val(14, i) % MAX_DESC_LEN;
}

static uint32_t desc_flags(unsigned long i)
{
	return val(15, i) % 7 ? 0 : NETGPU_RX_DESC_COPY;
}

static void loop_take_back(struct loop *l)
{
	uint32_t n = kcons_avail(&l->fill), j;

	CHECK(n <= l->fill.entries, "fill: %u", n);
	for (j = 0; j < n; j++) {
		uint64_t a = *kslot64(&l->fill, l->fill.cached_cons + j);
		uint64_t b = (a - (uintptr_t)l->mem) / PAGE;

		CHECK(a % PAGE == 0 && a >= (uintptr_t)l->mem && b < NBUF,
		      "fill entry %#llx", (unsigned long long)a);
		CHECK(l->refs[b] > 0, "buffer %llu given back too often",
		      (unsigned long long)b);
		l->refs[b]--;
		l->given_back++;
	}
	kcons_release(&l->fill, n);
}

static void *loop_kernel(void *arg)
{
	struct loop *l = arg;
	uint32_t off, len, k, nd;
	struct netgpu_rx_desc *s;
	unsigned long i = 0, sent_refs = 0;
	unsigned char *buf;
	uint64_t pos = 0;
	int b;

	while (i < l->n || l->given_back < sent_refs) {
		loop_take_back(l);
		if (i == l->n || !kprod_free(&l->rx)) {
			relax();
			continue;
		}
		/* A free buffer: one or two descriptors in it. */
		for (b = 0; b < NBUF && l->refs[b]; b++)
			;
		if (b == NBUF) {
			relax();
			continue;
		}
		nd = 0;
		off = 0;
		buf = l->mem + b * PAGE;
		while (i < l->n && nd < kprod_free(&l->rx)) {
			len = desc_len(i);
			if (off + len > PAGE)
				break;
			for (k = 0; k < len; k++)	/* the NIC's DMA */
				buf[off + k] = stream_byte(pos + k);
			s = kslot_desc(&l->rx, l->rx.cached_prod + nd);
			s->addr = (uintptr_t)buf + off;
			s->len = len;
			s->flags = desc_flags(i);
			l->refs[b]++;
			sent_refs++;
			off += len;
			pos += len;
			nd++;
			i++;
		}
		kprod_submit(&l->rx, nd);
		if (i == l->n)
			__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* NETGPU_SOCKQ_IOCTL_RECV: EOF once the kernel sent everything. */
static int loop_ioctl(int fd, unsigned long req, void *arg)
{
	struct netgpu_recv *r = arg;

	(void)fd;
	if (req != NETGPU_SOCKQ_IOCTL_RECV || r->flags != NETGPU_RECV_NONBLOCK) {
		errno = ENOTTY;
		return -1;
	}
	if (__atomic_load_n(&the_loop->done, __ATOMIC_ACQUIRE)) {
		r->status = NETGPU_RECV_EOF;
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

static int loop_descs(void *arg, const struct netgpu_rx_desc *d, uint32_t n)
{
	struct loop *l = arg;
	const unsigned char *p;
	uint32_t j, k;

	CHECK(n >= 1 && n <= 64, "batch of %u", n);
	l->batches++;
	for (j = 0; j < n; j++, l->got++) {
		CHECK(l->got < l->n, "descriptor %lu of %lu", l->got, l->n);
		CHECK(d[j].len == desc_len(l->got) &&
		      d[j].flags == desc_flags(l->got),
		      "descriptor %lu: len %u flags %u", l->got, d[j].len,
		      d[j].flags);
		p = (const unsigned char *)(uintptr_t)d[j].addr;
		for (k = 0; k < d[j].len; k++)	/* the application reads */
			CHECK(p[k] == stream_byte(l->pos + k),
			      "stream byte %llu",
			      (unsigned long long)(l->pos + k));
		l->pos += d[j].len;
	}
	return 0;
}

static void check_rx_loop(uint32_t fill_entries, uint32_t rx_entries)
{
	struct netgpu_rx_ops ops = { .descs = loop_descs, .timeout_ms = 60000 };
	struct netgpu__sys saved = netgpu__sys;
	struct loop *l = calloc(1, sizeof(*l));
	pthread_t t;
	int b, ret;

	CHECK(l, "calloc");
	l->n = iterations / 4;
	l->mem = aligned_alloc(PAGE, NBUF * PAGE);
	CHECK(l->mem, "aligned_alloc");
	kring_alloc(&l->fill, fill_entries, sizeof(uint64_t));
	kring_alloc(&l->rx, rx_entries, sizeof(struct netgpu_rx_desc));
	wrap_ifq(&l->ifq, &l->fill);
	wrap_sockq(&l->sq, &l->rx, NULL);
	the_loop = l;
	netgpu__sys.ioctl = loop_ioctl;
	netgpu__sys.poll = fake_poll;

	pthread_create(&t, NULL, loop_kernel, l);
	ret = netgpu_rx_loop(&l->sq, &l->ifq, &ops, l);
	pthread_join(t, NULL);
	netgpu__sys = saved;

	CHECK(ret == 0, "netgpu_rx_loop: %d", ret);
	CHECK(l->got == l->n, "got %lu of %lu descriptors", l->got, l->n);
	for (b = 0; b < NBUF; b++)
		CHECK(!l->refs[b], "buffer %d: %d references", b, l->refs[b]);
	CHECK(l->given_back == l->n, "given back %lu", l->given_back);
	printf("ring-test: rx loop: %lu descriptors, %llu bytes, %lu batches, fill %u rx %u\n",
	       l->got, (unsigned long long)l->pos, l->batches, fill_entries,
	       rx_entries);
	free(l->fill.hdr);
	free(l->rx.hdr);
	free(l->mem);
	free(l);
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1, 2, 8, 64, 1024 };
	unsigned int s;
	int c;

	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n':
			iterations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: ring-test [-n ITERATIONS] [-s SEED]\n");
			return 2;
		}
	}
	printf("ring-test: seed %llu, %lu iterations\n", seed, iterations);
	check_full_empty();
	check_bad_index();
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		check_fill(sizes[s]);
		check_rx(sizes[s]);
		check_cq(sizes[s]);
	}
	check_rx_loop(8, 4);
	check_rx_loop(64, 64);
	printf("ring-test: %s\n", failures ? "FAILED" : "ok");
	return !!failures;
}
