/* SPDX-License-Identifier: MIT */
/*
 * CM MAD encode and decode, driven by one field table per message that
 * transcribes the spec's layout (byte offset, first bit counted from the
 * most significant, width).  Decoding and encoding walk the same table,
 * so the two cannot disagree about where a field is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/cm_mad.h"

enum cm_field_kind {
	CM_F_UINT,  /* an unsigned value of width bits */
	CM_F_BYTES, /* width bytes copied as they are */
};

struct cm_field {
	uint16_t moff;	/* member offset in the message struct */
	uint8_t msize;	/* member size: 1, 2, 4 or 8 (UINT) */
	uint8_t mshift; /* for a piece of a member: where the piece goes */
	uint8_t off;	/* wire byte offset in the MAD data */
	uint8_t bit;	/* first bit, 0 = MSB of byte off */
	uint8_t width;	/* bits (UINT) or bytes (BYTES) */
	uint8_t kind : 1;
	uint8_t piece : 1; /* one of several pieces of one member */
};

#define CM_MSIZE(st, m) sizeof(((st *)0)->m)
#define U(st, m, o, b, w)                                                      \
	{                                                                      \
		.moff = offsetof(st, m), .msize = CM_MSIZE(st, m), .off = (o), \
		.bit = (b), .width = (w), .kind = CM_F_UINT                    \
	}
#define PIECE(st, m, sh, o, b, w)                                     \
	{                                                             \
		.moff = offsetof(st, m), .msize = CM_MSIZE(st, m),    \
		.mshift = (sh), .off = (o), .bit = (b), .width = (w), \
		.kind = CM_F_UINT, .piece = 1                         \
	}
#define B(st, m, o, n)                                                         \
	{                                                                      \
		.moff = offsetof(st, m), .msize = 1, .off = (o), .width = (n), \
		.kind = CM_F_BYTES                                             \
	}

/* The path layout of a REQ, starting at its local port LID (o). */
#define REQ_PATH(st, p, o)                                                   \
	U(st, p.local_lid, (o), 0, 16), U(st, p.remote_lid, (o) + 2, 0, 16), \
		B(st, p.local_gid, (o) + 4, 16),                             \
		B(st, p.remote_gid, (o) + 20, 16),                           \
		U(st, p.flow_label, (o) + 36, 0, 20),                        \
		U(st, p.packet_rate, (o) + 39, 2, 6),                        \
		U(st, p.traffic_class, (o) + 40, 0, 8),                      \
		U(st, p.hop_limit, (o) + 41, 0, 8),                          \
		U(st, p.sl, (o) + 42, 0, 4),                                 \
		U(st, p.subnet_local, (o) + 42, 4, 1),                       \
		U(st, p.local_ack_timeout, (o) + 43, 0, 5)

/* Table 106 */
static const struct cm_field req_fields[] = {
	U(struct cm_req, local_comm_id, 0, 0, 32),
	U(struct cm_req, vendor_id, 5, 0, 24),
	U(struct cm_req, service_id, 8, 0, 64),
	U(struct cm_req, local_ca_guid, 16, 0, 64),
	U(struct cm_req, local_qkey, 28, 0, 32),
	U(struct cm_req, local_qpn, 32, 0, 24),
	U(struct cm_req, responder_resources, 35, 0, 8),
	U(struct cm_req, local_eecn, 36, 0, 24),
	U(struct cm_req, initiator_depth, 39, 0, 8),
	U(struct cm_req, remote_eecn, 40, 0, 24),
	U(struct cm_req, remote_cm_response_timeout, 43, 0, 5),
	U(struct cm_req, transport_type, 43, 5, 2),
	U(struct cm_req, flow_control, 43, 7, 1),
	U(struct cm_req, starting_psn, 44, 0, 24),
	U(struct cm_req, local_cm_response_timeout, 47, 0, 5),
	U(struct cm_req, retry_count, 47, 5, 3),
	U(struct cm_req, pkey, 48, 0, 16),
	U(struct cm_req, path_mtu, 50, 0, 4),
	U(struct cm_req, rdc_exists, 50, 4, 1),
	U(struct cm_req, rnr_retry_count, 50, 5, 3),
	U(struct cm_req, max_cm_retries, 51, 0, 4),
	U(struct cm_req, srq, 51, 4, 1),
	U(struct cm_req, ext_transport_type, 51, 5, 3),
	REQ_PATH(struct cm_req, primary, 52),
	REQ_PATH(struct cm_req, alternate, 96),
	U(struct cm_req, sap_supported, 139, 5, 1),
	B(struct cm_req, private_data, 140, CM_REQ_PRIVATE_DATA_SIZE),
};

