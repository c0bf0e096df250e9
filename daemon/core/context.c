/* SPDX-License-Identifier: MIT */
/*
 * HELLO, LIST_DEVICES and OPEN_DEVICE: what turns a connection into an
 * opened device context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/sockios.h>

#include "common/msg.h"
#include "daemon/core/core.h"

int cmd_hello(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_hello_req *req = rq->data;
	struct srd_hello_rep *rep;

	if (c->hello)
		return -EINVAL;
	if (req->version != SRD_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	/* req->pid is the client's pid in its own pid namespace, which is
	 * not the daemon's in a container: nothing goes by it.  Who the
	 * client is comes from the kernel (SO_PEERCRED at accept, each
	 * request's SCM_CREDENTIALS). */
	c->hello = true;
	rep = REP(rp, struct srd_hello_rep);
	rep->version = SRD_PROTO_VERSION;
	rep->daemon_pid = getpid();
	return 0;
}

int cmd_list_devices(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	uint32_t n = device_count(c->d);
	struct srd_list_devices_rep *rep;
	uint32_t i = 0;

	rep = rep_payload(rp, sizeof(*rep) + n * sizeof(rep->dev[0]));
	list_for_each (&c->d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);
		struct srd_device_info *di = &rep->dev[i++];

		snprintf(di->name, sizeof(di->name), "%s", dev->name);
		snprintf(di->netdev, sizeof(di->netdev), "%s", dev->netdev);
		di->node_guid = dev->node_guid;
		di->index = dev->index;
		di->node_type = IBV_NODE_CA;
		di->transport = IBV_TRANSPORT_IB;
	}
	rep->count = n;
	return 0;
}

/* Filesystems whose writes do not wait on anything a user controls (a
 * FUSE server, a network peer). */
static bool fs_local(long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC: /* ext2, ext3 and ext4 alike */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * The trace fd is the description the client handed over, written as it
 * is.  The daemon never reopens it (that would judge the access on the
 * daemon's rights, not the client's) and must never block on it: a socket
 * is written with MSG_DONTWAIT, but not a unix one, which could hold the
 * client's own connection (in flight, or itself) and so keep it open for
 * as long as the daemon holds the trace fd (the library relays instead), a regular file only on a local filesystem,
 * anything else only if its description is non-blocking (the library
 * hands over a non-blocking description of its own for pipes and
 * terminals).  Returns the fd taken, or -1: no trace.
 */
static int trace_fd_take(struct srd_client *c, int *fd)
{
	int fl = fcntl(*fd, F_GETFL), nfd;
	const char *why = NULL;
	struct statfs sfs;
	struct stat st;

	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY ||
	    fstat(*fd, &st))
		why = "not open for writing";
	else if (S_ISSOCK(st.st_mode) && srd_fd_unix_socket(*fd))
		why = "a unix socket (it could hold the connection itself)";
	else if (S_ISSOCK(st.st_mode))
		c->trace_sock = true;
	else if (S_ISREG(st.st_mode) &&
		 (fstatfs(*fd, &sfs) || !fs_local(sfs.f_type)))
		why = "a file whose writes may wait";
	else if (!S_ISREG(st.st_mode) && !(fl & O_NONBLOCK))
		why = "a blocking description";
	if (why) {
		srd_log(SRD_LOG_WARN, "pid %d: trace fd is %s: no CQE trace",
			(int)c->pid, why);
		return -1;
	}
	nfd = *fd;
	*fd = -1; /* taken */
	return nfd;
}

/* Is fd a file NAME of a /proc/PID directory, open with accmode? */
static bool proc_fd_is(int fd, const char *name, int accmode)
{
	char path[64], link[256];
	size_t k = strlen(name);
	struct statfs sfs;
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_ACCMODE) != accmode)
		return false;
	if (fstatfs(fd, &sfs) || sfs.f_type != PROC_SUPER_MAGIC)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return true; /* no /proc of our own to tell more */
	link[n] = '\0';
	return (size_t)n >= k && !strcmp(link + n - k, name);
}

