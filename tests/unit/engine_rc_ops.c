/* SPDX-License-Identifier: MIT */
/*
 * RC data movement through the engine: SEND (with immediate, solicited,
 * multi-packet, gather/scatter, inline, zero length), RDMA WRITE (with
 * immediate), RDMA READ, both atomics, unsignaled WQEs, sq_sig_all, fence,
 * the max_rd_atomic limit, process_vm-reached MRs, a QP talking to itself.
 * Every byte that lands is checked and every CQE field the library uses.
 */
#include <string.h>

#include "tests/unit/engine_harness.h"

#define MRLEN (1u << 20)

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_qp a, b;
static struct eh_mr ma, mb;

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 8));
}

static void same(const void *x, const void *y, size_t n, const char *what)
{
	if (memcmp(x, y, n))
		T_FAIL("%s: data differs", what);
}

static void check_send_cqe(const struct srd_cqe *e, uint64_t id, uint8_t op,
			   uint32_t idx)
{
	EH_CQE(*e, IBV_WC_SUCCESS, op, id);
	T_EQ(e->qp_num, a.qpn);
	T_EQ(e->wqe_idx, idx);
	T_EQ(e->flags & SRD_CQE_RECV, 0);
}

static void test_send(void)
{
	struct srd_sge rs[2] = { eh_sge(&mb, 0, 60), eh_sge(&mb, 4096, 100) };
	struct srd_sge ss[3] = { eh_sge(&ma, 100, 4000), eh_sge(&ma, 9000, 10),
				 eh_sge(&ma, 20000, 5990) };
	struct srd_send_wqe w;
	struct srd_cqe e;

	/* One packet, scattered over two SGEs, immediate and SE bit. */
	eh_post_recv(&b, 0x100, rs, 2);
	w = eh_wqe(1, IBV_WR_SEND_WITH_IMM,
		   SRD_WQE_SIGNALED | SRD_WQE_SOLICITED, 1);
	w.imm_data = 0x11223344;
	ss[0].length = 100;
	eh_post_send(&a, &w, ss, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 1, IBV_WC_SEND, 0);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x100);
	T_EQ(e.byte_len, 100);
	T_EQ(e.imm_data, 0x11223344);
	T_EQ(e.wc_flags, IBV_WC_WITH_IMM);
	T_EQ(e.flags, SRD_CQE_RECV | SRD_CQE_SOLICITED);
	T_EQ(e.qp_num, b.qpn);
	T_EQ(e.src_qp, a.qpn);
	T_EQ(e.wqe_idx, 0);
	same(mb.p, ma.p + 100, 60, "scatter 0");
	same(mb.p + 4096, ma.p + 160, 40, "scatter 1");

	/* Ten packets gathered from three SGEs into one. */
	ss[0].length = 4000;
	eh_post_recv(&b, 0x101, (struct srd_sge[]){ eh_sge(&mb, 65536, 20000) },
		     1);
	w = eh_wqe(2, IBV_WR_SEND, SRD_WQE_SIGNALED, 3);
	eh_post_send(&a, &w, ss, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 2, IBV_WC_SEND, 1);
	T_EQ(e.byte_len, 10000);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x101);
	T_EQ(e.byte_len, 10000);
	T_EQ(e.wc_flags, 0);
	T_EQ(e.flags, SRD_CQE_RECV);
	T_EQ(e.wqe_idx, 1);
	same(mb.p + 65536, ma.p + 100, 4000, "gather 0");
	same(mb.p + 65536 + 4000, ma.p + 9000, 10, "gather 1");
	same(mb.p + 65536 + 4010, ma.p + 20000, 5990, "gather 2");

	/* Zero length, into a WQE with no SGE. */
	eh_post_recv(&b, 0x102, NULL, 0);
	w = eh_wqe(3, IBV_WR_SEND, SRD_WQE_SIGNALED, 0);
	eh_post_send(&a, &w, NULL, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 3, IBV_WC_SEND, 2);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x102);
	T_EQ(e.byte_len, 0);

	/* Inline: the bytes travel in the WQE. */
	uint8_t inl[50];

	pattern(inl, sizeof(inl), 77);
	eh_post_recv(&b, 0x103, (struct srd_sge[]){ eh_sge(&mb, 200000, 64) },
		     1);
	w = eh_wqe(4, IBV_WR_SEND, SRD_WQE_SIGNALED | SRD_WQE_INLINE, 0);
	w.inline_len = sizeof(inl);
	eh_post_send(&a, &w, NULL, inl);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 4, IBV_WC_SEND, 3);
	e = eh_wait(&h, &rcq, 10);
	T_EQ(e.byte_len, sizeof(inl));
	same(mb.p + 200000, inl, sizeof(inl), "inline");
	eh_none(&scq);
	eh_none(&rcq);
}

