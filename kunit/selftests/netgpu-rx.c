// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu-rx: receive a TCP stream into netgpu memory, zero copy.
 *
 * The user tool of netgpu's receive path (as ncdevmem is devmem TCP's):
 * registers memory with /dev/netgpu_mem (anonymous host memory, a
 * udmabuf, a dumb buffer of a DRM driver such as vgem, exported as a
 * dma-buf, or a PCI device's published peer-to-peer memory mapped from
 * sysfs), binds an rx queue of a device with /dev/netgpu, accepts or
 * makes one TCP connection, attaches it, and reads rx ring descriptors
 * until the peer closes: it checks the bytes where the descriptors say
 * they are (optionally against the seeded stream the netdevsim tests
 * send), gives the buffers back on the fill ring and prints throughput,
 * CPU time per GiB, copies made and fill entries the kernel rejected.
 * See --help.  Every netgpu ioctl and ring access goes through libnetgpu
 * (tools/lib/netgpu), linked static with it, but the addition of a
 * peer-to-peer region (libnetgpu 0.1 has no call for its flag); the
 * hostile modes only give it unusual addresses and timings to submit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netgpu/netgpu.h>

#include "stream.h"

/* The DRM uapi the tool needs (drm.h, drm_mode.h), not always installed */
struct rx_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};

struct rx_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};

#define RX_DRM_IOCTL_MODE_CREATE_DUMB \
	_IOWR('d', 0xB2, struct rx_drm_create_dumb)
#define RX_DRM_IOCTL_PRIME_HANDLE_TO_FD \
	_IOWR('d', 0x2d, struct rx_drm_prime_handle)

/* Where dma-buf regions live in the context's address space. */
#define RX_DMABUF_BASE	(1ULL << 44)
/* Descriptors copied out of the rx ring at a time */
#define RX_BATCH	256

enum rx_mem { RX_HOST, RX_UDMABUF, RX_DRM, RX_P2PMEM };
enum rx_hostile { RX_NICE, RX_HOLD, RX_GARBAGE, RX_DOUBLE, RX_STARVE };

struct rx_region {
	uint64_t addr;		/* in the context's address space */
	size_t len;
	unsigned char *map;	/* where the CPU reads it */
	int dmabuf;		/* or -1 */
	int id;			/* in the memory area */
	int p2p;		/* peer-to-peer memory: never read here */
};

struct rx {
	/* options */
	const char *ifname, *connect, *port, *drm_dev, *p2p_dev;
	enum rx_mem mem;
	enum rx_hostile hostile;
	size_t mib, copy_mib, pages;
	uint64_t bytes, seed, remove_at, pause_at;
	int verify, queue, timeout, quiet, removed, p2p_plain, revoked;
	uint32_t rx_entries;
	/* state */
	long page;
	int mem_fd, ctx_fd, sock;
	struct rx_region reg[2];
	int nreg;
	struct netgpu_ifq *ifq;		/* the fill ring */
	struct netgpu_sockq *sq;	/* the rx ring */
	struct stream stream;
	uint64_t got, zc, copied, copies, recvd, mismatches, descs;
	uint64_t unread, unread_descs;	/* in peer-to-peer memory */
	uint64_t *held;			/* --hostile hold: buffers kept */
	size_t nheld, held_max;
	int64_t first_bad;
	int eof;
	int stopped;			/* the queue stopped (--revoked) */
	int paused;			/* --pause-at reached */
	int starved;			/* starve: 1 starved, 2 kicked, 3 resumed */
	uint64_t kicked_at;		/* bytes when the held buffers went back */
	double kick_time;
};

static volatile sig_atomic_t rx_stop;

static void rx_on_signal(int sig)
{
	(void)sig;
	rx_stop = 1;
}

