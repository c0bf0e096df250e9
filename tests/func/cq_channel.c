/* SPDX-License-Identifier: MIT */
/*
 * Completion channels: an armed CQ makes the channel fd readable after a
 * completion, ibv_get_cq_event returns the CQ and its context, an unarmed
 * CQ stays quiet.  Solicited-only arming ignores unsolicited receives and
 * fires on a SEND with IBV_SEND_SOLICITED.
 */
#include <fcntl.h>
#include <stdio.h>

#include "t_util.h"

static void expect_event(struct ibv_comp_channel *ch, struct ibv_cq *want,
			 void *want_ctx)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;

	if (!t_fd_readable(ch->fd, T_WAIT_MS))
		T_FAIL("channel fd not readable within %d ms", T_WAIT_MS);
	T_EQ(ibv_get_cq_event(ch, &cq, &ctx), 0);
	T_PTR_EQ(cq, want);
	T_PTR_EQ(ctx, want_ctx);
	ibv_ack_cq_events(cq, 1);
}

int main(void)
{
	struct ibv_comp_channel *ch, *ch2;
	struct ibv_qp_init_attr ia;
	struct ibv_cq *scq, *rcq;
	struct t_buf sbuf, rbuf;
	struct ibv_qp *qa, *qb;
	struct t_ep ea, eb;
	struct ibv_wc wc;
	struct t_dev d;
	int rctx, sctx, i;

	t_init("cq_channel");
	t_dev_open(&d);

	/* Create and destroy; a channel in use by a CQ is busy. */
	ch = T_NONNULL(ibv_create_comp_channel(d.ctx));
	T_GE(ch->fd, 0);
	T_PTR_EQ(ch->context, d.ctx);
	scq = T_NONNULL(ibv_create_cq(d.ctx, 16, &sctx, ch, 0));
	T_PTR_EQ(scq->channel, ch);
	T_RET(ibv_destroy_comp_channel(ch), EBUSY);
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_destroy_comp_channel(ch));

	ch = T_NONNULL(ibv_create_comp_channel(d.ctx));
	ch2 = T_NONNULL(ibv_create_comp_channel(d.ctx));
	scq = T_NONNULL(ibv_create_cq(d.ctx, 64, &sctx, ch, 0));
	rcq = T_NONNULL(ibv_create_cq(d.ctx, 64, &rctx, ch2, 0));
	t_qp_init_attr(&ia, IBV_QPT_RC, scq, scq);
	qa = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, rcq, rcq);
	qb = t_qp_create(&d, &ia);
	t_ep_local(&d, qa, 100, &ea);
	t_ep_local(&d, qb, 200, &eb);
	t_qp_connect(qa, ea.psn, &eb, NULL);
	t_qp_connect(qb, eb.psn, &ea, NULL);
	t_buf_alloc(&d, &sbuf, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &rbuf, 4096, T_ACCESS_ALL);

	/* Not armed: a completion does not make the fd readable. */
	t_post_send(qa, 1, IBV_WR_RDMA_WRITE, sbuf.mr, sbuf.p, 8,
		    IBV_SEND_SIGNALED, (uintptr_t)rbuf.p, rbuf.mr->rkey);
	T_EXPECT_WC(scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_ASSERT(!t_fd_readable(ch->fd, T_QUIET_MS));

	/* Armed: one event, with the CQ and its context. */
	T_OK(ibv_req_notify_cq(scq, 0));
	T_ASSERT(!t_fd_readable(ch->fd, 20));
	t_post_send(qa, 2, IBV_WR_RDMA_WRITE, sbuf.mr, sbuf.p, 8,
		    IBV_SEND_SIGNALED, (uintptr_t)rbuf.p, rbuf.mr->rkey);
	expect_event(ch, scq, &sctx);
	T_EXPECT_WC(scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* The arm is used up: the next completion is silent. */
	t_post_send(qa, 3, IBV_WR_RDMA_WRITE, sbuf.mr, sbuf.p, 8,
		    IBV_SEND_SIGNALED, (uintptr_t)rbuf.p, rbuf.mr->rkey);
	T_EXPECT_WC(scq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_ASSERT(!t_fd_readable(ch->fd, T_QUIET_MS));

	/* The usual loop: arm, wait, poll, several rounds. */
	for (i = 0; i < 10; i++) {
		T_OK(ibv_req_notify_cq(scq, 0));
		t_post_send(qa, 10 + i, IBV_WR_RDMA_WRITE, sbuf.mr, sbuf.p, 8,
			    IBV_SEND_SIGNALED, (uintptr_t)rbuf.p,
			    rbuf.mr->rkey);
		expect_event(ch, scq, &sctx);
		T_EXPECT_WC(scq, &wc, 10 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
	}

	/* Solicited only: an unsolicited SEND completes on the receiver
	 * but raises nothing; a solicited one raises the event. */
	T_OK(ibv_req_notify_cq(rcq, 1));
	t_post_recv(qb, 50, rbuf.mr, rbuf.p, 64);
	t_post_recv(qb, 51, rbuf.mr, rbuf.p + 64, 64);
	t_post_send(qa, 52, IBV_WR_SEND, sbuf.mr, sbuf.p, 16, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(scq, &wc, 52, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(rcq, &wc, 50, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_ASSERT(!t_fd_readable(ch2->fd, T_QUIET_MS));
	t_post_send(qa, 53, IBV_WR_SEND, sbuf.mr, sbuf.p, 16,
		    IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 0, 0);
	T_EXPECT_WC(scq, &wc, 53, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_event(ch2, rcq, &rctx);
	T_EXPECT_WC(rcq, &wc, 51, IBV_WC_SUCCESS, IBV_WC_RECV);

	/* A non-blocking channel fd: get_cq_event fails with EAGAIN when
	 * there is nothing (rdma-core's documented pattern). */
	{
		struct ibv_cq *cq;
		void *ctx;
		int fl = fcntl(ch->fd, F_GETFL);

		T_ASSERT(fl >= 0);
		T_EQ(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
		T_NEG_ERRNO(ibv_get_cq_event(ch, &cq, &ctx), EAGAIN);
	}

	T_OK(ibv_destroy_qp(qa));
	T_OK(ibv_destroy_qp(qb));
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_destroy_cq(rcq));
	T_OK(ibv_destroy_comp_channel(ch));
	T_OK(ibv_destroy_comp_channel(ch2));
	t_buf_free(&sbuf);
	t_buf_free(&rbuf);
	t_dev_close(&d);
	t_pass();
}
