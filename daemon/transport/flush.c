/* SPDX-License-Identifier: MIT */
/*
 * The error states: in ERR every outstanding and every newly posted WQE,
 * send and receive, completes with IBV_WC_WR_FLUSH_ERR; in SQE (UC/UD
 * send error) the send queue only.  A QP on an SRQ flushes the receive
 * WQE it had taken and then reports IBV_EVENT_QP_LAST_WQE_REACHED once.
 */
#include <string.h>

#include "daemon/transport/engine.h"

static bool flush_sq(struct srd_qp_transport *tp)
{
	struct srd_wq *wq = &tp->qp->sq;
	bool work = false;
	uint32_t prod;

	while (tp->sq_head != tp->sq_fetched) {
		tp_send_cqe(tp, tp_swqe(tp, tp->sq_head), tp->sq_head,
			    IBV_WC_WR_FLUSH_ERR);
		tp->sq_head++;
		work = true;
	}
	tp->sq_next = tp->sq_head;
	tp->rd_atomic = 0;
	tp->rnr_wait = false;
	tp->rexmit_deadline = 0;
	if (tp->sq_hostile || !wq->ctl || !wq->entries)
		return work;
	prod = __atomic_load_n(&wq->ctl->prod, __ATOMIC_ACQUIRE);
	if (prod == tp->sq_fetched)
		return work;
	if (prod - tp->sq_head > wq->entries) {
		/* Nothing sane to flush: ignore this ring from now on. */
		tp->sq_hostile = true;
		return work;
	}
	for (uint32_t idx = tp->sq_fetched; idx != prod; idx++) {
		struct srd_swqe tmp;

		memset(&tmp, 0, sizeof(tmp));
		memcpy(&tmp.w,
		       wq->ring + (size_t)(idx & (wq->entries - 1)) *
					  wq->slot_size,
		       sizeof(tmp.w));
		tp_send_cqe(tp, &tmp, idx, IBV_WC_WR_FLUSH_ERR);
	}
	tp->sq_head = tp->sq_next = tp->sq_fetched = prod;
	__atomic_store_n(&wq->ctl->cons, prod, __ATOMIC_RELEASE);
	return true;
}

static void flush_rwqe(struct srd_qp_transport *tp)
{
	struct srd_recv_cqe_info info = {
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV,
	};

	tp_recv_cqe(tp, &info);
}

static bool flush_rq(struct srd_qp_transport *tp)
{
	struct srd_qp *qp = tp->qp;
	struct srd_wq *wq = &qp->rq;
	bool work = false;
	uint32_t prod;

	responder_reset_msg(tp);
	if (tp->rwqe.valid) {
		flush_rwqe(tp);
		work = true;
	}
	if (qp->type == IBV_QPT_XRC_RECV)
		return work; /* no queue of its own, SRQs are per request */
	if (qp->srq) {
		if (!tp->last_wqe_sent) {
			tp->last_wqe_sent = true;
			client_async_event(qp->owner,
					   IBV_EVENT_QP_LAST_WQE_REACHED,
					   qp->user_handle);
			work = true;
		}
		return work;
	}
	if (tp->rq_hostile || !wq->ctl || !wq->entries)
		return work;
	prod = __atomic_load_n(&wq->ctl->prod, __ATOMIC_ACQUIRE);
	if (prod == tp->rq_taken)
		return work;
	if (prod - tp->rq_taken > wq->entries) {
		tp->rq_hostile = true;
		return work;
	}
	for (; tp->rq_taken != prod; tp->rq_taken++) {
		struct srd_recv_wqe hdr;

		memcpy(&hdr,
		       wq->ring + (size_t)(tp->rq_taken & (wq->entries - 1)) *
					  wq->slot_size,
		       sizeof(hdr));
		tp->rwqe.valid = true;
		tp->rwqe.srq = false;
		tp->rwqe.idx = tp->rq_taken;
		tp->rwqe.wr_id = hdr.wr_id;
		flush_rwqe(tp);
	}
	__atomic_store_n(&wq->ctl->cons, tp->rq_taken, __ATOMIC_RELEASE);
	return true;
}

bool flush_run(struct srd_qp_transport *tp)
{
	enum ibv_qp_state st = tp_state(tp);
	bool work = false;

	tp->flush_pending = false;
	if (st != IBV_QPS_ERR && st != IBV_QPS_SQE)
		return false;
	work |= flush_sq(tp);
	if (st == IBV_QPS_ERR)
		work |= flush_rq(tp);
	return work;
}
