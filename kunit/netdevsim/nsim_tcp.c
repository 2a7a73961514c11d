// SPDX-License-Identifier: GPL-2.0-only
/*
 * nsim_tcp: move a seeded byte pattern over TCP and check every byte.
 * Built static on the host by scripts/netdevsim-check, run in the guest
 * by kunit/netdevsim/run.sh.
 *
 *   nsim_tcp recv <port> <bytes> <seed> [<read size>]
 *   nsim_tcp send <IPv4 or IPv6 address> <port> <bytes> <seed> [<write size>]
 *   nsim_tcp netns <ifname> <pid>	(move a device, if busybox ip cannot)
 *
 * Both sides generate the same stream (xorshift64* from the seed); the
 * receiver compares each byte at its offset, so a lost, duplicated,
 * reordered or misplaced chunk shows.  Each side prints one line:
 *   nsim_tcp: <recv|send> bytes=<n> mismatches=<n> first_bad=<offset|-1>
 *             sum=<32-bit Fletcher sum of the bytes seen, hex>
 * and exits 0 only if it moved exactly <bytes> bytes (the receiver: and
 * every byte matched).  The receiver listens on IPv6 and IPv4 (a dual
 * stack socket) and waits at most 120 s per read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct stream {
	uint64_t state;
	uint64_t word;
	unsigned int left;	/* bytes of word not yet used */
};

static void stream_init(struct stream *s, uint64_t seed)
{
	s->state = seed ? seed : 0x9e3779b97f4a7c15ULL;
	s->left = 0;
}

static unsigned char stream_next(struct stream *s)
{
	unsigned char c;

	if (!s->left) {
		s->state ^= s->state >> 12;
		s->state ^= s->state << 25;
		s->state ^= s->state >> 27;
		s->word = s->state * 0x2545f4914f6cdd1dULL;
		s->left = 8;
	}
	c = s->word & 0xff;
	s->word >>= 8;
	s->left--;
	return c;
}

struct fletcher {
	uint32_t a, b;
};

static void fletcher_add(struct fletcher *f, const unsigned char *p, size_t n)
{
	while (n--) {
		f->a = (f->a + *p++) % 65535;
		f->b = (f->b + f->a) % 65535;
	}
}

static int do_recv(int argc, char **argv)
{
	unsigned long long want, got = 0, bad = 0;
	long long first_bad = -1;
	struct fletcher f = { 0, 0 };
	struct sockaddr_in6 sa = { 0 };
	struct timeval tv = { 120, 0 };
	struct stream s;
	size_t rsz = 65536;
	unsigned char *buf;
	int one = 1, zero = 0, lfd, fd;

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

	for (;;) {
		ssize_t n = read(fd, buf, rsz);
		ssize_t i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("nsim_tcp: read");
			break;
		}
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] != stream_next(&s)) {
				if (first_bad < 0)
					first_bad = got + i;
				bad++;
			}
		}
		fletcher_add(&f, buf, n);
		got += n;
	}
	printf("nsim_tcp: recv bytes=%llu mismatches=%llu first_bad=%lld sum=%08x\n",
	       got, bad, first_bad, (f.b << 16) | f.a);
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

int main(int argc, char **argv)
{
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
