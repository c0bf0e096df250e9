/* SPDX-License-Identifier: MIT */
/*
 * Local protection errors: a bogus lkey, an SGE outside its MR, an RDMA
 * READ into an MR without local write, an MR of another PD: each WR
 * completes with IBV_WC_LOC_PROT_ERR, nothing reaches the responder, and
 * the QP is in ERR.
 */
#include <stdio.h>

#include "t_util.h"

static struct t_dev d;
static struct t_buf s, t, ro;

static void expect_prot(const char *what, enum ibv_wr_opcode op, uint32_t lkey,
			void *addr, uint32_t len)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_wc wc;
	struct t_pair p;

	t_log("%s", what);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	memset(t.p, 0xcc, t.len);
	t_post_recv(p.b, 1, t.mr, t.p, 4096);
	wr.wr_id = 2;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)t.p + 4096;
	wr.wr.rdma.rkey = t.mr->rkey;
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(p.a), IBV_QPS_ERR);
	T_EXPECT_NO_WC(p.cq_b, 20);
	T_EQ(t.p[0], 0xcc);
	T_EQ(t.p[4096], 0xcc);
	t_pair_destroy(&p);
}

int main(void)
{
	struct ibv_pd *pd2;
	struct ibv_mr *other;

	t_init("err_lkey");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 8192, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, 8192, T_ACCESS_ALL);
	t_buf_alloc(&d, &ro, 4096, IBV_ACCESS_REMOTE_READ);

	expect_prot("SEND with a bogus lkey", IBV_WR_SEND,
		    s.mr->lkey ^ 0x5a5a00, s.p, 64);
	expect_prot("WRITE with a bogus lkey", IBV_WR_RDMA_WRITE,
		    s.mr->lkey + 0x10000, s.p, 64);
	expect_prot("SEND past the end of the MR", IBV_WR_SEND, s.mr->lkey,
		    s.p + 8192 - 10, 64);
	expect_prot("SEND before the start of the MR", IBV_WR_SEND, s.mr->lkey,
		    s.p - 1, 16);
	expect_prot("READ into an MR without local write", IBV_WR_RDMA_READ,
		    ro.mr->lkey, ro.p, 64);

	pd2 = T_NONNULL(ibv_alloc_pd(d.ctx));
	other = T_NONNULL(ibv_reg_mr(pd2, s.p, 4096, T_ACCESS_ALL));
	expect_prot("SEND from an MR of another PD", IBV_WR_SEND, other->lkey,
		    s.p, 64);
	T_OK(ibv_dereg_mr(other));
	T_OK(ibv_dealloc_pd(pd2));

	t_buf_free(&s);
	t_buf_free(&t);
	t_buf_free(&ro);
	t_dev_close(&d);
	t_pass();
}
