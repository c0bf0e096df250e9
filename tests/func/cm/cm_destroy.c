/* SPDX-License-Identifier: MIT */
/*
 * Letting go in the middle: whoever destroys an id, or exits, while a
 * connection is being made or is up, the other side hears of it:
 *   the client destroyed before the server answered: REJECTED (timeout, 4)
 *   the server's new id destroyed before accepting:  REJECTED (28)
 *   the listener destroyed with a request not yet fetched: REJECTED (28)
 *   a connected process exits without a word:         DISCONNECTED
 * and the daemon is left with nothing of theirs.
 */
#include <unistd.h>

#include "t_cm.h"

#define REJ_TIMEOUT 4
#define REJ_CONSUMER_DEFINED 28

static struct rdma_cm_id *start(struct rdma_event_channel *ach, uint16_t port)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_cm_id *id;

	T_EQ(rdma_create_id(ach, &id, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, id, port);
	t_cm_qp(id, IBV_QPT_RC);
	T_EQ(rdma_connect(id, &cp), 0);
	return id;
}

static void drop(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	T_EQ(rdma_destroy_id(id), 0);
}

/* Forked before the parent touches the CM: a process of its own. */
static int child(int fd, void *arg)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	uint16_t port;

	t_sock_recv(fd, &port, sizeof(port));
	ch = t_cm_channel();
	id = start(ch, port);

	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_ESTABLISHED, 0, id);
	t_sock_sync(fd);
	_exit(0); /* no disconnect, no destroy: the daemon cleans up */
}

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	struct t_child kid;
	uint16_t port;

	t_init("cm_destroy");
	t_fork(&kid, child, NULL);
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);

	/* The client gives up first. */
	client = start(ach, port);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	drop(client);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_REJECTED, REJ_TIMEOUT, server);
	drop(server);

	/* The server's new id goes before it accepts. */
	client = start(ach, port);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	drop(server);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED,
			client);
	drop(client);

	/* The listener goes with a request nobody fetched. */
	client = start(ach, port);
	T_ASSERT(t_fd_readable(pch->fd, T_WAIT_MS));
	T_EQ(rdma_destroy_id(listen), 0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_REJECTED, REJ_CONSUMER_DEFINED,
			client);
	drop(client);
	/* Its request's count on the fd was left behind: reading it finds
	 * nothing, and the channel stays usable. */
	T_CM_EXPECT_NONE(pch, 100);

	/* A connected process dies. */
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	t_sock_send(kid.fd, &port, sizeof(port));
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(server, IBV_QPT_RC);
	T_EQ(rdma_accept(server, &cp), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	t_sock_sync(kid.fd);
	T_EQ(t_child_wait(&kid, T_WAIT_MS), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0, server);
	T_EQ(rdma_disconnect(server), 0);
	drop(server);
	T_EQ(rdma_destroy_id(listen), 0);

	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
