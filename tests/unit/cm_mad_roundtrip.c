/* SPDX-License-Identifier: MIT */
/*
 * CM MAD encode/decode without captures: every message type built with
 * random and with largest values (full private data), encoded, decoded and
 * compared; fields checked at their spec byte offsets; values too wide for
 * their field refused; malformed MADs (every truncation, wrong class,
 * version, method, attribute, reserved codes, 100k random inputs from a
 * fixed seed) refused without reading past the buffer.  Each input is
 * decoded from an exact-size heap copy so ASan sees any overread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cm/cm_mad.h"
#include "t_assert.h"

static const uint16_t all_attrs[] = {
	CM_ATTR_REQ,	  CM_ATTR_MRA,	CM_ATTR_REJ,  CM_ATTR_REP,
	CM_ATTR_RTU,	  CM_ATTR_DREQ, CM_ATTR_DREP, CM_ATTR_SIDR_REQ,
	CM_ATTR_SIDR_REP, CM_ATTR_LAP,	CM_ATTR_APR,
};
#define NATTRS (sizeof(all_attrs) / sizeof(all_attrs[0]))

/* --- Deterministic values ---------------------------------------------- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static bool fill_max; /* every field at its largest value */

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint64_t val(unsigned int bits)
{
	uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;

	return fill_max ? mask : rng() & mask;
}

/* A value in [0, n). */
static unsigned int below(unsigned int n)
{
	return fill_max ? n - 1 : (unsigned int)(rng() % n);
}

static void bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = fill_max ? (uint8_t)(0xff - i) : (uint8_t)rng();
}

static void fill_path(struct cm_path *p)
{
	p->local_lid = (uint16_t)val(16);
	p->remote_lid = (uint16_t)val(16);
	bytes(p->local_gid, 16);
	bytes(p->remote_gid, 16);
	p->flow_label = (uint32_t)val(20);
	p->packet_rate = (uint8_t)val(6);
	p->traffic_class = (uint8_t)val(8);
	p->hop_limit = (uint8_t)val(8);
	p->sl = (uint8_t)val(4);
	p->subnet_local = (uint8_t)val(1);
	p->local_ack_timeout = (uint8_t)val(5);
}

/* Every field of the message attr names, within its width. */
static void fill(struct cm_msg *m, uint16_t attr)
{
	cm_msg_init(m, attr, val(64));
	m->hdr.attr_mod = (uint32_t)val(32);
	switch (attr) {
	case CM_ATTR_REQ: {
		struct cm_req *r = &m->req;

		r->local_comm_id = (uint32_t)val(32);
		r->vendor_id = (uint32_t)val(24);
		r->service_id = val(64);
		r->local_ca_guid = val(64);
		r->local_qkey = (uint32_t)val(32);
		r->local_qpn = (uint32_t)val(24);
		r->responder_resources = (uint8_t)val(8);
		r->local_eecn = (uint32_t)val(24);
		r->initiator_depth = (uint8_t)val(8);
		r->remote_eecn = (uint32_t)val(24);
		r->remote_cm_response_timeout = (uint8_t)val(5);
		r->transport_type = (uint8_t)val(2);
		r->flow_control = (uint8_t)val(1);
		r->starting_psn = (uint32_t)val(24);
		r->local_cm_response_timeout = (uint8_t)val(5);
		r->retry_count = (uint8_t)val(3);
		r->pkey = (uint16_t)val(16);
		r->path_mtu = (uint8_t)val(4);
		r->rdc_exists = (uint8_t)val(1);
		r->rnr_retry_count = (uint8_t)val(3);
		r->max_cm_retries = (uint8_t)val(4);
		r->srq = (uint8_t)val(1);
		r->ext_transport_type = (uint8_t)val(3);
		fill_path(&r->primary);
		fill_path(&r->alternate);
		r->sap_supported = (uint8_t)val(1);
		bytes(r->private_data, sizeof(r->private_data));
		break;
	}
	case CM_ATTR_MRA:
		m->mra.local_comm_id = (uint32_t)val(32);
		m->mra.remote_comm_id = (uint32_t)val(32);
		m->mra.message_mraed = (uint8_t)below(3);
		m->mra.service_timeout = (uint8_t)val(5);
		bytes(m->mra.private_data, sizeof(m->mra.private_data));
		break;
	case CM_ATTR_REJ:
		m->rej.local_comm_id = (uint32_t)val(32);
		m->rej.remote_comm_id = (uint32_t)val(32);
		m->rej.message_rejected = (uint8_t)below(3);
		m->rej.ari_length = (uint8_t)below(CM_REJ_ARI_SIZE + 1);
		m->rej.reason = (uint16_t)val(16);
		bytes(m->rej.ari, sizeof(m->rej.ari));
		bytes(m->rej.private_data, sizeof(m->rej.private_data));
		break;
	case CM_ATTR_REP: {
		struct cm_rep *r = &m->rep;

		r->local_comm_id = (uint32_t)val(32);
		r->remote_comm_id = (uint32_t)val(32);
		r->local_qkey = (uint32_t)val(32);
		r->local_qpn = (uint32_t)val(24);
		r->local_eecn = (uint32_t)val(24);
		r->starting_psn = (uint32_t)val(24);
		r->vendor_id = (uint32_t)val(24);
		r->responder_resources = (uint8_t)val(8);
		r->initiator_depth = (uint8_t)val(8);
		r->target_ack_delay = (uint8_t)val(5);
		r->failover_accepted = (uint8_t)val(2);
		r->flow_control = (uint8_t)val(1);
		r->rnr_retry_count = (uint8_t)val(3);
		r->srq = (uint8_t)val(1);
		r->local_ca_guid = val(64);
		bytes(r->private_data, sizeof(r->private_data));
		break;
	}
	case CM_ATTR_RTU:
		m->rtu.local_comm_id = (uint32_t)val(32);
		m->rtu.remote_comm_id = (uint32_t)val(32);
		bytes(m->rtu.private_data, sizeof(m->rtu.private_data));
		break;
	case CM_ATTR_DREQ:
		m->dreq.local_comm_id = (uint32_t)val(32);
		m->dreq.remote_comm_id = (uint32_t)val(32);
		m->dreq.remote_qpn_eecn = (uint32_t)val(24);
		bytes(m->dreq.private_data, sizeof(m->dreq.private_data));
		break;
	case CM_ATTR_DREP:
		m->drep.local_comm_id = (uint32_t)val(32);
		m->drep.remote_comm_id = (uint32_t)val(32);
		bytes(m->drep.private_data, sizeof(m->drep.private_data));
		break;
	case CM_ATTR_SIDR_REQ:
		m->sidr_req.request_id = (uint32_t)val(32);
		m->sidr_req.pkey = (uint16_t)val(16);
		m->sidr_req.service_id = val(64);
		bytes(m->sidr_req.private_data,
		      sizeof(m->sidr_req.private_data));
		break;
	case CM_ATTR_SIDR_REP:
		m->sidr_rep.request_id = (uint32_t)val(32);
		m->sidr_rep.status = (uint8_t)val(8);
		m->sidr_rep.info_length =
			(uint8_t)below(CM_SIDR_REP_INFO_SIZE + 1);
		m->sidr_rep.vendor_id = (uint32_t)val(24);
		m->sidr_rep.qpn = (uint32_t)val(24);
		m->sidr_rep.service_id = val(64);
		m->sidr_rep.qkey = (uint32_t)val(32);
		bytes(m->sidr_rep.info, sizeof(m->sidr_rep.info));
		bytes(m->sidr_rep.private_data,
		      sizeof(m->sidr_rep.private_data));
		break;
	case CM_ATTR_LAP:
		m->lap.local_comm_id = (uint32_t)val(32);
		m->lap.remote_comm_id = (uint32_t)val(32);
		m->lap.remote_qpn_eecn = (uint32_t)val(24);
		m->lap.remote_cm_response_timeout = (uint8_t)val(5);
		fill_path(&m->lap.alternate);
		bytes(m->lap.private_data, sizeof(m->lap.private_data));
		break;
	case CM_ATTR_APR:
		m->apr.local_comm_id = (uint32_t)val(32);
		m->apr.remote_comm_id = (uint32_t)val(32);
		m->apr.info_length = (uint8_t)below(CM_APR_INFO_SIZE + 1);
		m->apr.status = (uint8_t)val(8);
		bytes(m->apr.info, sizeof(m->apr.info));
		bytes(m->apr.private_data, sizeof(m->apr.private_data));
		break;
	}
}

