/* SPDX-License-Identifier: MIT */
/*
 * The field table of every CM message (IBTA vol. 1 tables 106-120), the
 * value rules beyond field widths, and the tables' self-checks: no field
 * overlaps another or leaves its member, and the bits no field covers are
 * the reserved ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "daemon/cm/cm_mad_layout.h"

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

const struct cm_layout *cm_layout_find(uint16_t attr_id)
{
	for (size_t i = 0; i < CM_NLAYOUTS; i++)
		if (cm_layouts[i].attr_id == attr_id)
			return &cm_layouts[i];
	return NULL;
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