static void test_write(void)
{
	struct srd_sge ss[2] = { eh_sge(&ma, 1000, 3000),
				 eh_sge(&ma, 50000, 2000) };
	struct srd_send_wqe w;
	struct srd_cqe e;

	memset(mb.p, 0, MRLEN);
	w = eh_wqe(10, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 2);
	w.remote_addr = (uintptr_t)mb.p + 7;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, ss, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 10, IBV_WC_RDMA_WRITE, 4);
	same(mb.p + 7, ma.p + 1000, 3000, "write 0");
	same(mb.p + 3007, ma.p + 50000, 2000, "write 1");
	T_EQ(mb.p[6], 0);
	T_EQ(mb.p[5007], 0);
	eh_none(&rcq); /* a plain WRITE takes no receive WQE */

	/* WRITE with immediate: consumes a receive WQE, its buffer unused. */
	eh_post_recv(&b, 0x200, (struct srd_sge[]){ eh_sge(&mb, 900000, 16) },
		     1);
	w = eh_wqe(11, IBV_WR_RDMA_WRITE_WITH_IMM, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p + 100000;
	w.rkey = mb.lkey;
	w.imm_data = 0xcafef00d;
	eh_post_send(&a, &w, ss, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 11, IBV_WC_RDMA_WRITE, 5);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 0x200);
	T_EQ(e.byte_len, 3000);
	T_EQ(e.imm_data, 0xcafef00d);
	T_EQ(e.wc_flags, IBV_WC_WITH_IMM);
	T_EQ(e.src_qp, a.qpn);
	same(mb.p + 100000, ma.p + 1000, 3000, "write imm");
	T_EQ(mb.p[900000], 0);

	/* Zero-length WRITE: no key is needed. */
	w = eh_wqe(12, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 0);
	w.rkey = 0xdeadbeef;
	eh_post_send(&a, &w, NULL, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 12, IBV_WC_RDMA_WRITE, 6);

	/* Large: many passes of the requester budget. */
	pattern(ma.p, MRLEN, 3);
	w = eh_wqe(13, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, MRLEN) }, NULL);
	T_EQ(eh_run(&h, 1), 1);
	eh_none(&scq);
	e = eh_wait(&h, &scq, 100);
	check_send_cqe(&e, 13, IBV_WC_RDMA_WRITE, 7);
	same(mb.p, ma.p, MRLEN, "large write");
}

static void test_read(void)
{
	struct srd_sge ls[2] = { eh_sge(&ma, 0, 2500),
				 eh_sge(&ma, 8192, 4500) };
	struct srd_send_wqe w;
	struct srd_cqe e;

	pattern(mb.p, MRLEN, 9);
	memset(ma.p, 0, MRLEN);
	w = eh_wqe(20, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 2);
	w.remote_addr = (uintptr_t)mb.p + 333;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, ls, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 20, IBV_WC_RDMA_READ, 8);
	T_EQ(e.byte_len, 7000);
	same(ma.p, mb.p + 333, 2500, "read 0");
	same(ma.p + 8192, mb.p + 2833, 4500, "read 1");
	T_EQ(ma.p[2500], 0);

	w = eh_wqe(21, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 0);
	eh_post_send(&a, &w, NULL, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 21, IBV_WC_RDMA_READ, 9);
	T_EQ(e.byte_len, 0);
	eh_none(&rcq);
}

