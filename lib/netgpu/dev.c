// SPDX-License-Identifier: GPL-2.0-only
/*
 * netgpu misc devices: /dev/netgpu_mem (one open is one memory area) and
 * /dev/netgpu (one open is one context).  A thin layer: it decodes the
 * ioctls of include/uapi/linux/netgpu.h, checks what the ABI says must
 * be zero, turns file descriptors into objects and calls the memory and
 * context units.
 *
 * Argument sizes come from the command (_IOC_SIZE()): the command is
 * matched with its size bits masked, the size must be at least the
 * struct's first version and anything past the struct the kernel knows
 * must be zero (copy_struct_from_user()).
 */

#include <kunit/visibility.h>
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include <uapi/linux/netgpu.h>

#include "ctx.h"
#include "mem.h"
#include "nic.h"
#include "sock.h"

/* A command without its size bits: what the decoders switch on. */
#define NETGPU_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

#define netgpu_is_zero(field)	(!memchr_inv(&(field), 0, sizeof(field)))

/* Read an argument of @ksize bytes whose first version had @ver0. */
static int netgpu_get_arg(void *karg, size_t ksize, size_t ver0,
			  unsigned int cmd, const void __user *uarg)
{
	size_t usize = _IOC_SIZE(cmd);

	if (usize < ver0)
		return -EINVAL;
	/* -E2BIG if user space set bytes this kernel does not know. */
	return copy_struct_from_user(karg, ksize, uarg, usize);
}

/* Write an argument back: what both sides know, zeroes past ours. */
static int netgpu_put_arg(void __user *uarg, unsigned int cmd,
			  const void *karg, size_t ksize)
{
	size_t usize = _IOC_SIZE(cmd);

	if (copy_to_user(uarg, karg, min(usize, ksize)))
		return -EFAULT;
	if (usize > ksize && clear_user(uarg + ksize, usize - ksize))
		return -EFAULT;
	return 0;
}

/* ===== /dev/netgpu_mem ===== */

static long netgpu_mem_add_region_user(struct netgpu_mem *mem,
				       unsigned int cmd, void __user *uarg)
{
	struct netgpu_region_desc desc = {};
	struct netgpu_add_region arg;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg), NETGPU_ADD_REGION_SIZE_VER0,
			     cmd, uarg);
	if (err)
		return err;
	if (arg.flags & ~NETGPU_ADD_REGION_P2PDMA || arg.pad ||
	    !netgpu_is_zero(arg.resv))
		return -EINVAL;

	desc.addr = arg.addr;
	desc.len = arg.len;
	switch (arg.type) {
	case NETGPU_REGION_HOST:
		if (arg.dmabuf_fd)
			return -EINVAL;
		desc.type = NETGPU_MEMTYPE_HOST;
		if (arg.flags & NETGPU_ADD_REGION_P2PDMA)
			desc.flags |= NETGPU_REGION_DESC_P2PDMA;
		break;
	case NETGPU_REGION_DMABUF:
		if (arg.flags)
			return -EINVAL;
		desc.type = NETGPU_MEMTYPE_DMABUF;
		desc.fd = arg.dmabuf_fd;
		break;
	default:
		return -EINVAL;
	}
	return netgpu_mem_add_region(mem, &desc);
}

static long netgpu_mem_remove_region_user(struct netgpu_mem *mem,
					  unsigned int cmd, void __user *uarg)
{
	struct netgpu_remove_region arg;
	struct netgpu_region *r;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg),
			     NETGPU_REMOVE_REGION_SIZE_VER0, cmd, uarg);
	if (err)
		return err;
	if (arg.flags || arg.resv)
		return -EINVAL;

	r = netgpu_mem_get_region(mem, arg.region_id);
	if (IS_ERR(r))
		return PTR_ERR(r);
	/* Leaves the area, detached from every context; idempotent. */
	netgpu_region_revoke(r);
	netgpu_region_put(r);
	return 0;
}

