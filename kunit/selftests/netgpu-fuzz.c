// SPDX-License-Identifier: GPL-2.0
/*
 * netgpu-fuzz: hostile input for netgpu's user ABI (<linux/netgpu.h>).
 *
 * Forks PROCS workers that, until the deadline, run random operations on
 * /dev/netgpu, /dev/netgpu_mem and the queue fds they return: every
 * ioctl with correct, mutated and random structs, sizes below, at and
 * above the first version (with zero and non-zero tails), bad pointers
 * and fds of the wrong kind; host and udmabuf regions, good and bad;
 * TCP sockets (unconnected, and connected over lo), UDP sockets and
 * pipes to attach; mmap() of every fd at the ring offsets and elsewhere,
 * then random writes to ring indices and entries (the fill ring of a
 * queue bound on -i IFNAME included); poll(), dup() and close() in
 * random order; abrupt exits, and SIGKILLs from the parent, so that
 * teardown runs from every state.  Nothing may block: RECV is NONBLOCK,
 * sockets have timeouts, polls none, and alarm() kills a worker stuck
 * for 20 s.
 *
 * The kernel log is the verdict on the kernel's side (the harness checks
 * it).  The results of every operation (0, > 0, each errno) are counted
 * and printed every 10 s and at the end.  Exit 1 if a worker died of a
 * signal the tool did not send, hung (a call that had not returned after
 * FZ_HANG_SECS: the alarm killed it) or exited with an error of its own
 * (its setup failed: the run would go on with fewer workers), if a netgpu
 * ioctl on a pipe did not fail with ENOTTY, or if the kernel returned a
 * queue fd that was not open or not O_CLOEXEC.
 *
 * To repeat a run, use the command line it prints at start: each
 * worker's xorshift64* PRNG is seeded from SEED, its index and how many
 * times it was re-forked, so the operations repeat, up to the timing of
 * the kernel and of the parent's kills.
 *
 * Not built on libnetgpu (tools/lib/netgpu), deliberately: the ABI is
 * what it tests.  Its ioctls are raw, with mutated structs, sizes,
 * directions and fds, and its ring accesses are hostile (indices too far
 * ahead, behind, random or the kernel's own; entries foreign, unaligned
 * or random; any mapping read and written).  It has no well-behaved ring
 * access: nothing here follows the ring protocol the library implements.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/netgpu.h>
#include <linux/udmabuf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define FZ_MAX_FDS	48
#define FZ_MAX_MAPS	16
#define FZ_NIDS		8
#define FZ_AREAS	4		/* host memory areas ... */
#define FZ_PAGES	32		/* ... of this many pages */
#define FZ_ARG_PAGES	5		/* ioctl arguments: > _IOC_SIZEMASK */
#define FZ_HANG_SECS	20
#define FZ_EXIT_ABRUPT	42
#define FZ_DMABUF_BASE	(1ULL << 44)
#define FZ_HDR		sizeof(struct netgpu_ring)

/* Result buckets: 0, errnos 1 to FZ_MAXERR - 1, then these */
#define FZ_MAXERR	1024
#define FZ_POS		FZ_MAXERR	/* > 0 */
#define FZ_BIGERR	(FZ_MAXERR + 1)	/* errno >= FZ_MAXERR */
#define FZ_SIGBUS	(FZ_MAXERR + 2)	/* touching a mapping faulted */
#define FZ_SIGSEGV	(FZ_MAXERR + 3)
#define FZ_NRES		(FZ_MAXERR + 4)

/* Kinds of fd a worker holds */
enum { FZ_CTX, FZ_MEM, FZ_IFQ, FZ_SQ, FZ_UDMABUF, FZ_TCP, FZ_UDP, FZ_PIPE };

enum {
	OP_SETUP, OP_OPEN_CTX, OP_OPEN_MEM, OP_OPEN_UDMABUF, OP_OPEN_SOCK,
	OP_CLOSE, OP_DUP, OP_ADD_REGION, OP_REMOVE_REGION, OP_ATTACH_DEV,
	OP_ATTACH_REGION, OP_DETACH_REGION, OP_BIND_QUEUE, OP_ATTACH_SOCKET,
	OP_GET_STATS, OP_RECV, OP_RAW_IOCTL, OP_MMAP, OP_FILL, OP_TOUCH,
	OP_MUNMAP, OP_POLL, OP_HOST_MEM, OP_EXIT, FZ_NOPS
};

/* The counters, shared by the workers and the parent */
struct fz_shared {
	uint64_t res[FZ_NOPS][FZ_NRES];
	uint64_t violations;	/* netgpu ioctls on a pipe not ENOTTY */
	uint64_t bad_fds;	/* queue fds returned not open, not CLOEXEC */
};

struct fz_fd {
	int fd, kind, nids;
	uint32_t ids[FZ_NIDS];		/* a memory area's region ids */
	uint64_t size;			/* a udmabuf's */
	struct netgpu_queue_geom geom;	/* a queue fd's ring, if known */
};

struct fz_map {
	unsigned char *p;
	size_t len;
	uint32_t entries;
};

struct fz_worker {
	uint64_t rng;
	int idx, said, listener, nfds, nmaps;
	struct fz_fd fds[FZ_MAX_FDS];
	struct fz_map maps[FZ_MAX_MAPS];
	unsigned char *host[FZ_AREAS], *ro_area, *heap;
	unsigned char *arg, *guard, *ro_page, *unmapped;
	uint64_t seen[8];		/* rx descriptor addresses read */
};

static struct {
	uint64_t seed;
	int secs, procs, queue, ifindex, have_udmabuf;
	const char *ifname;
	size_t page;
} fz = { .secs = 60, .procs = 4, .queue = -1 };

static struct fz_shared *fz_sh;
static sigjmp_buf fz_jmp;
static volatile sig_atomic_t fz_touching, fz_cur_op, fz_stop;
static volatile unsigned char fz_sink;
static char fz_hang_msg[128];

static const char fz_help_text[] =
"usage: netgpu-fuzz [-s SEED] [-t SECONDS] [-p PROCS] [-i IFNAME] [-q QUEUE]\n"
"\n"
"Throw hostile input at netgpu's user ABI from PROCS (4) worker processes\n"
"for SECONDS (60) seconds, with the seed SEED (default: from the clock).\n"
"With -i, contexts are also attached to IFNAME (a netdevsim device) and\n"
"its rx queues bound (-q QUEUE, default any), fill rings scribbled on;\n"
"without, only lo and ifindexes that do not exist are tried.  Run as root\n"
"in a throw-away machine: the kernel log is the verdict.\n"
"\n"
"Prints the results of each operation every 10 s and at the end, then\n"
"'netgpu-fuzz: done seed=S calls=N procs=P secs=T'.  Exit 0; 1 if a\n"
"worker died of a signal other than the SIGKILLs the tool sends, hung\n"
"for 20 s in a call (killed by its alarm) or exited with an error, if a\n"
"netgpu ioctl on a pipe did not fail with ENOTTY, or if a queue fd the\n"
"kernel returned was not open or not O_CLOEXEC ('FAIL' lines say which);\n"
"2 on bad usage; 3 if the kernel has no netgpu.  /dev/udmabuf is\n"
"optional.\n";

/* ===== Randomness ===== */

static uint64_t fz_rand(struct fz_worker *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545F4914F6CDD1DULL;
}

static unsigned int fz_below(struct fz_worker *w, unsigned int n)
{
	return n ? fz_rand(w) % n : 0;
}