/* Table 107 */
static const struct cm_field mra_fields[] = {
	U(struct cm_mra, local_comm_id, 0, 0, 32),
	U(struct cm_mra, remote_comm_id, 4, 0, 32),
	U(struct cm_mra, message_mraed, 8, 0, 2),
	U(struct cm_mra, service_timeout, 9, 0, 5),
	B(struct cm_mra, private_data, 10, CM_MRA_PRIVATE_DATA_SIZE),
};

/* Table 108 */
static const struct cm_field rej_fields[] = {
	U(struct cm_rej, local_comm_id, 0, 0, 32),
	U(struct cm_rej, remote_comm_id, 4, 0, 32),
	U(struct cm_rej, message_rejected, 8, 0, 2),
	U(struct cm_rej, ari_length, 9, 0, 7),
	U(struct cm_rej, reason, 10, 0, 16),
	B(struct cm_rej, ari, 12, CM_REJ_ARI_SIZE),
	B(struct cm_rej, private_data, 84, CM_REJ_PRIVATE_DATA_SIZE),
};

/* Table 110; the vendor ID (ECE) fills the bytes after three 24-bit fields. */
static const struct cm_field rep_fields[] = {
	U(struct cm_rep, local_comm_id, 0, 0, 32),
	U(struct cm_rep, remote_comm_id, 4, 0, 32),
	U(struct cm_rep, local_qkey, 8, 0, 32),
	U(struct cm_rep, local_qpn, 12, 0, 24),
	PIECE(struct cm_rep, vendor_id, 16, 15, 0, 8),
	U(struct cm_rep, local_eecn, 16, 0, 24),
	PIECE(struct cm_rep, vendor_id, 8, 19, 0, 8),
	U(struct cm_rep, starting_psn, 20, 0, 24),
	PIECE(struct cm_rep, vendor_id, 0, 23, 0, 8),
	U(struct cm_rep, responder_resources, 24, 0, 8),
	U(struct cm_rep, initiator_depth, 25, 0, 8),
	U(struct cm_rep, target_ack_delay, 26, 0, 5),
	U(struct cm_rep, failover_accepted, 26, 5, 2),
	U(struct cm_rep, flow_control, 26, 7, 1),
	U(struct cm_rep, rnr_retry_count, 27, 0, 3),
	U(struct cm_rep, srq, 27, 3, 1),
	U(struct cm_rep, local_ca_guid, 28, 0, 64),
	B(struct cm_rep, private_data, 36, CM_REP_PRIVATE_DATA_SIZE),
};

/* Table 111 */
static const struct cm_field rtu_fields[] = {
	U(struct cm_rtu, local_comm_id, 0, 0, 32),
	U(struct cm_rtu, remote_comm_id, 4, 0, 32),
	B(struct cm_rtu, private_data, 8, CM_RTU_PRIVATE_DATA_SIZE),
};

/* Table 112 */
static const struct cm_field dreq_fields[] = {
	U(struct cm_dreq, local_comm_id, 0, 0, 32),
	U(struct cm_dreq, remote_comm_id, 4, 0, 32),
	U(struct cm_dreq, remote_qpn_eecn, 8, 0, 24),
	B(struct cm_dreq, private_data, 12, CM_DREQ_PRIVATE_DATA_SIZE),
};

/* Table 113 */
static const struct cm_field drep_fields[] = {
	U(struct cm_drep, local_comm_id, 0, 0, 32),
	U(struct cm_drep, remote_comm_id, 4, 0, 32),
	B(struct cm_drep, private_data, 8, CM_DREP_PRIVATE_DATA_SIZE),
};

