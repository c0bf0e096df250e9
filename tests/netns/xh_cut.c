/* SPDX-License-Identifier: MIT */
/*
 * The path is cut under a live RC connection (timeout 14, about 67 ms,
 * retry_cnt 3): a WRITE must fail with IBV_WC_RETRY_EXC_ERR after about
 * (retry_cnt + 1) timeouts.  The client runs the commands that cut and
 * mend the path (--cut-cmd, --uncut-cmd); afterwards a new connection must
 * work again.  The control connection crosses the same path, so the server
 * just waits for the client to come back.
 */
#include <stdio.h>
#include <stdlib.h>

#include "xhost.h"

#define TIMEOUT 14
#define RETRY_CNT 3

static void run_cmd(const char *what, const char *cmd)
{
	int rc;

	t_log("%s: %s", what, cmd);
	rc = system(cmd);
	if (rc != 0)
		T_FAIL("%s: \"%s\" exited with %d", what, cmd, rc);
}

/* How long the kernel may take to tell a carrier change (see
 * expect_port_event). */
#define PORT_EVENT_MS 30000

/* After the link comes back the port must be ACTIVE before we connect. */
static void wait_port_active(struct xh *x, int timeout_ms)
{
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	struct ibv_port_attr pa;

	for (;;) {
		T_OK(ibv_query_port(x->d.ctx, T_PORT, &pa));
		if (pa.state == IBV_PORT_ACTIVE)
			return;
		if (t_now_ms() >= end)
			T_FAIL("port still %s %d ms after the path was mended",
			       ibv_port_state_str(pa.state), timeout_ms);
		t_sleep_ms(20);
	}
}

/*
 * The next port event (others, e.g. GID changes, are logged and passed
 * over) must be type, within PORT_EVENT_MS.  The kernel tells a carrier
 * change only once its linkwatch work has run under the RTNL, which other
 * namespaces being set up or torn down can hold for seconds: one run
 * beside other netns tests heard of it 11.6 s after the cut.
 */
static void expect_port_event(struct xh *x, enum ibv_event_type type)
{
	uint64_t end = t_now_ms() + PORT_EVENT_MS;
	struct ibv_async_event ev;

	for (;;) {
		uint64_t now = t_now_ms();
		enum ibv_event_type got;

		if (now >= end ||
		    !t_async_wait(x->d.ctx, &ev, (int)(end - now)))
			T_FAIL("no %s within %d s", ibv_event_type_str(type),
			       PORT_EVENT_MS / 1000);
		got = ev.event_type;
		t_log("async event: %s", ibv_event_type_str(got));
		ibv_ack_async_event(&ev);
		if (got == type)
			return;
		if (got == IBV_EVENT_PORT_ERR || got == IBV_EVENT_PORT_ACTIVE)
			T_FAIL("%s, expected %s", ibv_event_type_str(got),
			       ibv_event_type_str(type));
	}
}

static void check_path(struct xh *x)
{
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	xh_conn_init(&c, IBV_QPT_RC);
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		memset(x->b.p, 0, 65536);
		t_post_recv(q.qp, 1, x->b.mr, x->b.p + 65536, 64);
		xh_sync(x);
		XH_EXPECT(q.rcq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV, 10000);
		T_CHECK_FILL(x->b.p, 65536, 7);
	} else {
		xh_sync(x);
		t_fill(x->a.p, 65536, 7);
		t_post_send(q.qp, 1, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 65536,
			    0, q.remote.addr, q.remote.rkey);
		t_post_send(q.qp, 2, IBV_WR_SEND, x->a.mr, x->a.p, 8,
			    IBV_SEND_SIGNALED, 0, 0);
		XH_EXPECT(q.scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND, 10000);
	}
	xh_sync(x);
	xh_qp_destroy(&q);
}

void xh_run_cut(struct xh *x)
{
	double predict = 4.096e-6 * (1 << TIMEOUT) * (RETRY_CNT + 1), t;
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	xh_conn_init(&c, IBV_QPT_RC);
	c.timeout = TIMEOUT;
	c.retry_cnt = RETRY_CNT;
	xh_qp_connect(x, &q, &c);
	if (x->server) {
		xh_sync(x); /* the path works */
		xh_sync(x); /* cut, failed, mended */
		wait_port_active(x, PORT_EVENT_MS);
		xh_qp_destroy(&q);
		check_path(x);
		return;
	}
	for (int i = 0; i < 10; i++) {
		t_fill(x->a.p, 65536, 100 + i);
		t_post_send(q.qp, i, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 65536,
			    IBV_SEND_SIGNALED, q.remote.addr, q.remote.rkey);
		XH_EXPECT(q.scq, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			  10000);
	}
	xh_sync(x);
	run_cmd("cut", x->cut_cmd);
	t = xh_now();
	t_post_send(q.qp, 99, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 4096,
		    IBV_SEND_SIGNALED, q.remote.addr, q.remote.rkey);
	XH_EXPECT(q.scq, &wc, 99, IBV_WC_RETRY_EXC_ERR, T_ANY_OPCODE,
		  (int)(8 * predict * 1e3) + 2000);
	t = xh_now() - t;
	t_log("RETRY_EXC_ERR after %.0f ms; timeout %d, retry_cnt %d predict "
	      "%.0f ms",
	      t * 1e3, TIMEOUT, RETRY_CNT, predict * 1e3);
	if (x->port_events) {
		/* Our veth lost its carrier: the port goes down and says so
		 * (the kernel itself may take up to a second to call the
		 * interface not running). */
		struct ibv_port_attr pa;

		expect_port_event(x, IBV_EVENT_PORT_ERR);
		T_OK(ibv_query_port(x->d.ctx, T_PORT, &pa));
		t_log("port %s while the peer's link is down",
		      ibv_port_state_str(pa.state));
		T_NE(pa.state, IBV_PORT_ACTIVE);
	}
	run_cmd("mend", x->uncut_cmd);
	if (t < 0.5 * predict || t > 4 * predict)
		T_FAIL("retries exhausted after %.0f ms, outside %.0f..%.0f ms",
		       t * 1e3, 0.5 * predict * 1e3, 4 * predict * 1e3);
	T_EQ(t_qp_state(q.qp), IBV_QPS_ERR);
	if (x->port_events)
		expect_port_event(x, IBV_EVENT_PORT_ACTIVE);
	wait_port_active(x, PORT_EVENT_MS);
	xh_sync(x);
	xh_qp_destroy(&q);
	check_path(x);
}