/* Decodes from an exact-size heap copy at an odd address when asked. */
static int decode_copy(const uint8_t *src, size_t len, struct cm_msg *m,
		       bool odd)
{
	uint8_t *raw = malloc(len + 1);
	int ret;

	if (!raw)
		abort();
	/* The odd copy ends at the end of the allocation as well. */
	if (odd) {
		memcpy(raw + 1, src, len);
		ret = cm_mad_decode(raw + 1, len, m);
	} else {
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact)
			abort();
		memcpy(exact, src, len);
		ret = cm_mad_decode(exact, len, m);
		free(exact);
	}
	free(raw);
	return ret;
}

/* --- build -> encode -> decode -> equal --------------------------------- */
static void roundtrip_one(uint16_t attr, const char *how)
{
	uint8_t mad[MAD_SIZE], again[MAD_SIZE];
	struct cm_msg m, d;
	int ret;

	fill(&m, attr);
	ret = cm_mad_encode(&m, mad, sizeof(mad));
	if (ret)
		T_FAIL("%s %s: encode %d", cm_mad_str(attr), how, ret);
	ret = decode_copy(mad, sizeof(mad), &d, rng() & 1);
	if (ret)
		T_FAIL("%s %s: decode %d", cm_mad_str(attr), how, ret);
	if (memcmp(&m, &d, sizeof(m)))
		T_FAIL("%s %s: decoded != built", cm_mad_str(attr), how);
	if (cm_mad_encode(&d, again, sizeof(again)) ||
	    memcmp(mad, again, sizeof(mad)))
		T_FAIL("%s %s: re-encoding differs", cm_mad_str(attr), how);
}

static void test_roundtrip(void)
{
	for (size_t i = 0; i < NATTRS; i++) {
		fill_max = true;
		roundtrip_one(all_attrs[i], "largest values");
		fill_max = false;
		for (int n = 0; n < 2000; n++)
			roundtrip_one(all_attrs[i], "random values");
	}
}

/* --- Fields at their spec offsets (MAD offset = 24 + table offset) ------ */
static void expect_bytes(const char *what, const uint8_t *mad, size_t off,
			 const uint8_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mad[off + i] != want[i])
			T_FAIL("%s: MAD byte %zu is 0x%02x, expected 0x%02x",
			       what, off + i, mad[off + i], want[i]);
}

#define EXPECT_BYTES(what, mad, off, ...)                     \
	do {                                                  \
		const uint8_t w_[] = { __VA_ARGS__ };         \
		expect_bytes(what, mad, off, w_, sizeof(w_)); \
	} while (0)

