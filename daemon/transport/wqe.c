/* SPDX-License-Identifier: MIT */
/*
 * Taking WQEs from the rings the client writes.  Nothing in a ring is
 * trusted: producer indices are read once and bounded by the ring size,
 * every slot is copied into private memory before anything in it is
 * looked at, and only the daemon's own geometry is used.
 */
#include <errno.h>
#include <string.h>

#include "common/dump.h"
#include "daemon/core/core.h"
#include "daemon/core/flow.h"
#include "daemon/transport/engine.h"

/* Check a copied send WQE and fill in what the requester needs.
 * Returns IBV_WC_SUCCESS or the status it completes with. */
static enum ibv_wc_status swqe_check(struct srd_qp_transport *tp,
				     struct srd_swqe *s)
{
	struct srd_qp *qp = tp->qp;
	const struct srd_send_wqe *w = &s->w;
	uint32_t body = qp->sq.slot_size - sizeof(*w);
	bool rc = srd_qpt_reliable(qp->type), ud = qp->type == IBV_QPT_UD;
	uint64_t len = 0;
	int access = 0;

	s->imm = false;
	s->inv = false;
	/* A raw packet QP sends frames: SEND alone. */
	if (qp->type == IBV_QPT_RAW_PACKET && w->opcode != IBV_WR_SEND)
		return IBV_WC_LOC_QP_OP_ERR;
	switch (w->opcode) {
	case IBV_WR_SEND_WITH_INV:
		if (!rc)
			return IBV_WC_LOC_QP_OP_ERR;
		s->inv = true;
		s->kind = SWQE_K_SEND;
		break;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		/* Executed in order when the requester reaches them. */
		if (ud)
			return IBV_WC_LOC_QP_OP_ERR;
		s->kind = SWQE_K_LOCAL;
		s->length = 0;
		return IBV_WC_SUCCESS;
	case IBV_WR_SEND_WITH_IMM:
		s->imm = true;
		/* fall through */
	case IBV_WR_SEND:
		s->kind = SWQE_K_SEND;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		s->imm = true;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
		if (ud)
			return IBV_WC_LOC_QP_OP_ERR;
		s->kind = SWQE_K_WRITE;
		break;
	case IBV_WR_RDMA_READ:
		if (!rc)
			return IBV_WC_LOC_QP_OP_ERR;
		s->kind = SWQE_K_READ;
		access = IBV_ACCESS_LOCAL_WRITE;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (!rc)
			return IBV_WC_LOC_QP_OP_ERR;
		s->kind = SWQE_K_ATOMIC;
		access = IBV_ACCESS_LOCAL_WRITE;
		break;
	case IBV_WR_ATOMIC_WRITE:
	case IBV_WR_FLUSH:
		/* One PSN and a response, as an atomic; no local buffer:
		 * the 8 bytes (or the flush's range) are in the WQE.  RC
		 * only: A19 gives XRC no opcode for them. */
		if (qp->type != IBV_QPT_RC)
			return IBV_WC_LOC_QP_OP_ERR;
		if (w->opcode == IBV_WR_FLUSH &&
		    (w->compare_add > SRD_MAX_MSG_SZ ||
		     (w->swap &
		      ~(uint64_t)(ROCE_FETH_PLT_MASK | ROCE_FETH_SEL_MASK))))
			return IBV_WC_LOC_QP_OP_ERR;
		s->kind = SWQE_K_ATOMIC;
		s->length = w->opcode == IBV_WR_FLUSH ? 0
						      : ROCE_ATOMIC_WRITE_BYTES;
		return IBV_WC_SUCCESS;
	default:
		return IBV_WC_LOC_QP_OP_ERR;
	}