/**
 * netgpu_mem_ioctl_user() - decode an ioctl of a memory area
 * @mem: the area
 * @cmd: the command
 * @uarg: its argument, in user memory
 *
 * The ioctl of /dev/netgpu_mem without the file, so that KUnit can call
 * it.
 *
 * Context: Process context, may sleep.
 * Return: as the ioctl: the region id for ADD_REGION, 0 for
 * REMOVE_REGION, -ENOTTY for any other command, or an error.
 */
VISIBLE_IF_KUNIT long netgpu_mem_ioctl_user(struct netgpu_mem *mem,
					    unsigned int cmd,
					    void __user *uarg)
{
	switch (NETGPU_IOC_BASE(cmd)) {
	case NETGPU_IOC_BASE(NETGPU_MEM_IOCTL_ADD_REGION):
		return netgpu_mem_add_region_user(mem, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_MEM_IOCTL_REMOVE_REGION):
		return netgpu_mem_remove_region_user(mem, cmd, uarg);
	}
	return -ENOTTY;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_mem_ioctl_user);

static long netgpu_mem_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	return netgpu_mem_ioctl_user(file->private_data, cmd,
				     (void __user *)arg);
}

static int netgpu_mem_open(struct inode *inode, struct file *file)
{
	struct netgpu_mem *mem;

	mem = netgpu_mem_create();
	if (!mem)
		return -ENOMEM;
	/* Replaces misc_open()'s pointer to the miscdevice. */
	file->private_data = mem;
	return 0;
}

static int netgpu_mem_release(struct inode *inode, struct file *file)
{
	netgpu_mem_close(file->private_data);
	return 0;
}

static const struct file_operations netgpu_mem_fops = {
	.owner		= THIS_MODULE,
	.open		= netgpu_mem_open,
	.release	= netgpu_mem_release,
	.unlocked_ioctl	= netgpu_mem_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/**
 * netgpu_mem_from_file() - the memory area of a file
 * @file: a file of the caller's, held for as long as the area is used
 *
 * Context: Any context.
 * Return: the area, or ERR_PTR(-EINVAL) if @file is not an open of
 * /dev/netgpu_mem: the descriptor is valid, the argument is not (as
 * dma_buf_get() and bpf_map_get() answer for files of the wrong kind);
 * -EBADF is left for descriptors that are not open.
 */
VISIBLE_IF_KUNIT struct netgpu_mem *netgpu_mem_from_file(struct file *file)
{
	if (file->f_op != &netgpu_mem_fops)
		return ERR_PTR(-EINVAL);
	return file->private_data;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_mem_from_file);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * netgpu_mem_file_create() - a memory-area file, as an open would make
 *
 * For KUnit: a file with the fops of /dev/netgpu_mem and a new area;
 * fput() of the last reference closes the area.
 *
 * Context: Process context.
 * Return: the file or an ERR_PTR().
 */
struct file *netgpu_mem_file_create(void)
{
	struct netgpu_mem *mem;
	struct file *file;

	mem = netgpu_mem_create();
	if (!mem)
		return ERR_PTR(-ENOMEM);
	file = anon_inode_getfile("[netgpu_mem]", &netgpu_mem_fops, mem,
				  O_RDWR);
	if (IS_ERR(file))
		netgpu_mem_close(mem);
	return file;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_mem_file_create);
#endif

static struct miscdevice netgpu_mem_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "netgpu_mem",
	.fops	= &netgpu_mem_fops,
};

/* ===== /dev/netgpu ===== */

static long netgpu_attach_dev_user(struct netgpu_ctx *ctx, unsigned int cmd,
				   void __user *uarg)
{
	struct netgpu_attach_dev arg;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg), NETGPU_ATTACH_DEV_SIZE_VER0,
			     cmd, uarg);
	if (err)
		return err;
	if (arg.flags || arg.resv)
		return -EINVAL;
	return netgpu_ctx_attach_dev(ctx, current->nsproxy->net_ns,
				     arg.ifindex);
}

