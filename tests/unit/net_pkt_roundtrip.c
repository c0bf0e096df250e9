/* SPDX-License-Identifier: MIT */
/*
 * Every BTH opcode through the UDP wire's byte form: a packet with random
 * header values and payload is serialized (wire_serialize), its ICRC
 * checked three ways (the wire's own check with the IPv4 identification
 * known and solved for, and icrc.c's whole-packet check over IP and UDP
 * headers built here), parsed back (srd_pkt_hdr_read) and compared field
 * by field.  A flipped bit must fail the ICRC.  Trains taken apart
 * (wire_train_part) must give the packets the requester would have sent.
 */
#include <arpa/inet.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/net/icrc.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"
#include "tests/unit/t_proto.h"

static uint64_t rng = 0x1234567887654321ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static void rand_meta(struct srd_udp_meta *m, bool v4)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < 16; i++) {
		m->src.s6_addr[i] = rnd();
		m->dst.s6_addr[i] = rnd();
	}
	if (v4) {
		memset(&m->src, 0, 10);
		memset(&m->dst, 0, 10);
		m->src.s6_addr[10] = m->src.s6_addr[11] = 0xff;
		m->dst.s6_addr[10] = m->dst.s6_addr[11] = 0xff;
	} else {
		m->src.s6_addr[0] = m->dst.s6_addr[0] = 0xfd;
	}
	m->sport = 0xc000 | (rnd() & 0x3fff);
	m->dport = 4791;
	m->tclass = rnd();
	m->hop_limit = 64;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* icrc.c's whole-packet check, on IP and UDP headers built here. */
static int full_check(const struct srd_udp_meta *m, const uint8_t *bth,
		      size_t len)
{
	uint8_t pkt[40 + 8 + 70000];
	size_t ip = wire_meta_v4(m) ? 20 : 40;
	uint8_t *udp = pkt + ip;

	memset(pkt, 0, ip + 8);
	if (ip == 20) {
		const struct srd_ipv4_fields h = {
			.ttl = 64,
			.protocol = SRD_IPPROTO_UDP,
			.payload_len = (uint16_t)(8 + len),
			.frag_off = SRD_IPV4_DF, /* identification 0 */
			.saddr = &m->src.s6_addr[12],
			.daddr = &m->dst.s6_addr[12],
		};

		srd_ipv4_build(pkt, &h);
	} else {
		pkt[0] = 0x60;
		put16(pkt + 4, 8 + len);
		pkt[6] = 17;
		pkt[7] = 64;
		memcpy(pkt + 8, &m->src, 16);
		memcpy(pkt + 24, &m->dst, 16);
	}
	put16(udp, m->sport);
	put16(udp + 2, m->dport);
	put16(udp + 4, 8 + len);
	memcpy(udp + 8, bth, len);
	return ip == 20 ? srd_icrc_check_ipv4(pkt, udp, 8 + len)
			: srd_icrc_check_ipv6(pkt, udp, 8 + len);
}

static void rand_pkt(struct srd_pkt *p, uint8_t op, uint8_t *pay, uint32_t mtu)
{
	uint32_t m;

	srd_pkt_init(p, op);
	m = p->mask;
	p->se = rnd() & 1;
	p->mig = rnd() & 1;
	p->ack_req = rnd() & 1;
	p->pkey = rnd();
	p->qpn = rnd() & ROCE_QPN_MASK;
	p->psn = rnd() & ROCE_PSN_MASK;
	p->reth.va = rnd();
	p->reth.rkey = rnd();
	p->reth.len = rnd();
	p->aeth.syndrome = rnd();
	p->aeth.msn = rnd() & ROCE_AETH_MSN_MASK;
	p->atm.va = rnd();
	p->atm.rkey = rnd();
	p->atm.swap_add = rnd();
	p->atm.compare = rnd();
	p->atm_orig = rnd();
	p->imm = rnd();
	p->ieth_rkey = rnd();
	p->deth.qkey = rnd();
	p->deth.sqp = rnd() & ROCE_QPN_MASK;
	p->xrc_srqn = rnd() & ROCE_XRC_SRQN_MASK;
	if (m & OPF_PAYLOAD) {
		p->paylen = rnd() % (mtu + 1);
		for (uint32_t i = 0; i < p->paylen; i++)
			pay[i] = rnd();
		dma_init_buf(&p->pay, pay, p->paylen);
	}
}

static void compare(const struct srd_pkt *a, const struct srd_pkt *b)
{
	uint32_t m = a->mask;

	T_EQ(b->opcode, a->opcode);
	T_EQ(b->mask, a->mask);
	T_EQ(b->se, a->se);
	T_EQ(b->mig, a->mig);
	T_EQ(b->ack_req, a->ack_req);
	T_EQ(b->pkey, a->pkey);
	T_EQ(b->qpn, a->qpn);
	T_EQ(b->psn, a->psn);
	T_EQ(b->tver, 0);
	T_EQ(b->paylen, a->paylen);
	if (m & OPF_RETH) {
		T_EQ(b->reth.va, a->reth.va);
		T_EQ(b->reth.rkey, a->reth.rkey);
		T_EQ(b->reth.len, a->reth.len);
	}
	if (m & OPF_AETH) {
		T_EQ(b->aeth.syndrome, a->aeth.syndrome);
		T_EQ(b->aeth.msn, a->aeth.msn);
	}
	if (m & OPF_ATMETH) {
		T_EQ(b->atm.va, a->atm.va);
		T_EQ(b->atm.rkey, a->atm.rkey);
		T_EQ(b->atm.swap_add, a->atm.swap_add);
		T_EQ(b->atm.compare, a->atm.compare);
	}
	if (m & OPF_ATMACK)
		T_EQ(b->atm_orig, a->atm_orig);
	if (m & OPF_IMM)
		T_EQ(b->imm, a->imm);
	if (m & OPF_IETH)
		T_EQ(b->ieth_rkey, a->ieth_rkey);
	if (m & OPF_DETH) {
		T_EQ(b->deth.qkey, a->deth.qkey);
		T_EQ(b->deth.sqp, a->deth.sqp);
	}
	if (m & OPF_XRCETH)
		T_EQ(b->xrc_srqn, a->xrc_srqn);
}

