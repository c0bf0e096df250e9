/* SPDX-License-Identifier: MIT */
/*
 * Bad packets from the network, through the UDP wire's receive path
 * (wire_udp_rx) of a device with RC and UD QPs whose peer is a host
 * 10.77.0.11 that does not exist: the test speaks for it.  Every packet
 * is built here, byte by byte, with its ICRC.
 *
 *   - garbage (random bytes, and random headers with a valid ICRC),
 *     truncated headers, a wrong ICRC, an unknown QPN: dropped and
 *     counted; no memory changes, the QPs stay usable;
 *   - a PSN ahead of the expected one: one PSN sequence error NAK, however
 *     many follow; an old PSN: a duplicate, acknowledged, not executed
 *     again;
 *   - a payload beyond the path MTU: NAK invalid request;
 *   - a forged rkey and the rkey of a deregistered MR: NAK remote access
 *     error, nothing written, nothing read;
 *   - a UD SEND with the wrong Q_Key, or an RC opcode to a UD QP: dropped
 *     and counted, no completion;
 *   - acknowledgements of PSNs never sent: ignored.
 * What the responder answered is read back from the wire's capture.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/net/icrc.h"
#include "daemon/net/net.h"
#include "daemon/net/pcap.h"
#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#define SERVER "10.77.0.10"
#define CLIENT "10.77.0.11"
#define CLIENT_QPN 0x11
#define CLIENT_QPN2 0x12
#define CLIENT_QPN3 0x13
#define CLIENT_QPN4 0x14
#define CLIENT_QPN5 0x15
#define PSN0 0x1000
#define MR_LEN 65536
#define QKEY 0x1234
#define GARBAGE 3000

struct raw {
	uint8_t data[9100];
	size_t len; /* UDP payload: BTH ... ICRC */
	struct srd_udp_meta m;
};

static struct eh h;
static struct eh_mr mr, stale, rbuf;
static struct eh_cq cq;
static struct eh_qp rc, rc2, rc3, rc4, rc5, ud;
static struct srd_wire *w;
static struct srd_device *dev;
static uint8_t gid_index;
static uint8_t shadow[MR_LEN]; /* what mr must hold */
static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void v4mapped(const char *a, uint8_t raw[16])
{
	uint8_t v4[4];

	T_ASSERT(inet_pton(AF_INET, a, v4) == 1);
	srd_gid_from_v4(raw, v4);
}

static void meta(struct srd_udp_meta *m)
{
	memset(m, 0, sizeof(*m));
	v4mapped(CLIENT, m->src.s6_addr);
	v4mapped(SERVER, m->dst.s6_addr);
	m->sport = 0xc001;
	m->dport = 4791;
	m->hop_limit = 64;
}

/* Seal with the ICRC a Linux sender with DF set would have computed. */
static void seal(struct raw *r)
{
	srd_udp_icrc_seal(&r->m, r->data, r->len);
}

/* A packet of the values in p with paylen bytes of fill as payload. */
static void build(struct raw *r, const struct srd_pkt *p, uint8_t fill)
{
	int hl;

	meta(&r->m);
	hl = srd_pkt_hdr_write(p, r->data, sizeof(r->data));
	T_ASSERT(hl > 0);
	T_ASSERT(hl + p->paylen + srd_pkt_pad(p->paylen) + 4 <=
		 sizeof(r->data));
	memset(r->data + hl, fill, p->paylen + srd_pkt_pad(p->paylen));
	r->len = (size_t)hl + p->paylen + srd_pkt_pad(p->paylen) + 4;
	seal(r);
}

static void rx(struct raw *r)
{
	wire_udp_rx(w, &r->m, r->data, r->len);
	eh_run(&h, 2);
}

static void write_pkt(struct raw *r, uint32_t qpn, uint32_t psn, uint64_t va,
		      uint32_t rkey, uint32_t len, uint8_t fill)
{
	struct srd_pkt p;

	srd_pkt_init(&p, ROCE_RC_WRITE_ONLY);
	p.qpn = qpn;
	p.psn = psn;
	p.ack_req = true;
	p.reth.va = va;
	p.reth.rkey = rkey;
	p.reth.len = len;
	p.paylen = len;
	build(r, &p, fill);
}

