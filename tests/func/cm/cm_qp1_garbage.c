/* SPDX-License-Identifier: MIT */
/*
 * QP1 under fire: a UD QP of ours with the GSI Q_Key sends QP1 of the
 * device random bytes, datagrams of the wrong size, CM messages for comm
 * IDs nobody has and a forged REQ, twice.  The daemon drops and counts
 * what is not a CM MAD, drops what names nothing, reports the forged
 * request once (the repeat is a duplicate) and goes on serving
 * connections as before.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include "common/cm_mad.h"
#include "t_cm.h"

#define GSI_QKEY 0x80010000u
#define N_RANDOM 200

struct gsi_tx {
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct t_buf buf;
	uint64_t n;
};

static void tx_open(struct gsi_tx *t)
{
	struct t_conn_opts o;
	struct ibv_qp_init_attr ia;
	struct ibv_ah_attr ah;

	t_dev_open(&t->d);
	t->cq = t_cq_create(&t->d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_UD, t->cq, t->cq);
	t->qp = t_qp_create(&t->d, &ia);
	t_conn_opts_init(&o);
	o.qkey = GSI_QKEY;
	t_qp_to_init(t->qp, &o);
	t_qp_to_rtr(t->qp, NULL, &o);
	t_qp_to_rts(t->qp, 0, &o);
	t_ah_attr_init(&ah, &t->d.gid);
	t->ah = T_NONNULL(ibv_create_ah(t->d.pd, &ah));
	t_buf_alloc(&t->d, &t->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
}

/* One datagram to QP1 of our own GID. */
static void tx(struct gsi_tx *t, const void *p, uint32_t len)
{
	struct ibv_wc wc;

	memcpy(t->buf.p, p, len);
	t_post_ud(t->qp, ++t->n, t->ah, 1, GSI_QKEY, t->buf.mr, t->buf.p, len,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(t->cq, &wc, t->n, IBV_WC_SUCCESS, IBV_WC_SEND);
}

static void tx_msg(struct gsi_tx *t, const struct cm_msg *m)
{
	uint8_t mad[MAD_SIZE];

	T_EQ(cm_mad_encode(m, mad, sizeof(mad)), 0);
	tx(t, mad, sizeof(mad));
}

static void forged_req(struct gsi_tx *t, struct cm_msg *m, uint16_t port)
{
	struct sockaddr_in src, dst;
	struct cma_hdr h;

	cm_msg_init(m, CM_ATTR_REQ, 0x1234);
	m->req.local_comm_id = 0x11112222;
	m->req.service_id = cm_ip_service_id(CM_PS_TCP, port);
	m->req.local_ca_guid = 0x4242;
	m->req.local_qpn = 0x999;
	m->req.responder_resources = 1;
	m->req.initiator_depth = 1;
	m->req.remote_cm_response_timeout = 20;
	m->req.local_cm_response_timeout = 20;
	m->req.starting_psn = 0x123456;
	m->req.retry_count = 7;
	m->req.rnr_retry_count = 7;
	m->req.pkey = 0xffff;
	m->req.path_mtu = IBV_MTU_1024;
	m->req.max_cm_retries = 15;
	m->req.primary.local_lid = m->req.primary.remote_lid = 0xffff;
	memcpy(m->req.primary.local_gid, t->d.gid.raw, 16);
	memcpy(m->req.primary.remote_gid, t->d.gid.raw, 16);
	m->req.primary.hop_limit = 64;
	m->req.primary.local_ack_timeout = 19;
	t_cm_addr(&src, 5555);
	t_cm_addr(&dst, port);
	T_EQ(cma_hdr_from_sockaddr(&h, (struct sockaddr *)&src,
				   (struct sockaddr *)&dst),
	     0);
	T_EQ(cma_hdr_encode(&h, m->req.private_data,
			    sizeof(m->req.private_data)),
	     0);
}

int main(void)
{
	static const uint16_t unknown[] = {
		CM_ATTR_REP, CM_ATTR_RTU,  CM_ATTR_REJ,
		CM_ATTR_MRA, CM_ATTR_DREQ, CM_ATTR_DREP,
		CM_ATTR_LAP, CM_ATTR_APR,  CM_ATTR_SIDR_REP,
	};
	static const uint32_t bad_len[] = { 0, 1, 24, 255, 257, 1024 };
	struct srd_cm_stats_rep st0, st1;
	struct rdma_event_channel *pch;
	struct rdma_cm_id *listen;
	struct rdma_cm_event *ev;
	struct t_cm_pair pair;
	struct gsi_tx t;
	struct cm_msg m;
	uint8_t junk[1024];
	uint16_t port;

	t_init("cm_qp1_garbage");
	pch = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	tx_open(&t);
	t_cm_stats(&st0);

	srand(7);
	for (int i = 0; i < N_RANDOM; i++) {
		for (size_t k = 0; k < MAD_SIZE; k++)
			junk[k] = (uint8_t)rand();
		tx(&t, junk, MAD_SIZE);
	}
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++)
		tx(&t, junk, bad_len[i]);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		cm_msg_init(&m, unknown[i], 0x77 + i);
		/* The same comm IDs in every message: none of ours. */
		m.rep.local_comm_id = 0xdead0000 + (uint32_t)i;
		m.rep.remote_comm_id = 0xbeef0000 + (uint32_t)i;
		tx_msg(&t, &m);
	}
	/* A REQ that names a listener: reported once, not twice. */
	forged_req(&t, &m, port);
	tx_msg(&t, &m);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_EQ(ev->param.conn.qp_num, 0x999);
	T_EQ(ntohs(rdma_get_dst_port(ev->id)), 5555);
	tx_msg(&t, &m);
	T_CM_EXPECT_NONE(pch, 200);
	T_EQ(rdma_reject(ev->id, NULL, 0), 0);
	T_EQ(rdma_destroy_id(ev->id), 0);
	T_EQ(rdma_ack_cm_event(ev), 0);

	t_cm_stats(&st1);
	t_log("bad %llu unmatched %llu dup %llu",
	      (unsigned long long)(st1.mad_bad - st0.mad_bad),
	      (unsigned long long)(st1.mad_unmatched - st0.mad_unmatched),
	      (unsigned long long)(st1.mad_dup - st0.mad_dup));
	T_EQ(st1.mad_bad - st0.mad_bad,
	     N_RANDOM + sizeof(bad_len) / sizeof(bad_len[0]));
	T_GE(st1.mad_unmatched - st0.mad_unmatched,
	     sizeof(unknown) / sizeof(unknown[0]));
	T_GE(st1.mad_dup - st0.mad_dup, 1);

	/* Still serving. */
	t_cm_pair_connect(&pair);
	t_cm_pair_disconnect(&pair);
	t_cm_pair_destroy(&pair);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
