// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnetgpu: /dev/netgpu_mem, /dev/netgpu and their queues' rings from
 * user space.  The ABI is include/uapi/linux/netgpu.h; the ring protocol
 * is the one kunit/litmus/netgpu-ring.litmus proves (see "Memory
 * ordering" below).
 */
/*
 * The rx ring's offset (NETGPU_OFF_RX_RING, 2 GiB) is negative as a
 * 32-bit off_t: a 32-bit build must map it with a 64-bit one.
 */
#define _FILE_OFFSET_BITS 64
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "netgpu_priv.h"

static_assert(sizeof(struct netgpu_ring) == 3 * NETGPU_RING_ALIGN,
	      "ring header layout");
static_assert(sizeof(struct netgpu_rx_desc) == 16, "rx descriptor layout");
static_assert(sizeof(off_t) == 8, "64-bit mmap offsets");

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Descriptors netgpu_rx_loop() takes from the rx ring at a time */
#define NETGPU_LIB_RX_BATCH	64
/* Bytes netgpu_rx_loop() reads with one recv() */
#define NETGPU_LIB_RECV_BUF	16384
/* netgpu_rx_loop()'s wait while the host regions have no free buffer */
#define NETGPU_LIB_NO_BUFFERS_MS	10

static int netgpu_sys_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg);
}

struct netgpu__sys netgpu__sys = {
	.ioctl	= netgpu_sys_ioctl,
	.poll	= poll,
};

/* An ioctl, as 0 (or the fd or id it returned) or -errno. */
static int netgpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = netgpu__sys.ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

