/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * netgpu: zero-copy receive into host or dma-buf memory.  The user ABI of
 * /dev/netgpu_mem, /dev/netgpu and the queue file descriptors they create.
 */
#ifndef _UAPI_LINUX_NETGPU_H
#define _UAPI_LINUX_NETGPU_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: netgpu user ABI
 *
 * Two misc devices and two kinds of file descriptor they hand out:
 *
 * - ``/dev/netgpu_mem``: each open is one memory area.  NETGPU_MEM_IOCTL_*
 *   add regions to it (pinned host memory, or a dma-buf) and remove them.
 * - ``/dev/netgpu``: each open is one context.  NETGPU_CTX_IOCTL_* attach
 *   a network device of the caller's network namespace, attach regions
 *   of memory areas, bind an rx queue of the device (an interface-queue
 *   fd, on which the fill ring is mapped) and attach TCP sockets (a
 *   socket-queue fd, on which the rx ring is mapped).
 *
 * Every argument is a struct of fixed size and layout, the same for 32-
 * and 64-bit processes: pointers are passed as __u64, padding is explicit.
 * The size of the struct is encoded in the command (_IOC_SIZE()); the
 * kernel accepts any size from the first version of the struct
 * (``NETGPU_*_SIZE_VER0``) up, as copy_struct_from_user() does: bytes
 * past the end of the struct it knows must be zero (else ``-E2BIG``),
 * fields a shorter struct lacks read as zero.  Structs the kernel writes
 * back are written up to the smaller of the two sizes; a tail the kernel
 * does not know is written as zero.  Reserved fields
 * (``resv``, ``pad``) and flags with no defined meaning must be zero
 * (else ``-EINVAL``).  An unknown command, or a command of one file on
 * another, fails with ``-ENOTTY``.
 *
 * The ioctl numbers of all files come from one range, so that no command
 * of one file means something on another.
 */

#define NETGPU_IOCTL_TYPE		0xB9

/* ===== Memory areas: /dev/netgpu_mem ===== */

/* Kinds of memory a region may be backed by (&struct netgpu_add_region) */
#define NETGPU_REGION_HOST		1
#define NETGPU_REGION_DMABUF		2

/*
 * &struct netgpu_add_region.flags, NETGPU_REGION_HOST only: the range is
 * a mapping of PCI peer-to-peer memory a device published (the mmap() of
 * /sys/bus/pci/devices/<bdf>/p2pmem/allocate), not RAM
 */
#define NETGPU_ADD_REGION_P2PDMA	(1U << 0)

/**
 * struct netgpu_add_region - argument of NETGPU_MEM_IOCTL_ADD_REGION
 * @type: NETGPU_REGION_HOST or NETGPU_REGION_DMABUF
 * @flags: NETGPU_ADD_REGION_P2PDMA (host only), or 0
 * @addr: host: the page-aligned user address of the memory (else
 *	-EINVAL: a region is never rounded to pages); dma-buf: the
 *	page-aligned address by which user space knows the buffer's first
 *	byte (addresses in fill rings and rx descriptors are of this space)
 * @len: host: the length in bytes, a multiple of the page size; dma-buf:
 *	0 or the buffer's size
 * @dmabuf_fd: dma-buf: the buffer's file descriptor; host: 0
 * @pad: 0
 * @resv: 0
 *
 * Regions of one area may overlap; regions attached to one context may
 * not.  Host memory is pinned and charged to the caller's RLIMIT_MEMLOCK
 * unless the opener of the area had CAP_IPC_LOCK.
 *
 * With NETGPU_ADD_REGION_P2PDMA every page of the range must be PCI
 * peer-to-peer memory of one device that published it (else -EINVAL);
 * it is pinned but not charged (it is not RAM), and it is mapped for a
 * context's device when the region is attached: -EREMOTEIO there if
 * that device cannot reach the memory (not a PCI device, or not behind
 * a common PCI switch nor a host bridge the kernel trusts with
 * peer-to-peer traffic).  -EOPNOTSUPP on a kernel built without PCI
 * peer-to-peer DMA.  Without the flag, such a mapping is refused as any
 * the long-term pin refuses (-EFAULT).  When the device's driver is
 * unbound (or the device removed), the kernel revokes the region before
 * the driver goes: interface queues bound with it stop (poll():
 * EPOLLERR | EPOLLHUP), its pages are unpinned once the NIC holds none
 * of its buffers, and it stays in the area, revoked, under its id:
 * attaching it fails with -ENODEV, removing it succeeds.  Added while
 * the driver is being unbound, it is refused with -ENODEV.
 */