/* A WRITE that must land: the test's packets are right when this works. */
static void good_write(uint32_t psn, size_t off, uint32_t len, uint8_t fill)
{
	static struct raw r;

	write_pkt(&r, rc.qpn, psn, (uintptr_t)mr.p + off, mr.lkey, len, fill);
	rx(&r);
	memset(shadow + off, fill, len);
}

static void check_mr(const char *when)
{
	if (memcmp(mr.p, shadow, MR_LEN))
		T_FAIL("the MR changed: %s", when);
}

static struct srd_net_counters counters(void)
{
	struct srd_net_counters c;

	srd_net_counters_read(&h.t.d, dev, &c);
	return c;
}

static const struct srd_tp_counters *qpc(struct eh_qp *q)
{
	const struct srd_tp_counters *c = engine_qp_counters(q->qp);

	T_ASSERT(c);
	return c;
}

static void rc_server(struct eh_qp *q, uint32_t client_qpn)
{
	union ibv_gid client;
	struct eh_conn c = { .dgid = &client,
			     .sgid_index = gid_index,
			     .has_rq_psn = true,
			     .rq_psn = PSN0 };

	v4mapped(CLIENT, client.raw);
	eh_qp(&h, h.pd, IBV_QPT_RC, &cq, &cq, NULL, NULL, false, q);
	eh_connect(&h, q, client_qpn, &c);
}

static void setup(const char *pcap_out)
{
	uint8_t raw[16];

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	srd_net_cfg.pcap = pcap_out;
	eh_init(&h);
	w = h.t.d.engine->wire;
	T_ASSERT(w && w->udp);
	dev = h.t.c->dev;
	v4mapped(SERVER, raw);
	T_ASSERT(dev->port.gid_count < SRD_MAX_GIDS);
	gid_index = (uint8_t)dev->port.gid_count++;
	memcpy(dev->port.gid[gid_index].raw, raw, 16);
	dev->port.gid_valid[gid_index] = true;

	eh_cq(&h, 256, &cq);
	eh_mr(&h, h.pd, MR_LEN, EH_ACCESS_ALL, &mr);
	eh_mr(&h, h.pd, 4096,
	      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ,
	      &stale);
	eh_mr(&h, h.pd, 16 * 4096, IBV_ACCESS_LOCAL_WRITE, &rbuf);
	memset(mr.p, 0, MR_LEN);
	memset(shadow, 0, MR_LEN);
	rc_server(&rc, CLIENT_QPN);
	rc_server(&rc2, CLIENT_QPN2);
	rc_server(&rc3, CLIENT_QPN3);
	rc_server(&rc4, CLIENT_QPN4);
	rc_server(&rc5, CLIENT_QPN5);
	eh_qp(&h, h.pd, IBV_QPT_UD, &cq, &cq, NULL, NULL, false, &ud);
	eh_ud_ready(&h, &ud, QKEY);
	for (int i = 0; i < 16; i++) {
		struct srd_sge s = eh_sge(&rbuf, (size_t)i * 4096, 4096);

		eh_post_recv(&ud, 100 + i, &s, 1);
	}
}

/* --- what the responder sent, from the capture ---------------------------- */

struct resp {
	uint32_t qpn, psn;
	uint8_t opcode, syndrome;
};

static struct resp resps[4096];
static int nresps;

static void load_responses(const char *path)
{
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	uint8_t client[4];

	T_ASSERT(inet_pton(AF_INET, CLIENT, client) == 1);
	T_EQ(srd_pcap_open(&r, path), 0);
	while (srd_pcap_next(&r, &p) == 1 && nresps < 4096) {
		const uint8_t *ip = p.data + p.l3_off, *udp;
		struct srd_pkt k;
		size_t ihl, len;

		if (p.l3_proto != 0x0800 || ip[9] != 17 ||
		    memcmp(ip + 16, client, 4))
			continue;
		ihl = (ip[0] & 15) * 4u;
		udp = ip + ihl;
		len = ((size_t)udp[4] << 8 | udp[5]) - 8;
		if (srd_pkt_hdr_read(&k, udp + 8, len - 4) < 0)
			continue;
		resps[nresps].qpn = k.qpn;
		resps[nresps].psn = k.psn;
		resps[nresps].opcode = k.opcode;
		resps[nresps].syndrome = (k.mask & OPF_AETH) ? k.aeth.syndrome
							     : 0xff;
		nresps++;
	}
	srd_pcap_close(&r);
}

