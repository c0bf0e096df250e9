/* SPDX-License-Identifier: MIT */
/*
 * Queue states through the engine: flushing in ERR (outstanding and newly
 * posted WQEs, send and receive, signaled or not, in order, with their
 * ring indices), RESET and reuse, the SRQ (CQE flags and indices, the
 * limit event once, LAST_WQE_REACHED after a flush that completes the WQE
 * a QP had taken), SQD (nothing new starts, SQ_DRAINED when asked for),
 * and a CQ overrun taking its QP to ERR.
 */
#include <string.h>

#include "tests/unit/engine_harness.h"

#define MRLEN (1u << 20)

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb;
static struct srd_rep rp;

static void set_state(struct eh_qp *q, enum ibv_qp_state st, int extra,
		      struct ibv_qp_attr *a)
{
	struct ibv_qp_attr z;

	if (!a) {
		memset(&z, 0, sizeof(z));
		a = &z;
	}
	a->qp_state = st;
	T_EQ(eh_modify(&h, q, a, IBV_QP_STATE | extra), 0);
}

static void drain_events(void)
{
	struct srd_async_event ev;

	while (eh_event(&h, &ev))
		;
}

static void test_flush(void)
{
	struct eh_conn c = { .timeout = 0 }; /* waits for ever */
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;

	/* a talks to nobody: its WQEs stay outstanding. */
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_connect(&h, &a, 0x7777, &c);
	for (int i = 0; i < 3; i++) {
		w = eh_wqe(i, IBV_WR_SEND, i == 1 ? SRD_WQE_SIGNALED : 0, 1);
		eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) },
			     NULL);
	}
	eh_post_recv(&a, 0x10, (struct srd_sge[]){ eh_sge(&mb, 0, 10) }, 1);
	eh_post_recv(&a, 0x11, (struct srd_sge[]){ eh_sge(&mb, 0, 10) }, 1);
	eh_run(&h, 5);
	eh_none(&scq);
	T_EQ(engine_next_deadline(&h.t.d), UINT64_MAX);

	/* To ERR by command: flushed at once, in order, all of them. */
	set_state(&a, IBV_QPS_ERR, 0, NULL);
	for (uint32_t i = 0; i < 3; i++) {
		T_ASSERT(eh_poll(&scq, &e));
		EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, i);
		T_EQ(e.wqe_idx, i);
		T_EQ(e.qp_num, a.qpn);
	}
	for (uint32_t i = 0; i < 2; i++) {
		T_ASSERT(eh_poll(&rcq, &e));
		EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0x10 + i);
		T_EQ(e.wqe_idx, i);
		T_EQ(e.flags, SRD_CQE_RECV);
	}
	eh_none(&scq);
	eh_none(&rcq);

	/* Posted in ERR: flushed by the next pass. */
	w = eh_wqe(3, IBV_WR_RDMA_WRITE, 0, 0);
	eh_post_send(&a, &w, NULL, NULL);
	eh_post_recv(&a, 0x12, NULL, 0);
	T_EQ(eh_run(&h, 1), 1);
	T_ASSERT(eh_poll(&scq, &e));
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE, 3);
	T_EQ(e.wqe_idx, 3);
	T_ASSERT(eh_poll(&rcq, &e));
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0x12);
	T_EQ(e.wqe_idx, 2);
	T_EQ(eh_run(&h, 3), 0); /* an idle QP in ERR is not work */

	/* RESET forgets; reconnected to a real peer, the QP works. */
	w = eh_wqe(4, IBV_WR_SEND, SRD_WQE_SIGNALED, 0);
	set_state(&a, IBV_QPS_RESET, 0, NULL);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect(&h, &a, b.qpn, NULL);
	eh_connect(&h, &b, a.qpn, NULL);
	eh_post_recv(&b, 0x20, NULL, 0);
	eh_post_send(&a, &w, NULL, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 4);
	T_EQ(e.wqe_idx, 4); /* free-running index carries on */
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x20);

	/* A WQE left in the ring across RESET is never executed. */
	w = eh_wqe(5, IBV_WR_SEND, SRD_WQE_SIGNALED, 0);
	set_state(&b, IBV_QPS_RESET, 0, NULL);
	eh_post_send(&b, &w, NULL, NULL);
	eh_connect(&h, &b, a.qpn, NULL);
	eh_run(&h, 3);
	eh_none(&scq);
	T_EQ(b.qp->sq.ctl->cons, b.sq_prod);
}

