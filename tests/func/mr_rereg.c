/* SPDX-License-Identifier: MIT */
/*
 * ibv_rereg_mr: change the access rights, the PD, the translation; each
 * change takes effect for the device, and argument errors come back as
 * rdma-core's IBV_REREG_MR_ERR_* codes.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN 16384

/* RDMA WRITE of len bytes (pattern seed) from src into raddr/rkey. */
static void write_expect(struct t_pair *pp, struct t_buf *src, uint32_t len,
			 uint64_t raddr, uint32_t rkey, uint32_t seed,
			 enum ibv_wc_status st)
{
	t_fill(src->p, len, seed);
	t_post_send(pp->a, seed, IBV_WR_RDMA_WRITE, src->mr, src->p, len,
		    IBV_SEND_SIGNALED, raddr, rkey);
	T_EXPECT_WC(pp->cq_a, NULL, seed, st, IBV_WC_RDMA_WRITE);
}

int main(void)
{
	struct t_pair p1, p2;
	struct ibv_pd *pd2;
	struct t_buf src;
	struct ibv_mr *mr;
	struct t_dev d;
	uint8_t *buf, *buf2;
	int ret;

	t_init("mr_rereg");
	t_dev_open(&d);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	buf = t_zalloc(LEN);
	buf2 = t_zalloc(2 * LEN);
	mr = T_NONNULL(ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL));

	/* Argument errors, caught before the device sees them. */
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0),
	     IBV_REREG_MR_ERR_INPUT);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2, 0,
			  0),
	     IBV_REREG_MR_ERR_INPUT);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, d.pd, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE),
	     IBV_REREG_MR_ERR_INPUT);
	T_EQ(errno, EINVAL);

	/* Access: drop remote write; reads still work, writes are refused. */
	t_pair_create(&d, &p1, IBV_QPT_RC, NULL, NULL);
	write_expect(&p1, &src, 4096, (uintptr_t)buf, mr->rkey, 10,
		     IBV_WC_SUCCESS);
	T_CHECK_FILL(buf, 4096, 10);
	T_OK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	T_PTR_EQ(mr->addr, buf);
	t_fill(buf, LEN, 11);
	t_post_send(p1.a, 11, IBV_WR_RDMA_READ, src.mr, src.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mr->rkey);
	T_EXPECT_WC(p1.cq_a, NULL, 11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(src.p, LEN, 11);
	write_expect(&p1, &src, 4096, (uintptr_t)buf, mr->rkey, 12,
		     IBV_WC_REM_ACCESS_ERR);
	T_CHECK_FILL(buf, LEN, 11);
	t_pair_destroy(&p1);

	/* Give it back: writes work again. */
	T_OK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  T_ACCESS_ALL));
	t_pair_create(&d, &p1, IBV_QPT_RC, NULL, NULL);
	write_expect(&p1, &src, LEN, (uintptr_t)buf, mr->rkey, 13,
		     IBV_WC_SUCCESS);
	T_CHECK_FILL(buf, LEN, 13);

	/* PD: after the move, only QPs of the new PD may use the MR. */
	pd2 = T_NONNULL(ibv_alloc_pd(d.ctx));
	T_OK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0));
	T_PTR_EQ(mr->pd, pd2);
	{
		struct ibv_pd *pd1 = d.pd;
		struct t_buf src2;

		d.pd = pd2;
		t_buf_alloc(&d, &src2, LEN, T_ACCESS_ALL);
		t_pair_create(&d, &p2, IBV_QPT_RC, NULL, NULL);
		write_expect(&p2, &src2, LEN, (uintptr_t)buf, mr->rkey, 14,
			     IBV_WC_SUCCESS);
		T_CHECK_FILL(buf, LEN, 14);
		t_pair_destroy(&p2);
		t_buf_free(&src2);
		d.pd = pd1;
	}
	write_expect(&p1, &src, LEN, (uintptr_t)buf, mr->rkey, 15,
		     IBV_WC_REM_ACCESS_ERR);
	T_CHECK_FILL(buf, LEN, 14);
	t_pair_destroy(&p1);
	T_OK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, d.pd, NULL, 0, 0));
	T_RET(ibv_dealloc_pd(pd2), 0);

	/* Translation: the same MR now covers another buffer. */
	t_fill(buf2, 2 * LEN, 16);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			   buf2 + 100, LEN + 5, 0);
	T_EQ(ret, 0);
	T_PTR_EQ(mr->addr, buf2 + 100);
	T_EQ(mr->length, LEN + 5);
	T_CHECK_FILL(buf2, 2 * LEN, 16);
	t_pair_create(&d, &p1, IBV_QPT_RC, NULL, NULL);
	write_expect(&p1, &src, LEN, (uintptr_t)buf2 + 105, mr->rkey, 17,
		     IBV_WC_SUCCESS);
	T_CHECK_FILL(buf2 + 105, LEN, 17);
	T_CHECK_FILL(buf, LEN, 14); /* the old buffer is left alone */
	/* The old range is no longer part of the MR. */
	write_expect(&p1, &src, 64, (uintptr_t)buf, mr->rkey, 18,
		     IBV_WC_REM_ACCESS_ERR);
	t_pair_destroy(&p1);

	/* The device refuses remote write without local write: as in
	 * rdma-core, a refusal by the device is IBV_REREG_MR_ERR_CMD, and the
	 * MR is unchanged. */
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE),
	     IBV_REREG_MR_ERR_CMD);
	T_PTR_EQ(mr->addr, buf2 + 100);

	T_OK(ibv_dereg_mr(mr));
	T_CHECK_FILL(buf2 + 105, LEN, 17);
	t_free(buf, LEN);
	t_free(buf2, 2 * LEN);
	t_buf_free(&src);
	t_dev_close(&d);
	t_pass();
}
