/* SPDX-License-Identifier: MIT */
/*
 * The IB CM protocol (IBTA vol. 1 ch. 12) for RC/UC connections and SIDR,
 * as Linux's ib_cm runs it for rdma_cm on RoCE: the same messages, field
 * values, timeouts and retries, so a peer running the kernel CM sees what
 * it would see from another kernel.
 *
 * Everything a peer sends is checked against the conn it names: an
 * unknown comm ID, a replay or a message the state does not expect is
 * counted and dropped (or answered, where the spec says to: a duplicate
 * REQ gets the MRA, a duplicate REP the RTU, a DREQ for nothing a DREP).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "daemon/cm/cm.h"

#define CM_TID_HI 0x2ull /* the high half of our transaction IDs */
#define CM_COMM_IDX_BITS 24

static uint64_t cm_rand(struct srd_cm *cm)
{
	/* xorshift64*, seeded from the kernel at start. */
	uint64_t x = cm->tid_next;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	cm->tid_next = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint64_t cm_time_ns(uint8_t iba_time)
{
	/* The kernel's cm_convert_to_ms(): 4.096 us * 2^t, in whole ms. */
	unsigned int sh = iba_time > 8 ? iba_time - 8u : 0;

	if (sh > 31)
		sh = 31;
	return (1ull << sh) * 1000000ull;
}

uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	int t = packet_life_time + 1;

	/* Whichever dominates, plus one when the other is close to it. */
	if (t >= ca_ack_delay)
		t += ca_ack_delay >= t - 1;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return t > 31 ? 31 : (uint8_t)t;
}

void cm_seed(struct srd_cm *cm)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = srd_now_ns();
	cm->tid_next = seed | 1;
	cm->comm_salt = (uint32_t)cm_rand(cm);
}

static struct cm_conn *conn_lookup(struct srd_cm *cm, uint32_t local_id)
{
	uint32_t v = local_id ^ cm->comm_salt;
	struct cm_conn *c =
		table_get(&cm->conn_tab, v & ((1u << CM_COMM_IDX_BITS) - 1));

	return c && c->local_id == local_id ? c : NULL;
}

static uint32_t comm_id(struct srd_cm *cm, int64_t idx)
{
	return ((uint32_t)table_gen(&cm->conn_tab, (uint32_t)idx)
			<< CM_COMM_IDX_BITS |
		(uint32_t)idx) ^
	       cm->comm_salt;
}

struct cm_conn *cm_conn_new(struct srd_cm *cm, struct cm_port *port,
			    const struct cm_av *path)
{
	struct cm_conn *c = calloc(1, sizeof(*c));
	int64_t idx;

	if (!c)
		return NULL;
	idx = table_alloc(&cm->conn_tab, c);
	if (idx < 0) {
		free(c);
		return NULL;
	}
	c->local_id = comm_id(cm, idx);
	/* 0 means "no comm ID" in a REJ: skip the one index that maps to
	 * it this time round. */
	if (!c->local_id) {
		table_bump_gen(&cm->conn_tab, idx);
		c->local_id = comm_id(cm, idx);
	}
	c->cm = cm;
	c->port = port;
	c->path = *path;
	c->state = CM_IDLE;
	c->tid = CM_TID_HI << 32 | c->local_id;
	c->max_retries = CM_MAX_RETRIES;
	/* The Starting PSN of our REQ or REP is what our QP expects to
	 * receive, the peer's is where our QP starts sending: the kernel's
	 * rq_psn and sq_psn (cm.c), whatever the spec's wording suggests. */
	c->rq_psn = (uint32_t)cm_rand(cm) & 0xffffff;
	list_add_tail(&cm->conns, &c->node);
	cm->cnt.conns++;
	return c;
}

void cm_conn_free(struct cm_conn *c)
{
	uint32_t v = c->local_id ^ c->cm->comm_salt;

	if (c->id)
		c->id->conn = NULL;
	list_del(&c->node);
	table_free(&c->cm->conn_tab, v & ((1u << CM_COMM_IDX_BITS) - 1));
	free(c);
}

