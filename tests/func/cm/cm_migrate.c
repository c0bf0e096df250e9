/* SPDX-License-Identifier: MIT */
/*
 * rdma_migrate_id: an id's events go to its new channel from then on,
 * those already waiting included (a listener takes its requests along),
 * and the old channel is left with nothing to read.
 */
#include "t_cm.h"

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *c1, *c2, *c3, *c4;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	uint16_t port;

	t_init("cm_migrate");
	c1 = t_cm_channel();
	c2 = t_cm_channel();
	c3 = t_cm_channel();
	c4 = t_cm_channel();
	port = t_cm_listen(c1, &listen, RDMA_PS_TCP);
	T_EQ(rdma_create_id(c2, &client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(c2, client, port);
	t_cm_qp(client, IBV_QPT_RC);
	T_EQ(rdma_connect(client, &cp), 0);

	/* The request waits on c1; the listener moves to c3 with it. */
	T_ASSERT(t_fd_readable(c1->fd, T_WAIT_MS));
	T_EQ(rdma_migrate_id(listen, c3), 0);
	T_PTR_EQ(listen->channel, c3);
	T_CM_EXPECT_NONE(c1, 100);
	ev = T_CM_EXPECT(c3, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_PTR_EQ(server->channel, c3);
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(server, IBV_QPT_RC);
	T_EQ(rdma_accept(server, &cp), 0);
	T_CM_EXPECT_ACK(c2, RDMA_CM_EVENT_ESTABLISHED, 0, client);
	T_CM_EXPECT_ACK(c3, RDMA_CM_EVENT_ESTABLISHED, 0, server);

	/* The client moves to c4 and hears the end of it there. */
	T_EQ(rdma_migrate_id(client, c4), 0);
	T_EQ(rdma_disconnect(server), 0);
	T_CM_EXPECT_ACK(c4, RDMA_CM_EVENT_DISCONNECTED, 0, client);
	T_CM_EXPECT_NONE(c2, 50);
	T_EQ(rdma_disconnect(client), 0);
	T_CM_EXPECT_ACK(c3, RDMA_CM_EVENT_DISCONNECTED, 0, server);

	rdma_destroy_qp(client);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(client), 0);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(listen), 0);
	/* The channels they left are empty and can go. */
	rdma_destroy_event_channel(c1);
	rdma_destroy_event_channel(c2);
	rdma_destroy_event_channel(c3);
	rdma_destroy_event_channel(c4);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