/* Table 115: the alternate path in another order than a REQ's. */
static const struct cm_field lap_fields[] = {
	U(struct cm_lap, local_comm_id, 0, 0, 32),
	U(struct cm_lap, remote_comm_id, 4, 0, 32),
	U(struct cm_lap, remote_qpn_eecn, 12, 0, 24),
	U(struct cm_lap, remote_cm_response_timeout, 15, 0, 5),
	U(struct cm_lap, alternate.local_lid, 20, 0, 16),
	U(struct cm_lap, alternate.remote_lid, 22, 0, 16),
	B(struct cm_lap, alternate.local_gid, 24, 16),
	B(struct cm_lap, alternate.remote_gid, 40, 16),
	U(struct cm_lap, alternate.flow_label, 56, 0, 20),
	U(struct cm_lap, alternate.traffic_class, 59, 0, 8),
	U(struct cm_lap, alternate.hop_limit, 60, 0, 8),
	U(struct cm_lap, alternate.packet_rate, 61, 2, 6),
	U(struct cm_lap, alternate.sl, 62, 0, 4),
	U(struct cm_lap, alternate.subnet_local, 62, 4, 1),
	U(struct cm_lap, alternate.local_ack_timeout, 63, 0, 5),
	B(struct cm_lap, private_data, 64, CM_LAP_PRIVATE_DATA_SIZE),
};

/* Table 116 */
static const struct cm_field apr_fields[] = {
	U(struct cm_apr, local_comm_id, 0, 0, 32),
	U(struct cm_apr, remote_comm_id, 4, 0, 32),
	U(struct cm_apr, info_length, 8, 0, 8),
	U(struct cm_apr, status, 9, 0, 8),
	B(struct cm_apr, info, 12, CM_APR_INFO_SIZE),
	B(struct cm_apr, private_data, 84, CM_APR_PRIVATE_DATA_SIZE),
};

/* Table 119 */
static const struct cm_field sidr_req_fields[] = {
	U(struct cm_sidr_req, request_id, 0, 0, 32),
	U(struct cm_sidr_req, pkey, 4, 0, 16),
	U(struct cm_sidr_req, service_id, 8, 0, 64),
	B(struct cm_sidr_req, private_data, 16, CM_SIDR_REQ_PRIVATE_DATA_SIZE),
};

/* Table 120; the vendor ID (ECE) in two pieces around the QPN. */
static const struct cm_field sidr_rep_fields[] = {
	U(struct cm_sidr_rep, request_id, 0, 0, 32),
	U(struct cm_sidr_rep, status, 4, 0, 8),
	U(struct cm_sidr_rep, info_length, 5, 0, 8),
	PIECE(struct cm_sidr_rep, vendor_id, 8, 6, 0, 16),
	U(struct cm_sidr_rep, qpn, 8, 0, 24),
	PIECE(struct cm_sidr_rep, vendor_id, 0, 11, 0, 8),
	U(struct cm_sidr_rep, service_id, 12, 0, 64),
	U(struct cm_sidr_rep, qkey, 20, 0, 32),
	B(struct cm_sidr_rep, info, 24, CM_SIDR_REP_INFO_SIZE),
	B(struct cm_sidr_rep, private_data, 96, CM_SIDR_REP_PRIVATE_DATA_SIZE),
};

/* Value rules beyond field widths: true if m is acceptable. */
static bool mra_ok(const struct cm_msg *m)
{
	return m->mra.message_mraed <= CM_MSG_CODE_LAP;
}

static bool rej_ok(const struct cm_msg *m)
{
	return m->rej.message_rejected <= CM_MSG_CODE_OTHER &&
	       m->rej.ari_length <= CM_REJ_ARI_SIZE;
}

static bool rep_ok(const struct cm_msg *m)
{
	return m->rep.vendor_id <= 0xffffff;
}

static bool apr_ok(const struct cm_msg *m)
{
	return m->apr.info_length <= CM_APR_INFO_SIZE;
}

static bool sidr_rep_ok(const struct cm_msg *m)
{
	return m->sidr_rep.info_length <= CM_SIDR_REP_INFO_SIZE &&
	       m->sidr_rep.vendor_id <= 0xffffff;
}

struct cm_layout {
	uint16_t attr_id;
	const char *name;
	size_t msg_size;
	const struct cm_field *fields;
	unsigned int nfields;
	bool (*ok)(const struct cm_msg *m);
};

#define LAYOUT(id, nm, st, f, chk)                                     \
	{                                                              \
		.attr_id = (id), .name = (nm), .msg_size = sizeof(st), \
		.fields = (f), .nfields = sizeof(f) / sizeof((f)[0]),  \
		.ok = (chk)                                            \
	}

