/* SPDX-License-Identifier: MIT */
/*
 * Enhanced connection establishment through librdmacm, as rdma-core 44
 * and Linux do it:
 *   - where ECE travels: a REQ's vendor ID (bytes 5..7 of its payload)
 *     and a REP's (bytes 15, 19 and 23), with the options in the MAD
 *     header's attribute modifier;
 *   - ids without QPs: the client's rdma_set_local_ece reaches the
 *     server's rdma_get_remote_ece after CONNECT_REQUEST; the server's
 *     REP echoes the vendor ID with its own options, which the client
 *     reads after CONNECT_RESPONSE;
 *   - rdma_reject_ece: REJECTED with status 35 and the private data;
 *   - the errnos of bad arguments, and EINVAL on ids that have a QP
 *     (their options belong to the provider);
 *   - QPs of the application's own, as rdma_set_local_ece(3) has it: the
 *     client sets options on its QP (ibv_set_ece), passes what
 *     ibv_query_ece reads to rdma_set_local_ece, and rdma_connect's REQ
 *     carries them; the server sets the REQ's options on its QP and reads
 *     them there with ibv_query_ece, answers with a subset the same way,
 *     and the client's QP ends with the server's answer;
 *   - a server QP librdmacm makes after CONNECT_REQUEST: librdmacm sets
 *     the REQ's options on it (ibv_query_ece reads them) and the REP
 *     echoes them; from another vendor, the QP gets no options and the
 *     REP echoes that vendor with none;
 *   - QPs librdmacm made on both sides: the REQ carries the client QP's
 *     options as ibv_query_ece gave them when rdma_create_qp made it
 *     (rdma-core takes them there: an ibv_set_ece after rdma_create_qp
 *     is not in the REQ), the server's QP reads them, and the client's
 *     QP ends with what the REP said.
 */
#include "common/proto.h"
#include "daemon/cm/cm_mad.h"
#include "t_cm.h"

#define VENDOR 0x02c9u /* any 24-bit vendor ID */
#define CLIENT_OPTS 0xabcd1234u
#define SERVER_OPTS 0x00000011u

/* The codec puts ECE where the kernel's cm.c does. */
static void wire_layout(void)
{
	uint8_t mad[MAD_SIZE];
	struct cm_msg m, back;

	cm_msg_init(&m, CM_ATTR_REQ, 1);
	m.hdr.attr_mod = CLIENT_OPTS;
	m.req.vendor_id = 0x123456;
	m.req.local_comm_id = 7;
	m.req.path_mtu = IBV_MTU_1024;
	T_EQ(cm_mad_encode(&m, mad, sizeof(mad)), 0);
	T_EQ(mad[20], 0xab);
	T_EQ(mad[23], 0x34);
	T_EQ(mad[MAD_HDR_SIZE + 4], 0); /* reserved */
	T_EQ(mad[MAD_HDR_SIZE + 5], 0x12);
	T_EQ(mad[MAD_HDR_SIZE + 6], 0x34);
	T_EQ(mad[MAD_HDR_SIZE + 7], 0x56);
	T_EQ(cm_mad_decode(mad, sizeof(mad), &back), 0);
	T_EQ(back.req.vendor_id, 0x123456);
	T_EQ(back.hdr.attr_mod, CLIENT_OPTS);

	cm_msg_init(&m, CM_ATTR_REP, 1);
	m.hdr.attr_mod = SERVER_OPTS;
	m.rep.vendor_id = 0x123456;
	T_EQ(cm_mad_encode(&m, mad, sizeof(mad)), 0);
	T_EQ(mad[23], SERVER_OPTS);
	T_EQ(mad[MAD_HDR_SIZE + 15], 0x12);
	T_EQ(mad[MAD_HDR_SIZE + 19], 0x34);
	T_EQ(mad[MAD_HDR_SIZE + 23], 0x56);
	T_EQ(cm_mad_decode(mad, sizeof(mad), &back), 0);
	T_EQ(back.rep.vendor_id, 0x123456);
	T_EQ(back.hdr.attr_mod, SERVER_OPTS);
}

static struct ibv_qp *own_qp(struct rdma_cm_id *id, struct ibv_cq **cq,
			     struct ibv_pd **pd)
{
	struct ibv_qp_init_attr ia;

	*pd = T_NONNULL(ibv_alloc_pd(id->verbs));
	*cq = T_NONNULL(ibv_create_cq(id->verbs, 16, NULL, NULL, 0));
	t_qp_init_attr(&ia, IBV_QPT_RC, *cq, *cq);
	return T_NONNULL(ibv_create_qp(*pd, &ia));
}

