/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation (rings in a memfd, a QPN), query, destruction, and
 * the error state entered from inside the device.  MODIFY_QP is in
 * qp_modify.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/admin/admin.h"
#include "daemon/core/core.h"
#include "daemon/core/flow.h"
#include "daemon/core/mcast.h"

#define QP_MAX_INLINE 512

struct srd_qp *qp_get(struct srd_client *c, uint32_t handle)
{
	struct srd_qp *qp = table_get(&c->d->qps_by_num, handle);

	if (qp && qp->type == IBV_QPT_XRC_RECV)
		return xrc_qp_open_of(qp, c) ? qp : NULL;
	return qp && qp->owner == c ? qp : NULL;
}

struct srd_qp *qp_lookup_num(struct srd_daemon *d, uint32_t qpn)
{
	return table_get(&d->qps_by_num, qpn);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static size_t page_align(size_t v)
{
	return (v + SRD_PAGE_SIZE - 1) & ~((size_t)SRD_PAGE_SIZE - 1);
}

static int qp_check_type(uint32_t type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_RAW_PACKET:
		return 0;
	case IBV_QPT_DRIVER:
		return -EOPNOTSUPP; /* real QP types this device lacks */
	default:
		return -EINVAL;
	}
}

static int qp_check_cap(const struct srd_device *dev,
			const struct ibv_qp_cap *cap, bool no_rq)
{
	const struct ibv_device_attr *a = &dev->attr;

	if (cap->max_send_wr > (uint32_t)a->max_qp_wr ||
	    cap->max_send_sge > (uint32_t)a->max_sge ||
	    cap->max_inline_data > QP_MAX_INLINE)
		return -EINVAL;
	if (!no_rq && (cap->max_recv_wr > (uint32_t)a->max_qp_wr ||
		       cap->max_recv_sge > (uint32_t)a->max_sge))
		return -EINVAL;
	return 0;
}

/* Ring geometry and granted capabilities: every queue gets a power of two
 * of slots, and a slot's room is granted as SGEs and inline bytes. */
static void qp_geometry(struct srd_qp *qp, const struct ibv_qp_cap *req,
			uint32_t max_sge)
{
	struct srd_wq *sq = &qp->sq, *rq = &qp->rq;
	uint32_t room;

	if (qp->type == IBV_QPT_XRC_RECV) {
		/* A target QP: no queue of its own at all. */
		memset(sq, 0, sizeof(*sq));
		memset(rq, 0, sizeof(*rq));
		memset(&qp->cap, 0, sizeof(qp->cap));
		return;
	}

	sq->entries = srd_pow2_roundup(req->max_send_wr ? req->max_send_wr : 1);
	sq->slot_size =
		srd_send_slot_size(req->max_send_sge, req->max_inline_data);
	room = sq->slot_size - sizeof(struct srd_send_wqe);
	sq->max_wr = sq->entries;
	sq->max_sge = min_u32(room / sizeof(struct srd_sge), max_sge);
	qp->cap.max_send_wr = sq->max_wr;
	qp->cap.max_send_sge = sq->max_sge;
	qp->cap.max_inline_data = min_u32(room, QP_MAX_INLINE);
	if (qp->srq || qp->type == IBV_QPT_XRC_SEND) {
		memset(rq, 0, sizeof(*rq));
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
		return;
	}
	rq->entries = srd_pow2_roundup(req->max_recv_wr ? req->max_recv_wr : 1);
	rq->slot_size = srd_recv_slot_size(req->max_recv_sge);
	room = rq->slot_size - sizeof(struct srd_recv_wqe);
	rq->max_wr = rq->entries;
	rq->max_sge = min_u32(room / sizeof(struct srd_sge), max_sge);
	qp->cap.max_recv_wr = rq->max_wr;
	qp->cap.max_recv_sge = rq->max_sge;
}

/* The QP's memfd: [ctl page][SQ ring][RQ ring], rings page aligned. */
static int qp_map_rings(struct srd_qp *qp, uint32_t *sq_off, uint32_t *rq_off)
{
	size_t sq_bytes = (size_t)qp->sq.entries * qp->sq.slot_size;
	size_t rq_bytes = (size_t)qp->rq.entries * qp->rq.slot_size;
	uint8_t *map;
	int fd;

	*sq_off = SRD_RING_CTL_BYTES;
	*rq_off = *sq_off + page_align(sq_bytes);
	qp->map_len = *rq_off + page_align(rq_bytes);
	fd = shm_create("softrdma-qp", qp->map_len, 0, &qp->map);
	if (fd < 0)
		return fd;
	map = qp->map;
	qp->sq.ctl = &((struct srd_qp_ctl *)map)->sq;
	qp->sq.ring = map + *sq_off;
	if (qp->rq.entries) {
		qp->rq.ctl = &((struct srd_qp_ctl *)map)->rq;
		qp->rq.ring = map + *rq_off;
	} else {
		*rq_off = 0;
	}
	return fd;
}

