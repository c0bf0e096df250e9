/* SPDX-License-Identifier: MIT */
/*
 * The IB CM's timers, with the daemon in this process and time moved on
 * by hand (what takes the kernel's CM a minute and a half takes a moment
 * here):
 *   - a REQ nobody answers goes out again every 2 * 4.096 us * 2^18 +
 *     4.096 us * 2^20 (6144 ms, the kernel's rounding), 15 times, then
 *     the id gets UNREACHABLE with -ETIMEDOUT;
 *   - a SIDR_REQ likewise every 4096 ms;
 *   - a REQ repeated to a server that has not answered yet gets an MRA
 *     (the kernel's delayed MRA), which gives the client 2^24 * 4.096 us
 *     more, and the connection still completes;
 *   - the peer vanishes (QP1 drops everything, a fault rule): the DREQ
 *     goes out again every 6144 ms, 15 times, then DISCONNECTED with
 *     -ETIMEDOUT, and TIMEWAIT_EXIT one TIMEWAIT (2^ack_timeout *
 *     4.096 us) later.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cm/cm.h"
#include "daemon/net/net.h"
#include "daemon/transport/wire_ctl.h"
#include "tests/unit/t_cm_core.h"

#define MS 1000000ull

static struct t_core t;
static void pump(void)
{
	tc_pump(&t);
}

static int cmd(struct srd_client *c, uint32_t op, const void *req, uint32_t len,
	       void *rep, size_t rep_len)
{
	return tc_cmd(&t, c, op, req, len, rep, rep_len);
}

static void expect_event(struct srd_client *c, uint32_t handle, uint32_t event,
			 int status)
{
	struct srd_cm_event_rep ev;

	T_EQ(cmd(c, SRD_CMD_CM_GET_EVENT, NULL, 0, &ev, sizeof(ev)), 0);
	T_EQ(ev.event, event);
	T_EQ(ev.status, status);
	if (handle != SRD_NO_HANDLE)
		T_EQ(ev.handle, handle);
}

static void no_event(struct srd_client *c)
{
	T_EQ(cmd(c, SRD_CMD_CM_GET_EVENT, NULL, 0, NULL, 0), -EAGAIN);
}

static uint32_t new_id(struct srd_client *c, uint32_t ps, uint32_t qp_type)
{
	return tc_new_id(&t, c, ps, qp_type);
}

static void resolve(struct srd_client *c, uint32_t h, const char *ip,
		    uint16_t port)
{
	struct srd_cm_resolve_addr_req ra = { .handle = h };
	struct srd_cm_resolve_route_req rr = { .handle = h };

	tc_sin(&ra.dst, ip, port);
	T_EQ(cmd(c, SRD_CMD_CM_RESOLVE_ADDR, &ra, sizeof(ra), NULL, 0), 0);
	expect_event(c, h, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	T_EQ(cmd(c, SRD_CMD_CM_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0), 0);
	expect_event(c, h, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static void connect_id(struct srd_client *c, uint32_t h)
{
	struct srd_cm_connect_req req = { .handle = h };

	req.p.qp_num = 0x123;
	req.p.responder_resources = req.p.initiator_depth = 1;
	req.p.retry_count = req.p.rnr_retry_count = 7;
	T_EQ(cmd(c, SRD_CMD_CM_CONNECT, &req, sizeof(req), NULL, 0), 0);
}

/* The real-time window in which the last action that armed a CM timer
 * ran.  The CM arms a timer at its clock's now plus the interval, so the
 * deadline lies in this window moved by the interval, however slowly
 * the test runs. */
static uint64_t armed_lo, armed_hi;

#define ARMING(stmt)                     \
	do {                             \
		armed_lo = srd_now_ns(); \
		stmt;                    \
		armed_hi = srd_now_ns(); \
	} while (0)

/* Time runs on to the CM's next timer: it fires; with ms, it must have
 * been armed for ms milliseconds (to the ms).  Its expiry arms the next
 * timers.  (A wake-up for a timer disarmed meanwhile finds nothing to
 * do: time runs on to the next.) */
static void fire_armed(uint64_t ms)
{
	uint64_t lo = armed_lo, hi = armed_hi, at;
	bool work;

	do {
		at = cm_next_deadline(&t.d);
		T_ASSERT(at != UINT64_MAX);
		ARMING(work = cm_timers(t.d.cm, at));
	} while (!work);
	pump();
	if (ms && (at + MS < lo + ms * MS || at > hi + ms * MS + MS))
		T_FAIL("timer armed for %" PRIu64 " ms, %.3f to %.3f ms "
		       "after it was set (want %" PRIu64 ")",
		       ms, (double)(at - hi) / MS, (double)(at - lo) / MS, ms);
}

static void fire(void)
{
	fire_armed(0);
}

