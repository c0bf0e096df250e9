/* SPDX-License-Identifier: MIT */
/*
 * Fault rules apply to multicast as to any packet: on one device (the
 * in-memory wire), a UD sender and two attached receivers in one process,
 * rules set at run time with `softrdma fault add`:
 *  - drop on transmit, every second packet of the sender: each receiver
 *    gets exactly the odd messages, intact;
 *  - drop on receive, three packets: both receivers miss the same three;
 *  - dup on transmit, twice: both receivers get two messages twice;
 *  - corrupt on transmit, once: the bad ICRC is caught and counted, and
 *    that message reaches nobody;
 *  - delay 2 ms on receive: every message still arrives, in order.
 * Each rule's injected count says how many packets it touched.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "t_admin.h"

#define GRH 40
#define SLOT 256
#define NRX 2
#define NSLOTS 64
#define GROUP "239.10.0.7"
#define MCAST_QPN 0xffffffu

struct setup {
	struct t_dev d;
	struct ibv_cq *scq, *rcq[NRX];
	struct ibv_qp *s, *r[NRX];
	struct ibv_ah *ah;
	struct t_buf sb, rb[NRX];
	uint64_t next_wr;
	uint32_t next_rx; /* receives posted so far, each in a slot of its own */
};

static struct ibv_qp *ud_qp(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	ia.cap.max_recv_wr = 64;
	qp = t_qp_create(d, &ia);
	t_conn_opts_init(&o);
	t_qp_connect(qp, 0, NULL, &o);
	return qp;
}

static void setup(struct setup *x)
{
	struct ibv_ah_attr aa;
	union ibv_gid g;

	t_dev_open(&x->d);
	memset(&g, 0, sizeof(g));
	g.raw[10] = g.raw[11] = 0xff;
	T_EQ(inet_pton(AF_INET, GROUP, &g.raw[12]), 1);
	x->scq = t_cq_create(&x->d, 64, NULL);
	x->s = ud_qp(&x->d, x->scq);
	t_buf_alloc(&x->d, &x->sb, SLOT, T_ACCESS_ALL);
	for (int k = 0; k < NRX; k++) {
		x->rcq[k] = t_cq_create(&x->d, 128, NULL);
		x->r[k] = ud_qp(&x->d, x->rcq[k]);
		t_buf_alloc(&x->d, &x->rb[k], NSLOTS * (GRH + SLOT),
			    T_ACCESS_ALL);
		T_OK(ibv_attach_mcast(x->r[k], &g, 0));
	}
	t_ah_attr_init(&aa, &g);
	x->ah = T_NONNULL(ibv_create_ah(x->d.pd, &aa));
}

/* Send message numbers first..first+n-1 to the group; each carries its
 * number in its first 4 bytes and a pattern seeded by it after. */
static void send_msgs(struct setup *x, uint32_t first, uint32_t n)
{
	struct ibv_wc wc;

	for (uint32_t i = first; i < first + n; i++) {
		memcpy(x->sb.p, &i, 4);
		t_fill((uint8_t *)x->sb.p + 4, SLOT - 4, i);
		t_post_ud(x->s, x->next_wr, x->ah, MCAST_QPN, T_QKEY, x->sb.mr,
			  x->sb.p, SLOT, IBV_SEND_SIGNALED);
		T_EXPECT_WC(x->scq, &wc, x->next_wr, IBV_WC_SUCCESS,
			    IBV_WC_SEND);
		x->next_wr++;
	}
}

/* Post n receives on every receiver, in slots not used before. */
static void post_recvs(struct setup *x, uint32_t n)
{
	T_LE(x->next_rx + n, NSLOTS);
	for (int k = 0; k < NRX; k++)
		for (uint32_t i = x->next_rx; i < x->next_rx + n; i++)
			t_post_recv(x->r[k], i, x->rb[k].mr,
				    (uint8_t *)x->rb[k].p + i * (GRH + SLOT),
				    GRH + SLOT);
	x->next_rx += n;
}

/* Receiver k gets exactly the messages in want[0..n-1], in order, intact;
 * then nothing more. */