static uint64_t fz_mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* The seed of worker @idx's @gen-th process */
static uint64_t fz_seed(int idx, int gen)
{
	uint64_t s = fz_mix(fz.seed ^ fz_mix(idx + 1 + ((uint64_t)gen << 32)));

	return s ? s : 1;
}

/* A value that often sits on an edge */
static uint64_t fz_val(struct fz_worker *w)
{
	static const uint64_t v[] = {
		0, 1, 2, 7, 8, 16, 4095, 4096, 0x7fffffff, 0x80000000,
		0xffffffff, 0x100000000ULL, NETGPU_QUEUE_MAX_ENTRIES,
		NETGPU_QUEUE_MAX_ENTRIES + 1, 1ULL << 63, ~0ULL,
	};

	if (fz_below(w, 3))
		return v[fz_below(w, ARRAY_SIZE(v))];
	return fz_rand(w) >> fz_below(w, 64);
}

/* Random bytes: half of the words zero, some small */
static void fz_fill(struct fz_worker *w, void *buf, size_t len)
{
	unsigned char *b = buf;
	unsigned int r;
	uint64_t v;
	size_t n;

	for (; len; len -= n, b += n) {
		r = fz_below(w, 10);
		v = r < 5 ? 0 : r < 7 ? fz_below(w, 256) : fz_rand(w);
		n = len < 8 ? len : 8;
		memcpy(b, &v, n);
	}
}

/* Leave a correct struct alone, or break a byte, a word or all of it */
static void fz_mutate(struct fz_worker *w, void *s, size_t len)
{
	unsigned int r = fz_below(w, 100);
	uint32_t v = fz_val(w);

	if (r < 60)
		return;
	if (r < 75)
		((unsigned char *)s)[fz_below(w, len)] = fz_rand(w);
	else if (r < 90)
		memcpy((char *)s + fz_below(w, len / 4) * 4, &v, 4);
	else
		fz_fill(w, s, len);
}

static double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ===== Accounting ===== */

static void fz_bump(int op, unsigned int res)
{
	__atomic_fetch_add(&fz_sh->res[op][res], 1, __ATOMIC_RELAXED);
}

/* Count the result of a call (errno if < 0); keeps errno */
static long fz_rec(int op, long ret)
{
	int err = errno;

	if (ret >= 0)
		fz_bump(op, ret ? FZ_POS : 0);
	else
		fz_bump(op, err > 0 && err < FZ_MAXERR ? err : FZ_BIGERR);
	errno = err;
	return ret;
}

/* ===== File descriptors ===== */

static struct fz_fd *fz_find(struct fz_worker *w, int fd)
{
	int i;

	for (i = 0; i < w->nfds; i++)
		if (w->fds[i].fd == fd)
			return &w->fds[i];
	return NULL;
}

static void fz_close_at(struct fz_worker *w, int i)
{
	fz_rec(OP_CLOSE, close(w->fds[i].fd));
	w->fds[i] = w->fds[--w->nfds];
}

/* Track a new fd, closing a random one when full; NULL if @fd < 0 */
static struct fz_fd *fz_add(struct fz_worker *w, int fd, int kind)
{
	struct fz_fd *e;

	if (fd < 0)
		return NULL;
	e = fz_find(w, fd);
	if (!e) {
		if (w->nfds == FZ_MAX_FDS)
			fz_close_at(w, fz_below(w, w->nfds));
		e = &w->fds[w->nfds++];
	}
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	e->kind = kind;
	return e;
}

/* Mostly a fd of @kind (-1: any), else any fd, -1, or a closed one */
static int fz_pick(struct fz_worker *w, int kind)
{
	unsigned int r = fz_below(w, 100);
	int i, n = 0, cand[FZ_MAX_FDS];

	for (i = 0; r < 70 && i < w->nfds; i++)
		if (w->fds[i].kind == kind)
			cand[n++] = i;
	if (n)
		return w->fds[cand[fz_below(w, n)]].fd;
	if (r < 92 && w->nfds)
		return w->fds[fz_below(w, w->nfds)].fd;
	return r < 96 ? -1 : 1000 + (int)fz_below(w, 24);
}

/* A region id: one that the area returned, or a small one */
static uint32_t fz_id(struct fz_worker *w, struct fz_fd *e)
{
	if (e && e->nids && fz_below(w, 4))
		return e->ids[fz_below(w, e->nids)];
	return fz_below(w, 8);
}

/* A queue fd the kernel returned: check it is a new O_CLOEXEC fd, track it */
static void fz_new_queue(struct fz_worker *w, long fd, int kind,
			 const struct netgpu_queue_geom *g)
{
	struct fz_fd *e;
	int flags;

	if (fd <= 2 || fz_find(w, fd))
		return;
	flags = fcntl(fd, F_GETFD);
	if (flags < 0 || !(flags & FD_CLOEXEC))
		__atomic_fetch_add(&fz_sh->bad_fds, 1, __ATOMIC_RELAXED);
	e = fz_add(w, fd, kind);
	if (e && g)
		e->geom = *g;
}

/* ===== Ioctls ===== */

/*
 * Copy the struct @s (@len bytes, first version @ver0) to where the
 * ioctl reads it and choose the size the command encodes: mostly @len,
 * else @ver0, less, more with a zero or a non-zero tail, or anything.
 * The pointer is sometimes bad: NULL, unmapped, in the kernel, across
 * the guard page, or read-only (the write-back faults).
 */
static void *fz_place(struct fz_worker *w, const void *s, size_t len,
		      size_t ver0, unsigned int *sizep)
{
	void *bad[] = { NULL, (void *)1, w->unmapped, w->guard,
			(void *)(uintptr_t)0xffffffff81000000ULL };
	unsigned int r = fz_below(w, 100), size = len, shift;
	unsigned char *p = w->arg;

	if (r >= 55)
		size = r < 63 ? ver0 : r < 71 ? fz_below(w, ver0) :
		       r < 91 ? len + 1 + fz_below(w, 256) :
		       fz_below(w, _IOC_SIZEMASK + 1);
	memset(p, 0, size);
	memcpy(p, s, size < len ? size : len);
	if (r >= 81 && r < 91) {
		fz_fill(w, p + len, size - len);
		p[size - 1] |= 1;
	}
	*sizep = size;

	r = fz_below(w, 100);
	if (r < ARRAY_SIZE(bad))
		return bad[r];
	if (r < 8) {
		mprotect(w->ro_page, fz.page, PROT_READ | PROT_WRITE);
		memcpy(w->ro_page, p, size < fz.page ? size : fz.page);
		mprotect(w->ro_page, fz.page, PROT_READ);
		return w->ro_page;
	}
	if (r < 12) {
		shift = r < 10 || !size ? 0 : 1 + fz_below(w, size);
		memmove(w->guard - size + shift, p, size - shift);
		return w->guard - size + shift;
	}
	return p;
}

/* An ioctl, counted, checking that netgpu ioctls on a pipe fail ENOTTY */
static long fz_ioctl(struct fz_worker *w, int op, int fd, unsigned long cmd,
		     void *arg)
{
	struct fz_fd *e = fz_find(w, fd);
	long ret = fz_rec(op, ioctl(fd, cmd, arg));
	int err = errno;

	if (e && e->kind == FZ_PIPE && (ret >= 0 || err != ENOTTY)) {
		__atomic_fetch_add(&fz_sh->violations, 1, __ATOMIC_RELAXED);
		if (w->said++ < 3)
			fprintf(stderr, "netgpu-fuzz: worker %d: ioctl 0x%lx on a pipe returned %ld (%s), not ENOTTY\n",
				w->idx, cmd, ret, strerror(ret < 0 ? err : 0));
	}
	errno = err;
	return ret;
}