static void own_qp_free(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_pd *pd)
{
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	T_OK(ibv_dealloc_pd(pd));
}

static void move(struct rdma_cm_id *id, struct ibv_qp *qp,
		 enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask;

	T_EQ(rdma_init_qp_attr(id, &a, &mask), 0);
	T_OK(ibv_modify_qp(qp, &a, mask));
}

static void bad_args(struct rdma_event_channel *ch)
{
	struct ibv_ece ece = { .vendor_id = VENDOR };
	struct rdma_cm_id *id;

	T_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	T_NEG_ERRNO(rdma_set_local_ece(NULL, &ece), EINVAL);
	T_NEG_ERRNO(rdma_set_local_ece(id, NULL), EINVAL);
	ece.vendor_id = 0;
	T_NEG_ERRNO(rdma_set_local_ece(id, &ece), EINVAL);
	ece.vendor_id = VENDOR;
	ece.comp_mask = 1;
	T_NEG_ERRNO(rdma_set_local_ece(id, &ece), EINVAL);
	ece.comp_mask = 0;
	T_EQ(rdma_set_local_ece(id, &ece), 0);
	T_NEG_ERRNO(rdma_get_remote_ece(NULL, &ece), EINVAL);
	T_NEG_ERRNO(rdma_get_remote_ece(id, NULL), EINVAL);
	/* Nothing heard yet: zeros. */
	ece.vendor_id = ece.options = ece.comp_mask = 99;
	T_EQ(rdma_get_remote_ece(id, &ece), 0);
	T_EQ(ece.vendor_id, 0);
	T_EQ(ece.options, 0);
	T_EQ(ece.comp_mask, 0);
	/* No request to refuse. */
	T_NEG_ERRNO(rdma_reject_ece(id, NULL, 0), EINVAL);
	T_EQ(rdma_destroy_id(id), 0);
}

static uint32_t dev_vendor(struct rdma_cm_id *id)
{
	struct ibv_device_attr a;

	T_OK(ibv_query_device(id->verbs, &a));
	return a.vendor_id;
}

static void qp_ece_set(struct ibv_qp *qp, uint32_t vendor, uint32_t opts)
{
	struct ibv_ece ece = { .vendor_id = vendor, .options = opts };

	T_OK(ibv_set_ece(qp, &ece));
}

static void qp_ece_is(struct ibv_qp *qp, uint32_t vendor, uint32_t opts)
{
	struct ibv_ece ece;

	memset(&ece, 0xff, sizeof(ece));
	T_OK(ibv_query_ece(qp, &ece));
	T_EQ(ece.vendor_id, vendor);
	T_EQ(ece.options, opts);
	T_EQ(ece.comp_mask, 0);
}

static void remote_ece_is(struct rdma_cm_id *id, uint32_t vendor, uint32_t opts)
{
	struct ibv_ece ece;

	memset(&ece, 0xff, sizeof(ece));
	T_EQ(rdma_get_remote_ece(id, &ece), 0);
	T_EQ(ece.vendor_id, vendor);
	T_EQ(ece.options, opts);
	T_EQ(ece.comp_mask, 0);
}

/* The client's own QP, its ECE handed to librdmacm from ibv_query_ece,
 * then connected: the server's CONNECT_REQUEST, acked. */
