/* SPDX-License-Identifier: MIT */
/*
 * UC and UD through the engine.  UC: SEND and WRITE (with immediate),
 * completion at the sender once sent, and every responder error dropping
 * the message silently (no receive WQE, bad rkey, too long) without
 * losing the receive WQE for the next one.  UD: the 40-byte GRH with the
 * IPv4 header at offset 20, Q_Keys (mismatch dropped and counted, the
 * "use mine" bit), the MTU limit, a too-small receive buffer, bad AH.
 * Send errors on UC/UD stop the SQ only (SQE); back to RTS works.
 */
#include <endian.h>
#include <string.h>

#include "common/inet.h"
#include "tests/unit/engine_harness.h"

#define QKEY 0x1234567

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb;

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static void test_uc(void)
{
	struct eh_qp a, b;
	const struct srd_tp_counters *cb;
	struct srd_send_wqe w;
	struct srd_cqe e;

	eh_qp(&h, h.pd, IBV_QPT_UC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_UC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	cb = engine_qp_counters(b.qp);
	pattern(ma.p, 65536, 1);

	/* SEND, three packets. */
	eh_post_recv(&b, 0x10, (struct srd_sge[]){ eh_sge(&mb, 0, 4000) }, 1);
	w = eh_wqe(1, IBV_WR_SEND_WITH_IMM, SRD_WQE_SIGNALED, 1);
	w.imm_data = htobe32(7);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 3000) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 1);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x10);
	T_EQ(e.byte_len, 3000);
	T_EQ(e.imm_data, htobe32(7));
	T_EQ(e.src_qp, a.qpn);
	T_ASSERT(!memcmp(mb.p, ma.p, 3000));

	/* WRITE and WRITE with immediate. */
	w = eh_wqe(2, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p + 10000;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 100, 2500) },
		     NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 2);
	T_ASSERT(!memcmp(mb.p + 10000, ma.p + 100, 2500));
	eh_post_recv(&b, 0x11, NULL, 0);
	w.wr_id = 3;
	w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w.imm_data = 99;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 3);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 0x11);
	T_EQ(e.byte_len, 10);

	/* No receive WQE: the sender completes, the message is gone. */
	w = eh_wqe(4, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 3000) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 4);
	eh_run(&h, 3);
	eh_none(&rcq);
	T_EQ(cb->no_rwqe_drops, 1);

	/* Bad rkey: dropped, no error anywhere. */
	w = eh_wqe(5, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey ^ 0x300;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 2000) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 5);

	/* Too long for the receive WQE: dropped, the WQE stays for the
	 * next message. */
	memset(mb.p, 0, 65536);
	eh_post_recv(&b, 0x12, (struct srd_sge[]){ eh_sge(&mb, 0, 1500) }, 1);
	w = eh_wqe(6, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 3000) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 6);
	eh_run(&h, 2);
	eh_none(&rcq);
	w.wr_id = 7;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 5, 1200) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 7);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x12);
	T_EQ(e.byte_len, 1200);
	T_ASSERT(!memcmp(mb.p, ma.p + 5, 1200));
	T_ASSERT(cb->uc_drops >= 2);
	T_EQ(eh_state(&a), IBV_QPS_RTS);
	T_EQ(eh_state(&b), IBV_QPS_RTS);

	/* READ is not a UC operation: the SQ stops (SQE), the RQ works. */
	w = eh_wqe(8, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	eh_post_send(&b, &w, (struct srd_sge[]){ eh_sge(&mb, 0, 8) }, NULL);
	w = eh_wqe(9, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	w.flags = 0;
	eh_post_send(&b, &w, (struct srd_sge[]){ eh_sge(&mb, 0, 8) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RDMA_READ, 8);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 9);
	T_EQ(eh_state(&b), IBV_QPS_SQE);
	eh_post_recv(&b, 0x13, (struct srd_sge[]){ eh_sge(&mb, 0, 100) }, 1);
	w = eh_wqe(10, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 100) }, NULL);
	eh_wait(&h, &scq, 5);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x13);
	/* SQE -> RTS: sending works again. */
	{
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTS };

		T_EQ(eh_modify(&h, &b, &at, IBV_QP_STATE), 0);
	}
	eh_post_recv(&a, 0x14, (struct srd_sge[]){ eh_sge(&ma, 60000, 100) },
		     1);
	w = eh_wqe(11, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&b, &w, (struct srd_sge[]){ eh_sge(&mb, 0, 100) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 11);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x14);
}

