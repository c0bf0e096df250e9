/* SPDX-License-Identifier: MIT */
/*
 * Client connections: accepting them, reading requests, sending replies,
 * and releasing everything a client owned when its connection closes (the
 * process exited, crashed or closed its context).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/nsfs.h>
#include <unistd.h>

#include "common/msg.h"
#include "daemon/core/core.h"
#include "daemon/core/flow.h"

/* Requests served per wakeup before giving others a turn. */
#define CLIENT_BATCH 16

/* The process's name, for listings: what ps shows. */
static void client_comm(struct srd_client *c)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
	fd = c->pid ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	n = read(fd, c->comm, sizeof(c->comm) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	c->comm[n] = '\0';
	if (n && c->comm[n - 1] == '\n')
		c->comm[n - 1] = '\0';
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif
#ifndef PIDFD_GET_PID_NAMESPACE
#define PIDFD_GET_PID_NAMESPACE _IO(0xFF, 5) /* Linux 6.11 */
#endif

/* The NSpid line of a status or pidfd fdinfo file: the pid from the
 * daemon's namespace down to the process's own.  Returns how many, 0 if
 * unknown (a pidfd of a process that is gone says -1). */
static uint32_t nspids_in(const char *path, pid_t *out)
{
	char line[256];
	uint32_t n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			long v = strtol(p, &end, 10);

			if (end == p || n == SRD_NS_DEPTH)
				break;
			if (v <= 0) {
				n = 0;
				break;
			}
			out[n++] = (pid_t)v;
			p = end;
		}
		break;
	}
	fclose(f);
	return n;
}

/* The process that connected, as the kernel recorded it at connect
 * (Linux 6.5): a pidfd, immune to the pid passing to another process
 * meanwhile.  -1 if the kernel has none. */
static int peer_pidfd(int fd)
{
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) ||
	    len != sizeof(int))
		return -1;
	return pidfd;
}

static bool pidfd_alive(int pidfd)
{
	return !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
}

/*
 * The pid namespaces of a process (struct srd_pidns), for what listings
 * show it: asked of its pidfd where there is one (its NSpid from the
 * pidfd's fdinfo, its namespace from PIDFD_GET_PID_NAMESPACE, or from
 * /proc/PID/ns/pid while the pidfd says the process still lives, so the
 * pid was not another's), else of /proc/PID.  Unknown (no /proc, or the
 * process went before it was asked): depth 0.
 */
static void pidns_read(struct srd_pidns *ns, int pidfd, pid_t pid)
{
	pid_t outer_first[SRD_NS_DEPTH];
	uint32_t n = 0;
	char path[64];
	struct stat st;
	int fd = -1;

	memset(ns, 0, sizeof(*ns));
	if (pidfd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
		n = nspids_in(path, outer_first);
		fd = n ? ioctl(pidfd, PIDFD_GET_PID_NAMESPACE, 0) : -1;
	} else if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		n = nspids_in(path, outer_first);
	}
	if (n && fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/pid",
			 (int)outer_first[0]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && pidfd >= 0 && !pidfd_alive(pidfd)) {
			close(fd);
			fd = -1;
		}
	}
	for (uint32_t i = 0; fd >= 0 && i < n; i++) {
		int up;

		if (fstat(fd, &st))
			break;
		ns->ino[i] = st.st_ino;
		ns->pid[i] = outer_first[n - 1 - i];
		ns->depth = i + 1;
		/* EPERM above the daemon's own namespace: the end. */
		up = ioctl(fd, NS_GET_PARENT);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
}

/* The connecting process's, from the pidfd the kernel recorded at
 * connect (Linux 6.5), immune to its pid passing on meanwhile. */
static void client_pidns(struct srd_client *c)
{
	int pidfd = peer_pidfd(c->fd);

	pidns_read(&c->ns, pidfd, c->pid);
	if (pidfd >= 0)
		close(pidfd);
}

/* Is a's namespace b's own or one below it? */
static bool pidns_within(const struct srd_pidns *a, const struct srd_pidns *b)
{
	return a->depth && b->depth && a->depth >= b->depth &&
	       a->ino[a->depth - b->depth] == b->ino[0];
}

/*
 * Whose view a listing request is judged on: its sender's, when the
 * kernel said who sent it.  A sender other than the process that
 * connected (a child, or a process the connection was passed to) is
 * looked up once per request; its view is taken only where it is the
 * connection's or narrower, so a sender gone and its pid another's by
 * then can make it narrower, never wider.  NULL: unknown.
 */
void client_view(struct srd_client *c)
{
	int pidfd;

	c->view = NULL;
	if (!c->sender.known)
		return;
	if (c->sender.pid == c->pid) {
		c->view = c->ns.depth ? &c->ns : NULL;
		return;
	}
	pidfd = (int)syscall(SYS_pidfd_open, c->sender.pid, 0);
	pidns_read(&c->sender_ns, pidfd, c->sender.pid);
	if (pidfd >= 0)
		close(pidfd);
	if (!c->sender_ns.depth)
		return;
	if (!c->ns.depth || pidns_within(&c->sender_ns, &c->ns))
		c->view = &c->sender_ns;
}

