/* SPDX-License-Identifier: MIT */
/*
 * RDMA_OPTION_IB_PATH on a RoCE device, as the kernel takes it: after
 * address resolution, an array of struct ibv_path_data whose primary,
 * bidirectional GMP path replaces route resolution; ROUTE_RESOLVED
 * follows at once, the id's path shows the record's MTU, hop limit and
 * traffic class, and the connection's QPs get them.  EINVAL for a length
 * that is no whole number of entries, no such entry, an id whose address
 * is not resolved (or whose route already is), a bad MTU, or GIDs that
 * are not the id's.
 */
#include <arpa/inet.h>
#include <infiniband/sa.h>

#include "t_cm.h"

#define GMP_PATH                                     \
	(IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | \
	 IBV_PATH_FLAG_BIDIRECTIONAL)

static void path_init(struct ibv_path_data *d, uint32_t flags,
		      struct rdma_cm_id *id)
{
	memset(d, 0, sizeof(*d));
	d->flags = flags;
	d->path.sgid = id->route.addr.addr.ibaddr.sgid;
	d->path.dgid = id->route.addr.addr.ibaddr.dgid;
	d->path.flowlabel_hoplimit = htonl(7);
	d->path.tclass = 32;
	d->path.pkey = htons(0xffff);
	d->path.mtu = 2u << 6 | IBV_MTU_1024; /* exactly 1024 */
	d->path.packetlifetime = 18;
}

static void resolve_addr(struct rdma_event_channel *ch, struct rdma_cm_id *id,
			 uint16_t port)
{
	struct sockaddr_in dst;

	t_cm_addr(&dst, port);
	T_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, id);
}

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server, *idle;
	struct ibv_path_data d[3];
	struct rdma_cm_event *ev;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint16_t port;

	t_init("cm_ib_path");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);

	/* Not resolved yet. */
	T_EQ(rdma_create_id(ach, &idle, NULL, RDMA_PS_TCP), 0);
	path_init(&d[0], GMP_PATH, client);
	T_NEG_ERRNO(rdma_set_option(idle, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    d, sizeof(d[0])),
		    EINVAL);
	T_EQ(rdma_destroy_id(idle), 0);

	resolve_addr(ach, client, port);
	/* Lengths, flags, MTU, GIDs. */
	path_init(&d[0], IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY, client);
	T_NEG_ERRNO(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    d, sizeof(d[0])),
		    EINVAL);
	T_NEG_ERRNO(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    d, sizeof(d[0]) - 1),
		    EINVAL);
	path_init(&d[0], GMP_PATH, client);
	d[0].path.mtu = 0;
	T_NEG_ERRNO(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    d, sizeof(d[0])),
		    EINVAL);
	path_init(&d[0], GMP_PATH, client);
	d[0].path.dgid.raw[15] ^= 1;
	T_NEG_ERRNO(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    d, sizeof(d[0])),
		    EINVAL);
	T_CM_EXPECT_NONE(ach, 50);

	/* The GMP entry is found among others. */
	path_init(&d[0], IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_OUTBOUND,
		  client);
	path_init(&d[1], GMP_PATH, client);
	path_init(&d[2], IBV_PATH_FLAG_ALTERNATE, client);
	d[0].path.tclass = d[2].path.tclass = 96;
	T_EQ(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, d,
			     sizeof(d)),
	     0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, client);
	T_EQ(client->route.num_paths, 1);
	T_EQ(client->route.path_rec->mtu, IBV_MTU_1024);
	T_EQ(client->route.path_rec->hop_limit, 7);
	T_EQ(client->route.path_rec->traffic_class, 32);
	/* Once the route is there, no second path. */
	T_NEG_ERRNO(rdma_set_option(client, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH,
				    &d[1], sizeof(d[1])),
		    EINVAL);

	/* The connection uses it. */
	t_cm_qp(client, IBV_QPT_RC);
	T_EQ(rdma_connect(client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(server, IBV_QPT_RC);
	T_EQ(rdma_accept(server, &cp), 0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_ESTABLISHED, 0, client);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	T_OK(ibv_query_qp(client->qp, &a, IBV_QP_PATH_MTU | IBV_QP_AV, &ia));
	T_EQ(a.path_mtu, IBV_MTU_1024);
	T_EQ(a.ah_attr.grh.hop_limit, 7);
	T_EQ(a.ah_attr.grh.traffic_class, 32);
	/* The REQ told the server: MTU and traffic class. */
	T_OK(ibv_query_qp(server->qp, &a, IBV_QP_PATH_MTU | IBV_QP_AV, &ia));
	T_EQ(a.path_mtu, IBV_MTU_1024);
	T_EQ(a.ah_attr.grh.traffic_class, 32);

	T_EQ(rdma_disconnect(client), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0, server);
	T_EQ(rdma_disconnect(server), 0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_DISCONNECTED, 0, client);
	rdma_destroy_qp(client);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(client), 0);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