static const struct cm_layout cm_layouts[] = {
	LAYOUT(CM_ATTR_REQ, "REQ", struct cm_req, req_fields, NULL),
	LAYOUT(CM_ATTR_MRA, "MRA", struct cm_mra, mra_fields, mra_ok),
	LAYOUT(CM_ATTR_REJ, "REJ", struct cm_rej, rej_fields, rej_ok),
	LAYOUT(CM_ATTR_REP, "REP", struct cm_rep, rep_fields, rep_ok),
	LAYOUT(CM_ATTR_RTU, "RTU", struct cm_rtu, rtu_fields, NULL),
	LAYOUT(CM_ATTR_DREQ, "DREQ", struct cm_dreq, dreq_fields, NULL),
	LAYOUT(CM_ATTR_DREP, "DREP", struct cm_drep, drep_fields, NULL),
	LAYOUT(CM_ATTR_SIDR_REQ, "SIDR_REQ", struct cm_sidr_req,
	       sidr_req_fields, NULL),
	LAYOUT(CM_ATTR_SIDR_REP, "SIDR_REP", struct cm_sidr_rep,
	       sidr_rep_fields, sidr_rep_ok),
	LAYOUT(CM_ATTR_LAP, "LAP", struct cm_lap, lap_fields, NULL),
	LAYOUT(CM_ATTR_APR, "APR", struct cm_apr, apr_fields, apr_ok),
};
#define CM_NLAYOUTS (sizeof(cm_layouts) / sizeof(cm_layouts[0]))

static const struct cm_layout *cm_layout_find(uint16_t attr_id)
{
	for (size_t i = 0; i < CM_NLAYOUTS; i++)
		if (cm_layouts[i].attr_id == attr_id)
			return &cm_layouts[i];
	return NULL;
}

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* A field of at most 64 bits spans at most 8 bytes (checked in tables). */
static uint64_t wire_get(const uint8_t *data, const struct cm_field *f)
{
	unsigned int nbytes = (f->bit + f->width + 7u) / 8;
	uint64_t v = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		v = v << 8 | data[f->off + i];
	v >>= nbytes * 8 - f->bit - f->width;
	return v & width_mask(f->width);
}

static void wire_put(uint8_t *data, const struct cm_field *f, uint64_t v)
{
	unsigned int nbytes = (f->bit + f->width + 7u) / 8;
	unsigned int shift = nbytes * 8 - f->bit - f->width;
	uint64_t mask = width_mask(f->width) << shift;
	uint64_t cur = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		cur = cur << 8 | data[f->off + i];
	cur = (cur & ~mask) | ((v << shift) & mask);
	for (unsigned int i = nbytes; i-- > 0;) {
		data[f->off + i] = (uint8_t)cur;
		cur >>= 8;
	}
}

static uint64_t member_get(const uint8_t *base, const struct cm_field *f)
{
	const uint8_t *p = base + f->moff;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->msize) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void member_put(uint8_t *base, const struct cm_field *f, uint64_t v)
{
	uint8_t *p = base + f->moff;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->msize) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* The union's members all start here. */
static uint8_t *msg_body(struct cm_msg *m)
{
	return (uint8_t *)&m->req;
}

static const uint8_t *msg_body_const(const struct cm_msg *m)
{
	return (const uint8_t *)&m->req;
}

void cm_msg_init(struct cm_msg *m, uint16_t attr_id, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = MAD_BASE_VERSION;
	m->hdr.mgmt_class = MAD_CLASS_CM;
	m->hdr.class_version = CM_CLASS_VERSION;
	m->hdr.method = MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr_id;
}

int cm_mad_decode(const void *buf, size_t len, struct cm_msg *m)
{
	uint8_t *body = msg_body(m);
	const struct cm_layout *l;
	const uint8_t *data;

	memset(m, 0, sizeof(*m));
	if (!buf || mad_hdr_decode(buf, len, &m->hdr))
		return -EBADMSG;
	if (len != MAD_SIZE || m->hdr.base_version != MAD_BASE_VERSION ||
	    m->hdr.mgmt_class != MAD_CLASS_CM ||
	    m->hdr.class_version != CM_CLASS_VERSION ||
	    m->hdr.method != MAD_METHOD_SEND)
		return -EBADMSG;
	l = cm_layout_find(m->hdr.attr_id);
	if (!l)
		return -EBADMSG;

	data = (const uint8_t *)buf + MAD_HDR_SIZE;
	for (unsigned int i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		uint64_t v;

		if (f->kind == CM_F_BYTES) {
			memcpy(body + f->moff, data + f->off, f->width);
			continue;
		}
		/* Pieces of one member are merged into it. */
		v = member_get(body, f) | wire_get(data, f) << f->mshift;
		member_put(body, f, v);
	}
	if (l->ok && !l->ok(m)) {
		memset(body, 0, sizeof(*m) - (size_t)(body - (uint8_t *)m));
		return -EBADMSG;
	}
	return 0;
}