static void encode_or_fail(const struct cm_msg *m, uint8_t *mad)
{
	int ret = cm_mad_encode(m, mad, MAD_SIZE);

	if (ret)
		T_FAIL("%s: encode %d", cm_mad_str(m->hdr.attr_id), ret);
}

static void test_offsets(void)
{
	uint8_t mad[MAD_SIZE];
	struct cm_msg m;

	cm_msg_init(&m, CM_ATTR_REQ, 0x0102030405060708ull);
	m.hdr.attr_mod = 0xa0b0c0d0;
	m.req.local_comm_id = 0x11223344;
	m.req.vendor_id = 0x123456;
	m.req.service_id = 0x0000000001061c06ull;
	m.req.local_qpn = 0xabcdef;
	m.req.responder_resources = 0x12;
	m.req.remote_cm_response_timeout = 0x15;
	m.req.transport_type = CM_TST_UC;
	m.req.flow_control = 1;
	m.req.starting_psn = 0x654321;
	m.req.local_cm_response_timeout = 0x1f;
	m.req.retry_count = 5;
	m.req.path_mtu = 5;
	m.req.rdc_exists = 1;
	m.req.rnr_retry_count = 6;
	m.req.max_cm_retries = 15;
	m.req.srq = 1;
	m.req.ext_transport_type = 1;
	m.req.primary.flow_label = 0xfffff;
	m.req.primary.packet_rate = 0x3f;
	m.req.primary.sl = 0xf;
	m.req.primary.subnet_local = 1;
	m.req.primary.local_ack_timeout = 0x1f;
	m.req.alternate.flow_label = 0x12345;
	m.req.alternate.packet_rate = 0x01;
	m.req.sap_supported = 1;
	m.req.private_data[0] = 0xaa;
	m.req.private_data[91] = 0xbb;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("REQ header", mad, 0, 1, 7, 2, 3, 0, 0, 0, 0, 1, 2, 3, 4,
		     5, 6, 7, 8, 0x00, 0x10, 0, 0, 0xa0, 0xb0, 0xc0, 0xd0);
	EXPECT_BYTES("REQ comm ID, vendor ID", mad, 24, 0x11, 0x22, 0x33, 0x44,
		     0, 0x12, 0x34, 0x56);
	EXPECT_BYTES("REQ service ID", mad, 32, 0, 0, 0, 0, 1, 6, 0x1c, 6);
	EXPECT_BYTES("REQ QPN, RR", mad, 56, 0xab, 0xcd, 0xef, 0x12);
	EXPECT_BYTES("REQ timeout, TST, EEFC", mad, 67, 0xab);
	EXPECT_BYTES("REQ PSN, timeout, retry", mad, 68, 0x65, 0x43, 0x21,
		     0xfd);
	EXPECT_BYTES("REQ MTU, RDC, RNR, retries, SRQ, ext", mad, 74, 0x5e,
		     0xf9);
	EXPECT_BYTES("REQ primary flow label, rate", mad, 112, 0xff, 0xff, 0xf0,
		     0x3f);
	EXPECT_BYTES("REQ primary SL, SL, ACK timeout", mad, 118, 0xf8, 0xf8);
	EXPECT_BYTES("REQ alternate flow label, rate", mad, 156, 0x12, 0x34,
		     0x50, 0x01);
	EXPECT_BYTES("REQ SAP", mad, 163, 0x04);
	EXPECT_BYTES("REQ private data", mad, 164, 0xaa);
	EXPECT_BYTES("REQ private data end", mad, 255, 0xbb);

	cm_msg_init(&m, CM_ATTR_MRA, 1);
	m.mra.local_comm_id = 0x11223344;
	m.mra.remote_comm_id = 0x55667788;
	m.mra.message_mraed = CM_MSG_CODE_LAP;
	m.mra.service_timeout = 0x1f;
	m.mra.private_data[0] = 0xaa;
	m.mra.private_data[CM_MRA_PRIVATE_DATA_SIZE - 1] = 0xbb;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("MRA", mad, 16, 0x00, 0x11);
	EXPECT_BYTES("MRA", mad, 24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		     0x88, 0x80, 0xf8, 0xaa);
	EXPECT_BYTES("MRA private data end", mad, 255, 0xbb);

	cm_msg_init(&m, CM_ATTR_REJ, 1);
	m.rej.message_rejected = CM_MSG_CODE_REP;
	m.rej.ari_length = CM_REJ_ARI_SIZE;
	m.rej.reason = CM_REJ_CONSUMER_DEFINED;
	m.rej.ari[0] = 0x11;
	m.rej.ari[CM_REJ_ARI_SIZE - 1] = 0x22;
	m.rej.private_data[0] = 0xaa;
	m.rej.private_data[CM_REJ_PRIVATE_DATA_SIZE - 1] = 0xbb;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("REJ", mad, 32, 0x40, 0x90, 0x00, 28, 0x11);
	EXPECT_BYTES("REJ ARI end, private data", mad, 107, 0x22, 0xaa);
	EXPECT_BYTES("REJ private data end", mad, 255, 0xbb);

	cm_msg_init(&m, CM_ATTR_REP, 1);
	m.rep.local_qkey = 0x80010000;
	m.rep.local_qpn = 0x000011;
	m.rep.vendor_id = 0xa1b2c3;
	m.rep.local_eecn = 0x222222;
	m.rep.starting_psn = 0x333333;
	m.rep.responder_resources = 4;
	m.rep.initiator_depth = 5;
	m.rep.target_ack_delay = 0x1f;
	m.rep.failover_accepted = 2;
	m.rep.flow_control = 1;
	m.rep.rnr_retry_count = 5;
	m.rep.srq = 1;
	m.rep.local_ca_guid = 0x505400fffe77000aull;
	m.rep.private_data[0] = 0xaa;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("REP", mad, 32, 0x80, 0x01, 0, 0, 0, 0, 0x11, 0xa1, 0x22,
		     0x22, 0x22, 0xb2, 0x33, 0x33, 0x33, 0xc3, 4, 5, 0xfd, 0xb0,
		     0x50, 0x54, 0, 0xff, 0xfe, 0x77, 0, 0x0a, 0xaa);

	cm_msg_init(&m, CM_ATTR_DREQ, 1);
	m.dreq.remote_qpn_eecn = 0xabcdef;
	m.dreq.private_data[0] = 0xaa;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("DREQ", mad, 32, 0xab, 0xcd, 0xef, 0, 0xaa);

	cm_msg_init(&m, CM_ATTR_SIDR_REQ, 1);
	m.sidr_req.request_id = 0x01020304;
	m.sidr_req.pkey = 0xffff;
	m.sidr_req.service_id = 0x0000000001111f90ull;
	m.sidr_req.private_data[0] = 0xaa;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("SIDR_REQ", mad, 24, 1, 2, 3, 4, 0xff, 0xff, 0, 0, 0, 0, 0,
		     0, 1, 0x11, 0x1f, 0x90, 0xaa);

	cm_msg_init(&m, CM_ATTR_SIDR_REP, 1);
	m.sidr_rep.request_id = 0x01020304;
	m.sidr_rep.status = CM_SIDR_REDIRECT;
	m.sidr_rep.info_length = 16;
	m.sidr_rep.vendor_id = 0xa1b2c3;
	m.sidr_rep.qpn = 0x123456;
	m.sidr_rep.service_id = 0x1122334455667788ull;
	m.sidr_rep.qkey = 0x11111111;
	m.sidr_rep.info[0] = 0x99;
	m.sidr_rep.private_data[0] = 0xaa;
	m.sidr_rep.private_data[CM_SIDR_REP_PRIVATE_DATA_SIZE - 1] = 0xbb;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("SIDR_REP", mad, 24, 1, 2, 3, 4, 4, 16, 0xa1, 0xb2, 0x12,
		     0x34, 0x56, 0xc3, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		     0x88, 0x11, 0x11, 0x11, 0x11, 0x99);
	EXPECT_BYTES("SIDR_REP private data", mad, 120, 0xaa);
	EXPECT_BYTES("SIDR_REP private data end", mad, 255, 0xbb);

	cm_msg_init(&m, CM_ATTR_LAP, 1);
	m.lap.remote_qpn_eecn = 0xabcdef;
	m.lap.remote_cm_response_timeout = 0x1f;
	m.lap.alternate.local_lid = 0x0102;
	m.lap.alternate.remote_lid = 0x0304;
	m.lap.alternate.local_gid[0] = 0xfe;
	m.lap.alternate.remote_gid[15] = 0x01;
	m.lap.alternate.flow_label = 0xabcde;
	m.lap.alternate.traffic_class = 0x55;
	m.lap.alternate.hop_limit = 0x40;
	m.lap.alternate.packet_rate = 0x3f;
	m.lap.alternate.sl = 0xa;
	m.lap.alternate.subnet_local = 1;
	m.lap.alternate.local_ack_timeout = 0x11;
	m.lap.private_data[0] = 0xaa;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("LAP", mad, 36, 0xab, 0xcd, 0xef, 0xf8, 0, 0, 0, 0, 1, 2,
		     3, 4, 0xfe);
	EXPECT_BYTES("LAP remote GID end", mad, 79, 0x01);
	EXPECT_BYTES("LAP path", mad, 80, 0xab, 0xcd, 0xe0, 0x55, 0x40, 0x3f,
		     0xa8, 0x88, 0xaa);

	cm_msg_init(&m, CM_ATTR_APR, 1);
	m.apr.info_length = CM_APR_INFO_SIZE;
	m.apr.status = CM_APR_INVALID_SL;
	m.apr.info[0] = 0x11;
	m.apr.private_data[0] = 0xaa;
	encode_or_fail(&m, mad);
	EXPECT_BYTES("APR", mad, 32, 72, 13, 0, 0, 0x11);
	EXPECT_BYTES("APR private data", mad, 108, 0xaa);
}

