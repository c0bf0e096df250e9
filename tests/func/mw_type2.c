/* SPDX-License-Identifier: MIT */
/*
 * Type 2 memory windows: bound by IBV_WR_BIND_MW (and ibv_wr_bind_mw) on
 * a QP of their PD, reached only through that QP, zero based or not,
 * invalidated by IBV_WR_LOCAL_INV or by the peer's SEND with Invalidate
 * (IBV_WC_WITH_INV, wc.invalidated_rkey), and every rule IBTA sets for
 * them failing as on rxe.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN 16384

static struct t_dev d;
static struct t_pair p;
static struct t_buf src;
static struct ibv_mr *mr;
static uint8_t *buf;

static void pair_renew(void)
{
	t_pair_destroy(&p);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
}

static void post_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint64_t wr_id,
		      uint32_t rkey, void *addr, uint64_t len,
		      unsigned int access)
{
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = len ? mr : NULL;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	T_OK(ibv_post_send(qp, &wr, &bad));
}

static void post_inv(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		     uint32_t rkey, struct ibv_sge *sge)
{
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = sge,
				  .num_sge = sge ? 1 : 0,
				  .invalidate_rkey = rkey },
			   *bad;

	T_OK(ibv_post_send(qp, &wr, &bad));
}

static void write_expect(uint64_t wr_id, uint64_t raddr, uint32_t len,
			 uint32_t rkey, enum ibv_wc_status st)
{
	t_post_send(p.a, wr_id, IBV_WR_RDMA_WRITE, src.mr, src.p, len,
		    IBV_SEND_SIGNALED, raddr, rkey);
	T_EXPECT_WC(p.cq_a, NULL, wr_id, st, IBV_WC_RDMA_WRITE);
}

/* The peer's SEND with Invalidate of mw's current key, len bytes (0: no
 * data segment; above the path MTU: several packets, the IETH in the
 * last). */
static void remote_inv(struct ibv_mw *mw, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src.p,
			       .length = len,
			       .lkey = src.mr->lkey };
	struct ibv_wc wc;

	t_fill(src.p, len, (uint32_t)wr_id);
	t_post_recv(p.b, wr_id, mr, buf + 8192, 8192);
	post_inv(p.a, IBV_WR_SEND_WITH_INV, wr_id, mw->rkey, len ? &sge : NULL);
	T_EXPECT_WC(p.cq_a, NULL, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_INV);
	T_EQ(wc.invalidated_rkey, mw->rkey);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(buf + 8192, len, (uint32_t)wr_id);
}

/* An invalidated window is free again (o10-37.2.30; rxe: FREE): a QP of
 * its PD binds it anew, on the QP it was bound through or another, with
 * the next key byte or the same one; the old rkey stays dead.  A bind
 * names the window by the key it has now, as rxe_bind_mw() wants it. */
