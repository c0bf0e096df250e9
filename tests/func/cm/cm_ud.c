/* SPDX-License-Identifier: MIT */
/*
 * The UDP port space, through SIDR as the kernel does it: the client's
 * rdma_connect sends a SIDR_REQ, the server's rdma_accept a SIDR_REP, and
 * the client gets ESTABLISHED with the server's QPN, the UDP Q_Key and an
 * address vector, with which it sends a datagram; the server answers
 * through an AH made from the datagram's GRH.  A server's rdma_reject is
 * the SIDR status "rejected" (2) in an UNREACHABLE event.
 */
#include "t_cm.h"

#define UDP_QKEY 0x01234567
#define SIDR_REJECT 2

static void post_recv(struct rdma_cm_id *id, struct ibv_mr *mr)
{
	t_post_recv(id->qp, 1, mr, mr->addr, (uint32_t)mr->length);
}

int main(void)
{
	static const char ask[] = "sidr request data";
	static const char ans[] = "sidr reply data";
	struct rdma_conn_param cp = { 0 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct rdma_cm_event *ev;
	struct ibv_mr *cmr, *smr;
	struct ibv_ah *ah, *back;
	struct ibv_wc wc;
	uint32_t sqpn, sqkey;
	uint16_t port;

	t_init("cm_ud");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_UDP);
	T_EQ(listen->qp_type, IBV_QPT_UD);

	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_UDP), 0);
	t_cm_resolve(ach, client, port);
	t_cm_qp(client, IBV_QPT_UD);
	T_EQ(t_qp_state(client->qp), IBV_QPS_RTS);
	cp.private_data = ask;
	cp.private_data_len = sizeof(ask);
	T_EQ(rdma_connect(client, &cp), 0);

	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(server->qp_type, IBV_QPT_UD);
	/* 216 bytes less the CMA header. */
	T_EQ(ev->param.ud.private_data_len, 180);
	T_MEMEQ(ev->param.ud.private_data, ask, sizeof(ask));
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(server, IBV_QPT_UD);
	smr = t_cm_mr(server, 4096);
	post_recv(server, smr);
	cp.private_data = ans;
	cp.private_data_len = sizeof(ans);
	T_EQ(rdma_accept(server, &cp), 0);

	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_ESTABLISHED, 0, client);
	T_EQ(ev->param.ud.qp_num, server->qp->qp_num);
	T_EQ(ev->param.ud.qkey, UDP_QKEY);
	T_EQ(ev->param.ud.private_data_len, 136);
	T_MEMEQ(ev->param.ud.private_data, ans, sizeof(ans));
	T_EQ(ev->param.ud.ah_attr.is_global, 1);
	sqpn = ev->param.ud.qp_num;
	sqkey = ev->param.ud.qkey;
	ah = T_NONNULL(ibv_create_ah(client->pd, &ev->param.ud.ah_attr));
	T_EQ(rdma_ack_cm_event(ev), 0);
	/* No ESTABLISHED for a datagram server. */
	T_CM_EXPECT_NONE(pch, 50);

	cmr = t_cm_mr(client, 4096);
	t_fill(cmr->addr, 100, 7);
	t_post_ud(client->qp, 2, ah, sqpn, sqkey, cmr, cmr->addr, 100,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(client->send_cq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(server->recv_cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 40 + 100);
	T_EQ(wc.src_qp, client->qp->qp_num);
	T_CHECK_FILL((uint8_t *)smr->addr + 40, 100, 7);

	/* The answer goes back the way the datagram came. */
	back = T_NONNULL(ibv_create_ah_from_wc(server->pd, &wc,
					       (struct ibv_grh *)smr->addr, 1));
	post_recv(client, cmr);
	t_fill(smr->addr, 50, 9);
	t_post_ud(server->qp, 3, back, wc.src_qp, UDP_QKEY, smr, smr->addr, 50,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(server->send_cq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(client->recv_cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL((uint8_t *)cmr->addr + 40, 50, 9);
	T_EQ(ibv_destroy_ah(back), 0);
	T_EQ(ibv_destroy_ah(ah), 0);
	/* A datagram id has no connection to end. */
	T_NEG_ERRNO(rdma_disconnect(client), EINVAL);

	/* A rejected lookup. */
	{
		struct rdma_cm_id *c2, *s2;

		T_EQ(rdma_create_id(ach, &c2, NULL, RDMA_PS_UDP), 0);
		t_cm_resolve(ach, c2, port);
		cp.private_data = NULL;
		cp.private_data_len = 0;
		cp.qp_num = 0x77;
		T_EQ(rdma_connect(c2, &cp), 0);
		ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
		s2 = ev->id;
		T_EQ(rdma_ack_cm_event(ev), 0);
		T_EQ(rdma_reject(s2, ans, 4), 0);
		ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_UNREACHABLE, SIDR_REJECT,
				 c2);
		T_MEMEQ(ev->param.ud.private_data, ans, 4);
		T_EQ(rdma_ack_cm_event(ev), 0);
		T_EQ(rdma_destroy_id(s2), 0);
		T_EQ(rdma_destroy_id(c2), 0);
	}

	t_cm_mr_free(cmr);
	t_cm_mr_free(smr);
	rdma_destroy_qp(client);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(client), 0);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
