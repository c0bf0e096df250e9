/* SPDX-License-Identifier: MIT */
/*
 * Linux's REQ and REP (tests/vectors/rxe/rping_cm.pcap) fed to our CM,
 * with the daemon in this process: the kernel's REQ to our passive side,
 * its REP to our active side, and what each side then gives its QP for
 * INIT, RTR and RTS must be what the kernel's ib_cm derives from the same
 * messages (cm_req_handler, ib_send_cm_rep, cm_rep_handler,
 * cm_init_qp_*_attr):
 *
 *   - a Starting PSN is what its sender's QP expects to receive: our RQ
 *     PSN is the one in our REQ or REP, our SQ PSN the peer's;
 *   - responder resources and initiator depth change sides;
 *   - the passive QP takes the REQ's retry and RNR retry counts, path MTU
 *     and local ACK timeout (the REP's RNR retry count is for the peer);
 *   - the active QP takes the REP's RNR retry count, and an ACK timeout
 *     from the path's life time and the REP's target ACK delay.
 *
 * Once with the capture's values, then with every field changed so that
 * no two are alike (a swap or a field taken from the wrong message
 * shows), and our device's ACK delay above the path's life time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "daemon/cm/cm.h"
#include "tests/unit/t_cm_core.h"
#include "tests/unit/t_cm_mads.h"

#define MAX_MADS 32
#define PORT 7174 /* the capture's service ID */

static struct t_core t;
static struct cm_msg theirs[MAX_MADS], ours[MAX_MADS];
static unsigned int nours;

static int cmd(uint32_t op, const void *req, uint32_t len, void *rep,
	       size_t rep_len)
{
	return tc_cmd(&t, t.c, op, req, len, rep, rep_len);
}

static struct srd_cm_event_rep next_event(uint32_t want)
{
	struct srd_cm_event_rep ev;

	T_EQ(cmd(SRD_CMD_CM_GET_EVENT, NULL, 0, &ev, sizeof(ev)), 0);
	T_EQ(ev.event, want);
	T_EQ(ev.status, 0);
	return ev;
}

static const struct cm_msg *find(uint16_t attr_id, const struct cm_msg *m,
				 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (m[i].hdr.attr_id == attr_id)
			return &m[i];
	return NULL;
}

/* The last MAD of that kind QP1 posted. */
static const struct cm_msg *posted(uint16_t attr_id)
{
	tcm_sq_collect(&t, ours, MAX_MADS, &nours);
	for (unsigned int i = nours; i-- > 0;)
		if (ours[i].hdr.attr_id == attr_id)
			return &ours[i];
	T_ASSERT(!"posted");
	return NULL;
}

static void gid4(uint8_t *gid, const char *ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	T_ASSERT(inet_pton(AF_INET, ip, gid + 12) == 1);
}

/* What the GRH of a MAD from the kernel at 127.0.0.2 says. */
static void peer_src(struct cm_mad_src *src)
{
	struct srd_device *dev = device_by_index(&t.d, 0);

	memset(src, 0, sizeof(*src));
	src->port = cm_port_get(t.d.cm, dev);
	T_ASSERT(src->port != NULL);
	gid4(src->sgid.raw, "127.0.0.2");
	gid4(src->dgid.raw, "127.0.0.1");
	src->hop_limit = 64;
	src->src_qp = 1;
}

static void qp_attr(uint32_t h, enum ibv_qp_state s,
		    struct srd_cm_init_qp_attr_rep *rep)
{
	struct srd_cm_init_qp_attr_req req = { .handle = h, .qp_state = s };

	memset(rep, 0, sizeof(*rep));
	T_EQ(cmd(SRD_CMD_CM_INIT_QP_ATTR, &req, sizeof(req), rep, sizeof(*rep)),
	     0);
}

