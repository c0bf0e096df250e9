/* SPDX-License-Identifier: MIT */
/*
 * A receive posted with a bogus lkey: when a SEND arrives, the responder's
 * receive completes with IBV_WC_LOC_PROT_ERR and the requester's SEND
 * with IBV_WC_REM_OP_ERR; both QPs end in ERR.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct t_buf s, r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	t_init("err_rem_op");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);

	memset(r.p, 0xcc, 4096);
	sge = (struct ibv_sge){ (uintptr_t)r.p, 4096, r.mr->lkey ^ 0x3c3c00 };
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	T_OK(ibv_post_recv(p.b, &rwr, &rbad));
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 64, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_REM_OP_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(p.a), IBV_QPS_ERR);
	T_EQ(t_qp_state(p.b), IBV_QPS_ERR);
	for (int i = 0; i < 4096; i++)
		T_EQ(r.p[i], 0xcc);

	t_pair_destroy(&p);
	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
