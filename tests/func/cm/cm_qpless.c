/* SPDX-License-Identifier: MIT */
/*
 * Ids without QPs of their own (rping -q, UCX): the application makes its
 * QPs with libibverbs and moves them with rdma_init_qp_attr; the client
 * gets CONNECT_RESPONSE and finishes with rdma_establish, the server gets
 * ESTABLISHED; data flows; the options TOS and ACK_TIMEOUT show in the
 * attributes the CM gives.
 */
#include "t_cm.h"

static struct ibv_qp *own_qp(struct rdma_cm_id *id, struct ibv_cq **cq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_pd *pd = T_NONNULL(ibv_alloc_pd(id->verbs));

	*cq = T_NONNULL(ibv_create_cq(id->verbs, 16, NULL, NULL, 0));
	t_qp_init_attr(&ia, IBV_QPT_RC, *cq, *cq);
	return T_NONNULL(ibv_create_qp(pd, &ia));
}

static void move(struct rdma_cm_id *id, struct ibv_qp *qp,
		 enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask;

	T_EQ(rdma_init_qp_attr(id, &a, &mask), 0);
	T_EQ(a.qp_state, state);
	T_OK(ibv_modify_qp(qp, &a, mask));
}

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 6,
				      .rnr_retry_count = 5 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct ibv_qp *cqp, *sqp;
	struct ibv_cq *ccq, *scq;
	struct rdma_cm_event *ev;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct t_buf cb, sb;
	struct t_dev cd = { 0 }, sd = { 0 };
	struct ibv_wc wc;
	uint8_t tos = 64, timeout = 16;
	int mask;
	uint16_t port;

	t_init("cm_qpless");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);
	T_EQ(rdma_set_option(client, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos,
			     sizeof(tos)),
	     0);
	T_EQ(rdma_set_option(client, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			     &timeout, sizeof(timeout)),
	     0);
	t_cm_resolve(ach, client, port);
	/* Before a connection: only INIT. */
	a.qp_state = IBV_QPS_RTR;
	T_NEG_ERRNO(rdma_init_qp_attr(client, &a, &mask), EINVAL);
	cqp = own_qp(client, &ccq);
	move(client, cqp, IBV_QPS_INIT);
	cp.qp_num = cqp->qp_num;
	T_EQ(rdma_connect(client, &cp), 0);

	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(ev->param.conn.qp_num, cqp->qp_num);
	T_EQ(ev->param.conn.retry_count, 6);
	T_EQ(ev->param.conn.rnr_retry_count, 5);
	T_EQ(rdma_ack_cm_event(ev), 0);
	sqp = own_qp(server, &scq);
	move(server, sqp, IBV_QPS_INIT);
	move(server, sqp, IBV_QPS_RTR);
	move(server, sqp, IBV_QPS_RTS);
	cp.qp_num = sqp->qp_num;
	T_EQ(rdma_accept(server, &cp), 0);

	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, client);
	T_EQ(ev->param.conn.qp_num, sqp->qp_num);
	T_EQ(rdma_ack_cm_event(ev), 0);
	move(client, cqp, IBV_QPS_RTR);
	move(client, cqp, IBV_QPS_RTS);
	T_NEG_ERRNO(rdma_establish(server), EINVAL); /* nothing to finish */
	T_EQ(rdma_establish(client), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	T_CM_EXPECT_NONE(ach, 50);
	T_EQ(rdma_notify(server, IBV_EVENT_COMM_EST), 0);

	/* What the CM said is what the QPs hold. */
	T_OK(ibv_query_qp(cqp, &a,
			  IBV_QP_TIMEOUT | IBV_QP_AV | IBV_QP_RNR_RETRY |
				  IBV_QP_RETRY_CNT | IBV_QP_DEST_QPN,
			  &ia));
	T_EQ(a.timeout, timeout);
	T_EQ(a.ah_attr.grh.traffic_class, tos);
	T_EQ(a.retry_cnt, 6);
	T_EQ(a.dest_qp_num, sqp->qp_num);
	T_OK(ibv_query_qp(sqp, &a,
			  IBV_QP_AV | IBV_QP_RETRY_CNT | IBV_QP_DEST_QPN, &ia));
	T_EQ(a.ah_attr.grh.traffic_class, tos); /* from the request */
	T_EQ(a.retry_cnt, 6);
	T_EQ(a.dest_qp_num, cqp->qp_num);

	cd.ctx = client->verbs;
	cd.pd = cqp->pd;
	sd.ctx = server->verbs;
	sd.pd = sqp->pd;
	t_buf_alloc(&cd, &cb, 256, IBV_ACCESS_LOCAL_WRITE);
	t_buf_alloc(&sd, &sb, 256, IBV_ACCESS_LOCAL_WRITE);
	t_fill(cb.p, 256, 3);
	t_post_recv(sqp, 1, sb.mr, sb.p, 256);
	t_post_send(cqp, 2, IBV_WR_SEND, cb.mr, cb.p, 256, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(ccq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(sb.p, 256, 3);
	t_buf_free(&cb);
	t_buf_free(&sb);

	t_cm_disconnect(pch, ach, client, server);
	T_OK(ibv_destroy_qp(cqp));
	T_OK(ibv_destroy_qp(sqp));
	T_OK(ibv_destroy_cq(ccq));
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_dealloc_pd(cd.pd));
	T_OK(ibv_dealloc_pd(sd.pd));
	T_EQ(rdma_destroy_id(client), 0);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