static void conn_arm(struct cm_conn *c, uint64_t ns)
{
	c->deadline = srd_now_ns() + ns;
	if (c->deadline < c->cm->deadline)
		c->cm->deadline = c->deadline;
}

static void conn_disarm(struct cm_conn *c)
{
	c->deadline = 0;
	c->have_mad = false;
}

static uint64_t local_guid(const struct cm_conn *c)
{
	return be64toh(cm_port_dev(c->port)->node_guid);
}

/* Encode and post; keep the bytes when the message may be resent. */
static int conn_send(struct cm_conn *c, const struct cm_msg *m, bool keep)
{
	uint8_t mad[MAD_SIZE];
	int err = cm_mad_encode(m, mad, sizeof(mad));

	if (err)
		return err;
	if (keep) {
		memcpy(c->mad, mad, MAD_SIZE);
		c->have_mad = true;
	}
	return cm_port_send(c->port, mad, &c->path);
}

/* Send and wait for the answer: the timer and the retries. */
static int conn_send_timed(struct cm_conn *c, const struct cm_msg *m)
{
	int err = conn_send(c, m, true);

	c->retries = c->max_retries;
	conn_arm(c, c->timeout_ns);
	return err == -ENOBUFS ? 0 : err; /* lost: the timer resends */
}

static void timewait_enter(struct cm_conn *c)
{
	c->state = CM_TIMEWAIT;
	conn_arm(c, cm_time_ns(c->ack_timeout));
}

int cm_send_req(struct cm_conn *c, const void *pdata, size_t len)
{
	struct cm_msg m;
	struct cm_req *r = &m.req;
	int err;

	cm_msg_init(&m, CM_ATTR_REQ, c->tid);
	m.hdr.attr_mod = c->ece_local.attr_mod;
	r->vendor_id = c->ece_local.vendor_id & 0xffffff;
	r->local_comm_id = c->local_id;
	r->service_id = c->service_id;
	r->local_ca_guid = local_guid(c);
	r->local_qpn = c->local_qpn;
	r->responder_resources = c->responder_resources;
	r->initiator_depth = c->initiator_depth;
	r->remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->transport_type = c->transport;
	r->flow_control = c->flow_control;
	r->starting_psn = c->rq_psn;
	r->local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->retry_count = c->retry_count;
	r->pkey = CM_PKEY;
	r->path_mtu = c->path_mtu;
	r->rnr_retry_count = c->rnr_retry_ask;
	r->max_cm_retries = CM_MAX_RETRIES;
	r->srq = c->srq;
	/* RoCE has no LIDs: the permissive LID, as the kernel sends. */
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xffff;
	memcpy(r->primary.local_gid, c->path.sgid.raw, 16);
	memcpy(r->primary.remote_gid, c->path.dgid.raw, 16);
	r->primary.flow_label = c->path.flow_label;
	r->primary.traffic_class = c->path.tclass;
	r->primary.hop_limit = c->path.hop_limit;
	r->primary.local_ack_timeout = c->ack_timeout;
	err = cm_set_private_data(r->private_data, sizeof(r->private_data),
				  pdata, len);
	if (err)
		return err;
	c->peer_cm_timeout = CM_RESPONSE_TIMEOUT;
	c->timeout_ns = 2 * cm_time_ns(CM_PACKET_LIFE_TIME) +
			cm_time_ns(CM_RESPONSE_TIMEOUT);
	c->state = CM_REQ_SENT;
	return conn_send_timed(c, &m);
}

int cm_send_rep(struct cm_conn *c, const void *pdata, size_t len)
{
	struct cm_msg m;
	struct cm_rep *r = &m.rep;
	int err;

	if (c->state != CM_REQ_RCVD && c->state != CM_MRA_REQ_SENT)
		return -EINVAL;
	cm_msg_init(&m, CM_ATTR_REP, c->tid);
	m.hdr.attr_mod = c->ece_local.attr_mod;
	r->vendor_id = c->ece_local.vendor_id & 0xffffff;
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	r->local_qpn = c->local_qpn;
	r->starting_psn = c->rq_psn;
	r->responder_resources = c->responder_resources;
	r->initiator_depth = c->initiator_depth;
	r->target_ack_delay = cm_port_dev(c->port)->attr.local_ca_ack_delay;
	r->flow_control = c->flow_control;
	r->rnr_retry_count = c->rnr_retry_ask;
	r->srq = c->srq;
	r->local_ca_guid = local_guid(c);
	err = cm_set_private_data(r->private_data, sizeof(r->private_data),
				  pdata, len);
	if (err)
		return err;
	c->state = CM_REP_SENT;
	return conn_send_timed(c, &m);
}