static long netgpu_attach_region_user(struct netgpu_ctx *ctx,
				      unsigned int cmd, void __user *uarg)
{
	struct netgpu_attach_region arg;
	struct netgpu_mem *mem;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg),
			     NETGPU_ATTACH_REGION_SIZE_VER0, cmd, uarg);
	if (err)
		return err;
	if (arg.flags || arg.pad || arg.resv)
		return -EINVAL;

	CLASS(fd, f)(arg.mem_fd);
	if (fd_empty(f))
		return -EBADF;
	mem = netgpu_mem_from_file(fd_file(f));
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	/* The file reference keeps the area open for the call. */
	if (NETGPU_IOC_BASE(cmd) ==
	    NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_ATTACH_REGION))
		return netgpu_ctx_attach_region(ctx, mem, arg.region_id);
	return netgpu_ctx_detach_region(ctx, mem, arg.region_id);
}

/*
 * Copy @arg back, then install @file (a new queue's) in a new fd: no fd
 * the caller could not learn.  On error the file goes, and its release
 * undoes the queue.
 */
static long netgpu_install_file(struct file *file, void __user *uarg,
				unsigned int cmd, const void *arg, size_t size)
{
	int err, fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		err = fd;
		goto err_fput;
	}
	err = netgpu_put_arg(uarg, cmd, arg, size);
	if (err)
		goto err_put_fd;
	fd_install(fd, file);
	return fd;

err_put_fd:
	put_unused_fd(fd);
err_fput:
	fput(file);
	return err;
}

static long netgpu_bind_queue_user(struct netgpu_ctx *ctx, unsigned int cmd,
				   void __user *uarg)
{
	struct netgpu_bind_queue arg;
	struct file *file;
	bool any;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg), NETGPU_BIND_QUEUE_SIZE_VER0,
			     cmd, uarg);
	if (err)
		return err;
	if (arg.flags & ~NETGPU_BIND_QUEUE_ANY || !netgpu_is_zero(arg.resv))
		return -EINVAL;
	any = arg.flags & NETGPU_BIND_QUEUE_ANY;
	if (any && arg.queue_id)
		return -EINVAL;
	if (arg.fill.mmap_offset || arg.fill.mmap_size)
		return -EINVAL;

	file = netgpu_ctx_bind_queue(ctx, &arg.queue_id, any, &arg.fill);
	if (IS_ERR(file))
		return PTR_ERR(file);
	return netgpu_install_file(file, uarg, cmd, &arg, sizeof(arg));
}

static long netgpu_attach_socket_user(struct netgpu_ctx *ctx,
				      unsigned int cmd, void __user *uarg)
{
	struct netgpu_attach_socket arg;
	struct file *file;
	bool tx;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg),
			     NETGPU_ATTACH_SOCKET_SIZE_VER0, cmd, uarg);
	if (err)
		return err;
	if (arg.flags || !netgpu_is_zero(arg.resv))
		return -EINVAL;
	if (arg.rx.mmap_offset || arg.rx.mmap_size ||
	    arg.completion.mmap_offset || arg.completion.mmap_size)
		return -EINVAL;
	tx = arg.completion.entries || arg.completion.entry_size;

	file = netgpu_ctx_attach_socket(ctx, arg.sock_fd, &arg.rx,
					tx ? &arg.completion : NULL);
	if (IS_ERR(file))
		return PTR_ERR(file);
	return netgpu_install_file(file, uarg, cmd, &arg, sizeof(arg));
}

static long netgpu_get_stats_user(struct netgpu_ctx *ctx, unsigned int cmd,
				  void __user *uarg)
{
	struct netgpu_stats stats;
	int err;

	if (_IOC_SIZE(cmd) < NETGPU_STATS_SIZE_VER0)
		return -EINVAL;
	err = netgpu_ctx_get_stats(ctx, &stats);
	if (err)
		return err;
	return netgpu_put_arg(uarg, cmd, &stats, sizeof(stats));
}