static void qp_put_refs(struct srd_qp *qp)
{
	if (qp->type == IBV_QPT_XRC_RECV) {
		/* pd and srq are the current request's, not references. */
		while (!list_empty(&qp->opens)) {
			struct srd_qp_open *o = container_of(
				qp->opens.n.next, struct srd_qp_open, node);

			list_del(&o->node);
			o->xh->refcnt--;
			free(o);
		}
		return;
	}
	qp->pd->refcnt--;
	qp->send_cq->refcnt--;
	if (qp->recv_cq)
		qp->recv_cq->refcnt--;
	if (qp->srq)
		qp->srq->refcnt--;
}

/* What a QP of each type is made of: a PD and CQs, or (XRC_RECV) only a
 * domain, whose handle the creator then holds it through. */
static int qp_get_refs(struct srd_client *c, struct srd_qp *qp,
		       const struct srd_create_qp_req *req,
		       struct srd_qp_open **creator)
{
	struct srd_xrcd_handle *xh;

	if (req->qp_type == IBV_QPT_XRC_RECV) {
		xh = xrcd_get(c, req->xrcd_handle);
		if (!xh)
			return -EINVAL;
		*creator = calloc(1, sizeof(**creator));
		if (!*creator)
			return -ENOMEM;
		(*creator)->c = c;
		(*creator)->xh = xh;
		(*creator)->user_handle = req->user_handle;
		qp->xrcd = xh->xrcd;
		return 0;
	}
	qp->pd = pd_get(c, req->pd_handle);
	qp->send_cq = cq_get(c, req->send_cq_handle);
	if (req->qp_type == IBV_QPT_XRC_SEND)
		return qp->pd && qp->send_cq ? 0 : -EINVAL;
	qp->recv_cq = cq_get(c, req->recv_cq_handle);
	if (req->srq_handle != SRD_NO_HANDLE)
		qp->srq = srq_get(c, req->srq_handle);
	if (!qp->pd || !qp->send_cq || !qp->recv_cq ||
	    (req->srq_handle != SRD_NO_HANDLE && !qp->srq))
		return -EINVAL;
	/* An XRC SRQ serves XRC target QPs only. */
	if (qp->srq && qp->srq->xh)
		return -EINVAL;
	return 0;
}