static int netgpu_open_dev(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static uint64_t netgpu_page_size(void)
{
	long sz = sysconf(_SC_PAGESIZE);

	return sz > 0 ? (uint64_t)sz : 4096;
}

/* ===== Memory areas ===== */

/**
 * netgpu_area_open() - open a memory area
 *
 * Each open of /dev/netgpu_mem is one area; closing the fd removes its
 * regions.
 *
 * Return: the area's fd (O_CLOEXEC), or -errno of open().
 */
int netgpu_area_open(void)
{
	return netgpu_open_dev("/dev/netgpu_mem");
}

/**
 * netgpu_area_add_host() - add a region of host memory to an area
 * @area_fd: the area
 * @addr: page-aligned start of the memory, in this process
 * @len: bytes, a nonzero multiple of the page size
 *
 * The memory is pinned and charged to RLIMIT_MEMLOCK (unless the area's
 * opener had CAP_IPC_LOCK).  Its addresses are the region's addresses.
 *
 * Return: the region id (> 0), or -errno: -EBADF for a negative fd,
 * -EINVAL for a misaligned or empty range (checked here first), or the
 * kernel's error (-ENOMEM past RLIMIT_MEMLOCK, -EFAULT, ...).
 */
int netgpu_area_add_host(int area_fd, void *addr, size_t len)
{
	uint64_t page = netgpu_page_size();
	struct netgpu_add_region ar;

	if (area_fd < 0)
		return -EBADF;
	if (!addr || !len || ((uintptr_t)addr | len) & (page - 1))
		return -EINVAL;
	memset(&ar, 0, sizeof(ar));
	ar.type = NETGPU_REGION_HOST;
	ar.addr = (uintptr_t)addr;
	ar.len = len;
	return netgpu_ioctl(area_fd, NETGPU_MEM_IOCTL_ADD_REGION, &ar);
}

/**
 * netgpu_area_add_dmabuf() - add a dma-buf region to an area
 * @area_fd: the area
 * @dmabuf_fd: the buffer's fd; the region holds the buffer
 * @addr: page-aligned address that names the buffer's first byte in
 *	ring entries (any value the caller likes, not overlapping other
 *	regions of the same context)
 * @len: 0 or the buffer's size
 *
 * Return: the region id (> 0), or -errno: -EBADF for a negative fd,
 * -EINVAL for a misaligned @addr (checked here first), or the kernel's
 * error.
 */
int netgpu_area_add_dmabuf(int area_fd, int dmabuf_fd, uint64_t addr,
			   uint64_t len)
{
	struct netgpu_add_region ar;

	if (area_fd < 0 || dmabuf_fd < 0)
		return -EBADF;
	if (addr & (netgpu_page_size() - 1))
		return -EINVAL;
	memset(&ar, 0, sizeof(ar));
	ar.type = NETGPU_REGION_DMABUF;
	ar.addr = addr;
	ar.len = len;
	ar.dmabuf_fd = dmabuf_fd;
	return netgpu_ioctl(area_fd, NETGPU_MEM_IOCTL_ADD_REGION, &ar);
}

/**
 * netgpu_area_remove() - remove (revoke) a region of an area
 * @area_fd: the area
 * @region_id: what netgpu_area_add_host() or _add_dmabuf() returned
 *
 * The region leaves every context; an interface queue using it stops
 * (poll() on its fd reports POLLERR | POLLHUP shortly after).
 *
 * Return: 0, or -errno: -EBADF, -EINVAL for id 0, -ENOENT for no such
 * region.
 */
int netgpu_area_remove(int area_fd, uint32_t region_id)
{
	struct netgpu_remove_region rr;

	if (area_fd < 0)
		return -EBADF;
	if (!region_id)
		return -EINVAL;
	memset(&rr, 0, sizeof(rr));
	rr.region_id = region_id;
	return netgpu_ioctl(area_fd, NETGPU_MEM_IOCTL_REMOVE_REGION, &rr);
}

/* ===== Contexts ===== */

/**
 * netgpu_ctx_open() - open a context
 *
 * Return: the context's fd (O_CLOEXEC), or -errno of open().
 */
int netgpu_ctx_open(void)
{
	return netgpu_open_dev("/dev/netgpu");
}

/**
 * netgpu_ctx_attach_dev() - attach a network device to a context
 * @ctx_fd: the context
 * @ifindex: the device, in the caller's network namespace
 *
 * Return: 0, or -errno: -EBADF, -ENODEV for an ifindex <= 0 (here) or no
 * such device, -EPERM without CAP_NET_ADMIN, -EBUSY with a device
 * attached already, -EOPNOTSUPP.
 */
int netgpu_ctx_attach_dev(int ctx_fd, int ifindex)
{
	struct netgpu_attach_dev ad;

	if (ctx_fd < 0)
		return -EBADF;
	if (ifindex <= 0)
		return -ENODEV;
	memset(&ad, 0, sizeof(ad));
	ad.ifindex = ifindex;
	return netgpu_ioctl(ctx_fd, NETGPU_CTX_IOCTL_ATTACH_DEV, &ad);
}

static int netgpu_ctx_region(int ctx_fd, int area_fd, uint32_t region_id,
			     unsigned long cmd)
{
	struct netgpu_attach_region at;

	if (ctx_fd < 0 || area_fd < 0)
		return -EBADF;
	if (!region_id)
		return -EINVAL;
	memset(&at, 0, sizeof(at));
	at.mem_fd = area_fd;
	at.region_id = region_id;
	return netgpu_ioctl(ctx_fd, cmd, &at);
}

/**
 * netgpu_ctx_attach_region() - attach a region of an area to a context
 * @ctx_fd: the context, with a device attached
 * @area_fd: the area holding the region
 * @region_id: the region
 *
 * Return: 0, or -errno: -EBADF, -EINVAL for id 0 or an @area_fd that is
 * no area, -ENOENT, -ENODEV without a device, -EEXIST for an overlap.
 */
int netgpu_ctx_attach_region(int ctx_fd, int area_fd, uint32_t region_id)
{
	return netgpu_ctx_region(ctx_fd, area_fd, region_id,
				 NETGPU_CTX_IOCTL_ATTACH_REGION);
}

/**
 * netgpu_ctx_detach_region() - detach a region from a context
 * @ctx_fd: the context
 * @area_fd: the area holding the region
 * @region_id: the region
 *
 * Return: 0, or -errno: as netgpu_ctx_attach_region(), and -EBUSY while
 * a queue of the context holds the region.
 */
int netgpu_ctx_detach_region(int ctx_fd, int area_fd, uint32_t region_id)
{
	return netgpu_ctx_region(ctx_fd, area_fd, region_id,
				 NETGPU_CTX_IOCTL_DETACH_REGION);
}

/* ===== Rings ===== */

/*
 * Memory ordering.  User space's end of the protocol of the kernel's
 * lib/netgpu/queue.h, proven by kunit/litmus/netgpu-ring.litmus:
 *
 *   producer                         consumer
 *
 *   if (LOAD ->cons) {      (A)      LOAD.acq ->prod      (C)
 *      STORE $entries                LOAD $entries
 *      STORE.rel ->prod     (B)      STORE.rel ->cons     (D)
 *   }
 *
 *   (A) pairs with (D), and (B) pairs with (C).
 *
 * User space produces the fill ring (the kernel consumes it) and
 * consumes the rx and completion rings (the kernel produces them).
 * (A) is a load-acquire here: C11 has no control-dependency ordering,
 * so the acquire (stronger than the test's READ_ONCE()) is what keeps
 * the slot stores after the load of ->cons that freed the slots.  The
 * slots are accessed with relaxed atomics, the litmus test's
 * READ_ONCE()/WRITE_ONCE() (kunit/litmus/slot-stores): never a plain
 * access, a struct copy or memcpy().  Every site names its letter;
 * tests/weaken checks that weakening any one of them is caught.
 *
 * Each end works on its cached copy of the peer's index, refreshed only
 * when it says there is too little room (producer) or too few entries
 * (consumer), or when that index is what the caller asks for
 * (netgpu_fill_pending()), and never reads its own index back from the
 * header.  An
 * index the kernel could not have written (behind one already seen, or
 * more than a ring ahead) is -EPROTO, and the cached copy stays.
 */

/**
 * netgpu__ring_init() - set up one end of a ring mapped at @map
 * @r: the end
 * @map: the ring's header, the entries follow it
 * @map_size: bytes mapped (0: the caller unmaps, as the tests do)
 * @entries: entry count, a power of two, at most NETGPU_QUEUE_MAX_ENTRIES
 * @entry_size: bytes per entry
 * @producer: nonzero for the producer's end
 *
 * A producer starts knowing no free slot, so that its first submit
 * refreshes ->cons with (A); a consumer starts knowing no entry.
 *
 * Return: 0, or -EPROTO for a geometry the ABI rules out.
 */
int netgpu__ring_init(struct netgpu_ring_map *r, void *map, size_t map_size,
		      uint32_t entries, uint32_t entry_size, int producer)
{
	struct netgpu_ring *hdr = map;

	if (!entries || entries > NETGPU_QUEUE_MAX_ENTRIES ||
	    (entries & (entries - 1)))
		return -EPROTO;
	/* Can't overflow: entries <= 2^20, entry_size is 8 or 16. */
	if (map_size && map_size < sizeof(*hdr) + (size_t)entries * entry_size)
		return -EPROTO;
	r->hdr = hdr;
	r->slots = hdr + 1;
	r->map_size = map_size;
	r->map_offset = 0;
	r->entries = entries;
	r->mask = entries - 1;
	r->entry_size = entry_size;
	/* Our own index: the kernel left it where the ring starts. */
	if (producer) {
		r->cached_prod = __atomic_load_n(&hdr->prod, __ATOMIC_RELAXED);
		r->cached_cons = r->cached_prod - entries;
	} else {
		r->cached_cons = __atomic_load_n(&hdr->cons, __ATOMIC_RELAXED);
		r->cached_prod = r->cached_cons;
	}
	return 0;
}

/*
 * The producer's refresh of the cached ->cons, the one load (A) of both
 * netgpu_ring_prod_nb_free() and netgpu_fill_pending().  0, or -EPROTO
 * (the cached copy stays).
 */
static int netgpu_ring_prod_refresh(struct netgpu_ring_map *r)
{
	uint32_t cons;

	cons = __atomic_load_n(&r->hdr->cons, __ATOMIC_ACQUIRE); /* A, matches D */
	/* Between the last ->cons accepted and the last ->prod stored. */
	if (cons - r->cached_cons > r->cached_prod - r->cached_cons)
		return -EPROTO;
	r->cached_cons = cons;
	return 0;
}

/* Up to @n free slots: from the cached ->cons unless that is short. */
static int netgpu_ring_prod_nb_free(struct netgpu_ring_map *r, uint32_t n)
{
	uint32_t free = r->entries - (r->cached_prod - r->cached_cons);
	int err;

	if (free >= n)
		return n;
	err = netgpu_ring_prod_refresh(r);
	if (err)
		return err;
	free = r->entries - (r->cached_prod - r->cached_cons);
	return free < n ? free : n;
}

/* Publish the slots filled since the last submit. */
static void netgpu_ring_prod_submit(struct netgpu_ring_map *r)
{
	__atomic_store_n(&r->hdr->prod, r->cached_prod, __ATOMIC_RELEASE); /* B, matches C */
}

/* Up to @max entries: from the cached ->prod unless that is short. */
static int netgpu_ring_cons_nb_avail(struct netgpu_ring_map *r, uint32_t max)
{
	uint32_t avail = r->cached_prod - r->cached_cons;
	uint32_t prod;

	if (avail < max) {
		prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE); /* C, matches B */
		/* Not behind what we saw, not more than a ring ahead. */
		if (prod - r->cached_cons < avail ||
		    prod - r->cached_cons > r->entries)
			return -EPROTO;
		r->cached_prod = prod;
		avail = prod - r->cached_cons;
	}
	return avail < max ? avail : max;
}