/**
 * netgpu_ifq_ioctl_user() - decode an ioctl of an interface queue
 * @ifq: the queue
 * @cmd: the command
 * @uarg: its argument, in user memory
 *
 * Context: Process context, may sleep.
 * Return: 0, -ENOTTY for a command of no interface queue, or an error
 * (NETGPU_IFQ_IOCTL_WAKEUP: netgpu_ifq_wakeup()).
 */
long netgpu_ifq_ioctl_user(struct netgpu_ifq *ifq, unsigned int cmd,
			   void __user *uarg)
{
	struct netgpu_stats stats = {};

	if (cmd == NETGPU_IFQ_IOCTL_WAKEUP)
		return netgpu_ifq_wakeup(ifq);
	if (NETGPU_IOC_BASE(cmd) != NETGPU_IOC_BASE(NETGPU_IOCTL_GET_STATS))
		return -ENOTTY;
	if (_IOC_SIZE(cmd) < NETGPU_STATS_SIZE_VER0)
		return -EINVAL;
	netgpu_ifq_get_stats(ifq, &stats);
	return netgpu_put_arg(uarg, cmd, &stats, sizeof(stats));
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ifq_ioctl_user);

#if IS_ENABLED(CONFIG_NETGPU_NIC)
static long netgpu_recv_user(struct netgpu_sockq *sq, unsigned int cmd,
			     void __user *uarg)
{
	struct netgpu_recv arg;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg), NETGPU_RECV_SIZE_VER0, cmd,
			     uarg);
	if (err)
		return err;
	if (arg.flags & ~NETGPU_RECV_NONBLOCK || arg.status || arg.descs ||
	    arg.copies || arg.bytes || !netgpu_is_zero(arg.resv))
		return -EINVAL;
	err = netgpu_ctx_recv(sq, &arg);
	if (err)
		return err;
	return netgpu_put_arg(uarg, cmd, &arg, sizeof(arg));
}

static long netgpu_send_user(struct netgpu_sockq *sq, unsigned int cmd,
			     void __user *uarg)
{
	struct netgpu_send_iov *iov;
	struct netgpu_send arg;
	int err;

	err = netgpu_get_arg(&arg, sizeof(arg), NETGPU_SEND_SIZE_VER0, cmd,
			     uarg);
	if (err)
		return err;
	if (arg.flags & ~(NETGPU_SEND_NONBLOCK | NETGPU_SEND_MORE) ||
	    arg.bytes || !netgpu_is_zero(arg.resv) || !arg.nr_iov ||
	    arg.nr_iov > NETGPU_SEND_MAX_IOV)
		return -EINVAL;
	/*
	 * The argument must take the result: written back unchanged before
	 * anything is sent, so that an unwritable one fails before a send
	 * is accepted (whose completion would follow an error).
	 */
	err = netgpu_put_arg(uarg, cmd, &arg, sizeof(arg));
	if (err)
		return err;
	iov = memdup_array_user(u64_to_user_ptr(arg.iov), arg.nr_iov,
				sizeof(*iov));
	if (IS_ERR(iov))
		return PTR_ERR(iov);
	err = netgpu_sockq_send(sq, &arg, iov);
	kfree(iov);
	if (err)
		return err;
	return netgpu_put_arg(uarg, cmd, &arg, sizeof(arg));
}

/**
 * netgpu_sockq_ioctl_user() - decode an ioctl of a socket queue
 * @sq: the queue
 * @cmd: the command
 * @uarg: its argument, in user memory
 *
 * Context: Process context, may sleep.
 * Return: 0, -ENOTTY for a command of no socket queue, or an error.
 */
long netgpu_sockq_ioctl_user(struct netgpu_sockq *sq, unsigned int cmd,
			     void __user *uarg)
{
	struct netgpu_stats stats = {};

	switch (NETGPU_IOC_BASE(cmd)) {
	case NETGPU_IOC_BASE(NETGPU_SOCKQ_IOCTL_RECV):
		return netgpu_recv_user(sq, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_SOCKQ_IOCTL_SEND):
		return netgpu_send_user(sq, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_IOCTL_GET_STATS):
		if (_IOC_SIZE(cmd) < NETGPU_STATS_SIZE_VER0)
			return -EINVAL;
		netgpu_sockq_get_stats(sq, &stats);
		return netgpu_put_arg(uarg, cmd, &stats, sizeof(stats));
	}
	return -ENOTTY;
}
#endif

