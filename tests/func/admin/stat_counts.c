/* SPDX-License-Identifier: MIT */
/*
 * `softrdma statistic` counts what a transfer sent and received: per QP
 * (`statistic show qp QPN`) and per device and port, where the counts stay
 * when the QPs are gone.
 */
#include "t_admin.h"

#define WRITES 40
#define LEN 100000 /* 25 packets each at an MTU of 4096 */

static unsigned long long counter(struct t_run *r, const char *name)
{
	char line[8192];

	if (!t_line_with(r->out, "link softrdma0/1", line, sizeof(line)))
		T_FAIL("no softrdma0 in:\n%s", r->out);
	return T_FIELD(line, name);
}

int main(void)
{
	static struct t_run r;
	struct t_dev d;
	struct t_pair p;
	struct t_buf src, dst;
	struct ibv_wc wc;
	char qpn[16];
	unsigned long long sent0, sent1, rcvd1, pkts;

	t_init("admin_stat_counts");
	t_cli_path();
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, LEN, T_ACCESS_ALL);

	t_cli(&r, "statistic", "show", "link", "softrdma0/1", NULL);
	T_EQ(r.status, 0);
	sent0 = counter(&r, "sent_pkts");
	T_EQ(sent0, 0);
	T_EQ(counter(&r, "rcvd_pkts"), 0);

	t_fill(src.p, LEN, 7);
	for (int i = 0; i < WRITES; i++) {
		t_post_send(p.a, i, IBV_WR_RDMA_WRITE, src.mr, src.p, LEN,
			    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	T_CHECK_FILL(dst.p, LEN, 7);
	pkts = (unsigned long long)WRITES * ((LEN + 4095) / 4096);

	/* Per QP: a sent the WRITE packets, b received them. */
	snprintf(qpn, sizeof(qpn), "%u", p.a->qp_num);
	t_cli(&r, "statistic", "show", "qp", qpn, NULL);
	T_EQ(r.status, 0);
	T_GE(T_FIELD(r.out, "sent_pkts"), pkts);
	T_EQ(T_FIELD(r.out, "lqpn"), p.a->qp_num);
	snprintf(qpn, sizeof(qpn), "%#x", p.b->qp_num);
	t_cli(&r, "stat", "show", "qp", qpn, NULL);
	T_EQ(r.status, 0);
	T_GE(T_FIELD(r.out, "rcvd_pkts"), pkts);
	T_EQ(T_FIELD(r.out, "retransmits"), 0);

	/* Per device: both QPs summed. */
	t_cli(&r, "statistic", NULL);
	T_EQ(r.status, 0);
	T_GE(counter(&r, "sent_pkts"), pkts);
	T_GE(counter(&r, "rcvd_pkts"), pkts);
	t_cli(&r, "-j", "statistic", "show", "link", "softrdma0", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "\"ifname\":\"softrdma0\",\"port\":1,\"sent_"
			   "pkts\":");

	/* Destroyed QPs leave their counts with the device. */
	t_cli(&r, "statistic", NULL);
	sent1 = counter(&r, "sent_pkts");
	rcvd1 = counter(&r, "rcvd_pkts");
	t_pair_destroy(&p);
	t_cli(&r, "statistic", NULL);
	T_EQ(r.status, 0);
	T_GE(counter(&r, "sent_pkts"), sent1);
	T_GE(counter(&r, "rcvd_pkts"), rcvd1);
	T_GE(sent1, pkts);

	t_buf_free(&src);
	t_buf_free(&dst);
	t_dev_close(&d);
	t_pass();
}
