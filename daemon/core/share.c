/* SPDX-License-Identifier: MIT */
/*
 * Shared contexts (ibv_import_device, ibv_import_pd/mr/dm).  In the kernel
 * a context is the uverbs file: whoever holds a descriptor of it holds the
 * context.  Here a context's cmd_fd is the client's end of its command
 * connection.  Possession of that end is the capability, as possession of
 * the uverbs file is:
 *   - at OPEN_DEVICE the library hands over its own end (SRD_OPEN_F_BIND).
 *     We send a probe with a random token through it; the token must then
 *     be the next message on this very connection, so the fd is proven to
 *     be its other end, and its inode names the context from then on;
 *   - an importer opens a connection of its own (two processes never share
 *     one request/reply channel) and hands over the cmd_fd it holds
 *     (SRD_OPEN_F_IMPORT): the context bound to that inode, while its
 *     connection is up, is the one it attaches to.  A process without the
 *     descriptor has nothing to show: no number or handle will do.
 * The context lives while its connection does, i.e. while any process
 * holds the cmd_fd (an importer keeps a duplicate), as a ufile lives while
 * any descriptor of it is open.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/core/core.h"

struct probe_msg {
	struct srd_msg_hdr h;
	struct srd_ctx_probe p;
};

static void share_reject(struct srd_client *c, const char *why)
{
	c->d->share_rejects++;
	srd_log(SRD_LOG_INFO, "pid %d: context sharing refused: %s",
		(int)c->pid, why);
}

/* Is fd a client's end of a connection to our listening socket?  Fills
 * *st on success.  Anything else is no softrdma cmd_fd. */
static bool is_our_client_end(struct srd_daemon *d, int fd, struct stat *st)
{
	struct sockaddr_un ours, peer;
	socklen_t olen = sizeof(ours), plen = sizeof(peer), len;
	int v;

	if (fd < 0 || fstat(fd, st) || !S_ISSOCK(st->st_mode))
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) || v != AF_UNIX)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) ||
	    v != SOCK_SEQPACKET)
		return false;
	if (d->listen_fd < 0 ||
	    getsockname(d->listen_fd, (struct sockaddr *)&ours, &olen) ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen))
		return false;
	return olen == plen && olen > sizeof(sa_family_t) &&
	       !memcmp(&ours, &peer, olen);
}

int share_bind(struct srd_client *c, int fd)
{
	struct probe_msg out = { .h = { .op = SRD_CMD_CTX_PROBE,
					.len = sizeof(struct srd_ctx_probe) } };
	struct probe_msg in;
	struct stat st;
	ssize_t n;

	if (!is_our_client_end(c->d, fd, &st)) {
		share_reject(c, "bind: not a connection to this daemon");
		return -EINVAL;
	}
	if (getrandom(out.p.token, sizeof(out.p.token), 0) !=
	    (ssize_t)sizeof(out.p.token))
		return -EIO;
	n = send(fd, &out, sizeof(out), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(out)) {
		share_reject(c, "bind: probe not sent");
		return n < 0 ? -errno : -EIO;
	}
	/* The client waits for this reply: nothing but our probe may be
	 * queued here.  If the probe went elsewhere it arrives there as a
	 * stray and is dropped (share_stray_probe). */
	memset(&in, 0, sizeof(in));
	n = recv(c->fd, &in, sizeof(in), MSG_DONTWAIT | MSG_PEEK);
	if (n != (ssize_t)sizeof(in) || memcmp(&in, &out, sizeof(in))) {
		share_reject(c, "bind: the fd is not this connection's");
		return -EINVAL;
	}
	if (recv(c->fd, &in, sizeof(in), MSG_DONTWAIT) != (ssize_t)sizeof(in))
		return -EIO;
	c->bound = true;
	c->cmd_dev = st.st_dev;
	c->cmd_ino = st.st_ino;
	return 0;
}

/* Has the peer of a context's connection hung up?  Then the inode it was
 * bound to is no longer its end and may name another socket. */
static bool hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) != 0 &&
	       (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL));
}

int share_import(struct srd_client *c, int fd)
{
	struct srd_daemon *d = c->d;
	struct stat st;

	/* As rdma-core's ibv_import_device: a descriptor that is no
	 * command fd of a device is EINVAL. */
	if (!is_our_client_end(d, fd, &st)) {
		share_reject(c, "import: not a softrdma cmd_fd");
		return -EINVAL;
	}
	list_for_each (&d->clients, it) {
		struct srd_client *x = list_entry(it, struct srd_client, node);

		if (x == c || !x->bound || x->dead || !x->dev ||
		    x->cmd_ino != st.st_ino || x->cmd_dev != st.st_dev)
			continue;
		if (hung_up(x->fd))
			break;
		c->ctx = x;
		return 0;
	}
	share_reject(c, "import: no open context has that cmd_fd");
	return -EINVAL;
}

void share_stray_probe(struct srd_client *c)
{
	share_reject(c, "a probe of another connection's bind came here");
}

void share_client_gone(struct srd_client *c)
{
	if (c->ctx)
		return; /* an importer: what it made is the context's */
	/* Its importers lose the device, as on a disassociated uverbs
	 * file: their connections end (each is destroyed from its own
	 * hang-up, never from here: the loop may hold its event). */
	list_for_each (&c->d->clients, it) {
		struct srd_client *x = list_entry(it, struct srd_client, node);

		if (x->ctx != c)
			continue;
		x->ctx = NULL;
		x->dev = NULL;
		shutdown(x->fd, SHUT_RDWR);
	}
}

/* uverbs keeps every object of a file in one id space and tells a handle
 * of another type (EINVAL) from a free one (ENOENT).  Our tables are per
 * type: a handle that names another of c's objects is EINVAL. */
static int absent(struct srd_client *c, uint32_t handle)
{
	if (pd_get(c, handle) || mr_get(c, handle) || cq_get(c, handle) ||
	    qp_get(c, handle) || srq_get(c, handle) || dm_get(c, handle) ||
	    channel_get(c, handle) || xrcd_get(c, handle))
		return -EINVAL;
	return -ENOENT;
}

int cmd_import_pd(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;

	(void)rp;
	if (req->rsvd)
		return -EINVAL;
	return pd_get(c, req->handle) ? 0 : absent(c, req->handle);
}

int cmd_import_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_import_mr_req *req = rq->data;
	struct srd_mr *mr = mr_get(c, req->handle);
	struct srd_import_mr_rep *rep;

	if (!mr)
		return absent(c, req->handle);
	/* An ibv_mr names its PD: it must be the MR's. */
	if (pd_get(c, req->pd_handle) != mr->pd)
		return -EINVAL;
	rep = REP(rp, struct srd_import_mr_rep);
	rep->lkey = mr->lkey;
	rep->rkey = mr->rkey;
	rep->iova = mr->iova;
	rep->length = mr->length;
	rep->access = (uint32_t)mr->access;
	return 0;
}

int cmd_import_dm(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_dm *dm = dm_get(c, req->handle);
	struct srd_import_dm_rep *rep;

	if (!dm)
		return absent(c, req->handle);
	if (req->rsvd)
		return -EINVAL;
	rep = REP(rp, struct srd_import_dm_rep);
	rep->length = dm->length;
	rep->map_len = dm->map_len;
	rep_add_fd(rp, dm->fd, true);
	return 0;
}
