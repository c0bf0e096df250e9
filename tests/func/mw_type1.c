/* SPDX-License-Identifier: MIT */
/*
 * Type 1 memory windows: the device reports them, ibv_bind_mw binds
 * them as a WQE (IBV_WC_BIND_MW, a new key byte), the peer reaches the
 * window's range with its rights and no more, and every bind error,
 * invalidation attempt, dereg of the MR and dealloc acts as on rxe.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN 16384

static struct t_dev d;
static struct t_pair p;
static struct t_buf src;

static void pair_renew(void)
{
	t_pair_destroy(&p);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
}

static int bind(struct ibv_mw *mw, uint64_t wr_id, struct ibv_mr *mr,
		void *addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = wr_id,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr,
			       .addr = (uintptr_t)addr,
			       .length = len,
			       .mw_access_flags = access },
	};

	return ibv_bind_mw(p.b, mw, &b);
}

static void remote(enum ibv_wr_opcode op, uint64_t wr_id, void *raddr,
		   uint32_t len, uint32_t rkey, enum ibv_wc_status st)
{
	t_post_send(p.a, wr_id, op, src.mr, src.p, len, IBV_SEND_SIGNALED,
		    (uintptr_t)raddr, rkey);
	T_EXPECT_WC(p.cq_a, NULL, wr_id, st,
		    op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
					   : IBV_WC_RDMA_WRITE);
}

int main(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_mr *mr, *mr_nobind, *mr_ro;
	struct ibv_pd *pd2;
	struct ibv_mw *mw, *mw2;
	uint32_t rkey0, rkey1;
	uint8_t *buf;

	t_init("mw_type1");
	t_dev_open(&d);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS);
	T_GT(d.attr.max_mw, 0);
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_ASSERT(ax.device_cap_flags_ex & IBV_DEVICE_MEM_WINDOW);
	T_EQ(ax.orig_attr.max_mw, d.attr.max_mw);

	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	buf = t_zalloc(LEN);
	mr = T_NONNULL(
		ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL | IBV_ACCESS_MW_BIND));
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);

	T_NULL_ERRNO(ibv_alloc_mw(d.pd, (enum ibv_mw_type)3), EINVAL);
	mw = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	T_EQ(mw->type, IBV_MW_TYPE_1);
	rkey0 = mw->rkey;

	/* Not bound yet: nothing to reach. */
	remote(IBV_WR_RDMA_WRITE, 1, buf, 64, rkey0, IBV_WC_REM_ACCESS_ERR);
	pair_renew();

	/* Bind 4 KiB in the middle for WRITE and READ. */
	T_OK(bind(mw, 2, mr, buf + 4096, 4096,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 2, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_NE(mw->rkey, rkey0);
	T_EQ(mw->rkey >> 8, rkey0 >> 8);
	t_fill(src.p, 4096, 3);
	remote(IBV_WR_RDMA_WRITE, 3, buf + 4096, 4096, mw->rkey,
	       IBV_WC_SUCCESS);
	T_CHECK_FILL(buf + 4096, 4096, 3);
	t_fill(buf + 4096, 4096, 4);
	remote(IBV_WR_RDMA_READ, 4, buf + 4096, 4096, mw->rkey, IBV_WC_SUCCESS);
	T_CHECK_FILL(src.p, 4096, 4);

	/* Past the window (but inside the MR). */
	t_fill(buf, LEN, 5);
	remote(IBV_WR_RDMA_WRITE, 5, buf + 4096 + 4000, 200, mw->rkey,
	       IBV_WC_REM_ACCESS_ERR);
	T_CHECK_FILL(buf, LEN, 5);
	pair_renew();
	/* Before the window. */
	remote(IBV_WR_RDMA_READ, 6, buf + 4000, 200, mw->rkey,
	       IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	/* A right the window does not grant. */
	t_post_atomic(p.a, 7, IBV_WR_ATOMIC_FETCH_AND_ADD, src.mr, src.p,
		      (uintptr_t)buf + 4096, mw->rkey, 1, 0);
	T_EXPECT_WC(p.cq_a, NULL, 7, IBV_WC_REM_ACCESS_ERR, IBV_WC_FETCH_ADD);
	pair_renew();

	/* Rebinding changes the key: the old rkey fails, the new one
	 * reaches the new range (read only now). */
	rkey0 = mw->rkey;
	T_OK(bind(mw, 8, mr, buf, LEN, IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 8, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	remote(IBV_WR_RDMA_READ, 9, buf, 64, mw->rkey, IBV_WC_SUCCESS);
	T_CHECK_FILL(src.p, 64, 5);
	remote(IBV_WR_RDMA_WRITE, 10, buf, 64, mw->rkey, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	remote(IBV_WR_RDMA_READ, 11, buf, 64, rkey0, IBV_WC_REM_ACCESS_ERR);
	pair_renew();

	/* A zero-length bind unbinds (an MR named or not, pyverbs names
	 * one): the key moves on and neither key reaches anything.  The
	 * window stays valid (rxe: VALID, length 0) and binds again with a
	 * key of its own. */
	rkey0 = mw->rkey;
	T_OK(bind(mw, 30, mr, buf, 0, 0));
	T_EXPECT_WC(p.cq_b, NULL, 30, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_EQ(mw->rkey, ibv_inc_rkey(rkey0));
	remote(IBV_WR_RDMA_READ, 31, buf, 64, rkey0, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	remote(IBV_WR_RDMA_READ, 32, buf, 64, mw->rkey, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	T_OK(bind(mw, 33, NULL, NULL, 0, 0));
	T_EXPECT_WC(p.cq_b, NULL, 33, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	rkey1 = mw->rkey;
	T_OK(bind(mw, 34, mr, buf, LEN, IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 34, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_EQ(mw->rkey, ibv_inc_rkey(rkey1));
	remote(IBV_WR_RDMA_READ, 35, buf, 64, mw->rkey, IBV_WC_SUCCESS);
	T_CHECK_FILL(src.p, 64, 5);
	remote(IBV_WR_RDMA_READ, 36, buf, 64, rkey1, IBV_WC_REM_ACCESS_ERR);
	pair_renew();
	remote(IBV_WR_RDMA_READ, 37, buf, 64, rkey0, IBV_WC_REM_ACCESS_ERR);
	pair_renew();

	/* Bind errors complete as IBV_WC_MW_BIND_ERR and stop the QP. */
	mr_nobind = T_NONNULL(ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL));
	mw2 = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	T_OK(bind(mw2, 12, mr_nobind, buf, 64, IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 12, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pair_renew();
	T_OK(bind(mw2, 13, mr, buf + LEN - 100, 4096, IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 13, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pair_renew();
	mr_ro = T_NONNULL(ibv_reg_mr(
		d.pd, buf, LEN, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND));
	T_OK(bind(mw2, 14, mr_ro, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	T_EXPECT_WC(p.cq_b, NULL, 14, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW);
	pair_renew();
	/* ...while a read-only window on it is fine. */
	T_OK(bind(mw2, 15, mr_ro, buf, 64, IBV_ACCESS_REMOTE_READ));
	T_EXPECT_WC(p.cq_b, NULL, 15, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	/* Caught before posting: zero based, another PD's MR. */
	T_EQ(bind(mw2, 16, mr, buf, 64,
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED),
	     EINVAL);
	pd2 = T_NONNULL(ibv_alloc_pd(d.ctx));
	{
		struct ibv_mw *mw3 =
			T_NONNULL(ibv_alloc_mw(pd2, IBV_MW_TYPE_1));

		T_EQ(bind(mw3, 17, mr, buf, 64, IBV_ACCESS_REMOTE_READ), EPERM);
		T_OK(ibv_dealloc_mw(mw3));
	}
	T_OK(ibv_dealloc_pd(pd2));

	/* Type 1 windows cannot be invalidated, locally or remotely. */
	t_post_send(p.b, 18, IBV_WR_LOCAL_INV, NULL, NULL, 0, IBV_SEND_SIGNALED,
		    0, 0);
	/* (rkey 0 names no window) */
	T_EXPECT_WC(p.cq_b, NULL, 18, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOCAL_INV);
	pair_renew();
	{
		struct ibv_send_wr wr = { .wr_id = 19,
					  .opcode = IBV_WR_LOCAL_INV,
					  .send_flags = IBV_SEND_SIGNALED,
					  .invalidate_rkey = mw->rkey },
				   *bad;

		T_OK(ibv_post_send(p.b, &wr, &bad));
		T_EXPECT_WC(p.cq_b, NULL, 19, IBV_WC_LOC_QP_OP_ERR,
			    IBV_WC_LOCAL_INV);
		pair_renew();
		/* Still bound. */
		remote(IBV_WR_RDMA_READ, 20, buf, 64, mw->rkey, IBV_WC_SUCCESS);
	}

	/* An MR with windows bound stays (rxe: EINVAL); unbinding frees
	 * it. */
	T_EQ(ibv_dereg_mr(mr_ro), EINVAL);
	T_OK(bind(mw2, 21, NULL, NULL, 0, 0));
	T_EXPECT_WC(p.cq_b, NULL, 21, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	T_OK(ibv_dereg_mr(mr_ro));
	T_OK(ibv_dereg_mr(mr_nobind));
	T_OK(ibv_dealloc_mw(mw2));

	/* A bound window may be deallocated; its rkey then fails. */
	rkey0 = mw->rkey;
	T_EQ(ibv_dealloc_pd(d.pd), EBUSY);
	T_OK(ibv_dealloc_mw(mw));
	remote(IBV_WR_RDMA_READ, 22, buf, 64, rkey0, IBV_WC_REM_ACCESS_ERR);
	t_pair_destroy(&p);
	T_OK(ibv_dereg_mr(mr));
	t_buf_free(&src);
	t_free(buf, LEN);
	t_dev_close(&d);
	t_pass();
}
