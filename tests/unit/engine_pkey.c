/* SPDX-License-Identifier: MIT */
/*
 * P_Keys of packets from a peer outside the daemon, through the UDP
 * receive path, as rxe judges them: the default partition as a full
 * member (0xffff) or a limited one (0x7fff) is delivered; another
 * partition is dropped and counted in the port's bad_pkey_cntr (which
 * IBV_DEVICE_BAD_PKEY_CNTR promises), the QP's receive left posted.  A
 * wrong Q_Key counts in qkey_viol_cntr instead.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#define PEER "10.77.0.10"
#define QKEY 0x11112222u
#define PAY 64
#define GRH 40

static struct eh h;
static struct eh_qp q;
static struct eh_cq cq;
static struct eh_mr mr;
static union ibv_gid peer;

/* A UD SEND Only from the peer's QP 0x42 with that P_Key and Q_Key. */
static void ud_send(uint16_t pkey, uint32_t qkey, uint8_t fill)
{
	uint8_t p[12 + 8 + PAY + 4] = { 0 };
	uint32_t v;

	eh_bth(p, ROCE_UD_SEND_ONLY, q.qpn, 0);
	p[2] = (uint8_t)(pkey >> 8);
	p[3] = (uint8_t)pkey;
	v = htobe32(qkey);
	memcpy(p + 12, &v, 4);
	v = htobe32(0x42);
	memcpy(p + 16, &v, 4);
	memset(p + 20, fill, PAY);
	eh_udp_rx(&h, &q, &peer, p, sizeof(p));
	eh_run(&h, 4);
}

static void expect_recv(uint64_t wr_id, uint8_t fill)
{
	struct srd_cqe e = eh_wait(&h, &cq, 10);

	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, wr_id);
	T_EQ(e.byte_len, GRH + PAY);
	T_EQ(e.src_qp, 0x42);
	for (int i = 0; i < PAY; i++)
		T_EQ(mr.p[(wr_id - 1) * 256 + GRH + i], fill);
}

int main(void)
{
	struct srd_port *port;
	uint8_t raw[16] = { [10] = 0xff, [11] = 0xff };

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	eh_init(&h);
	T_ASSERT(h.t.d.engine->wire && h.t.d.engine->wire->udp);
	inet_pton(AF_INET, PEER, raw + 12);
	memcpy(peer.raw, raw, 16);
	eh_cq(&h, 64, &cq);
	eh_mr(&h, h.pd, 4 * 256, IBV_ACCESS_LOCAL_WRITE, &mr);
	eh_qp(&h, h.pd, IBV_QPT_UD, &cq, &cq, NULL, NULL, false, &q);
	eh_ud_ready(&h, &q, QKEY);
	port = &q.qp->dev->port;
	T_ASSERT(q.qp->dev->attr.device_cap_flags & IBV_DEVICE_BAD_PKEY_CNTR);
	T_ASSERT(q.qp->dev->attr.device_cap_flags & IBV_DEVICE_BAD_QKEY_CNTR);
	for (uint64_t i = 1; i <= 3; i++)
		eh_post_recv(
			&q, i,
			(struct srd_sge[]){ eh_sge(&mr, (i - 1) * 256, 256) },
			1);

	ud_send(0xffff, QKEY, 0xa1);
	expect_recv(1, 0xa1);
	ud_send(0x7fff, QKEY, 0xa2);
	expect_recv(2, 0xa2);
	T_EQ(port->bad_pkey, 0);

	/* Another partition, full or limited member: dropped, counted. */
	ud_send(0x8001, QKEY, 0xbb);
	ud_send(0x1234, QKEY, 0xbb);
	eh_none(&cq);
	T_EQ(port->bad_pkey, 2);
	T_EQ(port->qkey_viol, 0);

	/* The right P_Key, a wrong Q_Key: the other counter. */
	ud_send(0xffff, QKEY ^ 1, 0xcc);
	eh_none(&cq);
	T_EQ(port->bad_pkey, 2);
	T_EQ(port->qkey_viol, 1);

	/* The receive is still there for the next good one. */
	ud_send(0xffff, QKEY, 0xa3);
	expect_recv(3, 0xa3);
	eh_fini(&h);
	t_pass();
}