static int rtu_send(struct cm_conn *c)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_ATTR_RTU, c->tid);
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	return conn_send(c, &m, false);
}

int cm_send_rtu(struct cm_conn *c)
{
	if (c->state != CM_REP_RCVD && c->state != CM_MRA_REP_SENT)
		return -EINVAL;
	conn_disarm(c);
	c->state = CM_ESTABLISHED;
	rtu_send(c);
	return 0;
}

static void mra_send(struct cm_conn *c, uint8_t msg_code)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_ATTR_MRA, c->tid);
	m.mra.local_comm_id = c->local_id;
	m.mra.remote_comm_id = c->remote_id;
	m.mra.message_mraed = msg_code;
	m.mra.service_timeout = CM_MRA_SERVICE_TIMEOUT;
	conn_send(c, &m, false);
}

int cm_send_rej(struct cm_conn *c, uint16_t reason, const void *ari,
		size_t ari_len, const void *pdata, size_t len)
{
	struct cm_msg m;
	struct cm_rej *r = &m.rej;
	int err;

	cm_msg_init(&m, CM_ATTR_REJ, c->tid);
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	switch (c->state) {
	case CM_REQ_RCVD:
		/* Nothing of ours was seen yet: no comm ID to name. */
		r->local_comm_id = 0;
		r->message_rejected = CM_MSG_CODE_REQ;
		break;
	case CM_MRA_REQ_SENT:
		r->message_rejected = CM_MSG_CODE_REQ;
		break;
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		r->message_rejected = CM_MSG_CODE_REP;
		break;
	default:
		r->message_rejected = CM_MSG_CODE_OTHER;
		break;
	}
	r->reason = reason;
	if (ari_len > sizeof(r->ari))
		ari_len = sizeof(r->ari);
	r->ari_length = (uint8_t)ari_len;
	if (ari_len)
		memcpy(r->ari, ari, ari_len);
	err = cm_set_private_data(r->private_data, sizeof(r->private_data),
				  pdata, len);
	if (!err)
		conn_send(c, &m, false);
	cm_conn_free(c);
	return err;
}

int cm_send_dreq(struct cm_conn *c)
{
	struct cm_msg m;

	if (c->state != CM_ESTABLISHED)
		return -EINVAL;
	c->tid = CM_TID_HI << 32 | c->local_id;
	cm_msg_init(&m, CM_ATTR_DREQ, c->tid);
	m.dreq.local_comm_id = c->local_id;
	m.dreq.remote_comm_id = c->remote_id;
	m.dreq.remote_qpn_eecn = c->remote_qpn;
	/* The timeout of the REQ (active) or the REP (passive), as the
	 * kernel keeps one per connection. */
	c->state = CM_DREQ_SENT;
	return conn_send_timed(c, &m);
}

static void drep_send(struct cm_conn *c)
{
	struct cm_msg m;

	cm_msg_init(&m, CM_ATTR_DREP, c->tid);
	m.drep.local_comm_id = c->local_id;
	m.drep.remote_comm_id = c->remote_id;
	conn_send(c, &m, false);
}

int cm_send_drep(struct cm_conn *c)
{
	if (c->state != CM_DREQ_RCVD)
		return -EINVAL;
	drep_send(c);
	timewait_enter(c);
	return 0;
}

int cm_send_sidr_req(struct cm_conn *c, const void *pdata, size_t len)
{
	struct cm_msg m;
	int err;

	cm_msg_init(&m, CM_ATTR_SIDR_REQ, c->tid);
	m.sidr_req.request_id = c->local_id;
	m.sidr_req.pkey = CM_PKEY;
	m.sidr_req.service_id = c->service_id;
	err = cm_set_private_data(m.sidr_req.private_data,
				  sizeof(m.sidr_req.private_data), pdata, len);
	if (err)
		return err;
	c->timeout_ns = cm_time_ns(CM_RESPONSE_TIMEOUT);
	c->state = CM_SIDR_REQ_SENT;
	return conn_send_timed(c, &m);
}

