/* SPDX-License-Identifier: MIT */
/*
 * Nobody there: a request for a port nobody listens on is rejected at
 * once with the IB CM's "invalid service ID" (8), as the kernel's CM
 * answers, and the application sees REJECTED with that status within a
 * second; a port somebody listens on, but on another address, is
 * refused by the consumer (28); a SIDR request for an unused UDP port
 * comes back UNREACHABLE with the SIDR status "unsupported" (1).
 */
#include <arpa/inet.h>

#include "t_cm.h"

#define REJ_INVALID_SERVICE_ID 8
#define REJ_CONSUMER_DEFINED 28
#define SIDR_UNSUPPORTED 1

static void connect_to(struct rdma_event_channel *ch, uint16_t port,
		       enum rdma_port_space ps, enum rdma_cm_event_type want,
		       int status)
{
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id;
	uint64_t t0;

	T_EQ(rdma_create_id(ch, &id, NULL, ps), 0);
	t_cm_resolve(ch, id, port);
	t_cm_qp(id, ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
	t0 = t_now_ms();
	T_EQ(rdma_connect(id, &cp), 0);
	T_CM_EXPECT_ACK(ch, want, status, id);
	t_log("%s status %d after %llu ms", rdma_event_str(want), status,
	      (unsigned long long)(t_now_ms() - t0));
	T_LT(t_now_ms() - t0, 1000);
	/* A rejected QP is in the error state, as the kernel leaves it. */
	if (ps != RDMA_PS_UDP)
		T_EQ(t_qp_state(id->qp), IBV_QPS_ERR);
	rdma_destroy_qp(id);
	T_EQ(rdma_destroy_id(id), 0);
}

int main(void)
{
	struct rdma_event_channel *ch, *pch;
	struct rdma_cm_id *listen, *probe;
	struct sockaddr_in6 six = { .sin6_family = AF_INET6,
				    .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	uint16_t port;
	int afonly = 1;

	t_init("cm_unreachable");
	ch = t_cm_channel();
	pch = t_cm_channel();

	/* A port surely unused: one the CM gave out and took back. */
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	T_EQ(rdma_destroy_id(listen), 0);
	connect_to(ch, port, RDMA_PS_TCP, RDMA_CM_EVENT_REJECTED,
		   REJ_INVALID_SERVICE_ID);
	connect_to(ch, port, RDMA_PS_UDP, RDMA_CM_EVENT_UNREACHABLE,
		   SIDR_UNSUPPORTED);
	/* The TCP port space's listener is not the UDP one's. */
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	connect_to(ch, port, RDMA_PS_UDP, RDMA_CM_EVENT_UNREACHABLE,
		   SIDR_UNSUPPORTED);
	T_EQ(rdma_destroy_id(listen), 0);

	/* Listening on ::1 only: 127.0.0.1 on that port is refused. */
	T_EQ(rdma_create_id(pch, &listen, NULL, RDMA_PS_TCP), 0);
	T_EQ(rdma_set_option(listen, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
			     &afonly, sizeof(afonly)),
	     0);
	if (rdma_bind_addr(listen, (struct sockaddr *)&six)) {
		t_log("no ::1 on the device (%s): IPv6 part skipped",
		      strerror(errno));
	} else {
		T_EQ(rdma_listen(listen, 1), 0);
		port = ntohs(rdma_get_src_port(listen));
		connect_to(ch, port, RDMA_PS_TCP, RDMA_CM_EVENT_REJECTED,
			   REJ_CONSUMER_DEFINED);
	}
	T_EQ(rdma_destroy_id(listen), 0);
	T_CM_EXPECT_NONE(pch, 50);

	/* The same id may try again after a rejection. */
	T_EQ(rdma_create_id(ch, &probe, NULL, RDMA_PS_TCP), 0);
	T_EQ(rdma_destroy_id(probe), 0);
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