/* Hand @n peeked entries back to the producer. */
static int netgpu_ring_cons_release(struct netgpu_ring_map *r, uint32_t n)
{
	if (n > r->cached_prod - r->cached_cons)
		return -EINVAL;
	if (!n)
		return 0;
	r->cached_cons += n;
	__atomic_store_n(&r->hdr->cons, r->cached_cons, __ATOMIC_RELEASE); /* D, matches A */
	return 0;
}

/*
 * Copy @n entries out, from the next one to peek; @n is what
 * netgpu_ring_cons_nb_avail() returned, loaded after its (C).  The
 * relaxed loads are the litmus test's READ_ONCE() of the slots.
 */
static void netgpu_ring_cons_copy(const struct netgpu_ring_map *r, void *out,
				  uint32_t n)
{
	uint32_t i, idx;

	for (i = 0; i < n; i++) {
		idx = (r->cached_cons + i) & r->mask;
		if (r->entry_size == sizeof(uint64_t)) {
			const uint64_t *s = r->slots;

			((uint64_t *)out)[i] =
				__atomic_load_n(&s[idx], __ATOMIC_RELAXED);
		} else {
			const struct netgpu_rx_desc *s = r->slots;
			struct netgpu_rx_desc *d = out;

			d[i].addr = __atomic_load_n(&s[idx].addr,
						    __ATOMIC_RELAXED);
			d[i].len = __atomic_load_n(&s[idx].len,
						   __ATOMIC_RELAXED);
			d[i].flags = __atomic_load_n(&s[idx].flags,
						     __ATOMIC_RELAXED);
		}
	}
}

/* ===== The fill ring: user space produces ===== */

/**
 * netgpu_fill_nb_free() - free slots of the fill ring
 * @ifq: the interface queue
 *
 * Return: the number of entries netgpu_fill_submit() could take now, or
 * -EINVAL for a NULL @ifq, -EPROTO for an impossible ->cons.
 */
int netgpu_fill_nb_free(struct netgpu_ifq *ifq)
{
	if (!ifq)
		return -EINVAL;
	return netgpu_ring_prod_nb_free(&ifq->fill, ifq->fill.entries);
}

/**
 * netgpu_fill_submit() - give buffers back on the fill ring
 * @ifq: the interface queue the buffers came from
 * @addrs: buffer addresses (the start of each buffer: a descriptor's
 *	address rounded down to the page size)
 * @n: number of addresses
 *
 * Copies as many addresses as there are free slots and publishes them
 * with one store of ->prod.  Each address gives back one reference: one
 * per rx descriptor that named the buffer.  Then, after a full barrier,
 * reads the ring's flags: a queue that ran dry (NETGPU_RING_NEED_WAKEUP)
 * is kicked with NETGPU_IFQ_IOCTL_WAKEUP, so that its driver refills
 * now rather than at its next interrupt (kunit/litmus/netgpu-wakeup.litmus:
 * with the kernel's barrier, either this load sees the flag or the
 * kernel's refill sees the entries).  The kick's own errors are not the
 * submit's: the entries are published; a driver without a NAPI instance
 * for the queue (-EOPNOTSUPP) refills at its next interrupt, and a queue
 * that stopped says so in every other call.
 *
 * Return: the number submitted (0 when the ring is full), or -EINVAL for
 * a NULL @ifq (or NULL @addrs with @n), -EPROTO for an impossible ->cons.
 */
int netgpu_fill_submit(struct netgpu_ifq *ifq, const uint64_t *addrs,
		       uint32_t n)
{
	struct netgpu_ring_map *r;
	uint64_t *slots;
	int nb, i;

	if (!ifq || (n && !addrs))
		return -EINVAL;
	r = &ifq->fill;
	nb = netgpu_ring_prod_nb_free(r, n);
	if (nb <= 0)
		return nb;
	/*
	 * The litmus test's WRITE_ONCE() of the slots, after the load of
	 * ->cons (A) that said they are free and before the release (B).
	 */
	slots = r->slots;
	for (i = 0; i < nb; i++)
		__atomic_store_n(&slots[(r->cached_prod + i) & r->mask],
				 addrs[i], __ATOMIC_RELAXED);
	r->cached_prod += nb;
	netgpu_ring_prod_submit(r);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* E, matches the kernel's (E) */
	if (__atomic_load_n(&r->hdr->flags, __ATOMIC_RELAXED) &
	    NETGPU_RING_NEED_WAKEUP) {
		int saved = errno;

		netgpu__sys.ioctl(ifq->fd, NETGPU_IFQ_IOCTL_WAKEUP, NULL);
		errno = saved;
	}
	return nb;
}

/**
 * netgpu_fill_pending() - fill ring entries the kernel has not taken yet
 * @ifq: the interface queue
 * @addrs: room for @max addresses (may be NULL with @max 0)
 * @max: most addresses to copy
 *
 * Loads the kernel's consumer index, as netgpu_fill_submit() does when
 * short of room (ordering A: what the kernel did with the entries it
 * consumed happens before what the caller does next, a
 * netgpu_get_stats() for one), and copies the addresses of the oldest
 * min(pending, @max) entries submitted and not yet consumed, oldest
 * first.  The kernel only reads the slots and nothing rewrites them
 * before the next submit, so these are the addresses as submitted.  A
 * snapshot: the kernel may consume more at any time, so until the next
 * submit the count can only go down.  For a caller that must know which
 * buffers are still on their way back to the kernel, e.g. to check the
 * kernel's count of the buffers user space holds (bufs_user of
 * netgpu_get_stats()).
 *
 * Return: the number of entries pending -- all of them, which may be
 * more than @max -- or -EINVAL for a NULL @ifq (or NULL @addrs with
 * @max), -EPROTO for an impossible ->cons (nothing copied).
 */
