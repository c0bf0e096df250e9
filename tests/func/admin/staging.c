/* SPDX-License-Identifier: MIT */
/*
 * Staging (libibverbs/stage.c): with MRs reached in place
 * (SOFTRDMA_MOVE_GUARD=none), the payload of every SEND and WRITE kind
 * is copied at post time into the QP's staging area and sent from there.
 * Every byte arrives, at many sizes and SGE layouts, across the area's
 * wrap and when it is full (the rest go unstaged); what is too large goes
 * unstaged; errors are those of an unstaged WQE.  `statistic show qp`
 * counts the staged WQEs; with SOFTRDMA_STAGING=0 there are none.  Run
 * with SOFTRDMA_STAGING=256K so the area wraps and fills quickly.
 */
#include <stdlib.h>
#include <string.h>

#include "t_admin.h"

#define BUF (1u << 20)
#define BATCH 64

static struct t_dev d;
static struct t_buf src, dst;
static struct t_run r;

static unsigned long long staged(struct ibv_qp *qp)
{
	char qpn[16];

	snprintf(qpn, sizeof(qpn), "%u", qp->qp_num);
	t_cli(&r, "statistic", "show", "qp", qpn, NULL);
	T_EQ(r.status, 0);
	return T_FIELD(r.out, "staged_wqes");
}

static bool staging_on(void)
{
	const char *e = getenv("SOFTRDMA_STAGING");

	return !e || strcmp(e, "0");
}

/* One message of op, len bytes in nsge SGEs from src + soff, to dst +
 * doff (WRITE) or into a receive at dst + doff (SEND); checked. */
static void one(struct t_pair *p, enum ibv_wr_opcode op, uint32_t len, int nsge,
		size_t soff, size_t doff, uint32_t seed, uint32_t inv_rkey)
{
	struct ibv_sge sge[4];
	struct ibv_send_wr wr = { 0 }, *bad;
	bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		    op == IBV_WR_SEND_WITH_INV;
	uint32_t left = len;
	struct ibv_wc wc;

	t_fill(src.p + soff, len, seed);
	memset(dst.p + doff, 0, len + 64);
	for (int i = 0; i < nsge; i++) {
		uint32_t n = i == nsge - 1 ? left : len / nsge;

		sge[i].addr = (uintptr_t)src.p + soff + (len - left);
		sge[i].length = n;
		sge[i].lkey = src.mr->lkey;
		left -= n;
	}
	if (send)
		t_post_recv(p->b, seed, dst.mr, dst.p + doff, len ? len : 1);
	else if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		t_post_recv(p->b, seed, dst.mr, dst.p, 1);
	wr.wr_id = seed;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.wr.rdma.remote_addr = (uintptr_t)dst.p + doff;
	wr.wr.rdma.rkey = dst.mr->rkey;
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = inv_rkey;
	else
		wr.imm_data = htobe32(seed);
	T_OK(ibv_post_send(p->a, &wr, &bad));
	T_EXPECT_WC(p->cq_a, &wc, seed, IBV_WC_SUCCESS, T_ANY_OPCODE);
	if (send || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		T_EXPECT_WC(p->cq_b, &wc, seed, IBV_WC_SUCCESS, T_ANY_OPCODE);
		if (send)
			T_EQ(wc.byte_len, len);
		if (op == IBV_WR_SEND_WITH_INV)
			T_EQ(wc.invalidated_rkey, inv_rkey);
	} else if (!t_wait_fill(dst.p + doff, len, seed, T_WAIT_MS)) {
		/* UC: the sender's completion does not wait for the data. */
		T_FAIL("WRITE of %u bytes did not arrive", len);
	}
	T_CHECK_FILL(dst.p + doff, len, seed);
	T_EQ(dst.p[doff + len], 0);
}

/* A type 2 window on dst bound through b, for SEND with Invalidate. */
static uint32_t bind_window(struct t_pair *p, struct ibv_mw *mw)
{
	struct ibv_send_wr wr = { .wr_id = 0xb1,
				  .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = dst.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)dst.p;
	wr.bind_mw.bind_info.length = 4096;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	T_OK(ibv_post_send(p->b, &wr, &bad));
	T_EXPECT_WC(p->cq_b, &wc, 0xb1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	return wr.bind_mw.rkey;
}

static void opcodes_and_sizes(void)
{
	static const uint32_t sizes[] = { 1,	 63,	64,    65,    1000,
					  4095,	 4096,	4097,  8192,  30000,
					  65535, 65536, 65537, 200000 };
	static const enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_WRITE,
						  IBV_WR_RDMA_WRITE_WITH_IMM,
						  IBV_WR_SEND,
						  IBV_WR_SEND_WITH_IMM };
	struct t_pair p;
	uint32_t seed = 1, small = 0;
	unsigned long long n;

	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int nsge = 1; nsge <= 3; nsge += 2) {
				/* Offsets move on, so the area wraps. */
				one(&p, ops[o], sizes[i], nsge,
				    (seed * 4099) % (BUF / 2),
				    (seed * 577) % (BUF / 2), seed, 0);
				seed++;
				if (sizes[i] <= 65536)
					small++;
			}
	for (int i = 0; i < 3; i++) {
		struct ibv_mw *mw =
			T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_2));
		uint32_t rkey = bind_window(&p, mw);

		one(&p, IBV_WR_SEND_WITH_INV, 100 + i * 3000, 1 + i, 40, 8192,
		    seed++, rkey);
		small++;
		T_OK(ibv_dealloc_mw(mw));
	}
	n = staged(p.a);
	t_log("%llu of %u messages up to 64 KiB staged", n, small);
	/* Staged are those small enough, all of them: one at a time, the
	 * area never fills. */
	T_EQ(n, staging_on() ? small : 0);
	t_pair_destroy(&p);
}

