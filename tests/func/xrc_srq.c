/* SPDX-License-Identifier: MIT */
/*
 * XRC in one process: an XRC_SEND QP sends to one XRC_RECV QP, each
 * message to one of two XRC SRQs of the domain (the XRCETH's SRQ number),
 * the receive completing on that SRQ's CQ with the target QP's number;
 * data intact at every size (one packet, many, zero bytes), through
 * ibv_post_send and the ibv_wr_* API (ibv_wr_set_xrc_srqn).  RDMA WRITE,
 * READ and an atomic go through the same QPs, keys checked against the
 * SRQ's PD.  What the verbs refuse (a target cannot post, ATOMIC WRITE is
 * not an XRC operation).  Last, a request naming the SRQ of another
 * domain: the sender completes with IBV_WC_REM_INV_REQ_ERR and the target
 * counts it.
 */
#include <stdio.h>

#include "t_xrc.h"

#define BIG (64 * 1024 + 123)

static struct t_dev d;

int main(void)
{
	struct ibv_cq *scq, *cq1, *cq2, *cq3;
	struct ibv_srq *srq1, *srq2, *srq3;
	struct ibv_xrcd *xrcd, *other;
	struct t_buf src, r1, r2, mem;
	struct ibv_qp *ini, *tgt, *ini2, *tgt2;
	struct ibv_qp_ex *x;
	uint32_t n1, n2, n3;
	uint64_t v;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;
	uint64_t *atom;

	t_init("xrc_srq");
	t_dev_open(&d);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_XRC);
	scq = t_cq_create(&d, 128, NULL);
	cq1 = t_cq_create(&d, 128, NULL);
	cq2 = t_cq_create(&d, 128, NULL);
	cq3 = t_cq_create(&d, 16, NULL);
	t_buf_alloc(&d, &src, BIG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r1, BIG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r2, BIG, T_ACCESS_ALL);
	t_buf_alloc(&d, &mem, 4096, T_ACCESS_ALL);

	xrcd = T_NONNULL(t_xrcd_open(d.ctx, -1, 0));
	srq1 = T_NONNULL(t_xsrq_create(d.ctx, xrcd, cq1, d.pd, 32));
	srq2 = T_NONNULL(t_xsrq_create(d.ctx, xrcd, cq2, d.pd, 32));
	T_OK(ibv_get_srq_num(srq1, &n1));
	T_OK(ibv_get_srq_num(srq2, &n2));
	T_NE(n1, n2);
	T_EQ(n1 & ~0xffffffu, 0);
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini = T_NONNULL(t_xrc_ini_create(
		&d, scq, 64, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE));
	T_EQ(tgt->qp_type, IBV_QPT_XRC_RECV);
	T_EQ(ini->qp_type, IBV_QPT_XRC_SEND);
	/* The target has no queue: nothing to post to it. */
	T_ASSERT(t_post_recv_ret(tgt, 1, src.mr, src.p, 8) != 0);
	T_ASSERT(t_post_send_ret(tgt, 1, IBV_WR_SEND, src.mr, src.p, 8, 0, 0,
				 0) != 0);
	t_xrc_connect(&d, ini, 0x100, tgt, 0x200);
	T_OK(ibv_query_qp(tgt, &qa, IBV_QP_STATE, &qia));
	T_EQ(qa.qp_state, IBV_QPS_RTS);
	T_EQ(qia.qp_type, IBV_QPT_XRC_RECV);

	/* SENDs alternating between the SRQs, each on its own CQ. */
	for (int i = 0; i < 8; i++) {
		uint32_t len = i == 3 ? 0 : i == 5 ? BIG : 100u + 1000u * i;
		struct t_buf *rb = i & 1 ? &r2 : &r1;
		struct ibv_cq *cq = i & 1 ? cq2 : cq1;

		t_post_srq_recv(i & 1 ? srq2 : srq1, 100 + i, rb->mr, rb->p,
				BIG);
		t_fill(src.p, len, i + 1);
		t_xrc_send(ini, i, &src, len, i & 1 ? n2 : n1);
		T_EXPECT_WC(scq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(cq, &wc, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
		T_EQ(wc.qp_num, tgt->qp_num);
		T_CHECK_FILL(rb->p, len, i + 1);
		T_EXPECT_NO_WC(i & 1 ? cq1 : cq2, 0);
	}

	/* The ibv_wr_* way: the SRQ number set per WR. */
	x = T_NONNULL(ibv_qp_to_qp_ex(ini));
	t_post_srq_recv(srq2, 200, r2.mr, r2.p, BIG);
	t_post_srq_recv(srq1, 201, r1.mr, r1.p, BIG);
	t_fill(src.p, 3000, 77);
	ibv_wr_start(x);
	x->wr_id = 20;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, n2);
	ibv_wr_set_sge(x, src.mr->lkey, (uintptr_t)src.p, 3000);
	x->wr_id = 21;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, n1);
	ibv_wr_set_sge(x, src.mr->lkey, (uintptr_t)src.p, 1500);
	T_OK(ibv_wr_complete(x));
	T_EXPECT_WC(scq, &wc, 20, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(scq, &wc, 21, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(cq2, &wc, 200, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 3000);
	T_CHECK_FILL(r2.p, 3000, 77);
	T_EXPECT_WC(cq1, &wc, 201, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 1500);
	T_CHECK_FILL(r1.p, 1500, 77);

	/* WRITE (with immediate: a receive of SRQ 2), READ, fetch and add. */
	t_fill(src.p, 4096, 9);
	wr.wr_id = 30;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &(struct ibv_sge){ (uintptr_t)src.p, 4096, src.mr->lkey };
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)mem.p;
	wr.wr.rdma.rkey = mem.mr->rkey;
	wr.qp_type.xrc.remote_srqn = n1;
	T_OK(ibv_post_send(ini, &wr, &bad));
	T_EXPECT_WC(scq, &wc, 30, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(mem.p, 4096, 9);
	t_post_srq_recv(srq2, 300, r2.mr, r2.p, BIG);
	wr.wr_id = 31;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0xabcd);
	wr.num_sge = 0;
	wr.qp_type.xrc.remote_srqn = n2;
	T_OK(ibv_post_send(ini, &wr, &bad));
	T_EXPECT_WC(scq, &wc, 31, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_EXPECT_WC(cq2, &wc, 300, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 0xabcd);
	memset(r1.p, 0, 4096);
	wr.wr_id = 32;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.sg_list = &(struct ibv_sge){ (uintptr_t)r1.p, 4096, r1.mr->lkey };
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = n1;
	T_OK(ibv_post_send(ini, &wr, &bad));
	T_EXPECT_WC(scq, &wc, 32, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(r1.p, 4096, 9);
	/* SRQ number 0 names no SRQ: an invalid request, NAKed. */
	t_xrc_send(ini, 33, &src, 64, 0);
	T_EXPECT_WC(scq, &wc, 33, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(tgt), IBV_QPS_ERR);
	T_EQ(t_qp_state(ini), IBV_QPS_ERR);

	/* XRC has no ATOMIC WRITE (A19 gives it no opcode). */
	T_NULL_ERRNO(t_xrc_ini_create(&d, scq, 4, IBV_QP_EX_WITH_ATOMIC_WRITE),
		     EOPNOTSUPP);

	/* A fresh pair: an atomic to SRQ 1's PD, then the SRQ of another
	 * domain. */
	other = T_NONNULL(t_xrcd_open(d.ctx, -1, 0));
	srq3 = T_NONNULL(t_xsrq_create(d.ctx, other, cq3, d.pd, 32));
	T_OK(ibv_get_srq_num(srq3, &n3));
	tgt2 = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini2 = T_NONNULL(t_xrc_ini_create(&d, scq, 64, 0));
	t_xrc_connect(&d, ini2, 0x100, tgt2, 0x200);
	atom = (uint64_t *)mem.p;
	*atom = 40;
	wr.wr_id = 40;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &(struct ibv_sge){ (uintptr_t)r1.p, 8, r1.mr->lkey };
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = (uintptr_t)atom;
	wr.wr.atomic.rkey = mem.mr->rkey;
	wr.wr.atomic.compare_add = 2;
	wr.qp_type.xrc.remote_srqn = n1;
	T_OK(ibv_post_send(ini2, &wr, &bad));
	T_EXPECT_WC(scq, &wc, 40, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	memcpy(&v, r1.p, sizeof(v));
	T_EQ(v, 40);
	T_EQ(*atom, 42);
	t_xrc_send(ini2, 41, &src, 64, n3);
	T_EXPECT_WC(scq, &wc, 41, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE);
	T_EXPECT_NO_WC(cq3, 0);
	T_EQ(t_qp_state(tgt2), IBV_QPS_ERR);

	/* Tear down: what uses a domain or a CQ first. */
	T_OK(ibv_destroy_qp(ini2));
	T_OK(ibv_destroy_qp(tgt2));
	T_OK(ibv_destroy_qp(ini));
	T_OK(ibv_destroy_qp(tgt));
	T_EQ(ibv_destroy_cq(cq1), EBUSY);
	T_OK(ibv_destroy_srq(srq1));
	T_OK(ibv_destroy_srq(srq2));
	T_OK(ibv_destroy_srq(srq3));
	T_OK(ibv_close_xrcd(other));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(cq1));
	T_OK(ibv_destroy_cq(cq2));
	T_OK(ibv_destroy_cq(cq3));
	T_OK(ibv_destroy_cq(scq));
	t_buf_free(&src);
	t_buf_free(&r1);
	t_buf_free(&r2);
	t_buf_free(&mem);
	t_dev_close(&d);
	t_pass();
}
