/* SPDX-License-Identifier: MIT */
/*
 * The synchronous style of rdma_server/rdma_client: rdma_getaddrinfo,
 * rdma_create_ep with a QP, rdma_get_request, rdma_accept and
 * rdma_connect that return when the connection is up, and the
 * rdma_verbs.h helpers for data; a server thread and a client.  Then a
 * synchronous connect to a port nobody listens on fails at once with
 * ECONNREFUSED.
 */
#include <pthread.h>
#include <stdio.h>

#include <rdma/rdma_verbs.h>

#include "t_cm.h"

static char port_str[16];
static uint8_t sbuf[64], cbuf[64];

static void qp_attr(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->cap.max_send_wr = a->cap.max_recv_wr = 4;
	a->cap.max_send_sge = a->cap.max_recv_sge = 1;
	a->sq_sig_all = 1;
}

static void *server(void *arg)
{
	struct rdma_cm_id *listen = arg, *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	T_EQ(rdma_get_request(listen, &id), 0);
	T_ASSERT(id->qp != NULL); /* made from the endpoint's attributes */
	mr = T_NONNULL(rdma_reg_msgs(id, sbuf, sizeof(sbuf)));
	T_EQ(rdma_post_recv(id, NULL, sbuf, sizeof(sbuf), mr), 0);
	T_EQ(rdma_accept(id, NULL), 0);
	T_EQ(rdma_get_recv_comp(id, &wc), 1);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_EQ(wc.byte_len, sizeof(sbuf));
	T_EQ(rdma_post_send(id, NULL, sbuf, sizeof(sbuf), mr, 0), 0);
	T_EQ(rdma_get_send_comp(id, &wc), 1);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	/* The client says goodbye; rdma_disconnect answers it. */
	T_EQ(rdma_dereg_mr(mr), 0);
	T_EQ(rdma_disconnect(id), 0);
	rdma_destroy_ep(id);
	return NULL;
}

int main(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *listen, *id;
	struct ibv_qp_init_attr attr;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	pthread_t th;

	t_init("cm_sync");
	hints.ai_flags = RAI_PASSIVE;
	T_EQ(rdma_getaddrinfo("127.0.0.1", "0", &hints, &res), 0);
	T_EQ(res->ai_family, AF_INET);
	T_EQ(res->ai_qp_type, IBV_QPT_RC);
	T_ASSERT(res->ai_src_addr && !res->ai_dst_addr);
	qp_attr(&attr);
	T_EQ(rdma_create_ep(&listen, res, NULL, &attr), 0);
	rdma_freeaddrinfo(res);
	T_EQ(rdma_listen(listen, 1), 0);
	snprintf(port_str, sizeof(port_str), "%u",
		 ntohs(rdma_get_src_port(listen)));
	T_EQ(pthread_create(&th, NULL, server, listen), 0);

	hints.ai_flags = 0;
	T_EQ(rdma_getaddrinfo("127.0.0.1", port_str, &hints, &res), 0);
	T_ASSERT(res->ai_dst_addr && !res->ai_src_addr);
	qp_attr(&attr);
	T_EQ(rdma_create_ep(&id, res, NULL, &attr), 0);
	T_ASSERT(id->qp && id->verbs);
	mr = T_NONNULL(rdma_reg_msgs(id, cbuf, sizeof(cbuf)));
	T_EQ(rdma_post_recv(id, NULL, cbuf, sizeof(cbuf), mr), 0);
	T_EQ(rdma_connect(id, NULL), 0);
	T_EQ(t_qp_state(id->qp), IBV_QPS_RTS);
	memset(cbuf, 0x5a, sizeof(cbuf));
	T_EQ(rdma_post_send(id, NULL, cbuf, sizeof(cbuf), mr, 0), 0);
	T_EQ(rdma_get_send_comp(id, &wc), 1);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_EQ(rdma_get_recv_comp(id, &wc), 1);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	for (size_t i = 0; i < sizeof(cbuf); i++)
		T_EQ(cbuf[i], 0x5a);
	/* Synchronous: returns once the server answered. */
	T_EQ(rdma_disconnect(id), 0);
	T_EQ(rdma_dereg_mr(mr), 0);
	rdma_destroy_ep(id);
	T_EQ(pthread_join(th, NULL), 0);
	rdma_destroy_ep(listen);

	/* Nobody listens there any more. */
	T_EQ(rdma_create_ep(&id, res, NULL, NULL), 0);
	T_NEG_ERRNO(rdma_connect(id, NULL), EINVAL); /* no QP, no params */
	{
		struct rdma_conn_param cp = { .qp_num = 1 };

		T_NEG_ERRNO(rdma_connect(id, &cp), ECONNREFUSED);
	}
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