pid_t client_pid_seen_by(const struct srd_client *owner,
			 const struct srd_client *who)
{
	const struct srd_pidns *view = who->view;
	const struct srd_pidns *ons = &owner->ns;

	/* Whose view is unknown is shown its own objects only, and an
	 * owner of unknown namespace only to the daemon's own. */
	if (!view)
		return owner == who ? owner->pid : 0;
	if (!ons->depth)
		return view->depth == 1 ? owner->pid : 0;
	for (uint32_t i = 0; i < ons->depth; i++)
		if (ons->ino[i] == view->ino[0])
			return ons->pid[i];
	return 0;
}

/* Over a limit at accept: the reply to the HELLO the library is about to
 * send, queued before the close, says why (it reads it even when its own
 * send met the closed socket). */
static void client_refuse(int fd, int err)
{
	struct srd_msg_hdr h = { .op = SRD_CMD_HELLO, .status = err };

	if (srd_msg_send(fd, &h, NULL, NULL, 0) < 0)
		srd_log(SRD_LOG_DEBUG, "refusal not sent");
}

static void client_new(struct srd_daemon *d, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct srd_client *c = calloc(1, sizeof(*c));
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int err;

	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	c->async_wfd = -1;
	c->trace_fd = -1;
	c->mem = client_mem_new();
	if (!c->mem) {
		close(fd);
		free(c);
		return;
	}
	/* Every request sent from now on says who sent it.  The library
	 * sends nothing but HELLO before its reply, so all it asks after
	 * that carries its sender; a message that does not gets no right
	 * that depends on who sent it. */
	if (srd_msg_pass_cred(fd)) {
		close(fd);
		client_mem_put(c->mem);
		free(c);
		return;
	}
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->cred = true;
	}
	client_comm(c);
	client_pidns(c);
	err = limits_client_add(c);
	if (err) {
		client_refuse(fd, err);
		client_mem_put(c->mem);
		close(fd);
		free(c);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		limits_client_gone(c);
		client_mem_put(c->mem);
		close(fd);
		free(c);
		return;
	}
	list_add_tail(&d->clients, &c->node);
	d->nclients++;
	srd_log(SRD_LOG_DEBUG, "client pid %d connected", (int)c->pid);
}

/*
 * Out of fds, a pending connection would keep the listening socket
 * readable and the loop spinning: give up a spare fd kept for this, take
 * the connection and close it, so the client sees an error at once.
 */
static int spare_fd = -1;

void client_spare_fd(bool hold)
{
	if (hold && spare_fd < 0)
		spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!hold && spare_fd >= 0) {
		close(spare_fd);
		spare_fd = -1;
	}
}

static void client_refuse_one(struct srd_daemon *d)
{
	int fd;

	client_spare_fd(false);
	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	client_spare_fd(true);
	srd_log(SRD_LOG_WARN, "out of file descriptors: connection refused");
}

void client_accept_all(struct srd_daemon *d)
{
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				client_refuse_one(d);
			return; /* EAGAIN: done */
		}
		client_new(d, fd);
	}
}

/* Destroy every object of one table that c owns. */
#define DESTROY_OWNED(tbl, type, fn)                                       \
	do {                                                               \
		for (uint32_t i = (tbl)->first; i < table_end(tbl); i++) { \
			type *o = table_get((tbl), i);                     \
			if (o && o->owner == c)                            \
				fn(o);                                     \
		}                                                          \
	} while (0)

void client_destroy(struct srd_client *c)
{
	struct srd_daemon *d = c->d;

	c->dead = true;
	share_client_gone(c);
	cm_client_gone(c);
	/* Users before what they use: the engine lets go of a QP first.
	 * Shared XRC target QPs pass to their other holders. */
	xrc_client_gone(c);
	flow_client_gone(c);
	DESTROY_OWNED(&d->qps_by_num, struct srd_qp, qp_destroy);
	DESTROY_OWNED(&d->srqs, struct srd_srq, srq_destroy);
	DESTROY_OWNED(&d->xrcds, struct srd_xrcd_handle, xrcd_handle_destroy);
	DESTROY_OWNED(&d->cqs, struct srd_cq, cq_destroy);
	DESTROY_OWNED(&d->ahs, struct srd_ah, ah_destroy);
	DESTROY_OWNED(&d->mws, struct srd_mw, mw_destroy);
	DESTROY_OWNED(&d->mrs, struct srd_mr, mr_destroy);
	DESTROY_OWNED(&d->dms, struct srd_dm, dm_destroy);
	DESTROY_OWNED(&d->channels, struct srd_comp_channel, channel_destroy);
	DESTROY_OWNED(&d->pds, struct srd_pd, pd_destroy);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->async_wfd >= 0)
		close(c->async_wfd);
	if (c->trace_fd >= 0)
		close(c->trace_fd);
	engine_mem_gone(c->mem);
	client_mem_put(c->mem);
	limits_client_gone(c);
	list_del(&c->node);
	if (--d->nclients == 0)
		d->idle_since = srd_now_ns();
	if (c->trace_dropped)
		srd_log(SRD_LOG_INFO, "pid %d: %llu CQE trace lines dropped",
			(int)c->pid, (unsigned long long)c->trace_dropped);
	srd_log(SRD_LOG_DEBUG, "client pid %d gone", (int)c->pid);
	free(c);
}

