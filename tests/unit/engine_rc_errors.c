/* SPDX-License-Identifier: MIT */
/*
 * RC error paths with their exact statuses: RNR waits and retries
 * (rnr_retry), retransmission on timeout (retry_cnt) toward a peer that is
 * missing, not ready or destroyed, every local check of a send WQE, every
 * responder NAK, and what follows an error: the QP in ERR, later WQEs
 * flushed, the responder's async event.
 */
#include <string.h>

#include "tests/unit/engine_harness.h"

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb, mro, mother;
static uint32_t pd2;

static void pair(struct eh_qp *a, struct eh_qp *b, const struct eh_conn *c)
{
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, b);
	eh_connect_pair(&h, a, b, c);
}

static void drain_events(void)
{
	struct srd_async_event ev;

	while (eh_event(&h, &ev))
		;
}

/* After an error: the QP is in ERR and a new WQE flushes. */
static void check_flushes(struct eh_qp *a, uint64_t id)
{
	struct srd_send_wqe w = eh_wqe(id, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	struct srd_cqe e;

	T_EQ(eh_state(a), IBV_QPS_ERR);
	w.flags = 0; /* unsignaled: flushes complete anyway */
	eh_post_send(a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, id);
	T_EQ(e.qp_num, a->qpn);
}

static void test_rnr_exhausted(void)
{
	struct eh_conn c = { .rnr_retry = 1, .min_rnr_timer = 14 };
	struct eh_qp a, b;
	struct srd_send_wqe w = eh_wqe(1, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	const struct srd_tp_counters *ca, *cb;
	uint64_t t0, wait = 1280000; /* timer 14: 1.28 ms */
	struct srd_cqe e;

	pair(&a, &b, &c);
	ca = engine_qp_counters(a.qp);
	cb = engine_qp_counters(b.qp);
	h.step = 10000;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 64) }, NULL);
	t0 = h.now;
	eh_run(&h, 1);
	T_EQ(cb->rnr_naks_sent, 1);
	T_EQ(ca->rnr_naks_rcvd, 1);
	T_ASSERT(a.qp->tp->rnr_wait);
	/* The loop sleeps until the NAK's timer runs out. */
	T_EQ(engine_next_deadline(&h.t.d), t0 + wait);
	eh_none(&scq);
	while (h.now < t0 + wait) {
		eh_run(&h, 1);
		T_EQ(ca->rnr_naks_rcvd, 1);
	}
	e = eh_wait(&h, &scq, 2);
	EH_CQE(e, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND, 1);
	T_EQ(ca->rnr_naks_rcvd, 2);
	T_EQ(eh_state(&b), IBV_QPS_RTS); /* not the responder's fault */
	check_flushes(&a, 2);
	eh_none(&rcq);
	h.step = 1000;
}

static void test_rnr_recovers(void)
{
	struct eh_qp a, b;
	struct srd_send_wqe w = eh_wqe(3, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	struct srd_cqe e;

	pair(&a, &b, NULL); /* rnr_retry 7: forever */
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 64) }, NULL);
	eh_run(&h, 200);
	T_ASSERT(engine_qp_counters(a.qp)->rnr_naks_rcvd > 10);
	eh_none(&scq);
	eh_post_recv(&b, 0x30, (struct srd_sge[]){ eh_sge(&mb, 0, 64) }, 1);
	e = eh_wait(&h, &scq, 50);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 3);
	e = eh_wait(&h, &rcq, 1);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x30);
	T_EQ(eh_state(&a), IBV_QPS_RTS);
}

