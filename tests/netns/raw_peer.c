/* SPDX-License-Identifier: MIT */
/*
 * raw_peer: one end of raw packet QPs across hosts, on the host's first
 * RDMA device (tests/netns/raw.sh runs it):
 *
 *   raw_peer recv PORT HOSTS STOPFILE   flow rules, "ready", then the
 *                                       frames until STOPFILE appears
 *   raw_peer send PORT HOSTS [STOPFILE] send the frames, "sent"; with
 *                                       STOPFILE sniff on until it appears
 *
 * HOSTS is "SRC_MAC,DST_MAC,SRC4,DST4,SRC6,DST6": the sender's and the
 * receiver's interface addresses.  Both ends build the same frames: UDP
 * over IPv4 and IPv6, one VLAN-tagged, to ports around PORT.  The
 * receiver's rules:
 *   q4  ETH (its MAC, IPv4) + IPV4 (its address) + UDP PORT
 *   qv  ETH (VLAN 100, IPv4) + UDP PORT+5
 *   q6  IPV6 (its address) + UDP PORT+1
 *   a SNIFFER
 * Each of q4, qv and q6 must get exactly its frames, each once and byte
 * for byte; no rule the others (another port, another VLAN, a tag
 * missing, the other IP version).  The sniffer must see every frame, and
 * RoCE v2 packets (UDP 4791) both ways: the script runs an RC pair on the
 * same devices meanwhile.  Exit status: 0 pass, 1 fail.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_util.h"

#define SLOT 2048
#define NRX 256
#define NSNIFF 1024
#define ROCE_PORT 4791

enum target {
	T_NONE,
	T_Q4,
	T_QV,
	T_Q6,
	T_NQ
};

struct fdesc {
	uint16_t dport_off;
	uint16_t vid; /* 0: untagged */
	bool v6;
	uint16_t paylen;
	enum target to;
};

static const struct fdesc frames[] = {
	{ 0, 0, false, 100, T_Q4 },	{ 0, 0, false, 333, T_Q4 },
	{ 9, 0, false, 100, T_NONE },	{ 5, 100, false, 200, T_QV },
	{ 5, 200, false, 200, T_NONE }, { 5, 0, false, 200, T_NONE },
	{ 1, 0, true, 120, T_Q6 },	{ 1, 0, true, 1000, T_Q6 },
	{ 9, 0, true, 120, T_NONE },	{ 1, 0, false, 120, T_NONE },
	{ 0, 0, false, 1400, T_Q4 },	{ 5, 100, false, 1300, T_QV },
	{ 0, 0, false, 64, T_Q4 },
};
#define NF (sizeof(frames) / sizeof(frames[0]))

struct hosts {
	uint8_t smac[6], dmac[6];
	uint32_t src4, dst4; /* network order */
	uint8_t src6[16], dst6[16];
};

static uint16_t port;
static struct hosts h;

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Frame i into buf; its length. */
static size_t build(uint8_t *buf, unsigned int i)
{
	const struct fdesc *f = &frames[i];
	uint8_t *p = buf + 12, *l3, *udp, pseudo[40];
	uint16_t ulen = (uint16_t)(8 + f->paylen);
	uint32_t sum;
	uint16_t c;

	memcpy(buf, h.dmac, 6);
	memcpy(buf + 6, h.smac, 6);
	if (f->vid) {
		put16(p, 0x8100);
		put16(p + 2, f->vid);
		p += 4;
	}
	put16(p, f->v6 ? 0x86dd : 0x0800);
	l3 = p + 2;
	if (f->v6) {
		memset(l3, 0, 40);
		l3[0] = 0x60;
		put16(l3 + 4, ulen);
		l3[6] = 17;
		l3[7] = 64;
		memcpy(l3 + 8, h.src6, 16);
		memcpy(l3 + 24, h.dst6, 16);
		udp = l3 + 40;
		memcpy(pseudo, l3 + 8, 32);
		sum = csum_add(0, pseudo, 32);
	} else {
		memset(l3, 0, 20);
		l3[0] = 0x45;
		put16(l3 + 2, (uint16_t)(20 + ulen));
		put16(l3 + 4, (uint16_t)(0x4000 + i));
		l3[6] = 0x40; /* DF */
		l3[8] = 64;
		l3[9] = 17;
		memcpy(l3 + 12, &h.src4, 4);
		memcpy(l3 + 16, &h.dst4, 4);
		put16(l3 + 10, csum_fold(csum_add(0, l3, 20)));
		udp = l3 + 20;
		sum = csum_add(0, l3 + 12, 8);
	}
	put16(udp, 41000);
	put16(udp + 2, (uint16_t)(port + f->dport_off));
	put16(udp + 4, ulen);
	put16(udp + 6, 0);
	t_fill(udp + 8, f->paylen, 0x7a00 + i);
	sum += 17 + ulen;
	c = csum_fold(csum_add(sum, udp, ulen));
	put16(udp + 6, c ? c : 0xffff);
	return (size_t)(udp + ulen - buf);
}