static const char rx_help_text[] =
"usage: netgpu-rx -i IFNAME (-l PORT | -c ADDR -p PORT) [options]\n"
"\n"
"Receive one TCP stream into netgpu memory.  Binds an rx queue of IFNAME\n"
"(netgpu becomes its page_pool memory provider: the NIC writes payloads\n"
"into the registered memory), attaches the connection's socket and reads\n"
"rx descriptors until the peer closes.  Steer the flow to the queue (one\n"
"queue, or ethtool ntuple rules) and keep header split on; needs\n"
"CAP_NET_ADMIN.\n"
"\n"
"  -i, --ifname IFNAME   device (in this network namespace)\n"
"  -q, --queue N         rx queue to bind (default: any free queue)\n"
"  -l, --listen PORT     accept one connection (IPv6 and IPv4)\n"
"  -c, --connect ADDR    or connect to ADDR ...\n"
"  -p, --port PORT       ... at PORT\n"
"  -m, --memory KIND     host (default): anonymous memory, pinned;\n"
"                        udmabuf: a udmabuf of memfd pages (/dev/udmabuf);\n"
"                        drm: a dumb buffer of the DRM device (--drm-dev),\n"
"                        e.g. vgem; dma-bufs are read back through their\n"
"                        own mmap(), never written by the kernel's CPU;\n"
"                        p2pmem: peer-to-peer memory of the PCI device\n"
"                        --p2pmem-dev (the mmap() of its sysfs\n"
"                        p2pmem/allocate), a host region with\n"
"                        NETGPU_ADD_REGION_P2PDMA: never read here, its\n"
"                        bytes and descriptors are counted, not checked\n"
"  -s, --size MIB        memory to register (default 64)\n"
"      --pages N         register N pages instead of --size MiB\n"
"      --copy-mib MIB    with a dma-buf or p2pmem: host memory for the\n"
"                        bytes that arrive in ordinary memory (default 0:\n"
"                        those are read with recv())\n"
"      --drm-dev PATH    DRM device for -m drm (default /dev/dri/card0)\n"
"      --p2pmem-dev BDF  PCI device for -m p2pmem (e.g. 0000:04:00.0)\n"
"      --p2pmem-plain    register the p2pmem mapping without the flag, as\n"
"                        ordinary host memory: the kernel must refuse it\n"
"  -n, --bytes N         expect exactly N bytes (default: until EOF)\n"
"  -v, --verify SEED     check every byte against the seeded stream of\n"
"                        the netdevsim tests' sender (nsim_tcp send)\n"
"  -r, --rx-entries N    rx ring entries (default 4096)\n"
"  -t, --timeout SEC     give up after SEC seconds without progress (30)\n"
"      --hostile MODE    misbehave, to test the kernel: hold (never give\n"
"                        buffers back: the stream stalls, then the tool\n"
"                        exits 0 after --timeout), garbage (also give back\n"
"                        addresses it never got), double (give each back\n"
"                        twice: the kernel takes it once), starve (hold\n"
"                        every buffer until the queue is starved: poll()\n"
"                        on the queue's fd reports POLLPRI and the fill\n"
"                        ring's NETGPU_RING_NEED_WAKEUP is set; then\n"
"                        kick it with NETGPU_IFQ_IOCTL_WAKEUP (must\n"
"                        succeed), give every buffer back at once and\n"
"                        go on: the stream must resume and the flag go)\n"
"      --make-it-fail    put this process under the fault-injection task\n"
"                        filter (/proc/self/make-it-fail) before it\n"
"                        registers anything\n"
"      --remove-region N once N bytes arrived, remove the memory from\n"
"                        netgpu (NETGPU_MEM_IOCTL_REMOVE_REGION) as an\n"
"                        owner taking it back would: the queue must stop\n"
"                        (poll() on its fd: POLLHUP) and the rest of the\n"
"                        stream arrive in ordinary memory, by recv()\n"
"      --revoked         expect the kernel to revoke the p2pmem region\n"
"                        mid-stream (its PCI device's driver unbound):\n"
"                        the queue must stop (POLLHUP), the rest of the\n"
"                        stream arrive by recv(), and at the end the\n"
"                        region be refused by ATTACH_REGION (ENODEV)\n"
"                        and removable (REMOVE_REGION)\n"
"      --pause-at N      with --revoked: once N bytes arrived, stop\n"
"                        reading (the receive window closes, the sender\n"
"                        waits, the queue's buffers stay posted), print\n"
"                        \"netgpu-rx: paused at <bytes> bytes\", and wait\n"
"                        up to --timeout s for the queue to stop before\n"
"                        reading the rest\n"
"  -h, --help            this text\n"
"\n"
"Prints one line: bytes, mismatches, zero-copy / copied / recv() bytes,\n"
"seconds, MB/s, CPU seconds per GiB, fill entries the kernel rejected and\n"
"frags it refused (with p2pmem, a line before it: the bytes and\n"
"descriptors left unread in device memory; mismatches then count the\n"
"recv() bytes only).  Exit 0 on success, 1 on a failed check or error, 2\n"
"on bad usage, 3 if the kernel has no netgpu (or the device no support).\n";

static void rx_help(FILE *f)
{
	fputs(rx_help_text, f);
}

static int rx_die(const char *what)
{
	fprintf(stderr, "netgpu-rx: %s: %s\n", what, strerror(errno));
	return errno == ENOENT || errno == EOPNOTSUPP ? 3 : 1;
}

/*
 * rx_die() for a libnetgpu call's -errno, under the name of the ioctl as
 * before: strerror()'s text, not netgpu_strerror()'s, since the torture
 * campaigns match it (fault/guest.sh, excused()).
 */
static int rx_fail(const char *what, int err)
{
	errno = -err;
	return rx_die(what);
}

static double rx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double rx_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ===== Memory ===== */

/*
 * A host region of peer-to-peer memory: the ioctl itself, libnetgpu 0.1
 * has no call for NETGPU_ADD_REGION_P2PDMA.  Without the flag
 * (--p2pmem-plain) the same mapping as ordinary host memory.
 */
static int rx_add_p2p(struct rx *rx, const struct rx_region *r)
{
	struct netgpu_add_region ar;
	int id;

	memset(&ar, 0, sizeof(ar));
	ar.type = NETGPU_REGION_HOST;
	ar.flags = rx->p2p_plain ? 0 : NETGPU_ADD_REGION_P2PDMA;
	ar.addr = r->addr;
	ar.len = r->len;
	id = ioctl(rx->mem_fd, NETGPU_MEM_IOCTL_ADD_REGION, &ar);
	return id < 0 ? -errno : id;
}

/* Add the region just set up (the last of rx->reg) and attach it. */
static int rx_add_region(struct rx *rx)
{
	struct rx_region *r = &rx->reg[rx->nreg - 1];
	int id, err;

	if (r->dmabuf >= 0)
		id = netgpu_area_add_dmabuf(rx->mem_fd, r->dmabuf, r->addr,
					    r->len);
	else if (r->p2p)
		id = rx_add_p2p(rx, r);
	else
		id = netgpu_area_add_host(rx->mem_fd, r->map, r->len);
	if (id < 0)
		return rx_fail("NETGPU_MEM_IOCTL_ADD_REGION", id);
	r->id = id;
	err = netgpu_ctx_attach_region(rx->ctx_fd, rx->mem_fd, id);
	if (err)
		return rx_fail("NETGPU_CTX_IOCTL_ATTACH_REGION", err);
	return 0;
}

static int rx_host(struct rx *rx, size_t len)
{
	struct rx_region *r = &rx->reg[rx->nreg];

	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r->map == MAP_FAILED)
		return rx_die("mmap");
	r->addr = (uintptr_t)r->map;
	r->len = len;
	r->dmabuf = -1;
	rx->nreg++;
	return rx_add_region(rx);
}

static int rx_udmabuf(size_t len)
{
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC,
				     .size = len };
	int memfd, dev, fd;

	memfd = memfd_create("netgpu-rx", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, len) < 0 ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return rx_die("memfd"), -1;
	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return rx_die("/dev/udmabuf"), -1;
	uc.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &uc);
	if (fd < 0)
		return rx_die("UDMABUF_CREATE"), -1;
	close(dev);
	close(memfd);
	return fd;
}

