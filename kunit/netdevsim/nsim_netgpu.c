// SPDX-License-Identifier: GPL-2.0-only
/*
 * nsim_netgpu: netgpu's NIC interface on netdevsim, from user space.
 * Built static on the host by scripts/netdevsim-check against the
 * repository's include/uapi/linux/netgpu.h and libnetgpu
 * (tools/lib/netgpu, compiled in), run in the guest by
 * kunit/netdevsim/run.sh.  Every netgpu ioctl and every access to a
 * ring goes through the library: the orderings of the rings are the
 * ones kunit/litmus/netgpu-ring.litmus proves, and no mode here keeps
 * ring code of its own.
 *
 *   nsim_netgpu bind <ifname> <pages> <seconds> <command file>
 *   nsim_netgpu recv-unreadable <port> <bytes> <seconds> [devmem]
 *   nsim_netgpu packet <ifname> <seconds>
 *   nsim_netgpu netlink <ifname | ->
 *   nsim_netgpu send <ifname> <IPv4 or IPv6 address> <port> <bytes> <seed>
 *		<host|udmabuf|remove|copy|msgzc> [<region MiB, default 8>]
 *   nsim_netgpu netem <ifname> <loss in 1/10000, 0 deletes it>
 *   nsim_netgpu memcg <ifname> <cgroup dir> <limit KiB> <adds> <slack KiB>
 *   nsim_netgpu setlink <ifname> <gso_max_size|gso_ipv4_max_size> <bytes>
 *
 * bind: registers <pages> pages of anonymous host memory
 * (/dev/netgpu_mem), attaches <ifname> and the region to a context
 * (/dev/netgpu), binds rx queue 0 with a 256-entry fill ring, maps the
 * ring and posts three entries the kernel must skip (an address inside a
 * buffer, one in no region, a buffer never handed out), then prints
 * "ready" and runs the commands appended to <command file>, one a line,
 * "<n> <command> [args]", answering each with lines "<n> ..." and a last
 * "<n> done":
 *   check <seed> <bytes>	where the nsim_tcp stream of <seed> is in the
 *				region: pages that are not zero, bytes of the
 *				stream found at the start of a page and on
 *   stats			NETGPU_IOCTL_GET_STATS of the queue and context
 *   ring			the fill ring's prod, cons and flags
 *   poll			poll() of the queue fd, without waiting
 *   bind2			a second context binding queue 0 (must fail
 *				with EEXIST) and any queue (EBUSY)
 *   dead			the context's ioctls after its device went
 *				(each must fail with ENODEV)
 *   unbind			unmap the ring and close the queue fd
 *   quit			close everything and exit 0
 * Meanwhile it polls the queue fd and prints "hup: ..." once poll()
 * reports EPOLLERR or EPOLLHUP.  Without "quit" it exits 1 after
 * <seconds>.
 *
 * recv-unreadable: accepts one TCP connection (IPv6 and IPv4), waits
 * for <bytes> to be queued (SIOCINQ), then expects recv() to fail with
 * EFAULT (the payload is in unreadable net_iov frags) and the data to
 * stay queued; with "devmem", also recvmsg(MSG_SOCK_DEVMEM) to fail with
 * ENODEV.  Then it shuts its sending side down (the sender sees the
 * end) and holds the socket, its data still queued, until SIGTERM or
 * <seconds>.  Exit 0 if every check passed.
 *
 * packet: a non-mmap AF_PACKET SOCK_RAW ETH_P_ALL socket on <ifname>
 * reads until SIGTERM or <seconds>; with PACKET_AUXDATA it counts the
 * packets whose payload was cut (unreadable frags: the snap length is
 * the linear part) and checks that what is left is exactly the headers.
 * Exit 0 if at least one packet was cut that way and all were.
 *
 * netlink: dumps the rx/tx queues of <ifname> (netdev queue-get) and the
 * page pools of the namespace (page-pool-get; only <ifname>'s, unless
 * "-"), each with the netgpu context id of its netgpu nest
 * (patches/0022) or "none", and fails if any of them reports a dma-buf.
 *
 * udmabuf-sweep <pages>: UDMABUF_CREATE of a sealed memfd of <pages>
 * pages with its 1st, 2nd, ... slab or page allocation failing
 * (/proc/thread-self/fail-nth; failslab and fail_page_alloc must not
 * ignore GFP_KERNEL), until one call completes without reaching its
 * fault; after each, the FOLL_PIN pins out (/proc/vmstat, per-CPU
 * counts folded first) must be what they were: an error path that
 * forgets a pinned folio leaves one out.  Prints each leak and
 * "udmabuf-sweep: faults=N leaked=N"; exit 0 if nothing leaked.
 *
 * memcg: what netgpu charges to the caller's memory cgroup, run as the
 * only process of <cgroup dir> (cgroup2, memory controller on), from
 * its memory.current.  Prints the cgroup it is in, then
 *   nsim_netgpu: memcg ring: entries=<n> bytes=<n> before=<n> with=<n>
 *             after=<n>
 * around ATTACH_SOCKET of a TCP connection over 127.0.0.1 with the
 * largest rx ring (NETGPU_QUEUE_MAX_ENTRIES; a context of <ifname>):
 * before it, while it exists, once it is closed; and
 *   nsim_netgpu: memcg regions: limit=<bytes> adds=<n> errno=<name>
 *             before=<n> at_end=<n> after=<n>
 * around one udmabuf of a page added to one area as a region again and
 * again, with memory.max set to <limit KiB> above memory.current: the
 * adds made before one failed (errno, "none" after <adds> of them),
 * the figure then, and once the area is closed.  "after" is read once
 * it is at most <slack KiB> above "before", or after 10 s.  memory.max
 * is "max" again at the end.  Exit 0 if every step could be made.
 *
 * send: zero-copy transmit (NETGPU_SOCKQ_IOCTL_SEND) of <bytes> of the
 * nsim_tcp stream of <seed>, which `nsim_tcp recv <port> <bytes> <seed>`
 * checks at <address>.  One region of <region MiB> (host: anonymous
 * memory; udmabuf: a udmabuf of memfd pages, known at the address of the
 * memfd's mapping) attached with <ifname> to a context, a TCP socket
 * attached with an rx ring (required, never read) and a 64-entry
 * completion ring.  The region is cut into 256 KiB slots: the next free
 * slot is filled with the next bytes of the stream (the CPU writing the
 * region) and sent with its index as user_data, again from where the
 * socket stopped taking it (a new send and completion); a slot is free
 * again once all its sends completed.  With no slot free, or the
 * completion ring full (ENOBUFS), it polls for EPOLLRDBAND and reaps the
 * ring.  After the last byte it shuts its side down, waits at most 120 s
 * for every completion and prints, from NETGPU_IOCTL_GET_STATS of the
 * socket queue,
 *   nsim_netgpu: send bytes=<n> sends=<n> completions=<n> copied=<n>
 *             pending=<n> lost=<n> reaped=<n> unexpected=<n> secs=<s>
 * (reaped: the entries it read; unexpected: those naming no slot with a
 * send out).  Exit 0 only if it sent exactly <bytes>, every send
 * completed once, none is pending or lost.  SIGTERM stops the sends: the
 * line is printed, exit 1.  With udmabuf, the first SEND must fail with
 * EOPNOTSUPP (dma-buf regions cannot be sent from on 6.12): it prints
 * "nsim_netgpu: send dmabuf refused errno=EOPNOTSUPP" and exits 0 then
 * only.  With remove (host memory), the region is removed
 * (REMOVE_REGION) once a quarter of <bytes> is accepted: the next SEND
 * must fail with ENODEV or EFAULT, every send accepted before must
 * still complete once; it prints
 * "nsim_netgpu: send removed after=<bytes> errno=<name>" before the
 * line above and exits 0 then only (bytes= is then what was accepted).
 * copy and msgzc are the peers make bench compares netgpu's send with:
 * no context, the same slots of the same host memory filled the same
 * way, each sent with send() (a slot free again once it returns) or
 * send(MSG_ZEROCOPY) (SO_ZEROCOPY; free again once the error queue's
 * notifications name all its sends; copied= counts the ids notified
 * SO_EE_CODE_ZEROCOPY_COPIED), and the same report line.
 * A send making no progress for 30 s fails.
 *
 * netem: replaces <ifname>'s root qdisc with netem dropping each packet
 * with probability <loss>/10000 (rtnetlink RTM_NEWQDISC, netem's
 * tc_netem_qopt: busybox has no tc), or deletes the root qdisc with 0.
 * The kernel draws the drops (not reproducible packet by packet).
 *
 * setlink: sets <ifname>'s gso_max_size or gso_ipv4_max_size to <bytes>
 * (rtnetlink RTM_SETLINK with IFLA_GSO_MAX_SIZE or IFLA_GSO_IPV4_MAX_SIZE:
 * busybox's ip has neither).  Prints
 * "setlink: <ifname> <attr> <bytes>: accepted" and exits 0, or
 * "setlink: <ifname> <attr> <bytes>: refused: <errno> (<extack message>)"
 * and exits 1.
 *
 * Exit status: 0 success, 1 failure, 2 usage, 3 the kernel has no netgpu
 * (or no NIC interface: BIND_QUEUE fails with EOPNOTSUPP).  Every wait
 * is bounded.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/errqueue.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/udmabuf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <netgpu/netgpu.h>	/* libnetgpu, and <linux/netgpu.h> */
#include "stream.h"

#define NG_CAT2(a, b)	a##b
#define NG_CAT(a, b)	NG_CAT2(a, b)
#define NG_ASSERT(c)	typedef char NG_CAT(ng_assert_, __LINE__)[(c) ? 1 : -1]

/*
 * The ABI as the header documents it: the VER0 sizes (the ring's layout
 * is libnetgpu's, and scripts/uapi-check's).
 */
NG_ASSERT(sizeof(struct netgpu_add_region) == NETGPU_ADD_REGION_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_attach_dev) == NETGPU_ATTACH_DEV_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_attach_region) == NETGPU_ATTACH_REGION_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_bind_queue) == NETGPU_BIND_QUEUE_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_attach_socket) == NETGPU_ATTACH_SOCKET_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_stats) == NETGPU_STATS_SIZE_VER2);
NG_ASSERT(sizeof(struct netgpu_send) == NETGPU_SEND_SIZE_VER0);
NG_ASSERT(sizeof(struct netgpu_send_iov) == 16);

/* 6.12 values (include/linux/socket.h, include/uapi/linux/netdev.h):
 * the host's headers are older.
 */
#define NG_MSG_SOCK_DEVMEM		0x2000000
#define NG_NETDEV_CMD_PAGE_POOL_GET	5
#define NG_NETDEV_CMD_QUEUE_GET		10
#define NG_NETDEV_A_PAGE_POOL_ID	1
#define NG_NETDEV_A_PAGE_POOL_IFINDEX	2
#define NG_NETDEV_A_PAGE_POOL_INFLIGHT	4
#define NG_NETDEV_A_PAGE_POOL_DETACH_TIME 6
#define NG_NETDEV_A_PAGE_POOL_DMABUF	7
#define NG_NETDEV_A_QUEUE_ID		1
#define NG_NETDEV_A_QUEUE_IFINDEX	2
#define NG_NETDEV_A_QUEUE_TYPE		3
#define NG_NETDEV_A_QUEUE_NAPI_ID	4
#define NG_NETDEV_A_QUEUE_DMABUF	5
/* patches/0022's: the netgpu nest of a queue and of a page pool (after
 * the numbers mainline gave io_uring and AF_XDP, reserved there).
 */
