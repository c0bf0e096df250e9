/* SPDX-License-Identifier: MIT */
/*
 * XRC domains (ibv_open_xrcd) and the XRC_RECV QPs that live in them.
 *
 * As uverbs does, a domain opened through a file is keyed by the file's
 * inode (the daemon fstat()s the fd the client passes), so every context
 * of the device that opens the same file shares one domain; fd -1 gives a
 * private one.  Joining a domain takes a descriptor open for reading: the
 * file's permissions say who may share it.  The domain keeps the first
 * descriptor until it goes, as uverbs holds the inode, so the inode number
 * cannot pass to a new file that would then name the old domain.  Each
 * context holds its own handle, which counts the SRQs and QPs made or
 * opened through it: closing a handle that still has any is EBUSY.  An
 * XRC_RECV QP is held by its creator and by every context that opened it
 * (ibv_open_qp); it lives until the last of them lets go, and an opener
 * inherits it when its owner goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/core/core.h"

struct srd_xrcd_handle *xrcd_get(struct srd_client *c, uint32_t handle)
{
	struct srd_xrcd_handle *xh = table_get(&c->d->xrcds, handle);

	return xh && xh->owner == c ? xh : NULL;
}

static struct srd_xrcd *xrcd_find(struct srd_daemon *d,
				  const struct srd_device *dev,
				  const struct stat *st)
{
	list_for_each (&d->xrcds_list, n) {
		struct srd_xrcd *x = container_of(n, struct srd_xrcd, node);

		if (x->shared && x->dev == dev && x->st_dev == st->st_dev &&
		    x->st_ino == st->st_ino)
			return x;
	}
	return NULL;
}

/* The file of a domain: a real descriptor (uverbs' fdget() refuses O_PATH
 * ones: EBADF) of a file that holds no descriptors, open for reading.  uverbs takes a write-only one too; here
 * it is EBADF as read(2) would say, or anyone who may only write the file
 * could reach its owner's target QPs and SRQs. */
static int xrcd_file(int fd, struct stat *st)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	if ((fl & O_ACCMODE) != O_RDONLY && (fl & O_ACCMODE) != O_RDWR)
		return -EBADF;
	if (fstat(fd, st))
		return -EBADF;
	/* A domain holds its file for as long as it lives.  A socket (or
	 * an anonymous inode) can hold descriptors, the client's own
	 * connection among them, which would then never close, nor free
	 * the domain: only files that hold none. */
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) &&
	    !S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode) &&
	    !S_ISFIFO(st->st_mode))
		return -EINVAL;
	return 0;
}

static void xrcd_free(struct srd_xrcd *x)
{
	list_del(&x->node);
	if (x->fd >= 0)
		close(x->fd);
	free(x);
}

int cmd_open_xrcd(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_open_xrcd_req *req = rq->data;
	struct srd_daemon *d = c->d;
	struct srd_xrcd *x = NULL;
	struct srd_xrcd_handle *xh;
	struct stat st;
	int64_t h;
	int err;

	if (req->has_fd) {
		/* uverbs: fdget() fails first, then the lookup decides. */
		if (rq->nfds != 1)
			return -EBADF;
		err = xrcd_file(rq->fds[0], &st);
		if (err)
			return err;
		x = xrcd_find(d, c->dev, &st);
		if (!x && !(req->oflags & O_CREAT))
			return -EAGAIN;
		if (x && (req->oflags & O_EXCL))
			return -EINVAL;
	} else if (rq->nfds) {
		return -EINVAL;
	}
	/* uverbs has no limit of its own; a share of the table per client
	 * and per user keeps one from filling it (limits.c). */
	err = limits_charge(c, SRD_RES_XRCD, 1);
	if (err)
		return err;
	xh = calloc(1, sizeof(*xh));
	if (!xh) {
		limits_uncharge(c, SRD_RES_XRCD, 1);
		return -ENOMEM;
	}
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x) {
			limits_uncharge(c, SRD_RES_XRCD, 1);
			free(xh);
			return -ENOMEM;
		}
		x->dev = c->dev;
		x->fd = -1;
		if (req->has_fd) {
			x->shared = true;
			x->st_dev = st.st_dev;
			x->st_ino = st.st_ino;
			x->fd = rq->fds[0];
			rq->fds[0] = -1; /* taken */
		}
		list_add_tail(&d->xrcds_list, &x->node);
	}
	h = table_alloc(&d->xrcds, xh);
	if (h < 0) {
		if (!x->opens)
			xrcd_free(x);
		limits_uncharge(c, SRD_RES_XRCD, 1);
		free(xh);
		return h;
	}
	xh->handle = h;
	xh->owner = c;
	xh->xrcd = x;
	x->opens++;
	REP(rp, struct srd_handle_rep)->handle = xh->handle;
	return 0;
}

