/* SPDX-License-Identifier: MIT */
/*
 * A SEND longer than the receive buffer: the responder's receive completes
 * with IBV_WC_LOC_LEN_ERR, the requester's SEND with
 * IBV_WC_REM_INV_REQ_ERR (the responder NAKs it as an invalid request);
 * both QPs end in ERR.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	t_init("err_recv_len");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);

	t_post_recv(p.b, 1, r.mr, r.p, 16);
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 64, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);
	T_EQ(wc.qp_num, p.b->qp_num);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE);
	T_EQ(wc.qp_num, p.a->qp_num);
	T_EQ(t_qp_state(p.a), IBV_QPS_ERR);
	T_EQ(t_qp_state(p.b), IBV_QPS_ERR);

	t_pair_destroy(&p);
	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
