// SPDX-License-Identifier: GPL-2.0-only
/*
 * nsim_tcp: move a seeded byte pattern over TCP and check every byte.
 * Built static on the host by scripts/netdevsim-check, run in the guest
 * by kunit/netdevsim/run.sh.
 *
 *   nsim_tcp recv <port> <bytes> <seed> [<read size>]
 *   nsim_tcp send <IPv4 or IPv6 address> <port> <bytes> <seed> [<write size>]
 *   nsim_tcp netns <ifname> <pid>	(move a device, if busybox ip cannot)
 *   nsim_tcp devmem <ifname> <port> <bytes> <seed> <dma-buf MiB>
 *   nsim_tcp kick
 *
 * kick: runs NET_RX softirq once on every online CPU (a UDP datagram to
 * itself over loopback, sent pinned to each CPU: loopback queues it to
 * that CPU's backlog).  net_rx_action() first frees the skbs other CPUs
 * parked on that CPU's defer list (skb_attempt_defer_free(): a socket
 * reader frees an skb on the CPU that allocated it), which otherwise wait
 * for the next packet that CPU receives, however long that is, and hold
 * their page_pool buffers meanwhile.
 *
 * devmem: like recv, but first binds a udmabuf (memfd pages) to rx
 * queue 0 of <ifname> with devmem TCP (netdev netlink BIND_RX), receives
 * with MSG_SOCK_DEVMEM and checks each frag's bytes where the cmsg says
 * they are in the dma-buf (read through the memfd mapping), then gives
 * the frags back (SO_DEVMEM_DONTNEED).  The binding goes with the
 * netlink socket at exit.
 *
 * Both sides generate the same stream (xorshift64* from the seed); the
 * receiver compares each byte at its offset, so a lost, duplicated,
 * reordered or misplaced chunk shows.  Each side prints one line:
 *   nsim_tcp: <recv|send> bytes=<n> mismatches=<n> first_bad=<offset|-1>
 *             sum=<32-bit Fletcher sum of the bytes seen, hex>
 * and exits 0 only if it moved exactly <bytes> bytes (the receiver: and
 * every byte matched).  The receivers check with stream_verify()
 * (stream.h), the routine netgpu-rx uses too.  For scripts/bench-rx, in
 * the environment: NSIM_TCP_SUM=0 leaves the receivers' sum out (sum=-:
 * netgpu-rx computes none), NSIM_TCP_VERIFY=0 the byte check.
 *
 * devmem receives as ncdevmem (tools/testing/selftests/net/ncdevmem.c)
 * does: an 819200-byte iov and an 80000-byte control buffer per
 * recvmsg(), each frag's token given back with its own
 * SO_DEVMEM_DONTNEED (NSIM_TCP_TOKENS=batch: the recvmsg()'s tokens in
 * one call, runs of consecutive tokens coalesced, at most 128 a call).
 * It reads the dma-buf as netgpu-rx does: DMA_BUF_IOCTL_SYNC START and
 * END around each batch (each recvmsg()'s frags), not around each frag.
 *
 * The receiver listens on IPv6 and IPv4 (a dual stack socket) and waits
 * at most 120 s per read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "stream.h"


struct fletcher {
	uint32_t a, b;
};

/* Receivers only: the environment's NSIM_TCP_SUM and NSIM_TCP_VERIFY. */
static int rx_sum = 1, rx_verify = 1;

static int env_flag(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) != 0 : def;
}

static void rx_sum_str(char *buf, size_t len, const struct fletcher *f)
{
	if (rx_sum)
		snprintf(buf, len, "%08x", (f->b << 16) | f->a);
	else
		snprintf(buf, len, "-");
}

static void fletcher_add(struct fletcher *f, const unsigned char *p, size_t n)
{
	while (n--) {
		f->a = (f->a + *p++) % 65535;
		f->b = (f->b + f->a) % 65535;
	}
}

