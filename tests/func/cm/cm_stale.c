/* SPDX-License-Identifier: MIT */
/*
 * Stale connections, as the kernel's CM detects them: a REQ with a new
 * comm ID from a QP (CA GUID and QPN) that still has a connection here
 * means the peer lost that connection.  The REQ is refused with REJ
 * reason 10 and the old connection is ended with a DREQ.
 *   - through librdmacm: an id without a QP connects naming the QPN of
 *     a connected client: REJECTED status 10, no CONNECT_REQUEST, and
 *     both ends of the old connection see DISCONNECTED;
 *   - a forged REQ on QP1 from the same CA and QPN as a connected
 *     client does the same;
 *   - once the old connection is in TIMEWAIT, the same QP may connect
 *     again.
 */
#include <endian.h>

#include "t_cm.h"

static uint64_t node_guid(struct rdma_cm_id *id)
{
	struct ibv_device_attr a;

	T_OK(ibv_query_device(id->verbs, &a));
	return be64toh(a.node_guid);
}

/* Both ends of p see the connection end from the server's DREQ. */
static void old_conn_ends(struct t_cm_pair *p)
{
	T_CM_EXPECT_ACK(p->ach, RDMA_CM_EVENT_DISCONNECTED, 0, p->client);
	T_EQ(rdma_disconnect(p->client), 0);
	T_CM_EXPECT_ACK(p->pch, RDMA_CM_EVENT_DISCONNECTED, 0, p->server);
}

static struct rdma_cm_id *connect_as(struct rdma_event_channel *ch,
				     uint16_t port, uint32_t qpn)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7,
				      .qp_num = qpn };
	struct rdma_cm_id *id;

	T_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ch, id, port);
	T_EQ(rdma_connect(id, &cp), 0);
	return id;
}

int main(void)
{
	struct srd_cm_stats_rep st0, st1;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct t_cm_pair p;
	struct t_cm_gsi g;
	struct cm_msg m;
	uint32_t qpn;

	t_init("cm_stale");
	ch = t_cm_channel();

	/* Through librdmacm: the client's QPN again, with a new comm ID. */
	t_cm_pair_connect(&p);
	qpn = p.client->qp->qp_num;
	t_cm_stats(&st0);
	id = connect_as(ch, p.port, qpn);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_REJECTED, CM_REJ_STALE_CONN, id);
	old_conn_ends(&p);
	T_CM_EXPECT_NONE(p.pch, 100); /* no CONNECT_REQUEST */
	t_cm_stats(&st1);
	T_EQ(st1.stale - st0.stale, 1);
	T_EQ(rdma_destroy_id(id), 0);

	/* The old connection is in TIMEWAIT now: the QP may connect. */
	id = connect_as(ch, p.port, qpn);
	ev = T_CM_EXPECT(p.pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_EQ(ev->param.conn.qp_num, qpn);
	T_EQ(rdma_reject(ev->id, NULL, 0), 0);
	T_EQ(rdma_destroy_id(ev->id), 0);
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_REJECTED, CM_REJ_CONSUMER_DEFINED,
			id);
	T_EQ(rdma_destroy_id(id), 0);
	t_cm_pair_destroy(&p);

	/* A forged REQ on QP1 from the same CA and QP as a client. */
	t_cm_pair_connect(&p);
	t_cm_gsi_open(&g);
	t_cm_forged_req(&g, &m, p.port);
	m.req.local_comm_id = 0x5a5a0001;
	m.req.local_ca_guid = node_guid(p.client);
	m.req.local_qpn = p.client->qp->qp_num;
	t_cm_stats(&st0);
	t_cm_gsi_send_msg(&g, &m);
	old_conn_ends(&p);
	T_CM_EXPECT_NONE(p.pch, 100);
	t_cm_stats(&st1);
	T_EQ(st1.stale - st0.stale, 1);
	/* Another CA's QP of that number is no stale connection. */
	m.req.local_comm_id = 0x5a5a0002;
	m.req.local_ca_guid = node_guid(p.client) ^ 1;
	t_cm_gsi_send_msg(&g, &m);
	ev = T_CM_EXPECT(p.pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_EQ(rdma_reject(ev->id, NULL, 0), 0);
	T_EQ(rdma_destroy_id(ev->id), 0);
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_stats(&st0);
	T_EQ(st0.stale, st1.stale);
	t_cm_pair_destroy(&p);

	rdma_destroy_event_channel(ch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