/* --- Values too wide, and codes the spec reserves ----------------------- */
static void expect_encode_einval(const struct cm_msg *m, const char *what)
{
	uint8_t mad[MAD_SIZE];
	int ret = cm_mad_encode(m, mad, sizeof(mad));

	if (ret != -EINVAL)
		T_FAIL("%s: encode %d, expected -EINVAL", what, ret);
}

static void test_encode_limits(void)
{
	uint8_t mad[MAD_SIZE];
	struct cm_msg m;

#define TOO_WIDE(attr, field, v)                  \
	do {                                      \
		cm_msg_init(&m, attr, 1);         \
		m.field = (v);                    \
		expect_encode_einval(&m, #field); \
	} while (0)
	TOO_WIDE(CM_ATTR_REQ, req.local_qpn, 0x1000000);
	TOO_WIDE(CM_ATTR_REQ, req.vendor_id, 0x1000000);
	TOO_WIDE(CM_ATTR_REQ, req.starting_psn, 0x1000000);
	TOO_WIDE(CM_ATTR_REQ, req.remote_cm_response_timeout, 32);
	TOO_WIDE(CM_ATTR_REQ, req.transport_type, 4);
	TOO_WIDE(CM_ATTR_REQ, req.flow_control, 2);
	TOO_WIDE(CM_ATTR_REQ, req.retry_count, 8);
	TOO_WIDE(CM_ATTR_REQ, req.path_mtu, 16);
	TOO_WIDE(CM_ATTR_REQ, req.primary.flow_label, 0x100000);
	TOO_WIDE(CM_ATTR_REQ, req.primary.packet_rate, 64);
	TOO_WIDE(CM_ATTR_REQ, req.alternate.sl, 16);
	TOO_WIDE(CM_ATTR_REQ, req.sap_supported, 2);
	TOO_WIDE(CM_ATTR_MRA, mra.message_mraed, 3);
	TOO_WIDE(CM_ATTR_MRA, mra.service_timeout, 32);
	TOO_WIDE(CM_ATTR_REJ, rej.message_rejected, 3);
	TOO_WIDE(CM_ATTR_REJ, rej.ari_length, CM_REJ_ARI_SIZE + 1);
	TOO_WIDE(CM_ATTR_REP, rep.vendor_id, 0x1000000);
	TOO_WIDE(CM_ATTR_REP, rep.failover_accepted, 4);
	TOO_WIDE(CM_ATTR_DREQ, dreq.remote_qpn_eecn, 0x1000000);
	TOO_WIDE(CM_ATTR_SIDR_REP, sidr_rep.qpn, 0x1000000);
	TOO_WIDE(CM_ATTR_SIDR_REP, sidr_rep.vendor_id, 0x1000000);
	TOO_WIDE(CM_ATTR_SIDR_REP, sidr_rep.info_length, 73);
	TOO_WIDE(CM_ATTR_LAP, lap.alternate.local_ack_timeout, 32);
	TOO_WIDE(CM_ATTR_APR, apr.info_length, 73);
#undef TOO_WIDE

	cm_msg_init(&m, CM_ATTR_CLASS_PORT_INFO, 1);
	expect_encode_einval(&m, "ClassPortInfo");
	cm_msg_init(&m, 0x001b, 1);
	expect_encode_einval(&m, "attribute 0x001b");
	cm_msg_init(&m, CM_ATTR_RTU, 1);
	if (cm_mad_encode(&m, mad, MAD_SIZE - 1) != -EINVAL)
		T_FAIL("encode into 255 bytes");
	if (cm_mad_encode(&m, NULL, MAD_SIZE) != -EINVAL)
		T_FAIL("encode into NULL");
}

/* --- Malformed input ------------------------------------------------------ */
static void expect_bad(const uint8_t *mad, size_t len, const char *what)
{
	struct cm_msg m;
	int ret = decode_copy(mad, len, &m, false);

	if (ret != -EBADMSG)
		T_FAIL("%s: decode %d, expected -EBADMSG", what, ret);
}

static void test_malformed(void)
{
	uint8_t good[MAD_SIZE], bad[MAD_SIZE + 8];
	static const uint8_t methods[] = { 0x00, 0x01, 0x02, 0x05, 0x06,
					   0x07, 0x81, 0x83, 0x86, 0xff };
	static const uint16_t attrs[] = { 0x0000, 0x0001, 0x000f, 0x001b,
					  0x0020, 0x0110, 0x1000, 0xffff };
	struct cm_msg m;
	char what[64];

	if (cm_mad_decode(NULL, MAD_SIZE, &m) != -EBADMSG)
		T_FAIL("NULL buffer");
	for (size_t a = 0; a < NATTRS; a++) {
		fill(&m, all_attrs[a]);
		encode_or_fail(&m, good);
		if (decode_copy(good, MAD_SIZE, &m, false))
			T_FAIL("%s does not decode", cm_mad_str(all_attrs[a]));
		for (size_t len = 0; len < MAD_SIZE; len++) {
			snprintf(what, sizeof(what), "%s cut to %zu",
				 cm_mad_str(all_attrs[a]), len);
			expect_bad(good, len, what);
		}
		memcpy(bad, good, MAD_SIZE);
		memset(bad + MAD_SIZE, 0, 8);
		expect_bad(bad, MAD_SIZE + 1, "257 bytes");
		expect_bad(bad, MAD_SIZE + 8, "264 bytes");

		for (unsigned int v = 0; v < 256; v++) {
			if (v != MAD_BASE_VERSION) {
				memcpy(bad, good, MAD_SIZE);
				bad[MAD_OFF_BASE_VERSION] = (uint8_t)v;
				expect_bad(bad, MAD_SIZE, "base version");
			}
			if (v != MAD_CLASS_CM) {
				memcpy(bad, good, MAD_SIZE);
				bad[MAD_OFF_MGMT_CLASS] = (uint8_t)v;
				expect_bad(bad, MAD_SIZE, "class");
			}
			if (v != CM_CLASS_VERSION) {
				memcpy(bad, good, MAD_SIZE);
				bad[MAD_OFF_CLASS_VERSION] = (uint8_t)v;
				expect_bad(bad, MAD_SIZE, "class version");
			}
		}
		for (size_t i = 0; i < sizeof(methods); i++) {
			memcpy(bad, good, MAD_SIZE);
			bad[MAD_OFF_METHOD] = methods[i];
			expect_bad(bad, MAD_SIZE, "method");
		}
		for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			memcpy(bad, good, MAD_SIZE);
			mad_put_be16(bad + MAD_OFF_ATTR_ID, attrs[i]);
			expect_bad(bad, MAD_SIZE, "attribute");
		}
	}

	/* Codes the spec reserves. */
	cm_msg_init(&m, CM_ATTR_MRA, 1);
	encode_or_fail(&m, good);
	memcpy(bad, good, MAD_SIZE);
	bad[32] |= 0xc0; /* message MRAed 3 */
	expect_bad(bad, MAD_SIZE, "MRA of message code 3");

	cm_msg_init(&m, CM_ATTR_REJ, 1);
	encode_or_fail(&m, good);
	memcpy(bad, good, MAD_SIZE);
	bad[32] |= 0xc0; /* message REJected 3 */
	expect_bad(bad, MAD_SIZE, "REJ of message code 3");
	for (unsigned int len = CM_REJ_ARI_SIZE + 1; len < 128; len++) {
		memcpy(bad, good, MAD_SIZE);
		bad[33] = (uint8_t)(len << 1);
		expect_bad(bad, MAD_SIZE, "REJ ARI length");
	}
	memcpy(bad, good, MAD_SIZE);
	bad[33] = (uint8_t)(CM_REJ_ARI_SIZE << 1 | 1); /* + reserved bit */
	if (decode_copy(bad, MAD_SIZE, &m, false) ||
	    m.rej.ari_length != CM_REJ_ARI_SIZE)
		T_FAIL("REJ ARI length 72 refused");

	cm_msg_init(&m, CM_ATTR_SIDR_REP, 1);
	encode_or_fail(&m, good);
	memcpy(bad, good, MAD_SIZE);
	bad[29] = CM_SIDR_REP_INFO_SIZE + 1;
	expect_bad(bad, MAD_SIZE, "SIDR_REP information length");

	cm_msg_init(&m, CM_ATTR_APR, 1);
	encode_or_fail(&m, good);
	memcpy(bad, good, MAD_SIZE);
	bad[32] = 0xff;
	expect_bad(bad, MAD_SIZE, "APR information length");

	/* The header survives a refused body, for a REJ of the sender. */
	cm_msg_init(&m, CM_ATTR_REQ, 0xfeedull);
	encode_or_fail(&m, good);
	good[MAD_OFF_CLASS_VERSION] = 3;
	if (decode_copy(good, MAD_SIZE, &m, false) != -EBADMSG ||
	    m.hdr.tid != 0xfeedull || m.hdr.class_version != 3)
		T_FAIL("header not kept on a refused MAD");
}