static void parse_hosts(const char *s)
{
	char buf[512], *f[6], *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t && n < 6;
	     t = strtok_r(NULL, ",", &save))
		f[n++] = t;
	if (n != 6)
		T_FAIL("HOSTS: SRC_MAC,DST_MAC,SRC4,DST4,SRC6,DST6: %s", s);
	for (int k = 0; k < 2; k++) {
		unsigned int m[6];
		uint8_t *mac = k ? h.dmac : h.smac;

		if (sscanf(f[k], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
			   &m[3], &m[4], &m[5]) != 6)
			T_FAIL("not a MAC: %s", f[k]);
		for (int j = 0; j < 6; j++)
			mac[j] = (uint8_t)m[j];
	}
	if (inet_pton(AF_INET, f[2], &h.src4) != 1 ||
	    inet_pton(AF_INET, f[3], &h.dst4) != 1 ||
	    inet_pton(AF_INET6, f[4], h.src6) != 1 ||
	    inet_pton(AF_INET6, f[5], h.dst6) != 1)
		T_FAIL("bad addresses in %s", s);
}

static struct ibv_qp *raw_qp(struct t_dev *d, struct ibv_cq *cq, uint32_t nrecv)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_RAW_PACKET, cq, cq);
	ia.cap.max_recv_wr = nrecv;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(d->pd, &ia);
	if (!qp)
		T_FAIL("raw packet QP: %s", t_errname(errno));
	t_raw_qp_ready(qp);
	return qp;
}

/* A rule and its specs, back to back as verbs.h lays them out. */
struct rule {
	struct ibv_flow_attr attr;
	uint8_t specs[256];
	size_t used;
};

static void *spec(struct rule *r, enum ibv_flow_spec_type type, uint16_t size)
{
	struct ibv_flow_spec_eth *s = (void *)(r->specs + r->used);

	s->type = type;
	s->size = size;
	r->used += size;
	r->attr.num_of_specs++;
	r->attr.size = (uint16_t)(sizeof(r->attr) + r->used);
	return s;
}

static void rule_init(struct rule *r, enum ibv_flow_attr_type type)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = type;
	r->attr.size = sizeof(r->attr);
	r->attr.port = T_PORT;
}

static struct ibv_flow *flow(struct ibv_qp *qp, struct rule *r)
{
	struct ibv_flow *f = ibv_create_flow(qp, &r->attr);

	if (!f)
		T_FAIL("ibv_create_flow: %s", t_errname(errno));
	return f;
}

static void udp_spec(struct rule *r, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp *u =
		spec(r, IBV_FLOW_SPEC_UDP, sizeof(*u));

	u->val.dst_port = htons(dport);
	u->mask.dst_port = 0xffff;
}

static struct ibv_flow *rule_q4(struct ibv_qp *qp)
{
	struct ibv_flow_spec_eth *e;
	struct ibv_flow_spec_ipv4 *ip;
	struct rule r;

	rule_init(&r, IBV_FLOW_ATTR_NORMAL);
	e = spec(&r, IBV_FLOW_SPEC_ETH, sizeof(*e));
	memcpy(e->val.dst_mac, h.dmac, 6);
	memset(e->mask.dst_mac, 0xff, 6);
	e->val.ether_type = htons(0x0800);
	e->mask.ether_type = 0xffff;
	ip = spec(&r, IBV_FLOW_SPEC_IPV4, sizeof(*ip));
	ip->val.dst_ip = h.dst4;
	ip->mask.dst_ip = 0xffffffffu;
	udp_spec(&r, port);
	return flow(qp, &r);
}

static struct ibv_flow *rule_qv(struct ibv_qp *qp)
{
	struct ibv_flow_spec_eth *e;
	struct rule r;

	rule_init(&r, IBV_FLOW_ATTR_NORMAL);
	e = spec(&r, IBV_FLOW_SPEC_ETH, sizeof(*e));
	e->val.vlan_tag = htons(100);
	e->mask.vlan_tag = htons(0x0fff);
	e->val.ether_type = htons(0x0800);
	e->mask.ether_type = 0xffff;
	udp_spec(&r, (uint16_t)(port + 5));
	return flow(qp, &r);
}