static void test_rebind(struct ibv_mw *mw)
{
	static const uint32_t lens[] = { 64, 0, 5000 };
	uint32_t k0 = mw->rkey, prev;

	post_bind(p.b, mw, 40, ibv_inc_rkey(k0), buf, 8192,
		  IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 40, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = ibv_inc_rkey(k0);

	/* Invalidated remotely, bound again through the same QP, three
	 * times over: each key reaches the window while it is bound. */
	for (unsigned int i = 0; i < 3; i++) {
		uint64_t id = 41 + 4 * (uint64_t)i;

		t_fill(src.p, 256, (uint32_t)id);
		write_expect(id, (uintptr_t)buf + 1024, 256, mw->rkey,
			     IBV_WC_SUCCESS);
		T_CHECK_FILL(buf + 1024, 256, (uint32_t)id);
		remote_inv(mw, id + 1, lens[i]);
		prev = mw->rkey;
		post_bind(p.b, mw, id + 2, ibv_inc_rkey(prev), buf, 8192,
			  IBV_ACCESS_REMOTE_WRITE);
		T_EXPECT_WC(p.cq_b, NULL, id + 2, IBV_WC_SUCCESS,
			    IBV_WC_BIND_MW);
		mw->rkey = ibv_inc_rkey(prev);
		T_NE(mw->rkey, prev);
		T_EQ(mw->rkey >> 8, k0 >> 8);
	}
	t_fill(src.p, 128, 53);
	write_expect(53, (uintptr_t)buf + 2048, 128, mw->rkey, IBV_WC_SUCCESS);
	T_CHECK_FILL(buf + 2048, 128, 53);
	/* The key of the binding before is dead. */
	t_fill(buf, 64, 54);
	write_expect(54, (uintptr_t)buf, 64, prev, IBV_WC_REM_ACCESS_ERR);
	T_CHECK_FILL(buf, 64, 54);
	pair_renew();

	/* Free after a LOCAL_INV too; bound again through another QP with
	 * the same key byte (rxe takes any key byte). */
	post_inv(p.b, IBV_WR_LOCAL_INV, 55, mw->rkey, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 55, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	write_expect(56, (uintptr_t)buf, 64, mw->rkey, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	post_bind(p.b, mw, 57, mw->rkey, buf, LEN, IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 57, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	t_fill(src.p, 64, 58);
	write_expect(58, (uintptr_t)buf + LEN - 64, 64, mw->rkey,
		     IBV_WC_SUCCESS);
	T_CHECK_FILL(buf + LEN - 64, 64, 58);
	/* Bound, it cannot be bound again: the binding stays. */
	post_bind(p.b, mw, 59, ibv_inc_rkey(mw->rkey), buf, 64,
		  IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 59, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pair_renew();
	write_expect(60, (uintptr_t)buf + 4096, 64, mw->rkey,
		     IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	post_inv(p.b, IBV_WR_LOCAL_INV, 61, mw->rkey, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 61, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);

	/* Named by a key it no longer has (an ibv_mw whose rkey was not
	 * moved to the bind's key): MW_BIND_ERR, as on rxe, and the window
	 * stays free for a bind that names it right. */
	prev = mw->rkey;
	mw->rkey = k0;
	post_bind(p.b, mw, 62, ibv_inc_rkey(prev), buf, LEN,
		  IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 62, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	mw->rkey = prev;
	pair_renew();
	post_bind(p.b, mw, 63, ibv_inc_rkey(prev), buf, LEN,
		  IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 63, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = ibv_inc_rkey(prev);
	t_fill(src.p, 64, 64);
	write_expect(64, (uintptr_t)buf, 64, mw->rkey, IBV_WC_SUCCESS);
	T_CHECK_FILL(buf, 64, 64);
	post_inv(p.b, IBV_WR_LOCAL_INV, 65, mw->rkey, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 65, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
}

/* An RC pair of extended QPs (ibv_wr_*). */
struct xpair {
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *xa, *xb;
};

static struct ibv_qp *xqp(struct ibv_cq *cq)
{
	return T_NONNULL(t_qp_ex_create(
		&d, cq, IBV_QPT_RC,
		IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
			IBV_QP_EX_WITH_SEND_WITH_INV |
			IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND));
}

static void xpair_create(struct xpair *x)
{
	struct t_ep ea, eb;

	x->cq_a = t_cq_create(&d, 64, NULL);
	x->cq_b = t_cq_create(&d, 64, NULL);
	x->a = xqp(x->cq_a);
	x->b = xqp(x->cq_b);
	x->xa = T_NONNULL(ibv_qp_to_qp_ex(x->a));
	x->xb = T_NONNULL(ibv_qp_to_qp_ex(x->b));
	t_ep_local(&d, x->a, 100, &ea);
	t_ep_local(&d, x->b, 200, &eb);
	t_qp_connect(x->a, 100, &eb, NULL);
	t_qp_connect(x->b, 200, &ea, NULL);
}

static void xpair_destroy(struct xpair *x)
{
	T_OK(ibv_destroy_qp(x->a));
	T_OK(ibv_destroy_qp(x->b));
	T_OK(ibv_destroy_cq(x->cq_a));
	T_OK(ibv_destroy_cq(x->cq_b));
}

static void test_qp_ex(struct ibv_mw *mw)
{
	struct ibv_mw_bind_info info = { .mr = mr,
					 .addr = (uintptr_t)buf,
					 .length = LEN,
					 .mw_access_flags =
						 IBV_ACCESS_REMOTE_WRITE };
	struct xpair x;
	struct ibv_wc wc;
	uint32_t rkey;

	xpair_create(&x);
	rkey = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(x.xb);
	x.xb->wr_id = 60;
	x.xb->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x.xb, mw, rkey, &info);
	T_OK(ibv_wr_complete(x.xb));
	T_EXPECT_WC(x.cq_b, NULL, 60, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = rkey;

	/* The peer writes through the window, then sends invalidating it. */
	t_fill(src.p, 256, 61);
	ibv_wr_start(x.xa);
	x.xa->wr_id = 61;
	x.xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x.xa, rkey, (uintptr_t)buf + 512);
	ibv_wr_set_sge(x.xa, src.mr->lkey, (uintptr_t)src.p, 256);
	T_OK(ibv_wr_complete(x.xa));
	T_EXPECT_WC(x.cq_a, NULL, 61, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(buf + 512, 256, 61);

	t_post_recv(x.b, 62, mr, buf, 64);
	ibv_wr_start(x.xa);
	x.xa->wr_id = 62;
	x.xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x.xa, rkey);
	ibv_wr_set_sge(x.xa, src.mr->lkey, (uintptr_t)src.p, 64);
	T_OK(ibv_wr_complete(x.xa));
	T_EXPECT_WC(x.cq_a, NULL, 62, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(x.cq_b, &wc, 62, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_INV);
	T_EQ(wc.invalidated_rkey, rkey);

	/* Bind again, invalidate locally with ibv_wr_local_inv. */
	rkey = ibv_inc_rkey(rkey);
	ibv_wr_start(x.xb);
	x.xb->wr_id = 63;
	x.xb->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x.xb, mw, rkey, &info);
	x.xb->wr_id = 64;
	ibv_wr_local_inv(x.xb, rkey);
	T_OK(ibv_wr_complete(x.xb));
	T_EXPECT_WC(x.cq_b, NULL, 63, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_EXPECT_WC(x.cq_b, NULL, 64, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	mw->rkey = rkey;
	ibv_wr_start(x.xa);
	x.xa->wr_id = 65;
	x.xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x.xa, rkey, (uintptr_t)buf);
	ibv_wr_set_sge(x.xa, src.mr->lkey, (uintptr_t)src.p, 8);
	T_OK(ibv_wr_complete(x.xa));
	T_EXPECT_WC(x.cq_a, NULL, 65, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE);
	xpair_destroy(&x);
}

int main(void)
{
	struct ibv_mw *mw, *mw1;
	struct ibv_pd *pd2;
	struct ibv_wc wc;
	struct ibv_sge sge;
	uint32_t r0, r1, r2, r3;
	uint64_t *word;

	t_init("mw_type2");
	t_dev_open(&d);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	buf = t_zalloc(LEN);
	mr = T_NONNULL(
		ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL | IBV_ACCESS_MW_BIND));
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	mw = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_2));
	sge = (struct ibv_sge){ .addr = (uintptr_t)src.p,
				.length = 64,
				.lkey = src.mr->lkey };

	/* Only through a QP's send queue. */
	{
		struct ibv_mw_bind b = { .bind_info = { .mr = mr,
							.addr = (uintptr_t)buf,
							.length = 64 } };

		T_EQ(ibv_bind_mw(p.b, mw, &b), EINVAL);
	}

	/* Bind the whole MR with a new key byte. */
	r1 = ibv_inc_rkey(mw->rkey);
	post_bind(p.b, mw, 1, r1, buf, LEN,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	T_EXPECT_WC(p.cq_b, NULL, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	/* As with rdma-core's providers, the application keeps the new
	 * key of a type 2 window (the next bind names the window by it). */
	r0 = mw->rkey;
	mw->rkey = r1;
	write_expect(2, (uintptr_t)buf, 4096, r0,
		     IBV_WC_REM_ACCESS_ERR); /* the old key */
	pair_renew();
	/* The window belongs to the QP it was bound through: the new pair
	 * cannot use it, and must invalidate it before binding again. */
	write_expect(3, (uintptr_t)buf, 64, r1, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	post_bind(p.b, mw, 4, ibv_inc_rkey(r1), buf, LEN,
		  IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 4, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pair_renew();
	post_inv(p.b, IBV_WR_LOCAL_INV, 5, r1, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 5, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);

	/* Bound on this pair: WRITE and atomics through it. */
	post_bind(p.b, mw, 6, r1, buf, LEN,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	T_EXPECT_WC(p.cq_b, NULL, 6, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	t_fill(src.p, 4096, 7);
	write_expect(7, (uintptr_t)buf, 4096, r1, IBV_WC_SUCCESS);
	T_CHECK_FILL(buf, 4096, 7);
	word = (uint64_t *)(buf + 8192);
	*word = 40;
	t_post_atomic(p.a, 8, IBV_WR_ATOMIC_FETCH_AND_ADD, src.mr, src.p,
		      (uintptr_t)word, r1, 2, 0);
	T_EXPECT_WC(p.cq_a, NULL, 8, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	T_EQ(*(uint64_t *)src.p, 40);
	T_EQ(*word, 42);

	/* The peer's SEND with Invalidate lands and invalidates. */
	t_post_recv(p.b, 9, mr, buf + 4096, 64);
	t_fill(src.p, 64, 9);
	post_inv(p.a, IBV_WR_SEND_WITH_INV, 9, r1, &sge);
	T_EXPECT_WC(p.cq_a, NULL, 9, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 9, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_INV);
	T_EQ(wc.invalidated_rkey, r1);
	T_EQ(wc.byte_len, 64);
	T_CHECK_FILL(buf + 4096, 64, 9);
	write_expect(10, (uintptr_t)buf, 64, r1, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	/* Invalidating what is no longer bound fails. */
	post_inv(p.b, IBV_WR_LOCAL_INV, 11, r1, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 11, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	pair_renew();

	/* Zero based: the peer addresses the window from 0. */
	r2 = ibv_inc_rkey(r1);
	post_bind(p.b, mw, 12, r2, buf + 8192, 4096,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);
	T_EXPECT_WC(p.cq_b, NULL, 12, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = r2;
	t_fill(src.p, 64, 13);
	write_expect(13, 100, 64, r2, IBV_WC_SUCCESS);
	T_CHECK_FILL(buf + 8192 + 100, 64, 13);
	write_expect(14, 4090, 64, r2, IBV_WC_REM_ACCESS_ERR);
	pair_renew();

	/* Only the peer of the QP it was bound through may invalidate it
	 * remotely: class J, both receive and send fail. */
	t_post_recv(p.b, 15, mr, buf, 64);
	post_inv(p.a, IBV_WR_SEND_WITH_INV, 15, r2, &sge);
	T_EXPECT_WC(p.cq_a, NULL, 15, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, NULL, 15, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV);
	pair_renew();
	/* ...an MR's rkey and a type 1 window's cannot be invalidated. */
	t_post_recv(p.b, 16, mr, buf, 64);
	post_inv(p.a, IBV_WR_SEND_WITH_INV, 16, mr->rkey, &sge);
	T_EXPECT_WC(p.cq_a, NULL, 16, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, NULL, 16, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV);
	pair_renew();
	mw1 = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	{
		struct ibv_mw_bind b = {
			.wr_id = 17,
			.send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = mr,
				       .addr = (uintptr_t)buf,
				       .length = 64,
				       .mw_access_flags =
					       IBV_ACCESS_REMOTE_READ },
		};

		T_OK(ibv_bind_mw(p.b, mw1, &b));
		T_EXPECT_WC(p.cq_b, NULL, 17, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	}
	t_post_recv(p.b, 18, mr, buf, 64);
	post_inv(p.a, IBV_WR_SEND_WITH_INV, 18, mw1->rkey, &sge);
	T_EXPECT_WC(p.cq_a, NULL, 18, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, NULL, 18, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV);
	pair_renew();
	T_OK(ibv_dealloc_mw(mw1));

	/* The window is still bound (to a QP gone): invalidate, then a
	 * zero-length bind and a bind through another PD's QP fail. */
	post_inv(p.b, IBV_WR_LOCAL_INV, 19, r2, NULL);
	T_EXPECT_WC(p.cq_b, NULL, 19, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	post_bind(p.b, mw, 20, r2, buf, 0, IBV_ACCESS_REMOTE_READ);
	T_EXPECT_WC(p.cq_b, NULL, 20, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pd2 = T_NONNULL(ibv_alloc_pd(d.ctx));
	{
		struct ibv_pd *keep = d.pd;

		t_pair_destroy(&p);
		d.pd = pd2;
		t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
		d.pd = keep;
		post_bind(p.b, mw, 21, r2, buf, 64, IBV_ACCESS_REMOTE_READ);
		T_EXPECT_WC(p.cq_b, NULL, 21, IBV_WC_MW_BIND_ERR,
			    IBV_WC_BIND_MW);
		t_pair_destroy(&p);
		t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	}
	T_OK(ibv_dealloc_pd(pd2));

	/* The extended posting path. */
	mw->rkey = r2;
	test_qp_ex(mw);
	test_rebind(mw);

	/* Dereg of an MR with a bound window: EINVAL; dealloc of a bound
	 * window is fine, and its key dies with it. */
	r3 = ibv_inc_rkey(mw->rkey);
	post_bind(p.b, mw, 22, r3, buf, LEN, IBV_ACCESS_REMOTE_WRITE);
	T_EXPECT_WC(p.cq_b, NULL, 22, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = r3;
	T_EQ(ibv_dereg_mr(mr), EINVAL);
	T_OK(ibv_dealloc_mw(mw));
	write_expect(23, (uintptr_t)buf, 64, r3, IBV_WC_REM_ACCESS_ERR);
	t_pair_destroy(&p);
	T_OK(ibv_dereg_mr(mr));
	t_buf_free(&src);
	t_free(buf, LEN);
	t_dev_close(&d);
	t_pass();
}