/* --- Random input --------------------------------------------------------- */
struct fuzz_totals {
	unsigned long runs, accepted;
};

/* One input: refused, or accepted and stable through encode. */
static void fuzz_one(const uint8_t *in, size_t len, struct fuzz_totals *t)
{
	uint8_t out[MAD_SIZE], mask[MAD_DATA_SIZE];
	struct cm_msg m, m2;
	int ret;

	t->runs++;
	ret = decode_copy(in, len, &m, t->runs & 1);
	if (ret == -EBADMSG)
		return;
	if (ret)
		T_FAIL("random input %lu: decode %d", t->runs, ret);
	t->accepted++;
	if (cm_mad_encode(&m, out, sizeof(out)) ||
	    cm_mad_reserved_mask(m.hdr.attr_id, mask))
		T_FAIL("random input %lu: accepted but not encodable", t->runs);
	/* What comes out is what came in, less the reserved bits. */
	if (memcmp(out, in, MAD_HDR_SIZE))
		T_FAIL("random input %lu: header changed", t->runs);
	for (unsigned int i = 0; i < MAD_DATA_SIZE; i++)
		if (out[MAD_HDR_SIZE + i] != (in[MAD_HDR_SIZE + i] & ~mask[i]))
			T_FAIL("random input %lu: data byte %u changed",
			       t->runs, MAD_HDR_SIZE + i);
	if (cm_mad_decode(out, sizeof(out), &m2) || memcmp(&m, &m2, sizeof(m)))
		T_FAIL("random input %lu: decode of the re-encoding differs",
		       t->runs);
}