struct netgpu_add_region {
	__u32	type;
	__u32	flags;
	__u64	addr;
	__u64	len;
	__s32	dmabuf_fd;
	__u32	pad;
	__u64	resv[2];
};

#define NETGPU_ADD_REGION_SIZE_VER0	48

/**
 * struct netgpu_remove_region - argument of NETGPU_MEM_IOCTL_REMOVE_REGION
 * @region_id: what NETGPU_MEM_IOCTL_ADD_REGION returned
 * @flags: none defined; 0
 * @resv: 0
 *
 * The region is revoked: it leaves the area and is detached from every
 * context it is attached to, and an interface queue bound with it stops
 * (is unbound, shortly after the call returns: poll() on its fd then
 * reports EPOLLERR | EPOLLHUP); its memory
 * is unpinned (or the dma-buf released) once the devices hold none of
 * its buffers and the queue is closed.  A later region
 * of the area may get the same id.
 */
struct netgpu_remove_region {
	__u32	region_id;
	__u32	flags;
	__u64	resv;
};

#define NETGPU_REMOVE_REGION_SIZE_VER0	16

/*
 * NETGPU_MEM_IOCTL_ADD_REGION returns the region's id (> 0), unique in
 * its area; NETGPU_MEM_IOCTL_REMOVE_REGION returns 0.
 */
#define NETGPU_MEM_IOCTL_ADD_REGION \
	_IOW(NETGPU_IOCTL_TYPE, 0x01, struct netgpu_add_region)
#define NETGPU_MEM_IOCTL_REMOVE_REGION \
	_IOW(NETGPU_IOCTL_TYPE, 0x02, struct netgpu_remove_region)

/* ===== Rings ===== */

/**
 * DOC: netgpu ring layout
 *
 * A ring is one mapping: a &struct netgpu_ring header, then the entries,
 * starting at byte ``sizeof(struct netgpu_ring)`` (384).  The entry count
 * is a power of two; entry ``i`` lives in slot ``i & (entries - 1)``.
 * ``prod`` and ``cons`` are free-running __u32 indices: the producer
 * writes ``prod``, the consumer writes ``cons``, and ``prod - cons`` (mod
 * 2^32) is the number of entries in the ring.  A producer publishes
 * entries with a store-release of ``prod`` after writing them; a consumer
 * reads ``prod`` with a load-acquire before reading the entries, and
 * publishes ``cons`` with a store-release once it is done with them.
 * ``flags`` is written by the kernel and read by user space, which must
 * ignore the bits it does not know; the fill ring's is below
 * (NETGPU_RING_NEED_WAKEUP), the other rings' read 0.
 *
 * The three words are NETGPU_RING_ALIGN bytes apart, so that they sit on
 * different cache lines (and 128-byte line pairs); the layout is the same
 * whatever the machine's cache line size.
 *
 * The rings and their entries:
 *
 * - fill ring (user space produces, the kernel consumes): __u64 buffer
 *   addresses, each the start of a buffer user space gives back; mapped
 *   at NETGPU_OFF_FILL_RING of an interface-queue fd.  An entry gives
 *   back one reference user space holds: a duplicate already published
 *   when the kernel hands the buffer out again is refused as stale, not
 *   taken as a return of the new handout (one published later, even
 *   before user space reads the new descriptor, cannot be told apart).
 * - rx ring (the kernel produces, user space consumes): &struct
 *   netgpu_rx_desc; mapped at NETGPU_OFF_RX_RING of a socket-queue fd.
 * - completion ring (the kernel produces, user space consumes): __u64
 *   entries, each the &struct netgpu_send.user_data of a zero-copy send
 *   whose ranges neither the stack nor the device reads any more; mapped
 *   at NETGPU_OFF_COMPLETION_RING of a socket-queue fd attached with one
 *   (&struct netgpu_attach_socket.completion).
 *
 * The size to map is the ``mmap_size`` the kernel returned in the ring's
 * &struct netgpu_queue_geom, at its ``mmap_offset``.
 */
