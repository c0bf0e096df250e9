/* SPDX-License-Identifier: MIT */
/* Queue pairs: creation, state changes, queries, destruction. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/softrdma.h>

#include "libibverbs/ibverbs.h"

static void wq_init(struct srd_uwq *wq, void *map, struct srd_wq_ctl *ctl,
		    uint32_t entries, uint32_t slot_size, uint32_t offset)
{
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	wq->ring = entries ? (uint8_t *)map + offset : NULL;
	wq->ctl = ctl;
	wq->entries = entries;
	wq->slot_size = slot_size;
	wq->head = 0;
	atomic_init(&wq->tail, 0);
}

static bool geometry_ok(const struct srd_create_qp_rep *r)
{
	uint64_t sq_end =
		r->sq_offset + (uint64_t)r->sq_entries * r->sq_slot_size;
	uint64_t rq_end =
		r->rq_offset + (uint64_t)r->rq_entries * r->rq_slot_size;

	if (!r->sq_entries || (r->sq_entries & (r->sq_entries - 1)) ||
	    (r->rq_entries & (r->rq_entries - 1)))
		return false;
	if (r->sq_entries < r->cap.max_send_wr ||
	    (r->rq_entries && r->rq_entries < r->cap.max_recv_wr))
		return false;
	if (r->sq_slot_size < srd_send_slot_size(r->cap.max_send_sge,
						 r->cap.max_inline_data) ||
	    (r->rq_entries &&
	     r->rq_slot_size < srd_recv_slot_size(r->cap.max_recv_sge)))
		return false;
	if (r->sq_offset < sizeof(struct srd_qp_ctl) || sq_end > r->map_len ||
	    (r->rq_entries &&
	     (r->rq_offset < sizeof(struct srd_qp_ctl) || rq_end > r->map_len)))
		return false;
	return true;
}

struct srd_uqp *srd_qp_create(struct ibv_context *context, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	struct srd_create_qp_req req = { 0 };
	struct srd_create_qp_rep rep;
	int fd = -1, proof = -1;
	struct srd_cmd_args a = {
		.op = SRD_CMD_CREATE_QP,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
		.rfds = &fd,
		.max_rfds = 1,
	};
	struct srd_context *ctx;
	struct srd_qp_ctl *ctl;
	struct srd_uqp *qp;
	void *map;
	int ret;

	/* An XRC initiator sends only: no receive CQ, no SRQ. */
	if (!pd || !attr || !attr->send_cq ||
	    (!attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND) ||
	    pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		errno = EINVAL; /* made on an XRC domain, not a PD */
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND &&
	    attr->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		attr->recv_cq = NULL;
		attr->srq = NULL;
	}
	ctx = to_ctx(context);
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->pdom = srd_parent_domain(pd);
	req.pd_handle = pd->handle;
	req.send_cq_handle = attr->send_cq->handle;
	req.recv_cq_handle = attr->recv_cq ? attr->recv_cq->handle
					   : SRD_NO_HANDLE;
	req.srq_handle = attr->srq ? attr->srq->handle : SRD_NO_HANDLE;
	req.qp_type = attr->qp_type;
	req.sq_sig_all = !!attr->sq_sig_all;
	req.cap = attr->cap;
	req.user_handle = qp->ev.hnode.key = srd_ctx_new_id(ctx);
	if (attr->qp_type == IBV_QPT_RAW_PACKET) {
		proof = srd_net_raw_proof();
		if (proof >= 0) {
			a.fds = &proof;
			a.nfds = 1;
		}
	}
	ret = srd_ctx_cmd(ctx, &a);
	if (proof >= 0)
		close(proof);
	if (!ret && a.nrfds != 1)
		ret = -EPROTO;
	if (ret)
		goto err_free;
	if (!geometry_ok(&rep)) {
		ret = -EPROTO;
		goto err_destroy;
	}
	ret = srd_ring_map(&qp->rmap, qp->pdom, SOFTRDMA_RES_TYPE_QP,
			   rep.map_len, fd);
	if (ret)
		goto err_destroy;
	close(fd);
	map = qp->rmap.addr;
	ctl = map;
	wq_init(&qp->sq, map, &ctl->sq, rep.sq_entries, rep.sq_slot_size,
		rep.sq_offset);
	qp->sq.max_wr = rep.cap.max_send_wr;
	qp->sq.max_sge = rep.cap.max_send_sge;
	qp->sq.max_inline = rep.cap.max_inline_data;
	wq_init(&qp->rq, map, &ctl->rq, rep.rq_entries, rep.rq_slot_size,
		rep.rq_offset);
	qp->rq.max_wr = rep.cap.max_recv_wr;
	qp->rq.max_sge = rep.cap.max_recv_sge;
	qp->sq.single_thread = qp->rq.single_thread = qp->pdom && qp->pdom->td;
	qp->sq_sig_all = !!attr->sq_sig_all;
	qp->cap = rep.cap;
	attr->cap = rep.cap;

	qp->qp.context = context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.handle = rep.handle;
	qp->qp.qp_num = rep.qp_num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);

	qp->qpn_node.key = rep.qp_num;
	list_node_init(&qp->recv_cq_node);
	pthread_mutex_lock(&ctx->qpn_tab.lock);
	srd_htab_add(&ctx->qpn_tab, &qp->qpn_node);
	list_add_tail(&to_cq(attr->send_cq)->send_qps, &qp->send_cq_node);
	if (attr->recv_cq)
		list_add_tail(&to_cq(attr->recv_cq)->recv_qps,
			      &qp->recv_cq_node);
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
	if (qp->pdom)
		atomic_fetch_add(&qp->pdom->refcnt, 1);
	srd_evobj_add(ctx, &qp->ev, SRD_OBJ_QP);
	return qp;