static void test_random(void)
{
	struct fuzz_totals t = { 0 };
	uint8_t buf[MAD_SIZE + 64];
	struct cm_msg m;

	rng_state = 0x5eed5eed12345678ull;
	fill_max = false;
	for (unsigned int i = 0; i < 100000; i++) {
		size_t len = MAD_SIZE;

		bytes(buf, sizeof(buf));
		switch (i % 4) {
		case 0: /* anything, any length */
			len = rng() % sizeof(buf);
			break;
		case 1: /* a CM header over random bytes */
			buf[0] = MAD_BASE_VERSION;
			buf[1] = MAD_CLASS_CM;
			buf[2] = CM_CLASS_VERSION;
			buf[3] = MAD_METHOD_SEND;
			mad_put_be16(buf + MAD_OFF_ATTR_ID,
				     (uint16_t)(0x0f + rng() % 13));
			break;
		default: /* a valid message with a few bits flipped */
			fill(&m, all_attrs[rng() % NATTRS]);
			encode_or_fail(&m, buf);
			for (unsigned int n = rng() % 4; n > 0; n--)
				buf[rng() % MAD_SIZE] ^=
					(uint8_t)(1u << (rng() % 8));
			if (rng() % 16 == 0)
				len = rng() % sizeof(buf);
			break;
		}
		fuzz_one(buf, len, &t);
	}
	printf("random: %lu inputs, %lu accepted, %lu refused\n", t.runs,
	       t.accepted, t.runs - t.accepted);
	if (t.accepted <= 10000 || t.runs - t.accepted <= 10000)
		T_FAIL("random inputs do not exercise both outcomes");
}