static void expect_msgs(struct setup *x, int k, const uint32_t *want,
			uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		const uint8_t *m;
		struct ibv_wc wc;
		uint32_t got;

		if (t_poll(x->rcq[k], &wc, T_WAIT_MS) != 1)
			T_FAIL("receiver %d: message %u of %u missing", k, j,
			       n);
		T_WC_STATUS(&wc, IBV_WC_SUCCESS);
		T_EQ(wc.byte_len, GRH + SLOT);
		m = (const uint8_t *)x->rb[k].p + wc.wr_id * (GRH + SLOT) + GRH;
		memcpy(&got, m, 4);
		if (got != want[j])
			T_FAIL("receiver %d: message %u is number %u, expected "
			       "%u",
			       k, j, got, want[j]);
		T_CHECK_FILL(m + 4, SLOT - 4, got);
	}
	T_EXPECT_NO_WC(x->rcq[k], 50);
}

static void expect_all(struct setup *x, const uint32_t *want, uint32_t n)
{
	for (int k = 0; k < NRX; k++)
		expect_msgs(x, k, want, n);
}

/* The one rule in force from now on. */
static void rule(const char *what)
{
	static struct t_run r;

	t_cli(&r, "fault", "flush", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "fault", "add", what, NULL);
	if (r.status)
		T_FAIL("fault add %s: %s", what, r.err);
}

static void expect_injected(unsigned long long injected)
{
	static struct t_run r;
	char line[512];

	t_cli(&r, "fault", "show", NULL);
	T_EQ(r.status, 0);
	if (!t_line_with(r.out, "rule 0 ", line, sizeof(line)))
		T_FAIL("no rule 0 in:\n%s", r.out);
	T_EQ(T_FIELD(line, "injected"), injected);
}

int main(void)
{
	static struct setup x;
	static struct t_run r;
	uint32_t want[16], n;
	char what[128];

	t_init("mcast_faults");
	setup(&x);

	/* Transmit, every second packet of the sender: 0, 2, 4, ... go. */
	snprintf(what, sizeof(what), "drop dir=tx qpn=%u every=2", x.s->qp_num);
	rule(what);
	post_recvs(&x, 10);
	send_msgs(&x, 0, 10);
	for (n = 0; n < 5; n++)
		want[n] = 2 * n;
	expect_all(&x, want, n);
	expect_injected(5);

	/* Receive: one device, judged once per packet; three dropped. */
	rule("drop dir=rx op=ud count=3");
	post_recvs(&x, 8);
	send_msgs(&x, 10, 8);
	for (n = 0; n < 5; n++)
		want[n] = 13 + n;
	expect_all(&x, want, n);
	expect_injected(3);

	/* Duplicated twice: the first two messages come twice each. */
	snprintf(what, sizeof(what), "dup dir=tx qpn=%u count=2", x.s->qp_num);
	rule(what);
	post_recvs(&x, 8);
	send_msgs(&x, 20, 4);
	{
		static const uint32_t w[] = { 20, 20, 21, 21, 22, 23 };

		expect_all(&x, w, 6);
	}
	expect_injected(2);

	/* Corrupted once: caught by the ICRC check, counted, lost. */
	snprintf(what, sizeof(what), "corrupt dir=tx qpn=%u count=1",
		 x.s->qp_num);
	rule(what);
	t_cli(&r, "statistic", "show", NULL);
	T_EQ(r.status, 0);
	{
		unsigned long long before = T_FIELD(r.out, "rx_icrc_errors");
		static const uint32_t w[] = { 31, 32, 33 };

		post_recvs(&x, 4);
		send_msgs(&x, 30, 4);
		expect_all(&x, w, 3);
		expect_injected(1);
		t_cli(&r, "statistic", "show", NULL);
		T_EQ(r.status, 0);
		T_EQ(T_FIELD(r.out, "rx_icrc_errors"), before + 1);
	}

	/* Delayed on receive: late, but all of them and in order. */
	rule("delay dir=rx op=ud us=2000");
	post_recvs(&x, 6);
	send_msgs(&x, 40, 6);
	for (n = 0; n < 6; n++)
		want[n] = 40 + n;
	expect_all(&x, want, n);
	expect_injected(6);

	t_cli(&r, "fault", "flush", NULL);
	T_EQ(r.status, 0);
	t_pass();
}