int netgpu_fill_pending(struct netgpu_ifq *ifq, uint64_t *addrs,
			uint32_t max)
{
	struct netgpu_ring_map *r;
	const uint64_t *slots;
	uint32_t n, i, idx;
	int err;

	if (!ifq || (max && !addrs))
		return -EINVAL;
	r = &ifq->fill;
	err = netgpu_ring_prod_refresh(r);
	if (err)
		return err;
	n = r->cached_prod - r->cached_cons;
	/*
	 * Our own stores read back: program order is enough, and the
	 * kernel's loads of these slots race with nothing.  Relaxed all the
	 * same, as every slot access (tests/weaken: no plain one).
	 */
	slots = r->slots;
	for (i = 0; i < n && i < max; i++) {
		idx = (r->cached_cons + i) & r->mask;
		addrs[i] = __atomic_load_n(&slots[idx], __ATOMIC_RELAXED);
	}
	return n;
}

/* poll() @fd for @events up to @timeout_ms: 0 when ready, or -errno. */
static int netgpu_wait(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	ret = netgpu__sys.poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (!ret)
		return -ETIMEDOUT;
	if (!(pfd.revents & events) && (pfd.revents & (POLLERR | POLLHUP)))
		return -ENODEV;
	return 0;
}

/**
 * netgpu_fill_submit_all() - give buffers back, waiting for room
 * @ifq: the interface queue
 * @addrs: buffer addresses
 * @n: number of addresses
 * @timeout_ms: longest wait for room (poll() for POLLOUT), in ms; < 0:
 *	no limit
 *
 * Return: 0 once all @n are submitted, or -errno: as netgpu_fill_submit(),
 * -ETIMEDOUT, -ENODEV when the queue stopped (POLLERR | POLLHUP: device
 * gone, region removed), or poll()'s error.  On error some of the
 * addresses may have been submitted.
 */
int netgpu_fill_submit_all(struct netgpu_ifq *ifq, const uint64_t *addrs,
			   uint32_t n, int timeout_ms)
{
	uint32_t done = 0;
	int ret;

	if (!ifq || (n && !addrs))
		return -EINVAL;
	for (;;) {
		ret = netgpu_fill_submit(ifq, addrs + done, n - done);
		if (ret < 0)
			return ret;
		done += ret;
		if (done == n)
			return 0;
		ret = netgpu_wait(ifq->fd, POLLOUT, timeout_ms);
		if (ret)
			return ret;
	}
}

/* ===== The rx and completion rings: user space consumes ===== */

/**
 * netgpu_rx_nb_avail() - descriptors waiting in the rx ring
 * @sq: the socket queue
 *
 * Return: the number netgpu_rx_peek() would return now, or -EINVAL for
 * a NULL @sq, -EPROTO for an impossible ->prod.
 */
int netgpu_rx_nb_avail(struct netgpu_sockq *sq)
{
	if (!sq)
		return -EINVAL;
	return netgpu_ring_cons_nb_avail(&sq->rx, sq->rx.entries);
}

/**
 * netgpu_rx_peek() - copy descriptors out of the rx ring
 * @sq: the socket queue
 * @descs: room for @max descriptors
 * @max: most descriptors to copy
 *
 * Copies the next descriptors, in stream order, without consuming them:
 * a second peek copies the same ones until netgpu_rx_release().
 *
 * Return: the number copied (0: none waiting), or -EINVAL for NULL
 * arguments, -EPROTO for an impossible ->prod.
 */
int netgpu_rx_peek(struct netgpu_sockq *sq, struct netgpu_rx_desc *descs,
		   uint32_t max)
{
	int n;

	if (!sq || (max && !descs))
		return -EINVAL;
	n = netgpu_ring_cons_nb_avail(&sq->rx, max);
	if (n > 0)
		netgpu_ring_cons_copy(&sq->rx, descs, n);
	return n;
}

/**
 * netgpu_rx_release() - consume descriptors of the rx ring
 * @sq: the socket queue
 * @n: how many of the descriptors peeked (the oldest first)
 *
 * Hands the slots back to the kernel.  The buffers stay the caller's
 * until given back with netgpu_fill_submit().
 *
 * Return: 0, or -EINVAL for a NULL @sq or more than were peeked.
 */
int netgpu_rx_release(struct netgpu_sockq *sq, uint32_t n)
{
	if (!sq)
		return -EINVAL;
	return netgpu_ring_cons_release(&sq->rx, n);
}

/**
 * netgpu_cq_nb_avail() - completions waiting in the completion ring
 * @sq: the socket queue, attached with a completion ring
 *
 * Return: the number netgpu_cq_peek() would return now, or -EINVAL for a
 * NULL @sq or one without a completion ring, -EPROTO for an impossible
 * ->prod.
 */
int netgpu_cq_nb_avail(struct netgpu_sockq *sq)
{
	if (!sq || !sq->cq.entries)
		return -EINVAL;
	return netgpu_ring_cons_nb_avail(&sq->cq, sq->cq.entries);
}

/**
 * netgpu_cq_peek() - copy completions out of the completion ring
 * @sq: the socket queue
 * @user_data: room for @max entries: the user_data of completed sends
 * @max: most entries to copy
 *
 * Return: the number copied, or -errno as netgpu_cq_nb_avail() (and
 * -EINVAL for a NULL @user_data with @max).
 */
int netgpu_cq_peek(struct netgpu_sockq *sq, uint64_t *user_data,
		   uint32_t max)
{
	int n;

	if (!sq || !sq->cq.entries || (max && !user_data))
		return -EINVAL;
	n = netgpu_ring_cons_nb_avail(&sq->cq, max);
	if (n > 0)
		netgpu_ring_cons_copy(&sq->cq, user_data, n);
	return n;
}

/**
 * netgpu_cq_release() - consume completions
 * @sq: the socket queue
 * @n: how many of the entries peeked
 *
 * Return: 0, or -EINVAL (no completion ring, more than were peeked).
 */
int netgpu_cq_release(struct netgpu_sockq *sq, uint32_t n)
{
	if (!sq || !sq->cq.entries)
		return -EINVAL;
	return netgpu_ring_cons_release(&sq->cq, n);
}

