/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libnetgpu: the user-space side of netgpu's ABI (<linux/netgpu.h>).
 */
#ifndef __LIBNETGPU_NETGPU_H
#define __LIBNETGPU_NETGPU_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netgpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: libnetgpu
 *
 * Thin wrappers of the ioctls of /dev/netgpu_mem (memory areas and their
 * regions) and /dev/netgpu (contexts, interface queues, socket queues),
 * and the user end of the three shared rings:
 *
 *   ring         user space is    library calls
 *   fill         producer         netgpu_fill_submit(), _submit_all(), _nb_free(),
 *                                 _pending()
 *   rx           consumer         netgpu_rx_peek(), _release(), _nb_avail()
 *   completion   consumer         netgpu_cq_peek(), _release(), _nb_avail(), _wait()
 *
 * One vocabulary, as the kernel's queue.h has it: a producer SUBMITs
 * entries (copies them into free slots, then publishes ->prod), a
 * consumer PEEKs at entries (copies them out, published ->cons unchanged)
 * and RELEASEs them (publishes ->cons).  ``nb_`` calls return a count;
 * ``_info`` calls report a ring's geometry and header, for diagnostics.
 * Entries are always copied: the caller never touches a shared slot, so
 * the orderings of kunit/litmus/netgpu-ring.litmus hold whatever the
 * caller does.  netgpu_rx_loop() strings RECV, the rx ring and the fill
 * ring together.
 *
 * Errors: every call that can fail returns a negative errno (-EINVAL,
 * -ENODEV, ...) and leaves errno alone as far as the library is
 * concerned; netgpu_strerror() says what an errno means to netgpu.
 * -EPROTO is the library's own: the kernel answered something the ABI
 * rules out (a ring geometry, a ring index).
 *
 * Threads: the handles have no locks.  Each end of a ring (the fill ring
 * of an &struct netgpu_ifq, the rx and completion rings of an &struct
 * netgpu_sockq) must be used by one thread at a time; different rings may
 * be used by different threads at once.
 */

/* netgpu_ifq_bind(): any rx queue not bound yet (NETGPU_BIND_QUEUE_ANY) */
#define NETGPU_LIB_QUEUE_ANY	(-1)

/* An interface queue: its fd and the mapped fill ring; opaque. */
struct netgpu_ifq;
/* A socket queue: its fd, the mapped rx ring and completion ring; opaque. */
struct netgpu_sockq;

/* ===== Memory areas: /dev/netgpu_mem ===== */

int netgpu_area_open(void);
int netgpu_area_add_host(int area_fd, void *addr, size_t len);
int netgpu_area_add_dmabuf(int area_fd, int dmabuf_fd, uint64_t addr,
			   uint64_t len);
int netgpu_area_remove(int area_fd, uint32_t region_id);

/* ===== Contexts: /dev/netgpu ===== */

int netgpu_ctx_open(void);
int netgpu_ctx_attach_dev(int ctx_fd, int ifindex);
int netgpu_ctx_attach_region(int ctx_fd, int area_fd, uint32_t region_id);
int netgpu_ctx_detach_region(int ctx_fd, int area_fd, uint32_t region_id);

/* ===== Interface queues ===== */

int netgpu_ifq_bind(int ctx_fd, int queue_id, uint32_t fill_entries,
		    struct netgpu_ifq **ifqp);
void netgpu_ifq_close(struct netgpu_ifq *ifq);
int netgpu_ifq_fd(const struct netgpu_ifq *ifq);
uint32_t netgpu_ifq_queue_id(const struct netgpu_ifq *ifq);

/* ===== Socket queues ===== */

int netgpu_sockq_attach(int ctx_fd, int sock_fd, uint32_t rx_entries,
			uint32_t cq_entries, struct netgpu_sockq **sqp);