static int rx_drm(struct rx *rx, size_t len)
{
	struct rx_drm_create_dumb cd = { .width = 1024, .bpp = 32 };
	struct rx_drm_prime_handle ph = { .flags = O_RDWR | O_CLOEXEC };
	int dev;

	cd.height = len / (cd.width * 4);
	dev = open(rx->drm_dev, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return rx_die(rx->drm_dev), -1;
	if (ioctl(dev, RX_DRM_IOCTL_MODE_CREATE_DUMB, &cd) < 0)
		return rx_die("DRM_IOCTL_MODE_CREATE_DUMB"), -1;
	ph.handle = cd.handle;
	if (ioctl(dev, RX_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) < 0)
		return rx_die("DRM_IOCTL_PRIME_HANDLE_TO_FD"), -1;
	/* The dma-buf holds the buffer; the DRM file may go. */
	close(dev);
	return ph.fd;
}

static int rx_dmabuf(struct rx *rx, size_t len)
{
	struct rx_region *r = &rx->reg[rx->nreg];
	int fd;

	fd = rx->mem == RX_UDMABUF ? rx_udmabuf(len) : rx_drm(rx, len);
	if (fd < 0)
		return 1;
	r->map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED)
		return rx_die("mmap of the dma-buf");
	r->addr = RX_DMABUF_BASE;
	r->len = len;
	r->dmabuf = fd;
	rx->nreg++;
	return rx_add_region(rx);
}

/*
 * The PCI device's published peer-to-peer memory: a shared mapping of its
 * sysfs p2pmem/allocate (offset 0), which the kernel fills with pages of
 * the device's BAR.  The tool never reads nor writes it.
 */
static int rx_p2pmem(struct rx *rx, size_t len)
{
	struct rx_region *r = &rx->reg[rx->nreg];
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate",
		 rx->p2p_dev);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return rx_die(path);
	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED)
		return rx_die("mmap of p2pmem/allocate");
	/* The mapping holds the memory. */
	close(fd);
	r->addr = (uintptr_t)r->map;
	r->len = len;
	r->dmabuf = -1;
	r->p2p = 1;
	rx->nreg++;
	return rx_add_region(rx);
}

/* Where the CPU reads [addr, addr + len), or NULL. */
static struct rx_region *rx_find(struct rx *rx, uint64_t addr, uint32_t len)
{
	int i;

	for (i = 0; i < rx->nreg; i++)
		if (addr >= rx->reg[i].addr &&
		    addr + len <= rx->reg[i].addr + rx->reg[i].len)
			return &rx->reg[i];
	return NULL;
}

/* ===== Rings ===== */

/*
 * Give @n addresses back with one store of the producer index, waiting
 * for room in the fill ring for all of them: never part of a batch, so
 * the hostile modes' entries for one buffer are published together.
 */
static int rx_fill(struct rx *rx, const uint64_t *addrs, unsigned int n)
{
	struct pollfd pfd = { .fd = netgpu_ifq_fd(rx->ifq), .events = POLLOUT };
	int room;

	while ((room = netgpu_fill_nb_free(rx->ifq)) < (int)n) {
		if (room < 0) {
			fprintf(stderr, "netgpu-rx: fill ring: %s\n",
				strerror(-room));
			return -1;
		}
		if (poll(&pfd, 1, rx->timeout * 1000) <= 0 ||
		    (pfd.revents & (POLLERR | POLLHUP))) {
			fprintf(stderr, "netgpu-rx: fill ring stuck (revents 0x%x)\n",
				pfd.revents);
			return -1;
		}
	}
	/* All @n: netgpu_fill_nb_free() said they fit. */
	room = netgpu_fill_submit(rx->ifq, addrs, n);
	if (room != (int)n) {
		fprintf(stderr, "netgpu-rx: fill ring: %s\n",
			room < 0 ? strerror(-room) : "submitted part of a batch");
		return -1;
	}
	return 0;
}

static int rx_give_back(struct rx *rx, uint64_t buf)
{
	uint64_t addrs[3] = { buf };

	switch (rx->hostile) {
	case RX_STARVE:
		/* Held until the kick, then given back as RX_NICE does. */
		if (rx->starved)
			break;
		__attribute__((fallthrough));
	case RX_HOLD:
		/* Kept, and remembered for rx_check_urefs(). */
		if (rx->nheld == rx->held_max) {
			size_t max = rx->held_max ? 2 * rx->held_max : 256;
			uint64_t *held = realloc(rx->held,
						 max * sizeof(*held));

			if (!held) {
				fprintf(stderr, "netgpu-rx: out of memory\n");
				return -1;
			}
			rx->held = held;
			rx->held_max = max;
		}
		rx->held[rx->nheld++] = buf;
		return 0;
	case RX_GARBAGE:
		/* Inside a buffer, and outside every region. */
		addrs[1] = buf + 8;
		addrs[2] = 0x1000;
		return rx_fill(rx, addrs, 3);
	case RX_DOUBLE:
		/*
		 * Twice, published before the buffer can come back to us:
		 * the kernel must take one entry and refuse the other.
		 */
		addrs[1] = buf;
		return rx_fill(rx, addrs, 2);
	case RX_NICE:
		break;
	}
	return rx_fill(rx, addrs, 1);
}

/* ===== Data ===== */

/* The routine nsim_tcp's receivers verify with (stream.h, bench-rx). */
static void rx_check(struct rx *rx, const unsigned char *p, size_t len)
{
	long long first_bad = rx->first_bad;

	if (!rx->verify)
		return;
	rx->mismatches += stream_verify(&rx->stream, p, len, rx->got,
					&first_bad);
	rx->first_bad = first_bad;
}

/* The stream past @len bytes that are not checked. */
static void rx_skip(struct rx *rx, size_t len)
{
	if (!rx->verify)
		return;
	while (len--)
		stream_next(&rx->stream);
}