int cm_send_sidr_rep(struct cm_conn *c, uint8_t status, uint32_t qpn,
		     uint32_t qkey, const void *pdata, size_t len)
{
	struct cm_msg m;
	int err;

	cm_msg_init(&m, CM_ATTR_SIDR_REP, c->tid);
	m.sidr_rep.request_id = c->remote_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = qpn;
	m.sidr_rep.service_id = c->service_id;
	m.sidr_rep.qkey = qkey;
	err = cm_set_private_data(m.sidr_rep.private_data,
				  sizeof(m.sidr_rep.private_data), pdata, len);
	if (!err)
		conn_send(c, &m, false);
	cm_conn_free(c);
	return err;
}

int cm_establish(struct cm_conn *c)
{
	if (c->state != CM_REP_SENT && c->state != CM_MRA_REP_RCVD)
		return c->state == CM_ESTABLISHED ? 0 : -EINVAL;
	conn_disarm(c);
	c->state = CM_ESTABLISHED;
	if (c->id)
		cma_conn_event(c->id, CM_EV_RTU, NULL, 0);
	return 0;
}

void cm_conn_release(struct cm_conn *c)
{
	uint64_t guid = htobe64(local_guid(c));

	if (c->id)
		c->id->conn = NULL;
	c->id = NULL;
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		cm_send_rej(c, CM_REJ_TIMEOUT, &guid, sizeof(guid), NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		cm_send_rej(c, CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case CM_ESTABLISHED:
		/* Say goodbye; the conn lives on until TIMEWAIT ends. */
		cm_send_dreq(c);
		break;
	case CM_DREQ_RCVD:
		cm_send_drep(c);
		break;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		break;
	case CM_SIDR_REQ_RCVD:
		cm_send_sidr_rep(c, CM_SIDR_REJECT, 0, 0, NULL, 0);
		break;
	default:
		cm_conn_free(c);
		break;
	}
}

/* --- receiving ------------------------------------------------------------ */

static int gid_index(const struct srd_device *dev, const union ibv_gid *gid)
{
	for (int i = 0; i < SRD_MAX_GIDS; i++)
		if (dev->port.gid_valid[i] &&
		    !memcmp(dev->port.gid[i].raw, gid->raw, 16))
			return i;
	return -1;
}

int cm_av_from_src(const struct cm_mad_src *src, struct cm_av *path)
{
	int idx = gid_index(cm_port_dev(src->port), &src->dgid);

	if (idx < 0)
		return -EADDRNOTAVAIL;
	memset(path, 0, sizeof(*path));
	path->sgid = src->dgid;
	path->dgid = src->sgid;
	path->sgid_index = (uint8_t)idx;
	path->hop_limit = CM_HOP_LIMIT;
	path->tclass = src->tclass;
	path->flow_label = src->flow_label;
	return 0;
}

static void unmatched(struct srd_cm *cm, const struct cm_msg *m)
{
	char line[160];

	cm->cnt.mad_unmatched++;
	cm_msg_format(line, sizeof(line), m);
	srd_log(SRD_LOG_DEBUG, "cm: dropped %s", line);
}

/* Answer a message no conn owns, from its source. */
static void reply_unknown(const struct cm_mad_src *src, const struct cm_msg *m)
{
	struct cm_av path;
	uint8_t mad[MAD_SIZE];

	if (cm_av_from_src(src, &path) || cm_mad_encode(m, mad, sizeof(mad)))
		return;
	cm_port_send(src->port, mad, &path);
}

/* Does c hold the peer's QP, so that a new REQ from that QP is stale?
 * As the kernel's remote QPN table: from the REQ (passive) or the REP
 * (active) until TIMEWAIT. */
static bool holds_remote_qp(const struct cm_conn *c, uint64_t guid,
			    uint32_t qpn)
{
	if (c->remote_guid != guid || c->remote_qpn != qpn)
		return false;
	switch (c->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:
	case CM_DREQ_RCVD:
		return true;
	default:
		return false;
	}
}

static struct cm_conn *stale_conn(struct srd_cm *cm, uint64_t guid,
				  uint32_t qpn)
{
	list_for_each (&cm->conns, it) {
		struct cm_conn *c = list_entry(it, struct cm_conn, node);

		if (holds_remote_qp(c, guid, qpn))
			return c;
	}
	return NULL;
}

static void recv_req(struct srd_cm *cm, const struct cm_mad_src *src,
		     const struct cm_msg *m)
{
	const struct cm_req *r = &m->req;
	struct cm_av path;
	struct cm_conn *c, *old;
	int ret;

	list_for_each (&cm->conns, it) {
		c = list_entry(it, struct cm_conn, node);
		if (!c->passive || c->remote_id != r->local_comm_id ||
		    c->remote_guid != r->local_ca_guid ||
		    c->state == CM_SIDR_REQ_RCVD)
			continue;
		/* A retransmitted REQ: we are slow, say so. */
		cm->cnt.mad_dup++;
		if (c->state == CM_MRA_REQ_SENT)
			mra_send(c, CM_MSG_CODE_REQ);
		return;
	}
	if (cm_av_from_src(src, &path)) {
		unmatched(cm, m);
		return;
	}
	path.tclass = r->primary.traffic_class;
	path.flow_label = r->primary.flow_label;
	old = stale_conn(cm, r->local_ca_guid, r->local_qpn);
	c = cm_conn_new(cm, src->port, &path);
	if (!c)
		return;
	c->passive = true;
	c->state = CM_REQ_RCVD;
	c->remote_id = r->local_comm_id;
	c->remote_guid = r->local_ca_guid;
	c->tid = m->hdr.tid;
	c->service_id = r->service_id;
	c->remote_qpn = r->local_qpn;
	c->sq_psn = r->starting_psn;
	c->transport = r->transport_type;
	/* What the peer offers to respond to is what we may initiate. */
	c->responder_resources = r->initiator_depth;
	c->initiator_depth = r->responder_resources;
	c->retry_count = r->retry_count;
	c->rnr_retry_count = r->rnr_retry_count;
	c->flow_control = r->flow_control;
	c->srq = r->srq;
	/* The REQ's MTU as it is (the QP never sends more than the port
	 * takes); the REQ's ACK timeout for our QP, and its CM response
	 * timeout alone for our REP and DREQ: the kernel's cm_req_handler. */
	c->path_mtu = r->path_mtu;
	c->ack_timeout =
		r->primary.local_ack_timeout ? r->primary.local_ack_timeout : 1;
	c->peer_cm_timeout = r->local_cm_response_timeout;
	c->max_retries = r->max_cm_retries;
	c->ece_remote.vendor_id = r->vendor_id;
	c->ece_remote.attr_mod = m->hdr.attr_mod;
	c->timeout_ns = cm_time_ns(c->peer_cm_timeout);
	/* A new comm ID from a QP we are still connected to: the peer
	 * lost that connection.  Refuse the request and end the old one
	 * (the kernel's stale connection check). */
	if (old) {
		cm->cnt.stale++;
		cm_send_rej(c, CM_REJ_STALE_CONN, NULL, 0, NULL, 0);
		if (old->state == CM_ESTABLISHED)
			cm_send_dreq(old);
		return;
	}
	if (r->transport_type != CM_TST_RC && r->transport_type != CM_TST_UC) {
		cm_send_rej(c, CM_REJ_INVALID_TRANSPORT_TYPE, NULL, 0, NULL, 0);
		return;
	}
	if (r->path_mtu < IBV_MTU_256 || r->path_mtu > IBV_MTU_4096) {
		cm_send_rej(c, CM_REJ_INVALID_MTU, NULL, 0, NULL, 0);
		return;
	}
	ret = cma_req_recv(cm, c, m);
	if (ret < 0) {
		cm_conn_free(c);
		return;
	}
	if (ret > 0) {
		cm_send_rej(c, (uint16_t)ret, NULL, 0, NULL, 0);
		return;
	}
	/* The consumer answers later: an MRA goes out if the peer asks
	 * again before it does (the kernel's delayed MRA). */
	if (c->state == CM_REQ_RCVD)
		c->state = CM_MRA_REQ_SENT;
}

static void recv_mra(struct srd_cm *cm, const struct cm_msg *m)
{
	struct cm_conn *c = conn_lookup(cm, m->mra.remote_comm_id);

	if (!c) {
		unmatched(cm, m);
		return;
	}
	if (c->state == CM_REQ_SENT &&
	    m->mra.message_mraed == CM_MSG_CODE_REQ) {
		/* The first word from the peer: its comm ID. */
		c->remote_id = m->mra.local_comm_id;
		c->state = CM_MRA_REQ_RCVD;
	} else if (c->state == CM_REP_SENT &&
		   m->mra.message_mraed == CM_MSG_CODE_REP &&
		   c->remote_id == m->mra.local_comm_id) {
		c->state = CM_MRA_REP_RCVD;
	} else {
		cm->cnt.mad_dup++;
		return;
	}
	conn_arm(c, cm_time_ns(m->mra.service_timeout) +
			    cm_time_ns(c->ack_timeout));
}

static void recv_rep(struct srd_cm *cm, const struct cm_msg *m)
{
	const struct cm_rep *r = &m->rep;
	struct cm_conn *c = conn_lookup(cm, r->remote_comm_id), *old;
	struct cm_msg rej;

	if (!c || c->passive) {
		unmatched(cm, m);
		return;
	}
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		break;
	case CM_ESTABLISHED:
		cm->cnt.mad_dup++;
		if (c->remote_id == r->local_comm_id)
			rtu_send(c);
		return;
	case CM_MRA_REP_SENT:
		cm->cnt.mad_dup++;
		if (c->remote_id == r->local_comm_id)
			mra_send(c, CM_MSG_CODE_REP);
		return;
	default:
		unmatched(cm, m);
		return;
	}
	old = stale_conn(cm, r->local_ca_guid, r->local_qpn);
	if (old) {
		/* The replying QP is another connection's: refuse the REP
		 * and end that connection; ours waits on (the kernel's REP
		 * side stale check). */
		cm->cnt.stale++;
		cm_msg_init(&rej, CM_ATTR_REJ, m->hdr.tid);
		rej.rej.local_comm_id = c->local_id;
		rej.rej.remote_comm_id = r->local_comm_id;
		rej.rej.message_rejected = CM_MSG_CODE_REP;
		rej.rej.reason = CM_REJ_STALE_CONN;
		conn_send(c, &rej, false);
		if (old->state == CM_ESTABLISHED)
			cm_send_dreq(old);
		return;
	}
	conn_disarm(c);
	c->remote_id = r->local_comm_id;
	c->remote_guid = r->local_ca_guid;
	c->remote_qpn = r->local_qpn;
	c->sq_psn = r->starting_psn;
	c->responder_resources = r->initiator_depth;
	c->initiator_depth = r->responder_resources;
	c->rnr_retry_count = r->rnr_retry_count;
	c->srq = r->srq;
	c->ece_remote.vendor_id = r->vendor_id;
	c->ece_remote.attr_mod = m->hdr.attr_mod;
	/* The path's life time against the peer's ACK delay now. */
	c->ack_timeout =
		cm_ack_timeout(r->target_ack_delay, c->packet_life_time);
	c->state = CM_REP_RCVD;
	if (c->id)
		cma_conn_event(c->id, CM_EV_REP, m, 0);
	/* The RTU comes from the consumer; meanwhile a repeated REP gets
	 * an MRA (delayed, as the kernel's rdma_cm asks). */
	if (c->state == CM_REP_RCVD)
		c->state = CM_MRA_REP_SENT;
}