/* Is fd what SRD_MEM_PROCMEM promises: a /proc/PID/mem file open for
 * reading and writing?  It was opened by the client, so it grants no more
 * than the client's own access to that address space. */
static bool procmem_fd_ok(int fd)
{
	return proc_fd_is(fd, "/mem", O_RDWR);
}

/* This network namespace, as the kernel names it: (device, inode). */
static bool netns_is_ours(int nsfd)
{
	struct stat ours, theirs;

	return !stat("/proc/self/ns/net", &ours) && !fstat(nsfd, &theirs) &&
	       ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

/* Without SIOCGSKNS (it needs CAP_NET_ADMIN): is the socket with this
 * inode among the packet sockets of our namespace? */
static bool packet_sock_listed(ino_t ino)
{
	FILE *f = fopen("/proc/self/net/packet", "re");
	unsigned long long inode;
	char line[256];
	bool found = false;

	if (!f)
		return false;
	/* sk RefCnt Type Proto Iface R Rmem User Inode */
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %llu",
			       &inode) == 1 &&
			inode == (unsigned long long)ino;
	fclose(f);
	return found;
}

/*
 * CAP_NET_RAW, judged as uverbs judges it: on the process that sends the
 * command, when it sends it.  The library proves it with a raw packet
 * socket it opened for the call (the kernel let it only with CAP_NET_RAW
 * over the socket's network namespace), which must be of ours: one made
 * in a namespace of the caller's own proves nothing here.  Nothing of the
 * connection counts: not who opened it, nor who exported the context.
 */
bool req_net_raw(const struct srd_req *rq)
{
	int v = 0, nsfd;
	socklen_t len = sizeof(v);
	struct stat st;
	bool ours;

	if (rq->nfds != 1 || rq->fds[0] < 0)
		return false;
	if (getsockopt(rq->fds[0], SOL_SOCKET, SO_DOMAIN, &v, &len) ||
	    v != AF_PACKET)
		return false;
	len = sizeof(v);
	if (getsockopt(rq->fds[0], SOL_SOCKET, SO_TYPE, &v, &len) ||
	    v != SOCK_RAW || fstat(rq->fds[0], &st))
		return false;
	nsfd = ioctl(rq->fds[0], SIOCGSKNS);
	if (nsfd < 0)
		return packet_sock_listed(st.st_ino);
	ours = netns_is_ours(nsfd);
	close(nsfd);
	return ours;
}

/*
 * The client's memory access (common/proto.h): keep the fd when it is
 * what it claims, else fail OPEN_DEVICE.  Only the client's own mem file
 * is taken: it refers to the address space it was opened in and no other,
 * across exec, fork and pid reuse.  A pidfd is refused: process_vm_* on
 * its pid would reach the image of the next exec.
 */
static int mem_access_take(struct srd_client *c, const struct srd_req *rq,
			   uint32_t kind, int *fd)
{
	if (kind == SRD_MEM_PIDFD)
		return -EOPNOTSUPP;
	if (kind != SRD_MEM_PROCMEM)
		return -EINVAL;
	if (!procmem_fd_ok(*fd) || !rq->sender.known)
		return -EINVAL;
	c->mem->kind = SRD_MEM_PROCMEM;
	c->mem->fd = *fd;
	c->mem->pid = rq->sender.pid;
	*fd = -1; /* taken */
	return 0;
}

