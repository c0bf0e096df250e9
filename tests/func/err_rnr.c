/* SPDX-License-Identifier: MIT */
/*
 * Receiver not ready: a SEND with no receive posted is NAKed RNR and
 * retried rnr_retry times: with rnr_retry = 1 it fails with
 * IBV_WC_RNR_RETRY_EXC_ERR (and the requester is in ERR); with
 * rnr_retry = 7 (forever) a receive posted 50 ms late still gets it.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct t_conn_opts o;
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint64_t t0;

	t_init("err_rnr");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);

	/* rnr_retry 1, min_rnr_timer 1 (0.01 ms): fails fast. */
	t_conn_opts_init(&o);
	o.rnr_retry = 1;
	o.min_rnr_timer = 1;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t0 = t_now_ms();
	t_post_send(p.a, 1, IBV_WR_SEND, s.mr, s.p, 100, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_RNR_RETRY_EXC_ERR, T_ANY_OPCODE);
	t_log("RNR retry exceeded after %llu ms",
	      (unsigned long long)(t_now_ms() - t0));
	T_EXPECT_NO_WC(p.cq_b, 20);
	T_EQ(t_qp_state(p.a), IBV_QPS_ERR);
	t_pair_destroy(&p);

	/* rnr_retry 7: retries until the receive shows up. */
	t_conn_opts_init(&o);
	o.rnr_retry = 7;
	o.min_rnr_timer = 1;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t_fill(s.p, 100, 2);
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 100, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_NO_WC(p.cq_a, 50);
	t_post_recv(p.b, 3, r.mr, r.p, 4096);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 100);
	T_CHECK_FILL(r.p, 100, 2);
	/* And the connection carries on normally. */
	t_post_recv(p.b, 4, r.mr, r.p, 4096);
	t_fill(s.p, 200, 4);
	t_post_send(p.a, 5, IBV_WR_SEND, s.mr, s.p, 200, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_a, &wc, 5, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(r.p, 200, 4);
	t_pair_destroy(&p);

	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