#define NETGPU_RING_ALIGN		128

/*
 * The offsets are below 4 GiB: a 32-bit kernel's in-kernel mappers take
 * an unsigned long offset, and a 32-bit process reaches them with
 * mmap2() (mmap64(), or mmap() built with _FILE_OFFSET_BITS=64: the rx
 * ring's offset is negative as a 32-bit off_t).
 */
#define NETGPU_OFF_FILL_RING		0x000000000ULL
#define NETGPU_OFF_COMPLETION_RING	0x040000000ULL
#define NETGPU_OFF_RX_RING		0x080000000ULL

/* Most entries a ring may have, a power of two (2^20) */
#define NETGPU_QUEUE_MAX_ENTRIES	0x100000U

/**
 * struct netgpu_ring - header of a mapped ring
 * @prod: producer index, written by the producer only
 * @pad1: keeps @cons off @prod's cache lines
 * @cons: consumer index, written by the consumer only
 * @pad2: keeps @flags off @cons's cache lines
 * @flags: ring flags, written by the kernel: NETGPU_RING_NEED_WAKEUP (the
 *	fill ring), or 0
 * @pad3: keeps the entries off @flags's cache lines
 */
struct netgpu_ring {
	__u32	prod;
	__u32	pad1[NETGPU_RING_ALIGN / sizeof(__u32) - 1];
	__u32	cons;
	__u32	pad2[NETGPU_RING_ALIGN / sizeof(__u32) - 1];
	__u32	flags;
	__u32	pad3[NETGPU_RING_ALIGN / sizeof(__u32) - 1];
};

/*
 * &struct netgpu_ring.flags of a fill ring: the queue ran dry.  A refill
 * found no buffer, neither in the fill ring nor among those the stack
 * gave back, so the NIC receives nothing (drops) until its driver refills
 * again, which may be its next interrupt or watchdog.  Cleared by the
 * next refill that finds buffers.  User space that produced entries
 * checks it after a full barrier between its store of ``prod`` and its
 * load of ``flags`` (libnetgpu's netgpu_fill_submit() does) and, if it
 * is set, calls NETGPU_IFQ_IOCTL_WAKEUP: either the barrier shows it
 * the flag, or the kernel's refill, which sets the flag and then reads
 * ``prod`` again after a barrier of its own, sees the entries.  poll()
 * of the interface-queue fd reports EPOLLPRI while it is set.  A
 * queue that stops (unbound, device gone) clears it.
 */
#define NETGPU_RING_NEED_WAKEUP		(1U << 0)

/**
 * struct netgpu_rx_desc - entry of the rx ring
 * @addr: address of the data, in the address space of the regions
 *	attached to the context (&struct netgpu_add_region.addr)
 * @len: length of the data in bytes
 * @flags: NETGPU_RX_DESC_COPY, or 0
 *
 * The buffer holding @addr (the page-sized buffer starting at @addr
 * rounded down to the page size) belongs to user space from the time the
 * descriptor is in the ring until user space gives it back on the fill
 * ring of the interface queue it came from: once per descriptor, as
 * several descriptors may name one buffer.
 */