/* A request to nobody: retries at its interval, then UNREACHABLE. */
static void unanswered(struct srd_client *c, uint32_t ps, uint32_t qp_type,
		       uint64_t interval_ms)
{
	struct srd_cm_stats_rep st0, st1;
	uint32_t h = new_id(c, ps, qp_type);

	/* 127.0.0.2 is routed through lo but is none of our GIDs: the
	 * MADs leave the device and nobody answers. */
	resolve(c, h, "127.0.0.2", 4000);
	cm_stats(&t.d, &st0);
	ARMING(connect_id(c, h));
	for (int i = 0; i < CM_MAX_RETRIES; i++) {
		fire_armed(interval_ms);
		no_event(c);
	}
	fire();
	expect_event(c, h, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	cm_stats(&t.d, &st1);
	T_EQ(st1.retransmits - st0.retransmits, CM_MAX_RETRIES);
	T_EQ(st1.timeouts - st0.timeouts, 1);
	T_EQ(st1.mad_tx - st0.mad_tx, CM_MAX_RETRIES + 1);
	T_EQ(st1.conns, st0.conns);
	T_EQ(cmd(c, SRD_CMD_CM_DESTROY_ID, &h, sizeof(struct srd_handle_req),
		 NULL, 0),
	     0);
}

/* The established pair (client h): its peer stops answering. */
static void dreq_unanswered(struct srd_client *c, uint32_t h, uint32_t server,
			    struct cm_conn *conn)
{
	struct srd_cm_stats_rep st0, st1;
	struct srd_handle_req req = { .handle = h };
	char err[128];
	uint64_t timewait;

	T_EQ(srd_net_fault_add(&t.d, "drop dir=rx qpn=1", err, sizeof(err)), 0);
	cm_stats(&t.d, &st0);
	ARMING(T_EQ(cmd(c, SRD_CMD_CM_DISCONNECT, &req, sizeof(req), NULL, 0),
		    0));
	T_EQ(conn->state, CM_DREQ_SENT);
	no_event(c);
	/* 16 x 6144 ms after rdma_disconnect, as predicted. */
	for (int i = 0; i < CM_MAX_RETRIES; i++) {
		fire_armed(6144);
		no_event(c);
	}
	fire_armed(6144);
	expect_event(c, h, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
	no_event(c);
	T_EQ(conn->state, CM_TIMEWAIT);
	cm_stats(&t.d, &st1);
	T_EQ(st1.retransmits - st0.retransmits, CM_MAX_RETRIES);
	T_EQ(st1.timeouts - st0.timeouts, 1);
	T_EQ(st1.mad_tx - st0.mad_tx, CM_MAX_RETRIES + 1);
	/* TIMEWAIT: the ACK timeout the REP gave (the connection is freed
	 * when it ends). */
	timewait = cm_time_ns(conn->ack_timeout) / MS;
	fire_armed(timewait);
	expect_event(c, h, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	no_event(c);
	/* The server never heard: still connected, as with a real loss. */
	srd_net_fault_clear(&t.d);
	T_EQ(cmd(c, SRD_CMD_CM_DESTROY_ID, &h, sizeof(struct srd_handle_req),
		 NULL, 0),
	     0);
	T_EQ(cmd(c, SRD_CMD_CM_DESTROY_ID, &server,
		 sizeof(struct srd_handle_req), NULL, 0),
	     0);
}

int main(void)
{
	struct srd_cm_bind_req bind = { 0 };
	struct srd_cm_listen_req lr = { .backlog = 4 };
	struct srd_cm_accept_req acc = { 0 };
	struct srd_cm_event_rep ev;
	struct srd_client *c;
	struct cm_conn *conn = NULL;
	uint32_t lh, h;
	uint64_t mra_lo, mra_hi;

	t_core_init(&t);
	c = t.c;
	T_EQ(cmd(c, SRD_CMD_CM_OPEN, NULL, 0, NULL, 0), 0);
	T_ASSERT(t.d.cm != NULL);

	unanswered(c, RDMA_PS_TCP, IBV_QPT_RC, 6144);
	unanswered(c, RDMA_PS_UDP, IBV_QPT_UD, 4096);

	/* A slow server: the repeated REQ is answered with an MRA. */
	lh = new_id(c, RDMA_PS_TCP, IBV_QPT_RC);
	bind.handle = lh;
	tc_sin(&bind.addr, "127.0.0.1", 5000);
	T_EQ(cmd(c, SRD_CMD_CM_BIND, &bind, sizeof(bind), NULL, 0), 0);
	lr.handle = lh;
	T_EQ(cmd(c, SRD_CMD_CM_LISTEN, &lr, sizeof(lr), NULL, 0), 0);
	h = new_id(c, RDMA_PS_TCP, IBV_QPT_RC);
	resolve(c, h, "127.0.0.1", 5000);
	ARMING(connect_id(c, h));
	T_EQ(cmd(c, SRD_CMD_CM_GET_EVENT, NULL, 0, &ev, sizeof(ev)), 0);
	T_EQ(ev.event, RDMA_CM_EVENT_CONNECT_REQUEST);
	T_EQ(ev.listen_handle, lh);
	/* The client's REQ timer: the REQ again, and the server's MRA
	 * comes back while the timers run. */
	mra_lo = srd_now_ns();
	fire_armed(6144);
	mra_hi = srd_now_ns();
	list_for_each (&t.d.cm->conns, it) {
		struct cm_conn *x = list_entry(it, struct cm_conn, node);

		if (!x->passive)
			conn = x;
	}
	T_ASSERT(conn != NULL);
	T_EQ(conn->state, CM_MRA_REQ_RCVD);
	/* 4.096 us * 2^24 for the server, plus the ACK timeout. */
	T_ASSERT(conn->deadline + MS >= mra_lo + (65536 + 2048) * MS &&
		 conn->deadline <= mra_hi + (65536 + 2048) * MS + MS);
	/* The server answers at last. */
	acc.handle = ev.handle;
	acc.p.qp_num = 0x456;
	acc.p.responder_resources = acc.p.initiator_depth = 1;
	T_EQ(cmd(c, SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	expect_event(c, h, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	acc.handle = h;
	T_EQ(cmd(c, SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	expect_event(c, ev.handle, RDMA_CM_EVENT_ESTABLISHED, 0);
	T_EQ(conn->state, CM_ESTABLISHED);
	no_event(c);

	dreq_unanswered(c, h, ev.handle, conn);

	t_core_fini(&t);
	printf("PASS cm_timeouts\n");
	return T_EXIT_PASS;
}