/**
 * netgpu_cq_wait() - wait for completions
 * @sq: the socket queue
 * @timeout_ms: longest wait, in ms (poll() for POLLRDBAND); < 0: no limit
 *
 * Return: the number of completions waiting (> 0), 0 if none came in
 * time (or poll() woke for an error or hang-up of the socket: see the
 * next send, and NETGPU_IOCTL_GET_STATS's tx_pending), or -errno as
 * netgpu_cq_nb_avail() or poll()'s.
 */
int netgpu_cq_wait(struct netgpu_sockq *sq, int timeout_ms)
{
	int n, ret;

	n = netgpu_cq_nb_avail(sq);
	if (n)
		return n;
	ret = netgpu_wait(sq->fd, POLLRDBAND, timeout_ms);
	if (ret && ret != -ETIMEDOUT && ret != -ENODEV)
		return ret;
	return netgpu_cq_nb_avail(sq);
}

/* ===== Queues ===== */

static int netgpu_check_entries(uint32_t entries)
{
	if (!entries)
		return -EINVAL;
	if (entries > NETGPU_QUEUE_MAX_ENTRIES)
		return -E2BIG;
	return 0;
}

/*
 * Map the ring the kernel described in @g (entries rounded up, offset,
 * size) and set up our end of it.  0 or -errno; -EPROTO for a geometry
 * the ABI rules out.
 */
static int netgpu_ring_map(struct netgpu_ring_map *r, int fd,
			   const struct netgpu_queue_geom *g, uint32_t asked,
			   uint32_t entry_size, int producer)
{
	void *map;
	int err;

	if (g->entries < asked || g->entry_size != entry_size ||
	    g->mmap_size > SIZE_MAX || g->mmap_offset > INT64_MAX ||
	    g->mmap_size < sizeof(struct netgpu_ring) +
			   (uint64_t)g->entries * entry_size)
		return -EPROTO;
	map = mmap(NULL, g->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)g->mmap_offset);
	if (map == MAP_FAILED)
		return -errno;
	err = netgpu__ring_init(r, map, g->mmap_size, g->entries, entry_size,
				producer);
	if (err)
		munmap(map, g->mmap_size);
	else
		r->map_offset = g->mmap_offset;
	return err;
}

static void netgpu_ring_unmap(struct netgpu_ring_map *r)
{
	if (r->map_size)
		munmap(r->hdr, r->map_size);
	r->map_size = 0;
}

/**
 * netgpu_ifq_bind() - bind an rx queue of the context's device
 * @ctx_fd: the context, with a device and regions attached
 * @queue_id: the rx queue, or NETGPU_LIB_QUEUE_ANY for any free one
 * @fill_entries: fill ring entries, 1 to NETGPU_QUEUE_MAX_ENTRIES
 *	(rounded up to a power of two by the kernel)
 * @ifqp: where to store the new interface queue
 *
 * netgpu becomes the page_pool memory provider of the queue: the NIC
 * writes payloads into the context's regions.  The fill ring is mapped.
 *
 * Return: 0, or -errno: -EINVAL (NULL @ifqp, @queue_id below -1, no
 * entries), -E2BIG (too many), -EBADF, -ENOMEM, the kernel's error
 * (-ENODEV, -EOPNOTSUPP, -EBUSY, -ENETDOWN, ...), mmap()'s, or -EPROTO.
 */
int netgpu_ifq_bind(int ctx_fd, int queue_id, uint32_t fill_entries,
		    struct netgpu_ifq **ifqp)
{
	struct netgpu_bind_queue bq;
	struct netgpu_ifq *ifq;
	int err, fd;

	if (!ifqp || queue_id < NETGPU_LIB_QUEUE_ANY)
		return -EINVAL;
	if (ctx_fd < 0)
		return -EBADF;
	err = netgpu_check_entries(fill_entries);
	if (err)
		return err;
	memset(&bq, 0, sizeof(bq));
	if (queue_id == NETGPU_LIB_QUEUE_ANY)
		bq.flags = NETGPU_BIND_QUEUE_ANY;
	else
		bq.queue_id = queue_id;
	bq.fill.entries = fill_entries;
	bq.fill.entry_size = sizeof(uint64_t);

	ifq = calloc(1, sizeof(*ifq));
	if (!ifq)
		return -ENOMEM;
	fd = netgpu_ioctl(ctx_fd, NETGPU_CTX_IOCTL_BIND_QUEUE, &bq);
	if (fd < 0) {
		err = fd;
		goto err_free;
	}
	ifq->fd = fd;
	ifq->queue_id = bq.queue_id;
	ifq->page_mask = ~(netgpu_page_size() - 1);
	err = netgpu_ring_map(&ifq->fill, fd, &bq.fill, fill_entries,
			      sizeof(uint64_t), 1);
	if (err)
		goto err_close;
	*ifqp = ifq;
	return 0;

err_close:
	close(fd);
err_free:
	free(ifq);
	return err;
}

/**
 * netgpu_ifq_close() - unmap the fill ring and close the queue's fd
 * @ifq: the interface queue, or NULL
 *
 * The queue is unbound once the kernel holds no other reference to it.
 * @ifq is freed.
 */
void netgpu_ifq_close(struct netgpu_ifq *ifq)
{
	if (!ifq)
		return;
	netgpu_ring_unmap(&ifq->fill);
	if (ifq->fd >= 0)
		close(ifq->fd);
	free(ifq);
}

/**
 * netgpu_ifq_fd() - the interface queue's fd
 * @ifq: the interface queue
 *
 * For poll() (POLLOUT: room in the fill ring; POLLERR | POLLHUP: the
 * queue stopped) and netgpu_get_stats().
 *
 * Return: the fd, or -EINVAL for a NULL @ifq.
 */
int netgpu_ifq_fd(const struct netgpu_ifq *ifq)
{
	return ifq ? ifq->fd : -EINVAL;
}

/**
 * netgpu_ifq_queue_id() - the rx queue bound
 * @ifq: the interface queue
 *
 * Return: the device's rx queue number (0 for a NULL @ifq).
 */
uint32_t netgpu_ifq_queue_id(const struct netgpu_ifq *ifq)
{
	return ifq ? ifq->queue_id : 0;
}

