/* SPDX-License-Identifier: MIT */
/*
 * Gather and scatter with max_sge SGEs: a SEND gathered from max_sge
 * pieces of different MRs lands scattered over max_sge receive pieces
 * with different boundaries; the same gather for RDMA WRITE; zero-length
 * SGEs in the list are allowed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "t_util.h"

int main(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_qp_init_attr ia;
	struct ibv_sge *ss, *rs;
	struct t_buf s1, s2, r, flat, t;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint32_t nsge, total = 0, i, pos;

	t_init("rc_sge");
	t_dev_open(&d);
	nsge = (uint32_t)d.attr.max_sge;
	t_log("max_sge %u", nsge);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_send_sge = nsge;
	ia.cap.max_recv_sge = nsge;
	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	T_GE(p.cap.max_send_sge, nsge);
	ss = calloc(nsge, sizeof(*ss));
	rs = calloc(nsge, sizeof(*rs));
	T_ASSERT(ss && rs);
	t_buf_alloc(&d, &s1, 1 << 20, T_ACCESS_ALL);
	t_buf_alloc(&d, &s2, 1 << 20, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, (nsge + 1) * 20000, T_ACCESS_ALL);
	t_buf_alloc(&d, &flat, 1 << 20, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, 1 << 20, T_ACCESS_ALL);
	t_fill(s1.p, s1.len, 1);
	t_fill(s2.p, s2.len, 2);

	/* Gather list: alternating MRs, odd lengths, one of zero bytes;
	 * flat holds the message as it should arrive. */
	for (i = 0; i < nsge; i++) {
		struct t_buf *b = (i & 1) ? &s2 : &s1;
		uint32_t len = (i == 3) ? 0 : 100 + i * 37;
		uint32_t off = i * 9001 % 500000;

		ss[i] = (struct ibv_sge){ (uintptr_t)b->p + off, len,
					  b->mr->lkey };
		memcpy(flat.p + total, b->p + off, len);
		total += len;
	}
	t_log("%u bytes in %u SGEs", total, nsge);

	/* Scatter list: equal pieces with untouched gaps between them,
	 * the last one roomy enough for the rest. */
	memset(r.p, 0xcc, r.len);
	for (i = 0; i < nsge; i++) {
		uint32_t len = i + 1 < nsge ? total / nsge + 1 : 10000;

		rs[i] = (struct ibv_sge){ (uintptr_t)r.p + i * 20000, len,
					  r.mr->lkey };
	}
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 1;
	rwr.sg_list = rs;
	rwr.num_sge = (int)nsge;
	T_OK(ibv_post_recv(p.b, &rwr, &rbad));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = ss;
	wr.num_sge = (int)nsge;
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, total);
	pos = 0;
	for (i = 0; i < nsge && pos < total; i++) {
		uint32_t take = rs[i].length < total - pos ? rs[i].length
							   : total - pos;
		uint8_t *at = r.p + i * 20000;

		T_MEMEQ(at, flat.p + pos, take);
		T_EQ(at[take], 0xcc);
		pos += take;
	}
	T_EQ(pos, total);

	/* The same gather as an RDMA WRITE. */
	memset(t.p, 0, t.len);
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)t.p + 5;
	wr.wr.rdma.rkey = t.mr->rkey;
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_MEMEQ(t.p + 5, flat.p, total);
	T_EQ(t.p[5 + total], 0);

	/* More SGEs than the QP has: refused at post time. */
	{
		struct ibv_sge *many =
			calloc(p.cap.max_send_sge + 1, sizeof(*many));

		T_ASSERT(many != NULL);
		for (i = 0; i <= p.cap.max_send_sge; i++)
			many[i] = (struct ibv_sge){ (uintptr_t)s1.p, 1,
						    s1.mr->lkey };
		wr.wr_id = 4;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = many;
		wr.num_sge = (int)p.cap.max_send_sge + 1;
		bad = NULL;
		T_RET(ibv_post_send(p.a, &wr, &bad), EINVAL);
		T_PTR_EQ(bad, &wr);
		free(many);
	}
	T_EXPECT_NO_WC(p.cq_a, 20);

	free(ss);
	free(rs);
	t_buf_free(&s1);
	t_buf_free(&s2);
	t_buf_free(&r);
	t_buf_free(&flat);
	t_buf_free(&t);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