static void roundtrip_all(void)
{
	static uint8_t pay[4096], buf[8192];
	struct srd_wire w = { 0 };
	unsigned int ops = 0;

	for (unsigned int op = 0; op < 256; op++) {
		if (!(srd_op_mask(op) & OPF_VALID))
			continue;
		ops++;
		for (int trial = 0; trial < 64; trial++) {
			struct srd_udp_meta m;
			struct srd_pkt p, q;
			uint64_t bit;
			int len, hl;

			rand_meta(&m, trial & 1);
			rand_pkt(&p, op, pay, trial < 32 ? 64 : 4096);
			len = wire_serialize(&w, &p, &m, buf, sizeof(buf));
			T_EQ(len, srd_pkt_hdr_len(&p) + p.paylen +
					  srd_pkt_pad(p.paylen) + 4);
			T_EQ(wire_check_icrc(&m, true, buf, len), 0);
			T_EQ(wire_check_icrc(&m, false, buf, len), 0);
			T_EQ(full_check(&m, buf, len), 0);
			hl = srd_pkt_hdr_read(&q, buf, len - 4);
			T_EQ(hl, srd_pkt_hdr_len(&p));
			compare(&p, &q);
			T_ASSERT(!memcmp(buf + hl, pay, p.paylen));
			/* The pad is zero (IBTA 9.2.3) */
			for (unsigned int i = 0; i < srd_pkt_pad(p.paylen); i++)
				T_EQ(buf[hl + p.paylen + i], 0);
			/* Not in BTH byte 4 (FECN, BECN, resv6a): the ICRC
			 * covers it as ones. */
			do
				bit = rnd() % (len * 8ull);
			while (bit / 8 == 4);
			buf[bit / 8] ^= 1u << (bit % 8);
			T_ASSERT(wire_check_icrc(&m, true, buf, len) != 0);
			T_ASSERT(full_check(&m, buf, len) != 0);
		}
	}
	/* 11 RC requests, 6 RC responses, 2 RC SEND with invalidate, 12 UC
	 * and 2 UD opcodes. */
	T_ASSERT(ops >= 30);
}

/* A WRITE train of 5 packets (FIRST + 4 MIDDLE) taken apart. */
static void trains(void)
{
	static uint8_t pay[5 * 1024];
	struct srd_pkt t, p;

	for (unsigned int i = 0; i < sizeof(pay); i++)
		pay[i] = i * 7;
	srd_pkt_init(&t, ROCE_RC_WRITE_FIRST);
	t.psn = ROCE_PSN_MASK - 1; /* wraps inside the train */
	t.npkts = 5;
	t.paylen = sizeof(pay);
	t.ack_req = true;
	t.reth.va = 0x1000;
	t.reth.len = 6000;
	dma_init_buf(&t.pay, pay, sizeof(pay));
	T_EQ(wire_pkt_bytes(&t), sizeof(pay) + 5 * 16 + 16);
	for (uint32_t i = 0; i < 5; i++) {
		uint8_t got[1024];
		struct srd_dma dst;

		wire_train_part(&t, i, &p);
		T_EQ(p.npkts, 1);
		T_EQ(p.opcode, i ? ROCE_RC_WRITE_MIDDLE : ROCE_RC_WRITE_FIRST);
		T_EQ(!!(p.mask & OPF_RETH), i == 0);
		T_EQ(p.psn, (ROCE_PSN_MASK - 1 + i) & ROCE_PSN_MASK);
		T_EQ(p.ack_req, i == 4);
		T_EQ(p.paylen, 1024);
		dma_init_buf(&dst, got, sizeof(got));
		T_EQ(dma_copy(NULL, &dst, &p.pay, 1024), 0);
		T_ASSERT(!memcmp(got, pay + i * 1024, 1024));
	}
	srd_pkt_init(&t, ROCE_RC_READ_RESPONSE_FIRST);
	t.npkts = 3;
	t.paylen = 3 * 256;
	wire_train_part(&t, 2, &p);
	T_EQ(p.opcode, ROCE_RC_READ_RESPONSE_MIDDLE);
	T_EQ(!!(p.mask & OPF_AETH), 0);
	srd_pkt_init(&t, ROCE_UC_SEND_MIDDLE);
	t.npkts = 2;
	t.paylen = 2 * 256;
	wire_train_part(&t, 1, &p);
	T_EQ(p.opcode, ROCE_UC_SEND_MIDDLE);
}

int main(void)
{
	roundtrip_all();
	trains();
	printf("PASS net_pkt_roundtrip\n");
	return T_EXIT_PASS;
}
