/* SPDX-License-Identifier: MIT */
/*
 * RC SEND and SEND_WITH_IMM, from zero bytes to several packets: the
 * receiver's completion (opcode, byte_len, flags, imm_data, qp_num) and
 * the data, byte for byte; messages arrive in order.
 */
#include <stdio.h>

#include "t_util.h"

#define MAX (256 * 1024)

int main(void)
{
	static const uint32_t lens[] = { 0,    1,    3,	   64,	  1023,	  1024,
					 1025, 4096, 4097, 65536, 100000, MAX };
	struct ibv_send_wr wr, *bad;
	struct t_conn_opts o;
	struct t_buf s, r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	unsigned int i;

	t_init("rc_send");
	t_dev_open(&d);
	t_conn_opts_init(&o);
	o.mtu = IBV_MTU_1024; /* several packets from 1025 bytes on */
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	t_buf_alloc(&d, &s, MAX, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, MAX + 64, T_ACCESS_ALL);

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];

		memset(r.p, 0xcc, MAX + 64);
		t_post_recv(p.b, 100 + i, r.mr, r.p, MAX + 64);
		t_fill(s.p, len, i);
		if (len)
			t_post_send(p.a, i, IBV_WR_SEND, s.mr, s.p, len,
				    IBV_SEND_SIGNALED, 0, 0);
		else
			t_post_send(p.a, i, IBV_WR_SEND, NULL, NULL, 0,
				    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EQ(wc.qp_num, p.a->qp_num);
		T_EXPECT_WC(p.cq_b, &wc, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
		T_EQ(wc.qp_num, p.b->qp_num);
		T_EQ(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV), 0);
		T_CHECK_FILL(r.p, len, i);
		T_EQ(r.p[len], 0xcc);
	}

	/* SEND_WITH_IMM: the immediate arrives as sent, big endian. */
	t_post_recv(p.b, 200, r.mr, r.p, 4096);
	t_fill(s.p, 777, 200);
	sge = (struct ibv_sge){ (uintptr_t)s.p, 777, s.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 201;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm_data = htobe32(0x12345678);
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 201, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 200, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 0x12345678);
	T_EQ(wc.byte_len, 777);
	T_CHECK_FILL(r.p, 777, 200);

	/* Zero bytes with an immediate. */
	t_post_recv(p.b, 202, r.mr, r.p, 4096);
	wr.wr_id = 203;
	wr.num_sge = 0;
	wr.imm_data = htobe32(0xa5a5a5a5);
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 203, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 202, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 0xa5a5a5a5);
	T_EQ(wc.byte_len, 0);

	/* A burst both ways: each side's messages arrive in order. */
	for (i = 0; i < 32; i++) {
		t_post_recv(p.b, 300 + i, r.mr, r.p + i * 1024, 1024);
		t_post_recv(p.a, 400 + i, r.mr, r.p + (32 + i) * 1024, 1024);
	}
	for (i = 0; i < 32; i++) {
		t_fill(s.p + i * 1024, 512, 300 + i);
		t_fill(s.p + (32 + i) * 1024, 512, 400 + i);
		t_post_send(p.a, 500 + i, IBV_WR_SEND, s.mr, s.p + i * 1024,
			    512, IBV_SEND_SIGNALED, 0, 0);
		t_post_send(p.b, 600 + i, IBV_WR_SEND, s.mr,
			    s.p + (32 + i) * 1024, 512, IBV_SEND_SIGNALED, 0,
			    0);
	}
	/* cq_a carries a's sends and a's receives, interleaved; so does
	 * cq_b.  Order holds within each kind.  Check all four counts too. */
	{
		uint32_t send_a = 0, recv_a = 0, send_b = 0, recv_b = 0;
		struct ibv_wc w2;

		for (i = 0; i < 64; i++) {
			T_ASSERT(t_poll(p.cq_a, &w2, T_WAIT_MS));
			T_WC_STATUS(&w2, IBV_WC_SUCCESS);
			if (w2.opcode == IBV_WC_SEND)
				T_EQ(w2.wr_id, 500 + send_a++);
			else
				T_EQ(w2.wr_id, 400 + recv_a++);
			T_ASSERT(t_poll(p.cq_b, &w2, T_WAIT_MS));
			T_WC_STATUS(&w2, IBV_WC_SUCCESS);
			if (w2.opcode == IBV_WC_SEND)
				T_EQ(w2.wr_id, 600 + send_b++);
			else
				T_EQ(w2.wr_id, 300 + recv_b++);
		}
		T_EQ(send_a, 32);
		T_EQ(recv_a, 32);
		T_EQ(send_b, 32);
		T_EQ(recv_b, 32);
	}
	for (i = 0; i < 32; i++) {
		T_CHECK_FILL(r.p + i * 1024, 512, 300 + i);
		T_CHECK_FILL(r.p + (32 + i) * 1024, 512, 400 + i);
	}

	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