struct netgpu_rx_desc {
	__u64	addr;
	__u32	len;
	__u32	flags;
};

/*
 * &struct netgpu_rx_desc.flags: the data arrived in ordinary memory (before
 * the queue was bound, or in a packet the NIC did not split) and the
 * kernel copied it into a free buffer of a host region
 */
#define NETGPU_RX_DESC_COPY		(1U << 0)

/**
 * struct netgpu_queue_geom - the geometry of a ring
 * @entries: in: entry count, 1 to NETGPU_QUEUE_MAX_ENTRIES; out: rounded
 *	up to a power of two
 * @entry_size: in: size of one entry, that of the ring's kind (8 for the
 *	fill and completion rings, sizeof(struct netgpu_rx_desc) for the rx
 *	ring)
 * @mmap_offset: out: the offset to pass to mmap()
 * @mmap_size: out: the number of bytes to map, header and entries
 *
 * Entries above NETGPU_QUEUE_MAX_ENTRIES are refused with -E2BIG, a wrong
 * @entry_size with -EINVAL.  A ring is mapped MAP_SHARED (else -EINVAL:
 * writes to a private copy would never reach the kernel) and never
 * executable (PROT_EXEC: -EPERM).
 */
struct netgpu_queue_geom {
	__u32	entries;
	__u32	entry_size;
	__u64	mmap_offset;
	__u64	mmap_size;
};

/* ===== Contexts: /dev/netgpu ===== */

/**
 * struct netgpu_attach_dev - argument of NETGPU_CTX_IOCTL_ATTACH_DEV
 * @ifindex: the device, in the caller's network namespace
 * @flags: none defined; 0
 * @resv: 0
 *
 * Needs CAP_NET_ADMIN in the user namespace owning the caller's network
 * namespace.  A context has at most one device, for its life: when the
 * device is unregistered (or leaves the namespace) the context detaches
 * everything from it and every later call on the context fails with
 * ``-ENODEV``.
 */
struct netgpu_attach_dev {
	__s32	ifindex;
	__u32	flags;
	__u64	resv;
};

#define NETGPU_ATTACH_DEV_SIZE_VER0	16

/**
 * struct netgpu_attach_region - argument of NETGPU_CTX_IOCTL_ATTACH_REGION
 *	and NETGPU_CTX_IOCTL_DETACH_REGION
 * @mem_fd: a file descriptor of /dev/netgpu_mem (the memory area)
 * @region_id: the region, as NETGPU_MEM_IOCTL_ADD_REGION returned it
 * @flags: none defined; 0
 * @pad: 0
 * @resv: 0
 *
 * Attaching maps the region for the context's device; the attachment
 * holds the region (and what backs it) until it is detached, the context
 * is released or the region is removed.  A region of PCI peer-to-peer
 * memory (NETGPU_ADD_REGION_P2PDMA) that the device cannot reach is
 * refused with -EREMOTEIO; one revoked because that memory's device went
 * away, with -ENODEV.
 */
struct netgpu_attach_region {
	__s32	mem_fd;
	__u32	region_id;
	__u32	flags;
	__u32	pad;
	__u64	resv;
};

#define NETGPU_ATTACH_REGION_SIZE_VER0	24

/* &struct netgpu_bind_queue.flags: bind any rx queue not bound yet */
#define NETGPU_BIND_QUEUE_ANY		(1U << 0)

/**
 * struct netgpu_bind_queue - argument of NETGPU_CTX_IOCTL_BIND_QUEUE
 * @queue_id: in: the rx queue of the device (0 with NETGPU_BIND_QUEUE_ANY);
 *	out: the rx queue bound
 * @flags: NETGPU_BIND_QUEUE_ANY, or 0
 * @fill: in/out: the geometry of the fill ring
 * @resv: 0
 *
 * Returns an interface-queue fd: mmap() it at @fill.mmap_offset for
 * @fill.mmap_size bytes to reach the fill ring; poll() reports
 * ``EPOLLOUT`` while the fill ring has room, ``EPOLLERR | EPOLLHUP`` once
 * the queue stopped (device gone, a region revoked); NETGPU_IOCTL_GET_STATS
 * reads its counters.
 */
