/* SPDX-License-Identifier: MIT */
/*
 * HELLO, LIST_DEVICES and OPEN_DEVICE: what turns a connection into an
 * opened device context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/core.h"

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

int cmd_open_device(struct srd_client *c, struct srd_req *rq,
		    struct srd_rep *rp)
{
	const struct srd_open_device_req *req = rq->data;
	struct srd_open_device_rep *rep;
	struct srd_device *dev;
	int p[2];

	if (c->dev)
		return -EINVAL;
	if (req->trace_flags & ~SRD_TRACE_CQE)
		return -EINVAL;
	if (rq->nfds != (req->trace_flags ? 1 : 0))
		return -EINVAL;
	dev = device_by_index(c->d, req->index);
	if (!dev)
		return -ENODEV;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	if (req->trace_flags) {
		c->trace_fd = trace_fd_open(c, &rq->fds[0]);
		c->trace_flags = c->trace_fd >= 0 ? req->trace_flags : 0;
	}
	c->async_wfd = p[1];
	c->dev = dev;
	rep = REP(rp, struct srd_open_device_rep);
	rep->num_comp_vectors = 1;
	/* The read end goes to the client blocking, as an async_fd is
	 * until the application changes it. */
	fcntl(p[0], F_SETFL, 0);
	rep_add_fd(rp, p[0], false);
	rep_add_fd(rp, c->d->doorbell_fd, true);
	rep_add_fd(rp, c->d->dev_page_fd, true);
	return 0;
}