int cmd_create_qp(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_create_qp_req *req = rq->data;
	struct srd_daemon *d = c->d;
	struct srd_qp_open *creator = NULL;
	struct srd_create_qp_rep *rep;
	struct srd_qp *qp;
	uint32_t sq_off = 0, rq_off = 0;
	int64_t qpn;
	int err, fd = -1;

	/* As uverbs: raw Ethernet is CAP_NET_RAW's, checked first. */
	if (req->qp_type == IBV_QPT_RAW_PACKET && !req_net_raw(rq))
		return -EPERM;
	if (req->qp_type != IBV_QPT_RAW_PACKET && rq->nfds)
		return -EINVAL;
	err = qp_check_type(req->qp_type);
	if (err)
		return err;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	list_head_init(&qp->opens);
	err = qp_get_refs(c, qp, req, &creator);
	if (err)
		goto err_free;
	if (req->qp_type != IBV_QPT_XRC_RECV) {
		err = qp_check_cap(c->dev, &req->cap,
				   qp->srq || req->qp_type == IBV_QPT_XRC_SEND);
		if (err)
			goto err_free;
	}
	qp->owner = c;
	qp->dev = c->dev;
	qp->user_handle = req->user_handle;
	qp->type = req->qp_type;
	qp->sq_sig_all = req->sq_sig_all != 0;
	qp_geometry(qp, &req->cap, c->dev->attr.max_sge);
	qpn = res_alloc(c, SRD_RES_QP, qp);
	if (qpn < 0) {
		err = qpn;
		goto err_free;
	}
	qp->qpn = qp->handle = qpn;
	if (qp->type != IBV_QPT_XRC_RECV) {
		fd = qp_map_rings(qp, &sq_off, &rq_off);
		if (fd < 0) {
			err = fd;
			goto err_qpn;
		}
	}
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.cur_qp_state = IBV_QPS_RESET;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->attr.port_num = 1;
	qp->attr.cap = qp->cap;
	if (qp->type == IBV_QPT_RAW_PACKET) {
		err = raw_port_get(qp->dev);
		if (err)
			goto err_unmap;
	}
	err = engine_qp_create(qp);
	if (err) {
		if (qp->type == IBV_QPT_RAW_PACKET)
			raw_port_put(qp->dev);
		goto err_unmap;
	}
	if (creator) {
		creator->xh->refcnt++;
		list_add_tail(&qp->opens, &creator->node);
	} else {
		qp->pd->refcnt++;
		qp->send_cq->refcnt++;
		if (qp->recv_cq)
			qp->recv_cq->refcnt++;
		if (qp->srq)
			qp->srq->refcnt++;
	}
	list_add_tail(&d->qps, &qp->node);

	rep = REP(rp, struct srd_create_qp_rep);
	rep->handle = qp->handle;
	rep->qp_num = qp->qpn;
	rep->cap = qp->cap;
	rep->sq_entries = qp->sq.entries;
	rep->sq_slot_size = qp->sq.slot_size;
	rep->sq_offset = sq_off;
	rep->rq_entries = qp->rq.entries;
	rep->rq_slot_size = qp->rq.slot_size;
	rep->rq_offset = rq_off;
	rep->map_len = qp->map_len;
	if (fd >= 0)
		rep_add_fd(rp, fd, false);
	return 0;

err_unmap:
	if (fd >= 0) {
		munmap(qp->map, qp->map_len);
		close(fd);
	}
err_qpn:
	res_free(d, c, SRD_RES_QP, qpn);
err_free:
	free(creator);
	free(qp);
	return err;
}

void qp_destroy(struct srd_qp *qp)
{
	mcast_qp_gone(qp);
	flow_qp_gone(qp);
	counters_qp_retire(qp);
	engine_qp_destroy(qp);
	if (qp->type == IBV_QPT_RAW_PACKET)
		raw_port_put(qp->dev);
	list_del(&qp->node);
	qp_put_refs(qp);
	if (qp->map)
		munmap(qp->map, qp->map_len);
	res_free(qp->owner->d, qp->owner, SRD_RES_QP, qp->qpn);
	free(qp);
}

int cmd_destroy_qp(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_qp *qp = qp_get(c, req->handle);

	if (!qp)
		return -EINVAL;
	/* As uverbs: the application detaches first, and destroys the
	 * flows steering to it. */
	if (qp->mcast_attached || qp->nflows)
		return -EBUSY;
	if (qp->type == IBV_QPT_XRC_RECV)
		xrc_qp_close(qp, c); /* the last holder destroys it */
	else
		qp_destroy(qp);
	return 0;
}

int cmd_query_qp(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_query_qp_req *req = rq->data;
	struct srd_qp *qp = qp_get(c, req->handle);
	struct srd_query_qp_rep *rep;

	if (!qp)
		return -EINVAL;
	rep = REP(rp, struct srd_query_qp_rep);
	rep->attr = qp->attr;
	rep->attr.cur_qp_state = qp->attr.qp_state;
	rep->attr.cap = qp->cap;
	rep->cap = qp->cap;
	rep->sq_sig_all = qp->sq_sig_all;
	return 0;
}

void qp_enter_error(struct srd_qp *qp, int event)
{
	enum ibv_qp_state old = qp->attr.qp_state;

	if (old == IBV_QPS_ERR || old == IBV_QPS_RESET)
		return;
	qp->attr.qp_state = IBV_QPS_ERR;
	qp->attr.cur_qp_state = IBV_QPS_ERR;
	engine_qp_modified(qp, old, IBV_QP_STATE);
	if (event >= 0)
		qp_async_event(qp, event);
}

void qp_async_event(struct srd_qp *qp, enum ibv_event_type type)
{
	if (qp->type != IBV_QPT_XRC_RECV) {
		client_async_event(qp->owner, type, qp->user_handle);
		return;
	}
	/* A shared target QP: every holder hears of it, as uverbs' shared
	 * QP event handler tells each opened QP. */
	list_for_each (&qp->opens, n) {
		struct srd_qp_open *o =
			container_of(n, struct srd_qp_open, node);

		client_async_event(o->c, type, o->user_handle);
	}
}