struct netgpu_bind_queue {
	__u32	queue_id;
	__u32	flags;
	struct netgpu_queue_geom fill;
	__u64	resv[2];
};

#define NETGPU_BIND_QUEUE_SIZE_VER0	48

/**
 * struct netgpu_attach_socket - argument of NETGPU_CTX_IOCTL_ATTACH_SOCKET
 * @sock_fd: a connected or connecting TCP socket (IPv4 or IPv6) of the
 *	network namespace of the context's device
 * @flags: none defined; 0
 * @rx: in/out: the geometry of the rx ring
 * @completion: in/out: the geometry of the completion ring of zero-copy
 *	transmit (NETGPU_SOCKQ_IOCTL_SEND), or all 0 for a queue that only
 *	receives
 * @resv: 0
 *
 * Returns a socket-queue fd: mmap() it at @rx.mmap_offset for
 * @rx.mmap_size bytes to reach the rx ring, and call NETGPU_SOCKQ_IOCTL_RECV
 * on it to move the socket's data into the ring; with a completion ring,
 * mmap() it too (@completion.mmap_offset, @completion.mmap_size) and send
 * with NETGPU_SOCKQ_IOCTL_SEND.  The socket must be a
 * connected (or connecting) TCP socket of the IPv4 or IPv6 stack, with no
 * upper layer protocol (kTLS, MPTCP) over it: -ENOTSOCK for an fd that is
 * no socket, -EOPNOTSUPP for another kind of socket, -ENOTCONN for a
 * socket not connected nor connecting (a listening one included) and for
 * one whose connection is over (reset, or closed by both ends) with
 * nothing left in its receive queue (one with data queued is taken),
 * -EXDEV for a socket of another network namespace than the device's.
 * The socket-queue fd holds the socket: closing the socket's own fd does
 * not end the stream.
 */
struct netgpu_attach_socket {
	__s32	sock_fd;
	__u32	flags;
	struct netgpu_queue_geom rx;
	struct netgpu_queue_geom completion;
	__u64	resv[2];
};

#define NETGPU_ATTACH_SOCKET_SIZE_VER0	72