static struct rdma_cm_id *connect_own(struct rdma_event_channel *pch,
				      struct rdma_event_channel *ach,
				      uint16_t port, struct rdma_cm_id **client,
				      struct ibv_qp **cqp, struct ibv_cq **ccq,
				      struct ibv_pd **cpd, uint32_t vendor,
				      uint32_t opts)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct ibv_ece ece;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *server;

	T_EQ(rdma_create_id(ach, client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, *client, port);
	*cqp = own_qp(*client, ccq, cpd);
	move(*client, *cqp, IBV_QPS_INIT);
	if (vendor == dev_vendor(*client)) {
		qp_ece_set(*cqp, vendor, opts);
		T_OK(ibv_query_ece(*cqp, &ece));
	} else {
		/* Another vendor's options: no QP of ours takes them. */
		ece.vendor_id = vendor;
		ece.options = opts;
		ece.comp_mask = 0;
	}
	T_EQ(rdma_set_local_ece(*client, &ece), 0);
	cp.qp_num = (*cqp)->qp_num;
	T_EQ(rdma_connect(*client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	return server;
}

/* The client's end after CONNECT_RESPONSE: its QP to RTS, established
 * (what it heard from the server unchanged), both ends disconnected, and
 * the client's end destroyed. */
static void finish_own(struct rdma_event_channel *pch,
		       struct rdma_event_channel *ach,
		       struct rdma_cm_id *client, struct ibv_qp *cqp,
		       struct ibv_cq *ccq, struct ibv_pd *cpd,
		       struct rdma_cm_id *server)
{
	struct ibv_ece heard, after;

	T_EQ(rdma_get_remote_ece(client, &heard), 0);
	move(client, cqp, IBV_QPS_RTR);
	move(client, cqp, IBV_QPS_RTS);
	T_EQ(rdma_establish(client), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
	/* Still what the peer said, after ESTABLISHED too. */
	T_EQ(rdma_get_remote_ece(client, &after), 0);
	T_EQ(after.vendor_id, heard.vendor_id);
	T_EQ(after.options, heard.options);
	t_cm_disconnect(pch, ach, client, server);
	own_qp_free(cqp, ccq, cpd);
	T_EQ(rdma_destroy_id(client), 0);
}

/*
 * Both QPs the applications' own, the options passed between them and
 * librdmacm with rdma_{set_local,get_remote}_ece: with our vendor ID
 * through ibv_set_ece and ibv_query_ece on each QP; with another's, the
 * ids alone carry them (no QP of ours would take them).  The server
 * answers with a subset.
 */
static void own_qps(struct rdma_event_channel *pch,
		    struct rdma_event_channel *ach, uint16_t port,
		    uint32_t vendor)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	const uint32_t answer = CLIENT_OPTS & SERVER_OPTS;
	bool ours = vendor == SRD_VENDOR_ID;
	struct rdma_cm_id *client, *server;
	struct ibv_qp *cqp, *sqp;
	struct ibv_cq *ccq, *scq;
	struct ibv_pd *cpd, *spd;
	struct rdma_cm_event *ev;
	struct ibv_ece ece;

	server = connect_own(pch, ach, port, &client, &cqp, &ccq, &cpd, vendor,
			     CLIENT_OPTS);
	T_EQ(dev_vendor(server), SRD_VENDOR_ID);
	sqp = own_qp(server, &scq, &spd);
	move(server, sqp, IBV_QPS_INIT);
	remote_ece_is(server, vendor, CLIENT_OPTS);
	T_EQ(rdma_get_remote_ece(server, &ece), 0);
	if (ours) {
		/* What the REQ carried, on the server's QP. */
		T_OK(ibv_set_ece(sqp, &ece));
		qp_ece_is(sqp, vendor, CLIENT_OPTS);
		qp_ece_set(sqp, vendor, answer);
		T_OK(ibv_query_ece(sqp, &ece));
	} else {
		ece.options = answer;
	}
	T_EQ(rdma_set_local_ece(server, &ece), 0);
	move(server, sqp, IBV_QPS_RTR);
	move(server, sqp, IBV_QPS_RTS);
	cp.qp_num = sqp->qp_num;
	T_EQ(rdma_accept(server, &cp), 0);

	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, client);
	T_EQ(rdma_ack_cm_event(ev), 0);
	remote_ece_is(client, vendor, answer);
	if (ours) {
		T_EQ(rdma_get_remote_ece(client, &ece), 0);
		T_OK(ibv_set_ece(cqp, &ece));
		qp_ece_is(cqp, vendor, answer);
	}
	finish_own(pch, ach, client, cqp, ccq, cpd, server);
	own_qp_free(sqp, scq, spd);
	T_EQ(rdma_destroy_id(server), 0);
}

/* The server's QP made by librdmacm after the REQ: librdmacm sets the
 * REQ's options on it, or none when the vendor is another. */
static void cm_server_qp(struct rdma_event_channel *pch,
			 struct rdma_event_channel *ach, uint16_t port,
			 uint32_t vendor)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *client, *server;
	struct ibv_qp *cqp;
	struct ibv_cq *ccq;
	struct ibv_pd *cpd;
	struct rdma_cm_event *ev;
	struct ibv_ece ece;
	bool same = vendor == SRD_VENDOR_ID;

	server = connect_own(pch, ach, port, &client, &cqp, &ccq, &cpd, vendor,
			     CLIENT_OPTS);
	t_cm_qp(server, IBV_QPT_RC);
	qp_ece_is(server->qp, SRD_VENDOR_ID, same ? CLIENT_OPTS : 0);
	/* Its options are the provider's now. */
	T_NEG_ERRNO(rdma_get_remote_ece(server, &ece), EINVAL);
	T_EQ(rdma_accept(server, &cp), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, client);
	T_EQ(rdma_ack_cm_event(ev), 0);
	/* The REP echoes the client's vendor with what the QP took. */
	remote_ece_is(client, vendor, same ? CLIENT_OPTS : 0);
	if (same)
		qp_ece_is(cqp, vendor, CLIENT_OPTS);
	finish_own(pch, ach, client, cqp, ccq, cpd, server);
	rdma_destroy_qp(server);
	T_EQ(rdma_destroy_id(server), 0);
}