/*
 * The ioctl @cmd with @s placed by fz_place(), the size in the command
 * set to match and, rarely, the direction changed.  *@out: the struct
 * the kernel wrote back, or NULL if it is not where we can read it.
 */
static long fz_call(struct fz_worker *w, int op, int fd, unsigned long cmd,
		    void *s, size_t len, size_t ver0, void **out)
{
	unsigned int size, dir = fz_below(w, 12) ? _IOC_DIR(cmd) :
						   fz_below(w, 4);
	unsigned char *p = fz_place(w, s, len, ver0, &size);

	if (out)
		*out = size >= len && p >= w->arg && p + len <= w->guard ?
		       p : NULL;
	cmd = _IOC(dir, NETGPU_IOCTL_TYPE, _IOC_NR(cmd), size);
	return fz_ioctl(w, op, fd, cmd, p);
}

/* ===== Memory ===== */

/* A buffer address to give back: good, unaligned, foreign or random */
static uint64_t fz_addr(struct fz_worker *w)
{
	uint64_t a = (uintptr_t)w->host[fz_below(w, FZ_AREAS)] +
		     fz_below(w, FZ_PAGES) * fz.page;
	uint64_t v[] = {
		a, a, a, a + 1 + fz_below(w, fz.page - 1),
		FZ_DMABUF_BASE + fz_below(w, 64) * fz.page,
		w->seen[fz_below(w, ARRAY_SIZE(w->seen))], fz_val(w),
	};

	return v[fz_below(w, ARRAY_SIZE(v))];
}

/* Host memory for a region: valid, unaligned, odd, huge or not there */
static void fz_host_range(struct fz_worker *w, __u64 *addr, __u64 *len)
{
	uint64_t pg = fz.page, k = fz_below(w, FZ_PAGES);
	uint64_t a = (uintptr_t)w->host[fz_below(w, FZ_AREAS)] + k * pg;
	uint64_t l = (1 + fz_below(w, FZ_PAGES - k)) * pg;
	uint64_t heap = ((uintptr_t)w->heap + pg - 1) & ~(pg - 1);
	uint64_t span = (uintptr_t)w->host[FZ_AREAS - 1] + FZ_PAGES * pg -
			(uintptr_t)w->host[0];
	const uint64_t c[][2] = {
		{ a, l }, { a, l }, { a, l }, { a, l }, { a, l },
		{ a + 1 + fz_below(w, pg - 1), l },
		{ a, l - 1 - fz_below(w, pg - 1) }, { a, 0 },
		{ a, 1ULL << 40 }, { a, ~0ULL }, { a, 0 - a },
		{ heap, 8 * pg }, { (uintptr_t)w->heap, pg },
		{ (uintptr_t)w->ro_area, 8 * pg },
		{ (uintptr_t)w->guard, pg }, { (uintptr_t)w->unmapped, pg },
		{ 0, pg }, { 0x7ffffffff000ULL, 2 * pg },
		{ (uintptr_t)w->host[0], span }, { fz_val(w), fz_val(w) },
	};

	k = fz_below(w, ARRAY_SIZE(c));
	*addr = c[k][0];
	*len = c[k][1];
}

/* A udmabuf of memfd pages, or -1 with errno */
static int fz_udmabuf(struct fz_worker *w, uint64_t *size)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC };
	uint64_t len = (1 + fz_below(w, 16)) * fz.page;
	int dev, fd = -1, err;

	uc.memfd = memfd_create("netgpu-fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (uc.memfd == (__u32)-1)
		return -1;
	/* Without the seal (now and then) UDMABUF_CREATE refuses the memfd */
	if (!ftruncate(uc.memfd, len) && fz_below(w, 8))
		fcntl(uc.memfd, F_ADD_SEALS, F_SEAL_SHRINK);
	/*
	 * Random sizes stay under 1 MiB or over udmabuf's own limit (64 MiB
	 * by default): shmem pages behind a few dozen large udmabufs would
	 * run a small guest out of memory, which tests nothing of netgpu.
	 */
	if (fz_below(w, 8))
		uc.size = len;
	else if (fz_below(w, 2))
		uc.size = fz_val(w) | (1ULL << 40);
	else
		uc.size = fz_below(w, 256) * fz.page + fz_below(w, 2);
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev >= 0)
		fd = ioctl(dev, UDMABUF_CREATE, &uc);
	err = errno;
	if (dev >= 0)
		close(dev);
	close(uc.memfd);
	*size = uc.size;
	errno = err;
	return fd;
}

/* ===== Mappings and rings ===== */

/*
 * Read a mapping page by page (and what would be the addresses of an rx
 * ring's first descriptors, to give them back), then write a ring
 * header's indices and flags and random entries.  Raw plain accesses on
 * purpose: whatever the mapping is, with no ordering.
 */
static void fz_scribble(struct fz_worker *w, unsigned char *p, size_t len,
			uint32_t entries)
{
	struct netgpu_ring *r = (struct netgpu_ring *)p;
	struct netgpu_rx_desc *d = (struct netgpu_rx_desc *)(r + 1);
	size_t lim = len < 65536 ? len : 65536, i;
	unsigned int n;

	for (i = 0; i < lim; i += fz.page)
		fz_sink += ((volatile unsigned char *)p)[i];
	for (i = 0; i < 8 && FZ_HDR + (i + 1) * sizeof(*d) <= lim; i++)
		w->seen[i] = d[i].addr & ~(uint64_t)(fz.page - 1);
	if (lim < FZ_HDR)
		return;
	r->prod = fz_below(w, 2) ? r->prod + fz_below(w, 2 * entries + 2) :
				   fz_rand(w);
	r->cons = fz_below(w, 2) ? r->cons + fz_below(w, 4) : fz_rand(w);
	r->flags = fz_rand(w);
	for (n = fz_below(w, 64); n && lim >= FZ_HDR + 8; n--)
		((uint64_t *)(r + 1))[fz_below(w, (lim - FZ_HDR) / 8)] =
			fz_addr(w);
}

/*
 * Produce on a fill ring: hostile entries, then a producer index that
 * is right, too far ahead, behind or random; now and then the consumer
 * index too, which belongs to the kernel.  Raw on purpose: it reads its
 * own index back from the header and never waits for room, which
 * libnetgpu's producer would not do.
 */
static void fz_produce(struct fz_worker *w, unsigned char *p, size_t len,
		       uint32_t entries)
{
	struct netgpu_ring *r = (struct netgpu_ring *)p;
	uint64_t *slot = (uint64_t *)(r + 1);
	uint32_t prod, n, i, s;

	if (len < FZ_HDR + 8 || !entries || (entries & (entries - 1)))
		return;
	prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
	n = fz_below(w, (entries < 4096 ? entries : 4096) + 2);
	for (i = 0; i < n; i++) {
		s = (prod + i) & (entries - 1);
		if (FZ_HDR + (s + 1) * 8ULL <= len)
			slot[s] = fz_addr(w);
	}
	if (!fz_below(w, 8))
		__atomic_store_n(&r->cons, fz_rand(w), __ATOMIC_RELEASE);
	i = fz_below(w, 8);
	if (i < 3)	/* too far ahead, behind, anywhere */
		n = i == 0 ? entries + 1 + fz_below(w, 1000) :
		    i == 1 ? -1 - fz_below(w, entries + 1) : fz_rand(w);
	__atomic_store_n(&r->prod, prod + n, __ATOMIC_RELEASE);
}