#define NG_NETDEV_A_QUEUE_NETGPU	8
#define NG_NETDEV_A_PAGE_POOL_NETGPU	9
#define NG_NETDEV_A_NETGPU_PROVIDER_INFO_CTX_ID 1

#define NG_FILL_ENTRIES		256
#define NG_WAIT_MS		30000	/* accept, data queued */

static volatile sig_atomic_t ng_stop;

static void ng_on_signal(int sig)
{
	(void)sig;
	ng_stop = 1;
}

/* SIGTERM and SIGINT end a hold or a read; no SA_RESTART: poll() returns. */
static void ng_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ng_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static long long ng_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ng_sleep_ms(int ms)
{
	poll(NULL, 0, ms);
}

static const char *ng_errname(int err)
{
	static char buf[32];

	switch (err) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENOTTY: return "ENOTTY";
	case E2BIG: return "E2BIG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENETDOWN: return "ENETDOWN";
	case EALREADY: return "EALREADY";
	case ENOTCONN: return "ENOTCONN";
	case ECONNRESET: return "ECONNRESET";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOBUFS: return "ENOBUFS";
	case EPIPE: return "EPIPE";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EPROTO: return "EPROTO";
	}
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

/* A memfd of @size bytes sealed against shrinking, as udmabuf wants it. */
static int ng_memfd(const char *name, size_t size)
{
	int fd = memfd_create(name, MFD_ALLOW_SEALING), err;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* ===== bind: a context, a region, rx queue 0 ===== */

struct ng {
	long page;
	size_t pages;
	unsigned char *mem;
	int mem_fd;
	int ctx_fd;
	struct netgpu_ifq *ifq;	/* rx queue 0, its fill ring mapped */
	int ifindex;
	uint32_t region;
	int hup;
};

static unsigned int ng_seq;

/* A reply line of the current command. */
static void ng_reply(const char *fmt, ...)
{
	va_list ap;

	printf("%u ", ng_seq);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *ng_revents(short re)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "0x%x%s%s%s%s%s", (unsigned int)re,
		 re & POLLIN ? " IN" : "", re & POLLOUT ? " OUT" : "",
		 re & POLLERR ? " ERR" : "", re & POLLHUP ? " HUP" : "",
		 re & POLLNVAL ? " NVAL" : "");
	return buf;
}

/*
 * GET_STATS into a poisoned struct (the library's netgpu_get_stats()
 * zeroes it, for its users): a counter the kernel does not write back
 * shows as ~0, and the scenarios' sums and zero checks fail on it.
 */
static int ng_get_stats(int fd, struct netgpu_stats *st)
{
	memset(st, 0xff, sizeof(*st));
	return ioctl(fd, NETGPU_IOCTL_GET_STATS, st) ? -errno : 0;
}

static void ng_print_stats(const char *what, const struct netgpu_stats *st)
{
	unsigned long long total = st->bufs_cache + st->bufs_nic +
		st->bufs_stack + st->bufs_rx_ring + st->bufs_user;

	ng_reply("stats %s fill_taken=%llu fill_bad_index=%llu fill_unaligned=%llu fill_no_region=%llu fill_never_given=%llu fill_twice=%llu fill_in_nic=%llu fill_in_stack=%llu bufs_cache=%llu bufs_nic=%llu bufs_stack=%llu bufs_rx_ring=%llu bufs_user=%llu bufs_total=%llu",
		 what,
		 (unsigned long long)st->fill_taken,
		 (unsigned long long)st->fill_bad_index,
		 (unsigned long long)st->fill_unaligned,
		 (unsigned long long)st->fill_no_region,
		 (unsigned long long)st->fill_never_given,
		 (unsigned long long)st->fill_twice,
		 (unsigned long long)st->fill_in_nic,
		 (unsigned long long)st->fill_in_stack,
		 (unsigned long long)st->bufs_cache,
		 (unsigned long long)st->bufs_nic,
		 (unsigned long long)st->bufs_stack,
		 (unsigned long long)st->bufs_rx_ring,
		 (unsigned long long)st->bufs_user, total);
}

static void ng_cmd_stats(struct ng *ng)
{
	struct netgpu_stats st;
	int err;

	if (ng->ifq) {
		err = ng_get_stats(netgpu_ifq_fd(ng->ifq), &st);
		if (err)
			ng_reply("stats ifq: GET_STATS %s", ng_errname(-err));
		else
			ng_print_stats("ifq", &st);
	}
	err = ng_get_stats(ng->ctx_fd, &st);
	if (err)
		ng_reply("stats ctx: GET_STATS %s", ng_errname(-err));
	else
		ng_print_stats("ctx", &st);
}

/* The fill ring's header as the kernel left it: what it consumed. */
static void ng_cmd_ring(struct ng *ng)
{
	struct netgpu_ring_info ri;

	if (!ng->ifq || netgpu_fill_info(ng->ifq, &ri)) {
		ng_reply("ring: not mapped");
		return;
	}
	ng_reply("ring prod=%u cons=%u flags=%u", ri.prod, ri.cons, ri.flags);
}

static void ng_cmd_poll(struct ng *ng)
{
	struct pollfd p = { .events = POLLIN | POLLOUT };
	int n;

	if (!ng->ifq) {
		ng_reply("poll: no queue fd");
		return;
	}
	p.fd = netgpu_ifq_fd(ng->ifq);
	n = poll(&p, 1, 0);
	if (n < 0)
		ng_reply("poll: %s", ng_errname(errno));
	else
		ng_reply("poll revents %s", ng_revents(n ? p.revents : 0));
}

/* 8-byte words of the stream -> their offsets (+1), open addressing. */
struct ng_index {
	uint32_t *slot;
	size_t mask;
};