static void recv_rtu(struct srd_cm *cm, const struct cm_msg *m)
{
	struct cm_conn *c = conn_lookup(cm, m->rtu.remote_comm_id);

	if (!c || !c->passive || c->remote_id != m->rtu.local_comm_id) {
		unmatched(cm, m);
		return;
	}
	if (c->state != CM_REP_SENT && c->state != CM_MRA_REP_RCVD) {
		cm->cnt.mad_dup++;
		return;
	}
	cm_establish(c);
}

/* A REJ "timeout" comes from a peer that gave up before it knew our
 * comm ID: it names itself by its comm ID and CA GUID (in the ARI). */
static struct cm_conn *rej_timeout_conn(struct srd_cm *cm,
					const struct cm_rej *r)
{
	uint64_t guid;

	if (r->ari_length < sizeof(guid))
		return NULL;
	guid = mad_get_be64(r->ari);
	list_for_each (&cm->conns, it) {
		struct cm_conn *c = list_entry(it, struct cm_conn, node);

		if (c->passive && c->remote_id == r->local_comm_id &&
		    c->remote_guid == guid)
			return c;
	}
	return NULL;
}

static void recv_rej(struct srd_cm *cm, const struct cm_msg *m)
{
	const struct cm_rej *r = &m->rej;
	struct cm_conn *c = conn_lookup(cm, r->remote_comm_id);

	if (!c && r->reason == CM_REJ_TIMEOUT)
		c = rej_timeout_conn(cm, r);
	if (!c || (r->local_comm_id && c->remote_id &&
		   c->remote_id != r->local_comm_id)) {
		unmatched(cm, m);
		return;
	}
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		break;
	default:
		unmatched(cm, m);
		return;
	}
	if (c->id)
		cma_conn_event(c->id, CM_EV_REJ, m, 0);
	cm_conn_free(c);
}

