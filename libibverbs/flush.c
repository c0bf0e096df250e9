/* SPDX-License-Identifier: MIT */
/*
 * Device loss.  When the daemon dies (the kernel marks the robust lock it
 * holds in the status page) or its command connection breaks, nobody is
 * left to complete the work still queued.  The library then completes
 * every such WR itself with IBV_WC_WR_FLUSH_ERR, as a provider flushes on
 * a fatal device error, and later posts and commands fail with EIO, as
 * they do on a disassociated uverbs file.  Nothing here runs while the
 * device lives: a poll that finds its CQ empty costs two more loads.
 */
#include <errno.h>

#include "common/wc_opcode.h"
#include "libibverbs/ibverbs.h"

bool srd_ctx_dead(struct srd_context *ctx)
{
	if (atomic_load_explicit(&ctx->dead, memory_order_relaxed))
		return true;
	if (!atomic_load_explicit(&ctx->conn.broken, memory_order_relaxed) &&
	    !srd_dev_page_dead(ctx->dev_page))
		return false;
	/* What the daemon wrote before it went is visible from now on. */
	atomic_thread_fence(memory_order_acquire);
	atomic_store(&ctx->dead, true);
	return true;
}

static void flush_cqe_init(struct srd_cqe *cqe, struct srd_uqp *qp,
			   uint64_t wr_id, uint8_t opcode, uint32_t idx,
			   uint8_t flags)
{
	*cqe = (struct srd_cqe){
		.wr_id = wr_id,
		.qp_num = qp->qp.qp_num,
		.wqe_idx = idx,
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = opcode,
		.flags = flags,
	};
}

/* Take the oldest WR of a QP's SQ or RQ that no CQE completed. */
static bool take_wq(struct srd_uwq *wq, uint32_t *idx)
{
	uint32_t tail;
	bool got = false;

	if (!wq->entries)
		return false;
	pthread_spin_lock(&wq->lock);
	tail = atomic_load_explicit(&wq->tail, memory_order_relaxed);
	if (tail != wq->head) {
		*idx = tail;
		atomic_store_explicit(&wq->tail, tail + 1,
				      memory_order_release);
		got = true;
	}
	pthread_spin_unlock(&wq->lock);
	return got;
}

/* Take the oldest WR of an SRQ that the daemon had not taken yet.  WRs it
 * had taken but not completed went with it. */
static bool take_srq(struct srd_uwq *wq, uint32_t *idx)
{
	bool got = false;

	pthread_spin_lock(&wq->lock);
	if (!wq->flushing) {
		uint32_t cons =
			__atomic_load_n(&wq->ctl->cons, __ATOMIC_ACQUIRE);

		if ((int32_t)(wq->head - cons) < 0 ||
		    wq->head - cons > wq->entries)
			cons = wq->head;
		wq->flush_pos = cons;
		wq->flushing = true;
	}
	if (wq->flush_pos != wq->head) {
		*idx = wq->flush_pos++;
		got = true;
	}
	pthread_spin_unlock(&wq->lock);
	return got;
}

static bool flush_send(struct srd_ucq *cq, struct srd_cqe *cqe)
{
	list_for_each (&cq->send_qps, it) {
		struct srd_uqp *qp =
			list_entry(it, struct srd_uqp, send_cq_node);
		const struct srd_send_wqe *w;
		uint32_t idx;

		if (!take_wq(&qp->sq, &idx))
			continue;
		w = srd_wq_slot(&qp->sq, idx);
		flush_cqe_init(cqe, qp, w->wr_id, srd_send_wc_opcode(w->opcode),
			       idx, 0);
		return true;
	}
	return false;
}

static bool flush_recv(struct srd_ucq *cq, struct srd_cqe *cqe)
{
	list_for_each (&cq->recv_qps, it) {
		struct srd_uqp *qp =
			list_entry(it, struct srd_uqp, recv_cq_node);
		const struct srd_recv_wqe *w;
		uint32_t idx;

		if (qp->qp.srq) {
			struct srd_uwq *wq = &to_srq(qp->qp.srq)->wq;

			if (!take_srq(wq, &idx))
				continue;
			w = srd_wq_slot(wq, idx);
			flush_cqe_init(cqe, qp, w->wr_id, IBV_WC_RECV, idx,
				       SRD_CQE_RECV | SRD_CQE_SRQ);
			return true;
		}
		if (!take_wq(&qp->rq, &idx))
			continue;
		w = srd_wq_slot(&qp->rq, idx);
		flush_cqe_init(cqe, qp, w->wr_id, IBV_WC_RECV, idx,
			       SRD_CQE_RECV);
		return true;
	}
	/* XRC SRQs complete here whatever target QP took their WRs; a
	 * flushed one names none. */
	list_for_each (&cq->xrc_srqs, it) {
		struct srd_usrq *srq = list_entry(it, struct srd_usrq, cq_node);
		const struct srd_recv_wqe *w;
		uint32_t idx;

		if (!take_srq(&srq->wq, &idx))
			continue;
		w = srd_wq_slot(&srq->wq, idx);
		*cqe = (struct srd_cqe){
			.wr_id = w->wr_id,
			.wqe_idx = idx,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.flags = SRD_CQE_RECV | SRD_CQE_SRQ,
		};
		return true;
	}
	return false;
}

bool srd_cq_flush_one(struct srd_ucq *cq, struct srd_cqe *cqe)
{
	struct srd_context *ctx = to_ctx(cq->cq.context);
	bool got;

	pthread_mutex_lock(&ctx->qpn_tab.lock);
	got = flush_send(cq, cqe) || flush_recv(cq, cqe);
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
	return got;
}