int cm_mad_encode(const struct cm_msg *m, void *buf, size_t len)
{
	uint8_t data[MAD_DATA_SIZE] = { 0 };
	const struct cm_layout *l;
	const uint8_t *body;

	if (!m || !buf || len < MAD_SIZE)
		return -EINVAL;
	body = msg_body_const(m);
	l = cm_layout_find(m->hdr.attr_id);
	if (!l || (l->ok && !l->ok(m)))
		return -EINVAL;

	for (unsigned int i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		uint64_t v;

		if (f->kind == CM_F_BYTES) {
			memcpy(data + f->off, body + f->moff, f->width);
			continue;
		}
		v = member_get(body, f) >> f->mshift;
		/* A piece takes its bits; the whole is checked by ok(). */
		if (!f->piece && v > width_mask(f->width))
			return -EINVAL;
		wire_put(data, f, v);
	}
	mad_hdr_encode(&m->hdr, buf);
	memcpy((uint8_t *)buf + MAD_HDR_SIZE, data, sizeof(data));
	return 0;
}

/* --- Names --------------------------------------------------------------- */
const char *cm_mad_str(uint16_t attr_id)
{
	const struct cm_layout *l = cm_layout_find(attr_id);

	if (l)
		return l->name;
	if (attr_id == CM_ATTR_CLASS_PORT_INFO)
		return "ClassPortInfo";
	return "unknown";
}

