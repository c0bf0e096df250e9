/* SPDX-License-Identifier: MIT */
/* Shared receive queues. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/softrdma.h>

#include "libibverbs/ibverbs.h"

struct srd_usrq *srd_srq_create(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct srd_context *ctx = to_ctx(pd->context);
	struct srd_create_srq_req req = { 0 };
	struct srd_create_srq_rep rep;
	int fd = -1;
	struct srd_cmd_args a = {
		.op = SRD_CMD_CREATE_SRQ,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
		.rfds = &fd,
		.max_rfds = 1,
	};
	struct srd_usrq *srq;
	void *map;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	req.pd_handle = pd->handle;
	req.max_wr = attr->attr.max_wr;
	req.max_sge = attr->attr.max_sge;
	req.srq_limit = attr->attr.srq_limit;
	if (xrcd) {
		req.srq_type = IBV_SRQT_XRC;
		req.xrcd_handle = to_xrcd(xrcd)->handle;
		req.cq_handle = cq->handle;
	}
	req.user_handle = srq->ev.hnode.key = srd_ctx_new_id(ctx);
	ret = srd_ctx_cmd(ctx, &a);
	if (!ret && a.nrfds != 1)
		ret = -EPROTO;
	if (ret)
		goto err_free;
	if (!rep.entries || (rep.entries & (rep.entries - 1)) ||
	    rep.entries < rep.max_wr ||
	    rep.slot_size < srd_recv_slot_size(rep.max_sge) ||
	    rep.ring_offset < sizeof(struct srd_srq_ctl) ||
	    rep.ring_offset + (uint64_t)rep.entries * rep.slot_size >
		    rep.map_len) {
		ret = -EPROTO;
		goto err_destroy;
	}
	srq->pdom = srd_parent_domain(pd);
	ret = srd_ring_map(&srq->rmap, srq->pdom, SOFTRDMA_RES_TYPE_SRQ,
			   rep.map_len, fd);
	if (ret)
		goto err_destroy;
	close(fd);
	map = srq->rmap.addr;
	if (srq->pdom)
		atomic_fetch_add(&srq->pdom->refcnt, 1);
	pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	srq->wq.ring = (uint8_t *)map + rep.ring_offset;
	srq->wq.ctl = &((struct srd_srq_ctl *)map)->rq;
	srq->wq.entries = rep.entries;
	srq->wq.slot_size = rep.slot_size;
	srq->wq.max_wr = rep.max_wr;
	srq->wq.max_sge = rep.max_sge;
	srq->srq_num = rep.srq_num;
	srq->xrc = xrcd != NULL;
	list_node_init(&srq->cq_node);
	if (xrcd) {
		srq->xrc_cq = cq;
		pthread_mutex_lock(&ctx->qpn_tab.lock);
		list_add_tail(&to_cq(cq)->xrc_srqs, &srq->cq_node);
		pthread_mutex_unlock(&ctx->qpn_tab.lock);
	}
	attr->attr.max_wr = rep.max_wr;
	attr->attr.max_sge = rep.max_sge;

	srq->srq.context = pd->context;
	srq->srq.srq_context = attr->srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = rep.handle;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	srd_evobj_add(ctx, &srq->ev, SRD_OBJ_SRQ);
	return srq;

err_destroy:
	close(fd);
	srd_destroy_handle(pd->context, SRD_CMD_DESTROY_SRQ, rep.handle);
err_free:
	free(srq);
	errno = -ret;
	return NULL;
}

LIB_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					  struct ibv_srq_init_attr *attr)
{
	struct srd_usrq *srq;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	srq = srd_srq_create(pd, attr, NULL, NULL);
	return srq ? &srq->srq : NULL;
}

struct ibv_srq *srd_create_srq_ex(struct ibv_context *context,
				  struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr basic;
	struct ibv_xrcd *xrcd = NULL;
	struct ibv_cq *cq = NULL;
	struct srd_usrq *srq;

	if (attr->comp_mask &
	    ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type == IBV_SRQT_XRC) {
		/* As ibv_cmd_create_srq_ex: an XRC SRQ needs its domain
		 * and the CQ its receives complete on. */
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->xrcd ||
		    !attr->cq || attr->xrcd->context != context ||
		    attr->cq->context != context) {
			errno = EINVAL;
			return NULL;
		}
		xrcd = attr->xrcd;
		cq = attr->cq;
	} else if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
		   attr->srq_type != IBV_SRQT_BASIC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	basic.srq_context = attr->srq_context;
	basic.attr = attr->attr;
	srq = srd_srq_create(attr->pd, &basic, xrcd, cq);
	if (!srq)
		return NULL;
	attr->attr = basic.attr;
	return &srq->srq;
}

LIB_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			      int attr_mask)
{
	struct srd_modify_srq_req req = { .handle = srq->handle,
					  .attr_mask = (uint32_t)attr_mask,
					  .attr = *attr };
	struct srd_cmd_args a = {
		.op = SRD_CMD_MODIFY_SRQ,
		.req = &req,
		.req_len = sizeof(req),
		.rep_var = true,
	};

	return srd_ret_errno(srd_ctx_cmd(to_ctx(srq->context), &a));
}

LIB_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct srd_handle_req req = { .handle = srq->handle };
	struct srd_query_srq_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_SRQ,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret = srd_ctx_cmd(to_ctx(srq->context), &a);

	if (ret)
		return srd_ret_errno(ret);
	*attr = rep.attr;
	return 0;
}

LIB_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct srd_usrq *srq = to_srq(ibsrq);
	struct srd_context *ctx = to_ctx(ibsrq->context);
	int ret;

	ret = srd_destroy_handle(ibsrq->context, SRD_CMD_DESTROY_SRQ,
				 ibsrq->handle);
	if (ret)
		return srd_ret_errno(ret);
	pthread_mutex_lock(&ctx->qpn_tab.lock);
	list_del(&srq->cq_node);
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
	srd_evobj_del(ctx, &srq->ev);
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed != srq->ev.async_reported)
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);
	srd_ring_unmap(&srq->rmap);
	if (srq->pdom)
		atomic_fetch_sub(&srq->pdom->refcnt, 1);
	pthread_spin_destroy(&srq->wq.lock);
	pthread_cond_destroy(&ibsrq->cond);
	pthread_mutex_destroy(&ibsrq->mutex);
	free(srq);
	return 0;
}