/* The server refuses the options: REJ reason 35. */
static void refuse(struct rdma_event_channel *pch,
		   struct rdma_event_channel *ach, uint16_t port)
{
	static const char why[] = "options refused";
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .qp_num = 0x1234 };
	struct ibv_ece ece = { .vendor_id = VENDOR, .options = CLIENT_OPTS };
	struct rdma_cm_id *client, *server;
	struct rdma_cm_event *ev;

	T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(ach, client, port);
	T_EQ(rdma_set_local_ece(client, &ece), 0);
	T_EQ(rdma_connect(client, &cp), 0);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	T_EQ(rdma_reject_ece(server, why, sizeof(why)), 0);
	ev = T_CM_EXPECT(ach, RDMA_CM_EVENT_REJECTED,
			 CM_REJ_VENDOR_OPTION_NOT_SUPPORTED, client);
	T_GE(ev->param.conn.private_data_len, sizeof(why));
	T_EQ(memcmp(ev->param.conn.private_data, why, sizeof(why)), 0);
	T_EQ(rdma_ack_cm_event(ev), 0);
	/* Refused once is refused: no second answer. */
	T_NEG_ERRNO(rdma_reject_ece(server, NULL, 0), EINVAL);
	T_EQ(rdma_destroy_id(server), 0);
	T_EQ(rdma_destroy_id(client), 0);
}

/* QPs made by librdmacm on both sides: their ECE is the provider's, and
 * the REQ carries what the client's QP had when librdmacm made it. */
static void with_qps(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct ibv_ece ece = { .vendor_id = VENDOR };
	struct rdma_cm_event *ev;
	struct t_cm_pair p;

	memset(&p, 0, sizeof(p));
	p.pch = t_cm_channel();
	p.ach = t_cm_channel();
	p.port = t_cm_listen(p.pch, &p.listen, RDMA_PS_TCP);
	T_EQ(rdma_create_id(p.ach, &p.client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(p.ach, p.client, p.port);
	t_cm_qp(p.client, IBV_QPT_RC);
	qp_ece_is(p.client->qp, SRD_VENDOR_ID, 0);
	T_NEG_ERRNO(rdma_set_local_ece(p.client, &ece), EINVAL);
	/* After rdma_create_qp: the QP has it, the REQ will not. */
	qp_ece_set(p.client->qp, SRD_VENDOR_ID, CLIENT_OPTS);
	T_EQ(rdma_connect(p.client, &cp), 0);
	ev = T_CM_EXPECT(p.pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	p.server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(p.server, IBV_QPT_RC);
	qp_ece_is(p.server->qp, SRD_VENDOR_ID, 0);
	T_EQ(rdma_accept(p.server, &cp), 0);
	T_CM_EXPECT_ACK(p.ach, RDMA_CM_EVENT_ESTABLISHED, 0, p.client);
	T_CM_EXPECT_ACK(p.pch, RDMA_CM_EVENT_ESTABLISHED, 0, p.server);
	/* The client's QP ends with the REP's answer. */
	qp_ece_is(p.client->qp, SRD_VENDOR_ID, 0);
	T_NEG_ERRNO(rdma_get_remote_ece(p.client, &ece), EINVAL);
	T_NEG_ERRNO(rdma_get_remote_ece(p.server, &ece), EINVAL);
	t_cm_pair_disconnect(&p);
	t_cm_pair_destroy(&p);
}

int main(void)
{
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen;
	uint16_t port;

	t_init("cm_ece");
	wire_layout();
	pch = t_cm_channel();
	ach = t_cm_channel();
	bad_args(ach);
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	own_qps(pch, ach, port, VENDOR);
	own_qps(pch, ach, port, SRD_VENDOR_ID);
	cm_server_qp(pch, ach, port, SRD_VENDOR_ID);
	cm_server_qp(pch, ach, port, VENDOR);
	refuse(pch, ach, port);
	with_qps();
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
