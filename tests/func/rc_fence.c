/* SPDX-License-Identifier: MIT */
/*
 * IBV_SEND_FENCE: a WRITE fenced behind a READ of the same remote range
 * starts only after the READ has completed, so the READ returns the old
 * content and the WRITE's data is what remains.  Also an atomic followed
 * by a fenced READ of the word it changed.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN (64 * 1024)

int main(void)
{
	struct t_conn_opts o;
	struct t_buf rd, wr, rm, at;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint32_t round;

	t_init("rc_fence");
	t_dev_open(&d);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_1024;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t_buf_alloc(&d, &rd, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &wr, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &rm, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &at, 4096, T_ACCESS_ALL);

	for (round = 0; round < 50; round++) {
		t_fill(rm.p, LEN, 2 * round);
		t_fill(wr.p, LEN, 2 * round + 1);
		memset(rd.p, 0, LEN);
		t_post_send(p.a, 1, IBV_WR_RDMA_READ, rd.mr, rd.p, LEN,
			    IBV_SEND_SIGNALED, (uintptr_t)rm.p, rm.mr->rkey);
		t_post_send(p.a, 2, IBV_WR_RDMA_WRITE, wr.mr, wr.p, LEN,
			    IBV_SEND_SIGNALED | IBV_SEND_FENCE, (uintptr_t)rm.p,
			    rm.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(rd.p, LEN, 2 * round);
		T_CHECK_FILL(rm.p, LEN, 2 * round + 1);
	}

	/* Fetch-add, then a fenced READ of the same word sees the sum. */
	*(uint64_t *)rm.p = 40;
	for (round = 0; round < 20; round++) {
		uint64_t *res = (uint64_t *)at.p;

		res[1] = 0;
		t_post_atomic(p.a, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, at.mr, res,
			      (uintptr_t)rm.p, rm.mr->rkey, 2, 0);
		t_post_send(p.a, 4, IBV_WR_RDMA_READ, at.mr, res + 1, 8,
			    IBV_SEND_SIGNALED | IBV_SEND_FENCE, (uintptr_t)rm.p,
			    rm.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
		T_EXPECT_WC(p.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		T_EQ(res[0], 40 + 2 * (uint64_t)round);
		T_EQ(res[1], 42 + 2 * (uint64_t)round);
	}

	t_buf_free(&rd);
	t_buf_free(&wr);
	t_buf_free(&rm);
	t_buf_free(&at);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
