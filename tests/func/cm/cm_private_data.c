/* SPDX-License-Identifier: MIT */
/*
 * Private data at its limits, as the kernel's CM allows them for an IP
 * port space: 56 bytes in a request (92 less the CMA header), 196 in a
 * reply, 148 in a reject; one byte more is EINVAL and sends nothing.
 * Every byte arrives as sent.
 */
#include "t_cm.h"

static uint8_t data[256];

static struct rdma_cm_id *request(struct rdma_event_channel *pch,
				  struct rdma_event_channel *ach,
				  struct rdma_cm_id **client, uint16_t port,
				  uint8_t len)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *server;

	T_EQ(rdma_create_id(ach, client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, *client, port);
	t_cm_qp(*client, IBV_QPT_RC);
	cp.private_data = data;
	if (len == 56) {
		cp.private_data_len = len + 1;
		T_NEG_ERRNO(rdma_connect(*client, &cp), EINVAL);
		T_CM_EXPECT_NONE(pch, 50);
	}
	cp.private_data_len = len;
	T_EQ(rdma_connect(*client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	/* Always the whole area, zeroes after what was sent. */
	T_EQ(ev->param.conn.private_data_len, 56);
	T_MEMEQ(ev->param.conn.private_data, data, len);
	for (unsigned int i = len; i < 56; i++)
		T_EQ(((const uint8_t *)ev->param.conn.private_data)[i], 0);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	return server;
}

/* The client goes first; a connected server hears it (a DREQ). */
static void done(struct rdma_event_channel *pch, struct rdma_cm_id *client,
		 struct rdma_cm_id *server, bool connected)
{
	rdma_destroy_qp(client);
	T_EQ(rdma_destroy_id(client), 0);
	if (connected)
		T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0, server);
	if (server->qp)
		rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(server), 0);
}

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	uint16_t port;

	t_init("cm_private_data");
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);

	/* Request 56 and reply 196. */
	server = request(pch, ach, &client, port, 56);
	t_cm_qp(server, IBV_QPT_RC);
	cp.private_data = data;
	cp.private_data_len = 197;
	T_NEG_ERRNO(rdma_accept(server, &cp), EINVAL);
	cp.private_data_len = 196;
	T_EQ(rdma_accept(server, &cp), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_ESTABLISHED, 0, client);
	T_EQ(ev->param.conn.private_data_len, 196);
	T_MEMEQ(ev->param.conn.private_data, data, 196);
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	done(pch, client, server, true);

	/* Reject 148. */
	server = request(pch, ach, &client, port, 0);
	T_NEG_ERRNO(rdma_reject(server, data, 149), EINVAL);
	T_EQ(rdma_reject(server, data, 148), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_REJECTED, 28, client);
	T_EQ(ev->param.conn.private_data_len, 148);
	T_MEMEQ(ev->param.conn.private_data, data, 148);
	T_EQ(rdma_ack_cm_event(ev), 0);
	done(pch, client, server, false);

	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	t_pass();
}