struct srd_client_mem *client_mem_new(void)
{
	struct srd_client_mem *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->refs = 1;
	m->kind = SRD_MEM_NONE;
	m->fd = -1;
	m->maps_fd = -1;
	return m;
}

struct srd_client_mem *client_mem_get(struct srd_client_mem *m)
{
	m->refs++;
	return m;
}

void client_mem_put(struct srd_client_mem *m)
{
	if (!m || --m->refs)
		return;
	if (m->fd >= 0)
		close(m->fd);
	if (m->maps_fd >= 0)
		close(m->maps_fd);
	free(m);
}

void client_async_event(struct srd_client *c, enum ibv_event_type type,
			uint64_t user_handle)
{
	struct srd_async_event ev = {
		.event_type = type,
		.port_num = (type == IBV_EVENT_PORT_ACTIVE ||
			     type == IBV_EVENT_PORT_ERR ||
			     type == IBV_EVENT_LID_CHANGE ||
			     type == IBV_EVENT_PKEY_CHANGE ||
			     type == IBV_EVENT_GID_CHANGE ||
			     type == IBV_EVENT_SM_CHANGE ||
			     type == IBV_EVENT_CLIENT_REREGISTER)
				    ? 1
				    : 0,
		.user_handle = user_handle,
	};

	if (!c || c->dead || c->async_wfd < 0)
		return;
	/* Non-blocking: a client that never reads its events loses the
	 * newest ones rather than stalling the device. */
	if (write(c->async_wfd, &ev, sizeof(ev)) != sizeof(ev))
		srd_log(SRD_LOG_DEBUG, "async event %u to pid %d dropped", type,
			(int)c->pid);
}

static void close_unkept(struct srd_rep *rp)
{
	for (int i = 0; i < rp->nfds; i++)
		if (!(rp->keep_mask & (1u << i)))
			close(rp->fds[i]);
	rp->nfds = 0;
}

/* Serve one request.  Returns 0 to go on, -EAGAIN when nothing is left to
 * read, or another negative errno when the connection must close. */
static int client_serve_one(struct srd_client *c)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_msg_hdr h = { 0 }, rh = { 0 };
	struct srd_req rq = { 0 };
	static struct srd_rep rp; /* large; the daemon is single threaded */
	int fds[SRD_MAX_FDS];
	int nfds, n, ret;

	memset(buf, 0, sizeof(h));
	n = srd_msg_recv_cred(c->fd, buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS,
			      &rq.sender);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0 && n != -EMSGSIZE && n != -EBADMSG)
		return n;
	memcpy(&h, buf, sizeof(h));
	/* Sent by us for another connection's bind: no request, answered
	 * as an unknown one (every request gets one reply). */
	if (n >= 0 && h.op == SRD_CMD_CTX_PROBE)
		share_stray_probe(c);
	rp.len = 0;
	rp.nfds = 0;
	rp.keep_mask = 0;
	rp.err_payload = false;
	if (n < 0) {
		/* Oversized, too many fds, or a length field that lies:
		 * the fds are already closed; answer and carry on. */
		ret = -EINVAL;
	} else {
		rq.op = h.op;
		rq.data = buf + sizeof(h);
		rq.len = h.len;
		rq.fds = fds;
		rq.nfds = nfds;
		rq.conn = c;
		c->sender = rq.sender;
		c->view = NULL;
		ret = dispatch(c, &rq, &rp);
		c->sender.known = false;
		c->view = NULL;
		/* Whatever the handler did not keep is closed here, so a
		 * bad request never leaks what came with it. */
		srd_close_fds(fds, nfds);
	}
	if (ret) {
		close_unkept(&rp);
		if (!rp.err_payload)
			rp.len = 0;
	}
	rh.op = h.op;
	rh.len = rp.len;
	rh.status = ret;
	n = srd_msg_send(c->fd, &rh, rp.data, rp.fds, rp.nfds);
	close_unkept(&rp);
	if (n < 0) {
		/* A client only ever has one request in flight, so a full
		 * socket means it does not read its replies. */
		return n == -EAGAIN ? -EPIPE : n;
	}
	return 0;
}

void client_input(struct srd_client *c, uint32_t events)
{
	int ret = 0;

	if (events & EPOLLIN) {
		for (int i = 0; i < CLIENT_BATCH; i++) {
			ret = client_serve_one(c);
			if (ret)
				break;
		}
		if (ret == -EAGAIN)
			ret = 0;
	}
	if (!ret && (events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
		ret = -ECONNRESET;
	if (ret)
		client_destroy(c);
}