static const char *const rej_reason_names[] = {
	[CM_REJ_NO_QP] = "no QP",
	[CM_REJ_NO_EEC] = "no EEC",
	[CM_REJ_NO_RESOURCES] = "no resources",
	[CM_REJ_TIMEOUT] = "timeout",
	[CM_REJ_UNSUPPORTED] = "unsupported request",
	[CM_REJ_INVALID_COMM_ID] = "invalid comm ID",
	[CM_REJ_INVALID_COMM_INSTANCE] = "invalid comm instance",
	[CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
	[CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport type",
	[CM_REJ_STALE_CONN] = "stale connection",
	[CM_REJ_RDC_NOT_EXIST] = "RDC does not exist",
	[CM_REJ_INVALID_GID] = "invalid GID",
	[CM_REJ_INVALID_LID] = "invalid LID",
	[CM_REJ_INVALID_SL] = "invalid SL",
	[CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid traffic class",
	[CM_REJ_INVALID_HOP_LIMIT] = "invalid hop limit",
	[CM_REJ_INVALID_PACKET_RATE] = "invalid packet rate",
	[CM_REJ_INVALID_ALT_GID] = "invalid alternate GID",
	[CM_REJ_INVALID_ALT_LID] = "invalid alternate LID",
	[CM_REJ_INVALID_ALT_SL] = "invalid alternate SL",
	[CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid alternate traffic class",
	[CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alternate hop limit",
	[CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alternate packet rate",
	[CM_REJ_PORT_CM_REDIRECT] = "port CM redirect",
	[CM_REJ_PORT_REDIRECT] = "port redirect",
	[CM_REJ_INVALID_MTU] = "invalid MTU",
	[CM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient responder "
					       "resources",
	[CM_REJ_CONSUMER_DEFINED] = "consumer defined",
	[CM_REJ_INVALID_RNR_RETRY] = "invalid RNR retry count",
	[CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local comm ID",
	[CM_REJ_INVALID_CLASS_VERSION] = "invalid class version",
	[CM_REJ_INVALID_FLOW_LABEL] = "invalid flow label",
	[CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alternate flow label",
	[CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option not supported",
};

const char *cm_rej_reason_str(uint16_t reason)
{
	if (reason < sizeof(rej_reason_names) / sizeof(rej_reason_names[0]) &&
	    rej_reason_names[reason])
		return rej_reason_names[reason];
	return "unknown reason";
}

static const char *const sidr_status_names[] = {
	[CM_SIDR_SUCCESS] = "success",
	[CM_SIDR_UNSUPPORTED] = "service ID not supported",
	[CM_SIDR_REJECT] = "rejected by the service provider",
	[CM_SIDR_NO_QP] = "no QP",
	[CM_SIDR_REDIRECT] = "redirect",
	[CM_SIDR_UNSUPPORTED_VERSION] = "class version not supported",
};

const char *cm_sidr_status_str(uint8_t status)
{
	if (status < sizeof(sidr_status_names) / sizeof(sidr_status_names[0]))
		return sidr_status_names[status];
	return "unknown status";
}

static const char *const apr_status_names[] = {
	[CM_APR_SUCCESS] = "success",
	[CM_APR_INVALID_COMM_ID] = "invalid comm ID",
	[CM_APR_UNSUPPORTED] = "unsupported",
	[CM_APR_REJECT] = "rejected",
	[CM_APR_REDIRECT] = "redirect",
	[CM_APR_IS_CURRENT] = "path is current",
	[CM_APR_INVALID_QPN_EECN] = "invalid QPN/EECN",
	[CM_APR_INVALID_LID] = "invalid LID",
	[CM_APR_INVALID_GID] = "invalid GID",
	[CM_APR_INVALID_FLOW_LABEL] = "invalid flow label",
	[CM_APR_INVALID_TCLASS] = "invalid traffic class",
	[CM_APR_INVALID_HOP_LIMIT] = "invalid hop limit",
	[CM_APR_INVALID_PACKET_RATE] = "invalid packet rate",
	[CM_APR_INVALID_SL] = "invalid SL",
};

const char *cm_apr_status_str(uint8_t status)
{
	if (status < sizeof(apr_status_names) / sizeof(apr_status_names[0]))
		return apr_status_names[status];
	return "unknown status";
}

static const char *msg_code_str(uint8_t code, bool mra)
{
	switch (code) {
	case CM_MSG_CODE_REQ:
		return "REQ";
	case CM_MSG_CODE_REP:
		return "REP";
	case 2:
		return mra ? "LAP" : "other";
	default:
		return "reserved";
	}
}

/* The part of a line after the attribute name and TID. */
static int msg_body_format(char *buf, size_t size, const struct cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		return snprintf(buf, size,
				" lcid 0x%08x sid 0x%016llx qpn 0x%06x"
				" psn 0x%06x tst %u mtu %u rr %u id %u",
				m->req.local_comm_id,
				(unsigned long long)m->req.service_id,
				m->req.local_qpn, m->req.starting_psn,
				m->req.transport_type, m->req.path_mtu,
				m->req.responder_resources,
				m->req.initiator_depth);
	case CM_ATTR_MRA:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x mraed %s timeout %u",
				m->mra.local_comm_id, m->mra.remote_comm_id,
				msg_code_str(m->mra.message_mraed, true),
				m->mra.service_timeout);
	case CM_ATTR_REJ:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x rejected %s"
				" reason %u (%s) ari %u",
				m->rej.local_comm_id, m->rej.remote_comm_id,
				msg_code_str(m->rej.message_rejected, false),
				m->rej.reason, cm_rej_reason_str(m->rej.reason),
				m->rej.ari_length);
	case CM_ATTR_REP:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x"
				" psn 0x%06x rr %u id %u",
				m->rep.local_comm_id, m->rep.remote_comm_id,
				m->rep.local_qpn, m->rep.starting_psn,
				m->rep.responder_resources,
				m->rep.initiator_depth);
	case CM_ATTR_RTU:
		return snprintf(buf, size, " lcid 0x%08x rcid 0x%08x",
				m->rtu.local_comm_id, m->rtu.remote_comm_id);
	case CM_ATTR_DREP:
		return snprintf(buf, size, " lcid 0x%08x rcid 0x%08x",
				m->drep.local_comm_id, m->drep.remote_comm_id);
	case CM_ATTR_DREQ:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x",
				m->dreq.local_comm_id, m->dreq.remote_comm_id,
				m->dreq.remote_qpn_eecn);
	case CM_ATTR_LAP:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x",
				m->lap.local_comm_id, m->lap.remote_comm_id,
				m->lap.remote_qpn_eecn);
	case CM_ATTR_APR:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x status %u (%s)",
				m->apr.local_comm_id, m->apr.remote_comm_id,
				m->apr.status,
				cm_apr_status_str(m->apr.status));
	case CM_ATTR_SIDR_REQ:
		return snprintf(buf, size,
				" rid 0x%08x sid 0x%016llx pkey 0x%04x",
				m->sidr_req.request_id,
				(unsigned long long)m->sidr_req.service_id,
				m->sidr_req.pkey);
	case CM_ATTR_SIDR_REP:
		return snprintf(buf, size,
				" rid 0x%08x status %u (%s) qpn 0x%06x"
				" qkey 0x%08x sid 0x%016llx",
				m->sidr_rep.request_id, m->sidr_rep.status,
				cm_sidr_status_str(m->sidr_rep.status),
				m->sidr_rep.qpn, m->sidr_rep.qkey,
				(unsigned long long)m->sidr_rep.service_id);
	default:
		return snprintf(buf, size, " attr 0x%04x", m->hdr.attr_id);
	}
}

int cm_msg_format(char *buf, size_t size, const struct cm_msg *m)
{
	int head, body;
	size_t used;

	head = snprintf(buf, size, "%s tid 0x%llx", cm_mad_str(m->hdr.attr_id),
			(unsigned long long)m->hdr.tid);
	if (head < 0)
		return head;
	/* Carry on where the text stops, even if the head was cut. */
	used = (size_t)head < size ? (size_t)head : (size ? size - 1 : 0);
	body = msg_body_format(size ? buf + used : NULL, size ? size - used : 0,
			       m);
	if (body < 0)
		return body;
	return head + body;
}

int cm_set_private_data(uint8_t *area, size_t cap, const void *src, size_t len)
{
	if (len > cap || (len && !src))
		return -EINVAL;
	if (len)
		memcpy(area, src, len);
	memset(area + len, 0, cap - len);
	return 0;
}

/* --- Table self-checks ----------------------------------------------------- */
static void mark_bits(uint8_t *map, unsigned int from, unsigned int n)
{
	for (unsigned int b = from; b < from + n; b++)
		map[b / 8] |= (uint8_t)(0x80 >> (b % 8));
}

/* Bits of the MAD data a layout's fields cover; -EINVAL on an overlap. */
static int layout_cover(const struct cm_layout *l, uint8_t *map)
{
	memset(map, 0, MAD_DATA_SIZE);
	for (unsigned int i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		unsigned int nbits = f->kind == CM_F_BYTES ? f->width * 8u
							   : f->width;
		unsigned int from = f->off * 8u + f->bit;

		if (from + nbits > MAD_DATA_SIZE * 8)
			return -EINVAL;
		for (unsigned int b = from; b < from + nbits; b++)
			if (map[b / 8] & (0x80 >> (b % 8)))
				return -EINVAL;
		mark_bits(map, from, nbits);
	}
	return 0;
}

static int field_check(const struct cm_layout *l, const struct cm_field *f)
{
	if (f->kind == CM_F_BYTES) {
		if (f->bit || !f->width ||
		    f->moff + (size_t)f->width > l->msg_size)
			return -EINVAL;
		return 0;
	}
	if (f->width == 0 || f->width > 64 || f->bit > 7 ||
	    f->bit + f->width > 64)
		return -EINVAL;
	if (f->msize != 1 && f->msize != 2 && f->msize != 4 && f->msize != 8)
		return -EINVAL;
	if (f->mshift + f->width > f->msize * 8u ||
	    f->moff + (size_t)f->msize > l->msg_size)
		return -EINVAL;
	if (f->mshift && !f->piece)
		return -EINVAL;
	return 0;
}

int cm_mad_layout_check(void)
{
	uint8_t map[MAD_DATA_SIZE];

	for (size_t i = 0; i < CM_NLAYOUTS; i++) {
		const struct cm_layout *l = &cm_layouts[i];

		for (unsigned int j = 0; j < l->nfields; j++)
			if (field_check(l, &l->fields[j]))
				return -EINVAL;
		if (layout_cover(l, map))
			return -EINVAL;
		/* Every message ends in its private data. */
		if (map[MAD_DATA_SIZE - 1] != 0xff)
			return -EINVAL;
	}
	return 0;
}

int cm_mad_reserved_mask(uint16_t attr_id, uint8_t *mask)
{
	const struct cm_layout *l = cm_layout_find(attr_id);

	if (!l || !mask || layout_cover(l, mask))
		return -EINVAL;
	for (unsigned int i = 0; i < MAD_DATA_SIZE; i++)
		mask[i] = (uint8_t)~mask[i];
	return 0;
}

/* --- rdma_cm: service IDs and the CMA header ---------------------------- */
int cm_ip_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint64_t space = sid >> 16;

	switch (space) {
	case CM_PS_IPOIB:
	case CM_PS_TCP:
	case CM_PS_UDP:
	case CM_PS_IB:
		break;
	default:
		return -EINVAL;
	}
	if (ps)
		*ps = (uint16_t)space;
	if (port)
		*port = (uint16_t)sid;
	return 0;
}

/* Offsets in the 36-byte header. */
enum {
	CMA_OFF_VERSION = 0,
	CMA_OFF_IP_VERSION = 1,
	CMA_OFF_PORT = 2,
	CMA_OFF_SRC = 4,
	CMA_OFF_DST = 20,
};
static_assert(CMA_OFF_DST + 16 == CMA_HDR_SIZE, "cma_hdr is 36 bytes");

int cma_hdr_decode(const void *buf, size_t len, struct cma_hdr *h)
{
	const uint8_t *p = buf;

	memset(h, 0, sizeof(*h));
	if (!buf || len < CMA_HDR_SIZE)
		return -EBADMSG;
	h->version = p[CMA_OFF_VERSION];
	h->ip_version = p[CMA_OFF_IP_VERSION] >> 4;
	h->src_port = mad_get_be16(p + CMA_OFF_PORT);
	memcpy(h->src_addr, p + CMA_OFF_SRC, 16);
	memcpy(h->dst_addr, p + CMA_OFF_DST, 16);
	if (h->version != CMA_HDR_VERSION ||
	    (h->ip_version != 4 && h->ip_version != 6))
		return -EBADMSG;
	return 0;
}

int cma_hdr_encode(const struct cma_hdr *h, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (!h || !buf || len < CMA_HDR_SIZE || h->version != CMA_HDR_VERSION ||
	    (h->ip_version != 4 && h->ip_version != 6))
		return -EINVAL;
	p[CMA_OFF_VERSION] = h->version;
	p[CMA_OFF_IP_VERSION] = (uint8_t)(h->ip_version << 4);
	mad_put_be16(p + CMA_OFF_PORT, h->src_port);
	memcpy(p + CMA_OFF_SRC, h->src_addr, 16);
	memcpy(p + CMA_OFF_DST, h->dst_addr, 16);
	return 0;
}

int cma_hdr_from_sockaddr(struct cma_hdr *h, const struct sockaddr *src,
			  const struct sockaddr *dst)
{
	if (!h || !src || !dst || src->sa_family != dst->sa_family)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->version = CMA_HDR_VERSION;
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)src;
		const struct sockaddr_in *d = (const struct sockaddr_in *)dst;

		h->ip_version = 4;
		h->src_port = ntohs(s->sin_port);
		memcpy(h->src_addr + 12, &s->sin_addr, 4);
		memcpy(h->dst_addr + 12, &d->sin_addr, 4);
	} else if (src->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)src;
		const struct sockaddr_in6 *d = (const struct sockaddr_in6 *)dst;

		h->ip_version = 6;
		h->src_port = ntohs(s->sin6_port);
		memcpy(h->src_addr, &s->sin6_addr, 16);
		memcpy(h->dst_addr, &d->sin6_addr, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

int cma_hdr_to_sockaddr(const struct cma_hdr *h, uint64_t service_id,
			struct sockaddr_storage *src,
			struct sockaddr_storage *dst)
{
	uint16_t dport = (uint16_t)service_id;

	if (!h || !src || !dst)
		return -EINVAL;
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (h->ip_version == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		s->sin_family = AF_INET;
		s->sin_port = htons(h->src_port);
		memcpy(&s->sin_addr, h->src_addr + 12, 4);
		d->sin_family = AF_INET;
		d->sin_port = htons(dport);
		memcpy(&d->sin_addr, h->dst_addr + 12, 4);
	} else if (h->ip_version == 6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(h->src_port);
		memcpy(&s->sin6_addr, h->src_addr, 16);
		d->sin6_family = AF_INET6;
		d->sin6_port = htons(dport);
		memcpy(&d->sin6_addr, h->dst_addr, 16);
	} else {
		return -EINVAL;
	}
	return 0;
}
