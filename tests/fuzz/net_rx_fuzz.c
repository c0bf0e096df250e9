/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the UDP wire's receive path (wire_udp_rx) with
 * arbitrary bytes, into a daemon core in this process with RC, UC and UD
 * QPs in RTS.  It must never crash, leak or trip a sanitizer, whatever
 * arrives.
 *
 * Input: byte 0 picks a QP, byte 1 holds flags (bit 0: IPv6 instead of
 * IPv4; bit 1: aim the BTH at the picked QP; bit 2: give the packet a good
 * ICRC, so it reaches the parser and the state machines; bit 3: the IPv4
 * identification is known), the rest is the UDP payload (BTH ... ICRC).
 * Fault rules (dup, reorder, corrupt, delay) are on, so frames are held,
 * released and replayed too.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "daemon/net/icrc.h"
#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct eh h;
static struct eh_cq cq;
static struct eh_mr mr;
static struct eh_qp rc[2], uc[2], ud;
static bool ready;

static void post_recvs(struct eh_qp *q)
{
	/* Keep receive WQEs there, one page each from the MR. */
	while (q->rq_prod - q->qp->tp->rq_taken < 16) {
		struct srd_sge s = eh_sge(&mr, (q->rq_prod % 16) * 4096, 4096);

		eh_post_recv(q, q->rq_prod, &s, 1);
	}
}

static void make_pair(struct eh_qp *a, struct eh_qp *b, enum ibv_qp_type t)
{
	struct eh_conn c = { .mtu = IBV_MTU_1024, .timeout = 10 };

	eh_qp(&h, h.pd, t, &cq, &cq, NULL, NULL, false, a);
	eh_qp(&h, h.pd, t, &cq, &cq, NULL, NULL, false, b);
	eh_connect_pair(&h, a, b, &c);
}

static void setup(void)
{
	static const char *rules = "dup prob=0.05;reorder prob=0.05 dir=rx;"
				   "corrupt prob=0.02;delay us=50 prob=0.02";

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.faults[0] = rules;
	srd_net_cfg.nfaults = 1;
	srd_net_cfg.fault_seed = 1;
	eh_init(&h);
	eh_cq(&h, 4096, &cq);
	eh_mr(&h, h.pd, 1 << 20,
	      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	      &mr);
	make_pair(&rc[0], &rc[1], IBV_QPT_RC);
	make_pair(&uc[0], &uc[1], IBV_QPT_UC);
	eh_qp(&h, h.pd, IBV_QPT_UD, &cq, &cq, NULL, NULL, false, &ud);
	eh_ud_ready(&h, &ud, 0x11111111);
	ready = true;
}

/* QPs the input broke come back fresh; CQEs are drained. */
static void repair(void)
{
	struct srd_cqe e;

	while (eh_poll(&cq, &e))
		;
	if (eh_state(&rc[0]) != IBV_QPS_RTS ||
	    eh_state(&rc[1]) != IBV_QPS_RTS) {
		eh_destroy_qp(&h, &rc[0]);
		eh_destroy_qp(&h, &rc[1]);
		make_pair(&rc[0], &rc[1], IBV_QPT_RC);
	}
	if (eh_state(&uc[0]) != IBV_QPS_RTS ||
	    eh_state(&uc[1]) != IBV_QPS_RTS) {
		eh_destroy_qp(&h, &uc[0]);
		eh_destroy_qp(&h, &uc[1]);
		make_pair(&uc[0], &uc[1], IBV_QPT_UC);
	}
	if (eh_state(&ud) != IBV_QPS_RTS) {
		eh_destroy_qp(&h, &ud);
		eh_qp(&h, h.pd, IBV_QPT_UD, &cq, &cq, NULL, NULL, false, &ud);
		eh_ud_ready(&h, &ud, 0x11111111);
	}
	post_recvs(&rc[0]);
	post_recvs(&rc[1]);
	post_recvs(&uc[0]);
	post_recvs(&uc[1]);
	post_recvs(&ud);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[SRD_UDP_MAX_PAYLOAD];
	struct eh_qp *qps[] = { &rc[0], &rc[1], &uc[0], &uc[1], &ud };
	struct srd_udp_meta m = { .sport = 0xc001,
				  .dport = 4791,
				  .hop_limit = 64 };
	struct srd_engine *e;
	uint8_t sel, flags;
	size_t len;

	if (!ready)
		setup();
	repair();
	if (size < 2)
		return 0;
	sel = data[0];
	flags = data[1];
	len = size - 2;
	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, data + 2, len);
	if (flags & 1) {
		inet_pton(AF_INET6, "::1", &m.src);
	} else {
		inet_pton(AF_INET6, "::ffff:127.0.0.1", &m.src);
	}
	m.dst = m.src;
	if ((flags & 2) && len >= 12) {
		uint32_t qpn = htobe32(qps[sel % 5]->qpn);

		memcpy(buf + 4, &qpn, 4);
	}
	if ((flags & 4) && len >= 16) {
		if (flags & 1) {
			struct srd_icrc_udp6 f = { .sport = htons(m.sport),
						   .dport = htons(m.dport) };

			memcpy(f.saddr, &m.src, 16);
			memcpy(f.daddr, &m.dst, 16);
			srd_icrc_put(buf, len,
				     srd_icrc_v6_from_parts(&f, buf, len));
		} else {
			struct srd_icrc_udp4 f;

			srd_udp_icrc_v4_fields(&m, m.sport, &f);
			srd_icrc_put(buf, len,
				     srd_icrc_v4_from_parts(&f, sel, 0x4000,
							    buf, len));
		}
	}
	/* As the engine's pass would: inside a pass, then a few more. */
	e = h.t.d.engine;
	e->now = h.now;
	e->in_progress = true;
	if (flags & 8)
		wire_rx_deliver(e->wire, h.t.c->dev, &m, true, buf, len);
	else
		wire_udp_rx(e->wire, &m, buf, len);
	wire_flush(e);
	e->in_progress = false;
	eh_run(&h, 3);
	return 0;
}
