/* SPDX-License-Identifier: MIT */
/*
 * Posting work requests: WQEs go straight into the shared rings, one
 * release store of the producer index per call, and a doorbell only when
 * the engine sleeps.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/dump.h"
#include "libibverbs/ibverbs.h"

bool srd_opcode_valid(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	/* An XRC initiator posts what an RC QP does; a target posts
	 * nothing. */
	bool rc = type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;

	if (type == IBV_QPT_XRC_RECV)
		return false;
	/* A raw packet QP sends Ethernet frames, nothing else. */
	if (type == IBV_QPT_RAW_PACKET)
		return op == IBV_WR_SEND;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return rc || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return rc;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return rc || type == IBV_QPT_UC;
	default:
		return false;
	}
}

static bool opcode_takes_inline(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
	       op == IBV_WR_SEND_WITH_INV || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

void srd_wqe_bind(struct srd_send_wqe *w, const struct ibv_mw *mw,
		  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	w->imm_data = mw->rkey;
	w->rkey = rkey;
	w->remote_addr = info->addr;
	w->bind.length = info->mr ? info->length : 0;
	w->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	w->bind.access = info->mw_access_flags;
	w->num_sge = 0;
}

/* Write one send WQE into slot idx.  0 or a positive errno. */
static int write_send(struct srd_uqp *qp, const struct ibv_send_wr *wr,
		      uint32_t idx)
{
	struct srd_uwq *sq = &qp->sq;
	uint8_t *slot;
	struct srd_send_wqe w;
	bool inl;

	if (idx - atomic_load_explicit(&sq->tail, memory_order_acquire) >=
	    sq->max_wr)
		return ENOMEM;
	if (!srd_opcode_valid(qp->qp.qp_type, wr->opcode) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > sq->max_sge)
		return EINVAL;
	if (qp->qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.opcode = (uint8_t)wr->opcode;
	w.num_sge = (uint8_t)wr->num_sge;
	/* imm_data and invalidate_rkey share the field, as in the WR. */
	w.imm_data = wr->imm_data;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		w.flags |= SRD_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		w.flags |= SRD_WQE_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		w.flags |= SRD_WQE_SOLICITED;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w.remote_addr = wr->wr.rdma.remote_addr;
		w.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w.remote_addr = wr->wr.atomic.remote_addr;
		w.rkey = wr->wr.atomic.rkey;
		w.compare_add = wr->wr.atomic.compare_add;
		w.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_BIND_MW:
		if (!wr->bind_mw.mw)
			return EINVAL;
		srd_wqe_bind(&w, wr->bind_mw.mw, wr->bind_mw.rkey,
			     &wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
	if (w.opcode == IBV_WR_BIND_MW || w.opcode == IBV_WR_LOCAL_INV) {
		/* No data: the slot is the header alone. */
		srd_stage_skip(qp, idx, wr->opcode);
		w.num_sge = 0;
		memcpy(srd_wq_slot(sq, idx), &w, sizeof(w));
		if (w.flags & SRD_WQE_SIGNALED)
			sq->sig_next = idx + 1;
		return 0;
	}
	if (qp->qp.qp_type == IBV_QPT_UD) {
		w.ah_handle = wr->wr.ud.ah->handle;
		w.remote_qpn = wr->wr.ud.remote_qpn;
		w.remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (qp->qp.qp_type == IBV_QPT_XRC_SEND)
		w.remote_srqn = wr->qp_type.xrc.remote_srqn;

	slot = srd_wq_slot(sq, idx);
	inl = (wr->send_flags & IBV_SEND_INLINE) &&
	      opcode_takes_inline(wr->opcode);
	if (inl) {
		uint8_t *p = slot + sizeof(w);
		uint64_t total = 0;

		for (int i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > sq->max_inline)
			return EINVAL;
		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(p, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		w.flags |= SRD_WQE_INLINE;
		w.inline_len = (uint32_t)total;
		w.num_sge = 0;
		srd_stage_skip(qp, idx, wr->opcode);
	} else {
		struct srd_sge *s = (struct srd_sge *)(slot + sizeof(w));

		/* A SEND or WRITE from memory the daemon reaches in place:
		 * its payload copied now, if there is room (stage.c). */
		if (!opcode_takes_inline(wr->opcode) ||
		    qp->qp.qp_type == IBV_QPT_RAW_PACKET)
			srd_stage_skip(qp, idx, wr->opcode);
		else if (srd_stage_wqe(to_ctx(qp->qp.context), qp, wr, idx,
				       &w.stage))
			w.flags |= SRD_WQE_STAGED;

		for (int i = 0; i < wr->num_sge; i++) {
			s[i].addr = wr->sg_list[i].addr;
			s[i].length = wr->sg_list[i].length;
			s[i].lkey = wr->sg_list[i].lkey;
		}
	}
	memcpy(slot, &w, sizeof(w));
	if (w.flags & SRD_WQE_SIGNALED)
		sq->sig_next = idx + 1;
	return 0;
}

static void publish(struct srd_uwq *wq, uint32_t head)
{
	wq->head = head;
	__atomic_store_n(&wq->ctl->prod, head, __ATOMIC_RELEASE);
	srd_wq_publish_signaled(wq);
}

int srd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct srd_uqp *qp = to_qp(ibqp);
	struct srd_context *ctx = to_ctx(ibqp->context);
	struct srd_uwq *sq = &qp->sq;
	enum ibv_qp_state state = ibqp->state;
	uint32_t head;
	bool posted;
	int ret = 0;

	if (wr && srd_ctx_dead(ctx)) {
		*bad_wr = wr;
		return EIO; /* the device is lost (flush.c) */
	}
	/* Send work is illegal before RTS (IBTA 10.8.2); an XRC target
	 * has no send queue. */
	if (wr && (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
		   state == IBV_QPS_RTR || !sq->entries)) {
		*bad_wr = wr;
		return EINVAL;
	}
	srd_wq_lock(sq);
	head = sq->head;
	for (; wr; wr = wr->next, head++) {
		ret = write_send(qp, wr, head);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		if (ctx->trace & SRD_TRACE_F_WQE)
			srd_dump_send_wqe(stderr, ibqp->qp_num, head,
					  srd_wq_slot(sq, head), sq->slot_size);
	}
	posted = head != sq->head;
	if (posted)
		publish(sq, head);
	srd_wq_unlock(sq);
	if (posted)
		srd_ring_doorbell(ctx);
	return ret;
}

/* Write one receive WQE into slot idx of wq, whose free slots start at
 * tail.  0 or a positive errno. */
static int write_recv(struct srd_uwq *wq, const struct ibv_recv_wr *wr,
		      uint32_t idx, uint32_t tail)
{
	struct srd_recv_wqe *w;
	struct srd_sge *s;

	if (idx - tail >= wq->max_wr)
		return ENOMEM;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge)
		return EINVAL;
	w = srd_wq_slot(wq, idx);
	s = (struct srd_sge *)(w + 1);
	for (int i = 0; i < wr->num_sge; i++) {
		s[i].addr = wr->sg_list[i].addr;
		s[i].length = wr->sg_list[i].length;
		s[i].lkey = wr->sg_list[i].lkey;
	}
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	w->rsvd = 0;
	return 0;
}

int srd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct srd_uqp *qp = to_qp(ibqp);
	struct srd_context *ctx = to_ctx(ibqp->context);
	struct srd_uwq *rq = &qp->rq;
	uint32_t head;
	bool posted;
	int ret = 0;

	if (wr && (ibqp->state == IBV_QPS_RESET || ibqp->srq || !rq->entries)) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (wr && srd_ctx_dead(ctx)) {
		*bad_wr = wr;
		return EIO;
	}
	srd_wq_lock(rq);
	head = rq->head;
	for (; wr; wr = wr->next, head++) {
		ret = write_recv(rq, wr, head,
				 atomic_load_explicit(&rq->tail,
						      memory_order_acquire));
		if (ret) {
			*bad_wr = wr;
			break;
		}
		if (ctx->trace & SRD_TRACE_F_WQE)
			srd_dump_recv_wqe(stderr, ibqp->qp_num, head,
					  srd_wq_slot(rq, head), rq->slot_size,
					  0);
	}
	posted = head != rq->head;
	if (posted)
		publish(rq, head);
	srd_wq_unlock(rq);
	if (posted)
		srd_ring_doorbell(ctx);
	return ret;
}

int srd_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct srd_usrq *srq = to_srq(ibsrq);
	struct srd_context *ctx = to_ctx(ibsrq->context);
	struct srd_uwq *wq = &srq->wq;
	uint32_t head, cons;
	bool posted;
	int ret = 0;

	if (wr && srd_ctx_dead(ctx)) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_spin_lock(&wq->lock);
	head = wq->head;
	/* The daemon copies SRQ WQEs out as it takes them: what it has
	 * consumed is free again.  It cannot have taken more than we gave. */
	cons = __atomic_load_n(&wq->ctl->cons, __ATOMIC_ACQUIRE);
	if ((int32_t)(head - cons) < 0 || head - cons > wq->entries)
		cons = head - wq->max_wr;
	for (; wr; wr = wr->next, head++) {
		ret = write_recv(wq, wr, head, cons);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		if (ctx->trace & SRD_TRACE_F_WQE)
			srd_dump_recv_wqe(stderr, ibsrq->handle, head,
					  srd_wq_slot(wq, head), wq->slot_size,
					  1);
	}
	posted = head != wq->head;
	if (posted)
		publish(wq, head);
	pthread_spin_unlock(&wq->lock);
	if (posted)
		srd_ring_doorbell(ctx);
	return ret;
}