/**
 * struct netgpu_stats - counters of NETGPU_IOCTL_GET_STATS
 * @fill_taken: fill entries taken: buffers user space gave back
 * @fill_bad_index: times the kernel read the fill ring's producer index
 *	(at each refill and each handout of a buffer) and found it out of
 *	range
 *	(behind the entries already read, or more than a ring ahead) and
 *	was ignored
 * @fill_unaligned: fill entries skipped: not the start of a buffer
 * @fill_no_region: fill entries skipped: in no region attached to the
 *	context
 * @fill_never_given: fill entries skipped: a buffer the kernel never
 *	handed to user space
 * @fill_twice: fill entries skipped: a buffer already given back, or a
 *	duplicate already published when the buffer was handed out again
 * @fill_in_nic: fill entries skipped: a buffer the kernel holds (posted
 *	to the NIC, cached by its page_pool, or in one skb)
 * @fill_in_stack: fill entries skipped: a buffer the kernel holds more
 *	than once (shared by several skbs or other holders)
 * @bufs_cache: buffers in the free cache, now
 * @bufs_nic: buffers the kernel holds once, now: posted to the NIC,
 *	cached by its page_pool, or in one skb (the provider cannot tell
 *	these apart)
 * @bufs_stack: buffers the kernel holds more than once, now (an skb and
 *	its clone, or several skbs)
 * @bufs_rx_ring: descriptors in rx rings that user space has not
 *	consumed, now
 * @bufs_user: buffers user space holds (in an rx ring, or consumed from
 *	one and not yet given back), now
 * @rx_descs: rx descriptors written
 * @rx_bytes: bytes the rx descriptors describe, copies included
 * @rx_copied: of @rx_bytes, bytes the kernel copied into host buffers
 *	(NETGPU_RX_DESC_COPY)
 * @rx_refused: frags of another context or memory provider, refused
 *	(the read failed with ``-EFAULT``)
 * @tx_sends: zero-copy sends accepted (NETGPU_SOCKQ_IOCTL_SEND that put
 *	at least one byte in the socket)
 * @tx_bytes: bytes they put in the socket
 * @tx_completions: completions written to the completion ring
 * @tx_copied: of @tx_completions, sends of which the stack copied some
 *	bytes (a local receiver, a device without scatter-gather) rather
 *	than handing the region's pages to the device
 * @tx_pending: sends accepted and not completed, now
 * @tx_lost: completions the ring had no room for: always 0 (an accepted
 *	send holds its slot, and a consumer index user space moves back or
 *	past the entries it was given is ignored); anything else is a
 *	kernel bug
 *
 * The ``fill_*``, ``rx_*`` and ``tx_*`` counters count since the queue
 * was bound or the socket attached, the ``bufs_*`` gauges and @tx_pending
 * are a snapshot.  An interface-queue fd has the ``fill_*`` and
 * ``bufs_*`` fields except @bufs_rx_ring, a socket-queue fd @bufs_rx_ring
 * and the ``rx_*`` and ``tx_*`` fields; a context fd has the sums over
 * its queues of both kinds (the ``tx_*`` ones of the socket queues still
 * open).
 */
struct netgpu_stats {
	__u64	fill_taken;
	__u64	fill_bad_index;
	__u64	fill_unaligned;
	__u64	fill_no_region;
	__u64	fill_never_given;
	__u64	fill_twice;
	__u64	fill_in_nic;
	__u64	fill_in_stack;
	__u64	bufs_cache;
	__u64	bufs_nic;
	__u64	bufs_stack;
	__u64	bufs_rx_ring;
	__u64	bufs_user;
	__u64	rx_descs;
	__u64	rx_bytes;
	__u64	rx_copied;
	__u64	rx_refused;
	__u64	tx_sends;
	__u64	tx_bytes;
	__u64	tx_completions;
	__u64	tx_copied;
	__u64	tx_pending;
	__u64	tx_lost;
};

#define NETGPU_STATS_SIZE_VER0		104
#define NETGPU_STATS_SIZE_VER1		136
#define NETGPU_STATS_SIZE_VER2		184

/* ===== Socket queues ===== */

/* &struct netgpu_recv.flags: return at once rather than wait for data */
#define NETGPU_RECV_NONBLOCK		(1U << 0)

/* &struct netgpu_recv.status: why the read stopped, besides "no more" */
#define NETGPU_RECV_EOF			(1U << 0)
#define NETGPU_RECV_RING_FULL		(1U << 1)
#define NETGPU_RECV_READABLE		(1U << 2)
#define NETGPU_RECV_NO_BUFFERS		(1U << 3)