/* Wall and CPU time of the receive loop, for scripts/bench-rx. */
struct span {
	struct timespec t;
	struct rusage ru;
};

static void span_start(struct span *sp)
{
	clock_gettime(CLOCK_MONOTONIC, &sp->t);
	getrusage(RUSAGE_SELF, &sp->ru);
}

/* " secs=<wall> cpu=<user+sys>" since span_start(). */
static const char *span_str(const struct span *sp)
{
	static char buf[64];
	struct timespec t;
	struct rusage ru;
	double cpu;

	clock_gettime(CLOCK_MONOTONIC, &t);
	getrusage(RUSAGE_SELF, &ru);
	cpu = (ru.ru_utime.tv_sec - sp->ru.ru_utime.tv_sec) +
	      (ru.ru_stime.tv_sec - sp->ru.ru_stime.tv_sec) +
	      ((ru.ru_utime.tv_usec - sp->ru.ru_utime.tv_usec) +
	       (ru.ru_stime.tv_usec - sp->ru.ru_stime.tv_usec)) / 1e6;
	snprintf(buf, sizeof(buf), " secs=%.3f cpu=%.3f",
		 (t.tv_sec - sp->t.tv_sec) + (t.tv_nsec - sp->t.tv_nsec) / 1e9,
		 cpu);
	return buf;
}

static int do_recv(int argc, char **argv)
{
	struct span sp;
	unsigned long long want, got = 0, bad = 0;
	long long first_bad = -1;
	struct fletcher f = { 0, 0 };
	struct sockaddr_in6 sa = { 0 };
	struct timeval tv = { 120, 0 };
	struct stream s;
	size_t rsz = 65536;
	unsigned char *buf;
	int one = 1, zero = 0, lfd, fd;
	char sum[16];

	if (argc < 5)
		return 2;
	want = strtoull(argv[3], NULL, 0);
	stream_init(&s, strtoull(argv[4], NULL, 0));
	if (argc > 5)
		rsz = strtoul(argv[5], NULL, 0);
	buf = malloc(rsz);
	if (!buf)
		return 2;

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		return perror("nsim_tcp: socket"), 2;
	sa.sin6_family = AF_INET6;
	sa.sin6_addr = in6addr_any;
	sa.sin6_port = htons(atoi(argv[2]));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		return perror("nsim_tcp: bind/listen"), 2;
	/* Tell the script we listen (it starts the sender then). */
	printf("nsim_tcp: listening on %s\n", argv[2]);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return perror("nsim_tcp: accept"), 2;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	span_start(&sp);

	for (;;) {
		ssize_t n = read(fd, buf, rsz);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("nsim_tcp: read");
			break;
		}
		if (n == 0)
			break;
		if (rx_verify)
			bad += stream_verify(&s, buf, n, got, &first_bad);
		if (rx_sum)
			fletcher_add(&f, buf, n);
		got += n;
	}
	rx_sum_str(sum, sizeof(sum), &f);
	printf("nsim_tcp: recv bytes=%llu mismatches=%llu first_bad=%lld sum=%s%s\n",
	       got, bad, first_bad, sum, span_str(&sp));
	close(fd);
	close(lfd);
	return got == want && !bad ? 0 : 1;
}