static void recv_dreq(struct srd_cm *cm, const struct cm_mad_src *src,
		      const struct cm_msg *m)
{
	const struct cm_dreq *r = &m->dreq;
	struct cm_conn *c = conn_lookup(cm, r->remote_comm_id);
	struct cm_msg drep;

	if (!c || c->remote_id != r->local_comm_id ||
	    r->remote_qpn_eecn != c->local_qpn) {
		/* Whatever it was is over: let the peer stop asking. */
		unmatched(cm, m);
		cm_msg_init(&drep, CM_ATTR_DREP, m->hdr.tid);
		drep.drep.local_comm_id = r->remote_comm_id;
		drep.drep.remote_comm_id = r->local_comm_id;
		reply_unknown(src, &drep);
		return;
	}
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		conn_disarm(c);
		c->tid = m->hdr.tid;
		c->state = CM_DREQ_RCVD;
		if (c->id)
			cma_conn_event(c->id, CM_EV_DREQ, m, 0);
		else
			cm_send_drep(c);
		return;
	case CM_DREQ_SENT:
		/* Both ends said goodbye at once. */
		c->tid = m->hdr.tid;
		drep_send(c);
		timewait_enter(c);
		if (c->id)
			cma_conn_event(c->id, CM_EV_DREQ, m, 0);
		return;
	case CM_TIMEWAIT:
		cm->cnt.mad_dup++;
		c->tid = m->hdr.tid;
		drep_send(c);
		return;
	default:
		cm->cnt.mad_dup++;
		return;
	}
}