static void test_atomics(void)
{
	uint64_t *remote = (uint64_t *)(mb.p + 4096);
	uint64_t *local = (uint64_t *)(ma.p + 512);
	struct srd_sge ls = eh_sge(&ma, 512, 8);
	struct srd_send_wqe w;
	struct srd_cqe e;

	*remote = 5;
	w = eh_wqe(30, IBV_WR_ATOMIC_CMP_AND_SWP, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)remote;
	w.rkey = mb.lkey;
	w.compare_add = 5;
	w.swap = 0x123456789abcull;
	eh_post_send(&a, &w, &ls, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 30, IBV_WC_COMP_SWAP, 10);
	T_EQ(e.byte_len, 8);
	T_EQ(*local, 5);
	T_EQ(*remote, 0x123456789abcull);

	/* A compare that fails returns the value and changes nothing. */
	w.wr_id = 31;
	eh_post_send(&a, &w, &ls, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 31, IBV_WC_COMP_SWAP, 11);
	T_EQ(*local, 0x123456789abcull);
	T_EQ(*remote, 0x123456789abcull);

	w = eh_wqe(32, IBV_WR_ATOMIC_FETCH_AND_ADD, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)remote;
	w.rkey = mb.lkey;
	w.compare_add = 0x10000000001ull;
	eh_post_send(&a, &w, &ls, NULL);
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 32, IBV_WC_FETCH_ADD, 12);
	T_EQ(*local, 0x123456789abcull);
	T_EQ(*remote, 0x123456789abcull + 0x10000000001ull);
}

/* Unsignaled WQEs: no CQE; a later signaled one completes them all. */
static void test_unsignaled(void)
{
	struct srd_send_wqe w;
	struct srd_cqe e;
	uint32_t base = a.sq_prod;

	for (int i = 0; i < 4; i++)
		eh_post_recv(&b, 0x300 + i,
			     (struct srd_sge[]){ eh_sge(&mb, 0, 64) }, 1);
	for (int i = 0; i < 4; i++) {
		w = eh_wqe(40 + i, IBV_WR_SEND, i == 3 ? SRD_WQE_SIGNALED : 0,
			   1);
		eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) },
			     NULL);
	}
	e = eh_wait(&h, &scq, 10);
	check_send_cqe(&e, 43, IBV_WC_SEND, base + 3);
	eh_none(&scq);
	for (int i = 0; i < 4; i++) {
		e = eh_wait(&h, &rcq, 10);
		EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x300 + i);
	}
	/* The engine's view of the ring follows (informational cons). */
	T_EQ(a.qp->sq.ctl->cons, a.sq_prod);
	T_EQ(b.qp->rq.ctl->cons, b.rq_prod);
}

/* A fenced WQE waits for every earlier READ; an unfenced one does not
 * (and a request behind a READ makes its responses go out first). */
static void test_fence(void)
{
	struct srd_qp_transport *tp = a.qp->tp;
	struct srd_send_wqe w;
	struct srd_cqe e;
	uint32_t base = a.sq_prod;

	w = eh_wqe(50, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 512 * 1024) },
		     NULL);
	w = eh_wqe(51, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED | SRD_WQE_FENCE, 1);
	w.remote_addr = (uintptr_t)mb.p + 600000;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) }, NULL);
	eh_run(&h, 1);
	/* The READ's responses take several passes; the fence holds. */
	T_EQ(tp_swqe(tp, base)->state, SWQE_SENT);
	T_ASSERT(tp_swqe(tp, base)->rd_done > 0);
	T_ASSERT(tp_swqe(tp, base)->rd_done < 512 * 1024);
	T_EQ(tp->rd_atomic, 1);
	T_EQ(tp_swqe(tp, base + 1)->state, SWQE_POSTED);
	for (int i = 50; i <= 51; i++) {
		e = eh_wait(&h, &scq, 20);
		T_EQ(e.status, IBV_WC_SUCCESS);
		T_EQ(e.wr_id, i);
	}
	same(ma.p, mb.p, 512 * 1024, "big read");
	T_EQ(tp->rd_atomic, 0);

	/* Without the fence the WRITE goes at once, and the READ's
	 * responses are all sent before the WRITE is executed. */
	base = a.sq_prod;
	w = eh_wqe(53, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 512 * 1024) },
		     NULL);
	w = eh_wqe(54, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p + 600000;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) }, NULL);
	eh_run(&h, 1);
	T_EQ(tp_swqe(tp, base)->rd_done, 512 * 1024);
	for (int i = 53; i <= 54; i++) {
		e = eh_wait(&h, &scq, 1);
		T_EQ(e.status, IBV_WC_SUCCESS);
		T_EQ(e.wr_id, i);
	}
}

