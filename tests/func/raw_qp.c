/* SPDX-License-Identifier: MIT */
/*
 * Raw packet QPs on the loopback device (root: the daemon needs
 * CAP_NET_RAW for its packet socket, else skipped).  Frames one raw QP
 * sends on lo come back in and are steered by the flow rules of the
 * others: a UDP-port rule gets its frames intact (gathered from two
 * SGEs, or inline), a rule for another port nothing; a receive buffer too
 * small is IBV_WC_LOC_LEN_ERR; the better priority wins unless a rule
 * does not trap; RoCE v2 frames go to the RoCE path and not to a rule
 * naming port 4791, but a sniffer sees them.  Errors: too long or short
 * a frame (LOC_LEN_ERR), an opcode other than SEND, bad flow attributes
 * and specs (EINVAL, EOPNOTSUPP as the kernel), flows on RC and UD QPs,
 * destroying a QP with flows (EBUSY), a flow twice (EINVAL).
 *
 * Every daemon of the machine that has a raw QP on lo sees these frames,
 * so the ports are drawn at random.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_util.h"

#define PAY 300
/* Room for any frame on lo: the sniffer also gets other tests' traffic,
 * up to GSO's 64 KiB, and a frame longer than its buffer would end it
 * (LOC_LEN_ERR, the QP in error). */
#define RX_LEN (65536 + 512)
#define NQ 9

enum {
	Q_TX,
	Q_B,
	Q_C,
	Q_D,
	Q_PRIO1,
	Q_PRIO0,
	Q_NOTRAP,
	Q_ROCE,
	Q_SNIFF
};

static struct t_dev d;
static struct ibv_cq *cq[NQ];
static struct ibv_qp *qp[NQ];
static struct t_buf tx, rx[NQ];
static uint16_t port;

static size_t frame(uint8_t *buf, uint16_t dport, uint32_t seed)
{
	struct t_udp4 u = { .saddr = htonl(0x7f000001),
			    .daddr = htonl(0x7f000001),
			    .sport = 40000,
			    .dport = dport };
	uint8_t pay[PAY];

	t_fill(pay, sizeof(pay), seed);
	return t_udp4_frame(buf, &u, pay, sizeof(pay));
}