static int open_device(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_open_device_req *req = rq->data;
	struct srd_open_device_rep *rep;
	struct srd_device *dev;
	int p[2], mem_at, maps_at, nfds, err;

	if (c->dev)
		return -EINVAL;
	if (req->trace_flags & ~SRD_TRACE_CQE)
		return -EINVAL;
	if (req->flags &
		    ~(SRD_OPEN_F_BIND | SRD_OPEN_F_IMPORT | SRD_OPEN_F_MAPS) ||
	    (req->flags & SRD_OPEN_F_BIND && req->flags & SRD_OPEN_F_IMPORT) ||
	    (req->flags & SRD_OPEN_F_MAPS && req->mem_access == SRD_MEM_NONE))
		return -EINVAL;
	/* fds: trace, memory access, maps, then the BIND or IMPORT fd */
	mem_at = req->trace_flags ? 1 : 0;
	maps_at = mem_at + (req->mem_access != SRD_MEM_NONE ? 1 : 0);
	nfds = maps_at + (req->flags & SRD_OPEN_F_MAPS ? 1 : 0);
	if (rq->nfds !=
	    nfds + (req->flags & (SRD_OPEN_F_BIND | SRD_OPEN_F_IMPORT) ? 1 : 0))
		return -EINVAL;
	/* Only ever read for this client's own ODP MRs, so whatever file it
	 * hands over can mislead nobody but itself. */
	if (req->flags & SRD_OPEN_F_MAPS &&
	    !proc_fd_is(rq->fds[maps_at], "/maps", O_RDONLY))
		return -EINVAL;
	if (req->flags & SRD_OPEN_F_IMPORT) {
		err = share_import(c, rq->fds[nfds]);
		if (err)
			return err;
		dev = c->ctx->dev;
	} else {
		dev = device_by_index(c->d, req->index);
		if (!dev)
			return -ENODEV;
	}
	if (req->flags & SRD_OPEN_F_BIND) {
		err = share_bind(c, rq->fds[nfds]);
		if (err)
			return err;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		c->ctx = NULL;
		return -errno;
	}
	if (req->mem_access != SRD_MEM_NONE) {
		err = mem_access_take(c, rq, req->mem_access, &rq->fds[mem_at]);
		if (err) {
			c->ctx = NULL;
			c->bound = false;
			close(p[0]);
			close(p[1]);
			return err;
		}
	}
	if (req->flags & SRD_OPEN_F_MAPS) {
		c->mem->maps_fd = rq->fds[maps_at];
		rq->fds[maps_at] = -1; /* taken */
	}
	if (req->trace_flags) {
		c->trace_fd = trace_fd_take(c, &rq->fds[0]);
		c->trace_flags = c->trace_fd >= 0 ? req->trace_flags : 0;
	}
	c->async_wfd = p[1];
	c->dev = dev;
	rep = REP(rp, struct srd_open_device_rep);
	rep->num_comp_vectors = 1;
	rep->index = dev->index;
	/* The read end goes to the client blocking, as an async_fd is
	 * until the application changes it. */
	fcntl(p[0], F_SETFL, 0);
	rep_add_fd(rp, p[0], false);
	rep_add_fd(rp, c->d->doorbell_fd, true);
	rep_add_fd(rp, c->d->dev_page_fd, true);
	return 0;
}

/* What the daemon keeps of an open context: its async pipe's write end
 * and the files the client hands over (trace, mem, maps). */
static uint64_t open_fds(const struct srd_open_device_req *req)
{
	return 1 + (req->trace_flags ? 1 : 0) +
	       (req->mem_access != SRD_MEM_NONE ? 1 : 0) +
	       (req->flags & SRD_OPEN_F_MAPS ? 1 : 0);
}

static uint64_t kept_fds(const struct srd_client *c)
{
	return (c->async_wfd >= 0) + (c->trace_fd >= 0) + (c->mem->fd >= 0) +
	       (c->mem->maps_fd >= 0);
}

int cmd_open_device(struct srd_client *c, struct srd_req *rq,
		    struct srd_rep *rp)
{
	const struct srd_open_device_req *req = rq->data;
	uint64_t n = open_fds(req), kept;
	int err;

	/* Charged before anything is taken, so that over the limit the
	 * client gets EMFILE (or ENFILE) and the daemon keeps nothing. */
	err = limits_charge(c, SRD_RES_FDS, n);
	if (err)
		return err;
	err = open_device(c, rq, rp);
	kept = err ? 0 : kept_fds(c);
	limits_uncharge(c, SRD_RES_FDS, n > kept ? n - kept : 0);
	return err;
}