/* --- Names, private data, tables ---------------------------------------- */
static void test_names(void)
{
	static const char *const names[] = { "REQ",  "MRA",	 "REJ",
					     "REP",  "RTU",	 "DREQ",
					     "DREP", "SIDR_REQ", "SIDR_REP",
					     "LAP",  "APR" };
	char line[256];
	struct cm_msg m;

	for (size_t i = 0; i < NATTRS; i++) {
		if (strcmp(cm_mad_str(all_attrs[i]), names[i]))
			T_FAIL("cm_mad_str(0x%04x) = %s", all_attrs[i],
			       cm_mad_str(all_attrs[i]));
		fill(&m, all_attrs[i]);
		if (cm_msg_format(line, sizeof(line), &m) <= 0 ||
		    strncmp(line, names[i], strlen(names[i])))
			T_FAIL("cm_msg_format: %s", line);
	}
	if (strcmp(cm_mad_str(0x0042), "unknown"))
		T_FAIL("attr 0x42 named");

	/* Cut lines: snprintf's contract, whatever the size. */
	fill(&m, CM_ATTR_REQ);
	{
		int full = cm_msg_format(line, sizeof(line), &m);
		char small[sizeof(line)];

		if (full <= 20 || (size_t)full >= sizeof(line) ||
		    cm_msg_format(NULL, 0, &m) != full)
			T_FAIL("cm_msg_format length %d", full);
		for (size_t sz = 1; sz < (size_t)full + 2; sz++) {
			memset(small, 'x', sizeof(small));
			if (cm_msg_format(small, sz, &m) != full ||
			    strlen(small) != (sz <= (size_t)full
						      ? sz - 1
						      : (size_t)full) ||
			    strncmp(small, line, strlen(small)))
				T_FAIL("cm_msg_format into %zu bytes: %s", sz,
				       small);
		}
	}

	for (unsigned int r = 0; r < 64; r++) {
		bool named = (r >= 1 && r <= 33) || r == 35;
		const char *s = cm_rej_reason_str((uint16_t)r);

		if (named != !!strcmp(s, "unknown reason"))
			T_FAIL("REJ reason %u: \"%s\"", r, s);
		for (unsigned int q = 1; named && q < r; q++)
			if (!strcmp(s, cm_rej_reason_str((uint16_t)q)))
				T_FAIL("REJ reasons %u and %u share a name", q,
				       r);
	}
	T_STR_EQ(cm_rej_reason_str(CM_REJ_CONSUMER_DEFINED), "consumer "
							     "defined");
	T_STR_EQ(cm_rej_reason_str(CM_REJ_INVALID_SERVICE_ID), "invalid "
							       "service ID");
	for (unsigned int s = 0; s <= CM_SIDR_UNSUPPORTED_VERSION; s++)
		if (!strcmp(cm_sidr_status_str((uint8_t)s), "unknown status"))
			T_FAIL("SIDR status %u unnamed", s);
	T_STR_EQ(cm_sidr_status_str(6), "unknown status");
	if (!strcmp(cm_apr_status_str(CM_APR_INVALID_SL), "unknown status"))
		T_FAIL("APR status 13 unnamed");
}

static void test_private_data(void)
{
	uint8_t area[CM_REQ_PRIVATE_DATA_SIZE],
		src[CM_REQ_PRIVATE_DATA_SIZE + 1];

	memset(area, 0xee, sizeof(area));
	memset(src, 0x5a, sizeof(src));
	if (cm_set_private_data(area, sizeof(area), src, sizeof(src)) !=
	    -EINVAL)
		T_FAIL("93 bytes into a REQ");
	if (area[0] != 0xee)
		T_FAIL("refused private data was copied");
	if (cm_set_private_data(area, sizeof(area), src, 10) ||
	    area[9] != 0x5a || area[10] != 0 || area[91] != 0)
		T_FAIL("10 bytes into a REQ");
	if (cm_set_private_data(area, sizeof(area), src, sizeof(area)) ||
	    area[91] != 0x5a)
		T_FAIL("92 bytes into a REQ");
	if (cm_set_private_data(area, sizeof(area), NULL, 0) || area[0] != 0)
		T_FAIL("no private data");
}