static struct ibv_flow *rule_q6(struct ibv_qp *qp)
{
	struct ibv_flow_spec_ipv6 *ip;
	struct rule r;

	rule_init(&r, IBV_FLOW_ATTR_NORMAL);
	ip = spec(&r, IBV_FLOW_SPEC_IPV6, sizeof(*ip));
	memcpy(ip->val.dst_ip, h.dst6, 16);
	memset(ip->mask.dst_ip, 0xff, 16);
	udp_spec(&r, (uint16_t)(port + 1));
	return flow(qp, &r);
}

static struct ibv_flow *rule_sniffer(struct ibv_qp *qp)
{
	struct rule r;

	rule_init(&r, IBV_FLOW_ATTR_SNIFFER);
	return flow(qp, &r);
}

/* Is the frame a RoCE v2 packet (UDP to 4791)? */
static bool is_roce(const uint8_t *p, uint32_t len)
{
	uint32_t off = 12;
	uint16_t et;

	if (len < 14)
		return false;
	et = (uint16_t)(p[12] << 8 | p[13]);
	if (et == 0x8100 && len >= 18) {
		et = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	off += 2;
	if (et == 0x0800 && len >= off + 28 && p[off + 9] == 17) {
		off += (uint32_t)(p[off] & 0xf) * 4;
	} else if (et == 0x86dd && len >= off + 48 && p[off + 6] == 17) {
		off += 40;
	} else {
		return false;
	}
	return len >= off + 4 &&
	       (uint16_t)(p[off + 2] << 8 | p[off + 3]) == ROCE_PORT;
}

struct rxq {
	const char *name;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_buf buf;
	uint32_t n;
	unsigned int got[NF];
	unsigned int other, roce;
};

static void rxq_init(struct t_dev *d, struct rxq *q, const char *name,
		     uint32_t n)
{
	memset(q, 0, sizeof(*q));
	q->name = name;
	q->n = n;
	q->cq = t_cq_create(d, (int)n + 16, NULL);
	q->qp = raw_qp(d, q->cq, n);
	t_buf_alloc(d, &q->buf, (size_t)n * SLOT, IBV_ACCESS_LOCAL_WRITE);
	for (uint32_t i = 0; i < n; i++)
		t_post_recv(q->qp, i, q->buf.mr, q->buf.p + (size_t)i * SLOT,
			    SLOT);
}

static void rxq_free(struct rxq *q)
{
	T_OK(ibv_destroy_qp(q->qp));
	T_OK(ibv_destroy_cq(q->cq));
	t_buf_free(&q->buf);
}

/* Which of our frames this is, or -1. */
static int which(const uint8_t *p, uint32_t len)
{
	uint8_t f[SLOT];

	for (unsigned int i = 0; i < NF; i++)
		if (build(f, i) == len && !memcmp(f, p, len))
			return (int)i;
	return -1;
}

/* Everything q's CQ has now; false if there was nothing. */
static bool rxq_poll(struct rxq *q)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(q->cq, 16, wc);

	if (n < 0)
		T_FAIL("%s: ibv_poll_cq %d", q->name, n);
	for (int k = 0; k < n; k++) {
		uint8_t *p = q->buf.p + (size_t)wc[k].wr_id * SLOT;
		int i;

		if (wc[k].status != IBV_WC_SUCCESS)
			T_FAIL("%s: completion %s", q->name,
			       ibv_wc_status_str(wc[k].status));
		T_EQ(wc[k].opcode, IBV_WC_RECV);
		i = which(p, wc[k].byte_len);
		if (i >= 0)
			q->got[i]++;
		else if (is_roce(p, wc[k].byte_len))
			q->roce++;
		else
			q->other++;
		t_post_recv(q->qp, wc[k].wr_id, q->buf.mr, p, SLOT);
	}
	return n > 0;
}

static bool stopped(const char *stop)
{
	return stop && !access(stop, F_OK);
}

/* Poll every queue until stop exists (then 300 ms more). */
static void run_until(struct rxq *qs, int nq, const char *stop)
{
	uint64_t end = 0;

	for (;;) {
		bool any = false;

		for (int i = 0; i < nq; i++)
			any |= rxq_poll(&qs[i]);
		if (!end && stopped(stop))
			end = t_now_ms() + 300;
		if (end && t_now_ms() > end)
			return;
		if (!any)
			usleep(1000);
	}
}