void netgpu_sockq_close(struct netgpu_sockq *sq);
int netgpu_sockq_fd(const struct netgpu_sockq *sq);
int netgpu_sockq_recv(struct netgpu_sockq *sq, uint32_t flags,
		      struct netgpu_recv *r);
int netgpu_sockq_send(struct netgpu_sockq *sq,
		      const struct netgpu_send_iov *iov, uint32_t nr_iov,
		      uint64_t user_data, uint32_t flags, uint64_t *bytes);

/* ===== Rings ===== */

int netgpu_fill_nb_free(struct netgpu_ifq *ifq);
int netgpu_fill_submit(struct netgpu_ifq *ifq, const uint64_t *addrs,
		       uint32_t n);
int netgpu_fill_submit_all(struct netgpu_ifq *ifq, const uint64_t *addrs,
			   uint32_t n, int timeout_ms);
int netgpu_fill_pending(struct netgpu_ifq *ifq, uint64_t *addrs,
			uint32_t max);

int netgpu_rx_nb_avail(struct netgpu_sockq *sq);
int netgpu_rx_peek(struct netgpu_sockq *sq, struct netgpu_rx_desc *descs,
		   uint32_t max);
int netgpu_rx_release(struct netgpu_sockq *sq, uint32_t n);

int netgpu_cq_nb_avail(struct netgpu_sockq *sq);
int netgpu_cq_peek(struct netgpu_sockq *sq, uint64_t *user_data,
		   uint32_t max);
int netgpu_cq_release(struct netgpu_sockq *sq, uint32_t n);
int netgpu_cq_wait(struct netgpu_sockq *sq, int timeout_ms);

/* ===== The receive loop ===== */

/**
 * struct netgpu_rx_ops - what netgpu_rx_loop() calls
 * @descs: a batch of @n descriptors (address, length, flags), in stream
 *	order; the buffers go back on the fill ring when it returns.  Return
 *	0 to go on, > 0 to stop the loop (which returns it), < 0 an error
 *	(likewise)
 * @bytes: optional: @len bytes of the stream that arrived in ordinary
 *	memory, read with recv() on the socket (NETGPU_RECV_READABLE,
 *	NETGPU_RECV_NO_BUFFERS); same return convention.  Without it such
 *	bytes end the loop with -ENOBUFS
 * @timeout_ms: longest wait for progress, in ms; < 0: no limit
 */
struct netgpu_rx_ops {
	int (*descs)(void *arg, const struct netgpu_rx_desc *descs,
		     uint32_t n);
	int (*bytes)(void *arg, const void *buf, size_t len);
	int timeout_ms;
};

int netgpu_rx_loop(struct netgpu_sockq *sq, struct netgpu_ifq *ifq,
		   const struct netgpu_rx_ops *ops, void *arg);

/* ===== Ring diagnostics ===== */

/**
 * struct netgpu_ring_info - a mapped ring, as netgpu_fill_info(),
 *	netgpu_rx_info() and netgpu_cq_info() report it
 * @geom: the ring's geometry as the kernel returned it (entries as
 *	rounded up, entry size, mmap offset, mmap size), as mapped
 * @prod: the header's producer index, when read
 * @cons: the header's consumer index, when read
 * @flags: the header's flags, when read
 * @pad: 0
 */
struct netgpu_ring_info {
	struct netgpu_queue_geom geom;
	uint32_t prod;
	uint32_t cons;
	uint32_t flags;
	uint32_t pad;
};

int netgpu_fill_info(const struct netgpu_ifq *ifq,
		     struct netgpu_ring_info *info);
int netgpu_rx_info(const struct netgpu_sockq *sq,
		   struct netgpu_ring_info *info);
int netgpu_cq_info(const struct netgpu_sockq *sq,
		   struct netgpu_ring_info *info);

/* ===== Stats and errors ===== */

int netgpu_get_stats(int fd, struct netgpu_stats *stats);
const char *netgpu_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* __LIBNETGPU_NETGPU_H */