/* A burst larger than the area: what fits is staged, the rest is not,
 * and every message arrives; a later burst finds the area free again. */
static void full_area(void)
{
	struct ibv_qp_init_attr ia = { .cap = { .max_send_wr = BATCH,
						.max_recv_wr = 4,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	const uint32_t len = 16384;
	unsigned long long n1 = 0, n2 = 0;
	struct ibv_wc wc;
	struct t_pair p;

	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < BATCH; i++) {
			t_fill(src.p + (size_t)i * len, len, 1000 + i + round);
			t_post_send(p.a, i, IBV_WR_RDMA_WRITE, src.mr,
				    src.p + (size_t)i * len, len,
				    IBV_SEND_SIGNALED,
				    (uintptr_t)dst.p + (size_t)i * len,
				    dst.mr->rkey);
		}
		for (int i = 0; i < BATCH; i++)
			T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS,
				    IBV_WC_RDMA_WRITE);
		for (int i = 0; i < BATCH; i++)
			T_CHECK_FILL(dst.p + (size_t)i * len, len,
				     1000 + i + round);
		n2 = staged(p.a);
		if (!round)
			n1 = n2;
	}
	t_log("bursts of %d x %u bytes: %llu, then %llu staged", BATCH, len, n1,
	      n2 - n1);
	if (staging_on()) {
		/* 256 KiB hold 16 of them; the daemon may retire some
		 * while the burst is posted, never all. */
		T_GE(n1, 16);
		T_ASSERT(n1 < BATCH);
		T_GE(n2 - n1, 16);
	} else {
		T_EQ(n2, 0);
	}
	t_pair_destroy(&p);
}

/* Errors as without staging: a bad lkey and an SGE past its MR are
 * local protection errors, and nothing is staged for them. */
static void errors(void)
{
	struct t_pair p;
	struct ibv_wc wc;

	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	{
		struct ibv_sge sge = { (uintptr_t)src.p, 512,
				       src.mr->lkey ^ 0x5a5a00 };
		struct ibv_send_wr wr = { .wr_id = 2,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)dst.p;
		wr.wr.rdma.rkey = dst.mr->rkey;
		T_OK(ibv_post_send(p.a, &wr, &bad));
		T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	}
	T_EQ(staged(p.a), 0);
	t_pair_destroy(&p);

	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_post_recv(p.b, 3, dst.mr, dst.p, 4096);
	t_post_send(p.a, 3, IBV_WR_SEND, src.mr, src.p + BUF - 100, 200,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	T_EQ(staged(p.a), 0);
	t_pair_destroy(&p);
}

/* UC and UD send from the area too. */
static void other_types(void)
{
	struct t_pair p;
	struct ibv_wc wc;

	t_pair_create(&d, &p, IBV_QPT_UC, NULL, NULL);
	for (uint32_t i = 0; i < 20; i++)
		one(&p, i & 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, 1 + i * 3001,
		    1 + i % 3, i * 64, i * 128, 500 + i, 0);
	T_EQ(staged(p.a), staging_on() ? 20 : 0);
	t_pair_destroy(&p);

	t_pair_create(&d, &p, IBV_QPT_UD, NULL, NULL);
	for (uint32_t i = 0; i < 10; i++) {
		uint32_t len = 1 + i * 400;

		t_fill(src.p, len, 700 + i);
		t_post_recv(p.b, i, dst.mr, dst.p, 4096 + 40);
		t_post_ud(p.a, i, p.ah_a, p.b->qp_num, p.qkey, src.mr, src.p,
			  len, IBV_SEND_SIGNALED);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len + 40);
		T_CHECK_FILL(dst.p + 40, len, 700 + i);
	}
	T_EQ(staged(p.a), staging_on() ? 10 : 0);
	t_pair_destroy(&p);
}

int main(void)
{
	t_init("admin_staging");
	t_cli_path();
	t_dev_open(&d);
	t_buf_alloc(&d, &src, BUF, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, BUF, T_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	opcodes_and_sizes();
	full_area();
	errors();
	other_types();
	t_buf_free(&src);
	t_buf_free(&dst);
	t_dev_close(&d);
	t_pass();
}
