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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "daemon/core/core.h"

int cmd_hello(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_hello_req *req = rq->data;
	struct srd_hello_rep *rep;

	if (c->hello)
		return -EINVAL;
	if (req->version != SRD_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	/* The pid is what process_vm_* will be aimed at: it must be the
	 * peer's own, as the kernel saw it connect. */
	if (c->pid && req->pid != (uint32_t)c->pid) {
		srd_log(SRD_LOG_WARN, "hello from pid %u on a socket of pid %d",
			req->pid, (int)c->pid);
		return -EPERM;
	}
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

/*
 * The trace fd is the client's stderr.  Writing to it must never block the
 * device, and setting O_NONBLOCK on it would change the client's own file
 * description.  A socket is written with MSG_DONTWAIT, which asks for
 * non-blocking per call.  Pipes, FIFOs and terminals get a description of
 * our own, opened non-blocking through /proc.  A regular file never blocks
 * for long, and must be written through the client's own description,
 * whose offset the client's writes share.  Anything else is traced only if
 * its description is non-blocking already; otherwise there is no trace.
 * Returns the fd to write to, or -1.
 */
static int trace_fd_open(struct srd_client *c, int *fd)
{
	struct stat st;
	char path[64];
	int nfd, fl;

	if (fstat(*fd, &st))
		return -1;
	if (S_ISSOCK(st.st_mode)) {
		c->trace_sock = true;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
		nfd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC |
					 O_NOCTTY);
		if (nfd >= 0)
			return nfd;
		fl = fcntl(*fd, F_GETFL);
		if (fl < 0 || !(fl & O_NONBLOCK)) {
			srd_log(SRD_LOG_WARN,
				"pid %d: trace fd cannot be written without "
				"blocking: no CQE trace",
				(int)c->pid);
			return -1;
		}
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

/* The pid a pidfd names, from its fdinfo (in the pid namespace of the
 * /proc mount); -1 if fd is no pidfd, 0 if there is no /proc to tell. */
static pid_t pidfd_pid(int fd)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	long pid;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nPid:");
	if (!p)
		return -1;
	pid = strtol(p + 5, NULL, 10);
	return pid > 0 ? (pid_t)pid : -1;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

/* A pidfd of the process that connected, as the kernel saw it; -1. */
static int peer_pidfd(const struct srd_client *c)
{
	socklen_t len = sizeof(int);
	int fd = -1;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) ||
	    len != sizeof(int))
		return -1;
	return fd;
}

/* CapEff of /proc/PID/status (0 when it cannot be read), and whether the
 * process is in the daemon's user namespace, where the bits mean what
 * they say here. */
static uint64_t proc_cap_eff(pid_t pid, bool *same_userns)
{
	char path[64], buf[4096], *p;
	struct stat own, peer;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	*same_userns = !stat("/proc/self/ns/user", &own) &&
		       !stat(path, &peer) && own.st_dev == peer.st_dev &&
		       own.st_ino == peer.st_ino;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nCapEff:");
	return p ? strtoull(p + 8, NULL, 16) : 0;
}

#define SRD_CAP_NET_RAW 13

/*
 * No pid is trusted on its own: the pidfd (the kernel's own of the peer,
 * or the client's, already checked to name the peer) is asked after the
 * read whether the process still lives.  While it does its pid cannot
 * name another process, so what was read was its own.
 */
bool client_net_raw(struct srd_client *c)
{
	bool kernel_fd = true, same_ns = false, ok;
	uint64_t eff = 0;
	int pidfd;
	pid_t pid;

	if (!c->cred)
		return false;
	if (c->uid == 0)
		return true;
	pidfd = peer_pidfd(c);
	if (pidfd < 0) {
		if (c->mem->kind != SRD_MEM_PIDFD)
			return false;
		pidfd = c->mem->fd;
		kernel_fd = false;
	}
	pid = pidfd_pid(pidfd);
	if (pid > 0)
		eff = proc_cap_eff(pid, &same_ns);
	ok = pid > 0 && same_ns && (eff >> SRD_CAP_NET_RAW & 1) &&
	     !srd_pidfd_gone(pidfd);
	if (kernel_fd)
		close(pidfd);
	return ok;
}

/*
 * The client's memory access (common/proto.h): keep the fd when it is
 * what it claims, else fail OPEN_DEVICE.  A pidfd must name the process
 * that connected, as the kernel saw it (SO_PEERCRED): process_vm_* runs
 * with our rights, not the client's.  fdinfo counts pids in the namespace
 * of the /proc mount, SO_PEERCRED in ours: the kernel's own pidfd of the
 * peer is the better witness.
 */
static int mem_access_take(struct srd_client *c, uint32_t kind, int *fd)
{
	int own;

	switch (kind) {
	case SRD_MEM_PROCMEM:
		if (!procmem_fd_ok(*fd))
			return -EINVAL;
		break;
	case SRD_MEM_PIDFD:
		if (!c->pid)
			return -EINVAL;
		/* The kernel's own pidfd of the peer where it gives one;
		 * else the client's, if its fdinfo names the peer's pid. */
		if (pidfd_pid(*fd) < 0)
			return -EINVAL;
		own = peer_pidfd(c);
		if (own >= 0) {
			close(*fd);
			*fd = own;
		} else if (pidfd_pid(*fd) != c->pid) {
			return -EINVAL;
		}
		c->mem->pid = c->pid;
		break;
	default:
		return -EINVAL;
	}
	c->mem->kind = (enum srd_mem_access)kind;
	c->mem->fd = *fd;
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
		err = mem_access_take(c, req->mem_access, &rq->fds[mem_at]);
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
		c->trace_fd = trace_fd_open(c, &rq->fds[0]);
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