static int do_send(int argc, char **argv)
{
	unsigned long long want, sent = 0;
	struct fletcher f = { 0, 0 };
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
	socklen_t salen;
	struct stream s;
	size_t wsz = 65536;
	unsigned char *buf;
	int fd, tries;

	if (argc < 6)
		return 2;
	want = strtoull(argv[4], NULL, 0);
	stream_init(&s, strtoull(argv[5], NULL, 0));
	if (argc > 6)
		wsz = strtoul(argv[6], NULL, 0);
	buf = malloc(wsz);
	if (!buf)
		return 2;

	if (inet_pton(AF_INET6, argv[2], &sa6->sin6_addr) == 1) {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons(atoi(argv[3]));
		salen = sizeof(*sa6);
	} else if (inet_pton(AF_INET, argv[2], &sa->sin_addr) == 1) {
		sa->sin_family = AF_INET;
		sa->sin_port = htons(atoi(argv[3]));
		salen = sizeof(*sa);
	} else {
		return 2;
	}
	for (tries = 0; ; tries++) {
		fd = socket(ss.ss_family, SOCK_STREAM, 0);
		if (fd < 0)
			return perror("nsim_tcp: socket"), 2;
		if (!connect(fd, (struct sockaddr *)&ss, salen))
			break;
		close(fd);
		if (tries == 50)
			return perror("nsim_tcp: connect"), 2;
		usleep(100000);
	}

	while (sent < want) {
		size_t n = want - sent < wsz ? want - sent : wsz, i, off = 0;

		for (i = 0; i < n; i++)
			buf[i] = stream_next(&s);
		fletcher_add(&f, buf, n);
		while (off < n) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				perror("nsim_tcp: write");
				goto out;
			}
			off += w;
		}
		sent += n;
	}
out:
	shutdown(fd, SHUT_WR);
	/* Wait for the receiver to close: all data acknowledged and read. */
	while (read(fd, buf, wsz) > 0)
		;
	printf("nsim_tcp: send bytes=%llu mismatches=0 first_bad=-1 sum=%08x\n",
	       sent, (f.b << 16) | f.a);
	close(fd);
	return sent == want ? 0 : 1;
}

static int do_netns(int argc, char **argv)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = { 0 };
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	struct rtattr *rta;
	unsigned int pid;
	int fd;

	if (argc < 4)
		return 2;
	pid = strtoul(argv[3], NULL, 0);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_NEWLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = if_nametoindex(argv[2]);
	if (!req.ifi.ifi_index)
		return perror("nsim_tcp: if_nametoindex"), 1;
	rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
	rta->rta_type = IFLA_NET_NS_PID;
	rta->rta_len = RTA_LENGTH(sizeof(pid));
	memcpy(RTA_DATA(rta), &pid, sizeof(pid));
	req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + rta->rta_len;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (fd < 0 || send(fd, &req, req.nh.nlmsg_len, 0) < 0 ||
	    recv(fd, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		return perror("nsim_tcp: netlink"), 1;
	if (ack.nh.nlmsg_type == NLMSG_ERROR && ack.err.error) {
		errno = -ack.err.error;
		return perror("nsim_tcp: RTM_NEWLINK"), 1;
	}
	return 0;
}

/* 6.12 uapi values (include/uapi/linux/netdev.h, uio.h, udmabuf.h,
 * asm-generic/socket.h), defined here: the host's headers are older.
 */
#define NSIM_NETDEV_CMD_BIND_RX		13
#define NSIM_NETDEV_A_DEV_IFINDEX	1
#define NSIM_NETDEV_A_DMABUF_QUEUES	2
#define NSIM_NETDEV_A_DMABUF_FD		3
#define NSIM_NETDEV_A_DMABUF_ID		4
#define NSIM_NETDEV_A_QUEUE_ID		1
#define NSIM_NETDEV_A_QUEUE_TYPE	3
#define NSIM_SO_DEVMEM_LINEAR		78
#define NSIM_SO_DEVMEM_DMABUF		79
#define NSIM_SO_DEVMEM_DONTNEED		80
#define NSIM_MSG_SOCK_DEVMEM		0x2000000
struct nsim_dmabuf_cmsg {
	uint64_t frag_offset;
	uint32_t frag_size, frag_token, dmabuf_id, flags;
};
struct nsim_dmabuf_token {
	uint32_t token_start, token_count;
};
struct nsim_udmabuf_create {
	uint32_t memfd, flags;
	uint64_t offset, size;
};
#define NSIM_UDMABUF_CREATE	_IOW('u', 0x42, struct nsim_udmabuf_create)

struct nlbuf {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[256];
};

static struct nlattr *nl_put(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

/* Send @req, read replies up to the ack; the first u32/u16 attribute of
 * type @want in a reply goes to @val.  Returns 0 or -errno.
 */
static int nl_talk(int fd, struct nlmsghdr *req, int want, uint32_t *val)
{
	static char buf[16384];
	int found = 0;

	if (send(fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0)
			return -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			struct nlattr *a;
			int len;

			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error ? e->error : (found ? 0 : -ENOENT);
			}
			a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
			len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= len) {
				if ((a->nla_type & NLA_TYPE_MASK) == want) {
					if (a->nla_len - NLA_HDRLEN == 2)
						*val = *(uint16_t *)((char *)a + NLA_HDRLEN);
					else
						*val = *(uint32_t *)((char *)a + NLA_HDRLEN);
					found = 1;
				}
				len -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
		}
	}
}

