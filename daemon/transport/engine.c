/* SPDX-License-Identifier: MIT */
/*
 * The engine's entry points: one pass over every QP (timers, READ replies,
 * the requester, flushing), the earliest timer, and the QP lifecycle hooks
 * the daemon core calls.  An idle QP in RTS costs one load of its SQ
 * producer index per pass.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

#define PLACE_LOOK_NS 1000000ull

int engine_init(struct srd_daemon *d)
{
	struct srd_engine *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	e->d = d;
	list_head_init(&e->place_busy);
	d->engine = e;
	err = wire_init(e);
	if (err) {
		d->engine = NULL;
		free(e);
	}
	return err;
}

void engine_fini(struct srd_daemon *d)
{
	if (d->engine)
		wire_fini(d->engine);
	free(d->engine);
	d->engine = NULL;
}

bool tp_outstanding(struct srd_qp_transport *tp)
{
	if (tp->sq_head != tp->sq_next)
		return true;
	return tp->sq_next != tp->sq_fetched &&
	       tp_swqe(tp, tp->sq_next)->state == SWQE_ACTIVE;
}

void tp_rearm_timer(struct srd_qp_transport *tp)
{
	uint64_t to = tp_timeout_ns(tp->qp->attr.timeout);

	if (to && !tp->rnr_wait && tp_outstanding(tp))
		tp->rexmit_deadline = tp->eng->now + to;
	else
		tp->rexmit_deadline = 0;
}

void tp_error(struct srd_qp_transport *tp, int event)
{
	if (tp_state(tp) == IBV_QPS_ERR)
		return;
	qp_enter_error(tp->qp, event);
	tp->flush_pending = true;
}

void tp_sq_error(struct srd_qp_transport *tp)
{
	struct srd_qp *qp = tp->qp;

	if (qp->attr.qp_state == IBV_QPS_ERR ||
	    qp->attr.qp_state == IBV_QPS_SQE)
		return;
	/* IBTA 10.3.1: UC and UD send errors stop the SQ only; the
	 * application moves the QP back to RTS.  No core call exists for
	 * a device-initiated SQE, so the state is set here. */
	qp->attr.qp_state = IBV_QPS_SQE;
	qp->attr.cur_qp_state = IBV_QPS_SQE;
	tp->flush_pending = true;
}

static uint32_t tp_path_mtu(const struct srd_qp *qp)
{
	enum ibv_mtu m = qp->dev->port.active_mtu;

	if (qp->type != IBV_QPT_UD && qp->attr.path_mtu >= IBV_MTU_256 &&
	    qp->attr.path_mtu <= IBV_MTU_4096)
		m = qp->attr.path_mtu;
	if (m < IBV_MTU_256 || m > IBV_MTU_4096)
		m = IBV_MTU_1024;
	return 128u << m;
}

static uint32_t wq_prod(const struct srd_wq *wq)
{
	if (!wq->ctl || !wq->entries)
		return 0;
	return __atomic_load_n(&wq->ctl->prod, __ATOMIC_ACQUIRE);
}

/* RESET: forget everything and start from what the rings hold now, so
 * WQEs posted before the reset are never executed. */
static void tp_reset(struct srd_qp_transport *tp)
{
	struct srd_qp *qp = tp->qp;
	uint32_t sq = wq_prod(&qp->sq), rq = wq_prod(&qp->rq);

	tp->sq_head = tp->sq_next = tp->sq_fetched = sq;
	if (qp->sq.ctl && qp->sq.entries)
		__atomic_store_n(&qp->sq.ctl->cons, sq, __ATOMIC_RELEASE);
	tp->rq_taken = rq;
	if (qp->rq.ctl && qp->rq.entries)
		__atomic_store_n(&qp->rq.ctl->cons, rq, __ATOMIC_RELEASE);
	tp->psn = tp->una_psn = qp->attr.sq_psn & ROCE_PSN_MASK;
	tp->psn_max = tp->psn;
	tp->epsn = qp->attr.rq_psn & ROCE_PSN_MASK;
	tp->msn = 0;
	tp->noack_pkts = 0;
	cwnd_reset(tp);
	tp->rd_atomic = 0;
	tp->retry_left = qp->attr.retry_cnt;
	tp->rnr_left = qp->attr.rnr_retry;
	tp->peer_wait_since = 0;
	tp->implied_retry = false;
	tp->rnr_wait = false;
	tp->rnr_deadline = 0;
	tp->rexmit_deadline = 0;
	tp->sq_hostile = false;
	tp->rq_hostile = false;
	tp->drained_sent = false;
	tp->comm_est = false;
	tp->last_wqe_sent = false;
	tp->flush_pending = false;
	tp->route_valid = false;
	engine_place_tp_gone(tp);
	responder_reset(tp);
}