/**
 * struct netgpu_recv - argument of NETGPU_SOCKQ_IOCTL_RECV
 * @flags: in: NETGPU_RECV_NONBLOCK, or 0
 * @status: out: NETGPU_RECV_EOF (the peer closed its side and every byte
 *	was read), NETGPU_RECV_RING_FULL (the rx ring is full: consume it),
 *	NETGPU_RECV_READABLE (the stream continues with bytes in ordinary
 *	memory and the context has no host region to copy them into: read
 *	them with recv() on the socket, which returns exactly those),
 *	NETGPU_RECV_NO_BUFFERS (the same, but the host regions have no free
 *	buffer: give buffers back, or recv() them)
 * @descs: out: descriptors written to the rx ring
 * @copies: out: of @descs, copies (NETGPU_RX_DESC_COPY)
 * @bytes: out: bytes the descriptors describe
 * @resv: 0
 *
 * Moves the data queued on the socket, in stream order, into the rx ring:
 * payload the NIC wrote into buffers of the context's interface queues
 * is described where it lies (zero copy), other bytes are copied or left
 * in the socket as @status says.  Without NETGPU_RECV_NONBLOCK it waits
 * (as recv() would, SO_RCVTIMEO included) until it has written at least
 * one descriptor or has a @status to report.
 *
 * Return: 0 (the struct tells what happened); ``-EAGAIN`` with
 * NETGPU_RECV_NONBLOCK and nothing to do; ``-EINTR``; ``-EFAULT`` for
 * data of another context or memory provider, or for bytes in ordinary
 * memory inside a packet whose other bytes are in netgpu memory when no
 * host region can take them; the socket's pending error.
 */
struct netgpu_recv {
	__u32	flags;
	__u32	status;
	__u32	descs;
	__u32	copies;
	__u64	bytes;
	__u64	resv[2];
};

#define NETGPU_RECV_SIZE_VER0		40

/* Most ranges one NETGPU_SOCKQ_IOCTL_SEND takes */
#define NETGPU_SEND_MAX_IOV		64

/**
 * struct netgpu_send_iov - one range of a zero-copy send
 * @addr: first byte, in the address space of the regions attached to
 *	the context (&struct netgpu_add_region.addr); any byte alignment
 * @len: bytes, at least 1; the range lies in one region
 */
struct netgpu_send_iov {
	__u64	addr;
	__u64	len;
};

/* &struct netgpu_send.flags: return at once rather than wait for room */
#define NETGPU_SEND_NONBLOCK		(1U << 0)
/* &struct netgpu_send.flags: more follows at once (MSG_MORE) */
#define NETGPU_SEND_MORE		(1U << 1)

/**
 * struct netgpu_send - argument of NETGPU_SOCKQ_IOCTL_SEND
 * @iov: user pointer to @nr_iov &struct netgpu_send_iov, sent in order
 * @nr_iov: 1 to NETGPU_SEND_MAX_IOV
 * @flags: NETGPU_SEND_NONBLOCK, NETGPU_SEND_MORE, or 0
 * @user_data: what the send's completion entry says
 * @bytes: out: bytes put in the socket (all of the ranges' bytes unless
 *	the socket's send buffer stayed full: a timeout (SO_SNDTIMEO), a
 *	signal, NETGPU_SEND_NONBLOCK); 0 on input
 * @resv: 0
 *
 * Sends the ranges on the socket-queue fd's TCP socket without copying
 * them where the device can gather (host regions: their pinned pages
 * become the skbs' frags).  Once at least one byte is in the socket the
 * send is accepted: exactly one completion with @user_data follows, when
 * neither the stack (write and retransmit queues, clones) nor the device
 * reads the ranges any more; until then user space must not write them
 * (the bytes on the wire are whatever the memory holds when the device
 * or a retransmission reads it).  The regions read stay pinned until the
 * completion, even if removed meanwhile.
 *
 * Return: 0 (@bytes says how much was accepted); ``-EINVAL`` for a bad
 * argument, a range of no byte or past the end of its region, or a queue
 * attached without a completion ring; ``-EFAULT`` for a range starting in
 * no region attached to the context (or an unreadable @iov); ``-ENODEV``
 * for a region being removed; ``-EOPNOTSUPP`` for a dma-buf or
 * peer-to-peer (NETGPU_ADD_REGION_P2PDMA) region (this kernel's TX skbs
 * cannot carry device memory) or a socket that is not plain TCP;
 * ``-ENOBUFS`` when the completion ring has no room for the completion
 * (consume it; checked before the ranges); ``-EAGAIN`` with
 * NETGPU_SEND_NONBLOCK and a full send buffer (the socket's own
 * O_NONBLOCK does not count); ``-EINTR``; the socket's error (``-EPIPE``
 * after a shutdown of the sending side, ``-ECONNRESET``...).  No
 * completion follows an error, with one exception: an argument that
 * becomes unwritable while the call runs (it is written back before
 * anything is sent, so one that is unwritable from the start fails with
 * ``-EFAULT`` before) may fail the write-back of @bytes after the send
 * was accepted.
 *
 * A socket that is also used with MSG_ZEROCOPY send()s: such a send
 * fails with ``-ENOBUFS`` while the tail of the write queue carries
 * netgpu's pages (each zero-copy skb names one owner).
 */