/* ncdevmem's sizes: char iobuf[819200], ctrl_data[sizeof(int) * 20000]. */
#define DEVMEM_IOV	819200
#define DEVMEM_CMSG	(sizeof(int) * 20000)
/* The kernel's limit per SO_DEVMEM_DONTNEED (net/core/sock.c). */
#define DEVMEM_DONTNEED_MAX	128

/* Give back @n token ranges; 0 if the kernel took every frag in them. */
static int devmem_dontneed(int fd, const struct nsim_dmabuf_token *tok,
			   size_t n)
{
	size_t i, frags = 0;
	int ret;

	for (i = 0; i < n; i++)
		frags += tok[i].token_count;
	ret = setsockopt(fd, SOL_SOCKET, NSIM_SO_DEVMEM_DONTNEED, tok,
			 n * sizeof(tok[0]));
	if (ret == (int)frags)
		return 0;
	fprintf(stderr, "nsim_tcp: SO_DEVMEM_DONTNEED freed %d of %zu frags%s%s\n",
		ret, frags, ret < 0 ? ": " : "", ret < 0 ? strerror(errno) : "");
	return -1;
}

static void devmem_sync(int dmabuf, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_READ };

	if (ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync))
		perror("nsim_tcp: DMA_BUF_IOCTL_SYNC");
}

