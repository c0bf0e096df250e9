/* SPDX-License-Identifier: MIT */
/*
 * Transport retries: an RC QP connected to a QPN that doesn't exist never
 * gets an ACK; with timeout 1 and retry_cnt 1 the SEND completes with
 * IBV_WC_RETRY_EXC_ERR (quickly) and the QP is in ERR.  Then the same for
 * an RDMA WRITE, with retry_cnt 0.
 */
#include <stdio.h>

#include "t_util.h"

static void run(struct t_dev *d, struct t_buf *s, enum ibv_wr_opcode op,
		uint8_t retry_cnt)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct t_ep ghost;
	uint64_t t0;

	cq = t_cq_create(d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(d, &ia);
	t_ep_local(d, qp, 0, &ghost);
	ghost.qpn = 0xfffff0;
	t_conn_opts_init(&o);
	o.timeout = 1;
	o.retry_cnt = retry_cnt;
	t_qp_connect(qp, 0x10, &ghost, &o);
	t0 = t_now_ms();
	t_post_send(qp, 1, op, s->mr, s->p, 64, IBV_SEND_SIGNALED,
		    (uintptr_t)s->p, s->mr->rkey);
	T_EXPECT_WC(cq, &wc, 1, IBV_WC_RETRY_EXC_ERR, T_ANY_OPCODE);
	t_log("retry_cnt %u: transport retry exceeded after %llu ms", retry_cnt,
	      (unsigned long long)(t_now_ms() - t0));
	T_EQ(t_qp_state(qp), IBV_QPS_ERR);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
}

int main(void)
{
	struct t_buf s;
	struct t_dev d;

	t_init("err_retry");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	run(&d, &s, IBV_WR_SEND, 1);
	run(&d, &s, IBV_WR_RDMA_WRITE, 0);
	t_buf_free(&s);
	t_dev_close(&d);
	t_pass();
}