static size_t ng_hash(uint64_t w, size_t mask)
{
	return (size_t)((w * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
}

static int ng_index_build(struct ng_index *ix, const unsigned char *s,
			  size_t len)
{
	size_t n = 1, o;

	while (n < 2 * len + 2)
		n <<= 1;
	ix->slot = calloc(n, sizeof(*ix->slot));
	if (!ix->slot)
		return -1;
	ix->mask = n - 1;
	for (o = 0; o + 8 <= len; o++) {
		uint64_t w;
		size_t h;

		memcpy(&w, s + o, 8);
		for (h = ng_hash(w, ix->mask); ix->slot[h]; h = (h + 1) & ix->mask)
			;
		ix->slot[h] = o + 1;
	}
	return 0;
}

/*
 * check <seed> <bytes>: the emulated NIC writes each payload chunk at
 * offset 0 of a buffer (a page), so every chunk of the stream must be at
 * the start of some page of the region.  For each page that is not zero,
 * find the stream offsets its first 8 bytes are at and mark the longest
 * match as covered; all the stream must be covered, and its first bytes
 * must start a page.  Chunks are multiples of 8 bytes with TCP
 * timestamps (MSS 1448) and a multiple of 8 bytes sent.
 */
static void ng_cmd_check(struct ng *ng, const char *args)
{
	unsigned long long seed, bytes, covered = 0;
	size_t p, nonzero = 0, first = (size_t)-1, o;
	unsigned char *s, *cov;
	struct ng_index ix;
	struct stream st;

	if (sscanf(args, "%llu %llu", &seed, &bytes) != 2 || bytes < 8 ||
	    bytes > (1ULL << 30)) {
		ng_reply("check: usage: check <seed> <bytes (8 to 1 GiB)>");
		return;
	}
	s = malloc(bytes);
	cov = calloc(bytes, 1);
	if (!s || !cov) {
		ng_reply("check: out of memory");
		goto out_free;
	}
	stream_init(&st, seed);
	for (o = 0; o < bytes; o++)
		s[o] = stream_next(&st);
	if (ng_index_build(&ix, s, bytes)) {
		ng_reply("check: out of memory");
		goto out_free;
	}

	for (p = 0; p < ng->pages; p++) {
		const unsigned char *pg = ng->mem + p * ng->page;
		uint64_t w;
		size_t h, i;

		for (i = 0; i < (size_t)ng->page && !pg[i]; i++)
			;
		if (i == (size_t)ng->page)
			continue;
		nonzero++;
		memcpy(&w, pg, 8);
		for (h = ng_hash(w, ix.mask); ix.slot[h]; h = (h + 1) & ix.mask) {
			size_t at = ix.slot[h] - 1, len = 0;

			if (memcmp(s + at, pg, 8))
				continue;
			while (len < (size_t)ng->page && at + len < bytes &&
			       s[at + len] == pg[len])
				len++;
			if (!at && first == (size_t)-1)
				first = p;
			memset(cov + at, 1, len);
		}
	}
	for (o = 0; o < bytes; o++)
		covered += cov[o];
	if (first == (size_t)-1)
		ng_reply("check seed=%llu bytes=%llu pages_nonzero=%zu covered=%llu/%llu first=none",
			 seed, bytes, nonzero, covered, bytes);
	else
		ng_reply("check seed=%llu bytes=%llu pages_nonzero=%zu covered=%llu/%llu first=page%zu",
			 seed, bytes, nonzero, covered, bytes, first);
	free(ix.slot);
out_free:
	free(s);
	free(cov);
}

/* bind2: another context (own region) may bind no queue of the device. */
static void ng_cmd_bind2(struct ng *ng)
{
	struct netgpu_ifq *ifq;
	size_t len = 4 * ng->page;
	void *mem;
	int ctx, id, err;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		ng_reply("bind2: mmap: %s", ng_errname(errno));
		return;
	}
	ctx = netgpu_ctx_open();
	if (ctx < 0) {
		ng_reply("bind2: open /dev/netgpu: %s", ng_errname(-ctx));
		goto out_unmap;
	}
	id = netgpu_area_add_host(ng->mem_fd, mem, len);
	if (id < 0) {
		ng_reply("bind2: ADD_REGION: %s", ng_errname(-id));
		goto out_close;
	}
	err = netgpu_ctx_attach_dev(ctx, ng->ifindex);
	if (!err)
		err = netgpu_ctx_attach_region(ctx, ng->mem_fd, id);
	if (err) {
		ng_reply("bind2: context setup: %s", ng_errname(-err));
		goto out_remove;
	}
	err = netgpu_ifq_bind(ctx, 0, NG_FILL_ENTRIES, &ifq);
	if (!err) {
		ng_reply("bind2 queue 0: bound (fd %d), should have failed",
			 netgpu_ifq_fd(ifq));
		netgpu_ifq_close(ifq);
	} else {
		ng_reply("bind2 queue 0: %s", ng_errname(-err));
	}
	err = netgpu_ifq_bind(ctx, NETGPU_LIB_QUEUE_ANY, NG_FILL_ENTRIES, &ifq);
	if (!err) {
		ng_reply("bind2 any: bound queue %u (fd %d), should have failed",
			 netgpu_ifq_queue_id(ifq), netgpu_ifq_fd(ifq));
		netgpu_ifq_close(ifq);
	} else {
		ng_reply("bind2 any: %s", ng_errname(-err));
	}
out_remove:
	netgpu_area_remove(ng->mem_fd, id);
out_close:
	close(ctx);
out_unmap:
	munmap(mem, len);
}

/*
 * dead: the device went; every call on the context fails with ENODEV.
 * The library makes each call as it is: nothing in them is wrong but the
 * ATTACH_SOCKET's socket, which is not connected (the context's death
 * must be found first), and the library passes any socket on.
 */
static void ng_cmd_dead(struct ng *ng)
{
	struct netgpu_sockq *sq;
	struct netgpu_ifq *ifq;
	struct netgpu_stats st;
	int err, sock, enodev = 0;

	err = netgpu_ctx_attach_dev(ng->ctx_fd, ng->ifindex);
	ng_reply("dead ATTACH_DEV: %s", ng_errname(-err));
	enodev += err == -ENODEV;
	err = netgpu_ctx_attach_region(ng->ctx_fd, ng->mem_fd, ng->region);
	ng_reply("dead ATTACH_REGION: %s", ng_errname(-err));
	enodev += err == -ENODEV;
	err = netgpu_ctx_detach_region(ng->ctx_fd, ng->mem_fd, ng->region);
	ng_reply("dead DETACH_REGION: %s", ng_errname(-err));
	enodev += err == -ENODEV;
	err = netgpu_ifq_bind(ng->ctx_fd, 0, NG_FILL_ENTRIES, &ifq);
	if (!err)
		netgpu_ifq_close(ifq);
	ng_reply("dead BIND_QUEUE: %s", err ? ng_errname(-err) : "bound");
	enodev += err == -ENODEV;
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	err = netgpu_sockq_attach(ng->ctx_fd, sock, NG_FILL_ENTRIES, 0, &sq);
	if (!err)
		netgpu_sockq_close(sq);
	ng_reply("dead ATTACH_SOCKET: %s", err ? ng_errname(-err) : "attached");
	enodev += err == -ENODEV;
	close(sock);
	ng_reply("dead: %d of 5 ioctls failed with ENODEV", enodev);

	/* Counters stay readable on a dead context and its queue. */
	err = ng_get_stats(ng->ctx_fd, &st);
	ng_reply("dead GET_STATS ctx: %s", ng_errname(-err));
	if (ng->ifq) {
		err = ng_get_stats(netgpu_ifq_fd(ng->ifq), &st);
		ng_reply("dead GET_STATS ifq: %s", ng_errname(-err));
	}
}

/*
 * The ring mapping holds the file: netgpu_ifq_close() unmaps it before
 * closing the queue fd, or the close would unbind nothing.
 */
static void ng_unbind(struct ng *ng)
{
	netgpu_ifq_close(ng->ifq);
	ng->ifq = NULL;
}

static void ng_close(struct ng *ng)
{
	ng_unbind(ng);
	if (ng->ctx_fd >= 0)
		close(ng->ctx_fd);
	if (ng->mem_fd >= 0)
		close(ng->mem_fd);
	if (ng->mem)
		munmap(ng->mem, ng->pages * ng->page);
	ng->ctx_fd = -1;
	ng->mem_fd = -1;
	ng->mem = NULL;
}

/* ATTACH_REGION tries before an ENOMEM is the answer */
#define NG_ATTACH_TRIES	4

/*
 * A memory area whose one region is @ng->mem (@ng->pages pages: host
 * memory, or the dma-buf @dmabuf_fd known at that address when >= 0), and
 * a context of @ng->ifindex with the region attached.  0, 1 on failure, 3
 * if the kernel has no netgpu.
 */
static int ng_open_context(struct ng *ng, int dmabuf_fd)
{
	size_t len = ng->pages * ng->page;
	int ret, tries;

	ret = netgpu_area_open();
	if (ret < 0) {
		printf("open /dev/netgpu_mem: %s%s\n", ng_errname(-ret),
		       ret == -ENOENT ? ": kernel without CONFIG_NETGPU" : "");
		return ret == -ENOENT ? 3 : 1;
	}
	ng->mem_fd = ret;
	if (dmabuf_fd < 0)
		ret = netgpu_area_add_host(ng->mem_fd, ng->mem, len);
	else
		ret = netgpu_area_add_dmabuf(ng->mem_fd, dmabuf_fd,
					     (uintptr_t)ng->mem, len);
	if (ret < 0) {
		printf("ADD_REGION: %s\n", ng_errname(-ret));
		return 1;
	}
	ng->region = ret;
	printf("region %u: %zu pages of %s at %p\n", ng->region, ng->pages,
	       dmabuf_fd < 0 ? "host memory" : "a dma-buf", (void *)ng->mem);

	ret = netgpu_ctx_open();
	if (ret < 0) {
		printf("open /dev/netgpu: %s\n", ng_errname(-ret));
		return ret == -ENOENT ? 3 : 1;
	}
	ng->ctx_fd = ret;
	ret = netgpu_ctx_attach_dev(ng->ctx_fd, ng->ifindex);
	if (ret) {
		printf("ATTACH_DEV ifindex %d: %s\n", ng->ifindex, ng_errname(-ret));
		return 1;
	}
	/*
	 * ENOMEM is transient (the torture campaigns' fail_netgpu_dma_map
	 * fails one DMA mapping in N, and a region maps one per page):
	 * tried again a few times, each refusal said, as a user would.
	 */
	for (tries = 1; ; tries++) {
		ret = netgpu_ctx_attach_region(ng->ctx_fd, ng->mem_fd,
					       ng->region);
		if (ret != -ENOMEM || tries == NG_ATTACH_TRIES)
			break;
		printf("ATTACH_REGION %u: ENOMEM, attempt %d of %d\n",
		       ng->region, tries, NG_ATTACH_TRIES);
	}
	if (ret) {
		printf("ATTACH_REGION %u: %s\n", ng->region, ng_errname(-ret));
		return 1;
	}
	return 0;
}

/* 0, 1 on failure, 3 if the kernel has no netgpu or no NIC interface. */
static int ng_setup(struct ng *ng)
{
	size_t len = ng->pages * ng->page, want;
	struct netgpu_ring_info ri;
	uint64_t bad[3];
	int ret;

	ng->mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (ng->mem == MAP_FAILED) {
		ng->mem = NULL;
		return perror("nsim_netgpu: mmap"), 1;
	}
	ret = ng_open_context(ng, -1);
	if (ret)
		return ret;

	/* BIND_QUEUE of queue 0, and the fill ring mapped. */
	ret = netgpu_ifq_bind(ng->ctx_fd, 0, NG_FILL_ENTRIES, &ng->ifq);
	if (ret == -EOPNOTSUPP) {
		printf("BIND_QUEUE: EOPNOTSUPP: no netgpu NIC interface (kernel without CONFIG_NETGPU_NIC, or a device without the queue API)\n");
		return 3;
	}
	if (ret) {
		printf("BIND_QUEUE queue 0: %s\n", ng_errname(-ret));
		return 1;
	}
	/* The geometry BIND_QUEUE wrote back, and the header now. */
	ret = netgpu_fill_info(ng->ifq, &ri);
	if (ret) {
		printf("fill ring: %s\n", ng_errname(-ret));
		return 1;
	}
	want = (sizeof(struct netgpu_ring) + NG_FILL_ENTRIES * sizeof(__u64) +
		ng->page - 1) / ng->page * ng->page;
	printf("bound queue %u fd %d fill entries %u entry_size %u mmap_offset 0x%llx mmap_size %llu\n",
	       netgpu_ifq_queue_id(ng->ifq), netgpu_ifq_fd(ng->ifq),
	       ri.geom.entries, ri.geom.entry_size,
	       (unsigned long long)ri.geom.mmap_offset,
	       (unsigned long long)ri.geom.mmap_size);
	if (netgpu_ifq_queue_id(ng->ifq) ||
	    ri.geom.entries != NG_FILL_ENTRIES ||
	    ri.geom.entry_size != sizeof(__u64) ||
	    ri.geom.mmap_offset != NETGPU_OFF_FILL_RING ||
	    ri.geom.mmap_size != want) {
		printf("BIND_QUEUE: unexpected geometry (want queue 0, %u entries of 8 bytes, offset 0x%llx, size %zu)\n",
		       NG_FILL_ENTRIES, NETGPU_OFF_FILL_RING, want);
		return 1;
	}
	printf("ring: prod %u cons %u flags %u (at 0/%zu/%zu, entries at %zu)\n",
	       ri.prod, ri.cons, ri.flags,
	       offsetof(struct netgpu_ring, cons),
	       offsetof(struct netgpu_ring, flags), sizeof(struct netgpu_ring));
	if (ri.prod || ri.cons || ri.flags) {
		printf("ring: a new ring must read all zero\n");
		return 1;
	}

	/*
	 * Three entries the kernel must consume and skip at its first refill
	 * (the queue's first buffer allocation): inside a buffer, past the
	 * region, and a buffer it never handed out.  Bad addresses in well
	 * formed entries: the library submits whatever it is given, into
	 * slots 0, 1 and 2 of a ring whose ->prod read 0 above, with one
	 * store of ->prod (3).  The stats tell them apart.
	 */
	bad[0] = (uintptr_t)ng->mem + 100;
	bad[1] = (uintptr_t)ng->mem + len;
	bad[2] = (uintptr_t)ng->mem;
	ret = netgpu_fill_submit(ng->ifq, bad, 3);
	if (ret < 0) {
		printf("fill: %s\n", ng_errname(-ret));
		return 1;
	}
	if (ret != 3) {
		printf("fill: posted %d of 3 entries\n", ret);
		return 1;
	}
	printf("fill: posted 3 entries (unaligned, in no region, never given)\n");
	return 0;
}

/* Command-file reader: complete lines appended since the last call. */
static char ng_cmdbuf[4096];
static size_t ng_cmdlen;
static off_t ng_cmdoff;

static int ng_next_cmd(int fd, char *line, size_t size)
{
	ssize_t n;
	char *nl;
	size_t l;

	n = pread(fd, ng_cmdbuf + ng_cmdlen, sizeof(ng_cmdbuf) - 1 - ng_cmdlen,
		  ng_cmdoff);
	if (n > 0) {
		ng_cmdlen += n;
		ng_cmdoff += n;
	}
	nl = memchr(ng_cmdbuf, '\n', ng_cmdlen);
	if (!nl) {
		if (ng_cmdlen == sizeof(ng_cmdbuf) - 1)
			ng_cmdlen = 0;	/* a line too long: dropped */
		return 0;
	}
	l = nl - ng_cmdbuf;
	snprintf(line, size, "%.*s", (int)l, ng_cmdbuf);
	memmove(ng_cmdbuf, nl + 1, ng_cmdlen - l - 1);
	ng_cmdlen -= l + 1;
	return 1;
}

/* One command line; 1 for quit. */
static int ng_run_cmd(struct ng *ng, const char *line)
{
	char cmd[32] = "";
	int off = 0, quit = 0;

	if (sscanf(line, "%u %31s %n", &ng_seq, cmd, &off) < 2) {
		printf("bad command line: %s\n", line);
		return 0;
	}
	if (!strcmp(cmd, "check"))
		ng_cmd_check(ng, line + off);
	else if (!strcmp(cmd, "stats"))
		ng_cmd_stats(ng);
	else if (!strcmp(cmd, "ring"))
		ng_cmd_ring(ng);
	else if (!strcmp(cmd, "poll"))
		ng_cmd_poll(ng);
	else if (!strcmp(cmd, "bind2"))
		ng_cmd_bind2(ng);
	else if (!strcmp(cmd, "dead"))
		ng_cmd_dead(ng);
	else if (!strcmp(cmd, "unbind")) {
		ng_unbind(ng);
		ng_reply("unbind: ring unmapped, queue fd closed");
	} else if (!strcmp(cmd, "quit")) {
		ng_close(ng);
		ng_reply("quit: all closed");
		quit = 1;
	} else {
		ng_reply("unknown command %s", cmd);
	}
	ng_reply("done");
	return quit;
}

static int do_bind(int argc, char **argv)
{
	struct ng ng = { .mem_fd = -1, .ctx_fd = -1 };
	long long deadline;
	char line[256];
	int cmd_fd, rc;

	if (argc < 6)
		return 2;
	ng.page = sysconf(_SC_PAGESIZE);
	ng.pages = strtoul(argv[3], NULL, 0);
	deadline = ng_now_ms() + strtoll(argv[4], NULL, 0) * 1000;
	ng.ifindex = if_nametoindex(argv[2]);
	if (!ng.ifindex || ng.pages < 1)
		return perror("nsim_netgpu: if_nametoindex"), 2;
	cmd_fd = open(argv[5], O_RDONLY | O_CLOEXEC);
	if (cmd_fd < 0)
		return perror("nsim_netgpu: command file"), 2;
	printf("nsim_netgpu: pid %d binding %s rx queue 0, %zu pages\n",
	       (int)getpid(), argv[2], ng.pages);

	rc = ng_setup(&ng);
	if (rc) {
		ng_close(&ng);
		return rc;
	}
	printf("ready\n");

	for (;;) {
		struct pollfd p = { .fd = netgpu_ifq_fd(ng.ifq), .events = 0 };
		int watch = ng.ifq && !ng.hup;

		/* ERR and HUP are reported without being asked for. */
		if (poll(&p, watch, 20) > 0 && watch &&
		    (p.revents & (POLLERR | POLLHUP))) {
			ng.hup = 1;
			printf("hup: queue fd revents %s\n", ng_revents(p.revents));
		}
		while (ng_next_cmd(cmd_fd, line, sizeof(line)))
			if (ng_run_cmd(&ng, line))
				return 0;
		if (ng_now_ms() > deadline) {
			printf("timeout: no quit within %s s\n", argv[4]);
			ng_close(&ng);
			return 1;
		}
	}
}

/* ===== recv-unreadable: the receiving socket of a bound queue ===== */

static int ng_listen(const char *port)
{
	struct sockaddr_in6 sa;
	int one = 1, zero = 0, fd;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin6_family = AF_INET6;
	sa.sin6_addr = in6addr_any;
	sa.sin6_port = htons(atoi(port));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int ng_inq(int fd)
{
	int n = -1;

	return ioctl(fd, FIONREAD, &n) ? -errno : n;
}

static int do_recv_unreadable(int argc, char **argv)
{
	static unsigned char buf[65536];
	static char cbuf[4096];
	struct pollfd p;
	long long t0, deadline;
	int lfd, fd, devmem, q = 0, q2, ok = 1;
	unsigned long want;
	ssize_t n;

	if (argc < 5)
		return 2;
	want = strtoul(argv[3], NULL, 0);
	devmem = argc > 5 && !strcmp(argv[5], "devmem");
	ng_catch_signals();
	lfd = ng_listen(argv[2]);
	if (lfd < 0)
		return perror("nsim_netgpu: listen"), 1;
	printf("recv-unreadable: pid %d listening on %s\n", (int)getpid(), argv[2]);

	p.fd = lfd;
	p.events = POLLIN;
	if (poll(&p, 1, NG_WAIT_MS) != 1) {
		printf("accept: no connection within %d s\nresult FAIL\n",
		       NG_WAIT_MS / 1000);
		return 1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return perror("nsim_netgpu: accept"), 1;

	/* SIOCINQ counts sequence space: unreadable bytes too, not the FIN. */
	t0 = ng_now_ms();
	while (!ng_stop && ng_now_ms() - t0 < NG_WAIT_MS) {
		q = ng_inq(fd);
		if (q < 0 || (unsigned long)q >= want)
			break;
		ng_sleep_ms(20);
	}
	printf("queued %d of %lu bytes after %lld ms\n", q, want, ng_now_ms() - t0);
	ok &= q >= 0 && (unsigned long)q == want;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && errno == EFAULT) {
		printf("recv: EFAULT (unreadable)\n");
	} else {
		if (n >= 0)
			printf("recv: returned %zd bytes (readable)\n", n);
		else
			printf("recv: %s\n", ng_errname(errno));
		ok = 0;
	}
	q2 = ng_inq(fd);
	printf("still queued %d bytes after recv\n", q2);
	ok &= q2 == q;

	if (devmem) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg;

		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		n = recvmsg(fd, &msg, NG_MSG_SOCK_DEVMEM | MSG_DONTWAIT);
		if (n < 0 && errno == ENODEV) {
			printf("devmem recvmsg: ENODEV\n");
		} else {
			if (n >= 0)
				printf("devmem recvmsg: returned %zd bytes, control %zu\n",
				       n, (size_t)msg.msg_controllen);
			else
				printf("devmem recvmsg: %s\n", ng_errname(errno));
			ok = 0;
		}
		q2 = ng_inq(fd);
		printf("still queued %d bytes after devmem recvmsg\n", q2);
		ok &= q2 == q;
	}

	/* The sender waits for our end; the data stays queued meanwhile. */
	shutdown(fd, SHUT_WR);
	printf("holding pid %d queued %d\n", (int)getpid(), ng_inq(fd));
	fflush(stdout);
	deadline = ng_now_ms() + strtoll(argv[4], NULL, 0) * 1000;
	while (!ng_stop && ng_now_ms() < deadline)
		ng_sleep_ms(50);
	printf(ng_stop ? "released\n" : "hold timeout\n");
	close(fd);
	close(lfd);
	printf("result %s\n", ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}

/* ===== packet: a non-mmap AF_PACKET reader on the bound device ===== */

/* Ethernet, IPv4 or IPv6 and TCP headers of a frame; 0 if not TCP. */
static unsigned int ng_tcp_hlen(const unsigned char *f, size_t len)
{
	unsigned int l3, th;
	int proto;

	if (len < ETH_HLEN + 20)
		return 0;
	if (f[12] == 0x08 && f[13] == 0x00) {
		l3 = (f[ETH_HLEN] & 0xf) * 4;
		proto = f[ETH_HLEN + 9];
	} else if (f[12] == 0x86 && f[13] == 0xdd) {
		l3 = 40;
		proto = len > ETH_HLEN + 6 ? f[ETH_HLEN + 6] : -1;
	} else {
		return 0;
	}
	th = ETH_HLEN + l3;
	if (proto != IPPROTO_TCP || len < th + 13)
		return 0;
	return th + (f[th + 12] >> 4) * 4;
}

static int do_packet(int argc, char **argv)
{
	static unsigned char buf[65536];
	unsigned long pkts = 0, cut = 0, headers = 0, outgoing = 0;
	unsigned long long hidden = 0;
	unsigned int smin = ~0U, smax = 0;
	struct sockaddr_ll sll;
	long long deadline;
	int fd, one = 1, idx;

	if (argc < 4)
		return 2;
	idx = if_nametoindex(argv[2]);
	if (!idx)
		return perror("nsim_netgpu: if_nametoindex"), 2;
	ng_catch_signals();
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = idx;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		return perror("nsim_netgpu: AF_PACKET"), 1;
	printf("packet: pid %d reading %s\n", (int)getpid(), argv[2]);
	fflush(stdout);

	deadline = ng_now_ms() + strtoll(argv[3], NULL, 0) * 1000;
	while (!ng_stop && ng_now_ms() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct tpacket_auxdata *aux = NULL;
		char cbuf[CMSG_SPACE(sizeof(*aux))];
		struct iovec iov = { buf, sizeof(buf) };
		struct sockaddr_ll from;
		struct cmsghdr *cm;
		struct msghdr msg;
		ssize_t n;

		if (poll(&p, 1, 100) != 1)
			continue;
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &from;
		msg.msg_namelen = sizeof(from);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0)
			continue;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_PACKET &&
			    cm->cmsg_type == PACKET_AUXDATA)
				aux = (struct tpacket_auxdata *)CMSG_DATA(cm);
		pkts++;
		outgoing += from.sll_pkttype == PACKET_OUTGOING;
		if (!aux || aux->tp_snaplen >= aux->tp_len)
			continue;
		/* Cut: only the linear part was readable. */
		cut++;
		hidden += aux->tp_len - aux->tp_snaplen;
		if (aux->tp_snaplen < smin)
			smin = aux->tp_snaplen;
		if (aux->tp_snaplen > smax)
			smax = aux->tp_snaplen;
		if ((size_t)n == aux->tp_snaplen &&
		    ng_tcp_hlen(buf, n) == aux->tp_snaplen)
			headers++;
	}
	close(fd);
	printf("packet: packets=%lu outgoing=%lu cut=%lu headers_only=%lu snaplen=%u..%u payload_not_copied=%llu\n",
	       pkts, outgoing, cut, headers, cut ? smin : 0, smax, hidden);
	return cut && headers == cut ? 0 : 1;
}