int engine_qp_create(struct srd_qp *qp)
{
	struct srd_qp_transport *tp = calloc(1, sizeof(*tp));
	int err;

	if (!tp)
		return -ENOMEM;
	tp->qp = qp;
	tp->eng = qp->owner->d->engine;
	tp->swq_stride = (offsetof(struct srd_swqe, w) + qp->sq.slot_size + 7) &
			 ~7u;
	if (qp->sq.entries) {
		tp->swq = calloc(qp->sq.entries, tp->swq_stride);
		if (!tp->swq) {
			err = -ENOMEM;
			goto err_free_tp;
		}
	}
	err = responder_set_resources(tp, 1);
	if (err)
		goto err_free_swq;
	qp->tp = tp;
	tp_reset(tp);
	tp->mtu = tp_path_mtu(qp);
	return 0;

err_free_swq:
	free(tp->swq);
err_free_tp:
	free(tp);
	return err;
}

void engine_qp_destroy(struct srd_qp *qp)
{
	struct srd_qp_transport *tp = qp->tp;

	/* Packets never wait in a queue (delivery is synchronous), so none
	 * can refer to this QP after this.  Peers see silence and time out. */
	if (!tp)
		return;
	/* A held ACK goes now: the QP's path is still there. */
	responder_ack_flush(tp);
	engine_place_tp_gone(tp);
	qp->tp = NULL;
	free(tp->res);
	free(tp->swq);
	free(tp);
}