/* No response at all: retry_cnt retransmissions, then RETRY_EXC_ERR. */
static void retry_exhausted(struct eh_qp *a, uint64_t id)
{
	const struct srd_tp_counters *ca = engine_qp_counters(a->qp);
	struct srd_send_wqe w =
		eh_wqe(id, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	uint64_t to = 4096ull << 3, t0;
	struct srd_cqe e;

	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 3000) }, NULL);
	t0 = h.now;
	eh_run(&h, 1);
	T_EQ(engine_next_deadline(&h.t.d), t0 + to);
	e = eh_wait(&h, &scq, 1000);
	EH_CQE(e, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE, id);
	/* Three timeouts: two retries of retry_cnt 2, then the error. */
	T_EQ(ca->timeouts, 3);
	T_EQ(ca->retransmits, 2);
	T_EQ(ca->tx_pkts, 9);
	T_ASSERT(h.now >= t0 + 3 * to);
	check_flushes(a, id + 1);
}

static void test_retry(void)
{
	struct eh_conn c = { .timeout = 3, .retry_cnt = 2 };
	struct eh_qp a, b;
	struct ibv_qp_attr at;

	/* Nobody has that QPN. */
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_connect(&h, &a, 0xabcde, &c);
	retry_exhausted(&a, 10);

	/* The peer is only in INIT. */
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect(&h, &a, b.qpn, &c);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	T_EQ(eh_modify(&h, &b, &at,
		       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS),
	     0);
	retry_exhausted(&a, 20);
	T_EQ(engine_qp_counters(b.qp)->rx_drops, 9); /* 3 packets, 3 times */

	/* The peer was destroyed. */
	pair(&a, &b, &c);
	T_EQ(eh_destroy_qp(&h, &b), 0);
	retry_exhausted(&a, 30);
}

/* A local error: good WQEs before it complete, it gets its status, the
 * QP is in ERR. */
static void local_error(struct srd_send_wqe *w, const struct srd_sge *sge,
			const void *inl, enum ibv_wc_status st, uint8_t wcop)
{
	static uint64_t id = 100;
	struct srd_send_wqe good =
		eh_wqe(id++, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	struct eh_qp a, b;
	struct srd_cqe e;

	pair(&a, &b, NULL);
	good.remote_addr = (uintptr_t)mb.p;
	good.rkey = mb.lkey;
	eh_post_send(&a, &good, (struct srd_sge[]){ eh_sge(&ma, 0, 100) },
		     NULL);
	w->wr_id = id++;
	eh_post_send(&a, w, sge, inl);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, good.wr_id);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, st, wcop, w->wr_id);
	T_EQ(e.wqe_idx, 1);
	check_flushes(&a, id++);
	/* A local error raises no event at the responder. */
	T_EQ(eh_state(&b), IBV_QPS_RTS);
}

