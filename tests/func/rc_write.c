/* SPDX-License-Identifier: MIT */
/*
 * RC RDMA WRITE and WRITE_WITH_IMM: data lands exactly where asked and
 * nowhere else; WRITE_WITH_IMM consumes a receive that completes as
 * IBV_WC_RECV_RDMA_WITH_IMM with byte_len and imm_data, its buffer left
 * untouched; a plain WRITE consumes nothing at the responder.
 */
#include <stdio.h>

#include "t_util.h"

#define MAX (512 * 1024)

int main(void)
{
	static const uint32_t lens[] = { 1, 8, 1000, 4096, 4097, 10000, MAX };
	struct ibv_send_wr wr, *bad;
	struct t_conn_opts o;
	struct t_buf s, t, r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	unsigned int i;

	t_init("rc_write");
	t_dev_open(&d);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_2048;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t_buf_alloc(&d, &s, MAX, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, MAX + 2 * 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i], off = 4096 - (i * 7 % 100);

		memset(t.p, 0xcc, t.len);
		t_fill(s.p, len, i);
		t_post_send(p.a, i, IBV_WR_RDMA_WRITE, s.mr, s.p, len,
			    IBV_SEND_SIGNALED, (uintptr_t)t.p + off,
			    t.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(t.p + off, len, i);
		T_EQ(t.p[off - 1], 0xcc);
		T_EQ(t.p[off + len], 0xcc);
	}
	/* The responder saw no completion for any of them. */
	T_EXPECT_NO_WC(p.cq_b, 20);

	/* Zero-length WRITE (no SGE): completes, writes nothing. */
	t_post_send(p.a, 50, IBV_WR_RDMA_WRITE, NULL, NULL, 0,
		    IBV_SEND_SIGNALED, (uintptr_t)t.p, t.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 50, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* WRITE_WITH_IMM. */
	for (i = 0; i < 3; i++) {
		uint32_t len = i == 0 ? 0 : i == 1 ? 100 : 70000;

		memset(r.p, 0xdd, 4096);
		memset(t.p, 0xcc, t.len);
		t_post_recv(p.b, 60 + i, r.mr, r.p, 4096);
		t_fill(s.p, len, 60 + i);
		sge = (struct ibv_sge){ (uintptr_t)s.p, len, s.mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 70 + i;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = len ? 1 : 0;
		wr.imm_data = htobe32(0xc0de0000 + i);
		wr.wr.rdma.remote_addr = (uintptr_t)t.p + 8;
		wr.wr.rdma.rkey = t.mr->rkey;
		T_OK(ibv_post_send(p.a, &wr, &bad));
		T_EXPECT_WC(p.cq_a, &wc, 70 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		T_EXPECT_WC(p.cq_b, &wc, 60 + i, IBV_WC_SUCCESS,
			    IBV_WC_RECV_RDMA_WITH_IMM);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		T_EQ(be32toh(wc.imm_data), 0xc0de0000 + i);
		T_EQ(wc.byte_len, len);
		T_EQ(wc.qp_num, p.b->qp_num);
		T_CHECK_FILL(t.p + 8, len, 60 + i);
		T_EQ(t.p[8 + len], 0xcc);
		for (int k = 0; k < 4096; k++)
			if (r.p[k] != 0xdd)
				T_FAIL("receive buffer byte %d changed to %#x",
				       k, r.p[k]);
	}

	/* Many writes to distinct places, then one check of all. */
	memset(t.p, 0, t.len);
	t_fill(s.p, MAX, 99);
	for (i = 0; i < 60; i++)
		t_post_send(p.a, 100 + i, IBV_WR_RDMA_WRITE, s.mr,
			    s.p + i * 8192, 8192, IBV_SEND_SIGNALED,
			    (uintptr_t)t.p + i * 8192, t.mr->rkey);
	for (i = 0; i < 60; i++)
		T_EXPECT_WC(p.cq_a, &wc, 100 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
	T_MEMEQ(t.p, s.p, 60 * 8192);

	t_buf_free(&s);
	t_buf_free(&t);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