static void recv_drep(struct srd_cm *cm, const struct cm_msg *m)
{
	struct cm_conn *c = conn_lookup(cm, m->drep.remote_comm_id);

	if (!c || c->remote_id != m->drep.local_comm_id) {
		unmatched(cm, m);
		return;
	}
	if (c->state != CM_DREQ_SENT) {
		cm->cnt.mad_dup++;
		return;
	}
	conn_disarm(c);
	timewait_enter(c);
	if (c->id)
		cma_conn_event(c->id, CM_EV_DREP, m, 0);
}

static void recv_sidr_req(struct srd_cm *cm, const struct cm_mad_src *src,
			  const struct cm_msg *m)
{
	const struct cm_sidr_req *r = &m->sidr_req;
	struct cm_av path;
	struct cm_conn *c;
	int ret;

	list_for_each (&cm->conns, it) {
		c = list_entry(it, struct cm_conn, node);
		if (c->passive && c->state == CM_SIDR_REQ_RCVD &&
		    c->remote_id == r->request_id &&
		    !memcmp(c->path.dgid.raw, src->sgid.raw, 16)) {
			cm->cnt.mad_dup++;
			return;
		}
	}
	if (cm_av_from_src(src, &path)) {
		unmatched(cm, m);
		return;
	}
	c = cm_conn_new(cm, src->port, &path);
	if (!c)
		return;
	c->passive = true;
	c->state = CM_SIDR_REQ_RCVD;
	c->remote_id = r->request_id;
	c->tid = m->hdr.tid;
	c->service_id = r->service_id;
	ret = cma_req_recv(cm, c, m);
	if (ret < 0)
		cm_conn_free(c);
	else if (ret > 0)
		cm_send_sidr_rep(c, (uint8_t)ret, 0, 0, NULL, 0);
}