static void test_local(void)
{
	struct srd_sge s = eh_sge(&ma, 0, 64), big[5];
	struct srd_send_wqe w;
	uint8_t inl[128] = { 0 };

	w = eh_wqe(0, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	s.lkey ^= 0x55;
	local_error(&w, &s, NULL, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND);
	/* Beyond the MR. */
	s = eh_sge(&ma, ma.len - 10, 11);
	local_error(&w, &s, NULL, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND);
	/* Another PD's MR. */
	s = eh_sge(&mother, 0, 8);
	local_error(&w, &s, NULL, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND);
	/* READ into memory without LOCAL_WRITE. */
	w = eh_wqe(0, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	s = eh_sge(&mro, 0, 8);
	local_error(&w, &s, NULL, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_READ);
	/* Atomic result buffer not 8 bytes. */
	w = eh_wqe(0, IBV_WR_ATOMIC_FETCH_AND_ADD, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	s = eh_sge(&ma, 0, 4);
	local_error(&w, &s, NULL, IBV_WC_LOC_LEN_ERR, IBV_WC_FETCH_ADD);
	/* Inline longer than granted. */
	w = eh_wqe(0, IBV_WR_SEND, SRD_WQE_SIGNALED, 0);
	w.flags |= SRD_WQE_INLINE;
	w.inline_len = 65;
	local_error(&w, NULL, inl, IBV_WC_LOC_LEN_ERR, IBV_WC_SEND);
	/* More than the port's max_msg_sz in all. */
	for (int i = 0; i < 5; i++)
		big[i] = eh_sge(&ma, 0, 0x40000000);
	w = eh_wqe(0, IBV_WR_SEND, SRD_WQE_SIGNALED, 3);
	local_error(&w, big, NULL, IBV_WC_LOC_LEN_ERR, IBV_WC_SEND);
	/* More SGEs than granted. */
	w = eh_wqe(0, IBV_WR_SEND, SRD_WQE_SIGNALED, 5);
	local_error(&w, big, NULL, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND);
	/* Opcodes the QP cannot do. */
	w = eh_wqe(0, IBV_WR_LOCAL_INV, SRD_WQE_SIGNALED, 0);
	local_error(&w, NULL, NULL, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	w = eh_wqe(0, 200, SRD_WQE_SIGNALED, 0);
	local_error(&w, NULL, NULL, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND);
}

/* A responder error: the requester's status, the responder's receive
 * completion (if any), both QPs in ERR, the responder's event. */
static void remote_error(struct eh_qp *a, struct eh_qp *b,
			 struct srd_send_wqe *w, const struct srd_sge *sge,
			 enum ibv_wc_status st, uint8_t wcop, int event)
{
	static uint64_t id = 1000;
	struct srd_cqe e;

	drain_events();
	w->wr_id = id++;
	eh_post_send(a, w, sge, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, st, wcop, w->wr_id);
	T_EQ(e.qp_num, a->qpn);
	T_EQ(eh_state(b), IBV_QPS_ERR);
	if (event >= 0)
		eh_expect_event(&h, event, (uintptr_t)b);
	check_flushes(a, id++);
}

static void test_remote_access(void)
{
	struct srd_send_wqe w =
		eh_wqe(0, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	struct srd_sge s = eh_sge(&ma, 0, 64);
	struct eh_conn noacc = { .access = IBV_ACCESS_LOCAL_WRITE };
	struct eh_qp a, b;

	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey ^ 0x7700;
	pair(&a, &b, NULL);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE,
		     IBV_EVENT_QP_ACCESS_ERR);
	/* Past the end of the MR. */
	w.rkey = mb.lkey;
	w.remote_addr = (uintptr_t)mb.p + mb.len - 63;
	pair(&a, &b, NULL);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE,
		     IBV_EVENT_QP_ACCESS_ERR);
	/* The MR does not allow remote writes. */
	w.remote_addr = (uintptr_t)mro.p;
	w.rkey = mro.lkey;
	pair(&a, &b, NULL);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE,
		     IBV_EVENT_QP_ACCESS_ERR);
	/* The QP does not: an operation it is not enabled for is an
	 * Invalid Request (rxe's NAK), not an access error. */
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	pair(&a, &b, &noacc);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RDMA_WRITE,
		     IBV_EVENT_QP_REQ_ERR);
	w.opcode = IBV_WR_RDMA_READ;
	pair(&a, &b, &noacc);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RDMA_READ,
		     IBV_EVENT_QP_REQ_ERR);
	w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	s.length = 8;
	pair(&a, &b, &noacc);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_COMP_SWAP,
		     IBV_EVENT_QP_REQ_ERR);
	/* READ from an MR without REMOTE_READ. */
	w.opcode = IBV_WR_RDMA_READ;
	w.remote_addr = (uintptr_t)mro.p;
	w.rkey = mro.lkey;
	pair(&a, &b, NULL);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ,
		     IBV_EVENT_QP_ACCESS_ERR);
}

