/* SPDX-License-Identifier: MIT */
/*
 * UC: SEND, SEND_WITH_IMM, RDMA WRITE and WRITE_WITH_IMM, single and multi
 * packet, byte for byte, with the receiver's completions.
 */
#include <stdio.h>

#include "t_util.h"

#define MAX (200 * 1024)

int main(void)
{
	static const uint32_t lens[] = { 0, 1, 1024, 1025, 5000, MAX };
	struct t_conn_opts o;
	struct t_buf s, r, t;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	unsigned int i;

	t_init("uc_ops");
	t_dev_open(&d);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_1024;
	o.access = IBV_ACCESS_REMOTE_WRITE; /* all UC allows */
	t_pair_create(&d, &p, IBV_QPT_UC, NULL, &o);
	t_buf_alloc(&d, &s, MAX, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, MAX + 16, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, MAX + 16, T_ACCESS_ALL);

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];
		bool imm = i & 1;

		/* SEND / SEND_WITH_IMM */
		memset(r.p, 0xcc, r.len);
		t_post_recv(p.b, 10 + i, r.mr, r.p, MAX + 16);
		t_fill(s.p, len, i);
		t_post_send(p.a, 20 + i,
			    imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			    len ? s.mr : NULL, len ? s.p : NULL, len,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p.cq_a, &wc, 20 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, 10 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
		T_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), imm);
		if (imm) /* t_post_send sends htobe32(wr_id) */
			T_EQ(be32toh(wc.imm_data), 20 + i);
		T_CHECK_FILL(r.p, len, i);
		T_EQ(r.p[len], 0xcc);

		/* RDMA WRITE */
		memset(t.p, 0xcc, t.len);
		t_fill(s.p, len, 100 + i);
		t_post_send(p.a, 30 + i, IBV_WR_RDMA_WRITE, len ? s.mr : NULL,
			    len ? s.p : NULL, len, IBV_SEND_SIGNALED,
			    (uintptr_t)t.p + 3, t.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, 30 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		/* UC has no ACK: the completion says the data left; over a
		 * real wire it lands a moment later. */
		t_wait_fill(t.p + 3, len, 100 + i, 5000);
		T_CHECK_FILL(t.p + 3, len, 100 + i);
		T_EQ(t.p[3 + len], 0xcc);

		/* RDMA WRITE_WITH_IMM */
		t_post_recv(p.b, 40 + i, r.mr, r.p, 16);
		t_fill(s.p, len, 200 + i);
		t_post_send(p.a, 50 + i, IBV_WR_RDMA_WRITE_WITH_IMM,
			    len ? s.mr : NULL, len ? s.p : NULL, len,
			    IBV_SEND_SIGNALED, (uintptr_t)t.p, t.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, 50 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		T_EXPECT_WC(p.cq_b, &wc, 40 + i, IBV_WC_SUCCESS,
			    IBV_WC_RECV_RDMA_WITH_IMM);
		T_EQ(wc.byte_len, len);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		T_EQ(be32toh(wc.imm_data), 50 + i);
		T_CHECK_FILL(t.p, len, 200 + i);
	}

	t_buf_free(&s);
	t_buf_free(&r);
	t_buf_free(&t);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