static void test_rd_atomic_limit(void)
{
	struct eh_qp c, d;
	struct eh_conn cc = { .max_rd_atomic = 1 };
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &c);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &d);
	eh_connect_pair(&h, &c, &d, &cc);
	w = eh_wqe(60, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&c, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 300000) },
		     NULL);
	w.wr_id = 61;
	eh_post_send(&c, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 100) }, NULL);
	eh_run(&h, 1);
	T_EQ(c.qp->tp->rd_atomic, 1);
	T_EQ(tp_swqe(c.qp->tp, 1)->state, SWQE_POSTED);
	e = eh_wait(&h, &scq, 20);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 60);
	e = eh_wait(&h, &scq, 20);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 61);
	T_EQ(e.qp_num, c.qpn);
}

/* sq_sig_all: every WQE completes. */
static void test_sig_all(void)
{
	struct eh_qp c, d;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, true, &c);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &d);
	eh_connect_pair(&h, &c, &d, NULL);
	w = eh_wqe(70, IBV_WR_RDMA_WRITE, 0, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&c, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 70);
}

/* Memory the daemon reaches with process_vm_readv/writev. */
static void test_pvm(void)
{
	struct eh_mr pa, pb;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_mr_pvm(&h, h.pd, 65536, EH_ACCESS_ALL, &pa);
	eh_mr_pvm(&h, h.pd, 65536, EH_ACCESS_ALL, &pb);
	pattern(pa.p, 65536, 21);
	eh_post_recv(&b, 0x400, (struct srd_sge[]){ eh_sge(&pb, 0, 65536) }, 1);
	w = eh_wqe(80, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&pa, 0, 40000) }, NULL);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 80);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x400);
	same(pb.p, pa.p, 40000, "pvm send");

	memset(pa.p, 0, 65536);
	w = eh_wqe(81, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&pa, 0, 5000) }, NULL);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 81);
	same(pa.p, mb.p, 5000, "pvm read");

	/* Atomics on process_vm memory: atomic with respect to the device. */
	*(uint64_t *)(pb.p + 8) = 40;
	w = eh_wqe(82, IBV_WR_ATOMIC_FETCH_AND_ADD, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)pb.p + 8;
	w.rkey = pb.lkey;
	w.compare_add = 2;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 8) }, NULL);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 82);
	T_EQ(*(uint64_t *)ma.p, 40);
	T_EQ(*(uint64_t *)(pb.p + 8), 42);
}

/* A QP connected to itself: requester, responder and completer of the
 * same QP run inside one another. */
static void test_self(void)
{
	struct eh_qp s;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &s);
	eh_connect(&h, &s, s.qpn, NULL);
	pattern(ma.p, 10000, 5);
	eh_post_recv(&s, 0x500, (struct srd_sge[]){ eh_sge(&mb, 0, 10000) }, 1);
	w = eh_wqe(90, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&s, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10000) }, NULL);
	w = eh_wqe(91, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)ma.p;
	w.rkey = ma.lkey;
	eh_post_send(&s, &w, (struct srd_sge[]){ eh_sge(&mb, 20000, 5000) },
		     NULL);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 90);
	e = eh_wait(&h, &scq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 91);
	e = eh_wait(&h, &rcq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x500);
	T_EQ(e.src_qp, s.qpn);
	same(mb.p, ma.p, 10000, "self send");
	same(mb.p + 20000, ma.p, 5000, "self read");
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 256, &scq);
	eh_cq(&h, 256, &rcq);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	eh_mr(&h, h.pd, MRLEN, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, MRLEN, EH_ACCESS_ALL, &mb);
	pattern(ma.p, MRLEN, 1);

	test_send();
	test_write();
	test_read();
	test_atomics();
	test_unsignaled();
	test_fence();
	test_rd_atomic_limit();
	test_sig_all();
	test_pvm();
	test_self();
	/* Nothing left behind: every QP idle, no timer armed. */
	eh_settle(&h);
	T_EQ(engine_next_deadline(&h.t.d), UINT64_MAX);
	T_EQ(eh_state(&a), IBV_QPS_RTS);
	T_EQ(eh_state(&b), IBV_QPS_RTS);
	eh_fini(&h);
	return T_EXIT_PASS;
}
