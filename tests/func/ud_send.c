/* SPDX-License-Identifier: MIT */
/*
 * UD: every receive starts with the 40-byte GRH (for RoCE v2 over IPv4:
 * 20 bytes, then the IPv4 header), byte_len counts it, src_qp names the
 * sender; SEND_WITH_IMM; a wrong Q_Key is dropped silently; a message
 * larger than the path MTU fails with IBV_WC_LOC_LEN_ERR; a receive
 * buffer too small for the message fails the receive.
 */
#include <stdio.h>

#include "common/inet.h"
#include "t_util.h"

#define GRH 40

static void check_grh(const uint8_t *g, uint32_t len)
{
	static const uint8_t lo[4] = { 127, 0, 0, 1 };
	const uint8_t *ip = g + 20;
	uint32_t tot = (uint32_t)(ip[2] << 8 | ip[3]);

	for (int i = 0; i < 20; i++)
		if (g[i])
			T_FAIL("GRH byte %d is %#x, expected 0 (IPv4 source)",
			       i, g[i]);
	T_EQ(ip[0], 0x45);
	T_EQ(ip[9], 17); /* UDP */
	T_MEMEQ(ip + 12, lo, 4);
	T_MEMEQ(ip + 16, lo, 4);
	/* IP + UDP + BTH + DETH + payload (+ pad) + ICRC */
	T_GE(tot, 20 + 8 + 12 + 8 + len + 4);
	T_LE(tot, 20 + 8 + 12 + 8 + len + 3 + 4 + 4);
	T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, ip, 20)), 0);
}

int main(void)
{
	struct ibv_send_wr wr, *bad;
	struct t_buf s, r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint32_t mtu, len;

	t_init("ud_send");
	t_dev_open(&d);
	mtu = 128u << d.port.active_mtu;
	t_log("active mtu %u", mtu);
	t_pair_create(&d, &p, IBV_QPT_UD, NULL, NULL);
	t_buf_alloc(&d, &s, mtu + 1, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4 * (GRH + mtu), T_ACCESS_ALL);

	/* Sizes up to the MTU: GRH, byte_len, src_qp, data. */
	{
		const uint32_t lens[] = { 0, 1, 7, 64, 1000, mtu - 1, mtu };

		for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]);
		     i++) {
			len = lens[i];
			memset(r.p, 0xcc, GRH + mtu + 1);
			t_post_recv(p.b, len, r.mr, r.p, GRH + mtu);
			t_fill(s.p, len, len);
			t_post_ud(p.a, 1000 + len, p.ah_a, p.b->qp_num, p.qkey,
				  s.mr, s.p, len, IBV_SEND_SIGNALED);
			T_EXPECT_WC(p.cq_a, &wc, 1000 + len, IBV_WC_SUCCESS,
				    IBV_WC_SEND);
			T_EXPECT_WC(p.cq_b, &wc, len, IBV_WC_SUCCESS,
				    IBV_WC_RECV);
			T_EQ(wc.byte_len, GRH + len);
			T_EQ(wc.src_qp, p.a->qp_num);
			T_EQ(wc.qp_num, p.b->qp_num);
			T_ASSERT(wc.wc_flags & IBV_WC_GRH);
			/* RoCE v2 over IPv4, as ConnectX reports it. */
			T_EQ(wc.sl, 0xa);
			T_ASSERT(!(wc.wc_flags & IBV_WC_WITH_IMM));
			T_EQ(wc.pkey_index, 0);
			check_grh(r.p, len);
			T_CHECK_FILL(r.p + GRH, len, len);
			T_EQ(r.p[GRH + len], 0xcc);
		}
	}

	/* SEND_WITH_IMM. */
	t_post_recv(p.b, 5, r.mr, r.p, GRH + mtu);
	sge = (struct ibv_sge){ (uintptr_t)s.p, 64, s.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(0xfeedbeef);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = p.ah_a;
	wr.wr.ud.remote_qpn = p.b->qp_num;
	wr.wr.ud.remote_qkey = p.qkey;
	t_fill(s.p, 64, 6);
	T_OK(ibv_post_send(p.a, &wr, &bad));
	T_EXPECT_WC(p.cq_a, &wc, 6, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 0xfeedbeef);
	T_EQ(wc.byte_len, GRH + 64);
	T_CHECK_FILL(r.p + GRH, 64, 6);

	/* Wrong Q_Key: the send completes, nothing arrives; the receive
	 * stays posted for the next good message. */
	t_post_recv(p.b, 7, r.mr, r.p, GRH + mtu);
	t_post_ud(p.a, 8, p.ah_a, p.b->qp_num, p.qkey ^ 0x2222, s.mr, s.p, 32,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 8, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_NO_WC(p.cq_b, T_QUIET_MS);
	t_fill(s.p, 32, 9);
	t_post_ud(p.a, 9, p.ah_a, p.b->qp_num, p.qkey, s.mr, s.p, 32,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 9, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 7, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(r.p + GRH, 32, 9);

	/* To a QPN nobody has: completes locally, as UD does. */
	t_post_ud(p.a, 10, p.ah_a, 0xfffff0, p.qkey, s.mr, s.p, 32,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 10, IBV_WC_SUCCESS, IBV_WC_SEND);

	/* A receive buffer smaller than GRH + message: the receive fails. */
	t_post_recv(p.b, 11, r.mr, r.p, GRH + 16);
	t_post_ud(p.a, 12, p.ah_a, p.b->qp_num, p.qkey, s.mr, s.p, 64,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 12, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 11, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);

	/* Larger than the MTU: the sender's WR fails. */
	t_post_ud(p.a, 13, p.ah_a, p.b->qp_num, p.qkey, s.mr, s.p, mtu + 1,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 13, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);

	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
