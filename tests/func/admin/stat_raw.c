/* SPDX-License-Identifier: MIT */
/*
 * `softrdma statistic` shows the raw packet side of a device (root: the
 * daemon needs CAP_NET_RAW for its packet socket, else skipped): frames
 * raw QPs sent (raw_sent_pkts), frames read (raw_rcvd_pkts), those no rule
 * took (raw_rcvd_unsteered), RoCE v2 frames left to the RoCE path
 * (raw_rcvd_roce), frames steered to a QP with no receive posted
 * (raw_out_of_buffer), a sniffer's copy not counting as steered; the
 * counts stay with the device when its last raw
 * QP is gone and start again from there.
 *
 * Every daemon with a raw QP on lo sees the frames of the others, so what
 * is read is checked as a lower bound; what this daemon sent, and what
 * its own rules (on a port drawn at random) steered, exactly.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_admin.h"

#define PAY 200
#define MATCHED 5
#define UNSTEERED 4
#define NO_WQE 3
#define ROCE 2

static struct t_dev d;
static struct ibv_cq *cq, *txcq, *sncq;
static struct ibv_qp *tx, *rx;
static struct t_buf txb, rxb;
static uint16_t port;

struct raw_cnt {
	unsigned long long sent, rcvd, unsteered, roce, oob, bad, drops;
};

static void read_counters(struct raw_cnt *c)
{
	static struct t_run r;
	char line[8192];

	t_cli(&r, "statistic", "show", "link", "softrdma0/1", NULL);
	T_EQ(r.status, 0);
	if (!t_line_with(r.out, "link softrdma0/1", line, sizeof(line)))
		T_FAIL("no softrdma0 in:\n%s", r.out);
	c->sent = T_FIELD(line, "raw_sent_pkts");
	c->rcvd = T_FIELD(line, "raw_rcvd_pkts");
	c->unsteered = T_FIELD(line, "raw_rcvd_unsteered");
	c->roce = T_FIELD(line, "raw_rcvd_roce");
	c->oob = T_FIELD(line, "raw_out_of_buffer");
	c->bad = T_FIELD(line, "raw_rcvd_bad");
	c->drops = T_FIELD(line, "raw_sent_drops");
}

static void send_frame(uint16_t dport, uint32_t seed)
{
	struct t_udp4 u = { .saddr = htonl(0x7f000001),
			    .daddr = htonl(0x7f000001),
			    .sport = 40001,
			    .dport = dport };
	uint8_t pay[PAY];
	struct ibv_wc wc;
	size_t n;

	t_fill(pay, sizeof(pay), seed);
	n = t_udp4_frame(txb.p, &u, pay, sizeof(pay));
	t_post_send(tx, seed, IBV_WR_SEND, txb.mr, txb.p, (uint32_t)n,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(txcq, &wc, seed, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* The counters reach at least what was sent, within a few seconds: the
 * daemon reads its socket in its own time. */
static void wait_counters(struct raw_cnt *c, const struct raw_cnt *want)
{
	uint64_t end = t_now_ms() + 5000;

	for (;;) {
		read_counters(c);
		if (c->rcvd >= want->rcvd && c->unsteered >= want->unsteered &&
		    c->roce >= want->roce && c->oob >= want->oob)
			return;
		if (t_now_ms() > end)
			T_FAIL("raw counters: rcvd %llu unsteered %llu roce "
			       "%llu out_of_buffer %llu, want at least %llu "
			       "%llu %llu %llu",
			       c->rcvd, c->unsteered, c->roce, c->oob,
			       want->rcvd, want->unsteered, want->roce,
			       want->oob);
		usleep(50000);
	}
}

