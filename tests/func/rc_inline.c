/* SPDX-License-Identifier: MIT */
/*
 * Inline sends: the payload is copied at post time, so the buffer needs no
 * MR (lkey ignored) and may be reused the moment ibv_post_send returns.
 * SEND and RDMA WRITE, one or several SGEs, up to max_inline_data; more
 * than that is refused at post time.
 */
#include <stdio.h>

#include "t_util.h"

#define INL 256

int main(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sg[3];
	struct t_buf r, t;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint8_t msg[1024], msg2[64];
	uint32_t inl;
	int i;

	t_init("rc_inline");
	t_dev_open(&d);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_inline_data = INL;
	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	inl = p.cap.max_inline_data;
	T_GE(inl, INL);
	t_log("max_inline_data granted %u", inl);
	t_buf_alloc(&d, &r, 64 * 1024, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, 64 * 1024, T_ACCESS_ALL);

	/* SEND inline from stack memory, scribbled right after posting. */
	for (i = 0; i < 40; i++) {
		uint32_t len = (uint32_t)(i * 37) % (INL + 1);

		t_post_recv(p.b, 100 + i, r.mr, r.p + i * 1024, 1024);
		t_fill(msg, len, 100 + i);
		memset(&wr, 0, sizeof(wr));
		sg[0] = (struct ibv_sge){ (uintptr_t)msg, len, 0xbadbad };
		wr.wr_id = 200 + i;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		wr.sg_list = sg;
		wr.num_sge = 1;
		T_OK(ibv_post_send(p.a, &wr, &bad));
		memset(msg, 0xee, sizeof(msg));
	}
	for (i = 0; i < 40; i++) {
		uint32_t len = (uint32_t)(i * 37) % (INL + 1);

		T_EXPECT_WC(p.cq_a, &wc, 200 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
		T_CHECK_FILL(r.p + i * 1024, len, 100 + i);
	}

	/* RDMA WRITE inline, gathered from three stack pieces. */
	t_fill(msg, 100, 1);
	t_fill(msg2, 50, 2);
	sg[0] = (struct ibv_sge){ (uintptr_t)msg, 100, 0 };
	sg[1] = (struct ibv_sge){ (uintptr_t)msg2, 50, 0 };
	sg[2] = (struct ibv_sge){ (uintptr_t)msg + 500, 6, 0 };
	memset(msg + 500, 0x42, 6);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 300;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr.sg_list = sg;
	wr.num_sge = 3;
	wr.wr.rdma.remote_addr = (uintptr_t)t.p + 1;
	wr.wr.rdma.rkey = t.mr->rkey;
	T_OK(ibv_post_send(p.a, &wr, &bad));
	memset(msg, 0, sizeof(msg));
	memset(msg2, 0, sizeof(msg2));
	T_EXPECT_WC(p.cq_a, &wc, 300, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(t.p + 1, 100, 1);
	T_CHECK_FILL(t.p + 101, 50, 2);
	for (i = 0; i < 6; i++)
		T_EQ(t.p[151 + i], 0x42);
	T_EQ(t.p[157], 0);

	/* Exactly max_inline_data is fine, one byte more is EINVAL. */
	if (inl <= sizeof(msg)) {
		t_post_recv(p.b, 400, r.mr, r.p, 4096);
		t_fill(msg, inl, 400);
		sg[0] = (struct ibv_sge){ (uintptr_t)msg, inl, 0 };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 401;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		wr.sg_list = sg;
		wr.num_sge = 1;
		T_OK(ibv_post_send(p.a, &wr, &bad));
		T_EXPECT_WC(p.cq_a, &wc, 401, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, 400, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, inl);
		T_CHECK_FILL(r.p, inl, 400);
		if (inl + 1 <= sizeof(msg)) {
			sg[0].length = inl + 1;
			bad = NULL;
			T_RET(ibv_post_send(p.a, &wr, &bad), EINVAL);
			T_PTR_EQ(bad, &wr);
		}
	}
	T_EXPECT_NO_WC(p.cq_a, 20);

	t_buf_free(&r);
	t_buf_free(&t);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
