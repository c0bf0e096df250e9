/* SPDX-License-Identifier: MIT */
/*
 * Trains on the in-memory wire: a run of full-MTU packets moved in one
 * copy still counts and acknowledges as its packets (PSNs, counters); a
 * train fed straight to a responder advances the expected PSN by its
 * length; a partly duplicate train keeps only its new packets, taking
 * the payload from the right place across SGE pieces; and no train can
 * be serialized for a real wire.
 */
#include <errno.h>
#include <string.h>

#include "tests/unit/engine_harness.h"

#define MTU 1024

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb;
static struct eh_qp a, b;

static void test_counts(void)
{
	const struct srd_tp_counters *ca = engine_qp_counters(a.qp);
	const struct srd_tp_counters *cb = engine_qp_counters(b.qp);
	uint32_t psn = a.qp->tp->psn;
	struct srd_send_wqe w;
	struct srd_cqe e;

	memset(&w, 0, sizeof(w));
	w.wr_id = 1;
	w.opcode = IBV_WR_SEND;
	w.flags = SRD_WQE_SIGNALED;
	w.num_sge = 1;
	eh_post_recv(&b, 2, (struct srd_sge[]){ eh_sge(&mb, 0, 20 * MTU) }, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10 * MTU - 5) },
		     NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 1);
	e = eh_wait(&h, &rcq, 5);
	T_EQ(e.byte_len, 10 * MTU - 5);
	T_ASSERT(!memcmp(mb.p, ma.p, 10 * MTU - 5));
	T_EQ(ca->tx_pkts, 10);
	T_EQ(cb->rx_pkts, 10);
	T_EQ(a.qp->tp->psn, (psn + 10) & ROCE_PSN_MASK);
	T_EQ(b.qp->tp->epsn, a.qp->tp->psn);
	/* query_qp sees the live PSNs. */
	T_EQ(a.qp->attr.sq_psn, a.qp->tp->psn);
	T_EQ(b.qp->attr.rq_psn, b.qp->tp->epsn);
}

static void test_trim(void)
{
	struct srd_qp_transport *tb = b.qp->tp;
	struct srd_sge pieces[12];
	uint32_t psn = tb->epsn;
	struct srd_pkt p;

	memset(mb.p, 0, 8 * MTU);
	/* The source: twelve half-MTU pieces, scattered. */
	for (int i = 0; i < 12; i++)
		pieces[i] = eh_sge(&ma, 100000 + (11 - i) * 3000, MTU / 2);

	/* WRITE FIRST as a train of 4 of a 6-packet message. */
	srd_pkt_init(&p, ROCE_RC_WRITE_FIRST);
	p.qpn = b.qpn;
	p.psn = psn;
	p.npkts = 4;
	p.reth.va = (uintptr_t)mb.p;
	p.reth.rkey = mb.lkey;
	p.reth.len = 6 * MTU;
	p.paylen = 4 * MTU;
	dma_init_sgl(&p.pay, pieces, 12, a.qp->pd, NULL, 0);
	responder_rx(tb, &p);
	T_EQ(tb->epsn, (psn + 4) & ROCE_PSN_MASK);
	T_EQ(tb->seq, SRD_SEQ_WRITE);
	T_EQ(tb->wr_resid, 2 * MTU);

	/* Packets 2..4 again: 2 and 3 are old, 4 is new. */
	srd_pkt_init(&p, ROCE_RC_WRITE_MIDDLE);
	p.qpn = b.qpn;
	p.psn = (psn + 2) & ROCE_PSN_MASK;
	p.npkts = 3;
	p.paylen = 3 * MTU;
	dma_init_sgl(&p.pay, pieces, 12, a.qp->pd, NULL, 0);
	dma_seek(&p.pay, 2 * MTU);
	responder_rx(tb, &p);
	T_EQ(tb->epsn, (psn + 5) & ROCE_PSN_MASK);
	T_EQ(tb->wr_resid, MTU);

	/* The LAST, alone. */
	srd_pkt_init(&p, ROCE_RC_WRITE_LAST);
	p.qpn = b.qpn;
	p.psn = (psn + 5) & ROCE_PSN_MASK;
	p.paylen = MTU;
	dma_init_sgl(&p.pay, pieces, 12, a.qp->pd, NULL, 0);
	dma_seek(&p.pay, 5 * MTU);
	responder_rx(tb, &p);
	T_EQ(tb->epsn, (psn + 6) & ROCE_PSN_MASK);
	T_EQ(tb->seq, SRD_SEQ_NONE);
	for (int i = 0; i < 12; i++)
		T_ASSERT(!memcmp(mb.p + i * (MTU / 2),
				 (uint8_t *)(uintptr_t)pieces[i].addr,
				 MTU / 2));
	T_EQ(eh_state(&b), IBV_QPS_RTS);

	/* A train that is wholly old is just acknowledged again. */
	srd_pkt_init(&p, ROCE_RC_WRITE_MIDDLE);
	p.qpn = b.qpn;
	p.psn = (psn + 1) & ROCE_PSN_MASK;
	p.npkts = 2;
	p.paylen = 2 * MTU;
	dma_init_sgl(&p.pay, pieces, 12, a.qp->pd, NULL, 0);
	responder_rx(tb, &p);
	T_EQ(tb->epsn, (psn + 6) & ROCE_PSN_MASK);
	T_EQ(tb->cnt.dup_requests, 2 + 2); /* the trimmed two, then two */

	/* A train ending a message is malformed. */
	srd_pkt_init(&p, ROCE_RC_SEND_ONLY);
	p.npkts = 2;
	T_EQ(srd_pkt_hdr_write(&p, (uint8_t[64]){ 0 }, 64), -ENOSPC);
}

/* READ responses come back as trains too. */
static void test_read(void)
{
	const struct srd_tp_counters *ca = engine_qp_counters(a.qp);
	uint64_t rx = ca->rx_pkts;
	struct srd_send_wqe w;
	struct srd_cqe e;

	memset(&w, 0, sizeof(w));
	w.wr_id = 3;
	w.opcode = IBV_WR_RDMA_READ;
	w.flags = SRD_WQE_SIGNALED;
	w.num_sge = 2;
	w.remote_addr = (uintptr_t)mb.p + 1;
	w.rkey = mb.lkey;
	for (size_t i = 0; i < 65536; i++)
		mb.p[i] = (uint8_t)(i * 5);
	eh_post_send(&a, &w,
		     (struct srd_sge[]){ eh_sge(&ma, 0, 3000),
					 eh_sge(&ma, 200000, 30000) },
		     NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 3);
	T_EQ(ca->rx_pkts - rx, 33); /* 33000 bytes */
	T_ASSERT(!memcmp(ma.p, mb.p + 1, 3000));
	T_ASSERT(!memcmp(ma.p + 200000, mb.p + 3001, 30000));
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 64, &scq);
	eh_cq(&h, 64, &rcq);
	eh_mr(&h, h.pd, 1 << 20, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, 1 << 20, EH_ACCESS_ALL, &mb);
	for (size_t i = 0; i < ma.len; i++)
		ma.p[i] = (uint8_t)(i * 3 + (i >> 10));
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, &(struct eh_conn){ .mtu = IBV_MTU_1024 });
	test_counts();
	test_read();
	/* Last: it moves b's PSNs where a never sent. */
	test_trim();
	eh_settle(&h);
	eh_fini(&h);
	return T_EXIT_PASS;
}
