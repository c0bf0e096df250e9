/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues: create/query/modify/destroy; two QPs take their
 * receives from one SRQ; the limit event fires once the SRQ falls below
 * the armed limit, then disarms; an SRQ in use cannot be destroyed; a QP
 * on an SRQ moved to ERR reports IBV_EVENT_QP_LAST_WQE_REACHED.
 */
#include <stdio.h>

#include "t_util.h"

#define MSG 256

static struct t_dev d;

static struct ibv_qp *srq_qp(struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.srq = srq;
	qp = t_qp_create(&d, &ia);
	T_PTR_EQ(qp->srq, srq);
	return qp;
}

static void connect2(struct ibv_qp *x, struct ibv_qp *y)
{
	struct t_ep ex, ey;

	t_ep_local(&d, x, 11, &ex);
	t_ep_local(&d, y, 22, &ey);
	t_qp_connect(x, ex.psn, &ey, NULL);
	t_qp_connect(y, ey.psn, &ex, NULL);
}

int main(void)
{
	struct ibv_srq_init_attr si;
	struct ibv_qp *s1, *s2, *r1, *r2;
	struct ibv_srq_attr sa;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct t_buf src, rbuf;
	struct ibv_wc wc;
	bool seen[4] = { false };
	int srq_ctx, i;

	t_init("srq");
	t_dev_open(&d);

	/* Limits and create/query/modify. */
	memset(&si, 0, sizeof(si));
	si.attr.max_wr = d.attr.max_srq_wr + 1;
	si.attr.max_sge = 1;
	T_NULL_ERRNO(ibv_create_srq(d.pd, &si), EINVAL);
	si.attr.max_wr = 16;
	si.attr.max_sge = d.attr.max_srq_sge + 1;
	T_NULL_ERRNO(ibv_create_srq(d.pd, &si), EINVAL);

	memset(&si, 0, sizeof(si));
	si.srq_context = &srq_ctx;
	si.attr.max_wr = 64;
	si.attr.max_sge = 2;
	srq = T_NONNULL(ibv_create_srq(d.pd, &si));
	T_GE(si.attr.max_wr, 64);
	T_GE(si.attr.max_sge, 2);
	T_PTR_EQ(srq->srq_context, &srq_ctx);
	T_PTR_EQ(srq->pd, d.pd);
	memset(&sa, 0xee, sizeof(sa));
	T_OK(ibv_query_srq(srq, &sa));
	T_GE(sa.max_wr, 64);
	T_GE(sa.max_sge, 2);
	T_EQ(sa.srq_limit, 0);
	sa.srq_limit = 10;
	T_OK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT));
	T_OK(ibv_query_srq(srq, &sa));
	T_EQ(sa.srq_limit, 10);
	sa.srq_limit = sa.max_wr + 1;
	T_RET(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	sa.srq_limit = 0;
	T_OK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT));

	/* Two receiving QPs on one SRQ. */
	scq = t_cq_create(&d, 128, NULL);
	rcq = t_cq_create(&d, 128, NULL);
	r1 = srq_qp(rcq, srq);
	r2 = srq_qp(rcq, srq);
	{
		struct ibv_qp_init_attr ia;

		t_qp_init_attr(&ia, IBV_QPT_RC, scq, scq);
		s1 = t_qp_create(&d, &ia);
		s2 = t_qp_create(&d, &ia);
	}
	connect2(s1, r1);
	connect2(s2, r2);
	t_buf_alloc(&d, &src, 4 * MSG, T_ACCESS_ALL);
	t_buf_alloc(&d, &rbuf, 64 * MSG, T_ACCESS_ALL);

	/* Posting to a QP that has an SRQ is refused. */
	T_RET(t_post_recv_ret(r1, 99, rbuf.mr, rbuf.p, MSG), EINVAL);

	for (i = 0; i < 4; i++)
		t_post_srq_recv(srq, 100 + i, rbuf.mr, rbuf.p + i * MSG, MSG);
	t_fill(src.p, 4 * MSG, 7);
	t_post_send(s1, 1, IBV_WR_SEND, src.mr, src.p, MSG, IBV_SEND_SIGNALED,
		    0, 0);
	t_post_send(s2, 2, IBV_WR_SEND, src.mr, src.p + MSG, MSG,
		    IBV_SEND_SIGNALED, 0, 0);
	t_post_send(s1, 3, IBV_WR_SEND, src.mr, src.p + 2 * MSG, MSG,
		    IBV_SEND_SIGNALED, 0, 0);
	t_post_send(s2, 4, IBV_WR_SEND, src.mr, src.p + 3 * MSG, MSG,
		    IBV_SEND_SIGNALED, 0, 0);
	for (i = 0; i < 4; i++) {
		if (!t_poll(scq, &wc, T_WAIT_MS))
			T_FAIL("send completion %d of 4 missing", i + 1);
		T_WC_STATUS(&wc, IBV_WC_SUCCESS);
		T_EQ(wc.opcode, IBV_WC_SEND);
	}
	for (i = 0; i < 4; i++) {
		uint64_t k;
		const uint8_t *got;
		int msg;

		if (!t_poll(rcq, &wc, T_WAIT_MS))
			T_FAIL("receive %d of 4 missing", i + 1);
		T_WC_STATUS(&wc, IBV_WC_SUCCESS);
		T_EQ(wc.opcode, IBV_WC_RECV);
		T_EQ(wc.byte_len, MSG);
		k = wc.wr_id - 100;
		T_LT(k, 4);
		T_ASSERT(!seen[k]);
		seen[k] = true;
		T_ASSERT(wc.qp_num == r1->qp_num || wc.qp_num == r2->qp_num);
		/* Which message landed here: s1 sent 0 and 2, s2 sent 1
		 * and 3; it must have come through the matching QP. */
		got = rbuf.p + k * MSG;
		for (msg = 0; msg < 4; msg++) {
			if (!memcmp(got, src.p + msg * MSG, MSG))
				break;
		}
		if (msg == 4)
			T_FAIL("receive wr_id %llu holds no message sent",
			       (unsigned long long)wc.wr_id);
		T_EQ(wc.qp_num, (msg % 2 == 0) ? r1->qp_num : r2->qp_num);
		T_EQ(wc.src_qp, (msg % 2 == 0) ? s1->qp_num : s2->qp_num);
	}

	/* Limit: 8 posted, armed at 6.  Two consumed leave 6 (not below):
	 * quiet.  The third leaves 5: one event, and the limit disarms. */
	for (i = 0; i < 8; i++)
		t_post_srq_recv(srq, 200 + i, rbuf.mr, rbuf.p + i * MSG, MSG);
	sa.srq_limit = 6;
	T_OK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT));
	T_EXPECT_NO_ASYNC(d.ctx, 20);
	for (i = 0; i < 2; i++) {
		t_post_send(s1, 300 + i, IBV_WR_SEND, src.mr, src.p, 8,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(scq, &wc, 300 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(rcq, &wc, 200 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
	}
	T_EXPECT_NO_ASYNC(d.ctx, T_QUIET_MS);
	t_post_send(s2, 302, IBV_WR_SEND, src.mr, src.p, 8, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(scq, &wc, 302, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(rcq, &wc, 202, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EXPECT_ASYNC(d.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq);
	T_OK(ibv_query_srq(srq, &sa));
	T_EQ(sa.srq_limit, 0);
	t_post_send(s2, 303, IBV_WR_SEND, src.mr, src.p, 8, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(scq, &wc, 303, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(rcq, &wc, 203, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EXPECT_NO_ASYNC(d.ctx, T_QUIET_MS);

	/* In use: EBUSY. */
	T_RET(ibv_destroy_srq(srq), EBUSY);

	/* A QP on the SRQ moved to ERR: last WQE reached, for that QP. */
	t_qp_set_state(r1, IBV_QPS_ERR);
	T_EXPECT_ASYNC(d.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, r1);

	T_OK(ibv_destroy_qp(r1));
	T_OK(ibv_destroy_qp(r2));
	T_OK(ibv_destroy_srq(srq));
	T_OK(ibv_destroy_qp(s1));
	T_OK(ibv_destroy_qp(s2));
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_destroy_cq(rcq));
	t_buf_free(&src);
	t_buf_free(&rbuf);
	t_dev_close(&d);
	t_pass();
}
