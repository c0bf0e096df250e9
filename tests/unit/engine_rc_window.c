/* SPDX-License-Identifier: MIT */
/*
 * The RC requester's window toward a peer that drops, as rdma_rxe behind
 * an emulated guest's queue does (ib_write_bw -s 65536 from softrdma to
 * rxe sent 3.3 times the packets the data needed when the window stayed
 * near its 8192-packet maximum).  Through the UDP receive path, with ACKs
 * and NAKs made here:
 *
 *   - a new connection sends SRD_CWND_INIT packets, and each ACK lets
 *     out what it acknowledged more (slow start);
 *   - a sequence NAK halves what was still in flight and sets the
 *     threshold there; a second NAK of the same window does not halve it
 *     again;
 *   - above the threshold the window grows by one packet a window;
 *   - a timeout leaves SRD_CWND_MIN.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#define PEER "10.77.0.10"
#define NPKTS 1024 /* one WRITE, path MTU 1024 */
/* The window after the first loss: half of the 3 * INIT - 100 in flight. */
#define W ((3 * SRD_CWND_INIT - 100) / 2)

static struct eh h;
static struct eh_qp q;
static struct eh_cq cq;
static struct eh_mr mr;
static union ibv_gid peer;
static uint32_t first, msn;

/* An ACK (syndrome 0x1f) or a sequence NAK (0x60) for PSN first + off. */
static void ack(uint32_t off, uint8_t syndrome)
{
	eh_udp_ack(&h, &q, &peer, first + off, syndrome, ++msn);
	eh_run(&h, 4);
}

int main(void)
{
	const struct srd_tp_counters *cnt;
	struct srd_qp_transport *tp;
	struct eh_conn c = { .timeout = 14, .dgid = &peer };
	struct srd_send_wqe w = { .wr_id = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .flags = SRD_WQE_SIGNALED,
				  .num_sge = 1,
				  .remote_addr = 0x100000,
				  .rkey = 0x1234 };
	struct srd_sge s;

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	eh_init(&h);
	peer = eh_gid_v4(PEER);
	eh_cq(&h, 16, &cq);
	eh_mr(&h, h.pd, NPKTS * 1024, IBV_ACCESS_LOCAL_WRITE, &mr);
	eh_qp(&h, h.pd, IBV_QPT_RC, &cq, &cq, NULL, NULL, false, &q);
	eh_connect(&h, &q, 0x11, &c);
	tp = q.qp->tp;
	cnt = engine_qp_counters(q.qp);
	first = q.qp->attr.sq_psn;
	s = eh_sge(&mr, 0, NPKTS * 1024);
	eh_post_send(&q, &w, &s, NULL);
	eh_run(&h, 8);

	/* Slow start from SRD_CWND_INIT. */
	T_EQ(cnt->tx_pkts, SRD_CWND_INIT);
	ack(SRD_CWND_INIT - 1, 0x1f);
	T_EQ(tp->cwnd, 2 * SRD_CWND_INIT);
	T_EQ(cnt->tx_pkts, 3 * SRD_CWND_INIT); /* 64 acked, 128 in flight */

	/* Packet 100 lost: the NAK acknowledges 0..99; half of the rest in
	 * flight may go, and the threshold is set there. */
	ack(100, 0x60);
	T_EQ(tp->cwnd, W);
	T_EQ(tp->ssthresh, W);
	T_EQ(cnt->tx_pkts - 3 * SRD_CWND_INIT, W); /* 100.. again */
	/* Another loss of the same window (130): no second cut. */
	ack(130, 0x60);
	T_EQ(tp->cwnd, W);

	/* Above the threshold: one packet more per window acknowledged. */
	ack(130 + W - 1, 0x1f);
	T_EQ(tp->cwnd, W + 1);
	ack(130 + W - 1 + W + 1, 0x1f);
	T_EQ(tp->cwnd, W + 2);

	/* A timeout: the minimum, and slow start up to half the window. */
	h.step = 4096ull << 15;
	eh_run(&h, 1);
	h.step = 1000;
	eh_run(&h, 2);
	T_EQ(cnt->timeouts, 1);
	T_EQ(tp->cwnd, SRD_CWND_MIN);
	T_EQ(tp->ssthresh, (W + 2) / 2);
	eh_fini(&h);
	printf("PASS engine_rc_window\n");
	return T_EXIT_PASS;
}
