/* SPDX-License-Identifier: MIT */
/*
 * RC through the CM on 127.0.0.1: every event of both sides in order,
 * with its status and parameters; the QPs in RTS pointing at each other
 * with matching PSNs; data both ways; disconnect from the active side;
 * TIMEWAIT_EXIT on both sides afterwards.
 */
#include <arpa/inet.h>

#include "t_cm.h"

static void check_qp(struct rdma_cm_id *id, struct rdma_cm_id *peer)
{
	struct ibv_qp_attr a, pa;
	struct ibv_qp_init_attr ia;

	T_EQ(ibv_query_qp(id->qp, &a,
			  IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_SQ_PSN |
				  IBV_QP_RQ_PSN | IBV_QP_AV | IBV_QP_PATH_MTU,
			  &ia),
	     0);
	T_EQ(ibv_query_qp(peer->qp, &pa, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &ia),
	     0);
	T_EQ(a.qp_state, IBV_QPS_RTS);
	T_EQ(a.dest_qp_num, peer->qp->qp_num);
	/* What one sends first is what the other expects first. */
	T_EQ(a.rq_psn, pa.sq_psn);
	T_EQ(a.sq_psn, pa.rq_psn);
	T_EQ(a.ah_attr.is_global, 1);
	T_ASSERT(!memcmp(a.ah_attr.grh.dgid.raw,
			 id->route.addr.addr.ibaddr.dgid.raw, 16));
	T_GE(a.path_mtu, IBV_MTU_1024);
}

int main(void)
{
	static const char hello[] = "connect request private data";
	static const char reply[] = "accept reply private data";
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	struct sockaddr_in *sin;
	struct ibv_mr *cmr, *smr;
	uint16_t port;

	t_init("cm_connect");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	/* Bound to 127.0.0.1: no device, as in the kernel (cma_any_addr). */
	T_ASSERT(listen->verbs == NULL);

	T_EQ(rdma_create_id(ach, &client, (void *)0x1234, RDMA_PS_TCP), 0);
	T_EQ(client->qp_type, IBV_QPT_RC);
	t_cm_resolve(ach, client, port);
	T_EQ(ntohs(rdma_get_dst_port(client)), port);
	T_NE(rdma_get_src_port(client), 0);
	sin = (struct sockaddr_in *)rdma_get_local_addr(client);
	T_EQ(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	T_STR_EQ(ibv_get_device_name(client->verbs->device), "softrdma0");
	/* One context per device per process, shared by its ids. */
	T_ASSERT(client->verbs != NULL);
	t_cm_qp(client, IBV_QPT_RC);

	cp.private_data = hello;
	cp.private_data_len = sizeof(hello);
	T_EQ(rdma_connect(client, &cp), 0);

	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_PTR_EQ(ev->listen_id, listen);
	server = ev->id;
	T_ASSERT(server != listen);
	T_PTR_EQ(server->channel, pch);
	T_PTR_EQ(server->verbs, client->verbs);
	/* What the client offered, seen from the server. */
	T_EQ(ev->param.conn.responder_resources, 1);
	T_EQ(ev->param.conn.initiator_depth, 1);
	T_EQ(ev->param.conn.qp_num, client->qp->qp_num);
	T_EQ(ev->param.conn.retry_count, 7);
	T_EQ(ev->param.conn.rnr_retry_count, 7);
	/* The kernel reports the whole area after its header: 56 bytes. */
	T_EQ(ev->param.conn.private_data_len, 56);
	T_MEMEQ(ev->param.conn.private_data, hello, sizeof(hello));
	T_EQ(ntohs(rdma_get_src_port(server)), port);
	T_EQ(rdma_get_dst_port(server), rdma_get_src_port(client));
	T_EQ(rdma_ack_cm_event(ev), 0);

	t_cm_qp(server, IBV_QPT_RC);
	cp.private_data = reply;
	cp.private_data_len = sizeof(reply);
	T_EQ(rdma_accept(server, &cp), 0);

	/* The library turns the reply into RTR/RTS, RTU and ESTABLISHED. */
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_ESTABLISHED, 0, client);
	T_EQ(ev->param.conn.private_data_len, 196);
	T_MEMEQ(ev->param.conn.private_data, reply, sizeof(reply));
	T_EQ(ev->param.conn.qp_num, server->qp->qp_num);
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	T_PTR_EQ(client->context, (void *)0x1234);

	check_qp(client, server);
	check_qp(server, client);

	cmr = t_cm_mr(client, 4096);
	smr = t_cm_mr(server, 4096);
	t_cm_send_check(client, cmr, server, smr, 4096, 1);
	t_cm_send_check(server, smr, client, cmr, 100, 2);

	/* Active side first: the passive side hears of it, then answers. */
	T_EQ(rdma_disconnect(client), 0);
	T_EQ(t_qp_state(client->qp), IBV_QPS_ERR);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0, server);
	T_CM_EXPECT_NONE(ach, 100); /* nothing until the DREP */
	T_EQ(rdma_disconnect(server), 0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_DISCONNECTED, 0, client);
	/* Once only. */
	T_NEG_ERRNO(rdma_disconnect(server), EINVAL);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, server);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, client);

	t_cm_mr_free(cmr);
	t_cm_mr_free(smr);
	rdma_destroy_qp(client);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(client), 0);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(listen), 0);
	T_CM_EXPECT_NONE(pch, 50);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	/* Nothing left behind in the daemon. */
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
