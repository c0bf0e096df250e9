/* SPDX-License-Identifier: MIT */
/*
 * Rejecting: the server rejects a request with private data, the client
 * sees REJECTED with the IB CM's consumer-defined reason (28) and the
 * data; and a client without a QP of its own rejects the server's reply
 * (CONNECT_RESPONSE), which the server sees as REJECTED too.
 */
#include "t_cm.h"

#define REJ_CONSUMER_DEFINED 28

int main(void)
{
	static const char why[] = "not today";
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	uint16_t port;

	t_init("cm_reject");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);

	/* 1. The server says no. */
	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, client, port);
	t_cm_qp(client, IBV_QPT_RC);
	T_EQ(rdma_connect(client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_EQ(rdma_reject(server, why, sizeof(why)), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED,
			 client);
	T_EQ(ev->param.conn.private_data_len, 148);
	T_MEMEQ(ev->param.conn.private_data, why, sizeof(why));
	T_EQ(rdma_ack_cm_event(ev), 0);
	/* Nothing left to answer: the server's id is done with. */
	T_NEG_ERRNO(rdma_accept(server, &cp), EINVAL);
	T_NEG_ERRNO(rdma_reject(server, NULL, 0), EINVAL);
	T_EQ(rdma_destroy_id(server), 0);
	rdma_destroy_qp(client);
	T_EQ(rdma_destroy_id(client), 0);
	T_CM_EXPECT_NONE(pch, 50);
	T_CM_EXPECT_NONE(ach, 50);

	/* 2. A client with no QP of its own gets the reply as such, and
	 * rejects it. */
	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, client, port);
	cp.qp_num = 0x123;
	T_EQ(rdma_connect(client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(ev->param.conn.qp_num, 0x123);
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(server, IBV_QPT_RC);
	T_EQ(rdma_accept(server, &cp), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, client);
	T_EQ(ev->param.conn.qp_num, server->qp->qp_num);
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_EQ(rdma_reject(client, why, 3), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED,
			 server);
	T_MEMEQ(ev->param.conn.private_data, why, 3);
	T_EQ(rdma_ack_cm_event(ev), 0);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(client), 0);

	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	t_pass();
}