static void test_ud(void)
{
	struct eh_qp a, b;
	const struct srd_tp_counters *cb;
	uint32_t ah = eh_ah(&h, h.pd);
	uint32_t mtu = 128u << h.t.c->dev->port.active_mtu;
	struct srd_send_wqe w;
	struct srd_cqe e;
	uint8_t *g = mb.p;

	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &b);
	eh_ud_ready(&h, &a, QKEY);
	eh_ud_ready(&h, &b, QKEY);
	cb = engine_qp_counters(b.qp);
	pattern(ma.p, 65536, 4);
	memset(mb.p, 0xee, 65536);

	eh_post_recv(&b, 0x20, (struct srd_sge[]){ eh_sge(&mb, 0, 300) }, 1);
	w = eh_wqe(20, IBV_WR_SEND_WITH_IMM, SRD_WQE_SIGNALED, 1);
	w.imm_data = 0xabcdef01;
	w.ah_handle = ah;
	w.remote_qpn = b.qpn;
	w.remote_qkey = QKEY;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 100) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 20);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x20);
	T_EQ(e.byte_len, 140);
	T_EQ(e.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
	T_EQ(e.imm_data, 0xabcdef01);
	T_EQ(e.src_qp, a.qpn);
	T_EQ(e.qp_num, b.qpn);
	/* No SL crosses a RoCE v2 wire: sl says "UDP, IPv4" (ConnectX's
	 * convention, which UCX reads), not the sender's 3. */
	T_EQ(e.sl, ROCE_WC_SL_UDP | ROCE_WC_SL_IPV4);
	T_EQ(e.pkey_index, 0);
	/* GRH: 20 zero bytes, then the IPv4 header of a RoCEv2 packet from
	 * 127.0.0.1 to 127.0.0.1 (UDP 8 + BTH 12 + DETH 8 + ImmDt 4 +
	 * 100 + ICRC 4 = 136). */
	for (int i = 0; i < 20; i++)
		T_EQ(g[i], 0);
	T_EQ(g[20], 0x45);
	T_EQ(g[22] << 8 | g[23], 20 + 136);
	T_EQ(g[26], 0x40); /* DF */
	T_EQ(g[28], 64);   /* TTL = hop limit */
	T_EQ(g[29], 17);
	T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, g + 20, 20)), 0);
	T_EQ(g[32], 127);
	T_EQ(g[35], 1);
	T_EQ(g[36], 127);
	T_EQ(g[39], 1);
	T_ASSERT(!memcmp(mb.p + 40, ma.p, 100));
	T_EQ(mb.p[140], 0xee);

	/* Wrong Q_Key: dropped silently and counted. */
	eh_post_recv(&b, 0x21, (struct srd_sge[]){ eh_sge(&mb, 0, 300) }, 1);
	w = eh_wqe(21, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	w.ah_handle = ah;
	w.remote_qpn = b.qpn;
	w.remote_qkey = QKEY + 1;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 100) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 21);
	eh_run(&h, 2);
	eh_none(&rcq);
	T_EQ(cb->qkey_drops, 1);
	/* High bit: the sending QP's own Q_Key. */
	w.wr_id = 22;
	w.remote_qkey = 0x80000000u;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 0) }, NULL);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x21);
	T_EQ(e.byte_len, 40);
	T_EQ(e.wc_flags, IBV_WC_GRH);
	eh_wait(&h, &scq, 1);

	/* Nobody listening at that QPN: still a local success. */
	w.wr_id = 23;
	w.remote_qpn = 0xfedcb;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 23);
	/* No receive WQE: dropped and counted. */
	w.wr_id = 24;
	w.remote_qpn = b.qpn;
	w.remote_qkey = QKEY;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 10) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 24);
	T_EQ(cb->no_rwqe_drops, 1);

	/* Receive buffer too small for GRH + payload. */
	eh_post_recv(&b, 0x22, (struct srd_sge[]){ eh_sge(&mb, 0, 100) }, 1);
	w.wr_id = 25;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 61) }, NULL);
	eh_wait(&h, &scq, 5);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0x22);
	T_EQ(eh_state(&b), IBV_QPS_ERR);

	/* Larger than the path MTU: a local length error; the SQ stops. */
	w.wr_id = 26;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, mtu + 1) },
		     NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_LOC_LEN_ERR, IBV_WC_SEND, 26);
	T_EQ(eh_state(&a), IBV_QPS_SQE);

	/* A bad AH, and WRITE on UD. */
	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &a);
	eh_ud_ready(&h, &a, QKEY);
	w.wr_id = 27;
	w.ah_handle = ah + 100;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 1) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND, 27);
	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &a);
	eh_ud_ready(&h, &a, QKEY);
	w = eh_wqe(28, IBV_WR_RDMA_WRITE, SRD_WQE_SIGNALED, 1);
	w.ah_handle = ah;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 1) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RDMA_WRITE, 28);
	/* An AH of another PD. */
	{
		uint32_t pd2 = eh_pd(&h);

		eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &a);
		eh_ud_ready(&h, &a, QKEY);
		w = eh_wqe(29, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
		w.ah_handle = eh_ah(&h, pd2);
		eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 1) },
			     NULL);
		e = eh_wait(&h, &scq, 5);
		EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND, 29);
	}
}

