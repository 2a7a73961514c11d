/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libnetgpu internals: the handles' layout and the hooks the host tests
 * (tests/) use to run the library against a ring on the heap and a fake
 * kernel.  Not installed; none of it is exported from libnetgpu.so
 * (libnetgpu.map), only libnetgpu.a and the tests see it.
 */
#ifndef __LIBNETGPU_NETGPU_PRIV_H
#define __LIBNETGPU_NETGPU_PRIV_H

#include <poll.h>

#include "netgpu.h"

/**
 * struct netgpu_ring_map - one end of a shared ring, in user space
 * @hdr: the ring's header (the mapping's first byte)
 * @slots: the first entry, just past @hdr
 * @map_size: bytes mapped; 0 for a ring the library did not map
 * @map_offset: the offset it was mapped at (netgpu_fill_info() and the
 *	like report it); 0 for a ring the library did not map
 * @entries: number of entries, a power of two
 * @mask: @entries - 1
 * @entry_size: bytes per entry (8, or sizeof(struct netgpu_rx_desc))
 * @cached_prod: producer end: the next entry to fill, also the last value
 *	stored into ->prod; consumer end: the last ->prod accepted
 * @cached_cons: consumer end: the next entry to peek, also the last value
 *	stored into ->cons; producer end: the last ->cons accepted
 *
 * Invariant (modulo 2^32): @cached_cons <= @cached_prod <= @cached_cons +
 * @entries.  Only netgpu.c's ring functions touch the fields; neither end
 * ever reads its own index back from the shared header.
 */
struct netgpu_ring_map {
	struct netgpu_ring *hdr;
	void *slots;
	size_t map_size;
	uint64_t map_offset;
	uint32_t entries;
	uint32_t mask;
	uint32_t entry_size;
	uint32_t cached_prod;
	uint32_t cached_cons;
};

struct netgpu_ifq {
	int fd;
	uint32_t queue_id;
	uint64_t page_mask;		/* ~(page size - 1) */
	struct netgpu_ring_map fill;
};

struct netgpu_sockq {
	int fd;
	int sock_fd;			/* the caller's; not closed here */
	struct netgpu_ring_map rx;
	struct netgpu_ring_map cq;	/* entries == 0: no completion ring */
};

/*
 * The system calls the library makes on netgpu's files, so that the host
 * tests can stand in for the kernel.  Default: ioctl() and poll().
 */
struct netgpu__sys {
	int (*ioctl)(int fd, unsigned long req, void *arg);
	int (*poll)(struct pollfd *fds, nfds_t nfds, int timeout_ms);
};

extern struct netgpu__sys netgpu__sys;

int netgpu__ring_init(struct netgpu_ring_map *r, void *map, size_t map_size,
		      uint32_t entries, uint32_t entry_size, int producer);

#endif /* __LIBNETGPU_NETGPU_PRIV_H */