static void rx_sync(struct rx_region *r, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags | DMA_BUF_SYNC_READ };

	if (r->dmabuf >= 0)
		ioctl(r->dmabuf, DMA_BUF_IOCTL_SYNC, &s);
}

static int rx_desc(struct rx *rx, const struct netgpu_rx_desc *d)
{
	struct rx_region *r = rx_find(rx, d->addr, d->len);

	if (!r) {
		fprintf(stderr, "netgpu-rx: descriptor 0x%llx+%u in no region\n",
			(unsigned long long)d->addr, d->len);
		return -1;
	}
	if (r->p2p) {
		/*
		 * Device memory: counted, not read.  The stream moves past
		 * its bytes, so that later recv() bytes are checked at their
		 * offsets.
		 */
		rx_skip(rx, d->len);
		rx->unread += d->len;
		rx->unread_descs++;
	} else {
		rx_check(rx, r->map + (d->addr - r->addr), d->len);
	}
	rx->got += d->len;
	rx->descs++;
	if (d->flags & NETGPU_RX_DESC_COPY) {
		rx->copied += d->len;
		rx->copies++;
	} else {
		rx->zc += d->len;
	}
	return rx_give_back(rx, d->addr & ~(uint64_t)(rx->page - 1));
}

/*
 * The descriptors the rx ring holds now (later ones wait for the next
 * call), each consumed once its buffer is given back.
 */
static int rx_drain(struct rx *rx)
{
	struct netgpu_rx_desc d[RX_BATCH];
	int avail, max, n, i, ret = 0;

	avail = netgpu_rx_nb_avail(rx->sq);
	if (avail < 0) {
		fprintf(stderr, "netgpu-rx: rx ring: %s\n", strerror(-avail));
		return -1;
	}
	if (!avail)
		return 0;
	/* CPU access to the dma-bufs once a batch: a sync may be costly. */
	for (i = 0; i < rx->nreg; i++)
		rx_sync(&rx->reg[i], DMA_BUF_SYNC_START);
	while (avail > 0 && !ret) {
		/* All @avail seen: no peek looks at the ring's index again. */
		max = avail < RX_BATCH ? avail : RX_BATCH;
		n = netgpu_rx_peek(rx->sq, d, max);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			ret = rx_desc(rx, &d[i]);
			if (ret)
				break;
			/* Can't fail: peeked. */
			netgpu_rx_release(rx->sq, 1);
		}
		avail -= n;
	}
	for (i = 0; i < rx->nreg; i++)
		rx_sync(&rx->reg[i], DMA_BUF_SYNC_END);
	return ret;
}

/*
 * Bytes in ordinary memory the kernel left in the socket.  EFAULT is
 * recv() meeting netgpu's unreadable frags at the head of the queue:
 * nothing to copy now, they come through RECV.  A kernel that refused
 * readable bytes this way would lose them: the stream ends short and
 * fails on its byte count.
 */
static int rx_recv(struct rx *rx)
{
	static unsigned char buf[65536];
	ssize_t n = recv(rx->sock, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EFAULT ? 0 : -1;
	rx_check(rx, buf, n);
	rx->got += n;
	rx->recvd += n;
	return 0;
}

/*
 * Take the memory away from netgpu mid-stream: the kernel stops the
 * queue (the NIC gets no more of its buffers), and what it already
 * received still comes as descriptors, the rest through recv().
 */
static int rx_remove(struct rx *rx)
{
	struct pollfd pfd = { .fd = netgpu_ifq_fd(rx->ifq) };
	double t0 = rx_now();
	int i, err;

	rx->removed = 1;
	for (i = 0; i < rx->nreg; i++) {
		err = netgpu_area_remove(rx->mem_fd, rx->reg[i].id);
		if (err)
			return rx_fail("NETGPU_MEM_IOCTL_REMOVE_REGION", err);
	}
	/* The queue is unbound by a work item: not at once. */
	if (poll(&pfd, 1, 10000) != 1 ||
	    !(pfd.revents & (POLLERR | POLLHUP))) {
		fprintf(stderr,
			"netgpu-rx: queue still bound 10 s after the regions went (revents 0x%x)\n",
			pfd.revents);
		return -1;
	}
	printf("netgpu-rx: removed the regions at %llu bytes; the queue stopped after %.3f s\n",
	       (unsigned long long)rx->got, rx_now() - t0);
	fflush(stdout);
	return 0;
}

/*
 * --hostile starve: once the queue is starved (POLLPRI, the ring's flag
 * up), kick it and give every held buffer back in one submit.  1 on a
 * failure.
 */
static int rx_starve(struct rx *rx)
{
	struct pollfd pfd = { .fd = netgpu_ifq_fd(rx->ifq), .events = POLLPRI };
	struct netgpu_ring_info ri;
	int err;

	if (rx->hostile != RX_STARVE || rx->starved || !rx->nheld ||
	    poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLPRI))
		return 0;
	err = netgpu_fill_info(rx->ifq, &ri);
	if (err)
		return rx_fail("netgpu_fill_info", err);
	/* Fed again between the two (the recycle ring): not starved yet. */
	if (!(ri.flags & NETGPU_RING_NEED_WAKEUP))
		return 0;
	printf("netgpu-rx: starved at %llu bytes, %zu buffers held: POLLPRI, flags 0x%x\n",
	       (unsigned long long)rx->got, rx->nheld, ri.flags);
	rx->starved = 1;
	/*
	 * The kick first, while the queue is starved, for its answer (a
	 * driver with no NAPI instance for the queue: EOPNOTSUPP); its poll
	 * finds nothing to refill with.  Then the buffers, whose submit
	 * kicks again (libnetgpu) and refills.
	 */
	err = ioctl(netgpu_ifq_fd(rx->ifq), NETGPU_IFQ_IOCTL_WAKEUP);
	if (err) {
		err = -errno;
		return rx_fail("NETGPU_IFQ_IOCTL_WAKEUP", err);
	}
	if (rx_fill(rx, rx->held, rx->nheld))
		return 1;
	printf("netgpu-rx: kicked (NETGPU_IFQ_IOCTL_WAKEUP: 0), %zu buffers given back\n",
	       rx->nheld);
	fflush(stdout);
	rx->nheld = 0;
	rx->starved = 2;
	rx->kicked_at = rx->got;
	rx->kick_time = rx_now();
	return 0;
}