/* Send the frame in tx.p (len bytes) from the TX QP, in two SGEs. */
static void send2(size_t len, uint64_t wr_id)
{
	struct ibv_sge sg[2] = {
		{ (uintptr_t)tx.p, 20, tx.mr->lkey },
		{ (uintptr_t)tx.p + 20, (uint32_t)len - 20, tx.mr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .sg_list = sg,
				  .num_sge = 2,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	T_RET(ibv_post_send(qp[Q_TX], &wr, &bad), 0);
	T_EXPECT_WC(cq[Q_TX], &wc, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND);
}

static void post_rx(int q, uint64_t wr_id, uint32_t len)
{
	t_post_recv(qp[q], wr_id, rx[q].mr, rx[q].p, len);
}

/* The frame must arrive at q whole; other frames (a sniffer's) are
 * skipped, up to a few hundred. */
static void expect_frame(int q, const uint8_t *f, size_t len, bool others)
{
	for (int i = 0; i < 512; i++) {
		struct ibv_wc wc;

		T_EXPECT_WC(cq[q], &wc, 100 + (uint64_t)q, IBV_WC_SUCCESS,
			    IBV_WC_RECV);
		post_rx(q, 100 + (uint64_t)q, RX_LEN);
		if (wc.byte_len == len && !memcmp(rx[q].p, f, len)) {
			T_ASSERT(!(wc.wc_flags & IBV_WC_GRH));
			return;
		}
		if (!others)
			T_FAIL("qp %d: a frame of %u bytes, not ours", q,
			       wc.byte_len);
	}
	T_FAIL("qp %d: our frame never came", q);
}

static void caps(void)
{
	struct ibv_device_attr_ex ax;

	T_RET(ibv_query_device_ex(d.ctx, NULL, &ax), 0);
	T_ASSERT(ax.orig_attr.device_cap_flags &
		 IBV_DEVICE_MANAGED_FLOW_STEERING);
	/* No checksum offload, no tag stripping, no FCS: none claimed. */
	T_EQ(ax.raw_packet_caps, 0);
	T_ASSERT(!(ax.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM));
}

/* A rule and its specs, back to back as verbs.h lays them out. */
struct rule {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
};

static size_t rule_used;

static void rule_init(struct rule *r, uint8_t nspecs)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = IBV_FLOW_ATTR_NORMAL;
	r->attr.size = sizeof(*r);
	r->attr.num_of_specs = nspecs;
	r->attr.port = T_PORT;
	rule_used = 0;
}

/* The next spec: its header set, the rest zero. */
static void *add_spec(struct rule *r, uint32_t type, uint16_t size)
{
	struct ibv_flow_spec_eth *h = (void *)(r->specs + rule_used);

	h->type = (enum ibv_flow_spec_type)type;
	h->size = size;
	rule_used += size;
	return h;
}

static void add_eth(struct rule *r)
{
	add_spec(r, IBV_FLOW_SPEC_ETH, sizeof(struct ibv_flow_spec_eth));
}

static void flow_fails(struct ibv_qp *q, struct rule *r, int err,
		       const char *what)
{
	struct ibv_flow *f;

	errno = 0;
	f = ibv_create_flow(q, &r->attr);
	if (f)
		T_FAIL("%s: flow created", what);
	if (errno != err)
		T_FAIL("%s: errno %d (%s), expected %d (%s)", what, errno,
		       t_errname(errno), err, t_errname(err));
}

static void bad_rules(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq *c = cq[Q_B];
	struct ibv_flow_spec_ipv4_ext *x;
	struct ibv_flow_spec_ipv6 *ip6;
	struct ibv_qp *rc, *ud;
	struct rule r;

	rule_init(&r, 1);
	add_eth(&r);
	/* Flows on QPs that cannot take them: uverbs wants a UD or raw QP,
	 * and here only raw QPs steer (rxe has no steering at all). */
	t_qp_init_attr(&ia, IBV_QPT_RC, c, c);
	rc = t_qp_create(&d, &ia);
	flow_fails(rc, &r, EINVAL, "flow on RC");
	t_qp_init_attr(&ia, IBV_QPT_UD, c, c);
	ud = t_qp_create(&d, &ia);
	flow_fails(ud, &r, EOPNOTSUPP, "flow on UD");
	T_RET(ibv_destroy_qp(rc), 0);
	T_RET(ibv_destroy_qp(ud), 0);

	r.attr.comp_mask = 1;
	flow_fails(qp[Q_B], &r, EINVAL, "comp_mask");
	r.attr.comp_mask = 0;
	r.attr.flags = 1 << 5;
	flow_fails(qp[Q_B], &r, EINVAL, "unknown flag");
	r.attr.flags = 0;
	r.attr.port = 2;
	flow_fails(qp[Q_B], &r, EINVAL, "port 2");
	r.attr.port = T_PORT;
	r.attr.type = IBV_FLOW_ATTR_SNIFFER;
	flow_fails(qp[Q_B], &r, EINVAL, "specs on a sniffer");
	r.attr.type = 7;
	flow_fails(qp[Q_B], &r, EINVAL, "attr type 7");
	r.attr.type = IBV_FLOW_ATTR_NORMAL;
	r.attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	flow_fails(qp[Q_B], &r, EOPNOTSUPP, "egress");
	rule_init(&r, 0);
	r.attr.type = IBV_FLOW_ATTR_ALL_DEFAULT;
	r.attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	flow_fails(qp[Q_B], &r, EINVAL, "DONT_TRAP on ALL_DEFAULT");

	rule_init(&r, 1);
	add_spec(&r, IBV_FLOW_SPEC_ETH, sizeof(struct ibv_flow_spec_eth) - 4);
	flow_fails(qp[Q_B], &r, EINVAL, "short ETH spec");
	rule_init(&r, 1);
	add_spec(&r, 0x77, sizeof(struct ibv_flow_spec_eth));
	flow_fails(qp[Q_B], &r, EINVAL, "unknown spec type");
	rule_init(&r, 1);
	add_spec(&r, IBV_FLOW_SPEC_ESP, sizeof(struct ibv_flow_spec_esp));
	flow_fails(qp[Q_B], &r, EOPNOTSUPP, "ESP spec");
	rule_init(&r, 1);
	add_spec(&r, IBV_FLOW_SPEC_ETH | IBV_FLOW_SPEC_INNER,
		 sizeof(struct ibv_flow_spec_eth));
	flow_fails(qp[Q_B], &r, EOPNOTSUPP, "inner ETH");
	rule_init(&r, 1);
	ip6 = add_spec(&r, IBV_FLOW_SPEC_IPV6, sizeof(*ip6));
	ip6->mask.flow_label = htonl(0x100000);
	flow_fails(qp[Q_B], &r, EINVAL, "21-bit flow label");
	rule_init(&r, 2);
	add_eth(&r);
	add_eth(&r);
	flow_fails(qp[Q_B], &r, EINVAL, "two ETH specs");
	/* IPv4 naming TCP, then a UDP spec: nothing could match. */
	rule_init(&r, 2);
	x = add_spec(&r, IBV_FLOW_SPEC_IPV4_EXT, sizeof(*x));
	x->val.proto = 6;
	x->mask.proto = 0xff;
	add_spec(&r, IBV_FLOW_SPEC_UDP, sizeof(struct ibv_flow_spec_tcp_udp));
	flow_fails(qp[Q_B], &r, EINVAL, "TCP in IPv4, then UDP");
	/* Fewer specs than num_of_specs: the walk meets a zero header. */
	rule_init(&r, 2);
	add_eth(&r);
	flow_fails(qp[Q_B], &r, EINVAL, "a spec missing");
	rule_init(&r, 9);
	for (int i = 0; i < 9; i++)
		add_spec(&r, IBV_FLOW_SPEC_UDP,
			 sizeof(struct ibv_flow_spec_tcp_udp));
	flow_fails(qp[Q_B], &r, EINVAL, "9 specs");
}

/* Destroying a QP with a flow is EBUSY, a flow twice EINVAL. */
static void lifetimes(void)
{
	struct ibv_qp *q = t_raw_qp_create(&d, cq[Q_B]);
	struct ibv_flow *f, copy;

	T_ASSERT(q);
	f = t_flow_udp4(q, 0, port + 9, 0);
	T_ASSERT(f);
	T_RET(ibv_destroy_qp(q), EBUSY);
	copy = *f;
	T_RET(ibv_destroy_flow(f), 0);
	T_RET(ibv_destroy_flow(&copy), EINVAL);
	T_RET(ibv_destroy_qp(q), 0);
}

/* Send-side errors, each on a QP of its own (an error stops it). */
static void send_errors(void)
{
	struct ibv_qp *q;
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	struct t_buf big;

	q = t_raw_qp_create(&d, cq[Q_TX]);
	T_ASSERT(q);
	/* Only a port goes with INIT. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = T_PORT;
	a.qkey = 1;
	T_RET(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY),
	      EINVAL);
	t_raw_qp_ready(q);
	T_EQ(t_post_send_ret(q, 1, IBV_WR_SEND_WITH_IMM, tx.mr, tx.p, 64,
			     IBV_SEND_SIGNALED, 0, 0),
	     EINVAL);
	T_EQ(t_post_send_ret(q, 1, IBV_WR_RDMA_WRITE, tx.mr, tx.p, 64,
			     IBV_SEND_SIGNALED, 0, 0),
	     EINVAL);
	/* Shorter than an Ethernet header. */
	t_post_send(q, 2, IBV_WR_SEND, tx.mr, tx.p, 10, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(cq[Q_TX], &wc, 2, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(q), IBV_QPS_ERR);
	T_RET(ibv_destroy_qp(q), 0);

	/* Longer than any interface's MTU and header. */
	q = t_raw_qp_create(&d, cq[Q_TX]);
	T_ASSERT(q);
	t_raw_qp_ready(q);
	t_buf_alloc(&d, &big, 70000, IBV_ACCESS_LOCAL_WRITE);
	frame(big.p, port + 8, 1);
	t_post_send(q, 3, IBV_WR_SEND, big.mr, big.p, 70000, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(cq[Q_TX], &wc, 3, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);
	/* A bad lkey. */
	T_RET(ibv_destroy_qp(q), 0);
	q = t_raw_qp_create(&d, cq[Q_TX]);
	T_ASSERT(q);
	t_raw_qp_ready(q);
	{
		struct ibv_sge sg = { (uintptr_t)big.p, 64, big.mr->lkey ^ 1 };
		struct ibv_send_wr wr = { .wr_id = 4,
					  .sg_list = &sg,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		T_RET(ibv_post_send(q, &wr, &bad), 0);
		T_EXPECT_WC(cq[Q_TX], &wc, 4, IBV_WC_LOC_PROT_ERR,
			    T_ANY_OPCODE);
	}
	T_RET(ibv_destroy_qp(q), 0);
	t_buf_free(&big);
}

static struct ibv_flow *sniffer(struct ibv_qp *q)
{
	struct ibv_flow_attr a = { .type = IBV_FLOW_ATTR_SNIFFER,
				   .size = sizeof(a),
				   .port = T_PORT };

	return ibv_create_flow(q, &a);
}

int main(void)
{
	struct ibv_flow *fl[NQ] = { 0 }, *notrap_lo;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint8_t f1[1024], f2[1024];
	size_t n1, n2;

	t_init("raw_qp");
	if (geteuid())
		t_skip("not root: the daemon cannot open a packet socket");
	srand((unsigned int)getpid() ^ (unsigned int)t_now_ms());
	port = (uint16_t)(20000 + rand() % 30000);
	t_dev_open(&d);
	caps();
	t_buf_alloc(&d, &tx, 4096, IBV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < NQ; i++) {
		cq[i] = t_cq_create(&d, 1024, NULL);
		qp[i] = t_raw_qp_create(&d, cq[i]);
		if (!qp[i])
			T_FAIL("create raw QP: %s", t_errname(errno));
		t_raw_qp_ready(qp[i]);
		t_buf_alloc(&d, &rx[i], RX_LEN, IBV_ACCESS_LOCAL_WRITE);
	}
	bad_rules();
	lifetimes();
	send_errors();

	fl[Q_B] = t_flow_udp4(qp[Q_B], htonl(0x7f000001), port, 0);
	fl[Q_C] = t_flow_udp4(qp[Q_C], 0, port + 1, 0);
	fl[Q_D] = t_flow_udp4(qp[Q_D], 0, port + 2, 0);
	fl[Q_PRIO1] = t_flow_udp4(qp[Q_PRIO1], 0, port + 3, 1);
	fl[Q_PRIO0] = t_flow_udp4(qp[Q_PRIO0], 0, port + 3, 0);
	fl[Q_ROCE] = t_flow_udp4(qp[Q_ROCE], 0, 4791, 0);
	fl[Q_SNIFF] = sniffer(qp[Q_SNIFF]);
	for (int i = Q_B; i < NQ; i++)
		if (!fl[i] && i != Q_NOTRAP)
			T_FAIL("flow of qp %d: %s", i, t_errname(errno));
	for (int i = Q_B; i < NQ; i++)
		for (int k = 0; k < (i == Q_SNIFF ? 60 : 4); k++)
			post_rx(i, 100 + (uint64_t)i, i == Q_D ? 20 : RX_LEN);

	/* B's port: two SGEs, then inline; C's rule is another port. */
	n1 = frame(f1, port, 0xf1);
	memcpy(tx.p, f1, n1);
	send2(n1, 1);
	expect_frame(Q_B, f1, n1, false);
	expect_frame(Q_SNIFF, f1, n1, true);
	n2 = frame(f2, port, 0xf2);
	sg = (struct ibv_sge){ (uintptr_t)f2, (uint32_t)n2, 0 };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	T_RET(ibv_post_send(qp[Q_TX], &wr, &bad), 0);
	memset(f2 + 14, 0, 20); /* the QP copied it at post */
	n2 = frame(f2, port, 0xf2);
	T_EXPECT_WC(cq[Q_TX], &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_frame(Q_B, f2, n2, false);
	T_EXPECT_NO_WC(cq[Q_C], 100);

	/* D's buffer holds 20 bytes. */
	n1 = frame(tx.p, port + 2, 0xd);
	send2(n1, 3);
	T_EXPECT_WC(cq[Q_D], &wc, 100 + Q_D, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(qp[Q_D]), IBV_QPS_ERR);

	/* Priority 0 beats 1; a rule that does not trap shares. */
	n1 = frame(tx.p, port + 3, 0x30);
	memcpy(f1, tx.p, n1);
	send2(n1, 4);
	expect_frame(Q_PRIO0, f1, n1, false);
	T_EXPECT_NO_WC(cq[Q_PRIO1], 100);
	{
		struct ibv_flow_attr *a;
		struct {
			struct ibv_flow_attr attr;
			struct ibv_flow_spec_tcp_udp udp;
		} r;

		memset(&r, 0, sizeof(r));
		a = &r.attr;
		a->type = IBV_FLOW_ATTR_NORMAL;
		a->size = sizeof(r);
		a->num_of_specs = 1;
		a->port = T_PORT;
		a->flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
		r.udp.type = IBV_FLOW_SPEC_UDP;
		r.udp.size = sizeof(r.udp);
		r.udp.val.dst_port = htons(port + 3);
		r.udp.mask.dst_port = 0xffff;
		notrap_lo = ibv_create_flow(qp[Q_NOTRAP], a);
		T_ASSERT(notrap_lo);
		/* Better than both: it takes a copy and lets it go on. */
		n1 = frame(tx.p, port + 3, 0x31);
		memcpy(f1, tx.p, n1);
		send2(n1, 5);
		expect_frame(Q_NOTRAP, f1, n1, false);
		expect_frame(Q_PRIO0, f1, n1, false);
		T_EXPECT_NO_WC(cq[Q_PRIO1], 100);
		T_RET(ibv_destroy_flow(notrap_lo), 0);
	}

	/* RoCE v2 is the RoCE path's: not to a rule, but to a sniffer. */
	n1 = frame(tx.p, 4791, 0x4791);
	memcpy(f1, tx.p, n1);
	send2(n1, 6);
	expect_frame(Q_SNIFF, f1, n1, true);
	{
		/* Anything the ROCE rule got must be some other frame. */
		int got = 0;

		while (t_poll(cq[Q_ROCE], &wc, 50) == 1)
			if (wc.status == IBV_WC_SUCCESS &&
			    !memcmp(rx[Q_ROCE].p, f1, n1))
				got++;
		T_EQ(got, 0);
	}

	for (int i = Q_B; i < NQ; i++)
		if (fl[i] && i != Q_NOTRAP)
			T_RET(ibv_destroy_flow(fl[i]), 0);
	for (int i = 0; i < NQ; i++) {
		T_RET(ibv_destroy_qp(qp[i]), 0);
		T_RET(ibv_destroy_cq(cq[i]), 0);
		t_buf_free(&rx[i]);
	}
	t_buf_free(&tx);
	t_dev_close(&d);
	t_pass();
}