static void do_recv(const char *stop)
{
	struct rxq q[T_NQ];
	struct ibv_flow *fl[T_NQ];
	const char *names[T_NQ] = { "sniffer", "q4", "qv", "q6" };
	int bad = 0;
	struct t_dev d;

	t_dev_open(&d);
	for (int i = 0; i < T_NQ; i++)
		rxq_init(&d, &q[i], names[i], i == T_NONE ? NSNIFF : NRX);
	fl[T_Q4] = rule_q4(q[T_Q4].qp);
	fl[T_QV] = rule_qv(q[T_QV].qp);
	fl[T_Q6] = rule_q6(q[T_Q6].qp);
	fl[T_NONE] = rule_sniffer(q[T_NONE].qp);
	printf("ready\n");
	run_until(q, T_NQ, stop);

	for (int t = T_Q4; t < T_NQ; t++) {
		unsigned int want = 0, ok = 0;

		for (unsigned int i = 0; i < NF; i++) {
			unsigned int exp = (int)frames[i].to == t;

			want += exp;
			if (q[t].got[i] == exp) {
				ok += exp;
				continue;
			}
			printf("%s: frame %u (port +%u, vlan %u, %s) %u times, "
			       "want %u\n",
			       q[t].name, i, frames[i].dport_off, frames[i].vid,
			       frames[i].v6 ? "IPv6" : "IPv4", q[t].got[i],
			       exp);
			bad++;
		}
		if (q[t].other || q[t].roce) {
			printf("%s: %u frames not ours, %u RoCE\n", q[t].name,
			       q[t].other, q[t].roce);
			bad++;
		}
		printf("%s %u/%u frames intact\n", q[t].name, ok, want);
	}
	{
		unsigned int seen = 0;

		for (unsigned int i = 0; i < NF; i++) {
			seen += q[T_NONE].got[i] == 1;
			if (q[T_NONE].got[i] != 1) {
				printf("sniffer: frame %u %u times\n", i,
				       q[T_NONE].got[i]);
				bad++;
			}
		}
		printf("sniffer %u/%zu frames, %u RoCE, %u others\n", seen, NF,
		       q[T_NONE].roce, q[T_NONE].other);
		if (!q[T_NONE].roce) {
			printf("sniffer: no RoCE packet seen\n");
			bad++;
		}
	}
	for (int i = 0; i < T_NQ; i++) {
		T_OK(ibv_destroy_flow(fl[i]));
		rxq_free(&q[i]);
	}
	t_dev_close(&d);
	if (bad)
		T_FAIL("%d mismatches", bad);
}

static void do_send(const char *stop)
{
	struct ibv_flow *fl;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct rxq sn;
	struct t_buf b;
	struct t_dev d;

	t_dev_open(&d);
	cq = t_cq_create(&d, 64, NULL);
	qp = raw_qp(&d, cq, 1);
	t_buf_alloc(&d, &b, SLOT, IBV_ACCESS_LOCAL_WRITE);
	rxq_init(&d, &sn, "sniffer", NSNIFF);
	fl = rule_sniffer(sn.qp);
	for (unsigned int i = 0; i < NF; i++) {
		size_t n = build(b.p, i);

		t_post_send(qp, i, IBV_WR_SEND, b.mr, b.p, (uint32_t)n,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	{
		unsigned int none = 0;

		for (unsigned int i = 0; i < NF; i++)
			none += frames[i].to == T_NONE;
		/* raw.sh checks the counters against these. */
		printf("sent %zu, %u for no rule\n", NF, none);
	}
	if (stop) {
		unsigned int ours = 0;

		run_until(&sn, 1, stop);
		for (unsigned int i = 0; i < NF; i++)
			ours += sn.got[i];
		printf("sniffer: %u RoCE, %u of ours going out, %u others\n",
		       sn.roce, ours, sn.other);
		if (!sn.roce)
			T_FAIL("the sender's sniffer saw no RoCE packet");
	}
	T_OK(ibv_destroy_flow(fl));
	rxq_free(&sn);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
}

int main(int argc, char **argv)
{
	t_init("raw_peer");
	if (argc < 4 || argc > 5)
		T_FAIL("usage: raw_peer recv|send PORT HOSTS [STOPFILE]");
	port = (uint16_t)strtoul(argv[2], NULL, 0);
	parse_hosts(argv[3]);
	if (!strcmp(argv[1], "recv") && argc == 5)
		do_recv(argv[4]);
	else if (!strcmp(argv[1], "send"))
		do_send(argc == 5 ? argv[4] : NULL);
	else
		T_FAIL("usage: raw_peer recv|send PORT HOSTS [STOPFILE]");
	t_pass();
}