static void recv_sidr_rep(struct srd_cm *cm, const struct cm_msg *m)
{
	struct cm_conn *c = conn_lookup(cm, m->sidr_rep.request_id);

	if (!c || c->state != CM_SIDR_REQ_SENT) {
		unmatched(cm, m);
		return;
	}
	conn_disarm(c);
	c->remote_qpn = m->sidr_rep.qpn;
	c->remote_qkey = m->sidr_rep.qkey;
	if (c->id)
		cma_conn_event(c->id, CM_EV_SIDR_REP, m, 0);
	cm_conn_free(c);
}

void cm_mad_recv(struct srd_cm *cm, const struct cm_mad_src *src,
		 const struct cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		recv_req(cm, src, m);
		break;
	case CM_ATTR_MRA:
		recv_mra(cm, m);
		break;
	case CM_ATTR_REJ:
		recv_rej(cm, m);
		break;
	case CM_ATTR_REP:
		recv_rep(cm, m);
		break;
	case CM_ATTR_RTU:
		recv_rtu(cm, m);
		break;
	case CM_ATTR_DREQ:
		recv_dreq(cm, src, m);
		break;
	case CM_ATTR_DREP:
		recv_drep(cm, m);
		break;
	case CM_ATTR_SIDR_REQ:
		recv_sidr_req(cm, src, m);
		break;
	case CM_ATTR_SIDR_REP:
		recv_sidr_rep(cm, m);
		break;
	default:
		/* LAP/APR: no alternate paths on a soft device. */
		unmatched(cm, m);
		break;
	}
}

/* --- timers --------------------------------------------------------------- */

static void conn_expired(struct cm_conn *c)
{
	struct srd_cm *cm = c->cm;

	if (c->state == CM_TIMEWAIT) {
		if (c->id)
			cma_conn_event(c->id, CM_EV_TIMEWAIT_EXIT, NULL, 0);
		cm_conn_free(c);
		return;
	}
	if (c->have_mad && c->retries) {
		c->retries--;
		cm->cnt.retransmits++;
		cm_port_send(c->port, c->mad, &c->path);
		conn_arm(c, c->timeout_ns);
		return;
	}
	cm->cnt.timeouts++;
	c->deadline = 0;
	switch (c->state) {
	case CM_DREQ_SENT:
		timewait_enter(c);
		if (c->id)
			cma_conn_event(c->id, CM_EV_DREQ_TIMEOUT, NULL,
				       -ETIMEDOUT);
		break;
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_SIDR_REQ_SENT:
		if (c->id)
			cma_conn_event(c->id, CM_EV_UNREACHABLE, NULL,
				       -ETIMEDOUT);
		cm_conn_free(c);
		break;
	default:
		break;
	}
}

bool cm_timers(struct srd_cm *cm, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	bool work = false;

	if (now < cm->deadline)
		return false;
	list_for_each (&cm->conns, it) {
		struct cm_conn *c = list_entry(it, struct cm_conn, node);

		if (!c->deadline)
			continue;
		if (c->deadline <= now) {
			work = true;
			conn_expired(c);
		}
	}
	/* Expiries may have armed new timers: take the minimum after. */
	list_for_each (&cm->conns, it) {
		struct cm_conn *c = list_entry(it, struct cm_conn, node);

		if (c->deadline && c->deadline < next)
			next = c->deadline;
	}
	cm->deadline = next;
	return work;
}