/* ===== netlink: netdev queue-get and page-pool-get dumps ===== */

struct ng_nlbuf {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[256];
};

static void ng_nl_put(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static unsigned long long ng_nla_uint(const struct nlattr *a)
{
	const char *d = (const char *)a + NLA_HDRLEN;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (a->nla_len - NLA_HDRLEN) {
	case 8:
		memcpy(&v64, d, 8);
		return v64;
	case 4:
		memcpy(&v32, d, 4);
		return v32;
	case 2:
		memcpy(&v16, d, 2);
		return v16;
	}
	return 0;
}

/* The attributes of a genetlink message, by type (0 if absent). */
struct ng_attrs {
	unsigned long long val[16];
	int has[16];
	const struct nlattr *attr[16];	/* in the message being parsed */
};

static void ng_nl_parse(const struct nlmsghdr *nh, struct ng_attrs *at)
{
	const struct nlattr *a;
	int len;

	memset(at, 0, sizeof(*at));
	a = (const struct nlattr *)((const char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		int t = a->nla_type & NLA_TYPE_MASK;

		if (t < 16) {
			at->has[t] = 1;
			at->val[t] = ng_nla_uint(a);
			at->attr[t] = a;
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

/* An optional attribute for printing: its value or "none". */
static const char *ng_opt(const struct ng_attrs *at, int type)
{
	static char buf[4][24];
	static int i;

	if (!at->has[type])
		return "none";
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%llu", at->val[type]);
	return buf[i];
}

/*
 * The context id in the netgpu nest @type (patches/0022) for printing,
 * "none" without the nest, "bad" if the nest has no u32 id in it.
 */
static const char *ng_netgpu_nest(const struct ng_attrs *at, int type)
{
	static char buf[4][24];
	static int i;
	const struct nlattr *n = at->attr[type], *a;
	int len;

	if (!at->has[type])
		return "none";
	a = (const struct nlattr *)((const char *)n + NLA_HDRLEN);
	len = n->nla_len - NLA_HDRLEN;
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) ==
		    NG_NETDEV_A_NETGPU_PROVIDER_INFO_CTX_ID &&
		    a->nla_len == NLA_HDRLEN + 4) {
			i = (i + 1) % 4;
			snprintf(buf[i], sizeof(buf[i]), "%llu", ng_nla_uint(a));
			return buf[i];
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return "bad";
}

typedef void (*ng_nl_cb)(const struct nlmsghdr *nh, void *arg);

/* Send @req and hand each reply to @cb up to DONE or the ack; 0 or -errno. */
static int ng_nl_talk(int fd, struct nlmsghdr *req, ng_nl_cb cb, void *arg)
{
	static char buf[32768];

	if (send(fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *nh;
		ssize_t n;

		if (poll(&p, 1, 10000) != 1)
			return -ETIMEDOUT;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			cb(nh, arg);
		}
	}
}

static void ng_family_cb(const struct nlmsghdr *nh, void *arg)
{
	struct ng_attrs at;

	ng_nl_parse(nh, &at);
	if (at.has[CTRL_ATTR_FAMILY_ID])
		*(unsigned int *)arg = at.val[CTRL_ATTR_FAMILY_ID];
}

struct ng_nl_seen {
	int ifindex;		/* 0: every page pool of the namespace */
	unsigned int queues, pools, inflight, dmabuf, netgpu;
};

static void ng_queue_cb(const struct nlmsghdr *nh, void *arg)
{
	struct ng_nl_seen *seen = arg;
	struct ng_attrs at;

	ng_nl_parse(nh, &at);
	if ((int)at.val[NG_NETDEV_A_QUEUE_IFINDEX] != seen->ifindex)
		return;
	seen->queues++;
	seen->dmabuf += at.has[NG_NETDEV_A_QUEUE_DMABUF];
	seen->netgpu += at.has[NG_NETDEV_A_QUEUE_NETGPU];
	printf("queue ifindex %llu %s %llu napi %llu dmabuf %s netgpu %s\n",
	       at.val[NG_NETDEV_A_QUEUE_IFINDEX],
	       at.val[NG_NETDEV_A_QUEUE_TYPE] ? "tx" : "rx",
	       at.val[NG_NETDEV_A_QUEUE_ID], at.val[NG_NETDEV_A_QUEUE_NAPI_ID],
	       ng_opt(&at, NG_NETDEV_A_QUEUE_DMABUF),
	       ng_netgpu_nest(&at, NG_NETDEV_A_QUEUE_NETGPU));
}

static void ng_pool_cb(const struct nlmsghdr *nh, void *arg)
{
	struct ng_nl_seen *seen = arg;
	struct ng_attrs at;

	ng_nl_parse(nh, &at);
	if (seen->ifindex &&
	    (int)at.val[NG_NETDEV_A_PAGE_POOL_IFINDEX] != seen->ifindex)
		return;
	seen->pools++;
	seen->inflight += at.val[NG_NETDEV_A_PAGE_POOL_INFLIGHT] != 0;
	seen->dmabuf += at.has[NG_NETDEV_A_PAGE_POOL_DMABUF];
	seen->netgpu += at.has[NG_NETDEV_A_PAGE_POOL_NETGPU];
	printf("page-pool id %llu ifindex %s inflight %llu detached %s dmabuf %s netgpu %s\n",
	       at.val[NG_NETDEV_A_PAGE_POOL_ID],
	       ng_opt(&at, NG_NETDEV_A_PAGE_POOL_IFINDEX),
	       at.val[NG_NETDEV_A_PAGE_POOL_INFLIGHT],
	       at.has[NG_NETDEV_A_PAGE_POOL_DETACH_TIME] ? "yes" : "no",
	       ng_opt(&at, NG_NETDEV_A_PAGE_POOL_DMABUF),
	       ng_netgpu_nest(&at, NG_NETDEV_A_PAGE_POOL_NETGPU));
}

static void ng_genl_req(struct ng_nlbuf *req, int type, int cmd, int flags)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->nh.nlmsg_type = type;
	req->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	req->gh.cmd = cmd;
	req->gh.version = 1;
}

static int do_netlink(int argc, char **argv)
{
	struct ng_nl_seen seen;
	struct ng_nlbuf req;
	unsigned int family = 0;
	int fd, err;

	if (argc < 3)
		return 2;
	memset(&seen, 0, sizeof(seen));
	if (strcmp(argv[2], "-")) {
		seen.ifindex = if_nametoindex(argv[2]);
		if (!seen.ifindex)
			return perror("nsim_netgpu: if_nametoindex"), 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return perror("nsim_netgpu: netlink"), 1;

	ng_genl_req(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	ng_nl_put(&req.nh, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	err = ng_nl_talk(fd, &req.nh, ng_family_cb, &family);
	if (err || !family) {
		printf("netlink: no netdev family: %s\n", ng_errname(-err));
		return 1;
	}
	if (seen.ifindex) {
		ng_genl_req(&req, family, NG_NETDEV_CMD_QUEUE_GET, NLM_F_DUMP);
		err = ng_nl_talk(fd, &req.nh, ng_queue_cb, &seen);
		if (err) {
			printf("netlink: queue-get dump: %s\n", ng_errname(-err));
			return 1;
		}
	}
	ng_genl_req(&req, family, NG_NETDEV_CMD_PAGE_POOL_GET, NLM_F_DUMP);
	err = ng_nl_talk(fd, &req.nh, ng_pool_cb, &seen);
	if (err) {
		printf("netlink: page-pool-get dump: %s\n", ng_errname(-err));
		return 1;
	}
	close(fd);
	printf("netlink: queues=%u pools=%u pools_inflight=%u dmabuf_attrs=%u netgpu_nests=%u\n",
	       seen.queues, seen.pools, seen.inflight, seen.dmabuf, seen.netgpu);
	return seen.dmabuf ? 1 : 0;
}

/* FOLL_PIN pins taken and not released, in the whole system. */
static long pins_out(void)
{
	long acquired = -1, released = -1, v;
	char name[64];
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			perror("stat_refresh");
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	return acquired < 0 || released < 0 ? -1 : acquired - released;
}

/*
 * /proc/thread-self/fail-nth (open in @fd): arm the n-th fault point of
 * this thread's next calls, or read what is left and disarm.
 */
static int fail_nth_set(int fd, int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

static int fail_nth_take(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) < 0)
		return -1;
	return fail_nth_set(fd, 0) ? -1 : atoi(buf);
}

static int do_udmabuf_sweep(int argc, char **argv)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC };
	int n, memfd, dev, fd, nth, err, faults = 0, leaked = 0;
	long before, after;

	if (argc != 3)
		return 2;
	uc.size = strtoul(argv[2], NULL, 0) * sysconf(_SC_PAGESIZE);
	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return perror("/dev/udmabuf"), 1;
	memfd = ng_memfd("udmabuf-sweep", uc.size);
	if (memfd < 0)
		return perror("memfd"), 1;
	uc.memfd = memfd;
	nth = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth < 0)
		return perror("/proc/thread-self/fail-nth"), 1;
	for (n = 1; n < 10000; n++) {
		before = pins_out();
		if (before < 0 || fail_nth_set(nth, n))
			return perror("fail-nth or vmstat"), 1;
		fd = ioctl(dev, UDMABUF_CREATE, &uc);
		err = errno;
		if (fail_nth_take(nth) > 0) {
			/* Completed before its n-th allocation: done. */
			if (fd < 0)
				return perror("UDMABUF_CREATE"), 1;
			close(fd);
			break;
		}
		faults++;
		if (fd >= 0)
			close(fd);
		after = pins_out();
		if (after != before) {
			printf("udmabuf-sweep: allocation %d failed (%s): %ld pins out, %ld before\n",
			       n, fd < 0 ? strerror(err) : "created anyway",
			       after, before);
			leaked++;
		}
	}
	printf("udmabuf-sweep: faults=%d leaked=%d\n", faults, leaked);
	close(nth);
	close(memfd);
	close(dev);
	return leaked || n == 10000 ? 1 : 0;
}

/* ===== memcg: netgpu's kernel memory charged to the caller's cgroup ===== */

#define NG_MEMCG_ADDR		(1ULL << 44)	/* every region's address */
#define NG_MEMCG_SETTLE_MS	10000	/* for the charges of a close to go */

/* The number in the cgroup file open at @fd (memory.current), or -1. */
static long long ng_cg_get(int fd)
{
	char buf[32];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/* memory.max (open at @fd): @max bytes, no limit if negative; 0 or -1. */
static int ng_cg_set_max(int fd, long long max)
{
	char buf[32];
	int len;

	if (max < 0)
		len = snprintf(buf, sizeof(buf), "max");
	else
		len = snprintf(buf, sizeof(buf), "%lld", max);
	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

/*
 * memory.current once it is @target or less (what a close freed may go
 * in a work item or after a grace period), or as it is after
 * NG_MEMCG_SETTLE_MS.
 */
static long long ng_cg_settle(int fd, long long target)
{
	long long t0 = ng_now_ms(), cur;

	while ((cur = ng_cg_get(fd)) > target &&
	       ng_now_ms() - t0 < NG_MEMCG_SETTLE_MS)
		ng_sleep_ms(50);
	return cur;
}

/*
 * A TCP connection over 127.0.0.1: @fds[0] the connecting end, @fds[1]
 * the accepted one (ATTACH_SOCKET takes no socket that is unconnected).
 * 0, or -1 with errno set.
 */
static int ng_loopback_pair(int *fds)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	int lsn;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsn < 0)
		return -1;
	if (bind(lsn, (struct sockaddr *)&sa, sizeof(sa)) || listen(lsn, 1) ||
	    getsockname(lsn, (struct sockaddr *)&sa, &salen))
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	fds[1] = accept(lsn, NULL, NULL);
	close(lsn);
	return fds[1] < 0 ? -1 : 0;
}

/* The largest rx ring, attached then closed (memory.current open at @cur). */
static int ng_memcg_ring(int ctx, int cur, long long slack)
{
	long long before, with, after;
	struct netgpu_ring_info ri;
	struct netgpu_sockq *sq;
	int fds[2], err;

	if (ng_loopback_pair(fds))
		return perror("nsim_netgpu: TCP over 127.0.0.1"), 1;
	before = ng_cg_get(cur);
	err = netgpu_sockq_attach(ctx, fds[0], NETGPU_QUEUE_MAX_ENTRIES, 0,
				  &sq);
	if (err) {
		printf("memcg ATTACH_SOCKET: %s\n", ng_errname(-err));
		return 1;
	}
	with = ng_cg_get(cur);
	/* The geometry ATTACH_SOCKET wrote back: what was allocated. */
	netgpu_rx_info(sq, &ri);
	netgpu_sockq_close(sq);
	after = ng_cg_settle(cur, before + slack);
	printf("nsim_netgpu: memcg ring: entries=%u bytes=%llu before=%lld with=%lld after=%lld\n",
	       ri.geom.entries, (unsigned long long)ri.geom.mmap_size, before,
	       with, after);
	close(fds[0]);
	close(fds[1]);
	return 0;
}

/*
 * A udmabuf of a page added to one area until an add fails or @max_adds
 * are made, with memory.max (open at @max) @limit bytes above
 * memory.current (open at @cur); then the area closed.
 */
static int ng_memcg_regions(int cur, int max, long long limit,
			    unsigned long max_adds, long long slack)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC };
	long long before, at_end, after;
	int memfd, dev, dmabuf, area, id = 0;
	unsigned long adds;

	uc.size = sysconf(_SC_PAGESIZE);
	memfd = ng_memfd("nsim_netgpu memcg", uc.size);
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (memfd < 0 || dev < 0)
		return perror("nsim_netgpu: memfd, /dev/udmabuf"), 1;
	uc.memfd = memfd;
	dmabuf = ioctl(dev, UDMABUF_CREATE, &uc);
	close(dev);
	if (dmabuf < 0)
		return perror("nsim_netgpu: UDMABUF_CREATE"), 1;
	area = netgpu_area_open();
	if (area < 0) {
		printf("open /dev/netgpu_mem: %s\n", ng_errname(-area));
		return 1;
	}
	/*
	 * A page fault of this process at the limit could not be charged,
	 * the OOM killer has no one to kill, and the fault would be
	 * retried for ever: everything it maps is in memory and locked
	 * before the limit is set, and nothing is printed until it is gone.
	 */
	if (mlockall(MCL_CURRENT))
		return perror("nsim_netgpu: mlockall"), 1;
	before = ng_cg_get(cur);
	if (before < 0 || ng_cg_set_max(max, before + limit))
		return perror("nsim_netgpu: memory.current, memory.max"), 1;
	for (adds = 0; adds < max_adds; adds++) {
		id = netgpu_area_add_dmabuf(area, dmabuf, NG_MEMCG_ADDR,
					    uc.size);
		if (id < 0)
			break;
	}
	if (ng_cg_set_max(max, -1))
		return perror("nsim_netgpu: memory.max"), 1;
	munlockall();
	at_end = ng_cg_get(cur);
	close(area);
	after = ng_cg_settle(cur, before + slack);
	printf("nsim_netgpu: memcg regions: limit=%lld adds=%lu errno=%s before=%lld at_end=%lld after=%lld\n",
	       limit, adds, id < 0 ? ng_errname(-id) : "none", before, at_end,
	       after);
	close(dmabuf);
	close(memfd);
	return 0;
}