/* How many responses to client qpn carried this syndrome (NAK type and
 * code) at this PSN (UINT32_MAX: any PSN). */
static int naks(uint32_t qpn, uint8_t syndrome, uint32_t psn)
{
	int n = 0;

	for (int i = 0; i < nresps; i++)
		if (resps[i].qpn == qpn && resps[i].syndrome == syndrome &&
		    (psn == UINT32_MAX || resps[i].psn == psn))
			n++;
	return n;
}

static bool acked(uint32_t qpn, uint32_t psn)
{
	for (int i = 0; i < nresps; i++)
		if (resps[i].qpn == qpn && resps[i].psn == psn &&
		    resps[i].opcode == ROCE_RC_ACKNOWLEDGE &&
		    (resps[i].syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
			return true;
	return false;
}

/* --- the cases -------------------------------------------------------------- */

static uint32_t psn = PSN0; /* rc's expected PSN */

static const uint8_t opcodes[] = {
	ROCE_RC_SEND_FIRST,	     ROCE_RC_SEND_MIDDLE,
	ROCE_RC_SEND_LAST,	     ROCE_RC_SEND_ONLY_IMM,
	ROCE_RC_WRITE_FIRST,	     ROCE_RC_WRITE_ONLY,
	ROCE_RC_WRITE_ONLY_IMM,	     ROCE_RC_READ_REQUEST,
	ROCE_RC_READ_RESPONSE_FIRST, ROCE_RC_READ_RESPONSE_ONLY,
	ROCE_RC_ACKNOWLEDGE,	     ROCE_RC_ATOMIC_ACKNOWLEDGE,
	ROCE_RC_COMPARE_SWAP,	     ROCE_RC_FETCH_ADD,
	ROCE_RC_SEND_ONLY_INV,	     ROCE_UD_SEND_ONLY,
	ROCE_UD_SEND_ONLY_IMM,
};
#define NOPS (sizeof(opcodes) / sizeof(opcodes[0]))

static void garbage(void)
{
	static struct raw r;
	struct srd_net_counters c0 = counters(), c1;
	uint64_t dropped;

	for (int i = 0; i < GARBAGE; i++) {
		meta(&r.m);
		r.len = rnd() % 1500;
		for (size_t k = 0; k < r.len; k++)
			r.data[k] = (uint8_t)rnd();
		/* Half with an ICRC that checks, so the headers are parsed,
		 * half of those with a known opcode and version: never
		 * naming one of our QPs (hostile3 below does). */
		if (i & 1 && r.len >= 16) {
			uint32_t qpn = (uint32_t)rnd() & 0xffffff;

			if (qpn == rc.qpn || qpn == rc2.qpn || qpn == ud.qpn ||
			    qpn == rc3.qpn || qpn == rc4.qpn ||
			    qpn == rc5.qpn || qpn <= 1)
				qpn = 0xfffffe;
			if (i & 2) {
				r.data[0] = opcodes[rnd() % NOPS];
				r.data[1] &= 0xf0;
			}
			r.data[5] = (uint8_t)(qpn >> 16);
			r.data[6] = (uint8_t)(qpn >> 8);
			r.data[7] = (uint8_t)qpn;
			seal(&r);
		}
		wire_udp_rx(w, &r.m, r.data, r.len);
		if (i % 64 == 0)
			eh_run(&h, 1);
	}
	eh_run(&h, 4);
	c1 = counters();
	dropped = (c1.rx_icrc_errors - c0.rx_icrc_errors) +
		  (c1.rx_malformed - c0.rx_malformed) +
		  (c1.rx_unknown_qp - c0.rx_unknown_qp) +
		  (c1.rx_drops - c0.rx_drops);
	printf("# garbage: %d packets: %llu ICRC errors, %llu malformed, "
	       "%llu unknown QP, %llu other drops\n",
	       GARBAGE,
	       (unsigned long long)(c1.rx_icrc_errors - c0.rx_icrc_errors),
	       (unsigned long long)(c1.rx_malformed - c0.rx_malformed),
	       (unsigned long long)(c1.rx_unknown_qp - c0.rx_unknown_qp),
	       (unsigned long long)(c1.rx_drops - c0.rx_drops));
	T_EQ(dropped, GARBAGE);
	T_ASSERT(c1.rx_icrc_errors - c0.rx_icrc_errors >= GARBAGE / 3);
	T_ASSERT(c1.rx_unknown_qp - c0.rx_unknown_qp >= GARBAGE / 10);
	T_ASSERT(c1.rx_malformed - c0.rx_malformed >= GARBAGE / 10);
	check_mr("garbage");
	eh_none(&cq);
	T_EQ(eh_state(&rc), IBV_QPS_RTS);
	T_EQ(eh_state(&ud), IBV_QPS_RTS);
}

static void malformed(void)
{
	static struct raw r;
	struct srd_net_counters c0, c1;
	static const size_t cut[] = { 0, 1, 4, 11, 12, 15, 16, 20, 27 };

	/* A WRITE ONLY (BTH 12 + RETH 16) cut short, sealed as it is. */
	c0 = counters();
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		write_pkt(&r, rc.qpn, psn, (uintptr_t)mr.p, mr.lkey, 0, 0);
		r.len = cut[i] + 4;
		if (r.len >= 16)
			seal(&r);
		rx(&r);
	}
	c1 = counters();
	T_EQ((c1.rx_malformed - c0.rx_malformed) +
		     (c1.rx_icrc_errors - c0.rx_icrc_errors),
	     sizeof(cut) / sizeof(cut[0]));
	T_ASSERT(c1.rx_malformed - c0.rx_malformed >= 5);

	/* A bad BTH transport version. */
	c0 = counters();
	write_pkt(&r, rc.qpn, psn, (uintptr_t)mr.p, mr.lkey, 8, 0x11);
	r.data[1] |= 0x0f;
	seal(&r);
	rx(&r);
	c1 = counters();
	T_EQ(c1.rx_malformed - c0.rx_malformed, 1);

	/* A wrong ICRC on an otherwise good WRITE. */
	c0 = counters();
	write_pkt(&r, rc.qpn, psn, (uintptr_t)mr.p, mr.lkey, 64, 0x22);
	r.data[r.len - 1] ^= 0x40;
	rx(&r);
	c1 = counters();
	T_EQ(c1.rx_icrc_errors - c0.rx_icrc_errors, 1);

	/* An unknown QP. */
	c0 = counters();
	write_pkt(&r, 0xabcde, psn, (uintptr_t)mr.p, mr.lkey, 64, 0x33);
	rx(&r);
	c1 = counters();
	T_EQ(c1.rx_unknown_qp - c0.rx_unknown_qp, 1);

	check_mr("malformed");
	eh_none(&cq);
	T_EQ(eh_state(&rc), IBV_QPS_RTS);
}

static void sequence(void)
{
	static struct raw r;
	uint64_t nak0 = qpc(&rc)->seq_naks_sent;
	uint64_t dup0 = qpc(&rc)->dup_requests;

	/* Far ahead, three times: one NAK; nothing lands. */
	for (int i = 0; i < 3; i++) {
		write_pkt(&r, rc.qpn, (psn + 5000 + i) & 0xffffff,
			  (uintptr_t)mr.p + 4096, mr.lkey, 64, 0x55);
		rx(&r);
	}
	T_EQ(qpc(&rc)->seq_naks_sent - nak0, 1);
	check_mr("PSN ahead");

	/* The expected PSN clears the sequence error. */
	good_write(psn, 0, 256, 0x61);
	psn++;
	good_write(psn, 256, 256, 0x62);
	psn++;
	check_mr("in order");

	/* The first again, with other bytes: acknowledged, not redone. */
	write_pkt(&r, rc.qpn, psn - 2, (uintptr_t)mr.p, mr.lkey, 256, 0x99);
	rx(&r);
	T_EQ(qpc(&rc)->dup_requests - dup0, 1);
	check_mr("duplicate");

	/* Behind the window of duplicates: dropped, never executed. */
	write_pkt(&r, rc.qpn, (psn - 0x400000) & 0xffffff, (uintptr_t)mr.p,
		  mr.lkey, 256, 0x98);
	rx(&r);
	check_mr("PSN behind");
	T_EQ(eh_state(&rc), IBV_QPS_RTS);
}

static void ghost_acks(void)
{
	static struct raw r;
	struct srd_pkt p;

	/* rc has sent nothing: ACKs, NAKs and READ responses for its PSNs
	 * answer nothing and must change nothing. */
	for (int i = 0; i < 4; i++) {
		srd_pkt_init(&p, i == 3 ? ROCE_RC_READ_RESPONSE_ONLY
					: ROCE_RC_ACKNOWLEDGE);
		p.qpn = rc.qpn;
		p.psn = (rc.qp->attr.sq_psn + i - 1) & 0xffffff;
		p.aeth.syndrome = i == 1   ? ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS
				  : i == 2 ? ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ
					   : ROCE_AETH_CREDITS_INVALID;
		p.aeth.msn = 5;
		p.paylen = i == 3 ? 64 : 0;
		build(&r, &p, 0x77);
		rx(&r);
	}
	eh_none(&cq);
	T_EQ(eh_state(&rc), IBV_QPS_RTS);
	check_mr("ghost acks");
	good_write(psn, 1024, 64, 0x63);
	psn++;
	check_mr("after ghost acks");
}

static void ud_cases(void)
{
	static struct raw r;
	struct srd_pkt p;
	struct srd_cqe e;
	uint64_t qk0 = qpc(&ud)->qkey_drops;
	struct srd_net_counters c0 = counters(), c1;

	srd_pkt_init(&p, ROCE_UD_SEND_ONLY);
	p.qpn = ud.qpn;
	p.psn = 1;
	p.deth.qkey = QKEY ^ 1;
	p.deth.sqp = 0x55;
	p.paylen = 100;
	build(&r, &p, 0x81);
	rx(&r);
	T_EQ(qpc(&ud)->qkey_drops - qk0, 1);
	eh_none(&cq);

	/* An RC opcode for a UD QP. */
	write_pkt(&r, ud.qpn, 1, (uintptr_t)mr.p, mr.lkey, 64, 0x82);
	rx(&r);
	c1 = counters();
	T_ASSERT(c1.rx_drops + qpc(&ud)->rx_drops > c0.rx_drops);
	eh_none(&cq);
	check_mr("RC opcode to UD");

	/* The right Q_Key: delivered, with the GRH in front. */
	p.deth.qkey = QKEY;
	build(&r, &p, 0x83);
	rx(&r);
	e = eh_wait(&h, &cq, 10);
	T_EQ(e.status, IBV_WC_SUCCESS);
	T_EQ(e.wr_id, 100);
	T_EQ(e.byte_len, 40 + 100);
	T_EQ(e.src_qp, 0x55);
	T_EQ(rbuf.p[40], 0x83);
	T_EQ(rbuf.p[139], 0x83);
}

/* Random headers and payloads sealed with good ICRCs, aimed at a QP: the
 * QP may end in error, but nothing outside what it may touch changes. */
static void hostile3(void)
{
	static struct raw r;

	for (int i = 0; i < GARBAGE; i++) {
		meta(&r.m);
		r.len = 16 + rnd() % 1200;
		for (size_t k = 0; k < r.len; k++)
			r.data[k] = (uint8_t)rnd();
		r.data[0] = opcodes[rnd() % NOPS];
		r.data[1] &= 0xf0;
		r.data[5] = (uint8_t)(rc3.qpn >> 16);
		r.data[6] = (uint8_t)(rc3.qpn >> 8);
		r.data[7] = (uint8_t)rc3.qpn;
		if (i & 1) /* near the expected PSN */
			r.data[10] = r.data[9] = 0, r.data[11] &= 0x0f;
		seal(&r);
		wire_udp_rx(w, &r.m, r.data, r.len);
		if (i % 16 == 0)
			eh_run(&h, 1);
	}
	eh_run(&h, 4);
	check_mr("hostile packets to a QP");
	while (eh_poll(&cq, &(struct srd_cqe){ 0 }))
		;
}

/* Destructive last: each leaves its QP in error, as the spec says. */
static void oversized(void)
{
	static struct raw r;

	write_pkt(&r, rc2.qpn, PSN0, (uintptr_t)mr.p + 8192, mr.lkey, 2048,
		  0x91);
	rx(&r);
	check_mr("payload over the path MTU");
	/* Larger than any MTU. */
	write_pkt(&r, rc4.qpn, PSN0, (uintptr_t)mr.p + 8192, mr.lkey, 8192,
		  0x92);
	rx(&r);
	check_mr("payload over any MTU");
	eh_run(&h, 4);
	T_EQ(eh_state(&rc2), IBV_QPS_ERR);
	T_EQ(eh_state(&rc4), IBV_QPS_ERR);
}

static void forged(void)
{
	static struct raw r;
	struct srd_pkt p;
	struct srd_cqe e;
	uint32_t stale_key = stale.lkey;

	/* rc: a WRITE with a forged rkey. */
	write_pkt(&r, rc.qpn, psn, (uintptr_t)mr.p, mr.lkey ^ 0x100, 64, 0xa1);
	rx(&r);
	check_mr("forged rkey");
	/* rc5: a READ with the rkey of a deregistered MR. */
	T_EQ(eh_dereg(&h, &stale), 0);
	srd_pkt_init(&p, ROCE_RC_READ_REQUEST);
	p.qpn = rc5.qpn;
	p.psn = PSN0;
	p.reth.va = (uintptr_t)stale.p;
	p.reth.rkey = stale_key;
	p.reth.len = 64;
	build(&r, &p, 0);
	rx(&r);
	eh_run(&h, 4);
	T_EQ(eh_state(&rc), IBV_QPS_ERR);
	T_EQ(eh_state(&rc5), IBV_QPS_ERR);
	/* The responder's error is the application's to hear about. */
	while (eh_poll(&cq, &e))
		T_ASSERT(e.status != IBV_WC_SUCCESS);
}

int main(void)
{
	char out[] = "/tmp/net_hostile.XXXXXX";
	uint32_t psn_forged;
	int fd;

	fd = mkstemp(out);
	T_ASSERT(fd >= 0);
	close(fd);
	setup(out);

	good_write(psn, 0, 128, 0x10);
	psn++;
	check_mr("a good WRITE");

	garbage();
	malformed();
	sequence();
	ghost_acks();
	ud_cases();
	hostile3();
	oversized();
	psn_forged = psn;
	forged();

	eh_fini(&h);
	load_responses(out);
	unlink(out);
	printf("# %d responses captured\n", nresps);
	/* Each WRITE that landed was acknowledged. */
	T_ASSERT(acked(CLIENT_QPN, PSN0));
	T_ASSERT(acked(CLIENT_QPN, psn_forged - 1));
	/* One sequence error NAK, at the expected PSN. */
	T_EQ(naks(CLIENT_QPN, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, UINT32_MAX), 1);
	T_EQ(naks(CLIENT_QPN, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, UINT32_MAX),
	     0);
	/* Too long for the path MTU: invalid request. */
	T_EQ(naks(CLIENT_QPN2, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, PSN0), 1);
	T_EQ(naks(CLIENT_QPN4, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, PSN0), 1);
	/* Forged and stale rkeys: remote access error at their PSNs. */
	T_EQ(naks(CLIENT_QPN, ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS, psn_forged),
	     1);
	T_EQ(naks(CLIENT_QPN5, ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS, PSN0), 1);
	printf("PASS net_hostile\n");
	return T_EXIT_PASS;
}