/* With an IPv6 GID the 40 bytes are the IPv6 header. */
static void test_ud_ipv6(void)
{
	const struct srd_port *port = &h.t.c->dev->port;
	struct srd_create_ah_req q;
	static struct srd_rep rp;
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;
	int gi = -1;

	for (int i = 0; i < SRD_MAX_GIDS; i++)
		if (port->gid_valid[i] && port->gid[i].raw[10] != 0xff)
			gi = i;
	if (gi < 0) {
		printf("# no IPv6 GID on the device: IPv6 GRH not tested\n");
		return;
	}
	memset(&q, 0, sizeof(q));
	q.pd_handle = h.pd;
	q.attr.is_global = 1;
	q.attr.port_num = 1;
	q.attr.grh.dgid = port->gid[gi];
	q.attr.grh.sgid_index = gi;
	q.attr.grh.hop_limit = 9;
	q.attr.grh.traffic_class = 0x28;
	q.attr.grh.flow_label = 0x12345;
	T_EQ(t_core_cmd(h.t.c, SRD_CMD_CREATE_AH, &q, sizeof(q), NULL, 0, &rp),
	     0);
	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_UD, &scq, &rcq, NULL, NULL, false, &b);
	eh_ud_ready(&h, &a, QKEY);
	eh_ud_ready(&h, &b, QKEY);
	memset(mb.p, 0xee, 200);
	eh_post_recv(&b, 0x60, (struct srd_sge[]){ eh_sge(&mb, 0, 200) }, 1);
	memset(&w, 0, sizeof(w));
	w.wr_id = 60;
	w.opcode = IBV_WR_SEND;
	w.flags = SRD_WQE_SIGNALED;
	w.num_sge = 1;
	w.ah_handle = ((struct srd_handle_rep *)rp.data)->handle;
	w.remote_qpn = b.qpn;
	w.remote_qkey = QKEY;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 7) }, NULL);
	eh_wait(&h, &scq, 5);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x60);
	T_EQ(e.byte_len, 47);
	/* version 6, traffic class, flow label; UDP length 8 + 12 + 8 +
	 * 7 + pad 1 + 4; next header UDP; hop limit; the GIDs. */
	T_EQ(mb.p[0], 0x62);
	T_EQ(mb.p[1], 0x81);
	T_EQ(mb.p[2], 0x23);
	T_EQ(mb.p[3], 0x45);
	T_EQ(mb.p[4] << 8 | mb.p[5], 40);
	T_EQ(mb.p[6], 17);
	T_EQ(mb.p[7], 9);
	T_ASSERT(!memcmp(mb.p + 8, port->gid[gi].raw, 16));
	T_ASSERT(!memcmp(mb.p + 24, port->gid[gi].raw, 16));
	T_ASSERT(!memcmp(mb.p + 40, ma.p, 7));
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 256, &scq);
	eh_cq(&h, 256, &rcq);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &mb);
	test_uc();
	test_ud();
	test_ud_ipv6();
	eh_settle(&h);
	eh_fini(&h);
	return T_EXIT_PASS;
}
