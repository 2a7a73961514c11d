// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udmabuf-rx IFNAME PORT: one TCP stream into a udmabuf (CAP_NET_ADMIN) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <netgpu/netgpu.h>
#define LEN	(64UL << 20)
#define BASE	(1ULL << 44)	/* the udmabuf's first byte as a ring address */
static int ck(int ret, const char *what)	/* ret: -errno, or -1 */
{
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", what, netgpu_strerror(ret == -1 ? -errno : ret));
		exit(1);
	}
	return ret;
}

static int on_descs(void *arg, const struct netgpu_rx_desc *d, uint32_t n)
{
	unsigned long long *bytes = arg;	/* d->addr - BASE: offset in the udmabuf */

	for (; n; n--, d++)
		bytes[!!(d->flags & NETGPU_RX_DESC_COPY)] += d->len;
	return 0;
}

int main(int argc, char **argv)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = LEN };
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	struct netgpu_rx_ops ops = { .descs = on_descs, .timeout_ms = 30000 };
	unsigned long long bytes[2] = {};	/* zero copy, copied by the kernel */
	int area, ctx, dbuf, lsn;
	struct netgpu_sockq *sq; struct netgpu_ifq *ifq;

	if (argc != 3)
		return fprintf(stderr, "usage: udmabuf-rx IFNAME PORT\n"), 2;
	sa.sin6_port = htons(atoi(argv[2]));
	uc.memfd = ck(memfd_create("rx", MFD_ALLOW_SEALING), "memfd");
	ck(ftruncate(uc.memfd, LEN) ?: fcntl(uc.memfd, F_ADD_SEALS, F_SEAL_SHRINK), "memfd");
	dbuf = ck(ioctl(ck(open("/dev/udmabuf", O_RDWR), "/dev/udmabuf"), UDMABUF_CREATE, &uc), "udmabuf");
	area = ck(netgpu_area_open(), "/dev/netgpu_mem"), ctx = ck(netgpu_ctx_open(), "/dev/netgpu");
	ck(netgpu_ctx_attach_dev(ctx, if_nametoindex(argv[1])), argv[1]);
	ck(netgpu_ctx_attach_region(ctx, area, ck(netgpu_area_add_dmabuf(area, dbuf, BASE, LEN), "region")), "attach");
	ck(netgpu_ifq_bind(ctx, NETGPU_LIB_QUEUE_ANY, LEN / 4096, &ifq), "bind queue");
	lsn = ck(socket(AF_INET6, SOCK_STREAM, 0), "socket");
	ck(bind(lsn, (struct sockaddr *)&sa, sizeof(sa)) ?: listen(lsn, 1), "listen");
	ck(netgpu_sockq_attach(ctx, ck(accept(lsn, NULL, NULL), "accept"), 4096, 0, &sq), "attach socket");
	ck(netgpu_rx_loop(sq, ifq, &ops, bytes), "receive");
	return printf("udmabuf-rx: %llu bytes zero copy, %llu copied\n", bytes[0], bytes[1]) < 0;
}