/*
 * --hostile starve, at the end: fed again, the queue is not starved
 * (within 5 s: the last refill may still be on its way).
 */
static int rx_flag_down(struct rx *rx)
{
	struct netgpu_ring_info ri;
	int err, i;

	for (i = 0; i < 50; i++) {
		err = netgpu_fill_info(rx->ifq, &ri);
		if (err)
			return rx_fail("netgpu_fill_info", err);
		if (!(ri.flags & NETGPU_RING_NEED_WAKEUP))
			break;
		usleep(100000);
	}
	printf("netgpu-rx: after the stream: fill ring flags 0x%x\n", ri.flags);
	if (ri.flags & NETGPU_RING_NEED_WAKEUP) {
		fprintf(stderr, "netgpu-rx: NETGPU_RING_NEED_WAKEUP still up\n");
		return 1;
	}
	return 0;
}

/*
 * --hostile starve: the first bytes after the kick (informational: some
 * may have been in the socket before; that the stream goes on past the
 * memory held shows the refill).
 */
static void rx_resumed(struct rx *rx)
{
	if (rx->starved != 2 || rx->got == rx->kicked_at)
		return;
	rx->starved = 3;
	printf("netgpu-rx: data again %.3f s after the kick\n",
	       rx_now() - rx->kick_time);
	fflush(stdout);
}

/*
 * --revoked: note once when the queue stops without the tool removing
 * anything (the kernel revoked a region: its provider went).
 */
static void rx_watch_queue(struct rx *rx)
{
	struct pollfd pfd = { .fd = netgpu_ifq_fd(rx->ifq) };

	if (!rx->revoked || rx->stopped || poll(&pfd, 1, 0) != 1 ||
	    !(pfd.revents & (POLLERR | POLLHUP)))
		return;
	rx->stopped = 1;
	printf("netgpu-rx: the queue stopped at %llu bytes (revents 0x%x)\n",
	       (unsigned long long)rx->got, pfd.revents);
	fflush(stdout);
}

/*
 * --pause-at: the reader stops until the queue stops (the kernel revoked
 * its region), so that the revocation lands mid-stream by construction,
 * not by timing: unread, the stream fills the socket's receive buffer,
 * TCP's window closes and the sender waits with the rest, while the
 * queue's buffers stay posted.  The line printed is what a test waits
 * for before it takes the memory away.  1 if the queue did not stop
 * within --timeout s.
 */
static int rx_pause(struct rx *rx)
{
	/* No events asked: poll() reports POLLERR | POLLHUP only. */
	struct pollfd pfd = { .fd = netgpu_ifq_fd(rx->ifq) };
	double end = rx_now() + rx->timeout;
	int n;

	rx->paused = 1;
	printf("netgpu-rx: paused at %llu bytes\n", (unsigned long long)rx->got);
	fflush(stdout);
	while (!rx_stop && rx_now() < end) {
		/* The queue's state change wakes it (netgpu_ifq_poll()). */
		n = poll(&pfd, 1, 1000);
		if (n < 0 && errno != EINTR)
			return rx_die("poll");
		if (n > 0 && (pfd.revents & (POLLERR | POLLHUP)))
			break;
	}
	rx_watch_queue(rx);
	if (rx->stopped)
		return 0;
	fprintf(stderr, "netgpu-rx: paused at %llu bytes: the queue did not stop within %d s\n",
		(unsigned long long)rx->got, rx->timeout);
	return 1;
}

/*
 * --revoked, after the stream: the queue stopped, and each p2pmem region
 * is still in the area, revoked: ATTACH_REGION refuses it with ENODEV,
 * REMOVE_REGION takes it out.
 */
static int rx_check_revoked(struct rx *rx)
{
	int i, err, ret = 0;

	rx_watch_queue(rx);
	if (!rx->stopped) {
		fprintf(stderr, "netgpu-rx: the queue never stopped\n");
		ret = 1;
	}
	for (i = 0; i < rx->nreg; i++) {
		if (!rx->reg[i].p2p)
			continue;
		err = netgpu_ctx_attach_region(rx->ctx_fd, rx->mem_fd,
					       rx->reg[i].id);
		printf("netgpu-rx: region %d: ATTACH_REGION: %s\n",
		       rx->reg[i].id, err ? strerror(-err) : "attached");
		if (err != -ENODEV)
			ret = 1;
		err = netgpu_area_remove(rx->mem_fd, rx->reg[i].id);
		printf("netgpu-rx: region %d: REMOVE_REGION: %s\n",
		       rx->reg[i].id, err ? strerror(-err) : "removed");
		if (err)
			ret = 1;
	}
	fflush(stdout);
	return ret;
}

/* ===== Setup ===== */

static int rx_socket(struct rx *rx)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct pollfd pfd = { .events = POLLIN };
	int fd, one = 1, zero = 0;

	if (rx->connect) {
		/* Numeric addresses: a static binary has no resolver. */
		sin6.sin6_port = htons(atoi(rx->port));
		sin.sin_port = sin6.sin6_port;
		if (inet_pton(AF_INET6, rx->connect, &sin6.sin6_addr) == 1) {
			fd = socket(AF_INET6, SOCK_STREAM, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sin6,
					      sizeof(sin6)) < 0)
				return rx_die("connect"), -1;
		} else if (inet_pton(AF_INET, rx->connect, &sin.sin_addr) == 1) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sin,
					      sizeof(sin)) < 0)
				return rx_die("connect"), -1;
		} else {
			fprintf(stderr, "netgpu-rx: not an address: %s\n",
				rx->connect);
			return -1;
		}
		return fd;
	}
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	sin6.sin6_port = htons(atoi(rx->port));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) < 0 ||
	    listen(fd, 1) < 0)
		return rx_die("listen"), -1;
	if (!rx->quiet)
		printf("netgpu-rx: listening on port %s\n", rx->port);
	fflush(stdout);
	/* Bounded, like every wait of the tool. */
	pfd.fd = fd;
	if (poll(&pfd, 1, rx->timeout * 1000) != 1) {
		fprintf(stderr, "netgpu-rx: no connection within %d s\n",
			rx->timeout);
		return -1;
	}
	one = accept(fd, NULL, NULL);
	if (one < 0)
		return rx_die("accept"), -1;
	close(fd);
	return one;
}