	if (w->flags & SRD_WQE_INLINE) {
		/* Inline data has nowhere to receive READ/atomic results. */
		if (s->kind == SWQE_K_READ || s->kind == SWQE_K_ATOMIC)
			return IBV_WC_LOC_QP_OP_ERR;
		if (w->inline_len > qp->cap.max_inline_data ||
		    w->inline_len > body)
			return IBV_WC_LOC_LEN_ERR;
		len = w->inline_len;
	} else {
		const struct srd_sge *sge = swqe_sge(s);

		if (w->num_sge > qp->cap.max_send_sge ||
		    w->num_sge > SRD_TP_MAX_SGE ||
		    w->num_sge * sizeof(struct srd_sge) > body)
			return IBV_WC_LOC_QP_OP_ERR;
		for (uint32_t i = 0; i < w->num_sge; i++)
			len += sge[i].length;
		if (s->kind == SWQE_K_ATOMIC &&
		    (w->num_sge != 1 || sge[0].length != 8))
			return IBV_WC_LOC_LEN_ERR;
		if (len > SRD_MAX_MSG_SZ)
			return IBV_WC_LOC_LEN_ERR;
		if (dma_check_sgl(tp->eng->d, sge, w->num_sge, qp->pd, access))
			return IBV_WC_LOC_PROT_ERR;
	}
	if (len > SRD_MAX_MSG_SZ)
		return IBV_WC_LOC_LEN_ERR;
	s->length = len;
	if (qp->type == IBV_QPT_RAW_PACKET && len > raw_max_frame(qp->dev))
		return IBV_WC_LOC_LEN_ERR;

	if (ud) {
		struct srd_ah *ah = ah_lookup(qp->owner, w->ah_handle);

		if (!ah || ah->pd != qp->pd)
			return IBV_WC_LOC_QP_OP_ERR;
		s->dgid = ah->attr.grh.dgid;
		s->sgid_index = ah->attr.grh.sgid_index;
		s->flow_label = ah->attr.grh.flow_label;
		s->hop_limit = ah->attr.grh.hop_limit;
		s->tclass = ah->attr.grh.traffic_class;
		s->sl = ah->attr.sl;
		if (len > tp->mtu)
			return IBV_WC_LOC_LEN_ERR;
	}
	return IBV_WC_SUCCESS;
}

int sq_fetch(struct srd_qp_transport *tp)
{
	struct srd_wq *wq = &tp->qp->sq;
	uint32_t prod, avail, n;

	if (tp->sq_hostile || !wq->ctl || !wq->entries)
		return 0;
	prod = __atomic_load_n(&wq->ctl->prod, __ATOMIC_ACQUIRE);
	if (prod == tp->sq_fetched)
		return 0;
	/* The library cannot have more WQEs posted than the ring holds,
	 * counting the ones not completed yet, nor take any back. */
	avail = prod - tp->sq_head;
	if (avail > wq->entries || avail < tp->sq_fetched - tp->sq_head) {
		tp->sq_hostile = true;
		tp_error(tp, IBV_EVENT_QP_FATAL);
		return -EIO;
	}
	n = prod - tp->sq_fetched;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t idx = tp->sq_fetched + i;
		struct srd_swqe *s = tp_swqe(tp, idx);
		const uint8_t *slot =
			wq->ring +
			(size_t)(idx & (wq->entries - 1)) * wq->slot_size;
		enum ibv_wc_status st;

		memcpy(&s->w, slot, wq->slot_size);
		s->state = SWQE_POSTED;
		s->pkts_sent = 0;
		s->rd_pkts = 0;
		s->rd_done = 0;
		s->placing = 0;
		s->rd_freed = false;
		st = swqe_check(tp, s);
		if (st != IBV_WC_SUCCESS) {
			s->state = SWQE_BAD;
			s->status = st;
			srd_log(SRD_LOG_DEBUG,
				"qp 0x%x requester: WQE %u %s, %s", tp->qp->qpn,
				idx, requester_state_name(s->state),
				srd_wc_status_name(st));
		}
	}
	tp->sq_fetched = prod;
	__atomic_store_n(&wq->ctl->cons, prod, __ATOMIC_RELEASE);
	return n;
}

