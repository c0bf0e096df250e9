/* SPDX-License-Identifier: MIT */
/*
 * PSNs are 24 bits: starting both directions just below 2^24, multi-packet
 * SENDs, WRITEs, READs and atomics cross the wrap; all complete and the
 * data is intact, and query_qp reports where the PSNs have got to.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN (64 * 1024)

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct t_buf s, r;
	struct ibv_cq *ca, *cb;
	struct ibv_qp *a, *b;
	struct t_ep ea, eb;
	struct ibv_qp_attr q;
	struct ibv_wc wc;
	struct t_dev d;
	int i;

	t_init("rc_psn_wrap");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, LEN, T_ACCESS_ALL);
	ca = t_cq_create(&d, 256, NULL);
	cb = t_cq_create(&d, 256, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, ca, ca);
	a = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, cb, cb);
	b = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_256; /* 256 packets per 64 KiB */
	t_ep_local(&d, a, 0xffff80, &ea);
	t_ep_local(&d, b, 0xfffff0, &eb);
	t_qp_connect(a, ea.psn, &eb, &o);
	t_qp_connect(b, eb.psn, &ea, &o);

	for (i = 0; i < 4; i++) {
		t_post_recv(b, 1, r.mr, r.p, LEN);
		t_fill(s.p, LEN, 10 + i);
		t_post_send(a, 2, IBV_WR_SEND, s.mr, s.p, LEN,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(ca, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(cb, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, LEN);
		T_CHECK_FILL(r.p, LEN, 10 + i);

		t_fill(s.p, LEN, 20 + i);
		t_post_send(a, 3, IBV_WR_RDMA_WRITE, s.mr, s.p, LEN,
			    IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
		T_EXPECT_WC(ca, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(r.p, LEN, 20 + i);

		/* READ responses run on the responder's PSN space from b. */
		t_fill(s.p, LEN, 30 + i);
		t_post_send(b, 4, IBV_WR_RDMA_READ, r.mr, r.p, LEN,
			    IBV_SEND_SIGNALED, (uintptr_t)s.p, s.mr->rkey);
		T_EXPECT_WC(cb, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		T_CHECK_FILL(r.p, LEN, 30 + i);

		*(uint64_t *)(r.p + 64) = 7;
		t_post_atomic(b, 5, IBV_WR_ATOMIC_FETCH_AND_ADD, s.mr, s.p,
			      (uintptr_t)r.p + 64, r.mr->rkey, 1, 0);
		T_EXPECT_WC(cb, &wc, 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
		T_EQ(*(uint64_t *)s.p, 7);
		T_EQ(*(uint64_t *)(r.p + 64), 8);
	}
	/* query_qp reports the live PSNs, as rxe does (sq_psn: the next PSN
	 * to send, rq_psn: the next expected).  a sent 4 x (256 SEND + 256
	 * WRITE packets); b sent 4 x (a READ of 256 response PSNs + one
	 * atomic).  Both have wrapped. */
	T_OK(ibv_query_qp(a, &q, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &ia));
	t_log("a: sq_psn %#x rq_psn %#x", q.sq_psn, q.rq_psn);
	T_EQ(q.sq_psn, (0xffff80 + 4 * 512) & 0xffffff);
	T_EQ(q.rq_psn, (0xfffff0 + 4 * 257) & 0xffffff);
	T_OK(ibv_query_qp(b, &q, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &ia));
	t_log("b: sq_psn %#x rq_psn %#x", q.sq_psn, q.rq_psn);
	T_EQ(q.sq_psn, (0xfffff0 + 4 * 257) & 0xffffff);
	T_EQ(q.rq_psn, (0xffff80 + 4 * 512) & 0xffffff);

	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(ca));
	T_OK(ibv_destroy_cq(cb));
	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