/*
 * The fds and the rings stay open until the process exits: the kernel
 * tears them down then, in the same order whatever way the tool ended.
 */
static int rx_setup(struct rx *rx)
{
	size_t len = rx->pages ? rx->pages * rx->page : rx->mib << 20;
	unsigned int ifindex;
	uint32_t entries;
	int queue, err;

	rx->mem_fd = netgpu_area_open();
	rx->ctx_fd = netgpu_ctx_open();
	/* rx_die()'s errno as it was: that of the later open() to fail. */
	if (rx->ctx_fd < 0)
		return rx_fail("/dev/netgpu_mem, /dev/netgpu", rx->ctx_fd);
	if (rx->mem_fd < 0)
		return rx_fail("/dev/netgpu_mem, /dev/netgpu", rx->mem_fd);
	ifindex = if_nametoindex(rx->ifname);
	if (!ifindex)
		return rx_die(rx->ifname);
	err = netgpu_ctx_attach_dev(rx->ctx_fd, ifindex);
	if (err)
		return rx_fail("NETGPU_CTX_IOCTL_ATTACH_DEV", err);

	if (rx->mem == RX_HOST)
		err = rx_host(rx, len);
	else if (rx->mem == RX_P2PMEM)
		err = rx_p2pmem(rx, len);
	else
		err = rx_dmabuf(rx, len);
	if (!err && rx->mem != RX_HOST && rx->copy_mib)
		err = rx_host(rx, rx->copy_mib << 20);
	if (err)
		return err;

	/*
	 * Room for every buffer with the hostile modes' extra entries (up
	 * to three per buffer): returns never wait for the NIC.
	 */
	entries = 4 * ((len + (rx->copy_mib << 20)) / rx->page);
	if (entries > NETGPU_QUEUE_MAX_ENTRIES)
		entries = NETGPU_QUEUE_MAX_ENTRIES;
	/*
	 * The fill ring is mapped here too: a failed mmap() is reported
	 * under the ioctl's name (it was "mmap of the fill ring").
	 */
	queue = rx->queue < 0 ? NETGPU_LIB_QUEUE_ANY : rx->queue;
	err = netgpu_ifq_bind(rx->ctx_fd, queue, entries, &rx->ifq);
	if (err)
		return rx_fail("NETGPU_CTX_IOCTL_BIND_QUEUE", err);
	if (!rx->quiet)
		printf("netgpu-rx: bound %s rx queue %u, %zu KiB of %s\n",
		       rx->ifname, netgpu_ifq_queue_id(rx->ifq), len >> 10,
		       rx->mem == RX_HOST ? "host memory" :
		       rx->mem == RX_UDMABUF ? "udmabuf" :
		       rx->mem == RX_P2PMEM ? "p2pmem" : rx->drm_dev);
	fflush(stdout);

	rx->sock = rx_socket(rx);
	if (rx->sock < 0)
		return 1;
	/* Likewise the rx ring ("mmap of the rx ring"); no completion ring. */
	err = netgpu_sockq_attach(rx->ctx_fd, rx->sock, rx->rx_entries, 0,
				  &rx->sq);
	if (err)
		return rx_fail("NETGPU_CTX_IOCTL_ATTACH_SOCKET", err);
	return 0;
}

/* ===== The loop ===== */

static int rx_run(struct rx *rx)
{
	double last = rx_now();
	int stalled = 0;

	while (!rx_stop && (!rx->bytes || rx->got < rx->bytes)) {
		struct pollfd pfd = { .fd = netgpu_sockq_fd(rx->sq),
				      .events = POLLIN };
		uint64_t before = rx->got;
		struct netgpu_recv r;
		int err;

		/* On an error r is zeroed: no status. */
		err = netgpu_sockq_recv(rx->sq, NETGPU_RECV_NONBLOCK, &r);
		if (err && err != -EAGAIN && err != -EINTR)
			return rx_fail("NETGPU_SOCKQ_IOCTL_RECV", err);
		if (rx_drain(rx))
			return 1;
		if ((r.status & (NETGPU_RECV_READABLE |
				 NETGPU_RECV_NO_BUFFERS)) && rx_recv(rx))
			return rx_die("recv");
		if (rx->remove_at && !rx->removed && rx->got >= rx->remove_at &&
		    rx_remove(rx))
			return 1;
		if (rx->pause_at && !rx->paused && rx->got >= rx->pause_at) {
			if (rx_pause(rx))
				return 1;
			/* The pause is not a stall. */
			last = rx_now();
		}
		rx_watch_queue(rx);
		if (rx_starve(rx))
			return 1;
		rx_resumed(rx);
		if (r.status & NETGPU_RECV_EOF) {
			rx->eof = 1;
			break;
		}
		if (rx->got != before) {
			last = rx_now();
			continue;
		}
		if (rx_now() - last > rx->timeout) {
			stalled = 1;
			break;
		}
		/* Nothing moved: wait for data (or room, after a stall). */
		poll(&pfd, 1, r.status & NETGPU_RECV_NO_BUFFERS ? 10 : 1000);
	}
	if (stalled && rx->hostile != RX_HOLD) {
		fprintf(stderr, "netgpu-rx: no progress for %d s\n",
			rx->timeout);
		return 1;
	}
	if (stalled)
		printf("netgpu-rx: stalled as expected (buffers held)\n");
	return 0;
}

