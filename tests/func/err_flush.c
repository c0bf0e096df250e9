/* SPDX-License-Identifier: MIT */
/*
 * Flush: moving a QP to ERR completes every outstanding WR, send and
 * receive, with IBV_WC_WR_FLUSH_ERR and its wr_id, in order per queue;
 * WRs posted to a QP already in ERR are accepted and flushed too.
 */
#include <stdio.h>

#include "t_util.h"

#define NS 6
#define NR 5

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct t_buf s, r;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct t_ep ghost;
	struct t_pair p;
	struct t_dev d;
	int i, next_s = 0, next_r = 0;

	t_init("err_flush");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);

	/* Sends stuck waiting for an ACK that never comes (the peer QPN
	 * doesn't exist, the timeout is seconds), receives never used. */
	cq = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_ep_local(&d, qp, 0, &ghost);
	ghost.qpn = 0xfffff0;
	t_conn_opts_init(&o);
	o.timeout = 20; /* 4.3 s */
	t_qp_connect(qp, 0x10, &ghost, &o);
	for (i = 0; i < NR; i++)
		t_post_recv(qp, 200 + i, r.mr, r.p + i * 64, 64);
	for (i = 0; i < NS; i++)
		t_post_send(qp, 100 + i,
			    i & 1 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, s.mr, s.p,
			    32, IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
	T_EXPECT_NO_WC(cq, 20);
	t_qp_set_state(qp, IBV_QPS_ERR);
	for (i = 0; i < NS + NR; i++) {
		if (!t_poll(cq, &wc, T_WAIT_MS))
			T_FAIL("only %d of %d WRs flushed", i, NS + NR);
		T_WC_STATUS(&wc, IBV_WC_WR_FLUSH_ERR);
		T_EQ(wc.qp_num, qp->qp_num);
		if (wc.wr_id >= 200)
			T_EQ(wc.wr_id, 200 + next_r++);
		else
			T_EQ(wc.wr_id, 100 + next_s++);
	}
	T_EQ(next_s, NS);
	T_EQ(next_r, NR);
	T_EXPECT_NO_WC(cq, 20);

	/* Posting to a QP in ERR: accepted, then flushed. */
	T_OK(t_post_send_ret(qp, 300, IBV_WR_SEND, s.mr, s.p, 8,
			     IBV_SEND_SIGNALED, 0, 0));
	T_EXPECT_WC(cq, &wc, 300, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE);
	T_OK(t_post_recv_ret(qp, 301, r.mr, r.p, 64));
	T_EXPECT_WC(cq, &wc, 301, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));

	/* A live connection: the receives not yet consumed are flushed. */
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	for (i = 0; i < 8; i++)
		t_post_recv(p.b, i, r.mr, r.p + i * 64, 64);
	for (i = 0; i < 3; i++) {
		t_post_send(p.a, 10 + i, IBV_WR_SEND, s.mr, s.p, 16,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p.cq_a, &wc, 10 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
	}
	t_qp_set_state(p.b, IBV_QPS_ERR);
	for (i = 3; i < 8; i++)
		T_EXPECT_WC(p.cq_b, &wc, i, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE);
	T_EXPECT_NO_WC(p.cq_b, 20);
	/* An unsignaled send flushes with a completion too: completions in
	 * error are always generated (as rxe and NICs do). */
	t_qp_set_state(p.a, IBV_QPS_ERR);
	T_OK(t_post_send_ret(p.a, 20, IBV_WR_SEND, s.mr, s.p, 8, 0, 0, 0));
	T_EXPECT_WC(p.cq_a, &wc, 20, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE);
	t_pair_destroy(&p);

	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
