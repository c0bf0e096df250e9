/* SPDX-License-Identifier: MIT */
/*
 * RC RDMA READ: byte for byte from anywhere in the remote MR into one or
 * several local SGEs, single and multi packet; the completion reports
 * IBV_WC_RDMA_READ with the length read; several reads outstanding at
 * once (up to max_rd_atomic) complete in order.
 */
#include <stdio.h>

#include "t_util.h"

#define MAX (1024 * 1024)

int main(void)
{
	static const uint32_t lens[] = { 1, 17, 1024, 1025, 4096, 65537, MAX };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg[3];
	struct t_conn_opts o;
	struct t_buf l, rm;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	unsigned int i;

	t_init("rc_read");
	t_dev_open(&d);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_1024;
	o.max_rd_atomic = 4;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t_buf_alloc(&d, &l, MAX + 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &rm, MAX + 4096, T_ACCESS_ALL);
	t_fill(rm.p, rm.len, 1);

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i], off = (i * 131) % 4096;

		memset(l.p, 0xcc, l.len);
		t_post_send(p.a, i, IBV_WR_RDMA_READ, l.mr, l.p + 1, len,
			    IBV_SEND_SIGNALED, (uintptr_t)rm.p + off,
			    rm.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		T_EQ(wc.byte_len, len);
		T_MEMEQ(l.p + 1, rm.p + off, len);
		T_EQ(l.p[0], 0xcc);
		T_EQ(l.p[len + 1], 0xcc);
	}
	T_EXPECT_NO_WC(p.cq_b, 20);

	/* Scatter one read over three SGEs. */
	memset(l.p, 0xcc, l.len);
	sg[0] = (struct ibv_sge){ (uintptr_t)l.p + 100, 1000, l.mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)l.p + 5000, 3000, l.mr->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)l.p + 20000, 5, l.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 3;
	wr.wr.rdma.remote_addr = (uintptr_t)rm.p + 3;
	wr.wr.rdma.rkey = rm.mr->rkey;
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 77, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_EQ(wc.byte_len, 4005);
	T_MEMEQ(l.p + 100, rm.p + 3, 1000);
	T_MEMEQ(l.p + 5000, rm.p + 1003, 3000);
	T_MEMEQ(l.p + 20000, rm.p + 4003, 5);
	T_EQ(l.p[1100], 0xcc);
	T_EQ(l.p[8000], 0xcc);

	/* Many reads outstanding: more than max_rd_atomic, all in order. */
	memset(l.p, 0, l.len);
	for (i = 0; i < 40; i++)
		t_post_send(p.a, 200 + i, IBV_WR_RDMA_READ, l.mr,
			    l.p + i * 20000, 20000, IBV_SEND_SIGNALED,
			    (uintptr_t)rm.p + i * 20000, rm.mr->rkey);
	for (i = 0; i < 40; i++)
		T_EXPECT_WC(p.cq_a, &wc, 200 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_READ);
	T_MEMEQ(l.p, rm.p, 40 * 20000);

	t_buf_free(&l);
	t_buf_free(&rm);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
