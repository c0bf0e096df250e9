/* SPDX-License-Identifier: MIT */
/*
 * CQ overrun: a CQ of 4 entries left unpolled while 16+ completions come.
 * The CQ reports IBV_EVENT_CQ_ERR and the QP feeding it
 * IBV_EVENT_QP_FATAL (either order); the QP is then in the error state.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_async_event ev;
	struct ibv_cq *small, *rcq;
	struct t_buf src, dst;
	struct ibv_qp *qa, *qb;
	struct t_ep ea, eb;
	struct t_dev d;
	bool cq_err = false, qp_fatal = false;
	uint64_t end;
	int i, n;

	t_init("cq_overrun");
	t_dev_open(&d);
	small = T_NONNULL(ibv_create_cq(d.ctx, 4, NULL, NULL, 0));
	rcq = t_cq_create(&d, 64, NULL);
	n = small->cqe * 2 + 16;
	t_log("cq of 4 granted %d entries; %d completions", small->cqe, n);

	t_qp_init_attr(&ia, IBV_QPT_RC, small, rcq);
	ia.cap.max_send_wr = (uint32_t)n;
	qa = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, rcq, rcq);
	qb = t_qp_create(&d, &ia);
	t_ep_local(&d, qa, 1, &ea);
	t_ep_local(&d, qb, 2, &eb);
	t_qp_connect(qa, ea.psn, &eb, NULL);
	t_qp_connect(qb, eb.psn, &ea, NULL);
	t_buf_alloc(&d, &src, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, 4096, T_ACCESS_ALL);

	T_EXPECT_NO_ASYNC(d.ctx, 20);
	for (i = 0; i < n; i++)
		t_post_send(qa, i, IBV_WR_RDMA_WRITE, src.mr, src.p, 32,
			    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);

	end = t_now_ms() + T_WAIT_MS;
	while (!(cq_err && qp_fatal) && t_now_ms() < end) {
		if (!t_async_wait(d.ctx, &ev, (int)(end - t_now_ms())))
			break;
		t_log("event: %s", ibv_event_type_str(ev.event_type));
		if (ev.event_type == IBV_EVENT_CQ_ERR) {
			T_PTR_EQ(ev.element.cq, small);
			T_ASSERT(!cq_err);
			cq_err = true;
		} else if (ev.event_type == IBV_EVENT_QP_FATAL) {
			T_PTR_EQ(ev.element.qp, qa);
			T_ASSERT(!qp_fatal);
			qp_fatal = true;
		} else {
			T_FAIL("unexpected event \"%s\"",
			       ibv_event_type_str(ev.event_type));
		}
		ibv_ack_async_event(&ev);
	}
	if (!cq_err)
		T_FAIL("no IBV_EVENT_CQ_ERR for the overrun CQ");
	if (!qp_fatal)
		T_FAIL("no IBV_EVENT_QP_FATAL for the QP on the overrun CQ");
	T_EQ(t_qp_state(qa), IBV_QPS_ERR);

	T_OK(ibv_destroy_qp(qa));
	T_OK(ibv_destroy_qp(qb));
	T_OK(ibv_destroy_cq(small));
	T_OK(ibv_destroy_cq(rcq));
	t_buf_free(&src);
	t_buf_free(&dst);
	t_dev_close(&d);
	t_pass();
}