static void test_remote_invalid(void)
{
	struct srd_send_wqe w;
	struct srd_sge s = eh_sge(&ma, 0, 8);
	struct eh_conn nord = { .max_dest_rd_atomic = -1 };
	struct eh_qp a, b;
	struct srd_cqe e;

	/* Misaligned atomic. */
	w = eh_wqe(0, IBV_WR_ATOMIC_FETCH_AND_ADD, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p + 4;
	w.rkey = mb.lkey;
	pair(&a, &b, NULL);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_FETCH_ADD,
		     IBV_EVENT_QP_REQ_ERR);
	/* READ and atomics toward max_dest_rd_atomic 0. */
	w.remote_addr = (uintptr_t)mb.p;
	pair(&a, &b, &nord);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_FETCH_ADD,
		     IBV_EVENT_QP_REQ_ERR);
	w.opcode = IBV_WR_RDMA_READ;
	pair(&a, &b, &nord);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RDMA_READ,
		     IBV_EVENT_QP_REQ_ERR);

	/* SEND longer than the receive buffer: LOC_LEN_ERR there. */
	pair(&a, &b, NULL);
	eh_post_recv(&b, 0x77, (struct srd_sge[]){ eh_sge(&mb, 0, 10) }, 1);
	w = eh_wqe(0, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	s.length = 3000;
	remote_error(&a, &b, &w, &s, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, -1);
	e = eh_wait(&h, &rcq, 1);
	EH_CQE(e, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0x77);
	T_EQ(e.qp_num, b.qpn);
	/* The rest of the responder's RQ flushes. */
	eh_post_recv(&b, 0x78, (struct srd_sge[]){ eh_sge(&mb, 0, 10) }, 1);
	e = eh_wait(&h, &rcq, 2);
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0x78);
	T_EQ(e.wqe_idx, 1);

	/* A receive WQE with a bad lkey. */
	pair(&a, &b, NULL);
	s = eh_sge(&mb, 0, 10);
	s.lkey ^= 0x1100;
	eh_post_recv(&b, 0x79, &s, 1);
	s = eh_sge(&ma, 0, 10);
	remote_error(&a, &b, &w, &s, IBV_WC_REM_OP_ERR, IBV_WC_SEND, -1);
	e = eh_wait(&h, &rcq, 1);
	EH_CQE(e, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0x79);
}

/* The first packet to a QP in RTR raises COMM_EST, once. */
static void test_comm_est(void)
{
	struct eh_qp a, b;
	struct ibv_qp_attr at;
	struct srd_async_event ev;
	struct srd_send_wqe w = eh_wqe(50, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect(&h, &a, b.qpn, NULL);
	eh_connect(&h, &b, a.qpn, NULL);
	/* Back to RTR is not a legal move: build b again up to RTR. */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RESET;
	T_EQ(eh_modify(&h, &b, &at, IBV_QP_STATE), 0);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	T_EQ(eh_modify(&h, &b, &at,
		       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS),
	     0);
	at.qp_state = IBV_QPS_RTR;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.dgid = h.t.c->dev->port.gid[0];
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = a.qpn;
	at.rq_psn = a.qp->attr.sq_psn;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	T_EQ(eh_modify(&h, &b, &at,
		       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			       IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER),
	     0);
	drain_events();
	eh_post_recv(&b, 0x90, (struct srd_sge[]){ eh_sge(&mb, 0, 64) }, 1);
	eh_post_recv(&b, 0x91, (struct srd_sge[]){ eh_sge(&mb, 0, 64) }, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 64) }, NULL);
	w.wr_id = 51;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 64) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 50);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 51);
	T_ASSERT(eh_event(&h, &ev));
	T_EQ(ev.event_type, IBV_EVENT_COMM_EST);
	T_EQ(ev.user_handle, (uintptr_t)&b);
	T_ASSERT(!eh_event(&h, &ev));
	eh_wait(&h, &rcq, 1);
	eh_wait(&h, &rcq, 1);
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 1024, &scq);
	eh_cq(&h, 1024, &rcq);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &mb);
	eh_mr(&h, h.pd, 65536, 0, &mro);
	pd2 = eh_pd(&h);
	eh_mr(&h, pd2, 4096, EH_ACCESS_ALL, &mother);

	test_rnr_exhausted();
	test_rnr_recovers();
	test_retry();
	test_local();
	test_remote_access();
	test_remote_invalid();
	test_comm_est();
	eh_settle(&h);
	eh_fini(&h);
	return T_EXIT_PASS;
}
