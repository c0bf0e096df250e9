/* SPDX-License-Identifier: MIT */
/*
 * CQs: create and destroy, an empty CQ polls 0, a CQ in use by a QP cannot
 * be destroyed (EBUSY), and resizing keeps the completions not yet polled.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_wc wc[8];
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq, *cq2;
	struct t_buf src, dst;
	struct ibv_qp *qp;
	struct t_pair pp;
	struct t_dev d;
	int i, n, cookie;

	t_init("cq_basic");
	t_dev_open(&d);

	/* cq_context comes back; an empty CQ polls 0, many times. */
	cq = T_NONNULL(ibv_create_cq(d.ctx, 10, &cookie, NULL, 0));
	T_GE(cq->cqe, 10);
	T_PTR_EQ(cq->cq_context, &cookie);
	T_PTR_EQ(cq->context, d.ctx);
	T_PTR_EQ(cq->channel, NULL);
	for (i = 0; i < 1000; i++)
		T_EQ(ibv_poll_cq(cq, 8, wc), 0);

	/* In use by a QP (as send or receive CQ): EBUSY. */
	cq2 = t_cq_create(&d, 10, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq2);
	qp = t_qp_create(&d, &ia);
	T_RET(ibv_destroy_cq(cq), EBUSY);
	T_RET(ibv_destroy_cq(cq2), EBUSY);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	T_OK(ibv_destroy_cq(cq2));

	/* Resize with completions pending: they survive, in order. */
	{
		struct ibv_qp_init_attr pia;

		t_qp_init_attr(&pia, IBV_QPT_RC, NULL, NULL);
		pia.cap.max_send_wr = 8;
		pia.cap.max_recv_wr = 8;
		t_pair_create(&d, &pp, IBV_QPT_RC, &pia, NULL);
	}
	t_buf_alloc(&d, &src, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, 4096, T_ACCESS_ALL);
	T_LT(pp.cq_a->cqe, 200);
	for (i = 0; i < 6; i++)
		t_post_send(pp.a, 100 + i, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
			    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	/* Let all six land in the ring before resizing. */
	T_EXPECT_WC(pp.cq_a, &wc[0], 100, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_sleep_ms(100);
	T_OK(ibv_resize_cq(pp.cq_a, 200));
	T_GE(pp.cq_a->cqe, 200);
	for (i = 1; i < 6; i++)
		T_EXPECT_WC(pp.cq_a, &wc[0], 100 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
	T_EQ(ibv_poll_cq(pp.cq_a, 8, wc), 0);

	/* The resized CQ keeps working, beyond its old size. */
	for (int round = 0; round < 20; round++) {
		for (i = 0; i < 8; i++)
			t_post_send(pp.a, round * 8 + i, IBV_WR_RDMA_WRITE,
				    src.mr, src.p, 64, IBV_SEND_SIGNALED,
				    (uintptr_t)dst.p, dst.mr->rkey);
		for (i = 0; i < 8; i++)
			T_EXPECT_WC(pp.cq_a, &wc[0], round * 8 + i,
				    IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}

	/* Shrinking below the completions pending is refused. */
	for (i = 0; i < 8; i++)
		t_post_send(pp.a, 500 + i, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
			    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	T_EXPECT_WC(pp.cq_a, &wc[0], 500, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_sleep_ms(100);
	T_RET(ibv_resize_cq(pp.cq_a, 2), EINVAL);
	T_OK(ibv_resize_cq(pp.cq_a, 16));
	n = 0;
	for (i = 1; i < 8; i++) {
		T_EXPECT_WC(pp.cq_a, &wc[0], 500 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		n++;
	}
	T_EQ(n, 7);
	T_RET(ibv_resize_cq(pp.cq_a, d.attr.max_cqe + 1), EINVAL);

	t_buf_free(&src);
	t_buf_free(&dst);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
