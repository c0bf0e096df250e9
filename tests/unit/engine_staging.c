/* SPDX-License-Identifier: MIT */
/*
 * Staged WQEs (SRD_WQE_STAGED, common/ring.h) in the engine: the payload
 * comes from the QP's staging area while the SGEs are checked as ever; a
 * descriptor outside the area, of another length than the SGEs, on an
 * opcode that takes no payload, with inline data or on a QP without an
 * area completes in error (IBV_WC_LOC_QP_OP_ERR) and is counted; a bad
 * lkey fails as it does unstaged (IBV_WC_LOC_PROT_ERR), and so does an
 * MR deregistered before a retry (the packet is lost, as unstaged); a
 * retry sends from the area again.  Meant for the sanitizers too.
 */
#include <stdio.h>
#include <string.h>

#include "tests/unit/engine_harness.h"

#define ALL_ACCESS                                          \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define MRLEN (256u << 10)
#define AREA (64u << 10)

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr src, dst;

static void pair(struct eh_qp *a, struct eh_qp *b, uint32_t stage)
{
	h.stage_bytes = stage;
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, b);
	eh_connect_pair(&h, a, b, NULL);
}

static uint8_t *area(const struct eh_qp *q)
{
	return (uint8_t *)q->qp->stage;
}

static void write_wqe(struct srd_send_wqe *w, uint64_t wr_id, uint32_t len,
		      uint64_t off)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = IBV_WR_RDMA_WRITE;
	w->flags = SRD_WQE_SIGNALED | SRD_WQE_STAGED;
	w->num_sge = 1;
	w->remote_addr = (uintptr_t)dst.p;
	w->rkey = dst.lkey;
	w->stage.offset = off;
	w->stage.length = len;
}

/* The bytes sent are the staged ones, not the MR's. */
static void test_from_area(void)
{
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_sge sg[3];
	struct srd_cqe e;
	uint64_t off = 0;

	pair(&a, &b, AREA);
	T_ASSERT(area(&a));
	T_EQ(a.qp->stage_len, AREA);
	memset(src.p, 0x11, MRLEN);
	for (uint32_t len = 1, i = 0; len <= 32768; len = len * 3 + 7, i++) {
		memset(dst.p, 0, MRLEN);
		if (off + len > AREA)
			off = 0;
		memset(area(&a) + off, 0x40 + (int)i, len);
		write_wqe(&w, i, len, off);
		sg[0] = eh_sge(&src, 0, len / 2);
		sg[1] = eh_sge(&src, 100, 0);
		sg[2] = eh_sge(&src, 4096, len - len / 2);
		w.num_sge = 3;
		eh_post_send(&a, &w, sg, NULL);
		e = eh_wait(&h, &scq, 20);
		EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, i);
		for (uint32_t k = 0; k < len; k++)
			if (dst.p[k] != 0x40 + i)
				T_FAIL("len %u byte %u: %#x", len, k, dst.p[k]);
		T_EQ(dst.p[len], 0);
		off += (len + 63) & ~63u;
	}
	/* A SEND too, into a receive of b. */
	{
		struct srd_sge r = eh_sge(&dst, 0, 4096);

		eh_post_recv(&b, 0x77, &r, 1);
		memset(area(&a), 0x5c, 300);
		write_wqe(&w, 0x66, 300, 0);
		w.opcode = IBV_WR_SEND;
		sg[0] = eh_sge(&src, 0, 300);
		eh_post_send(&a, &w, sg, NULL);
		e = eh_wait(&h, &scq, 20);
		EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 0x66);
		e = eh_wait(&h, &rcq, 20);
		EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x77);
		T_EQ(e.byte_len, 300);
		T_EQ(dst.p[0], 0x5c);
		T_EQ(dst.p[299], 0x5c);
	}
	T_GE(engine_qp_counters(a.qp)->staged_wqes, 8);
	T_EQ(engine_qp_counters(a.qp)->stage_rejects, 0);
}

/* One hostile WQE on a fresh pair: the status and the count. */
static void expect(const char *what, const struct srd_send_wqe *w,
		   const struct srd_sge *sg, const void *inl, uint32_t stage,
		   enum ibv_wc_status st, uint64_t rejects)
{
	struct eh_qp a, b;
	struct srd_cqe e;

	fprintf(stderr, "# %s\n", what);
	pair(&a, &b, stage);
	memset(dst.p, 0, 4096);
	eh_post_send(&a, w, sg, inl);
	e = eh_wait(&h, &scq, 20);
	T_EQ(e.status, st);
	T_EQ(e.wr_id, w->wr_id);
	T_EQ(eh_state(&a), IBV_QPS_ERR);
	T_EQ(engine_qp_counters(a.qp)->stage_rejects, rejects);
	T_EQ(engine_qp_counters(a.qp)->staged_wqes, 0);
	T_EQ(dst.p[0], 0);
	eh_none(&rcq);
}

