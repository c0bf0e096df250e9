/* SPDX-License-Identifier: MIT */
/*
 * QPs (and SRQs) on an id's device, and their state changes with the
 * attributes the daemon's CM gives (rdma_init_qp_attr).  CQs the
 * application does not bring are made here, with completion channels, as
 * rdma-core does.
 */
#include <string.h>

#include "librdmacm/cma.h"

bool cma_is_ud(enum ibv_qp_type t)
{
	return t == IBV_QPT_UD;
}

LIB_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id,
				 struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_init_qp_attr_req req = {
		.handle = p->handle,
		.qp_state = qp_attr->qp_state,
	};
	struct srd_cm_init_qp_attr_rep rep;
	int err;

	err = cma_id_cmd(p, SRD_CMD_CM_INIT_QP_ATTR, &req, sizeof(req), &rep,
			 sizeof(rep));
	if (err)
		return cma_ret(err);
	*qp_attr = rep.attr;
	*qp_attr_mask = (int)rep.attr_mask;
	return 0;
}

int cma_qp_attr(struct cma_id_priv *p, struct ibv_qp_attr *a, int *mask)
{
	int i;

	switch (a->qp_state) {
	case IBV_QPS_INIT:
		i = SRD_CM_ATTR_INIT;
		break;
	case IBV_QPS_RTR:
		i = SRD_CM_ATTR_RTR;
		break;
	case IBV_QPS_RTS:
		i = SRD_CM_ATTR_RTS;
		break;
	default:
		i = -1;
		break;
	}
	if (i < 0 || !(p->attr_valid & 1u << i))
		return rdma_init_qp_attr(&p->id, a, mask);
	*a = p->attr[i].attr;
	*mask = (int)p->attr[i].attr_mask;
	return 0;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int err = ibv_modify_qp(qp, a, mask);

	return err ? cma_err(err) : 0;
}

int cma_modify_qp_rtr(struct rdma_cm_id *id, uint8_t resp_res)
{
	struct ibv_qp_attr a;
	int mask;

	if (!id->qp)
		return 0;
	/* INIT again first: the access flags the connection allows. */
	a.qp_state = IBV_QPS_INIT;
	if (cma_qp_attr(cma_id(id), &a, &mask) || modify(id->qp, &a, mask))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (cma_qp_attr(cma_id(id), &a, &mask))
		return -1;
	if (resp_res != RDMA_MAX_RESP_RES)
		a.max_dest_rd_atomic = resp_res;
	return modify(id->qp, &a, mask);
}

int cma_modify_qp_rts(struct rdma_cm_id *id, uint8_t init_depth)
{
	struct ibv_qp_attr a;
	int mask;

	if (!id->qp)
		return 0;
	a.qp_state = IBV_QPS_RTS;
	if (cma_qp_attr(cma_id(id), &a, &mask))
		return -1;
	if (init_depth != RDMA_MAX_INIT_DEPTH)
		a.max_rd_atomic = init_depth;
	return modify(id->qp, &a, mask);
}

int cma_modify_qp_err(struct rdma_cm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (!id->qp)
		return 0;
	return modify(id->qp, &a, IBV_QP_STATE);
}

static int init_conn_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int mask;

	if (cma_qp_attr(cma_id(id), &a, &mask))
		return -1;
	return modify(qp, &a, mask);
}

static int init_ud_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int mask;

	if (rdma_init_qp_attr(id, &a, &mask) || modify(qp, &a, mask))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (modify(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->qp_type == IBV_QPT_XRC_RECV && id->srq)
		return;
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq == id->recv_cq)
			id->send_cq = NULL;
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel == id->recv_cq_channel)
			id->send_cq_channel = NULL;
		id->recv_cq_channel = NULL;
	}
	if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
		id->send_cq = NULL;
	}
	if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
	}
}

static int create_cqs(struct rdma_cm_id *id, uint32_t send_size,
		      uint32_t recv_size)
{
	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id,
					    id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id,
					    id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
	}
	return 0;
err:
	destroy_cqs(id);
	return -1;
}

LIB_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct cma_id_priv *p = cma_id(id);
	struct ibv_qp *qp;
	int err;

	if (id->qp || !id->verbs || !p->cma_dev)
		return cma_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = cma_dev_pd(p->cma_dev);
		if (!attr->pd)
			return -1;
	} else if (attr->pd->context != id->verbs) {
		return cma_err(EINVAL);
	}
	if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
		return cma_err(EINVAL);
	if (create_cqs(id,
		       attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
		       attr->recv_cq || id->recv_cq ? 0
						    : attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;
	if (id->srq && !attr->srq)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		goto err_cqs;
	err = cma_ece_qp_created(p, qp);
	if (!err)
		err = cma_is_ud(id->qp_type) ? init_ud_qp(id, qp)
					     : init_conn_qp(id, qp);
	if (!err)
		err = cma_ece_qp_ready(p, qp);
	if (err) {
		err = errno;
		ibv_destroy_qp(qp);
		errno = err;
		goto err_cqs;
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;

err_cqs:
	err = errno;
	destroy_cqs(id);
	return cma_err(err);
}

LIB_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int ret;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return ret;
}

LIB_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

LIB_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				  struct ibv_srq_init_attr_ex *attr)
{
	struct cma_id_priv *p = cma_id(id);
	struct ibv_srq_init_attr basic;
	struct ibv_pd *pd;
	struct ibv_srq *srq;

	if (!id->verbs || !p->cma_dev)
		return cma_err(EINVAL);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC)
		return cma_err(EOPNOTSUPP);
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd
		     ? attr->pd
		     : cma_dev_pd(p->cma_dev);
	if (!pd)
		return -1;
	basic.srq_context = attr->srq_context;
	basic.attr = attr->attr;
	srq = ibv_create_srq(pd, &basic);
	if (!srq)
		return -1;
	attr->attr = basic.attr;
	id->pd = pd;
	id->srq = srq;
	return 0;
}

LIB_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd ? pd : id->pd,
	};
	int ret = rdma_create_srq_ex(id, &ex);

	attr->attr = ex.attr;
	return ret;
}

LIB_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