static int do_devmem(int argc, char **argv)
{
	struct span sp;
	unsigned long long want, got = 0, bad = 0, frags = 0, linear = 0;
	unsigned long long dontneeds = 0;
	long long first_bad = -1;
	struct fletcher f = { 0, 0 };
	struct sockaddr_in6 sa = { 0 };
	struct timeval tv = { 120, 0 };
	struct nsim_udmabuf_create uc = { 0 };
	static struct nsim_dmabuf_token tok[DEVMEM_DONTNEED_MAX];
	static char cbuf[DEVMEM_CMSG];
	static unsigned char buf[DEVMEM_IOV];
	uint32_t family = 0, id = 0, ifindex, u32;
	int memfd, devfd, dmabuf, nl, lfd, fd, err, one = 1, zero = 0;
	int batch_tokens = 0, failed = 0;
	const char *tokens = getenv("NSIM_TCP_TOKENS");
	char sum[16];
	struct nlattr *nest;
	struct stream s;
	unsigned char *map;
	struct nlbuf req;
	size_t size;

	if (argc < 7)
		return 2;
	ifindex = if_nametoindex(argv[2]);
	want = strtoull(argv[4], NULL, 0);
	stream_init(&s, strtoull(argv[5], NULL, 0));
	size = strtoull(argv[6], NULL, 0) << 20;
	if (!ifindex)
		return perror("nsim_tcp: if_nametoindex"), 2;
	if (tokens && !strcmp(tokens, "batch"))
		batch_tokens = 1;
	else if (tokens && *tokens && strcmp(tokens, "frag"))
		return fprintf(stderr, "nsim_tcp: NSIM_TCP_TOKENS=frag|batch\n"), 2;

	memfd = memfd_create("nsim_tcp", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return perror("nsim_tcp: memfd"), 2;
	devfd = open("/dev/udmabuf", O_RDWR);
	uc.memfd = memfd;
	uc.flags = 1;	/* UDMABUF_FLAGS_CLOEXEC */
	uc.size = size;
	dmabuf = devfd < 0 ? -1 : ioctl(devfd, NSIM_UDMABUF_CREATE, &uc);
	if (dmabuf < 0)
		return perror("nsim_tcp: udmabuf"), 2;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
	if (map == MAP_FAILED)
		return perror("nsim_tcp: mmap"), 2;

	nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl < 0)
		return perror("nsim_tcp: netlink"), 2;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.nh.nlmsg_type = GENL_ID_CTRL;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.gh.cmd = CTRL_CMD_GETFAMILY;
	req.gh.version = 1;
	nl_put(&req.nh, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	err = nl_talk(nl, &req.nh, CTRL_ATTR_FAMILY_ID, &family);
	if (err)
		return fprintf(stderr, "nsim_tcp: netdev family: %s\n", strerror(-err)), 2;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.nh.nlmsg_type = family;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.gh.cmd = NSIM_NETDEV_CMD_BIND_RX;
	req.gh.version = 1;
	nl_put(&req.nh, NSIM_NETDEV_A_DEV_IFINDEX, &ifindex, 4);
	u32 = dmabuf;
	nl_put(&req.nh, NSIM_NETDEV_A_DMABUF_FD, &u32, 4);
	nest = nl_put(&req.nh, NSIM_NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED, NULL, 0);
	u32 = 0;
	nl_put(&req.nh, NSIM_NETDEV_A_QUEUE_ID, &u32, 4);
	nl_put(&req.nh, NSIM_NETDEV_A_QUEUE_TYPE, &u32, 4);	/* RX */
	nest->nla_len = (char *)&req + req.nh.nlmsg_len - (char *)nest;
	err = nl_talk(nl, &req.nh, NSIM_NETDEV_A_DMABUF_ID, &id);
	if (err)
		return fprintf(stderr, "nsim_tcp: BIND_RX: %s\n", strerror(-err)), 1;
	printf("nsim_tcp: bound %zu MiB udmabuf to %s rx queue 0, dmabuf id %u\n",
	       size >> 20, argv[2], id);

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		return perror("nsim_tcp: socket"), 2;
	sa.sin6_family = AF_INET6;
	sa.sin6_addr = in6addr_any;
	sa.sin6_port = htons(atoi(argv[3]));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		return perror("nsim_tcp: bind/listen"), 2;
	printf("nsim_tcp: listening on %s\n", argv[3]);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return perror("nsim_tcp: accept"), 2;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	span_start(&sp);

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { 0 };
		struct cmsghdr *cm;
		size_t lin = 0, ntok = 0;
		int any = 0, synced = 0;
		ssize_t n;

		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		n = recvmsg(fd, &msg, NSIM_MSG_SOCK_DEVMEM);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("nsim_tcp: recvmsg");
			break;
		}
		if (n == 0)
			break;
		if (msg.msg_flags & MSG_CTRUNC) {
			fprintf(stderr, "nsim_tcp: control data truncated\n");
			break;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct nsim_dmabuf_cmsg *dc = (void *)CMSG_DATA(cm);
			const unsigned char *p;

			if (cm->cmsg_level != SOL_SOCKET ||
			    (cm->cmsg_type != NSIM_SO_DEVMEM_LINEAR &&
			     cm->cmsg_type != NSIM_SO_DEVMEM_DMABUF))
				continue;
			any = 1;
			if (cm->cmsg_type == NSIM_SO_DEVMEM_LINEAR) {
				p = buf + lin;
				lin += dc->frag_size;
				linear += dc->frag_size;
			} else {
				if (dc->dmabuf_id != id ||
				    dc->frag_offset + dc->frag_size > size) {
					fprintf(stderr, "nsim_tcp: bad frag id %u off %llu\n",
						dc->dmabuf_id,
						(unsigned long long)dc->frag_offset);
					bad++;
					continue;
				}
				/* CPU access once a batch, as netgpu-rx. */
				if (!synced) {
					devmem_sync(dmabuf, DMA_BUF_SYNC_START);
					synced = 1;
				}
				p = map + dc->frag_offset;
				frags++;
			}
			if (rx_verify)
				bad += stream_verify(&s, p, dc->frag_size, got,
						     &first_bad);
			if (rx_sum)
				fletcher_add(&f, p, dc->frag_size);
			got += dc->frag_size;
			if (cm->cmsg_type == NSIM_SO_DEVMEM_LINEAR)
				continue;
			if (!batch_tokens) {
				/* ncdevmem: each frag's token at once. */
				struct nsim_dmabuf_token t = { dc->frag_token, 1 };

				dontneeds++;
				failed |= devmem_dontneed(fd, &t, 1);
				continue;
			}
			if (ntok && tok[ntok - 1].token_start +
				    tok[ntok - 1].token_count == dc->frag_token) {
				tok[ntok - 1].token_count++;
				continue;
			}
			if (ntok == DEVMEM_DONTNEED_MAX) {
				dontneeds++;
				failed |= devmem_dontneed(fd, tok, ntok);
				ntok = 0;
			}
			tok[ntok].token_start = dc->frag_token;
			tok[ntok++].token_count = 1;
		}
		if (!any) {	/* readable data: all in buf */
			if (rx_verify)
				bad += stream_verify(&s, buf, n, got, &first_bad);
			if (rx_sum)
				fletcher_add(&f, buf, n);
			got += n;
			linear += n;
		}
		if (ntok) {
			dontneeds++;
			failed |= devmem_dontneed(fd, tok, ntok);
		}
		if (synced)
			devmem_sync(dmabuf, DMA_BUF_SYNC_END);
		if (failed)
			break;
	}
	rx_sum_str(sum, sizeof(sum), &f);
	printf("nsim_tcp: recv bytes=%llu mismatches=%llu first_bad=%lld sum=%s",
	       got, bad, first_bad, sum);
	printf(" devmem_frags=%llu linear_bytes=%llu dontneed_calls=%llu%s\n",
	       frags, linear, dontneeds, span_str(&sp));
	close(fd);
	close(lfd);
	close(nl);
	return got == want && !bad && frags && !failed ? 0 : 1;
}