err_destroy:
	close(fd);
	srd_destroy_handle(context, SRD_CMD_DESTROY_QP, rep.handle);
err_free:
	free(qp);
	errno = -ret;
	return NULL;
}

LIB_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					struct ibv_qp_init_attr *attr)
{
	struct srd_uqp *qp = srd_qp_create(pd ? pd->context : NULL, pd, attr);

	return qp ? &qp->qp : NULL;
}

LIB_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			     int attr_mask)
{
	struct srd_modify_qp_req req = { .handle = qp->handle,
					 .attr_mask = (uint32_t)attr_mask,
					 .attr = *attr };
	struct srd_modify_qp_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_MODIFY_QP,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret;

	ret = srd_ctx_cmd(to_ctx(qp->context), &a);
	if (ret)
		return srd_ret_errno(ret);
	qp->state = (enum ibv_qp_state)rep.qp_state;
	return 0;
}

LIB_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			    int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct srd_query_qp_req req = { .handle = ibqp->handle,
					.attr_mask = (uint32_t)attr_mask };
	struct srd_query_qp_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_QP,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret;

	ret = srd_ctx_cmd(to_ctx(ibqp->context), &a);
	if (ret)
		return srd_ret_errno(ret);
	*attr = rep.attr;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = ibqp->qp_context;
		init_attr->send_cq = ibqp->send_cq;
		init_attr->recv_cq = ibqp->recv_cq;
		init_attr->srq = ibqp->srq;
		init_attr->cap = rep.cap;
		init_attr->qp_type = ibqp->qp_type;
		init_attr->sq_sig_all = (int)rep.sq_sig_all;
	}
	return 0;
}

LIB_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct srd_uqp *qp = to_qp(ibqp);
	struct srd_context *ctx = to_ctx(ibqp->context);
	int ret;

	ret = srd_destroy_handle(ibqp->context, SRD_CMD_DESTROY_QP,
				 ibqp->handle);
	if (ret)
		return srd_ret_errno(ret);
	if (ibqp->qp_type != IBV_QPT_XRC_RECV) {
		pthread_mutex_lock(&ctx->qpn_tab.lock);
		srd_htab_del(&ctx->qpn_tab, &qp->qpn_node);
		list_del(&qp->send_cq_node);
		list_del(&qp->recv_cq_node);
		pthread_mutex_unlock(&ctx->qpn_tab.lock);
		srd_cq_forget_qp(to_cq(ibqp->send_cq), qp);
		if (ibqp->recv_cq)
			srd_cq_forget_qp(to_cq(ibqp->recv_cq), qp);
	}
	srd_evobj_del(ctx, &qp->ev);
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed != qp->ev.async_reported)
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);
	srd_ring_unmap(&qp->rmap);
	if (qp->pdom)
		atomic_fetch_sub(&qp->pdom->refcnt, 1);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free(qp);
	return 0;
}

LIB_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					  enum ibv_wr_opcode op, uint32_t flags)
{
	/* The device copies payload front to back, one message at a time. */
	return flags ? 0 : 1;
}

LIB_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct srd_uqp *qp = to_qp(ibqp);

	return qp->has_ex ? &qp->qp_ex : NULL;
}