static int do_memcg(int argc, char **argv)
{
	long long limit, slack;
	unsigned long max_adds;
	int ifindex, ctx, cur, max, rc;
	char path[512];
	FILE *f;

	if (argc != 7)
		return 2;
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex)
		return perror("nsim_netgpu: if_nametoindex"), 2;
	limit = strtoll(argv[4], NULL, 0) << 10;
	max_adds = strtoul(argv[5], NULL, 0);
	slack = strtoll(argv[6], NULL, 0) << 10;
	/* The cgroup2 line: "0::<path>". */
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(path, sizeof(path), f))
		if (!strncmp(path, "0::", 3))
			printf("nsim_netgpu: memcg in %s", path);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/memory.current", argv[3]);
	cur = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/memory.max", argv[3]);
	max = open(path, O_WRONLY | O_CLOEXEC);
	if (cur < 0 || max < 0)
		return perror("nsim_netgpu: memory.current, memory.max"), 1;

	ctx = netgpu_ctx_open();
	if (ctx < 0) {
		printf("open /dev/netgpu: %s\n", ng_errname(-ctx));
		return ctx == -ENOENT ? 3 : 1;
	}
	rc = netgpu_ctx_attach_dev(ctx, ifindex);
	if (rc) {
		printf("ATTACH_DEV ifindex %d: %s\n", ifindex, ng_errname(-rc));
		return 1;
	}
	rc = ng_memcg_ring(ctx, cur, slack);
	close(ctx);
	if (!rc)
		rc = ng_memcg_regions(cur, max, limit, max_adds, slack);
	close(max);
	close(cur);
	return rc;
}