static void fz_on_fault(int sig)
{
	if (fz_touching)
		siglongjmp(fz_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Run @fn on a mapping, surviving SIGBUS and SIGSEGV; counted as "touch" */
static void fz_guarded(struct fz_worker *w,
		       void (*fn)(struct fz_worker *w, unsigned char *p,
				  size_t len, uint32_t entries),
		       unsigned char *p, size_t len, uint32_t entries)
{
	int sig;

	fz_touching = 1;
	sig = sigsetjmp(fz_jmp, 1);
	if (!sig)
		fn(w, p, len, entries);
	fz_touching = 0;
	fz_bump(OP_TOUCH, !sig ? 0 : sig == SIGBUS ? FZ_SIGBUS : FZ_SIGSEGV);
}

/* Unmap, or keep the mapping for later: it may outlive its fd */
static void fz_keep_or_unmap(struct fz_worker *w, unsigned char *p,
			     size_t len, uint32_t entries)
{
	if (fz_below(w, 5) || w->nmaps == FZ_MAX_MAPS) {
		fz_rec(OP_MUNMAP, munmap(p, len));
		return;
	}
	w->maps[w->nmaps].p = p;
	w->maps[w->nmaps].len = len;
	w->maps[w->nmaps++].entries = entries;
}

/* ===== Operations ===== */

static int fz_open(struct fz_worker *w, int op, int kind, int flags)
{
	static const int modes[] = { O_RDWR, O_RDONLY, O_WRONLY, O_NONBLOCK };
	int fd;

	if (flags < 0)
		flags = O_RDWR | (fz_below(w, 2) ? 0 : modes[fz_below(w, 4)]);
	fd = open(kind == FZ_CTX ? "/dev/netgpu" : "/dev/netgpu_mem",
		  flags | O_CLOEXEC);
	fz_rec(op, fd < 0 ? -1 : 0);
	fz_add(w, fd, kind);
	return fd;
}

static void fz_op_open(struct fz_worker *w, int op)
{
	fz_open(w, op, op == OP_OPEN_CTX ? FZ_CTX : FZ_MEM, -1);
}

static void fz_op_open_udmabuf(struct fz_worker *w, int op)
{
	struct fz_fd *e;
	uint64_t size;
	int fd;

	if (!fz.have_udmabuf)
		return;
	fd = fz_udmabuf(w, &size);
	fz_rec(op, fd < 0 ? -1 : 0);
	e = fz_add(w, fd, FZ_UDMABUF);
	if (e)
		e->size = size;
}

/* A connected TCP pair over 127.0.0.1, every wait bounded */
static int fz_pair(struct fz_worker *w, int *s)
{
	struct pollfd pfd = { .fd = w->listener, .events = POLLIN };
	struct timeval tv = { .tv_usec = 200000 };
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int i;

	if (getsockname(w->listener, (struct sockaddr *)&sin, &sl))
		return -1;
	s[0] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s[0] < 0)
		return -1;
	if (!connect(s[0], (struct sockaddr *)&sin, sl) || errno == EINPROGRESS)
		poll(&pfd, 1, 100);
	s[1] = accept4(w->listener, NULL, NULL, SOCK_CLOEXEC);
	if (s[1] < 0) {
		i = errno;
		close(s[0]);
		s[0] = -1;
		errno = i;
		return -1;
	}
	fcntl(s[0], F_SETFL, 0);
	for (i = 0; i < 2; i++) {
		setsockopt(s[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(s[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	return 0;
}

/* Things to attach that are no netgpu fds: sockets and pipes */
static void fz_op_open_sock(struct fz_worker *w, int op)
{
	static const int type[][3] = {
		{ AF_INET, SOCK_STREAM, FZ_TCP },
		{ AF_INET6, SOCK_STREAM, FZ_TCP },
		{ AF_INET, SOCK_DGRAM, FZ_UDP },
	};
	unsigned int r = fz_below(w, 6);
	int s[2] = { -1, -1 }, kind = FZ_TCP, ret;

	if (r < ARRAY_SIZE(type)) {
		kind = type[r][2];
		s[0] = socket(type[r][0], type[r][1] | SOCK_CLOEXEC, 0);
		ret = s[0];
	} else if (r == 3) {
		kind = FZ_PIPE;
		ret = pipe2(s, O_NONBLOCK | O_CLOEXEC);
	} else {
		ret = fz_pair(w, s);
	}
	fz_rec(op, ret < 0 ? -1 : 0);
	fz_add(w, s[0], kind);
	fz_add(w, s[1], kind);
}

/* Close one fd, or all of them in random order */
static void fz_op_close(struct fz_worker *w, int op)
{
	int n = fz_below(w, 10) ? 1 : w->nfds;

	(void)op;	/* fz_close_at() counts */
	while (n-- > 0 && w->nfds)
		fz_close_at(w, fz_below(w, w->nfds));
}

/* dup(), or dup2() onto a fd we hold: its file may go right there */
static void fz_op_dup(struct fz_worker *w, int op)
{
	struct fz_fd c, *e;
	int nfd;

	if (!w->nfds)
		return;
	c = w->fds[fz_below(w, w->nfds)];
	nfd = fz_below(w, 2) ? dup(c.fd) :
	      dup2(c.fd, w->fds[fz_below(w, w->nfds)].fd);
	fz_rec(op, nfd < 0 ? -1 : 0);
	e = nfd < 0 ? NULL : fz_find(w, nfd);
	if (!e)
		e = fz_add(w, nfd, c.kind);
	if (e) {
		*e = c;
		e->fd = nfd;
	}
}

static void fz_op_add_region(struct fz_worker *w, int op)
{
	struct netgpu_add_region ar = { .type = NETGPU_REGION_HOST };
	int fd = fz_pick(w, FZ_MEM);
	struct fz_fd *e;
	long id;

	if (fz_below(w, 3)) {
		fz_host_range(w, &ar.addr, &ar.len);
	} else {
		ar.type = NETGPU_REGION_DMABUF;
		ar.dmabuf_fd = fz_pick(w, FZ_UDMABUF);
		e = fz_find(w, ar.dmabuf_fd);
		ar.addr = FZ_DMABUF_BASE + fz_below(w, 64) * fz.page +
			  !fz_below(w, 8);
		if (!fz_below(w, 8))	/* where host regions are */
			ar.addr = (uintptr_t)w->host[0];
		ar.len = fz_below(w, 4) ? 0 : fz_val(w);
		if (e && e->kind == FZ_UDMABUF && fz_below(w, 2))
			ar.len = e->size;
	}
	fz_mutate(w, &ar, sizeof(ar));
	id = fz_call(w, op, fd, NETGPU_MEM_IOCTL_ADD_REGION, &ar,
		     sizeof(ar), NETGPU_ADD_REGION_SIZE_VER0, NULL);
	e = fz_find(w, fd);
	if (id > 0 && e && e->kind == FZ_MEM)
		e->ids[e->nids < FZ_NIDS ? e->nids++ :
		       (int)fz_below(w, FZ_NIDS)] = id;
}

static void fz_op_remove_region(struct fz_worker *w, int op)
{
	struct netgpu_remove_region rr = {};
	int fd = fz_pick(w, FZ_MEM);

	rr.region_id = fz_below(w, 4) ? fz_id(w, fz_find(w, fd)) : fz_val(w);
	fz_mutate(w, &rr, sizeof(rr));
	fz_call(w, op, fd, NETGPU_MEM_IOCTL_REMOVE_REGION, &rr,
		sizeof(rr), NETGPU_REMOVE_REGION_SIZE_VER0, NULL);
}

/* The -i device, lo, or ifindexes that cannot exist */
static void fz_op_attach_dev(struct fz_worker *w, int op)
{
	struct netgpu_attach_dev ad = { .ifindex = 1 };
	unsigned int r = fz_below(w, 10);

	if (fz.ifindex && r < 5)
		ad.ifindex = fz.ifindex;
	else if (r >= 7)
		ad.ifindex = r == 7 ? -(int)fz_below(w, 2) :
			     r == 8 ? 100000 + (int)fz_below(w, 1000) :
			     (int32_t)(fz_rand(w) | 0x80000000);
	fz_mutate(w, &ad, sizeof(ad));
	fz_call(w, op, fz_pick(w, FZ_CTX),
		NETGPU_CTX_IOCTL_ATTACH_DEV, &ad, sizeof(ad),
		NETGPU_ATTACH_DEV_SIZE_VER0, NULL);
}

/* NETGPU_CTX_IOCTL_ATTACH_REGION or NETGPU_CTX_IOCTL_DETACH_REGION */
static void fz_op_region(struct fz_worker *w, int op)
{
	unsigned long cmd = op == OP_ATTACH_REGION ?
			    NETGPU_CTX_IOCTL_ATTACH_REGION :
			    NETGPU_CTX_IOCTL_DETACH_REGION;
	struct netgpu_attach_region at = { .mem_fd = fz_pick(w, FZ_MEM) };
	int ctx = fz_pick(w, FZ_CTX);

	at.region_id = fz_below(w, 5) ? fz_id(w, fz_find(w, at.mem_fd)) :
					fz_val(w);
	fz_mutate(w, &at, sizeof(at));
	fz_call(w, op, ctx, cmd, &at, sizeof(at),
		NETGPU_ATTACH_REGION_SIZE_VER0, NULL);
}

/* A ring geometry: mostly sane, sometimes not */
static void fz_geom(struct fz_worker *w, struct netgpu_queue_geom *g,
		    uint32_t entry_size)
{
	g->entries = fz_below(w, 3) ? 1 + fz_below(w, 512) : fz_val(w);
	g->entry_size = fz_below(w, 8) ? entry_size : fz_val(w);
	if (!fz_below(w, 10)) {		/* out fields, in */
		g->mmap_offset = fz_val(w);
		g->mmap_size = fz_val(w);
	}
}

static void fz_op_bind_queue(struct fz_worker *w, int op)
{
	struct netgpu_bind_queue bq = {}, *out;
	long fd;

	if (fz.queue >= 0 && fz_below(w, 2))
		bq.queue_id = fz.queue;
	else if (fz_below(w, 2))
		bq.flags = NETGPU_BIND_QUEUE_ANY;
	else
		bq.queue_id = fz_below(w, 3) ? fz_below(w, 8) : fz_val(w);
	fz_geom(w, &bq.fill, sizeof(uint64_t));
	fz_mutate(w, &bq, sizeof(bq));
	fd = fz_call(w, op, fz_pick(w, FZ_CTX),
		     NETGPU_CTX_IOCTL_BIND_QUEUE, &bq, sizeof(bq),
		     NETGPU_BIND_QUEUE_SIZE_VER0, (void **)&out);
	if (fd >= 0)
		fz_new_queue(w, fd, FZ_IFQ, out ? &out->fill : NULL);
}

static void fz_op_attach_socket(struct fz_worker *w, int op)
{
	struct netgpu_attach_socket as = {}, *out;
	long fd;

	as.sock_fd = fz_below(w, 8) ? fz_pick(w, FZ_TCP) : w->listener;
	fz_geom(w, &as.rx, sizeof(struct netgpu_rx_desc));
	if (!fz_below(w, 8))
		fz_fill(w, &as.completion, sizeof(as.completion));
	fz_mutate(w, &as, sizeof(as));
	fd = fz_call(w, op, fz_pick(w, FZ_CTX),
		     NETGPU_CTX_IOCTL_ATTACH_SOCKET, &as, sizeof(as),
		     NETGPU_ATTACH_SOCKET_SIZE_VER0, (void **)&out);
	if (fd >= 0)
		fz_new_queue(w, fd, FZ_SQ, out ? &out->rx : NULL);
}

static void fz_stats(struct fz_worker *w, int op, int fd)
{
	struct netgpu_stats st;

	fz_fill(w, &st, sizeof(st));
	fz_call(w, op, fd, NETGPU_IOCTL_GET_STATS, &st, sizeof(st),
		NETGPU_STATS_SIZE_VER0, NULL);
}

/* On every kind of fd, netgpu's three kinds first */
static void fz_op_get_stats(struct fz_worker *w, int op)
{
	static const int kinds[] = {
		FZ_CTX, FZ_IFQ, FZ_SQ, FZ_CTX, FZ_IFQ, FZ_SQ, FZ_MEM,
		FZ_UDMABUF, FZ_TCP, FZ_PIPE,
	};

	fz_stats(w, op, fz_pick(w, kinds[fz_below(w, ARRAY_SIZE(kinds))]));
}

static void fz_op_recv(struct fz_worker *w, int op)
{
	struct netgpu_recv r = { .flags = NETGPU_RECV_NONBLOCK };

	fz_mutate(w, &r, sizeof(r));
	r.flags |= NETGPU_RECV_NONBLOCK;	/* never wait */
	fz_call(w, op, fz_pick(w, FZ_SQ), NETGPU_SOCKQ_IOCTL_RECV, &r,
		sizeof(r), NETGPU_RECV_SIZE_VER0, NULL);
}

/* Command numbers in and around netgpu's, any direction, size and bytes */
static void fz_op_raw_ioctl(struct fz_worker *w, int op)
{
	static const unsigned char nrs[] = {
		0x01, 0x02, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x30,
	};
	static const unsigned char sizes[] = { 16, 24, 40, 48, 72, 104, 136 };
	unsigned int nr, len, size;
	unsigned char buf[256];
	void *p;
	long ret;

	nr = fz_below(w, 3) ? nrs[fz_below(w, ARRAY_SIZE(nrs))] +
			      fz_below(w, 5) - 2 : fz_below(w, 256);
	nr &= _IOC_NRMASK;
	len = fz_below(w, 2) ? sizes[fz_below(w, ARRAY_SIZE(sizes))] :
			       fz_below(w, sizeof(buf));
	fz_fill(w, buf, sizeof(buf));
	buf[0] |= NETGPU_RECV_NONBLOCK;		/* should it be a RECV */
	if (nr == _IOC_NR(NETGPU_SOCKQ_IOCTL_RECV) && !len)
		len = NETGPU_RECV_SIZE_VER0;
	p = fz_place(w, buf, len, len, &size);
	ret = fz_ioctl(w, op, fz_pick(w, -1),
		       _IOC(fz_below(w, 4), NETGPU_IOCTL_TYPE, nr, size), p);
	if (nr == _IOC_NR(NETGPU_CTX_IOCTL_BIND_QUEUE) ||
	    nr == _IOC_NR(NETGPU_CTX_IOCTL_ATTACH_SOCKET))
		fz_new_queue(w, ret, nr == _IOC_NR(NETGPU_CTX_IOCTL_BIND_QUEUE) ?
			     FZ_IFQ : FZ_SQ, NULL);
}

/* mmap() any fd at a ring offset or anywhere, scribble, keep or unmap */
static void fz_op_mmap(struct fz_worker *w, int op)
{
	int fd = fz_pick(w, -1);
	struct fz_fd *e = fz_find(w, fd);
	struct netgpu_queue_geom g = { .mmap_size = 2 * fz.page };
	uint64_t offs[] = {
		NETGPU_OFF_FILL_RING, NETGPU_OFF_RX_RING,
		NETGPU_OFF_COMPLETION_RING, 0, 0, fz_val(w),
		fz_rand(w) & 0x1ffffffffULL & ~(fz.page - 1),
	};
	uint64_t len;
	void *p;

	if (e && e->geom.mmap_size) {
		g = e->geom;
		offs[3] = g.mmap_offset;
		offs[4] = g.mmap_offset;
	}
	len = fz_below(w, 3) ? g.mmap_size : fz_below(w, 2) ?
	      (1 + fz_below(w, 16)) * fz.page : fz_val(w);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 fz_below(w, 6) ? MAP_SHARED : MAP_PRIVATE, fd,
		 offs[fz_below(w, ARRAY_SIZE(offs))]);
	fz_rec(op, p == MAP_FAILED ? -1 : 0);
	if (p == MAP_FAILED)
		return;
	fz_guarded(w, fz_scribble, p, len, g.entries);
	fz_keep_or_unmap(w, p, len, g.entries);
}

/* Produce on the fill ring of a bound queue (or of whatever fd) */
static void fz_op_fill(struct fz_worker *w, int op)
{
	int fd = fz_pick(w, FZ_IFQ);
	struct fz_fd *e = fz_find(w, fd);
	struct netgpu_queue_geom g = { 64, 8, 0, 2 * fz.page };
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	void *p;

	if (e && e->kind == FZ_IFQ && e->geom.mmap_size)
		g = e->geom;
	p = mmap(NULL, g.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 g.mmap_offset);
	fz_rec(op, p == MAP_FAILED ? -1 : 0);
	if (p == MAP_FAILED)
		return;
	fz_guarded(w, fz_produce, p, g.mmap_size, g.entries);
	fz_rec(OP_POLL, poll(&pfd, 1, 0));
	fz_stats(w, OP_GET_STATS, fd);
	fz_keep_or_unmap(w, p, g.mmap_size, g.entries);
	e = fz_find(w, fd);
	if (e && !fz_below(w, 8))
		fz_close_at(w, e - w->fds);	/* unbind, by closing */
}

/* Scribble on a kept mapping, or unmap it */
static void fz_op_map(struct fz_worker *w, int op)
{
	struct fz_map *m = &w->maps[fz_below(w, w->nmaps)];

	if (!w->nmaps)
		return;
	if (op == OP_TOUCH) {
		fz_guarded(w, fz_below(w, 2) ? fz_produce : fz_scribble, m->p,
			   m->len, m->entries);
		return;
	}
	fz_rec(op, munmap(m->p, m->len));
	*m = w->maps[--w->nmaps];
}

static void fz_op_poll(struct fz_worker *w, int op)
{
	struct pollfd pfd[FZ_MAX_FDS + 1];
	int i, n = 0;

	for (i = 0; i < w->nfds; i++) {
		if (fz_below(w, 2))
			continue;
		pfd[n].fd = w->fds[i].fd;
		pfd[n++].events = fz_rand(w) & (POLLIN | POLLOUT | POLLPRI |
						POLLRDHUP);
	}
	pfd[n].fd = -1;
	pfd[n].events = POLLIN;
	fz_rec(op, poll(pfd, n + !fz_below(w, 4), 0));
}

/* Replace or drop host memory that regions may have pinned */
static void fz_op_host_mem(struct fz_worker *w, int op)
{
	unsigned char *a = w->host[fz_below(w, FZ_AREAS)];
	size_t len = FZ_PAGES * fz.page;
	void *p;

	if (fz_below(w, 2)) {
		fz_rec(op, madvise(a, len, MADV_DONTNEED));
		return;
	}
	p = mmap(a, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED | MAP_POPULATE, -1, 0);
	fz_rec(op, p == MAP_FAILED ? -1 : 0);
}

/* Leave without closing anything: the exit teardown runs */
static void fz_op_exit(struct fz_worker *w, int op)
{
	fz_rec(op, 0);
	if (fz_below(w, 2))
		_exit(FZ_EXIT_ABRUPT);
	kill(getpid(), SIGKILL);
}

/*
 * The whole correct sequence, so that the deep paths run too.  Raw
 * ioctls all the same: each is counted under its operation, and the fds
 * go into the worker's table for the hostile operations that follow.
 */
static void fz_op_setup(struct fz_worker *w, int op)
{
	struct netgpu_add_region ar = { .type = NETGPU_REGION_HOST };
	struct netgpu_attach_dev ad = { .ifindex = fz.ifindex };
	struct netgpu_bind_queue bq = { .fill = { 2 * FZ_PAGES, 8 } };
	struct netgpu_attach_socket as = { .rx = { 256, 16 } };
	struct netgpu_attach_region at = {};
	int ctx, s[2];
	struct fz_fd *e;
	long ret;

	while (w->nfds > FZ_MAX_FDS - 6)
		fz_close_at(w, fz_below(w, w->nfds));
	ctx = fz_open(w, OP_OPEN_CTX, FZ_CTX, O_RDWR);
	at.mem_fd = fz_open(w, OP_OPEN_MEM, FZ_MEM, O_RDWR);
	fz_rec(op, ctx < 0 || at.mem_fd < 0 ? -1 : 0);
	if (ctx < 0 || at.mem_fd < 0)
		return;
	ar.addr = (uintptr_t)w->host[fz_below(w, FZ_AREAS)];
	ar.len = FZ_PAGES * fz.page;
	ret = fz_ioctl(w, OP_ADD_REGION, at.mem_fd, NETGPU_MEM_IOCTL_ADD_REGION,
		       &ar);
	at.region_id = ret;
	e = fz_find(w, at.mem_fd);
	if (ret > 0 && e && !e->nids)
		e->ids[e->nids++] = ret;
	if (fz.ifindex)
		fz_ioctl(w, OP_ATTACH_DEV, ctx, NETGPU_CTX_IOCTL_ATTACH_DEV, &ad);
	fz_ioctl(w, OP_ATTACH_REGION, ctx, NETGPU_CTX_IOCTL_ATTACH_REGION, &at);
	if (fz.ifindex) {
		bq.flags = fz.queue < 0 ? NETGPU_BIND_QUEUE_ANY : 0;
		bq.queue_id = fz.queue < 0 ? 0 : fz.queue;
		ret = fz_ioctl(w, OP_BIND_QUEUE, ctx,
			       NETGPU_CTX_IOCTL_BIND_QUEUE, &bq);
		fz_new_queue(w, ret, FZ_IFQ, &bq.fill);
	}
	if (fz_rec(OP_OPEN_SOCK, fz_pair(w, s)))
		return;
	fz_add(w, s[0], FZ_TCP);
	fz_add(w, s[1], FZ_TCP);
	as.sock_fd = s[0];
	ret = fz_ioctl(w, OP_ATTACH_SOCKET, ctx, NETGPU_CTX_IOCTL_ATTACH_SOCKET,
		       &as);
	fz_new_queue(w, ret, FZ_SQ, &as.rx);
}

static const struct {
	const char *name;
	void (*fn)(struct fz_worker *w, int op);
	unsigned int weight;
} fz_ops[FZ_NOPS] = {
	[OP_SETUP]	  = { "setup",		fz_op_setup, 2 },
	[OP_OPEN_CTX]	  = { "open_ctx",	fz_op_open, 6 },
	[OP_OPEN_MEM]	  = { "open_mem",	fz_op_open, 6 },
	[OP_OPEN_UDMABUF] = { "open_udmabuf",	fz_op_open_udmabuf, 3 },
	[OP_OPEN_SOCK]	  = { "open_sock",	fz_op_open_sock, 4 },
	[OP_CLOSE]	  = { "close",		fz_op_close, 6 },
	[OP_DUP]	  = { "dup",		fz_op_dup, 3 },
	[OP_ADD_REGION]	  = { "add_region",	fz_op_add_region, 12 },
	[OP_REMOVE_REGION] = { "remove_region",	fz_op_remove_region, 5 },
	[OP_ATTACH_DEV]	  = { "attach_dev",	fz_op_attach_dev, 8 },
	[OP_ATTACH_REGION] = { "attach_region",	fz_op_region, 10 },
	[OP_DETACH_REGION] = { "detach_region",	fz_op_region, 5 },
	[OP_BIND_QUEUE]	  = { "bind_queue",	fz_op_bind_queue, 6 },
	[OP_ATTACH_SOCKET] = { "attach_socket",	fz_op_attach_socket, 8 },
	[OP_GET_STATS]	  = { "get_stats",	fz_op_get_stats, 5 },
	[OP_RECV]	  = { "recv",		fz_op_recv, 6 },
	[OP_RAW_IOCTL]	  = { "raw_ioctl",	fz_op_raw_ioctl, 12 },
	[OP_MMAP]	  = { "mmap",		fz_op_mmap, 6 },
	[OP_FILL]	  = { "fill",		fz_op_fill, 6 },
	[OP_TOUCH]	  = { "touch",		fz_op_map, 3 },
	[OP_MUNMAP]	  = { "munmap",		fz_op_map, 2 },
	[OP_POLL]	  = { "poll",		fz_op_poll, 3 },
	[OP_HOST_MEM]	  = { "host_mem",	fz_op_host_mem, 1 },
	[OP_EXIT]	  = { "exit",		fz_op_exit, 0 },
};

/* ===== Workers ===== */

static void fz_say(const char *s)
{
	ssize_t n = write(2, s, strlen(s));

	(void)n;
}

/* The backstop: a call has not returned for FZ_HANG_SECS */
static void fz_on_alarm(int sig)
{
	fz_say(fz_hang_msg);
	fz_say(fz_ops[fz_cur_op].name);
	fz_say("\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fz_on_stop(int sig)
{
	fz_stop = sig;
}

static void *fz_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("netgpu-fuzz: mmap");
		_exit(3);
	}
	return p;
}

static void fz_worker_init(struct fz_worker *w)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int i;

	w->arg = fz_anon((FZ_ARG_PAGES + 1) * fz.page, PROT_READ | PROT_WRITE);
	w->guard = w->arg + FZ_ARG_PAGES * fz.page;
	mprotect(w->guard, fz.page, PROT_NONE);
	w->ro_page = fz_anon(fz.page, PROT_READ);
	w->unmapped = fz_anon(fz.page, PROT_READ);
	munmap(w->unmapped, fz.page);
	for (i = 0; i < FZ_AREAS; i++) {
		w->host[i] = fz_anon(FZ_PAGES * fz.page, PROT_READ | PROT_WRITE);
		fz_fill(w, w->host[i], FZ_PAGES * fz.page);
	}
	w->ro_area = fz_anon(8 * fz.page, PROT_READ);
	w->heap = malloc(9 * fz.page);
	w->listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			     0);
	if (bind(w->listener, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(w->listener, 64)) {
		close(w->listener);
		w->listener = -1;
	}
}

static void fz_worker(int idx, uint64_t seed, double deadline)
{
	static struct fz_worker w;
	struct sigaction sa = { .sa_handler = fz_on_fault };
	unsigned int total = 0, r;
	int op;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	w.idx = idx;
	w.rng = seed;
	snprintf(fz_hang_msg, sizeof(fz_hang_msg),
		 "netgpu-fuzz: worker %d (seed %llu) hung %d s, killed, in ",
		 idx, (unsigned long long)seed, FZ_HANG_SECS);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	signal(SIGALRM, fz_on_alarm);
	signal(SIGPIPE, SIG_IGN);
	fz_worker_init(&w);

	for (op = 0; op < FZ_NOPS; op++)
		total += fz_ops[op].weight;
	while (!fz_stop && fz_now() < deadline) {
		r = fz_below(&w, total);
		for (op = 0; r >= fz_ops[op].weight; op++)
			r -= fz_ops[op].weight;
		if (!fz_below(&w, 20000))
			op = OP_EXIT;
		fz_cur_op = op;
		alarm(FZ_HANG_SECS);
		fz_ops[op].fn(&w, op);
	}
	alarm(0);
	while (fz_below(&w, 2) && w.nfds)	/* or leave them to exit */
		fz_close_at(&w, fz_below(&w, w.nfds));
	_exit(0);
}

/* ===== The parent ===== */

struct fz_slot {
	pid_t pid;
	int gen;
	uint64_t seed;
};

/* Print each operation's results; returns the number of calls */
static uint64_t fz_print(void)
{
	static const char * const res[] = { "E>1023", "SIGBUS", "SIGSEGV" };
	uint64_t v, calls, total = 0;
	unsigned int i, k;
	const char *name;
	char buf[16];
	int op;

	for (op = 0; op < FZ_NOPS; op++) {
		for (calls = 0, i = 0; i < FZ_NRES; i++)
			calls += __atomic_load_n(&fz_sh->res[op][i],
						 __ATOMIC_RELAXED);
		total += calls;
		if (!calls)
			continue;
		printf("netgpu-fuzz:   %-14s calls=%llu", fz_ops[op].name,
		       (unsigned long long)calls);
		for (k = 0; k < FZ_NRES; k++) {
			/* 0, > 0, the errnos, then the rest */
			i = k == 0 ? 0 : k == 1 ? FZ_POS : k <= FZ_POS ? k - 1 : k;
			v = __atomic_load_n(&fz_sh->res[op][i], __ATOMIC_RELAXED);
			if (!v)
				continue;
			name = i >= FZ_BIGERR ? res[i - FZ_BIGERR] :
			       i == FZ_POS ? ">0" : i ? strerrorname_np(i) : "0";
			if (!name) {
				snprintf(buf, sizeof(buf), "E%u", i);
				name = buf;
			}
			printf(" %s=%llu", name, (unsigned long long)v);
		}
		putchar('\n');
	}
	fflush(stdout);
	return total;
}

static int fz_spawn(struct fz_slot *s, int idx, double deadline)
{
	s->seed = fz_seed(idx, s->gen);
	fflush(stdout);
	s->pid = fork();
	if (!s->pid)
		fz_worker(idx, s->seed, deadline);
	if (s->pid < 0)
		perror("netgpu-fuzz: fork");
	return s->pid > 0;
}

/* Bring lo up for the loopback pairs; if that fails, they fail */
static void fz_lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			perror("netgpu-fuzz: bringing lo up");
		else
			printf("netgpu-fuzz: brought lo up\n");
	}
	close(s);
}

static int fz_run(void)
{
	struct fz_slot *sl = calloc(fz.procs, sizeof(*sl));
	double t, start = fz_now(), end = start + fz.secs, next = start + 10;
	int i, st, sig, live = 0, fail = -1, fail_sig = 0;
	int respawns = 0, kills = 0, hangs = 0, errexits = 0;
	static struct fz_worker pw;	/* the parent's PRNG */
	uint64_t calls;
	pid_t pid;

	pw.rng = fz_seed(-1, 0);
	for (i = 0; i < fz.procs; i++)
		live += fz_spawn(&sl[i], i, end);
	while (live) {
		pid = waitpid(-1, &st, WNOHANG);
		for (i = 0; pid > 0 && i < fz.procs; i++) {
			if (sl[i].pid != pid)
				continue;
			sl[i].pid = 0;
			live--;
			sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
			/*
			 * A hang (its alarm fired: the message says in which
			 * call) fails the run; the worker is re-forked.
			 */
			hangs += sig == SIGALRM;
			if (sig && sig != SIGALRM && sig != SIGKILL && fail < 0) {
				fail = i;
				fail_sig = sig;
				end = fz_now();
			}
			if (WIFEXITED(st) && WEXITSTATUS(st) &&
			    WEXITSTATUS(st) != FZ_EXIT_ABRUPT) {
				/*
				 * Its own setup failed: a failure, not a
				 * quietly smaller run.
				 */
				errexits++;
				printf("netgpu-fuzz: FAIL worker %d (seed %llu) exited with %d\n",
				       i, (unsigned long long)sl[i].seed,
				       WEXITSTATUS(st));
			} else if (fz_now() < end && !fz_stop) {
				/* Re-fork it, with its next seed */
				sl[i].gen++;
				respawns++;
				live += fz_spawn(&sl[i], i, end);
			}
		}
		if (pid > 0)
			continue;
		t = fz_now();
		if (fz_stop && t < end)
			end = t;
		if (t >= next) {
			printf("netgpu-fuzz: progress %.0fs respawns=%d kills=%d hangs=%d\n",
			       t - start, respawns, kills, hangs);
			fz_print();
			next += 10;
		}
		/* Now and then a worker dies in the middle of a call */
		i = fz_below(&pw, 100 * fz.procs);
		if (t < end && i < fz.procs && sl[i].pid > 0)
			kills += !kill(sl[i].pid, SIGKILL);
		for (i = 0; i < fz.procs && (t >= end + 30 || fail >= 0); i++)
			if (sl[i].pid > 0)
				kill(sl[i].pid, SIGKILL);
		for (i = 0; i < fz.procs && t >= end + 60; i++)
			if (sl[i].pid > 0) {
				printf("netgpu-fuzz: FAIL worker %d (seed %llu) still alive 60 s after the deadline\n",
				       i, (unsigned long long)sl[i].seed);
				return 1;
			}
		usleep(100000);
	}

	printf("netgpu-fuzz: totals after %.0fs: respawns=%d kills=%d hangs=%d errexits=%d violations=%llu bad_fds=%llu\n",
	       fz_now() - start, respawns, kills, hangs, errexits,
	       (unsigned long long)fz_sh->violations,
	       (unsigned long long)fz_sh->bad_fds);
	calls = fz_print();
	if (fail >= 0)
		printf("netgpu-fuzz: FAIL worker %d (seed %llu) killed by signal %d\n",
		       fail, (unsigned long long)sl[fail].seed, fail_sig);
	if (fz_sh->violations)
		printf("netgpu-fuzz: FAIL %llu netgpu ioctls on a pipe did not fail with ENOTTY\n",
		       (unsigned long long)fz_sh->violations);
	if (fz_sh->bad_fds)
		printf("netgpu-fuzz: FAIL %llu queue fds returned not open or not O_CLOEXEC\n",
		       (unsigned long long)fz_sh->bad_fds);
	if (hangs)
		printf("netgpu-fuzz: FAIL %d workers hung %d s in a call (killed by their alarm; the call is named above)\n",
		       hangs, FZ_HANG_SECS);
	if (errexits)
		printf("netgpu-fuzz: FAIL %d workers exited with an error\n",
		       errexits);
	if (fail >= 0 || fz_sh->violations || fz_sh->bad_fds || hangs ||
	    errexits)
		return 1;
	printf("netgpu-fuzz: done seed=%llu calls=%llu procs=%d secs=%d\n",
	       (unsigned long long)fz.seed, (unsigned long long)calls,
	       fz.procs, fz.secs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", 1, NULL, 's' }, { "time", 1, NULL, 't' },
		{ "procs", 1, NULL, 'p' }, { "ifname", 1, NULL, 'i' },
		{ "queue", 1, NULL, 'q' }, { "help", 0, NULL, 'h' },
		{}
	};
	static const char * const devs[] = { "/dev/netgpu", "/dev/netgpu_mem" };
	struct timespec ts;
	int c, have_seed = 0;

	while ((c = getopt_long(argc, argv, "s:t:p:i:q:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			fz.seed = strtoull(optarg, NULL, 0);
			have_seed = 1;
			break;
		case 't':
			fz.secs = atoi(optarg);
			break;
		case 'p':
			fz.procs = atoi(optarg);
			break;
		case 'i':
			fz.ifname = optarg;
			break;
		case 'q':
			fz.queue = atoi(optarg);
			break;
		case 'h':
			fputs(fz_help_text, stdout);
			return 0;
		default:
			fputs(fz_help_text, stderr);
			return 2;
		}
	}
	if (optind != argc || fz.secs < 1 || fz.procs < 1 || fz.procs > 256) {
		fputs(fz_help_text, stderr);
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!have_seed)
		fz.seed = fz_mix(ts.tv_sec ^ ((uint64_t)ts.tv_nsec << 20));
	fz.page = sysconf(_SC_PAGESIZE);

	printf("netgpu-fuzz: seed=%llu secs=%d procs=%d ifname=%s\n",
	       (unsigned long long)fz.seed, fz.secs, fz.procs,
	       fz.ifname ? fz.ifname : "-");
	printf("netgpu-fuzz: repeat with: netgpu-fuzz -s %llu -t %d -p %d",
	       (unsigned long long)fz.seed, fz.secs, fz.procs);
	if (fz.ifname)
		printf(" -i %s", fz.ifname);
	if (fz.queue >= 0)
		printf(" -q %d", fz.queue);
	printf("\n");
	fflush(stdout);

	for (c = 0; c < (int)ARRAY_SIZE(devs); c++) {
		if (access(devs[c], R_OK | W_OK)) {
			fprintf(stderr, "netgpu-fuzz: %s: %s (no netgpu in this kernel?): nothing to fuzz\n",
				devs[c], strerror(errno));
			return 3;
		}
	}
	if (fz.ifname) {
		fz.ifindex = if_nametoindex(fz.ifname);
		if (!fz.ifindex) {
			fprintf(stderr, "netgpu-fuzz: %s: %s\n", fz.ifname,
				strerror(errno));
			return 2;
		}
	}
	fz.have_udmabuf = !access("/dev/udmabuf", R_OK | W_OK);
	if (!fz.have_udmabuf)
		printf("netgpu-fuzz: no /dev/udmabuf: no udmabuf regions\n");
	fz_lo_up();

	fz_sh = mmap(NULL, sizeof(*fz_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz_sh == MAP_FAILED) {
		perror("netgpu-fuzz: mmap");
		return 1;
	}
	signal(SIGINT, fz_on_stop);
	signal(SIGTERM, fz_on_stop);
	signal(SIGPIPE, SIG_IGN);
	return fz_run();
}