struct netgpu_send {
	__u64	iov;
	__u32	nr_iov;
	__u32	flags;
	__u64	user_data;
	__u64	bytes;
	__u64	resv[2];
};

#define NETGPU_SEND_SIZE_VER0		48

/*
 * ATTACH_DEV, ATTACH_REGION, DETACH_REGION return 0; BIND_QUEUE returns an
 * interface-queue fd and ATTACH_SOCKET a socket-queue fd (both O_CLOEXEC).
 * Each waits for the context's other calls (one at a time) and
 * ATTACH_DEV and BIND_QUEUE for rtnl_lock: a fatal signal meanwhile
 * returns -EINTR with nothing done.  NETGPU_IOCTL_GET_STATS works on
 * a context fd and on both kinds of queue fd; it does not wait for the
 * context's other calls.
 */
#define NETGPU_CTX_IOCTL_ATTACH_DEV \
	_IOW(NETGPU_IOCTL_TYPE, 0x10, struct netgpu_attach_dev)
#define NETGPU_CTX_IOCTL_ATTACH_REGION \
	_IOW(NETGPU_IOCTL_TYPE, 0x11, struct netgpu_attach_region)
#define NETGPU_CTX_IOCTL_DETACH_REGION \
	_IOW(NETGPU_IOCTL_TYPE, 0x12, struct netgpu_attach_region)
#define NETGPU_CTX_IOCTL_BIND_QUEUE \
	_IOWR(NETGPU_IOCTL_TYPE, 0x13, struct netgpu_bind_queue)
#define NETGPU_CTX_IOCTL_ATTACH_SOCKET \
	_IOWR(NETGPU_IOCTL_TYPE, 0x14, struct netgpu_attach_socket)
#define NETGPU_IOCTL_GET_STATS \
	_IOR(NETGPU_IOCTL_TYPE, 0x20, struct netgpu_stats)

/*
 * An interface-queue fd: NETGPU_IFQ_IOCTL_WAKEUP, NETGPU_IOCTL_GET_STATS.
 * WAKEUP schedules the rx queue's NAPI instance when the queue is starved
 * (NETGPU_RING_NEED_WAKEUP), so that a driver that refills at each poll
 * refills its ring from the fill ring now; it returns 0 (kicked, or not
 * starved: nothing to do), -ENODEV if the queue is not bound, -ENETDOWN
 * if the device is down, -EOPNOTSUPP if the driver names no NAPI
 * instance for its rx queues, -EINTR on a fatal signal while it waits
 * for rtnl_lock.
 */
#define NETGPU_IFQ_IOCTL_WAKEUP \
	_IO(NETGPU_IOCTL_TYPE, 0x28)

/*
 * A socket-queue fd: NETGPU_SOCKQ_IOCTL_RECV, NETGPU_SOCKQ_IOCTL_SEND,
 * NETGPU_IOCTL_GET_STATS
 */
#define NETGPU_SOCKQ_IOCTL_RECV \
	_IOWR(NETGPU_IOCTL_TYPE, 0x30, struct netgpu_recv)
#define NETGPU_SOCKQ_IOCTL_SEND \
	_IOWR(NETGPU_IOCTL_TYPE, 0x31, struct netgpu_send)

#endif /* _UAPI_LINUX_NETGPU_H */