void xrcd_handle_destroy(struct srd_xrcd_handle *xh)
{
	struct srd_xrcd *x = xh->xrcd;

	table_free(&xh->owner->d->xrcds, xh->handle);
	limits_uncharge(xh->owner, SRD_RES_XRCD, 1);
	if (--x->opens == 0)
		xrcd_free(x);
	free(xh);
}

int cmd_close_xrcd(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_xrcd_handle *xh = xrcd_get(c, req->handle);

	if (!xh)
		return -EINVAL;
	/* uverbs: ib_destroy_usecnt() on the handle's own count. */
	if (xh->refcnt)
		return -EBUSY;
	xrcd_handle_destroy(xh);
	return 0;
}

struct srd_qp_open *xrc_qp_open_of(const struct srd_qp *qp,
				   const struct srd_client *c)
{
	if (qp->type != IBV_QPT_XRC_RECV)
		return NULL;
	list_for_each (&qp->opens, n) {
		struct srd_qp_open *o =
			container_of(n, struct srd_qp_open, node);

		if (o->c == c)
			return o;
	}
	return NULL;
}

int cmd_open_qp(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_open_qp_req *req = rq->data;
	struct srd_xrcd_handle *xh = xrcd_get(c, req->xrcd_handle);
	struct srd_qp *qp = qp_lookup_num(c->d, req->qp_num);
	struct srd_open_qp_rep *rep;
	struct srd_qp_open *o;

	if (!xh)
		return -EINVAL;
	/* ib_open_qp: a target QP of this very domain, or nothing. */
	if (!qp || qp->type != IBV_QPT_XRC_RECV || qp->xrcd != xh->xrcd)
		return -EINVAL;
	if (xrc_qp_open_of(qp, c))
		return -EINVAL; /* one handle per context */
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->c = c;
	o->xh = xh;
	o->user_handle = req->user_handle;
	xh->refcnt++;
	list_add_tail(&qp->opens, &o->node);
	rep = REP(rp, struct srd_open_qp_rep);
	rep->handle = qp->handle;
	rep->qp_num = qp->qpn;
	return 0;
}

static void qp_open_free(struct srd_qp_open *o)
{
	list_del(&o->node);
	o->xh->refcnt--;
	free(o);
}

void xrc_qp_close(struct srd_qp *qp, struct srd_client *c)
{
	struct srd_qp_open *o = xrc_qp_open_of(qp, c), *next;

	if (!o)
		return;
	qp_open_free(o);
	if (list_empty(&qp->opens)) {
		qp_destroy(qp);
		return;
	}
	if (qp->owner != c)
		return;
	/* The next holder inherits the QP, its events and its charge. */
	next = container_of(qp->opens.n.next, struct srd_qp_open, node);
	limits_uncharge(c, SRD_RES_QP, 1);
	limits_uncharge(c, SRD_RES_MAPS, 1);
	limits_charge_over(next->c, SRD_RES_QP, 1);
	limits_charge_over(next->c, SRD_RES_MAPS, 1);
	qp->owner = next->c;
	qp->user_handle = next->user_handle;
}

void xrc_client_gone(struct srd_client *c)
{
	struct srd_table *t = &c->d->qps_by_num;

	for (uint32_t i = t->first; i < table_end(t); i++) {
		struct srd_qp *qp = table_get(t, i);

		if (qp && qp->type == IBV_QPT_XRC_RECV)
			xrc_qp_close(qp, c);
	}
}

struct srd_srq *xrc_srq_lookup(struct srd_daemon *d, uint32_t srqn,
			       const struct srd_xrcd *xrcd)
{
	struct srd_srq *srq = table_get(&d->srqs, srqn);

	if (!srq || !srq->xh || srq->xh->xrcd != xrcd)
		return NULL;
	return srq;
}