static void test_srq(void)
{
	struct eh_srq s;
	struct eh_qp a1, a2, b1, b2;
	struct srd_modify_srq_req mq;
	struct srd_async_event ev;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_srq(&h, h.pd, 16, 2, &s);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a1);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a2);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, &s, NULL, false, &b1);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, &s, NULL, false, &b2);
	eh_connect_pair(&h, &a1, &b1, NULL);
	eh_connect_pair(&h, &a2, &b2, NULL);
	for (int i = 0; i < 4; i++)
		eh_post_srq(
			&s, 0x100 + i,
			(struct srd_sge[]){ eh_sge(&mb, i * 1000, 500),
					    eh_sge(&mb, i * 1000 + 500, 500) },
			2);
	eh_post_srq(&s, 0x104, (struct srd_sge[]){ eh_sge(&mb, 0, MRLEN) }, 1);
	memset(&mq, 0, sizeof(mq));
	mq.handle = s.handle;
	mq.attr_mask = IBV_SRQ_LIMIT;
	mq.attr.srq_limit = 3;
	T_EQ(t_core_cmd(h.t.c, SRD_CMD_MODIFY_SRQ, &mq, sizeof(mq), NULL, 0,
			&rp),
	     0);
	drain_events();

	/* Two QPs draw from the one SRQ, in order. */
	w = eh_wqe(1, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a1, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 700) }, NULL);
	eh_wait(&h, &scq, 5);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x100);
	T_EQ(e.flags, SRD_CQE_RECV | SRD_CQE_SRQ);
	T_EQ(e.wqe_idx, 0);
	T_EQ(e.qp_num, b1.qpn);
	T_EQ(e.byte_len, 700);
	T_ASSERT(!memcmp(mb.p, ma.p, 500));
	T_ASSERT(!memcmp(mb.p + 500, ma.p + 500, 200));
	T_EQ(s.srq->ctl->rq.cons, 1);
	T_ASSERT(!eh_event(&h, &ev)); /* 4 left: not below 3 */
	w.wr_id = 2;
	eh_post_send(&a2, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	eh_wait(&h, &scq, 5);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x101);
	T_EQ(e.qp_num, b2.qpn);
	T_EQ(e.wqe_idx, 1);
	/* 3 left: not below either. */
	T_ASSERT(!eh_event(&h, &ev));
	w.wr_id = 3;
	eh_post_send(&a1, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	eh_wait(&h, &scq, 5);
	eh_wait(&h, &rcq, 5);
	T_ASSERT(eh_event(&h, &ev));
	T_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	T_EQ(ev.user_handle, (uintptr_t)&s);
	T_EQ(s.srq->limit, 0); /* disarmed: once */
	w.wr_id = 4;
	eh_post_send(&a1, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	eh_wait(&h, &scq, 5);
	eh_wait(&h, &rcq, 5);
	T_ASSERT(!eh_event(&h, &ev));

	/* b1 takes the last WQE for a long SEND and goes to ERR half-way:
	 * the WQE flushes (marked SRQ), then LAST_WQE_REACHED. */
	w = eh_wqe(5, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_srq(&s, 0x105, (struct srd_sge[]){ eh_sge(&mb, 0, 100) }, 1);
	eh_post_send(&a1, &w, (struct srd_sge[]){ eh_sge(&ma, 0, MRLEN) },
		     NULL);
	eh_run(&h, 1);
	T_ASSERT(b1.qp->tp->rwqe.valid);
	set_state(&b1, IBV_QPS_ERR, 0, NULL);
	T_ASSERT(eh_poll(&rcq, &e));
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0x104);
	T_EQ(e.flags, SRD_CQE_RECV | SRD_CQE_SRQ);
	T_EQ(e.qp_num, b1.qpn);
	T_ASSERT(eh_event(&h, &ev));
	T_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	T_EQ(ev.user_handle, (uintptr_t)&b1);
	eh_run(&h, 3);
	T_ASSERT(!eh_event(&h, &ev)); /* once */
	/* The other QP still has the SRQ's last WQE. */
	w = eh_wqe(6, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a2, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	for (;;) {
		e = eh_wait(&h, &scq, 2000);
		if (e.wr_id == 6)
			break;
	}
	T_EQ(e.status, IBV_WC_SUCCESS);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x105);
	T_EQ(e.qp_num, b2.qpn);
}

static void test_sqd(void)
{
	struct eh_qp a, b;
	struct ibv_qp_attr at;
	struct srd_async_event ev;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	drain_events();
	w = eh_wqe(1, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, MRLEN) }, NULL);
	eh_run(&h, 1);
	eh_none(&scq);
	memset(&at, 0, sizeof(at));
	at.en_sqd_async_notify = 1;
	set_state(&a, IBV_QPS_SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY, &at);
	T_EQ(a.qp->attr.sq_draining, 1);
	w = eh_wqe(2, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) }, NULL);
	/* What started finishes, then the event; the new WQE waits. */
	e = eh_wait(&h, &scq, 50);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 1);
	eh_run(&h, 5);
	eh_none(&scq);
	T_ASSERT(eh_event(&h, &ev));
	T_EQ(ev.event_type, IBV_EVENT_SQ_DRAINED);
	T_EQ(ev.user_handle, (uintptr_t)&a);
	T_ASSERT(!eh_event(&h, &ev));
	T_EQ(a.qp->attr.sq_draining, 0);
	set_state(&a, IBV_QPS_RTS, 0, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 2);

	/* Without the request, no event. */
	set_state(&a, IBV_QPS_SQD, 0, NULL);
	eh_run(&h, 3);
	T_ASSERT(!eh_event(&h, &ev));
	set_state(&a, IBV_QPS_RTS, 0, NULL);
}