static void test_hostile(void)
{
	struct srd_send_wqe w;
	struct srd_sge sg = eh_sge(&src, 0, 4096);

	write_wqe(&w, 1, 4096, AREA - 4095);
	expect("past the end", &w, &sg, NULL, AREA, IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 2, 4096, AREA + 4096);
	expect("beyond the area", &w, &sg, NULL, AREA, IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 3, 4096, UINT64_MAX - 100);
	expect("offset wrapping around", &w, &sg, NULL, AREA,
	       IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 4, 4095, 0);
	expect("shorter than the SGEs", &w, &sg, NULL, AREA,
	       IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 5, 4097, 0);
	expect("longer than the SGEs", &w, &sg, NULL, AREA,
	       IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 6, 4096, 0);
	expect("a QP without an area", &w, &sg, NULL, 0, IBV_WC_LOC_QP_OP_ERR,
	       1);
	write_wqe(&w, 7, 8, 0);
	w.opcode = IBV_WR_RDMA_READ;
	sg.length = 8;
	expect("a READ", &w, &sg, NULL, AREA, IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 8, 8, 0);
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	expect("an atomic", &w, &sg, NULL, AREA, IBV_WC_LOC_QP_OP_ERR, 1);
	write_wqe(&w, 9, 16, 0);
	w.flags |= SRD_WQE_INLINE;
	w.num_sge = 0;
	w.inline_len = 16;
	expect("with inline data", &w, NULL, "0123456789abcdef", AREA,
	       IBV_WC_LOC_QP_OP_ERR, 1);

	/* The SGEs first, as unstaged: a bad lkey is a protection error
	 * whatever the descriptor says, and no descriptor is judged. */
	sg = eh_sge(&src, 0, 4096);
	sg.lkey ^= 0x5a00;
	write_wqe(&w, 10, 4096, 0);
	expect("a bad lkey", &w, &sg, NULL, AREA, IBV_WC_LOC_PROT_ERR, 0);
	write_wqe(&w, 11, 4096, AREA + 1);
	expect("a bad lkey and a bad descriptor", &w, &sg, NULL, AREA,
	       IBV_WC_LOC_PROT_ERR, 0);
	sg = eh_sge(&src, MRLEN - 100, 4096);
	write_wqe(&w, 12, 4096, 0);
	expect("an SGE past its MR", &w, &sg, NULL, AREA, IBV_WC_LOC_PROT_ERR,
	       0);
}

/* A staged SEND that meets no receive goes again after the RNR NAK, from
 * the area; one whose MR is deregistered meanwhile fails the SGE's check
 * at that time and is lost, as it would be unstaged. */
static void test_rnr_retry(void)
{
	for (int dereg = 0; dereg < 2; dereg++) {
		struct eh_qp a, b;
		struct eh_mr m;
		struct srd_send_wqe w;
		struct srd_sge sg, r = eh_sge(&dst, 0, 4096);
		struct srd_cqe e;

		pair(&a, &b, AREA);
		eh_mr_pvm(&h, h.pd, 8192, ALL_ACCESS, &m);
		memset(m.p, 0x22, 8192);
		memset(area(&a), 0x33, 1000);
		memset(dst.p, 0, 4096);
		sg = eh_sge(&m, 0, 1000);
		write_wqe(&w, 30 + dereg, 1000, 0);
		w.opcode = IBV_WR_SEND;
		eh_post_send(&a, &w, &sg, NULL);
		eh_run(&h, 3);
		T_GE(engine_qp_counters(a.qp)->rnr_naks_rcvd, 1);
		eh_none(&scq);
		if (dereg)
			T_EQ(eh_dereg(&h, &m), 0);
		eh_post_recv(&b, 0x99, &r, 1);
		if (dereg) {
			/* Its source failing the check, the packet is lost
			 * as unstaged (the timer would retry it). */
			eh_run(&h, 50);
			eh_none(&scq);
			eh_none(&rcq);
			T_GE(engine_qp_counters(b.qp)->rx_drops, 1);
			T_EQ(dst.p[0], 0);
		} else {
			e = eh_wait(&h, &scq, 200);
			EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 30);
			e = eh_wait(&h, &rcq, 20);
			EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x99);
			T_EQ(dst.p[0], 0x33);
			T_EQ(dst.p[999], 0x33);
			T_EQ(eh_dereg(&h, &m), 0);
		}
		T_EQ(engine_qp_counters(a.qp)->staged_wqes, 1);
	}
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 256, &scq);
	eh_cq(&h, 256, &rcq);
	eh_mr_pvm(&h, h.pd, MRLEN, ALL_ACCESS, &src);
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &dst);
	test_from_area();
	test_hostile();
	test_rnr_retry();
	eh_fini(&h);
	return T_EXIT_PASS;
}