/**
 * netgpu_ctx_ioctl_user() - decode an ioctl of a context
 * @ctx: the context
 * @cmd: the command
 * @uarg: its argument, in user memory
 *
 * The ioctl of /dev/netgpu without the file, so that KUnit can call it.
 * Devices are looked up in the caller's network namespace, file
 * descriptors in the caller's file table.
 *
 * Context: Process context, may sleep.
 * Return: as the ioctl: 0, a new file descriptor (BIND_QUEUE and
 * ATTACH_SOCKET), -ENOTTY for a command of no context, or an
 * error.
 */
VISIBLE_IF_KUNIT long netgpu_ctx_ioctl_user(struct netgpu_ctx *ctx,
					    unsigned int cmd,
					    void __user *uarg)
{
	switch (NETGPU_IOC_BASE(cmd)) {
	case NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_ATTACH_DEV):
		return netgpu_attach_dev_user(ctx, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_ATTACH_REGION):
	case NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_DETACH_REGION):
		return netgpu_attach_region_user(ctx, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_BIND_QUEUE):
		return netgpu_bind_queue_user(ctx, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_CTX_IOCTL_ATTACH_SOCKET):
		return netgpu_attach_socket_user(ctx, cmd, uarg);
	case NETGPU_IOC_BASE(NETGPU_IOCTL_GET_STATS):
		return netgpu_get_stats_user(ctx, cmd, uarg);
	}
	return -ENOTTY;
}
EXPORT_SYMBOL_IF_KUNIT(netgpu_ctx_ioctl_user);

static long netgpu_ctx_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	return netgpu_ctx_ioctl_user(file->private_data, cmd,
				     (void __user *)arg);
}

static int netgpu_ctx_open(struct inode *inode, struct file *file)
{
	struct netgpu_ctx *ctx;

	ctx = netgpu_ctx_create();
	if (!ctx)
		return -ENOMEM;
	file->private_data = ctx;
	return 0;
}

static int netgpu_ctx_release(struct inode *inode, struct file *file)
{
	/* The file's reference; queues may keep the context longer. */
	netgpu_ctx_put(file->private_data);
	return 0;
}

/*
 * The context's id, as the netdev family's queue-get and page-pool-get
 * report it in the netgpu nest of each queue and pool it provides.
 */
static void netgpu_ctx_show_fdinfo(struct seq_file *m, struct file *file)
{
	const struct netgpu_ctx *ctx = file->private_data;

	seq_printf(m, "netgpu-ctx-id:\t%u\n", ctx->id);
}

static const struct file_operations netgpu_ctx_fops = {
	.owner		= THIS_MODULE,
	.open		= netgpu_ctx_open,
	.release	= netgpu_ctx_release,
	.show_fdinfo	= netgpu_ctx_show_fdinfo,
	.unlocked_ioctl	= netgpu_ctx_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice netgpu_ctx_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "netgpu",
	.fops	= &netgpu_ctx_fops,
};

/**
 * netgpu_dev_init() - register /dev/netgpu_mem and /dev/netgpu
 *
 * Context: Process context (the library's init).
 * Return: 0 or misc_register()'s error, with nothing registered.
 */
int netgpu_dev_init(void)
{
	int err;

	err = misc_register(&netgpu_mem_miscdev);
	if (err)
		return err;
	err = misc_register(&netgpu_ctx_miscdev);
	if (err)
		misc_deregister(&netgpu_mem_miscdev);
	return err;
}

/**
 * netgpu_dev_exit() - unregister the misc devices
 *
 * Context: Process context (the library's exit).
 */
void netgpu_dev_exit(void)
{
	misc_deregister(&netgpu_ctx_miscdev);
	misc_deregister(&netgpu_mem_miscdev);
}
