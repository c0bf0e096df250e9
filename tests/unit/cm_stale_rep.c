/* SPDX-License-Identifier: MIT */
/*
 * The stale connection check on the REP side, with the daemon in this
 * process: a REP answering our pending REQ from a QP (CA GUID and QPN)
 * that an established connection here holds is refused with REJ reason
 * 10 (message REP), the established connection gets a DREQ (its peer
 * sees DISCONNECTED), and our request stays pending, as in the kernel's
 * cm_rep_handler.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cm/cm.h"
#include "tests/unit/t_cm_core.h"

static struct t_core t;
static void pump(void)
{
	tc_pump(&t);
}

static int cmd(uint32_t op, const void *req, uint32_t len, void *rep,
	       size_t rep_len)
{
	return tc_cmd(&t, t.c, op, req, len, rep, rep_len);
}

static struct srd_cm_event_rep next_event(uint32_t event)
{
	struct srd_cm_event_rep ev;

	T_EQ(cmd(SRD_CMD_CM_GET_EVENT, NULL, 0, &ev, sizeof(ev)), 0);
	T_EQ(ev.event, event);
	return ev;
}

static uint32_t new_id(void)
{
	return tc_new_id(&t, t.c, RDMA_PS_TCP, IBV_QPT_RC);
}

static void connect_to(uint32_t h, const char *ip, uint16_t port, uint32_t qpn)
{
	struct srd_cm_resolve_addr_req ra = { .handle = h };
	struct srd_cm_resolve_route_req rr = { .handle = h };
	struct srd_cm_connect_req req = { .handle = h };

	tc_sin(&ra.dst, ip, port);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ADDR, &ra, sizeof(ra), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	req.p.qp_num = qpn;
	req.p.responder_resources = req.p.initiator_depth = 1;
	req.p.retry_count = req.p.rnr_retry_count = 7;
	T_EQ(cmd(SRD_CMD_CM_CONNECT, &req, sizeof(req), NULL, 0), 0);
}

static struct cm_conn *active_conn(uint32_t state)
{
	list_for_each (&t.d.cm->conns, it) {
		struct cm_conn *x = list_entry(it, struct cm_conn, node);

		if (!x->passive && x->state == state)
			return x;
	}
	return NULL;
}

int main(void)
{
	struct srd_cm_bind_req bind = { 0 };
	struct srd_cm_listen_req lr = { .backlog = 4 };
	struct srd_cm_accept_req acc = { 0 };
	struct srd_cm_event_rep ev;
	struct srd_cm_stats_rep st0, st1;
	struct cm_conn *est, *pending;
	struct cm_mad_src src = { 0 };
	struct cm_msg m;
	uint32_t lh, server;

	t_core_init(&t);
	T_EQ(cmd(SRD_CMD_CM_OPEN, NULL, 0, NULL, 0), 0);

	/* An established connection: client QPN 0x123, server 0x456. */
	lh = new_id();
	bind.handle = lh;
	tc_sin(&bind.addr, "127.0.0.1", 5000);
	T_EQ(cmd(SRD_CMD_CM_BIND, &bind, sizeof(bind), NULL, 0), 0);
	lr.handle = lh;
	T_EQ(cmd(SRD_CMD_CM_LISTEN, &lr, sizeof(lr), NULL, 0), 0);
	acc.handle = new_id();
	connect_to(acc.handle, "127.0.0.1", 5000, 0x123);
	ev = next_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	server = ev.handle;
	T_EQ(cmd(SRD_CMD_CM_ACCEPT,
		 &(struct srd_cm_accept_req){ .handle = server,
					      .p = { .qp_num = 0x456 } },
		 sizeof(acc), NULL, 0),
	     0);
	next_event(RDMA_CM_EVENT_CONNECT_RESPONSE);
	T_EQ(cmd(SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ESTABLISHED);
	est = active_conn(CM_ESTABLISHED);
	T_ASSERT(est != NULL);
	T_EQ(est->remote_qpn, 0x456);

	/* A request to nobody (127.0.0.2 is no GID of ours)... */
	connect_to(new_id(), "127.0.0.2", 4000, 0x789);
	pending = active_conn(CM_REQ_SENT);
	T_ASSERT(pending != NULL);

	/* ... answered by a REP from the established server's QP. */
	cm_msg_init(&m, CM_ATTR_REP, pending->tid);
	m.rep.local_comm_id = 0x0badf00d;
	m.rep.remote_comm_id = pending->local_id;
	m.rep.local_qpn = 0x456;
	m.rep.local_ca_guid = be64toh(cm_port_dev(pending->port)->node_guid);
	m.rep.starting_psn = 1;
	src.port = pending->port;
	src.sgid = pending->path.dgid;
	src.dgid = pending->path.sgid;
	src.src_qp = 1;
	cm_stats(&t.d, &st0);
	cm_mad_recv(t.d.cm, &src, &m);
	pump();
	cm_stats(&t.d, &st1);
	T_EQ(st1.stale - st0.stale, 1);
	/* REJ and DREQ sent; our request waits on. */
	T_ASSERT(st1.mad_tx - st0.mad_tx >= 2);
	T_EQ(pending->state, CM_REQ_SENT);
	T_EQ(pending->remote_qpn, 0);
	T_EQ(est->state, CM_DREQ_SENT);
	/* The established server got the DREQ. */
	ev = next_event(RDMA_CM_EVENT_DISCONNECTED);
	T_EQ(ev.handle, server);
	T_EQ(cmd(SRD_CMD_CM_GET_EVENT, NULL, 0, NULL, 0), -EAGAIN);

	/* Once that connection is in TIMEWAIT, the same REP is taken. */
	T_EQ(cmd(SRD_CMD_CM_DISCONNECT, &server, sizeof(struct srd_handle_req),
		 NULL, 0),
	     0);
	next_event(RDMA_CM_EVENT_DISCONNECTED); /* the client's, on DREP */
	T_EQ(est->state, CM_TIMEWAIT);
	cm_mad_recv(t.d.cm, &src, &m);
	pump();
	T_EQ(pending->state, CM_MRA_REP_SENT);
	next_event(RDMA_CM_EVENT_CONNECT_RESPONSE);

	t_core_fini(&t);
	printf("PASS cm_stale_rep\n");
	return T_EXIT_PASS;
}