static void rx_report(struct rx *rx, double secs, double cpu)
{
	struct netgpu_stats st;
	uint64_t rejected;

	/* Informational: an error reads as zeroes (rx_check_urefs() fails). */
	netgpu_get_stats(netgpu_ifq_fd(rx->ifq), &st);
	rejected = st.fill_bad_index + st.fill_unaligned + st.fill_no_region +
		   st.fill_never_given + st.fill_twice + st.fill_in_nic +
		   st.fill_in_stack;
	netgpu_get_stats(netgpu_sockq_fd(rx->sq), &st);
	if (rx->mem == RX_P2PMEM)
		printf("netgpu-rx: p2pmem of %s: %llu bytes in %llu descriptors, unread by the CPU\n",
		       rx->p2p_dev, (unsigned long long)rx->unread,
		       (unsigned long long)rx->unread_descs);
	printf("netgpu-rx: bytes=%llu mismatches=%llu first_bad=%lld",
	       (unsigned long long)rx->got,
	       (unsigned long long)rx->mismatches, (long long)rx->first_bad);
	printf(" zc=%llu copied=%llu copies=%llu recv=%llu descs=%llu",
	       (unsigned long long)rx->zc, (unsigned long long)rx->copied,
	       (unsigned long long)rx->copies, (unsigned long long)rx->recvd,
	       (unsigned long long)rx->descs);
	printf(" secs=%.3f cpu=%.3f MBps=%.1f cpu_s_per_gib=%.3f", secs, cpu,
	       secs > 0 ? rx->got / secs / 1e6 : 0.0,
	       rx->got ? cpu / (rx->got / (double)(1ULL << 30)) : 0.0);
	printf(" fill_rejected=%llu refused=%llu\n",
	       (unsigned long long)rejected,
	       (unsigned long long)st.rx_refused);
}

/*
 * Under the fault-injection task filter from here on: the registration,
 * the bind and the socket path (the torture campaigns' "receivers").
 */