/* --- rdma_cm: service IDs and the CMA header ---------------------------- */
static void test_cma(void)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(40000) };
	struct sockaddr_in6 d6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(4791) };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_storage src, dst;
	uint8_t wire[CMA_HDR_SIZE], bad[CMA_HDR_SIZE];
	struct cma_hdr h, h2;
	uint16_t ps, port;
	uint64_t sid;

	if (cm_ip_service_id(CM_PS_TCP, 7174) != 0x0000000001061c06ull)
		T_FAIL("TCP service ID");
	if (cm_ip_service_id(CM_PS_UDP, 4791) != 0x00000000011112b7ull)
		T_FAIL("UDP service ID");
	if (cm_ip_service_id(CM_PS_IB, 1) != 0x00000000013f0001ull)
		T_FAIL("IB service ID");
	if (cm_ip_service_id_parse(0x00000000011112b7ull, &ps, &port) ||
	    ps != CM_PS_UDP || port != 4791)
		T_FAIL("parse UDP service ID");
	if (cm_ip_service_id_parse(0x0000000001071c06ull, &ps, &port) !=
	    -EINVAL)
		T_FAIL("port space 0x0107 accepted");
	if (cm_ip_service_id_parse(0x1000000001061c06ull, &ps, &port) !=
	    -EINVAL)
		T_FAIL("high service ID bits accepted");

	/* IPv6 both ways. */
	inet_pton(AF_INET6, "fe80::1", &s6.sin6_addr);
	inet_pton(AF_INET6, "2001:db8::2", &d6.sin6_addr);
	sid = cm_ip_service_id(CM_PS_TCP, 4791);
	if (cma_hdr_from_sockaddr(&h, (struct sockaddr *)&s6,
				  (struct sockaddr *)&d6) ||
	    h.ip_version != 6 || h.src_port != 40000)
		T_FAIL("cma_hdr from IPv6");
	if (cma_hdr_encode(&h, wire, sizeof(wire)) || wire[0] != 0 ||
	    wire[1] != 0x60 || wire[2] != 0x9c || wire[3] != 0x40 ||
	    wire[4] != 0xfe || wire[35] != 2)
		T_FAIL("cma_hdr IPv6 bytes");
	if (cma_hdr_decode(wire, sizeof(wire), &h2) ||
	    memcmp(&h, &h2, sizeof(h)))
		T_FAIL("cma_hdr IPv6 round trip");
	if (cma_hdr_to_sockaddr(&h2, sid, &src, &dst) ||
	    src.ss_family != AF_INET6 ||
	    memcmp(&((struct sockaddr_in6 *)&dst)->sin6_addr, &d6.sin6_addr,
		   16) ||
	    ((struct sockaddr_in6 *)&dst)->sin6_port != htons(4791))
		T_FAIL("cma_hdr IPv6 to sockaddr");

	/* Refusals. */
	for (size_t len = 0; len < CMA_HDR_SIZE; len++) {
		uint8_t *cut = malloc(len ? len : 1);

		if (!cut)
			abort();
		memcpy(cut, wire, len);
		if (cma_hdr_decode(cut, len, &h2) != -EBADMSG)
			T_FAIL("cma_hdr cut to %zu", len);
		free(cut);
	}
	memcpy(bad, wire, sizeof(bad));
	bad[0] = 1;
	if (cma_hdr_decode(bad, sizeof(bad), &h2) != -EBADMSG)
		T_FAIL("cma_hdr version 1");
	memcpy(bad, wire, sizeof(bad));
	bad[1] = 0x50;
	if (cma_hdr_decode(bad, sizeof(bad), &h2) != -EBADMSG)
		T_FAIL("cma_hdr IP version 5");
	memcpy(bad, wire, sizeof(bad));
	bad[1] = 0x6f; /* reserved low nibble */
	if (cma_hdr_decode(bad, sizeof(bad), &h2) || h2.ip_version != 6)
		T_FAIL("cma_hdr reserved nibble refused");
	if (cma_hdr_from_sockaddr(&h, (struct sockaddr *)&s4,
				  (struct sockaddr *)&d6) != -EINVAL)
		T_FAIL("mixed families");
	s4.sin_family = AF_UNIX;
	if (cma_hdr_from_sockaddr(&h, (struct sockaddr *)&s4,
				  (struct sockaddr *)&s4) != -EAFNOSUPPORT)
		T_FAIL("AF_UNIX");
	h.ip_version = 5;
	if (cma_hdr_encode(&h, wire, sizeof(wire)) != -EINVAL)
		T_FAIL("encode IP version 5");
	h.ip_version = 4;
	if (cma_hdr_encode(&h, wire, sizeof(wire) - 1) != -EINVAL)
		T_FAIL("encode into 35 bytes");
}

static unsigned int popcount(const uint8_t *mask)
{
	unsigned int bits = 0;

	for (size_t i = 0; i < MAD_DATA_SIZE; i++)
		bits += (unsigned int)__builtin_popcount(mask[i]);
	return bits;
}

static void test_tables(void)
{
	uint8_t mask[MAD_DATA_SIZE];
	unsigned int bits;

	if (cm_mad_layout_check())
		T_FAIL("field tables do not check");
	if (cm_mad_reserved_mask(0x0001, mask) != -EINVAL)
		T_FAIL("reserved mask of ClassPortInfo");
	/* An RTU reserves nothing; a REQ what Table 106 says. */
	if (cm_mad_reserved_mask(CM_ATTR_RTU, mask) || popcount(mask) != 0)
		T_FAIL("RTU reserves bits");
	if (cm_mad_reserved_mask(CM_ATTR_REQ, mask))
		T_FAIL("REQ mask");
	bits = popcount(mask);
	/*
	 * 8 bits beside the vendor ID, 32 before the Q_Key; per path 6 before
	 * the rate, 3 after the subnet local bit, 3 (primary) or 2 (alternate,
	 * less the SAP bit) after the ACK timeout.
	 */
	if (bits != 8 + 32 + (6 + 3 + 3) + (6 + 3 + 2))
		T_FAIL("REQ reserves %u bits", bits);
	if (mask[4] != 0xff || mask[5] != 0 || mask[24] != 0xff ||
	    mask[90] != 0x0f || mask[91] != 0xc0 || mask[94] != 0x07 ||
	    mask[95] != 0x07 || mask[139] != 0x03)
		T_FAIL("REQ reserved bits misplaced");
}

int main(void)
{
	test_tables();
	test_roundtrip();
	test_offsets();
	test_encode_limits();
	test_malformed();
	test_random();
	test_names();
	test_private_data();
	test_cma();
	t_pass();
}