/* ===== send: the nsim_tcp stream sent zero copy from a region ===== */

#define NG_TX_SLOT		(256 * 1024)	/* bytes of the region a slot */
#define NG_TX_CQ_ENTRIES	64	/* completion ring */
#define NG_TX_RX_ENTRIES	16	/* rx ring (required, never read) */
#define NG_TX_SNDTIMEO_S	5	/* a SEND's wait for the send buffer */
#define NG_TX_DRAIN_MS		120000	/* completions after the last send */

/* How a send is made: netgpu's SEND, or the peers of make bench */
enum ng_tx_mode {
	NG_TX_NETGPU,	/* NETGPU_SOCKQ_IOCTL_SEND, the completion ring */
	NG_TX_COPY,	/* send(): the slot is free again once it returns */
	NG_TX_MSGZC,	/* send(MSG_ZEROCOPY), notifications on the error queue */
};

/* MSG_ZEROCOPY ids remembered (each send's slot): more than ever out */
#define NG_TX_ZC_IDS	4096

struct ng_tx {
	enum ng_tx_mode mode;
	int sock;
	unsigned int *zc_slot;	/* MSG_ZEROCOPY: id % NG_TX_ZC_IDS -> slot */
	uint32_t zc_next;	/* the id of the next MSG_ZEROCOPY send */
	unsigned long long zc_copied;	/* ids notified as copied */
	struct netgpu_sockq *sq;	/* its rx and completion rings mapped */
	uint32_t cq_entries;
	size_t nslots;
	unsigned int *out;	/* each slot's sends not completed yet */
	unsigned long long sends, reaped, unexpected;
	long long progress;	/* ng_now_ms() of the last send or completion */
};

/*
 * A TCP socket connected to @addr (IPv4 or IPv6) port @port, trying for
 * 5 s while nothing listens; -1 with errno set on failure.
 */
static int ng_connect(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
	socklen_t salen;
	int fd, tries, err;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET6, addr, &sa6->sin6_addr) == 1) {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons(atoi(port));
		salen = sizeof(*sa6);
	} else if (inet_pton(AF_INET, addr, &sa->sin_addr) == 1) {
		sa->sin_family = AF_INET;
		sa->sin_port = htons(atoi(port));
		salen = sizeof(*sa);
	} else {
		errno = EINVAL;
		return -1;
	}
	for (tries = 0; ; tries++) {
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&ss, salen))
			return fd;
		err = errno;
		close(fd);
		errno = err;
		if (tries == 50 || ng_stop)
			return -1;
		ng_sleep_ms(100);
	}
}

/*
 * The completions published since the last call: each gives back one
 * send of its slot.  The number reaped, or -1 for a producer index more
 * than a ring ahead (the library's -EPROTO: we always release all we
 * peeked, so it is behind ->cons or more than a ring past it).
 */
static int ng_tx_reap(struct ng_tx *tx)
{
	uint64_t e[NG_TX_CQ_ENTRIES];
	struct netgpu_ring_info ri;
	int n, i;

	/* The ring has NG_TX_CQ_ENTRIES entries (ng_tx_attach()): all. */
	n = netgpu_cq_peek(tx->sq, e, NG_TX_CQ_ENTRIES);
	if (n < 0) {
		if (netgpu_cq_info(tx->sq, &ri))
			memset(&ri, 0, sizeof(ri));
		printf("completion ring: prod %u cons %u, more than %u entries\n",
		       ri.prod, ri.cons, tx->cq_entries);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t slot = e[i];

		if (slot < tx->nslots && tx->out[slot]) {
			tx->out[slot]--;
		} else {
			if (!tx->unexpected)
				printf("completion ring: unexpected entry %llu\n",
				       (unsigned long long)slot);
			tx->unexpected++;
		}
	}
	if (n) {
		/* Can't fail: n were peeked. */
		netgpu_cq_release(tx->sq, n);
		tx->reaped += n;
		tx->progress = ng_now_ms();
	}
	return n;
}

/*
 * MSG_ZEROCOPY: the notifications on the socket's error queue, each a
 * range of send ids [ee_info, ee_data]; as ng_tx_reap().
 */