int main(void)
{
	struct raw_cnt c0, c1, c2, want;
	struct ibv_flow *fl, *fl_nowqe;
	struct ibv_qp *nowqe;
	struct ibv_wc wc;
	uint32_t seed = 1;

	t_init("admin_stat_raw");
	t_cli_path();
	if (geteuid())
		t_skip("not root: the daemon cannot open a packet socket");
	srand((unsigned int)getpid() ^ (unsigned int)t_now_ms());
	port = (uint16_t)(20000 + rand() % 30000);
	t_dev_open(&d);

	/* Before any raw QP: every counter there, at 0. */
	read_counters(&c0);
	T_EQ(c0.sent + c0.rcvd + c0.unsteered + c0.roce + c0.oob + c0.bad +
		     c0.drops,
	     0);

	cq = t_cq_create(&d, 256, NULL);
	txcq = t_cq_create(&d, 256, NULL);
	tx = t_raw_qp_create(&d, txcq);
	rx = t_raw_qp_create(&d, cq);
	nowqe = t_raw_qp_create(&d, cq);
	if (!tx || !rx || !nowqe)
		T_FAIL("create raw QP: %s", t_errname(errno));
	t_raw_qp_ready(tx);
	t_raw_qp_ready(rx);
	t_raw_qp_ready(nowqe);
	t_buf_alloc(&d, &txb, 4096, IBV_ACCESS_LOCAL_WRITE);
	t_buf_alloc(&d, &rxb, 4096, IBV_ACCESS_LOCAL_WRITE);
	fl = t_flow_udp4(rx, 0, port, 0);
	fl_nowqe = t_flow_udp4(nowqe, 0, port + 1, 0);
	T_ASSERT(fl && fl_nowqe);
	for (int i = 0; i < MATCHED; i++)
		t_post_recv(rx, 500 + (uint64_t)i, rxb.mr, rxb.p, 2048);

	for (int i = 0; i < MATCHED; i++)
		send_frame(port, seed++);
	for (int i = 0; i < MATCHED; i++) {
		T_EXPECT_WC(cq, &wc, 500 + (uint64_t)i, IBV_WC_SUCCESS,
			    IBV_WC_RECV);
		T_EQ(wc.byte_len, 14 + 20 + 8 + PAY);
	}
	for (int i = 0; i < UNSTEERED; i++)
		send_frame(port + 2, seed++);
	for (int i = 0; i < NO_WQE; i++)
		send_frame(port + 1, seed++);
	for (int i = 0; i < ROCE; i++)
		send_frame(4791, seed++);

	memset(&want, 0, sizeof(want));
	want.rcvd = MATCHED + UNSTEERED + NO_WQE + ROCE;
	want.unsteered = UNSTEERED;
	want.roce = ROCE;
	want.oob = NO_WQE;
	wait_counters(&c1, &want);
	/* This daemon's sends and its own rules' drops: exact. */
	T_EQ(c1.sent, MATCHED + UNSTEERED + NO_WQE + ROCE);
	T_EQ(c1.oob, NO_WQE);
	T_EQ(c1.drops, 0);
	T_EXPECT_NO_WC(cq, 50);

	/* A sniffer's copy steers nothing: what no other rule takes is
	 * still unsteered. */
	{
		struct ibv_flow_attr a = { .type = IBV_FLOW_ATTR_SNIFFER,
					   .size = sizeof(a),
					   .port = T_PORT };
		struct ibv_qp *sq;
		struct ibv_flow *sf;

		sncq = t_cq_create(&d, 256, NULL);
		sq = t_raw_qp_create(&d, sncq);
		T_ASSERT(sq);
		t_raw_qp_ready(sq);
		for (int i = 0; i < 60; i++)
			t_post_recv(sq, 900, rxb.mr, rxb.p + 2048, 2048);
		sf = ibv_create_flow(sq, &a);
		T_ASSERT(sf);
		want = c1;
		want.unsteered += UNSTEERED;
		want.rcvd += UNSTEERED;
		for (int i = 0; i < UNSTEERED; i++)
			send_frame(port + 2, seed++);
		wait_counters(&c2, &want);
		T_RET(ibv_destroy_flow(sf), 0);
		T_RET(ibv_destroy_qp(sq), 0);
		T_RET(ibv_destroy_cq(sncq), 0);
		read_counters(&c1);
	}

	/* The last raw QP goes: the counts stay with the device. */
	T_RET(ibv_destroy_flow(fl), 0);
	T_RET(ibv_destroy_flow(fl_nowqe), 0);
	T_RET(ibv_destroy_qp(tx), 0);
	T_RET(ibv_destroy_qp(rx), 0);
	T_RET(ibv_destroy_qp(nowqe), 0);
	read_counters(&c2);
	T_EQ(c2.sent, c1.sent);
	T_EQ(c2.oob, c1.oob);
	T_GE(c2.rcvd, c1.rcvd);
	T_GE(c2.unsteered, c1.unsteered);
	T_GE(c2.roce, c1.roce);

	/* A new raw QP counts on from there. */
	tx = t_raw_qp_create(&d, txcq);
	T_ASSERT(tx);
	t_raw_qp_ready(tx);
	send_frame(port + 2, seed++);
	read_counters(&c1);
	T_EQ(c1.sent, c2.sent + 1);
	T_RET(ibv_destroy_qp(tx), 0);

	T_RET(ibv_destroy_cq(cq), 0);
	T_RET(ibv_destroy_cq(txcq), 0);
	t_buf_free(&txb);
	t_buf_free(&rxb);
	t_dev_close(&d);
	t_pass();
}