/**
 * netgpu_sockq_attach() - attach a TCP socket to a context
 * @ctx_fd: the context, with a device attached
 * @sock_fd: a connected or connecting TCP socket; the caller keeps it
 *	(netgpu_rx_loop() reads from it with recv())
 * @rx_entries: rx ring entries, 1 to NETGPU_QUEUE_MAX_ENTRIES
 * @cq_entries: completion ring entries for netgpu_sockq_send(), or 0 for
 *	a queue that only receives
 * @sqp: where to store the new socket queue
 *
 * The rx ring (and the completion ring) are mapped.
 *
 * Return: 0, or -errno: -EINVAL (NULL @sqp, no rx entries), -E2BIG,
 * -EBADF, -ENOMEM, the kernel's error (-ENOTSOCK, -EOPNOTSUPP,
 * -ENOTCONN, -EXDEV, -ENODEV, ...), mmap()'s, or -EPROTO.
 */
int netgpu_sockq_attach(int ctx_fd, int sock_fd, uint32_t rx_entries,
			uint32_t cq_entries, struct netgpu_sockq **sqp)
{
	struct netgpu_attach_socket as;
	struct netgpu_sockq *sq;
	int err, fd;

	if (!sqp)
		return -EINVAL;
	if (ctx_fd < 0 || sock_fd < 0)
		return -EBADF;
	err = netgpu_check_entries(rx_entries);
	if (!err && cq_entries)
		err = netgpu_check_entries(cq_entries);
	if (err)
		return err;
	memset(&as, 0, sizeof(as));
	as.sock_fd = sock_fd;
	as.rx.entries = rx_entries;
	as.rx.entry_size = sizeof(struct netgpu_rx_desc);
	if (cq_entries) {
		as.completion.entries = cq_entries;
		as.completion.entry_size = sizeof(uint64_t);
	}

	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	fd = netgpu_ioctl(ctx_fd, NETGPU_CTX_IOCTL_ATTACH_SOCKET, &as);
	if (fd < 0) {
		err = fd;
		goto err_free;
	}
	sq->fd = fd;
	sq->sock_fd = sock_fd;
	err = netgpu_ring_map(&sq->rx, fd, &as.rx, rx_entries,
			      sizeof(struct netgpu_rx_desc), 0);
	if (err)
		goto err_close;
	if (cq_entries) {
		err = netgpu_ring_map(&sq->cq, fd, &as.completion, cq_entries,
				      sizeof(uint64_t), 0);
		if (err)
			goto err_unmap_rx;
	}
	*sqp = sq;
	return 0;

err_unmap_rx:
	netgpu_ring_unmap(&sq->rx);
err_close:
	close(fd);
err_free:
	free(sq);
	return err;
}

/**
 * netgpu_sockq_close() - unmap the rings and close the queue's fd
 * @sq: the socket queue, or NULL
 *
 * The caller's socket fd stays open.  @sq is freed.
 */
void netgpu_sockq_close(struct netgpu_sockq *sq)
{
	if (!sq)
		return;
	netgpu_ring_unmap(&sq->cq);
	netgpu_ring_unmap(&sq->rx);
	if (sq->fd >= 0)
		close(sq->fd);
	free(sq);
}

/**
 * netgpu_sockq_fd() - the socket queue's fd
 * @sq: the socket queue
 *
 * For poll() (POLLIN: descriptors or socket data; POLLRDBAND:
 * completions; POLLOUT: a send would be accepted) and netgpu_get_stats().
 *
 * Return: the fd, or -EINVAL for a NULL @sq.
 */
int netgpu_sockq_fd(const struct netgpu_sockq *sq)
{
	return sq ? sq->fd : -EINVAL;
}

/**
 * netgpu_sockq_recv() - move the socket's data into the rx ring
 * @sq: the socket queue
 * @flags: NETGPU_RECV_NONBLOCK, or 0
 * @r: out: what happened (status, descs, copies, bytes)
 *
 * NETGPU_SOCKQ_IOCTL_RECV.  Without NETGPU_RECV_NONBLOCK it waits (as
 * recv() would, SO_RCVTIMEO included) for a descriptor or a status.
 *
 * Return: 0 (@r says what happened), or -errno: -EINVAL (NULL
 * arguments, unknown @flags), -EAGAIN, -EINTR, -EFAULT, the socket's
 * error.
 */
int netgpu_sockq_recv(struct netgpu_sockq *sq, uint32_t flags,
		      struct netgpu_recv *r)
{
	if (!sq || !r || (flags & ~NETGPU_RECV_NONBLOCK))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->flags = flags;
	return netgpu_ioctl(sq->fd, NETGPU_SOCKQ_IOCTL_RECV, r);
}

/**
 * netgpu_sockq_send() - zero-copy send of ranges of the context's regions
 * @sq: the socket queue, attached with a completion ring
 * @iov: the ranges, in order
 * @nr_iov: 1 to NETGPU_SEND_MAX_IOV
 * @user_data: what the send's completion entry will say
 * @flags: NETGPU_SEND_NONBLOCK, NETGPU_SEND_MORE, or 0
 * @bytes: out: bytes put in the socket (may be NULL)
 *
 * Once a send is accepted (0 returned, *@bytes > 0) exactly one
 * completion with @user_data follows (netgpu_cq_peek()); the ranges must
 * not be written until then.
 *
 * Return: 0, or -errno: -EINVAL (NULL arguments, @nr_iov out of range,
 * an empty range, unknown @flags, no completion ring: all checked here),
 * -ENOBUFS (the completion ring is full: reap it), -EAGAIN, -EFAULT,
 * -ENODEV, -EOPNOTSUPP, -EINTR, the socket's error.
 */
int netgpu_sockq_send(struct netgpu_sockq *sq,
		      const struct netgpu_send_iov *iov, uint32_t nr_iov,
		      uint64_t user_data, uint32_t flags, uint64_t *bytes)
{
	struct netgpu_send s;
	uint32_t i;
	int err;

	if (bytes)
		*bytes = 0;
	if (!sq || !iov || !nr_iov || nr_iov > NETGPU_SEND_MAX_IOV ||
	    (flags & ~(NETGPU_SEND_NONBLOCK | NETGPU_SEND_MORE)) ||
	    !sq->cq.entries)
		return -EINVAL;
	for (i = 0; i < nr_iov; i++)
		if (!iov[i].len)
			return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.iov = (uintptr_t)iov;
	s.nr_iov = nr_iov;
	s.flags = flags;
	s.user_data = user_data;
	err = netgpu_ioctl(sq->fd, NETGPU_SOCKQ_IOCTL_SEND, &s);
	if (!err && bytes)
		*bytes = s.bytes;
	return err;
}

/* ===== The receive loop ===== */

static int64_t netgpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Hand the caller the descriptors waiting, a batch at a time, and give
 * their buffers back.  0 with *@progress set if there were any, or what
 * a callback or the fill ring returned.
 */