/* The kernel's REQ, moved to 127.0.0.2 -> 127.0.0.1, to our listener. */
static void passive(const struct cm_req *kreq, uint32_t qpn)
{
	const struct srd_cm_conn_param acc_p = {
		.qp_num = qpn,
		.responder_resources = 3,
		.initiator_depth = 6,
		.rnr_retry_count = 2,
		.retry_count = 1,
	};
	struct srd_cm_accept_req acc = { .p = acc_p };
	struct srd_cm_init_qp_attr_rep a;
	struct srd_cm_event_rep ev;
	struct cm_mad_src src;
	struct cma_hdr h;
	struct cm_msg m;
	const struct cm_rep *rep;
	const struct cm_req *r = &m.req;

	cm_msg_init(&m, CM_ATTR_REQ, 0x2000000000ull | kreq->local_comm_id);
	m.req = *kreq;
	gid4(m.req.primary.local_gid, "127.0.0.2");
	gid4(m.req.primary.remote_gid, "127.0.0.1");
	T_EQ(cma_hdr_decode(m.req.private_data, CMA_HDR_SIZE, &h), 0);
	T_ASSERT(inet_pton(AF_INET, "127.0.0.2", h.src_addr + 12) == 1);
	T_ASSERT(inet_pton(AF_INET, "127.0.0.1", h.dst_addr + 12) == 1);
	T_EQ(cma_hdr_encode(&h, m.req.private_data, CMA_HDR_SIZE), 0);
	peer_src(&src);
	tcm_sq_collect(&t, ours, MAX_MADS, &nours);
	cm_mad_recv(t.d.cm, &src, &m);
	tc_pump(&t);

	/* What the consumer is told: the REQ seen from our side. */
	ev = next_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	T_EQ(ev.conn.qp_num, r->local_qpn);
	T_EQ(ev.conn.responder_resources, r->initiator_depth);
	T_EQ(ev.conn.initiator_depth, r->responder_resources);
	T_EQ(ev.conn.retry_count, r->retry_count);
	T_EQ(ev.conn.rnr_retry_count, r->rnr_retry_count);
	T_EQ(ev.conn.flow_control, r->flow_control);
	T_EQ(ev.conn.srq, r->srq);

	acc.handle = ev.handle;
	T_EQ(cmd(SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	rep = &posted(CM_ATTR_REP)->rep;
	T_EQ(rep->remote_comm_id, r->local_comm_id);
	T_EQ(rep->local_qpn, qpn);
	T_EQ(rep->responder_resources, acc_p.responder_resources);
	T_EQ(rep->initiator_depth, acc_p.initiator_depth);
	T_EQ(rep->rnr_retry_count, acc_p.rnr_retry_count);
	T_EQ(rep->target_ack_delay,
	     device_by_index(&t.d, 0)->attr.local_ca_ack_delay);
	T_EQ(rep->failover_accepted, 0);
	T_ASSERT(rep->starting_psn <= 0xffffff);
	T_ASSERT(rep->starting_psn != r->starting_psn);

	qp_attr(ev.handle, IBV_QPS_INIT, &a);
	T_EQ(a.attr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC);
	qp_attr(ev.handle, IBV_QPS_RTR, &a);
	T_ASSERT(a.attr_mask & IBV_QP_RQ_PSN);
	T_EQ(a.attr.rq_psn, rep->starting_psn);
	T_EQ(a.attr.dest_qp_num, r->local_qpn);
	T_EQ(a.attr.path_mtu, r->path_mtu);
	T_EQ(a.attr.max_dest_rd_atomic, acc_p.responder_resources);
	T_EQ(a.attr.min_rnr_timer, 0);
	qp_attr(ev.handle, IBV_QPS_RTS, &a);
	T_ASSERT(a.attr_mask & IBV_QP_SQ_PSN);
	T_EQ(a.attr.sq_psn, r->starting_psn);
	T_EQ(a.attr.timeout, r->primary.local_ack_timeout);
	T_EQ(a.attr.retry_cnt, r->retry_count);
	T_EQ(a.attr.rnr_retry, r->rnr_retry_count);
	T_EQ(a.attr.max_rd_atomic, acc_p.initiator_depth);
}

/* Our REQ to 127.0.0.2, answered with the kernel's REP. */
static void active(const struct cm_rep *krep, uint32_t qpn)
{
	const struct srd_cm_conn_param p = {
		.qp_num = qpn,
		.responder_resources = 5,
		.initiator_depth = 4,
		.retry_count = 6,
		.rnr_retry_count = 3,
	};
	struct srd_cm_resolve_addr_req ra = { 0 };
	struct srd_cm_resolve_route_req rr = { 0 };
	struct srd_cm_connect_req con = { .p = p };
	struct srd_cm_init_qp_attr_rep a;
	struct srd_cm_event_rep ev;
	struct cm_mad_src src;
	struct cm_msg m;
	const struct cm_msg *req;
	uint8_t ack_delay = device_by_index(&t.d, 0)->attr.local_ca_ack_delay;
	uint32_t h = tc_new_id(&t, t.c, RDMA_PS_TCP, IBV_QPT_RC);

	ra.handle = rr.handle = con.handle = h;
	tc_sin(&ra.dst, "127.0.0.2", PORT);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ADDR, &ra, sizeof(ra), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	tcm_sq_collect(&t, ours, MAX_MADS, &nours);
	T_EQ(cmd(SRD_CMD_CM_CONNECT, &con, sizeof(con), NULL, 0), 0);
	req = posted(CM_ATTR_REQ);
	T_EQ(req->req.responder_resources, p.responder_resources);
	T_EQ(req->req.initiator_depth, p.initiator_depth);
	T_EQ(req->req.retry_count, p.retry_count);
	T_EQ(req->req.rnr_retry_count, p.rnr_retry_count);
	T_EQ(req->req.primary.local_ack_timeout,
	     cm_ack_timeout(ack_delay, CM_PACKET_LIFE_TIME));

	cm_msg_init(&m, CM_ATTR_REP, req->hdr.tid);
	m.rep = *krep;
	m.rep.remote_comm_id = req->req.local_comm_id;
	peer_src(&src);
	cm_mad_recv(t.d.cm, &src, &m);
	tc_pump(&t);

	ev = next_event(RDMA_CM_EVENT_CONNECT_RESPONSE);
	T_EQ(ev.handle, h);
	T_EQ(ev.conn.qp_num, krep->local_qpn);
	T_EQ(ev.conn.responder_resources, krep->initiator_depth);
	T_EQ(ev.conn.initiator_depth, krep->responder_resources);
	T_EQ(ev.conn.rnr_retry_count, krep->rnr_retry_count);

	qp_attr(h, IBV_QPS_RTR, &a);
	T_EQ(a.attr.rq_psn, req->req.starting_psn);
	T_EQ(a.attr.dest_qp_num, krep->local_qpn);
	T_EQ(a.attr.path_mtu, req->req.path_mtu);
	T_EQ(a.attr.max_dest_rd_atomic, krep->initiator_depth);
	qp_attr(h, IBV_QPS_RTS, &a);
	T_EQ(a.attr.sq_psn, krep->starting_psn);
	T_EQ(a.attr.retry_cnt, p.retry_count);
	T_EQ(a.attr.rnr_retry, krep->rnr_retry_count);
	T_EQ(a.attr.max_rd_atomic, krep->responder_resources);
	/* cm_rep_handler: the path's life time against the REP's delay. */
	T_EQ(a.attr.timeout,
	     cm_ack_timeout(krep->target_ack_delay, CM_PACKET_LIFE_TIME));
}

int main(void)
{
	struct srd_cm_bind_req bind = { 0 };
	struct srd_cm_listen_req lr = { .backlog = 4 };
	const struct cm_msg *kreq, *krep;
	struct cm_req req2;
	struct cm_rep rep2;
	int n = tcm_read_pcap(SRD_RXE_VECTORS_DIR "/rping_cm.pcap", theirs,
			      MAX_MADS);

	if (n == -ENOENT)
		T_FAIL("no capture in %s", SRD_RXE_VECTORS_DIR);
	T_ASSERT(n > 0);
	kreq = find(CM_ATTR_REQ, theirs, (unsigned int)n);
	krep = find(CM_ATTR_REP, theirs, (unsigned int)n);
	T_ASSERT(kreq && krep);
	/* The capture's own evidence: the kernel's active side sent its
	 * first packet with the REP's PSN (asserted here so the vectors
	 * and this test cannot drift apart). */
	T_EQ(kreq->req.starting_psn, 0xf8d62a);
	T_EQ(krep->rep.starting_psn, 0x602e66);

	t_core_init(&t);
	T_EQ(cmd(SRD_CMD_CM_OPEN, NULL, 0, NULL, 0), 0);
	tc_pump(&t);
	tcm_sq_mark(&t);
	bind.handle = lr.handle = tc_new_id(&t, t.c, RDMA_PS_TCP, IBV_QPT_RC);
	tc_sin(&bind.addr, "127.0.0.1", PORT);
	T_EQ(cmd(SRD_CMD_CM_BIND, &bind, sizeof(bind), NULL, 0), 0);
	T_EQ(cmd(SRD_CMD_CM_LISTEN, &lr, sizeof(lr), NULL, 0), 0);

	passive(&kreq->req, 0x12);
	active(&krep->rep, 0x13);

	/* Every field its own value, and a device whose ACK delay exceeds
	 * the path's life time (so the active side's ACK timeout tells the
	 * life time from our own local ACK timeout). */
	req2 = kreq->req;
	req2.local_comm_id ^= 0x5a5a5a5a;
	req2.local_qpn = 0x21;
	req2.starting_psn = 0x123456;
	req2.responder_resources = 7;
	req2.initiator_depth = 2;
	req2.retry_count = 5;
	req2.rnr_retry_count = 4;
	req2.path_mtu = IBV_MTU_512;
	req2.primary.local_ack_timeout = 17;
	passive(&req2, 0x22);
	device_by_index(&t.d, 0)->attr.local_ca_ack_delay = 20;
	rep2 = krep->rep;
	rep2.local_comm_id ^= 0x5a5a5a5a;
	rep2.local_qpn = 0x31;
	rep2.starting_psn = 0xabcdef;
	rep2.responder_resources = 2;
	rep2.initiator_depth = 6;
	rep2.rnr_retry_count = 1;
	rep2.target_ack_delay = 12;
	active(&rep2, 0x23);

	t_core_fini(&t);
	printf("PASS cm_kernel_replay\n");
	return T_EXIT_PASS;
}