/* Copy a receive slot into tp->rwqe and check it against max_sge. */
static void rwqe_load(struct srd_qp_transport *tp, const uint8_t *slot,
		      uint32_t slot_size, uint32_t max_sge)
{
	struct srd_rwqe *rw = &tp->rwqe;
	uint8_t copy[sizeof(struct srd_recv_wqe) +
		     SRD_TP_MAX_SGE * sizeof(struct srd_sge)];
	struct srd_recv_wqe hdr;
	uint32_t n = slot_size < sizeof(copy) ? slot_size : sizeof(copy);

	memcpy(copy, slot, n);
	memcpy(&hdr, copy, sizeof(hdr));
	rw->wr_id = hdr.wr_id;
	rw->num_sge = hdr.num_sge;
	rw->malformed = hdr.num_sge > max_sge || hdr.num_sge > SRD_TP_MAX_SGE ||
			sizeof(hdr) + hdr.num_sge * sizeof(struct srd_sge) > n;
	rw->total = 0;
	rw->done = 0;
	if (rw->malformed) {
		rw->num_sge = 0;
	} else {
		memcpy(rw->sge, copy + sizeof(hdr),
		       hdr.num_sge * sizeof(struct srd_sge));
		for (uint32_t i = 0; i < rw->num_sge; i++)
			rw->total += rw->sge[i].length;
	}
	rw->valid = true;
}

static int srq_take(struct srd_qp_transport *tp, struct srd_srq *srq)
{
	uint32_t prod, posted;
	const uint8_t *slot;

	if (!srq->ctl || !srq->entries)
		return -EAGAIN;
	if (srq->in_error)
		return -EIO;
	prod = __atomic_load_n(&srq->ctl->rq.prod, __ATOMIC_ACQUIRE);
	posted = prod - srq->cons;
	if (posted > srq->entries) {
		srq->in_error = true;
		client_async_event(srq->owner, IBV_EVENT_SRQ_ERR,
				   srq->user_handle);
		return -EIO;
	}
	if (!posted)
		return -EAGAIN;
	slot = srq->ring +
	       (size_t)(srq->cons & (srq->entries - 1)) * srq->slot_size;
	rwqe_load(tp, slot, srq->slot_size, srq->max_sge);
	tp->rwqe.srq = true;
	tp->rwqe.xsrq = srq->xh ? srq : NULL;
	tp->rwqe.idx = srq->cons;
	srq->cons++;
	/* The library frees SRQ slots from this index. */
	__atomic_store_n(&srq->ctl->rq.cons, srq->cons, __ATOMIC_RELEASE);
	posted--;
	if (srq->limit && posted < srq->limit) {
		srq->limit = 0;
		client_async_event(srq->owner, IBV_EVENT_SRQ_LIMIT_REACHED,
				   srq->user_handle);
	}
	return 0;
}

int rq_take(struct srd_qp_transport *tp)
{
	struct srd_wq *wq = &tp->qp->rq;
	uint32_t prod, posted;
	const uint8_t *slot;

	if (tp->qp->srq) {
		int err = srq_take(tp, tp->qp->srq);

		/* A QP cannot receive from an SRQ in error. */
		if (err == -EIO)
			tp_error(tp, IBV_EVENT_QP_FATAL);
		return err;
	}
	if (tp->rq_hostile || !wq->ctl || !wq->entries)
		return -EAGAIN;
	prod = __atomic_load_n(&wq->ctl->prod, __ATOMIC_ACQUIRE);
	posted = prod - tp->rq_taken;
	if (posted > wq->entries) {
		tp->rq_hostile = true;
		tp_error(tp, IBV_EVENT_QP_FATAL);
		return -EIO;
	}
	if (!posted)
		return -EAGAIN;
	slot = wq->ring +
	       (size_t)(tp->rq_taken & (wq->entries - 1)) * wq->slot_size;
	rwqe_load(tp, slot, wq->slot_size, wq->max_sge);
	tp->rwqe.srq = false;
	tp->rwqe.xsrq = NULL;
	tp->rwqe.idx = tp->rq_taken++;
	__atomic_store_n(&wq->ctl->cons, tp->rq_taken, __ATOMIC_RELEASE);
	return 0;
}