static int rx_make_it_fail(void)
{
	int fd = open("/proc/self/make-it-fail", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, "1", 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

static int rx_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * At the end of a stream: the tool gave every buffer back as soon as it
 * read it, or, with --hostile hold, kept it (rx->held), so the buffers
 * the kernel counts as user space's (bufs_user) can only be those it
 * holds and those of entries still waiting in the fill ring.  More is a
 * reference the kernel took for a descriptor user space never got: a
 * buffer lost until the queue is closed (the torture campaigns'
 * per-stream invariant, fault/README.md).  Every mode runs it, after a
 * removal too (the queue unbound, what was given back since waits in
 * its fill ring), and after an unplug: the queue lives while its fd is
 * open, and GET_STATS is the one call not refused with ENODEV once the
 * device went (Documentation/networking/netgpu.rst, Lifetimes; the
 * interface queue's GET_STATS fails only for a bad size or address).
 * So a GET_STATS error, whatever its errno, fails the check.
 */
static int rx_check_urefs(struct rx *rx)
{
	struct netgpu_stats st;
	unsigned int distinct = 0;
	int n, max, i, tries, err;
	uint64_t *pend;

	/*
	 * Nothing is submitted any more: the entries pending can only get
	 * fewer, max of them is room enough.  An impossible ring index
	 * (-EPROTO) is the kernel's bug: said, and the stream fails.
	 */
	max = netgpu_fill_pending(rx->ifq, NULL, 0);
	if (max < 0) {
		fprintf(stderr, "netgpu-rx: fill ring: %s\n", strerror(-max));
		return 1;
	}
	pend = calloc(max + rx->nheld + 1, sizeof(*pend));
	if (!pend) {
		fprintf(stderr, "netgpu-rx: out of memory\n");
		return 1;
	}
	/* The stats of the moment the entries were pending: a stable ->cons. */
	for (tries = 0; tries < 10; tries++) {
		n = netgpu_fill_pending(rx->ifq, pend, max);
		if (n < 0) {
			fprintf(stderr, "netgpu-rx: fill ring: %s\n",
				strerror(-n));
			free(pend);
			return 1;
		}
		/* Its device gone too, the queue reads its counters. */
		err = netgpu_get_stats(netgpu_ifq_fd(rx->ifq), &st);
		if (err < 0) {
			fprintf(stderr, "netgpu-rx: GET_STATS of the queue: %s\n",
				strerror(-err));
			free(pend);
			return 1;
		}
		if (netgpu_fill_pending(rx->ifq, NULL, 0) == n)
			break;
	}
	memcpy(pend + n, rx->held, rx->nheld * sizeof(*pend));
	n += rx->nheld;
	for (i = 0; i < n; i++)
		pend[i] &= ~(uint64_t)(rx->page - 1);
	qsort(pend, n, sizeof(*pend), rx_cmp_u64);
	for (i = 0; i < n; i++)
		distinct += !i || pend[i] != pend[i - 1];
	free(pend);
	if (st.bufs_user <= distinct)
		return 0;
	printf("netgpu-rx: user references: the kernel holds %llu buffers for user space, which holds %zu and has %u in the fill ring (%u distinct)\n",
	       (unsigned long long)st.bufs_user, rx->nheld,
	       n - (unsigned int)rx->nheld, distinct);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ifname", 1, NULL, 'i' }, { "queue", 1, NULL, 'q' },
		{ "listen", 1, NULL, 'l' }, { "connect", 1, NULL, 'c' },
		{ "port", 1, NULL, 'p' }, { "memory", 1, NULL, 'm' },
		{ "size", 1, NULL, 's' }, { "bytes", 1, NULL, 'n' },
		{ "verify", 1, NULL, 'v' }, { "rx-entries", 1, NULL, 'r' },
		{ "timeout", 1, NULL, 't' }, { "help", 0, NULL, 'h' },
		{ "copy-mib", 1, NULL, 'C' }, { "drm-dev", 1, NULL, 'D' },
		{ "hostile", 1, NULL, 'H' }, { "quiet", 0, NULL, 'Q' },
		{ "remove-region", 1, NULL, 'R' },
		{ "make-it-fail", 0, NULL, 'F' }, { "pages", 1, NULL, 'P' },
		{ "p2pmem-dev", 1, NULL, 'B' }, { "p2pmem-plain", 0, NULL, 'U' },
		{ "revoked", 0, NULL, 'K' }, { "pause-at", 1, NULL, 'Z' },
		{}
	};
	struct rx rx = {
		.queue = -1, .mib = 64, .rx_entries = 4096, .timeout = 30,
		.drm_dev = "/dev/dri/card0", .first_bad = -1,
		.mem_fd = -1, .ctx_fd = -1,
	};
	int c, ret, p2p, make_it_fail = 0;
	void *volatile heap;
	double t0, c0;

	while ((c = getopt_long(argc, argv, "i:q:l:c:p:m:s:n:v:r:t:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'i':
			rx.ifname = optarg;
			break;
		case 'q':
			rx.queue = atoi(optarg);
			break;
		case 'l':
			rx.port = optarg;
			break;
		case 'c':
			rx.connect = optarg;
			break;
		case 'p':
			rx.port = optarg;
			break;
		case 's':
			rx.mib = strtoull(optarg, NULL, 0);
			break;
		case 'C':
			rx.copy_mib = strtoull(optarg, NULL, 0);
			break;
		case 'P':
			rx.pages = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			rx.drm_dev = optarg;
			break;
		case 'B':
			rx.p2p_dev = optarg;
			break;
		case 'U':
			rx.p2p_plain = 1;
			break;
		case 'K':
			rx.revoked = 1;
			break;
		case 'Z':
			rx.pause_at = strtoull(optarg, NULL, 0);
			if (!rx.pause_at)
				return rx_help(stderr), 2;
			break;
		case 'n':
			rx.bytes = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			rx.verify = 1;
			rx.seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rx.rx_entries = strtoul(optarg, NULL, 0);
			break;
		case 't':
			rx.timeout = atoi(optarg);
			break;
		case 'Q':
			rx.quiet = 1;
			break;
		case 'R':
			rx.remove_at = strtoull(optarg, NULL, 0);
			break;
		case 'F':
			make_it_fail = 1;
			break;
		case 'm':
			if (!strcmp(optarg, "host"))
				rx.mem = RX_HOST;
			else if (!strcmp(optarg, "udmabuf"))
				rx.mem = RX_UDMABUF;
			else if (!strcmp(optarg, "drm"))
				rx.mem = RX_DRM;
			else if (!strcmp(optarg, "p2pmem"))
				rx.mem = RX_P2PMEM;
			else
				return rx_help(stderr), 2;
			break;
		case 'H':
			if (!strcmp(optarg, "hold"))
				rx.hostile = RX_HOLD;
			else if (!strcmp(optarg, "garbage"))
				rx.hostile = RX_GARBAGE;
			else if (!strcmp(optarg, "double"))
				rx.hostile = RX_DOUBLE;
			else if (!strcmp(optarg, "starve"))
				rx.hostile = RX_STARVE;
			else
				return rx_help(stderr), 2;
			break;
		case 'h':
			rx_help(stdout);
			return 0;
		default:
			rx_help(stderr);
			return 2;
		}
	}
	p2p = rx.mem == RX_P2PMEM;
	if (!rx.ifname || !rx.port || !rx.mib || optind != argc ||
	    p2p != !!rx.p2p_dev || (rx.p2p_plain && !p2p) ||
	    (rx.revoked && (!p2p || rx.remove_at)) ||
	    (rx.pause_at && !rx.revoked)) {
		rx_help(stderr);
		return 2;
	}
	rx.page = sysconf(_SC_PAGESIZE);
	stream_init(&rx.stream, rx.seed);
	signal(SIGINT, rx_on_signal);
	signal(SIGTERM, rx_on_signal);
	signal(SIGPIPE, SIG_IGN);

	/*
	 * The heap grown before the filter: the library's small allocations
	 * at bind and attach then make no syscall, so an injected ENOMEM
	 * is always the kernel's netgpu path refusing, not brk's.
	 */
	heap = malloc(1 << 16);	/* volatile: not elided with its free() */
	free(heap);
	if (make_it_fail && rx_make_it_fail())
		return rx_die("/proc/self/make-it-fail");
	ret = rx_setup(&rx);
	if (ret)
		return ret;
	t0 = rx_now();
	c0 = rx_cpu();
	ret = rx_run(&rx);
	rx_report(&rx, rx_now() - t0, rx_cpu() - c0);
	/*
	 * A stream that did not end (a stall, a device gone): reset it.  A
	 * graceful close would leave an orphaned socket retransmitting its
	 * FIN, holding the segments it queued out of order (netgpu buffers,
	 * and with them the page_pool and the pinned memory) until TCP gives
	 * up on it.
	 */
	if (!rx.eof) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(rx.sock, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	if (rx.mismatches || (rx.bytes && rx.got != rx.bytes &&
			      rx.hostile != RX_HOLD))
		ret = 1;
	/* A starve run that never starved, or never resumed, showed nothing. */
	if (rx.hostile == RX_STARVE && rx.starved != 3) {
		fprintf(stderr, "netgpu-rx: --hostile starve: the queue %s\n",
			rx.starved ? "never resumed after the kick" :
				     "never starved");
		ret = 1;
	}
	if (rx.hostile == RX_STARVE && rx_flag_down(&rx))
		ret = 1;
	/*
	 * After a revocation too: the contexts' revoke work unbound the
	 * queue as it does after --remove-region, its file stays open, so
	 * GET_STATS still counts it and the buffers given back since wait
	 * in its fill ring.
	 */
	if (!ret && rx_check_urefs(&rx))
		ret = 1;
	if (rx.revoked && rx_check_revoked(&rx))
		ret = 1;
	return ret;
}