/* Loopback up, in this network namespace. */
static int lo_up(int fd)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(fd, SIOCSIFFLAGS, &ifr);
}

static int do_kick(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sin);
	int cpu, ncpu, kicked = 0;
	cpu_set_t set;
	char c = 0;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0 || lo_up(fd) < 0)
		return perror("nsim_tcp: kick: lo"), 1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0)
		return perror("nsim_tcp: kick: bind"), 1;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	for (cpu = 0; cpu < ncpu && cpu < CPU_SETSIZE; cpu++) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			continue;	/* offline */
		if (sendto(fd, &c, 1, 0, (struct sockaddr *)&sin,
			   sizeof(sin)) != 1)
			return perror("nsim_tcp: kick: sendto"), 1;
		kicked++;
	}
	printf("nsim_tcp: kick cpus=%d\n", kicked);
	close(fd);
	return kicked ? 0 : 1;
}

int main(int argc, char **argv)
{
	rx_sum = env_flag("NSIM_TCP_SUM", 1);
	rx_verify = env_flag("NSIM_TCP_VERIFY", 1);
	if (argc > 1 && !strcmp(argv[1], "kick"))
		return do_kick();
	if (argc > 1 && !strcmp(argv[1], "devmem"))
		return do_devmem(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "netns"))
		return do_netns(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "recv"))
		return do_recv(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "send"))
		return do_send(argc, argv);
	fprintf(stderr, "usage: nsim_tcp recv <port> <bytes> <seed> [rsz]\n"
			"       nsim_tcp send <addr> <port> <bytes> <seed> [wsz]\n");
	return 2;
}
