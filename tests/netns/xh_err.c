/* SPDX-License-Identifier: MIT */
/*
 * Error statuses between two hosts, each on a fresh RC connection: receiver
 * not ready (RNR retries exhausted), a bad rkey and a READ past the MR's
 * end (remote access), a SEND too long for the receive (invalid request),
 * a peer that disappears (transport retries exhausted) and the flush of
 * everything queued behind that failure.
 */
#include <stdio.h>

#include "xhost.h"

#define W 10000
#define SIG IBV_SEND_SIGNALED

static void err_rnr(struct xh *x)
{
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	t_log("RNR: SEND with no receive posted, rnr_retry 1");
	xh_conn_init(&c, IBV_QPT_RC);
	c.rnr_retry = 1;
	c.min_rnr_timer = 1;
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		xh_sync(x);
		T_EXPECT_NO_WC(q.rcq, 100);
		T_EQ(t_qp_state(q.qp), IBV_QPS_RTS);
	} else {
		xh_sync(x);
		t_post_send(q.qp, 1, IBV_WR_SEND, x->a.mr, x->a.p, 100, SIG, 0,
			    0);
		XH_EXPECT(q.scq, &wc, 1, IBV_WC_RNR_RETRY_EXC_ERR, T_ANY_OPCODE,
			  W);
		T_EQ(wc.qp_num, q.qp->qp_num);
		T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	}
	xh_sync(x);
	xh_qp_destroy(&q);
}

/* what: 0 a WRITE with a wrong rkey, 1 a READ running past the MR. */
static void err_access(struct xh *x, int what)
{
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	t_log("remote access: %s",
	      what ? "READ past the end of the MR" : "WRITE with a wrong rkey");
	xh_conn_init(&c, IBV_QPT_RC);
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		memset(x->b.p, 0xcc, 65536);
		xh_sync(x);
		xh_expect_qp_event(x, IBV_EVENT_QP_ACCESS_ERR, q.qp);
		T_EXPECT_NO_WC(q.rcq, 20);
		for (size_t i = 0; i < 65536; i++)
			if (x->b.p[i] != 0xcc)
				T_FAIL("target byte %zu changed to %#x", i,
				       x->b.p[i]);
	} else {
		xh_sync(x);
		if (what == 0)
			t_post_send(q.qp, 1, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p,
				    4096, SIG, q.remote.addr,
				    q.remote.rkey ^ 0x80);
		else
			t_post_send(q.qp, 1, IBV_WR_RDMA_READ, x->a.mr, x->a.p,
				    200, SIG,
				    q.remote.addr + q.remote.len - 100,
				    q.remote.rkey);
		XH_EXPECT(q.scq, &wc, 1, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE,
			  W);
		T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	}
	xh_sync(x);
	xh_qp_destroy(&q);
}

static void err_inv_req(struct xh *x)
{
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	t_log("invalid request: 64-byte SEND into a 16-byte receive");
	xh_conn_init(&c, IBV_QPT_RC);
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		t_post_recv(q.qp, 5, x->b.mr, x->b.p, 16);
		xh_sync(x);
		XH_EXPECT(q.rcq, &wc, 5, IBV_WC_LOC_LEN_ERR, T_ANY_OPCODE, W);
		T_EQ(wc.qp_num, q.qp->qp_num);
		T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	} else {
		xh_sync(x);
		t_post_send(q.qp, 6, IBV_WR_SEND, x->a.mr, x->a.p, 64, SIG, 0,
			    0);
		XH_EXPECT(q.scq, &wc, 6, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE,
			  W);
		T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	}
	xh_sync(x);
	xh_qp_destroy(&q);
}

/*
 * The server destroys its QP: nothing answers the client's WRITE any more,
 * and after retry_cnt + 1 timeouts of 4.096 us * 2^timeout it fails with
 * IBV_WC_RETRY_EXC_ERR; what was queued behind it, and the receives, are
 * flushed in order.
 */
static void err_retry_flush(struct xh *x)
{
	const uint8_t timeout = 12, retry_cnt = 2;
	double predict = 4.096e-6 * (1 << timeout) * (retry_cnt + 1), t;
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	t_log("transport retries: the peer's QP is destroyed; then flush");
	xh_conn_init(&c, IBV_QPT_RC);
	c.timeout = timeout;
	c.retry_cnt = retry_cnt;
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		t_post_recv(q.qp, 1, x->b.mr, x->b.p, 64);
		xh_sync(x);
		XH_EXPECT(q.rcq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_OK(ibv_destroy_qp(q.qp));
		q.qp = NULL;
		xh_sync(x);
		xh_sync(x);
		xh_qp_destroy(&q);
		return;
	}
	t_post_recv(q.qp, 50, x->b.mr, x->b.p, 64);
	t_post_recv(q.qp, 51, x->b.mr, x->b.p + 64, 64);
	xh_sync(x);
	t_post_send(q.qp, 1, IBV_WR_SEND, x->a.mr, x->a.p, 32, SIG, 0, 0);
	XH_EXPECT(q.scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND, W);
	xh_sync(x);
	t = xh_now();
	t_post_send(q.qp, 60, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 4096, SIG,
		    q.remote.addr, q.remote.rkey);
	t_post_send(q.qp, 61, IBV_WR_SEND, x->a.mr, x->a.p, 100, SIG, 0, 0);
	t_post_send(q.qp, 62, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 10, 0,
		    q.remote.addr, q.remote.rkey);
	XH_EXPECT(q.scq, &wc, 60, IBV_WC_RETRY_EXC_ERR, T_ANY_OPCODE, W);
	t = xh_now() - t;
	t_log("  RETRY_EXC_ERR after %.1f ms (timeout %u, retry_cnt %u: "
	      "%.1f ms predicted)",
	      t * 1e3, timeout, retry_cnt, predict * 1e3);
	if (t < 0.5 * predict || t > 4 * predict + 0.2)
		T_FAIL("retries exhausted after %.1f ms, outside %.1f..%.1f ms",
		       t * 1e3, 0.5 * predict * 1e3, (4 * predict + 0.2) * 1e3);
	T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	/* An unsignaled WR behind the failure still completes, flushed. */
	XH_EXPECT(q.scq, &wc, 61, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE, W);
	XH_EXPECT(q.scq, &wc, 62, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE, W);
	XH_EXPECT(q.rcq, &wc, 50, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE, W);
	XH_EXPECT(q.rcq, &wc, 51, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE, W);
	T_EXPECT_NO_WC(q.scq, 20);
	T_OK(t_post_send_ret(q.qp, 63, IBV_WR_SEND, x->a.mr, x->a.p, 8, SIG, 0,
			     0));
	XH_EXPECT(q.scq, &wc, 63, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE, W);
	xh_sync(x);
	xh_qp_destroy(&q);
}

void xh_run_errors(struct xh *x)
{
	err_rnr(x);
	err_access(x, 0);
	err_access(x, 1);
	err_inv_req(x);
	err_retry_flush(x);
}