void engine_qp_modified(struct srd_qp *qp, enum ibv_qp_state old, int attr_mask)
{
	struct srd_qp_transport *tp = qp->tp;
	enum ibv_qp_state st = qp->attr.qp_state;

	if (!tp)
		return;
	if (st == IBV_QPS_RESET || (old == IBV_QPS_RESET && st != old))
		tp_reset(tp);
	tp->mtu = tp_path_mtu(qp);
	/* After a GID change the device tells only QPs in INIT..SQD
	 * (engine_qp_path_changed()): one in SQE (UC) looks again here,
	 * on its way back. */
	if (attr_mask & (IBV_QP_AV | IBV_QP_STATE))
		tp->route_valid = false;
	if (attr_mask & IBV_QP_RQ_PSN)
		tp->epsn = qp->attr.rq_psn & ROCE_PSN_MASK;
	if (attr_mask & IBV_QP_SQ_PSN)
		tp->psn = tp->una_psn = tp->psn_max = qp->attr.sq_psn &
						      ROCE_PSN_MASK;
	if (attr_mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		responder_set_resources(tp, qp->attr.max_dest_rd_atomic);
	if (attr_mask & IBV_QP_RETRY_CNT)
		tp->retry_left = qp->attr.retry_cnt;
	if (attr_mask & IBV_QP_RNR_RETRY)
		tp->rnr_left = qp->attr.rnr_retry;
	if (st == IBV_QPS_SQD && old != IBV_QPS_SQD) {
		tp->drained_sent = false;
		tp->sqd_notify = (attr_mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
				 qp->attr.en_sqd_async_notify;
		qp->attr.sq_draining = 1;
	}
	if (st == IBV_QPS_ERR || st == IBV_QPS_SQE) {
		tp->flush_pending = true;
		/* Inside a pass the flush waits for a safe point. */
		if (!tp->eng->in_progress)
			flush_run(tp);
	}
}

void engine_qp_path_changed(struct srd_qp *qp)
{
	struct srd_qp_transport *tp = qp->tp;

	if (!tp)
		return;
	tp->mtu = tp_path_mtu(qp);
	tp->route_valid = false;
}

void engine_srq_destroyed(struct srd_srq *srq)
{
	struct srd_daemon *d = srq->owner->d;

	/* QPs hold no reference to SRQ slots: WQEs are copied when taken.
	 * XRC target QPs point at the SRQ of the request in progress, and
	 * a receive taken from it completes on its CQ: both go. */
	if (!srq->xh)
		return;
	list_for_each (&d->qps, n) {
		struct srd_qp *qp = container_of(n, struct srd_qp, node);
		struct srd_qp_transport *tp = qp->tp;

		if (qp->type != IBV_QPT_XRC_RECV || !tp)
			continue;
		if (tp->rwqe.valid && tp->rwqe.xsrq == srq) {
			responder_reset_msg(tp);
			tp->rwqe.valid = false;
		}
		if (qp->srq == srq) {
			qp->srq = NULL;
			qp->pd = NULL;
			tp->rd_active = NULL;
		}
	}
}

static bool tp_progress(struct srd_qp_transport *tp, uint64_t now)
{
	enum ibv_qp_state st = tp_state(tp);
	bool work = false;

	switch (st) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		if (tp->qp->type == IBV_QPT_RAW_PACKET) {
			if (st == IBV_QPS_RTS)
				work |= raw_send_run(tp);
			break;
		}
		if (tp->rnr_wait || tp->rexmit_deadline)
			work |= completer_timers(tp, now);
		if (tp->rd_active)
			work |= responder_run(tp, SRD_READ_BUDGET);
		work |= requester_run(tp);
		if (tp_state(tp) == IBV_QPS_SQD && !tp->drained_sent &&
		    !tp_outstanding(tp)) {
			/* The event only when asked for entering SQD. */
			tp->drained_sent = true;
			tp->qp->attr.sq_draining = 0;
			if (tp->sqd_notify)
				client_async_event(tp->qp->owner,
						   IBV_EVENT_SQ_DRAINED,
						   tp->qp->user_handle);
		}
		break;
	case IBV_QPS_RTR:
		if (tp->rd_active)
			work |= responder_run(tp, SRD_READ_BUDGET);
		break;
	case IBV_QPS_SQE:
	case IBV_QPS_ERR:
		work |= flush_run(tp);
		break;
	default:
		break;
	}
	if (tp->flush_pending)
		work |= flush_run(tp);
	return work;
}

bool engine_progress(struct srd_daemon *d, uint64_t now_ns)
{
	struct srd_engine *e = d->engine;
	bool work = false;

	e->now = now_ns;
	e->in_progress = true;
	work |= place_poll(e);
	work |= wire_poll(e);
	work |= raw_poll(e);
	list_for_each (&d->qps, it) {
		struct srd_qp *qp = list_entry(it, struct srd_qp, node);

		if (qp->tp)
			work |= tp_progress(qp->tp, now_ns);
	}
	wire_flush(e);
	e->in_progress = false;
	return work;
}

uint64_t engine_next_deadline(struct srd_daemon *d)
{
	uint64_t t = wire_next_deadline(d->engine);

	/* The owner's thread rings the doorbell when it finishes jobs; a
	 * look now and then covers one that cannot. */
	if (place_waiting(d->engine))
		t = d->engine->now + PLACE_LOOK_NS;

	list_for_each (&d->qps, it) {
		struct srd_qp *qp = list_entry(it, struct srd_qp, node);
		struct srd_qp_transport *tp = qp->tp;

		if (!tp)
			continue;
		if (tp->flush_pending || tp->rd_active)
			return 0;
		if (tp->rnr_wait && tp->rnr_deadline < t)
			t = tp->rnr_deadline;
		if (tp->rexmit_deadline && tp->rexmit_deadline < t)
			t = tp->rexmit_deadline;
	}
	return t;
}

const struct srd_tp_counters *engine_qp_counters(const struct srd_qp *qp)
{
	return qp->tp ? &qp->tp->cnt : NULL;
}