static int ng_zc_reap(struct ng_tx *tx)
{
	int n = 0;

	for (;;) {
		char control[128];
		struct msghdr msg = {
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct sock_extended_err *ee = NULL;
		struct cmsghdr *cm;
		uint32_t id;

		if (recvmsg(tx->sock, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			printf("recvmsg(MSG_ERRQUEUE): %s\n", ng_errname(errno));
			return -1;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if ((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			    (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR))
				ee = (struct sock_extended_err *)CMSG_DATA(cm);
		if (!ee || ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno) {
			printf("error queue: not a zerocopy notification\n");
			return -1;
		}
		for (id = ee->ee_info; ; id++) {
			unsigned int slot = tx->zc_slot[id % NG_TX_ZC_IDS];

			if ((int32_t)(id - tx->zc_next) < 0 && tx->out[slot]) {
				tx->out[slot]--;
				n++;
				if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
					tx->zc_copied++;
			} else {
				if (!tx->unexpected)
					printf("error queue: unexpected id %u\n", id);
				tx->unexpected++;
			}
			if (id == ee->ee_data)
				break;
		}
	}
	if (n) {
		tx->reaped += n;
		tx->progress = ng_now_ms();
	}
	return n;
}

/*
 * Reap the completions, waiting up to @ms for one (poll(): EPOLLRDBAND on
 * the socket queue, EPOLLERR on a MSG_ZEROCOPY socket) if there is none;
 * as ng_tx_reap().  A copying send() has nothing to reap.
 */
static int ng_tx_wait(struct ng_tx *tx, int ms)
{
	struct pollfd p;
	int n;

	if (tx->mode == NG_TX_COPY)
		return 0;
	if (tx->mode == NG_TX_MSGZC) {
		n = ng_zc_reap(tx);
		if (n)
			return n;
		p.fd = tx->sock;
		p.events = 0;
		poll(&p, 1, ms);
		return ng_zc_reap(tx);
	}
	n = ng_tx_reap(tx);
	if (n)
		return n;
	/*
	 * None came within @ms, or poll() woke for EPOLLERR or EPOLLHUP,
	 * which come unasked (netgpu_cq_wait() says 0 for both): no busy
	 * loop on them.  An error is the reap's to report.
	 */
	if (netgpu_cq_wait(tx->sq, ms) <= 0)
		ng_sleep_ms(10);
	return ng_tx_reap(tx);
}

/* 0 once every send of @slot completed, or -errno. */
static int ng_tx_await(struct ng_tx *tx, size_t slot)
{
	while (tx->out[slot]) {
		if (ng_tx_wait(tx, 1000) < 0)
			return -EIO;
		if (ng_stop)
			return -EINTR;
		if (ng_now_ms() - tx->progress > NG_WAIT_MS)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * One SEND of [@addr, @addr + @len) with @slot as its user_data; 0 (with
 * *@bytes > 0 accepted) or -errno.
 */
static int ng_tx_send(struct ng_tx *tx, const unsigned char *addr, size_t len,
		      size_t slot, unsigned long long *bytes)
{
	struct netgpu_send_iov iov = { .addr = (uintptr_t)addr, .len = len };
	uint64_t done;
	ssize_t n;
	int err;

	if (tx->mode != NG_TX_NETGPU) {
		/*
		 * The peers: one send() of the same range, copying or with
		 * MSG_ZEROCOPY (whose id the next notification names).
		 */
		n = send(tx->sock, addr, len,
			 tx->mode == NG_TX_MSGZC ? MSG_ZEROCOPY : 0);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		*bytes = n;
		if (tx->mode == NG_TX_MSGZC) {
			tx->zc_slot[tx->zc_next++ % NG_TX_ZC_IDS] = slot;
			tx->out[slot]++;
		} else {
			tx->reaped++;
		}
		tx->sends++;
		tx->progress = ng_now_ms();
		return 0;
	}
	err = netgpu_sockq_send(tx->sq, &iov, 1, slot, 0, &done);
	*bytes = done;
	if (err)
		return err;
	if (!done || done > len) {
		printf("SEND: returned 0 with bytes=%llu of %zu\n",
		       (unsigned long long)done, len);
		return -EIO;
	}
	tx->out[slot]++;
	tx->sends++;
	tx->progress = ng_now_ms();
	return 0;
}

/*
 * All @len bytes of @slot (at @p), a new send for what the socket did not
 * take; 0 or -errno.  A full completion ring (ENOBUFS) is reaped.
 */
static int ng_tx_slot(struct ng_tx *tx, const unsigned char *p, size_t len,
		      size_t slot, unsigned long long *sent)
{
	unsigned long long bytes;
	size_t off = 0;
	int err;

	while (off < len) {
		err = ng_tx_send(tx, p + off, len - off, slot, &bytes);
		if (!err) {
			off += bytes;
			*sent += bytes;
		} else if (err == -ENOBUFS) {
			if (ng_tx_wait(tx, 1000) < 0)
				return -EIO;
		} else if (err != -EAGAIN && err != -EINTR) {
			return err;
		}
		/* A signal may end a SEND early without an error. */
		if (ng_stop)
			return -EINTR;
		if (ng_now_ms() - tx->progress > NG_WAIT_MS)
			return -ETIMEDOUT;
	}
	return 0;
}

/* The next @n bytes of the stream into the region: the user writing. */
static void ng_tx_fill(unsigned char *p, size_t n, struct stream *st)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = stream_next(st);
}

/*
 * A udmabuf region: its first SEND must fail with EOPNOTSUPP (6.12's
 * transmit skbs carry no dma-buf memory).  0 if it did, else 1.
 */
static int ng_tx_refused(struct ng_tx *tx, unsigned char *mem,
			 struct stream *st, unsigned long long want)
{
	size_t n = want && want < NG_TX_SLOT ? want : NG_TX_SLOT;
	unsigned long long bytes;
	int err;

	ng_tx_fill(mem, n, st);
	err = ng_tx_send(tx, mem, n, 0, &bytes);
	if (err == -EOPNOTSUPP) {
		printf("nsim_netgpu: send dmabuf refused errno=EOPNOTSUPP\n");
		return 0;
	}
	if (err)
		printf("nsim_netgpu: send dmabuf SEND: %s (EOPNOTSUPP expected)\n",
		       ng_errname(-err));
	else
		printf("nsim_netgpu: send dmabuf accepted bytes=%llu (EOPNOTSUPP expected)\n",
		       bytes);
	return 1;
}

/* A udmabuf of @len bytes mapped at @ng->mem: its fd, or -1. */
static int ng_tx_udmabuf(struct ng *ng, size_t len, int *memfd)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC };
	int dev, fd;

	*memfd = ng_memfd("nsim_netgpu", len);
	if (*memfd < 0)
		return perror("nsim_netgpu: memfd"), -1;
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return perror("nsim_netgpu: /dev/udmabuf"), -1;
	uc.memfd = *memfd;
	uc.size = len;
	fd = ioctl(dev, UDMABUF_CREATE, &uc);
	close(dev);
	if (fd < 0)
		return perror("nsim_netgpu: UDMABUF_CREATE"), -1;
	/* The CPU writes the region through the memfd's pages. */
	ng->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *memfd,
		       0);
	if (ng->mem == MAP_FAILED) {
		ng->mem = NULL;
		close(fd);
		return perror("nsim_netgpu: mmap of the memfd"), -1;
	}
	return fd;
}

/*
 * ATTACH_SOCKET of @sock with a completion ring, mapped (and the rx ring,
 * never read: the library maps both); 0 or 1.
 */
static int ng_tx_attach(struct ng *ng, struct ng_tx *tx, int sock)
{
	struct netgpu_ring_info ri;
	int ret;

	ret = netgpu_sockq_attach(ng->ctx_fd, sock, NG_TX_RX_ENTRIES,
				  NG_TX_CQ_ENTRIES, &tx->sq);
	if (ret) {
		printf("ATTACH_SOCKET: %s\n", ng_errname(-ret));
		return 1;
	}
	/* The geometry ATTACH_SOCKET wrote back, and the header now. */
	ret = netgpu_cq_info(tx->sq, &ri);
	if (ret) {
		printf("completion ring: %s\n", ng_errname(-ret));
		return 1;
	}
	printf("attached socket: fd %d completion entries %u entry_size %u mmap_offset 0x%llx mmap_size %llu\n",
	       netgpu_sockq_fd(tx->sq), ri.geom.entries, ri.geom.entry_size,
	       (unsigned long long)ri.geom.mmap_offset,
	       (unsigned long long)ri.geom.mmap_size);
	if (ri.geom.entries != NG_TX_CQ_ENTRIES ||
	    ri.geom.entry_size != sizeof(__u64) ||
	    ri.geom.mmap_offset != NETGPU_OFF_COMPLETION_RING ||
	    ri.geom.mmap_size < sizeof(struct netgpu_ring) +
				NG_TX_CQ_ENTRIES * sizeof(__u64)) {
		printf("ATTACH_SOCKET: unexpected completion ring geometry (want %u entries of 8 bytes at 0x%llx)\n",
		       NG_TX_CQ_ENTRIES, NETGPU_OFF_COMPLETION_RING);
		return 1;
	}
	tx->cq_entries = ri.geom.entries;
	if (ri.prod || ri.cons || ri.flags) {
		printf("completion ring: a new ring must read all zero\n");
		return 1;
	}
	return 0;
}

/*
 * The stream through the slots of the region, each reused once completed;
 * with @remove_at, the region is removed (REMOVE_REGION) once that many
 * bytes are accepted, and the stream goes on until a SEND fails.  0 or
 * the first error (-errno); *@removed_at: the bytes accepted when the
 * region was removed.
 */
static int ng_tx_stream(struct ng *ng, struct ng_tx *tx, struct stream *st,
			unsigned long long want, unsigned long long *sent,
			unsigned long long remove_at,
			unsigned long long *removed_at)
{
	size_t slot = 0, n;
	unsigned char *p;
	int err = 0;

	tx->progress = ng_now_ms();
	while (*sent < want && !err && !ng_stop) {
		n = want - *sent < NG_TX_SLOT ? want - *sent : NG_TX_SLOT;
		p = ng->mem + slot * NG_TX_SLOT;
		err = ng_tx_await(tx, slot);
		if (err)
			break;
		ng_tx_fill(p, n, st);
		err = ng_tx_slot(tx, p, n, slot, sent);
		slot = (slot + 1) % tx->nslots;
		if (!err && remove_at && *sent >= remove_at && !*removed_at) {
			err = netgpu_area_remove(ng->mem_fd, ng->region);
			if (err) {
				printf("REMOVE_REGION: %s\n", ng_errname(-err));
				return -EIO;
			}
			*removed_at = *sent;
			printf("region %u removed after %llu bytes, %llu sends of %llu completed\n",
			       ng->region, *sent, tx->reaped, tx->sends);
		}
	}
	if (ng_stop)
		printf("stopped by a signal after %llu of %llu bytes\n",
		       *sent, want);
	else if (err)
		printf("send: %s after %llu of %llu bytes\n", ng_errname(-err),
		       *sent, want);
	return ng_stop ? -EINTR : err;
}

/* Every accepted send's completion, within NG_TX_DRAIN_MS; 0 or 1. */
static int ng_tx_drain(struct ng_tx *tx)
{
	long long deadline = ng_now_ms() + NG_TX_DRAIN_MS;

	while (tx->reaped < tx->sends && !ng_stop) {
		if (ng_tx_wait(tx, 1000) < 0)
			return 1;
		if (ng_now_ms() > deadline) {
			printf("drain: %llu of %llu sends completed within %d s\n",
			       tx->reaped, tx->sends, NG_TX_DRAIN_MS / 1000);
			return 1;
		}
	}
	return tx->reaped < tx->sends;
}

/*
 * The peers of make bench: the same stream through the same slots of the
 * same host memory, sent with send() or send(MSG_ZEROCOPY); the same
 * report line as netgpu's (completions: sends returned, or notified).
 */
static int ng_send_peer(struct ng *ng, struct ng_tx *tx, struct stream *st,
			unsigned long long want, int sock)
{
	unsigned long long sent = 0, dummy = 0;
	long long t0 = ng_now_ms();
	int rc;

	rc = !!ng_tx_stream(ng, tx, st, want, &sent, 0, &dummy);
	shutdown(sock, SHUT_WR);
	if (!ng_stop)
		rc |= ng_tx_drain(tx);
	printf("nsim_netgpu: send bytes=%llu sends=%llu completions=%llu copied=%llu pending=%llu lost=0 reaped=%llu unexpected=%llu secs=%.3f\n",
	       sent, tx->sends, tx->reaped,
	       tx->mode == NG_TX_COPY ? tx->sends : tx->zc_copied,
	       tx->sends - tx->reaped, tx->reaped, tx->unexpected,
	       (ng_now_ms() - t0) / 1000.0);
	return rc || ng_stop || sent != want || tx->reaped != tx->sends ||
	       tx->unexpected;
}

static int do_send(int argc, char **argv)
{
	struct ng ng = { .mem_fd = -1, .ctx_fd = -1 };
	struct timeval tv = { NG_TX_SNDTIMEO_S, 0 };
	struct ng_tx tx = { .mode = NG_TX_NETGPU };
	unsigned long long want, sent = 0, remove_at = 0, removed_at = 0;
	int memfd = -1, dmabuf = -1, sock = -1, rc = 1, udmabuf, err;
	unsigned long mib = 8;
	struct netgpu_stats st;
	struct stream strm;
	long long t0;
	size_t len;

	if (argc < 8 || argc > 9)
		return 2;
	udmabuf = !strcmp(argv[7], "udmabuf");
	if (!strcmp(argv[7], "copy"))
		tx.mode = NG_TX_COPY;
	else if (!strcmp(argv[7], "msgzc"))
		tx.mode = NG_TX_MSGZC;
	else if (!udmabuf && strcmp(argv[7], "host") &&
		 strcmp(argv[7], "remove"))
		return 2;
	if (argc > 8)
		mib = strtoul(argv[8], NULL, 0);
	if (mib < 1 || mib > 1024)
		return 2;
	ng.ifindex = if_nametoindex(argv[2]);
	if (!ng.ifindex)
		return perror("nsim_netgpu: if_nametoindex"), 2;
	ng.page = sysconf(_SC_PAGESIZE);
	len = mib << 20;
	ng.pages = len / ng.page;
	want = strtoull(argv[5], NULL, 0);
	if (!strcmp(argv[7], "remove"))
		remove_at = want / 4 ? want / 4 : 1;
	stream_init(&strm, strtoull(argv[6], NULL, 0));
	ng_catch_signals();
	printf("nsim_netgpu: pid %d sending %llu bytes to %s port %s from %lu MiB of %s on %s%s\n",
	       (int)getpid(), want, argv[3], argv[4], mib,
	       udmabuf ? "udmabuf" : "host memory", argv[2],
	       tx.mode == NG_TX_COPY ? " with send()" :
	       tx.mode == NG_TX_MSGZC ? " with send(MSG_ZEROCOPY)" : "");

	if (udmabuf) {
		dmabuf = ng_tx_udmabuf(&ng, len, &memfd);
		if (dmabuf < 0)
			goto out;
	} else {
		ng.mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			      -1, 0);
		if (ng.mem == MAP_FAILED) {
			ng.mem = NULL;
			perror("nsim_netgpu: mmap");
			goto out;
		}
	}
	if (tx.mode == NG_TX_NETGPU) {
		rc = ng_open_context(&ng, dmabuf);
		if (rc)
			goto out;
		rc = 1;
	}
	tx.nslots = len / NG_TX_SLOT;
	tx.out = calloc(tx.nslots, sizeof(*tx.out));
	tx.zc_slot = calloc(NG_TX_ZC_IDS, sizeof(*tx.zc_slot));
	if (!tx.out || !tx.zc_slot)
		goto out;

	sock = ng_connect(argv[3], argv[4]);
	if (sock < 0) {
		printf("connect %s port %s: %s\n", argv[3], argv[4],
		       ng_errname(errno));
		goto out;
	}
	/* Every wait of a SEND is bounded; a stall fails after NG_WAIT_MS. */
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	printf("connected to %s port %s\n", argv[3], argv[4]);
	tx.sock = sock;
	if (tx.mode != NG_TX_NETGPU) {
		int one = 1;

		if (tx.mode == NG_TX_MSGZC &&
		    setsockopt(sock, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
			printf("SO_ZEROCOPY: %s\n", ng_errname(errno));
			goto out;
		}
		rc = ng_send_peer(&ng, &tx, &strm, want, sock);
		goto out;
	} else if (ng_tx_attach(&ng, &tx, sock)) {
		goto out;
	}

	if (udmabuf) {
		rc = ng_tx_refused(&tx, ng.mem, &strm, want);
		goto out;
	}
	t0 = ng_now_ms();
	err = ng_tx_stream(&ng, &tx, &strm, want, &sent, remove_at,
			   &removed_at);
	if (remove_at) {
		/*
		 * The region gone, the next SEND fails, and what was
		 * accepted before still completes.
		 */
		rc = !removed_at || (err != -ENODEV && err != -EFAULT);
		printf("nsim_netgpu: send removed after=%llu errno=%s\n",
		       removed_at, err ? ng_errname(-err) : "none");
	} else {
		rc = !!err;
	}
	/* The receiver sees the end once it has every byte. */
	shutdown(sock, SHUT_WR);
	if (!ng_stop)
		rc |= ng_tx_drain(&tx);

	err = ng_get_stats(netgpu_sockq_fd(tx.sq), &st);
	if (err) {
		printf("GET_STATS: %s\n", ng_errname(-err));
		rc = 1;
		goto out;
	}
	printf("nsim_netgpu: send bytes=%llu sends=%llu completions=%llu copied=%llu pending=%llu lost=%llu reaped=%llu unexpected=%llu secs=%.3f\n",
	       sent, (unsigned long long)st.tx_sends,
	       (unsigned long long)st.tx_completions,
	       (unsigned long long)st.tx_copied,
	       (unsigned long long)st.tx_pending,
	       (unsigned long long)st.tx_lost, tx.reaped, tx.unexpected,
	       (ng_now_ms() - t0) / 1000.0);
	if (st.tx_bytes != sent || st.tx_sends != tx.sends) {
		printf("stats: tx_bytes=%llu tx_sends=%llu, %llu bytes in %llu sends accepted\n",
		       (unsigned long long)st.tx_bytes,
		       (unsigned long long)st.tx_sends, sent, tx.sends);
		rc = 1;
	}
	if (ng_stop || (!remove_at && sent != want) ||
	    st.tx_completions != st.tx_sends ||
	    tx.reaped != tx.sends || tx.unexpected || st.tx_pending ||
	    st.tx_lost)
		rc = 1;
out:
	netgpu_sockq_close(tx.sq);
	if (sock >= 0)
		close(sock);
	free(tx.out);
	free(tx.zc_slot);
	ng_close(&ng);
	if (dmabuf >= 0)
		close(dmabuf);
	if (memfd >= 0)
		close(memfd);
	return rc;
}

/* ===== netem: packet loss on a device's egress ===== */

static void ng_nl_ignore(const struct nlmsghdr *nh, void *arg)
{
	(void)nh;
	(void)arg;
}

static void ng_nla_put(struct nlmsghdr *nh, int type, const void *data,
		       int len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static int do_netem(int argc, char **argv)
{
	struct {
		struct nlmsghdr nh;
		struct tcmsg tc;
		char attrs[128];
	} req = {};
	struct tc_netem_qopt qopt = { .limit = 1000 };
	unsigned long loss;
	unsigned int ifindex;
	char *end;
	int fd, err;

	if (argc != 4)
		return 2;
	loss = strtoul(argv[3], &end, 10);
	if (*end || loss > 10000)
		return 2;
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex) {
		printf("netem: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		printf("netem: socket: %s\n", strerror(errno));
		return 1;
	}
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.tc));
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.tc.tcm_family = AF_UNSPEC;
	req.tc.tcm_ifindex = ifindex;
	req.tc.tcm_parent = TC_H_ROOT;
	if (loss) {
		req.nh.nlmsg_type = RTM_NEWQDISC;
		req.nh.nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
		req.tc.tcm_handle = 0x10000;	/* 1: */
		/* A probability of UINT32_MAX is 1 (netem's scale). */
		qopt.loss = (unsigned int)((unsigned long long)loss *
					   UINT32_MAX / 10000);
		ng_nla_put(&req.nh, TCA_KIND, "netem", sizeof("netem"));
		ng_nla_put(&req.nh, TCA_OPTIONS, &qopt, sizeof(qopt));
	} else {
		req.nh.nlmsg_type = RTM_DELQDISC;
	}
	err = ng_nl_talk(fd, &req.nh, ng_nl_ignore, NULL);
	close(fd);
	if (err) {
		printf("netem: %s on %s: %s\n", loss ? "RTM_NEWQDISC" : "RTM_DELQDISC",
		       argv[2], strerror(-err));
		return 1;
	}
	printf("netem: %s loss %lu/10000\n", argv[2], loss);
	return 0;
}

/* ===== setlink: a device's GSO size limits ===== */

/* IFLA_GSO_IPV4_MAX_SIZE (v6.3) is newer than the host's uapi headers. */
#define NG_IFLA_GSO_IPV4_MAX_SIZE 63

/* The ack of @req, which must be the only reply: 0 or -errno, and the
 * extended ack's message (NETLINK_EXT_ACK, NETLINK_CAP_ACK) in @msg.
 */
static int ng_nl_ack(int fd, struct nlmsghdr *req, char *msg, size_t msglen)
{
	static char buf[8192];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	const struct nlmsghdr *nh;
	const struct nlmsgerr *e;
	const struct nlattr *a;
	ssize_t n;
	int len;

	msg[0] = 0;
	if (send(fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	if (poll(&p, 1, 10000) != 1)
		return -ETIMEDOUT;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	nh = (const struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, n) || nh->nlmsg_type != NLMSG_ERROR ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EPROTO;
	e = NLMSG_DATA(nh);
	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return e->error;
	/* With NETLINK_CAP_ACK the request is not echoed: TLVs follow. */
	a = (const struct nlattr *)((const char *)e + sizeof(*e));
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*e));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(msg, msglen, "%.*s", a->nla_len - NLA_HDRLEN,
				 (const char *)a + NLA_HDRLEN);
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return e->error;
}

static int do_setlink(int argc, char **argv)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = {};
	unsigned int ifindex, val;
	unsigned long bytes;
	int fd, err, type, one = 1;
	char msg[256], *end;

	if (argc != 5)
		return 2;
	if (!strcmp(argv[3], "gso_max_size"))
		type = IFLA_GSO_MAX_SIZE;
	else if (!strcmp(argv[3], "gso_ipv4_max_size"))
		type = NG_IFLA_GSO_IPV4_MAX_SIZE;
	else
		return 2;
	bytes = strtoul(argv[4], &end, 10);
	if (*end || !*argv[4] || bytes > UINT32_MAX)
		return 2;
	val = bytes;
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex) {
		printf("setlink: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one))) {
		printf("setlink: socket: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_SETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	ng_nla_put(&req.nh, type, &val, sizeof(val));
	err = ng_nl_ack(fd, &req.nh, msg, sizeof(msg));
	close(fd);
	if (err) {
		printf("setlink: %s %s %u: refused: %s (%s)\n", argv[2], argv[3],
		       val, strerror(-err), msg[0] ? msg : "no message");
		return 1;
	}
	printf("setlink: %s %s %u: accepted\n", argv[2], argv[3], val);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: nsim_netgpu bind <ifname> <pages> <seconds> <command file>\n"
		"       nsim_netgpu recv-unreadable <port> <bytes> <seconds> [devmem]\n"
		"       nsim_netgpu packet <ifname> <seconds>\n"
		"       nsim_netgpu netlink <ifname | ->\n"
		"       nsim_netgpu udmabuf-sweep <pages>\n"
		"       nsim_netgpu send <ifname> <address> <port> <bytes> <seed> <host|udmabuf|remove|copy|msgzc> [<region MiB>]\n"
		"       nsim_netgpu netem <ifname> <loss in 1/10000, 0 deletes it>\n"
		"       nsim_netgpu memcg <ifname> <cgroup dir> <limit KiB> <adds> <slack KiB>\n"
		"       nsim_netgpu setlink <ifname> <gso_max_size|gso_ipv4_max_size> <bytes>\n"
		"bind commands (\"<n> <command>\" lines): check <seed> <bytes>, stats,\n"
		"ring, poll, bind2, dead, unbind, quit\n");
	return 2;
}

int main(int argc, char **argv)
{
	int rc = -1;

	/* Lines reach the script's output file as they are printed. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "bind"))
		rc = do_bind(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "recv-unreadable"))
		rc = do_recv_unreadable(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "packet"))
		rc = do_packet(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "netlink"))
		rc = do_netlink(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "udmabuf-sweep"))
		rc = do_udmabuf_sweep(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "send"))
		rc = do_send(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "netem"))
		rc = do_netem(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "memcg"))
		rc = do_memcg(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "setlink"))
		rc = do_setlink(argc, argv);
	if (rc == 2 || rc < 0)
		return usage();
	printf("nsim_netgpu: exit %d\n", rc);
	return rc;
}
