/* SPDX-License-Identifier: MIT */
/*
 * The context's async_fd: not readable while nothing is pending, readable
 * once an event is; ibv_get_async_event returns it with its object,
 * ibv_ack_async_event acks it; non-blocking use gives EAGAIN.  The event
 * here is IBV_EVENT_COMM_EST: a QP still in RTR receives its first
 * message (rxe raises it too); once the QP is in RTS no more come.
 * Each context sees only its own events.
 */
#include <fcntl.h>
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_async_event ev;
	struct ibv_qp_init_attr ia;
	struct ibv_context *other;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	struct t_ep ea, eb;
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_dev d;
	int fl;

	t_init("async_events");
	t_dev_open(&d);
	other = T_NONNULL(ibv_open_device(d.ctx->device));
	T_ASSERT(!t_fd_readable(d.ctx->async_fd, 20));

	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	cqa = t_cq_create(&d, 64, NULL);
	cqb = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cqa, cqa);
	a = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, cqb, cqb);
	b = t_qp_create(&d, &ia);
	t_ep_local(&d, a, 1, &ea);
	t_ep_local(&d, b, 2, &eb);
	t_qp_connect(a, ea.psn, &eb, NULL);
	t_qp_to_init(b, NULL);
	t_qp_to_rtr(b, &ea, NULL);

	/* b in RTR receives: COMM_EST for b. */
	t_post_recv(b, 1, r.mr, r.p, 4096);
	t_fill(s.p, 100, 1);
	t_post_send(a, 2, IBV_WR_SEND, s.mr, s.p, 100, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(cqa, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(cqb, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(r.p, 100, 1);
	if (!t_fd_readable(d.ctx->async_fd, T_WAIT_MS))
		T_FAIL("async_fd not readable: no COMM_EST for a QP in RTR "
		       "that received a message");
	T_EQ(ibv_get_async_event(d.ctx, &ev), 0);
	T_EQ(ev.event_type, IBV_EVENT_COMM_EST);
	T_PTR_EQ(ev.element.qp, b);
	ibv_ack_async_event(&ev);
	/* Nothing else pending, and nothing for the other context. */
	T_ASSERT(!t_fd_readable(d.ctx->async_fd, T_QUIET_MS));
	T_ASSERT(!t_fd_readable(other->async_fd, 0));

	/* Non-blocking: EAGAIN when empty. */
	fl = fcntl(d.ctx->async_fd, F_GETFL);
	T_ASSERT(fl >= 0);
	T_EQ(fcntl(d.ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	T_NEG_ERRNO(ibv_get_async_event(d.ctx, &ev), EAGAIN);
	T_EQ(fcntl(d.ctx->async_fd, F_SETFL, fl), 0);

	/* In RTS, traffic raises nothing. */
	t_qp_to_rts(b, eb.psn, NULL);
	t_post_recv(b, 3, r.mr, r.p, 4096);
	t_post_send(a, 4, IBV_WR_SEND, s.mr, s.p, 10, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(cqa, &wc, 4, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(cqb, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	t_post_recv(a, 5, r.mr, r.p, 4096);
	t_post_send(b, 6, IBV_WR_SEND, s.mr, s.p, 10, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(cqb, &wc, 6, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(cqa, &wc, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EXPECT_NO_ASYNC(d.ctx, T_QUIET_MS);

	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(cqa));
	T_OK(ibv_destroy_cq(cqb));
	t_buf_free(&s);
	t_buf_free(&r);
	T_OK(ibv_close_device(other));
	t_dev_close(&d);
	t_pass();
}