static int netgpu_rx_loop_descs(struct netgpu_sockq *sq,
				struct netgpu_ifq *ifq,
				const struct netgpu_rx_ops *ops, void *arg,
				int *progress)
{
	struct netgpu_rx_desc descs[NETGPU_LIB_RX_BATCH];
	uint64_t addrs[NETGPU_LIB_RX_BATCH];
	int n, i, ret, err;

	for (;;) {
		n = netgpu_rx_peek(sq, descs, NETGPU_LIB_RX_BATCH);
		if (n <= 0)
			return n;
		*progress = 1;
		ret = ops->descs(arg, descs, n);
		for (i = 0; i < n; i++)
			addrs[i] = descs[i].addr & ifq->page_mask;
		/* Can't fail: n were peeked. */
		netgpu_rx_release(sq, n);
		err = netgpu_fill_submit_all(ifq, addrs, n, ops->timeout_ms);
		if (err)
			return err;
		if (ret)
			return ret;
	}
}

/*
 * The bytes the kernel left in the socket (NETGPU_RECV_READABLE,
 * _NO_BUFFERS): read them for ops->bytes.  0 (*@progress set if any were
 * read, *@eof at the end of the stream), or what ops->bytes or recv()
 * returned.
 */
static int netgpu_rx_loop_bytes(struct netgpu_sockq *sq,
				const struct netgpu_rx_ops *ops, void *arg,
				int *progress, int *eof)
{
	char buf[NETGPU_LIB_RECV_BUF];
	ssize_t n;

	n = recv(sq->sock_fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		/* -EFAULT: the socket's next bytes are netgpu's again. */
		return errno == EAGAIN || errno == EINTR || errno == EFAULT ?
		       0 : -errno;
	if (!n) {
		*eof = 1;
		return 0;
	}
	*progress = 1;
	return ops->bytes(arg, buf, n);
}

/**
 * netgpu_rx_loop() - receive a stream until it ends
 * @sq: the socket queue
 * @ifq: the interface queue whose buffers the descriptors name
 * @ops: the callbacks and the timeout
 * @arg: passed to the callbacks
 *
 * Repeats NETGPU_SOCKQ_IOCTL_RECV (non-blocking), hands the descriptors
 * of the rx ring to @ops->descs in batches, in stream order, then
 * consumes them and gives each one's buffer back on @ifq's fill ring
 * (waiting for room); reads bytes that arrived in ordinary memory with
 * recv() for @ops->bytes; waits (poll()) when nothing moved.  The
 * callbacks must be done with the buffers when they return: to hold
 * buffers, use netgpu_rx_peek(), netgpu_rx_release() and
 * netgpu_fill_submit() instead.
 *
 * Return: 0 at the end of the stream (the peer closed and every byte was
 * delivered), what a callback returned when not 0, or -errno: -EINVAL
 * (NULL arguments or @ops->descs), -ENOBUFS (bytes in ordinary memory
 * and no @ops->bytes), -ETIMEDOUT (no progress for @ops->timeout_ms),
 * -ENODEV (@ifq stopped while buffers waited for room), -EPROTO, or the
 * error of RECV, recv() or poll().  Without @ops->bytes, the host
 * regions running out of free buffers (NETGPU_RECV_NO_BUFFERS) is waited
 * out: the buffers the loop gives back free them.
 */
int netgpu_rx_loop(struct netgpu_sockq *sq, struct netgpu_ifq *ifq,
		   const struct netgpu_rx_ops *ops, void *arg)
{
	int64_t last = netgpu_now_ms();
	struct netgpu_recv r;
	int ret, progress, wait, eof = 0;

	if (!sq || !ifq || !ops || !ops->descs)
		return -EINVAL;
	for (;;) {
		progress = 0;
		ret = netgpu_sockq_recv(sq, NETGPU_RECV_NONBLOCK, &r);
		if (ret && ret != -EAGAIN && ret != -EINTR)
			return ret;
		ret = netgpu_rx_loop_descs(sq, ifq, ops, arg, &progress);
		if (ret)
			return ret;
		if (r.status & (NETGPU_RECV_READABLE | NETGPU_RECV_NO_BUFFERS)) {
			/*
			 * Without ops->bytes, NO_BUFFERS may pass once the
			 * buffers just given back are free again.
			 */
			if (!ops->bytes && (r.status & NETGPU_RECV_READABLE))
				return -ENOBUFS;
			if (ops->bytes) {
				ret = netgpu_rx_loop_bytes(sq, ops, arg,
							   &progress, &eof);
				if (ret)
					return ret;
			}
		}
		if (eof || (r.status & NETGPU_RECV_EOF))
			return 0;
		if (progress) {
			last = netgpu_now_ms();
			continue;
		}
		/* Nothing moved: wait for data (or a free buffer). */
		wait = ops->timeout_ms;
		if (wait >= 0) {
			wait -= netgpu_now_ms() - last;
			if (wait <= 0)
				return -ETIMEDOUT;
		}
		if ((r.status & NETGPU_RECV_NO_BUFFERS) &&
		    (wait < 0 || wait > NETGPU_LIB_NO_BUFFERS_MS))
			wait = NETGPU_LIB_NO_BUFFERS_MS;
		ret = netgpu_wait(sq->fd, POLLIN, wait);
		if (ret && ret != -ETIMEDOUT && ret != -ENODEV)
			return ret;
	}
}

/* ===== Ring diagnostics ===== */

/* @r as the kernel described it, and its header's words as they are now. */
static void netgpu_ring_get_info(const struct netgpu_ring_map *r,
				 struct netgpu_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	info->geom.entries = r->entries;
	info->geom.entry_size = r->entry_size;
	info->geom.mmap_offset = r->map_offset;
	info->geom.mmap_size = r->map_size;
	/*
	 * Relaxed, and no cached index changes: a look at the header for a
	 * report, not a step of the protocol (see "Memory ordering").
	 */
	info->prod = __atomic_load_n(&r->hdr->prod, __ATOMIC_RELAXED);
	info->cons = __atomic_load_n(&r->hdr->cons, __ATOMIC_RELAXED);
	info->flags = __atomic_load_n(&r->hdr->flags, __ATOMIC_RELAXED);
}

/**
 * netgpu_fill_info() - the fill ring's geometry and header, for a report
 * @ifq: the interface queue
 * @info: out: the geometry the kernel returned at the bind (entries as
 *	rounded up, entry size, mmap offset and size) and the ring header's
 *	prod, cons and flags as read now
 *
 * For diagnostics and tests of the kernel: the header's words are read
 * one at a time with relaxed loads, while the kernel may be moving
 * ->cons, and order nothing; what may be submitted is what
 * netgpu_fill_nb_free() says.  Nothing of the ring changes.
 *
 * Return: 0, or -EINVAL for a NULL argument.
 */
int netgpu_fill_info(const struct netgpu_ifq *ifq,
		     struct netgpu_ring_info *info)
{
	if (!ifq || !info)
		return -EINVAL;
	netgpu_ring_get_info(&ifq->fill, info);
	return 0;
}

/**
 * netgpu_rx_info() - the rx ring's geometry and header, for a report
 * @sq: the socket queue
 * @info: out: as netgpu_fill_info() says, of the rx ring
 *
 * As netgpu_fill_info(); the kernel may be moving ->prod, and what may be
 * peeked is what netgpu_rx_nb_avail() says.
 *
 * Return: 0, or -EINVAL for a NULL argument.
 */
int netgpu_rx_info(const struct netgpu_sockq *sq,
		   struct netgpu_ring_info *info)
{
	if (!sq || !info)
		return -EINVAL;
	netgpu_ring_get_info(&sq->rx, info);
	return 0;
}

/**
 * netgpu_cq_info() - the completion ring's geometry and header, for a report
 * @sq: the socket queue, attached with a completion ring
 * @info: out: as netgpu_fill_info() says, of the completion ring
 *
 * As netgpu_rx_info(), with netgpu_cq_nb_avail().
 *
 * Return: 0, or -EINVAL for a NULL argument or a queue without a
 * completion ring.
 */
int netgpu_cq_info(const struct netgpu_sockq *sq,
		   struct netgpu_ring_info *info)
{
	if (!sq || !sq->cq.entries || !info)
		return -EINVAL;
	netgpu_ring_get_info(&sq->cq, info);
	return 0;
}

/* ===== Stats and errors ===== */

/**
 * netgpu_get_stats() - read the counters of a context or a queue
 * @fd: a context fd, or an interface- or socket-queue fd
 *	(netgpu_ifq_fd(), netgpu_sockq_fd())
 * @stats: out: the counters (fields the fd's kind lacks, or the kernel
 *	does not know, read 0)
 *
 * Return: 0, or -errno: -EBADF, -EINVAL for NULL @stats, -ENOTTY for an
 * fd of another kind, the kernel's error (-ENODEV for a queue gone).
 */
int netgpu_get_stats(int fd, struct netgpu_stats *stats)
{
	if (fd < 0)
		return -EBADF;
	if (!stats)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	return netgpu_ioctl(fd, NETGPU_IOCTL_GET_STATS, stats);
}

/* What netgpu (and the library) mean by each errno they return */
static const char *const netgpu_errors[] = {
	[0] =
		"Success",
	[EPERM] =
		"Operation not permitted: attaching a device needs CAP_NET_ADMIN in the device's network namespace; a ring is never mapped executable",
	[ENOENT] =
		"No such file or directory: no such region in the area (or not attached to the context), or no /dev/netgpu or /dev/netgpu_mem (netgpu not in the kernel)",
	[EBADF] =
		"Bad file descriptor: an fd argument is not open (or negative)",
	[ENODEV] =
		"No such device: no such network device, none attached to the context (or it was unregistered), a region being removed, or an interface queue that stopped",
	[EBUSY] =
		"Device or resource busy: the context has a device already, a queue holds the region, the rx queue is taken (or none is free), or the area has no region id left",
	[EEXIST] =
		"File exists: the region, or one overlapping it, is attached to the context already",
	[EINVAL] =
		"Invalid argument: a reserved field or unknown flag set, a misaligned, empty or out-of-region range, a bad ring geometry, an fd of the wrong kind, no region attached, or a send on a queue without a completion ring",
	[E2BIG] =
		"Argument list too long: more ring entries than NETGPU_QUEUE_MAX_ENTRIES, or nonzero bytes past the end of a struct this kernel knows",
	[ENOTTY] =
		"Inappropriate ioctl for device: not a command of this kind of netgpu fd (or not a netgpu fd)",
	[ENOTSOCK] =
		"Socket operation on non-socket: the fd to attach is not a socket",
	[EOPNOTSUPP] =
		"Operation not supported: no provider for the memory, a socket that is not plain TCP, a device without queue management or DMA, or a zero-copy send from a dma-buf region",
	[ENOTCONN] =
		"Transport endpoint is not connected: the socket is neither connected nor connecting (a listening socket), or its connection is over with nothing left to read",
	[EXDEV] =
		"Invalid cross-device link: the socket is of another network namespace than the context's device",
	[ENETDOWN] =
		"Network is down: the device is down",
	[ENOBUFS] =
		"No buffer space available: the completion ring is full (reap it), or stream bytes wait in ordinary memory with no host buffer or bytes callback for them (recv() them)",
	[EFAULT] =
		"Bad address: data of another context or memory provider, a send range in no attached region, bytes in ordinary memory no host region can take, or an unreadable argument",
	[EAGAIN] =
		"Resource temporarily unavailable: nothing to do now (NETGPU_RECV_NONBLOCK, NETGPU_SEND_NONBLOCK, SO_RCVTIMEO, SO_SNDTIMEO)",
	[ENOMEM] =
		"Cannot allocate memory: out of memory, or pinning host memory would pass RLIMIT_MEMLOCK",
	[EOVERFLOW] =
		"Value too large for defined data type: the range does not fit this machine's address space",
	[EPROTO] =
		"Protocol error: the kernel answered what the netgpu ABI rules out (a ring geometry or ring index), as libnetgpu knows it",
	[ETIMEDOUT] =
		"Connection timed out: no progress within the timeout",
};

/**
 * netgpu_strerror() - what an error means to netgpu
 * @err: an errno, negative (as the library returns them) or positive
 *
 * Return: a static string naming the errno and the cases in which
 * netgpu's ABI (or the library) returns it, or strerror()'s text for an
 * errno netgpu gives no meaning of its own.
 */
const char *netgpu_strerror(int err)
{
	if (err < 0)
		err = -err;
	if ((size_t)err < ARRAY_SIZE(netgpu_errors) &&
	    netgpu_errors[err])
		return netgpu_errors[err];
	return strerror(err);
}