static void test_cq_overrun(void)
{
	struct eh_cq small;
	struct eh_qp a, b;
	struct srd_async_event ev;
	struct srd_send_wqe w;
	bool qp_fatal = false, cq_err = false;

	eh_cq(&h, 3, &small); /* a ring of 4 */
	eh_qp(&h, h.pd, IBV_QPT_RC, &small, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	drain_events();
	for (int i = 0; i < 6; i++) {
		w = eh_wqe(i, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
		w.remote_addr = (uintptr_t)mb.p;
		w.rkey = mb.lkey;
		eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) },
			     NULL);
	}
	eh_run(&h, 3);
	T_EQ(eh_state(&a), IBV_QPS_ERR);
	while (eh_event(&h, &ev)) {
		if (ev.event_type == IBV_EVENT_QP_FATAL &&
		    ev.user_handle == (uintptr_t)&a)
			qp_fatal = true;
		if (ev.event_type == IBV_EVENT_CQ_ERR)
			cq_err = true;
	}
	T_ASSERT(qp_fatal && cq_err);
	T_EQ(small.cq->entries, 4);
	T_EQ(small.cq->prod, 4); /* nothing beyond the ring */
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 256, &scq);
	eh_cq(&h, 256, &rcq);
	eh_mr(&h, h.pd, MRLEN, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, MRLEN, EH_ACCESS_ALL, &mb);
	for (size_t i = 0; i < MRLEN; i++)
		ma.p[i] = (uint8_t)(i * 7 + 1);
	test_flush();
	test_srq();
	test_sqd();
	test_cq_overrun();
	eh_settle(&h);
	eh_fini(&h);
	return T_EXIT_PASS;
}
