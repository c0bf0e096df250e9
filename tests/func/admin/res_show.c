/* SPDX-License-Identifier: MIT */
/*
 * `softrdma resource show` lists what a verbs program made: its QPs with
 * their QPNs, peers, states and PSNs, its CQs, MRs and PDs, all with the
 * program's pid; and it follows a state change.
 */
#include <unistd.h>

#include "t_admin.h"

int main(void)
{
	static struct t_run r;
	struct t_dev d;
	struct t_pair p;
	struct t_buf b;
	char pat[128], line[1024];
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr ia;

	t_init("admin_res_show");
	t_cli_path();
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &b, 8192, T_ACCESS_ALL);

	t_cli(&r, "resource", "show", "qp", NULL);
	T_EQ(r.status, 0);
	snprintf(pat, sizeof(pat), "lqpn %u ", p.a->qp_num);
	if (!t_line_with(r.out, pat, line, sizeof(line)))
		T_FAIL("QP %u not listed:\n%s", p.a->qp_num, r.out);
	T_EXPECT_IN(line, "link softrdma0/1 ");
	T_EQ(T_FIELD(line, "rqpn"), p.b->qp_num);
	T_EXPECT_IN(line, " type RC state RTS ");
	T_EQ(T_FIELD(line, "pid"), getpid());
	T_EXPECT_IN(line, " comm func_admin_res");
	/* The PSNs are the ones the verbs API reports. */
	T_OK(ibv_query_qp(p.a, &attr, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &ia));
	T_EQ(T_FIELD(line, "sq-psn"), attr.sq_psn);
	T_EQ(T_FIELD(line, "rq-psn"), attr.rq_psn);

	/* Only the QP asked for; JSON too. */
	snprintf(pat, sizeof(pat), "%u", p.b->qp_num);
	t_cli(&r, "-j", "res", "show", "qp", "lqpn", pat, NULL);
	T_EQ(r.status, 0);
	snprintf(line, sizeof(line),
		 "\"lqpn\":%u,\"rqpn\":%u,\"type\":\"RC\","
		 "\"state\":\"RTS\"",
		 p.b->qp_num, p.a->qp_num);
	T_EXPECT_IN(r.out, line);
	snprintf(line, sizeof(line), "\"lqpn\":%u,", p.a->qp_num);
	T_EXPECT_NOT_IN(r.out, line);

	/* A state change shows. */
	t_qp_set_state(p.a, IBV_QPS_ERR);
	t_cli(&r, "resource", "show", "qp", "link", "softrdma0", NULL);
	snprintf(pat, sizeof(pat), "lqpn %u ", p.a->qp_num);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EXPECT_IN(line, " state ERR ");

	/* CQs, MRs, PDs. */
	t_cli(&r, "resource", "show", "cq", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "dev softrdma0 cqn ");
	T_ASSERT(t_line_with(r.out, "cqn", line, sizeof(line)));
	T_EQ(T_FIELD(line, "users"), 2); /* its QP's send and receive CQ */
	t_cli(&r, "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	snprintf(pat, sizeof(pat), "rkey %#x lkey %#x mrlen 8192 ", b.mr->rkey,
		 b.mr->lkey);
	T_EXPECT_IN(r.out, pat);
	t_cli(&r, "resource", "show", "pd", NULL);
	T_EQ(r.status, 0);
	T_ASSERT(t_line_with(r.out, "dev softrdma0 pdn", line, sizeof(line)));
	/* Two QPs and an MR use it. */
	T_EQ(T_FIELD(line, "users"), 3);

	/* The summary counts them. */
	t_cli(&r, "resource", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "0: softrdma0: qp 2 cq 2 mr 1 pd 1 cm_id 0\n");
	t_cli(&r, "-j", "resource", NULL);
	T_EXPECT_IN(r.out, "\"ifname\":\"softrdma0\",\"qp\":2,\"cq\":2,"
			   "\"mr\":1,\"pd\":1,\"cm_id\":0}");

	/* Gone when destroyed. */
	t_buf_free(&b);
	t_pair_destroy(&p);
	t_cli(&r, "resource", "show", "qp", NULL);
	T_EQ(r.status, 0);
	T_EQ(strlen(r.out), 0);
	t_dev_close(&d);
	t_pass();
}
