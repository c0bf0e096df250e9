/* SPDX-License-Identifier: MIT */
/* Completion queues: creation, resizing, destruction, arming. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/softrdma.h>

#include "libibverbs/ibverbs.h"

static int map_ring(struct srd_ucq *cq, const struct srd_create_cq_rep *rep,
		    int fd)
{
	void *map;
	int ret;

	if (rep->log_entries > 24 ||
	    rep->ring_offset < sizeof(struct srd_cq_ctl) ||
	    rep->map_len < rep->ring_offset + ((uint64_t)sizeof(struct srd_cqe)
					       << rep->log_entries))
		return -EPROTO;
	ret = srd_ring_map(&cq->rmap, cq->pdom, SOFTRDMA_RES_TYPE_CQ,
			   rep->map_len, fd);
	if (ret)
		return ret;
	map = cq->rmap.addr;
	cq->ctl = map;
	cq->ring = (struct srd_cqe *)((uint8_t *)map + rep->ring_offset);
	cq->log_entries = rep->log_entries;
	cq->cons = 0;
	cq->cq.cqe = (int)rep->cqe;
	return 0;
}

struct srd_ucq *srd_cq_create(struct ibv_context *context, int cqe,
			      void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector,
			      uint32_t flags, struct srd_pd *pdom)
{
	struct srd_context *ctx = to_ctx(context);
	struct srd_create_cq_req req = { 0 };
	struct srd_create_cq_rep rep;
	int fd = -1;
	struct srd_ucq *cq;
	int ret;

	if (cqe < 1 || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	req.cqe = (uint32_t)cqe;
	req.channel_handle = channel ? to_chan(channel)->handle : SRD_NO_HANDLE;
	req.comp_vector = (uint32_t)comp_vector;
	req.flags = flags;
	cq->pdom = pdom;
	req.user_handle = cq->ev.hnode.key = srd_ctx_new_id(ctx);
	ret = srd_ctx_cmd_fd(ctx, SRD_CMD_CREATE_CQ, &req, sizeof(req), &rep,
			     sizeof(rep), &fd);
	if (ret)
		goto err_free;
	ret = map_ring(cq, &rep, fd);
	close(fd);
	if (ret) {
		srd_destroy_handle(context, SRD_CMD_DESTROY_CQ, rep.handle);
		goto err_free;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	list_head_init(&cq->send_qps);
	list_head_init(&cq->recv_qps);
	list_head_init(&cq->xrc_srqs);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = rep.handle;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	if (pdom)
		atomic_fetch_add(&pdom->refcnt, 1);
	srd_evobj_add(ctx, &cq->ev, SRD_OBJ_CQ);
	return cq;

err_free:
	free(cq);
	errno = -ret;
	return NULL;
}

LIB_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					void *cq_context,
					struct ibv_comp_channel *channel,
					int comp_vector)
{
	struct srd_ucq *cq = srd_cq_create(context, cqe, cq_context, channel,
					   comp_vector, 0, NULL);

	return cq ? &cq->cq : NULL;
}

LIB_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srd_ucq *cq = to_cq(ibcq);
	struct srd_resize_cq_req req = { .handle = ibcq->handle };
	struct srd_create_cq_rep rep;
	int fd = -1;
	struct srd_ring_map old_map;
	int ret;

	if (cqe < 1)
		return srd_ret_errno(-EINVAL);
	req.cqe = (uint32_t)cqe;
	/* Pollers wait while the rings are swapped: the daemon carries the
	 * CQEs after cons over to the new ring. */
	pthread_spin_lock(&cq->lock);
	req.cons = cq->cons;
	ret = srd_ctx_cmd_fd(to_ctx(ibcq->context), SRD_CMD_RESIZE_CQ, &req,
			     sizeof(req), &rep, sizeof(rep), &fd);
	if (!ret) {
		old_map = cq->rmap;
		ret = map_ring(cq, &rep, fd);
		close(fd);
		if (!ret)
			srd_ring_unmap(&old_map);
		else
			cq->rmap = old_map;
	}
	pthread_spin_unlock(&cq->lock);
	return srd_ret_errno(ret);
}

LIB_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct srd_ucq *cq = to_cq(ibcq);
	struct srd_context *ctx = to_ctx(ibcq->context);
	struct ibv_comp_channel *channel = ibcq->channel;
	int ret;

	ret = srd_destroy_handle(ibcq->context, SRD_CMD_DESTROY_CQ,
				 ibcq->handle);
	if (ret)
		return srd_ret_errno(ret);
	srd_evobj_del(ctx, &cq->ev);
	/* Every event handed out must be acknowledged first. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != cq->ev.comp_reported ||
	       ibcq->async_events_completed != cq->ev.async_reported)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	if (channel) {
		pthread_mutex_lock(&ibcq->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&ibcq->context->mutex);
	}
	srd_ring_unmap(&cq->rmap);
	if (cq->pdom)
		atomic_fetch_sub(&cq->pdom->refcnt, 1);
	pthread_spin_destroy(&cq->lock);
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	free(cq);
	return 0;
}

/* ibv_modify_cq: libibverbs refuses unknown attributes, the device checks
 * the values against cq_mod_caps. */
int srd_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct srd_modify_cq_req req = { .handle = ibcq->handle };
	struct srd_cmd_args a = {
		.op = SRD_CMD_MODIFY_CQ,
		.req = &req,
		.req_len = sizeof(req),
		.rep_var = true,
	};

	if (!attr || attr->attr_mask >= IBV_CQ_ATTR_RESERVED)
		return EINVAL;
	req.attr_mask = attr->attr_mask;
	req.cq_count = attr->moderate.cq_count;
	req.cq_period = attr->moderate.cq_period;
	return srd_ret_errno(srd_ctx_cmd(to_ctx(ibcq->context), &a));
}

int srd_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct srd_ucq *cq = to_cq(ibcq);

	__atomic_fetch_or(&cq->ctl->arm,
			  solicited_only ? SRD_CQ_ARM_SOLICITED
					 : SRD_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}
