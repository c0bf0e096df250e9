/* SPDX-License-Identifier: MIT */
/*
 * CM MADs of Linux rdma_cm on rdma_rxe (rping_cm.pcap): every MAD on QP1
 * must decode to the values tshark shows, re-encode to the captured bytes,
 * and decode the same with its reserved bits set.  The rdma_cm header in
 * the REQ's private data must give the addresses and ports of the run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cm_mad.h"
#include "common/roce.h"
#include "daemon/net/pcap.h"

#ifndef SRD_RXE_VECTORS_DIR
#error "SRD_RXE_VECTORS_DIR must name the rxe capture directory"
#endif

static int failures;

#define FAIL(...)                                      \
	do {                                           \
		fprintf(stderr, "FAIL: " __VA_ARGS__); \
		failures++;                            \
	} while (0)

#define EXPECT_EQ(what, got, want)                                         \
	do {                                                               \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);      \
		if (g_ != w_)                                              \
			FAIL("%s: %s = 0x%" PRIx64 ", expected 0x%" PRIx64 \
			     "\n",                                         \
			     what, #got, g_, w_);                          \
	} while (0)

/* What the capture holds: client 10.77.0.11, server 10.77.0.10. */
#define TID 0x000000026edc9418ull
#define CLIENT_COMM_ID 0x1894dc6eu
#define SERVER_COMM_ID 0x8005e3d1u
#define CLIENT_GUID 0x505400fffe77000bull
#define SERVER_GUID 0x505400fffe77000aull
#define RPING_PORT 7174 /* 0x1c06 */
#define CLIENT_PORT 0xd3bf
#define QPN 0x000011u

static const uint8_t client_gid[16] = {
	[10] = 0xff, [11] = 0xff, 10, 77, 0, 11
};
static const uint8_t server_gid[16] = {
	[10] = 0xff, [11] = 0xff, 10, 77, 0, 10
};
static const uint8_t zero[256];

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void check_req(const char *w, const struct cm_req *r)
{
	struct sockaddr_storage src, dst;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&src;
	const struct sockaddr_in *d4 = (const struct sockaddr_in *)&dst;
	uint8_t again[CMA_HDR_SIZE];
	struct cma_hdr h, h2;
	uint16_t ps, port;

	EXPECT_EQ(w, r->local_comm_id, CLIENT_COMM_ID);
	EXPECT_EQ(w, r->vendor_id, 0);
	EXPECT_EQ(w, r->service_id, 0x0000000001061c06ull);
	EXPECT_EQ(w, r->local_ca_guid, CLIENT_GUID);
	EXPECT_EQ(w, r->local_qkey, 0);
	EXPECT_EQ(w, r->local_qpn, QPN);
	EXPECT_EQ(w, r->responder_resources, 1);
	EXPECT_EQ(w, r->local_eecn, 0);
	EXPECT_EQ(w, r->initiator_depth, 1);
	EXPECT_EQ(w, r->remote_eecn, 0);
	EXPECT_EQ(w, r->remote_cm_response_timeout, 0x14);
	EXPECT_EQ(w, r->transport_type, CM_TST_RC);
	EXPECT_EQ(w, r->flow_control, 0);
	EXPECT_EQ(w, r->starting_psn, 0xf8d62a);
	EXPECT_EQ(w, r->local_cm_response_timeout, 0x14);
	EXPECT_EQ(w, r->retry_count, 7);
	EXPECT_EQ(w, r->pkey, 0xffff);
	EXPECT_EQ(w, r->path_mtu, 3); /* 1024 */
	EXPECT_EQ(w, r->rdc_exists, 0);
	EXPECT_EQ(w, r->rnr_retry_count, 7);
	EXPECT_EQ(w, r->max_cm_retries, 15);
	EXPECT_EQ(w, r->srq, 0);
	EXPECT_EQ(w, r->ext_transport_type, 0);
	EXPECT_EQ(w, r->primary.local_lid, 0xffff);
	EXPECT_EQ(w, r->primary.remote_lid, 0xffff);
	if (memcmp(r->primary.local_gid, client_gid, 16) ||
	    memcmp(r->primary.remote_gid, server_gid, 16))
		FAIL("%s: primary GIDs are not ::ffff:10.77.0.11 -> .10\n", w);
	/*
	 * The bytes are 9c 02 70 00: flow label 0x9c027, rate 0.  tshark 4.0
	 * shows 0x009c0 and 0x1c: it reads the word from the wrong bytes.
	 */
	EXPECT_EQ(w, r->primary.flow_label, 0x9c027);
	EXPECT_EQ(w, r->primary.packet_rate, 0);
	EXPECT_EQ(w, r->primary.traffic_class, 0);
	EXPECT_EQ(w, r->primary.hop_limit, 0x40);
	EXPECT_EQ(w, r->primary.sl, 0);
	EXPECT_EQ(w, r->primary.subnet_local, 0);
	EXPECT_EQ(w, r->primary.local_ack_timeout, 0x13);
	if (memcmp(&r->alternate, zero, sizeof(r->alternate)))
		FAIL("%s: alternate path is not empty\n", w);
	EXPECT_EQ(w, r->sap_supported, 0);

	/* rdma_cm's view: TCP port space, port 7174. */
	if (cm_ip_service_id_parse(r->service_id, &ps, &port))
		FAIL("%s: service ID not an IP one\n", w);
	EXPECT_EQ(w, ps, CM_PS_TCP);
	EXPECT_EQ(w, port, RPING_PORT);
	EXPECT_EQ(w, cm_ip_service_id(CM_PS_TCP, RPING_PORT), r->service_id);

	if (cma_hdr_decode(r->private_data, sizeof(r->private_data), &h)) {
		FAIL("%s: cma_hdr does not decode\n", w);
		return;
	}
	EXPECT_EQ(w, h.version, CMA_HDR_VERSION);
	EXPECT_EQ(w, h.ip_version, 4);
	EXPECT_EQ(w, h.src_port, CLIENT_PORT);
	if (cma_hdr_to_sockaddr(&h, r->service_id, &src, &dst))
		FAIL("%s: cma_hdr_to_sockaddr\n", w);
	EXPECT_EQ(w, src.ss_family, AF_INET);
	EXPECT_EQ(w, dst.ss_family, AF_INET);
	EXPECT_EQ(w, ntohl(s4->sin_addr.s_addr), 0x0a4d000b);
	EXPECT_EQ(w, ntohl(d4->sin_addr.s_addr), 0x0a4d000a);
	EXPECT_EQ(w, ntohs(s4->sin_port), CLIENT_PORT);
	EXPECT_EQ(w, ntohs(d4->sin_port), RPING_PORT);
	/* Rebuilt from the addresses, the header is what the kernel sent. */
	if (cma_hdr_from_sockaddr(&h2, (const struct sockaddr *)&src,
				  (const struct sockaddr *)&dst) ||
	    cma_hdr_encode(&h2, again, sizeof(again)) ||
	    memcmp(again, r->private_data, CMA_HDR_SIZE))
		FAIL("%s: cma_hdr rebuilt from sockaddrs differs\n", w);
	/* rping sends no private data of its own. */
	if (memcmp(r->private_data + CMA_HDR_SIZE, zero,
		   CMA_REQ_USER_DATA_SIZE))
		FAIL("%s: consumer private data not zero\n", w);
}

static void check_rep(const char *w, const struct cm_rep *r)
{
	EXPECT_EQ(w, r->local_comm_id, SERVER_COMM_ID);
	EXPECT_EQ(w, r->remote_comm_id, CLIENT_COMM_ID);
	EXPECT_EQ(w, r->local_qkey, 0);
	EXPECT_EQ(w, r->local_qpn, QPN);
	EXPECT_EQ(w, r->local_eecn, 0);
	EXPECT_EQ(w, r->starting_psn, 0x602e66);
	EXPECT_EQ(w, r->vendor_id, 0);
	EXPECT_EQ(w, r->responder_resources, 1);
	EXPECT_EQ(w, r->initiator_depth, 1);
	EXPECT_EQ(w, r->target_ack_delay, 0x0f);
	EXPECT_EQ(w, r->failover_accepted, 0);
	EXPECT_EQ(w, r->flow_control, 0);
	EXPECT_EQ(w, r->rnr_retry_count, 7);
	EXPECT_EQ(w, r->srq, 0);
	EXPECT_EQ(w, r->local_ca_guid, SERVER_GUID);
	if (memcmp(r->private_data, zero, sizeof(r->private_data)))
		FAIL("%s: private data not zero\n", w);
}

/* Comm IDs and private data of RTU, DREQ and DREP. */
static void check_ids(const char *w, uint32_t lcid, uint32_t rcid,
		      uint32_t want_l, uint32_t want_r, const uint8_t *pd,
		      size_t pdlen)
{
	EXPECT_EQ(w, lcid, want_l);
	EXPECT_EQ(w, rcid, want_r);
	if (memcmp(pd, zero, pdlen))
		FAIL("%s: private data not zero\n", w);
}

/* The capture's CM exchange, in order. */
static const uint16_t want_attr[] = { CM_ATTR_REQ, CM_ATTR_REP, CM_ATTR_RTU,
				      CM_ATTR_DREQ, CM_ATTR_DREP };
#define NWANT (sizeof(want_attr) / sizeof(want_attr[0]))

static void check_msg(unsigned int n, const struct cm_msg *m)
{
	char w[64];

	snprintf(w, sizeof(w), "CM MAD %u (%s)", n, cm_mad_str(m->hdr.attr_id));
	EXPECT_EQ(w, m->hdr.base_version, 1);
	EXPECT_EQ(w, m->hdr.mgmt_class, MAD_CLASS_CM);
	EXPECT_EQ(w, m->hdr.class_version, 2);
	EXPECT_EQ(w, m->hdr.method, MAD_METHOD_SEND);
	EXPECT_EQ(w, m->hdr.status, 0);
	EXPECT_EQ(w, m->hdr.class_specific, 0);
	EXPECT_EQ(w, m->hdr.tid, TID);
	EXPECT_EQ(w, m->hdr.attr_mod, 0);
	if (n >= NWANT) {
		FAIL("%s: more CM MADs than the capture's five\n", w);
		return;
	}
	EXPECT_EQ(w, m->hdr.attr_id, want_attr[n]);
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		check_req(w, &m->req);
		break;
	case CM_ATTR_REP:
		check_rep(w, &m->rep);
		break;
	case CM_ATTR_RTU:
		check_ids(w, m->rtu.local_comm_id, m->rtu.remote_comm_id,
			  CLIENT_COMM_ID, SERVER_COMM_ID, m->rtu.private_data,
			  sizeof(m->rtu.private_data));
		break;
	case CM_ATTR_DREQ:
		check_ids(w, m->dreq.local_comm_id, m->dreq.remote_comm_id,
			  CLIENT_COMM_ID, SERVER_COMM_ID, m->dreq.private_data,
			  sizeof(m->dreq.private_data));
		EXPECT_EQ(w, m->dreq.remote_qpn_eecn, QPN);
		break;
	case CM_ATTR_DREP:
		check_ids(w, m->drep.local_comm_id, m->drep.remote_comm_id,
			  SERVER_COMM_ID, CLIENT_COMM_ID, m->drep.private_data,
			  sizeof(m->drep.private_data));
		break;
	}
}

/* Byte-exact re-encoding, and reserved bits that change nothing. */
static int roundtrip(unsigned int n, const uint8_t *mad, const struct cm_msg *m)
{
	uint8_t out[MAD_SIZE], noisy[MAD_SIZE], mask[MAD_DATA_SIZE];
	struct cm_msg m2;
	int ret;

	ret = cm_mad_encode(m, out, sizeof(out));
	if (ret) {
		FAIL("CM MAD %u: encode %d\n", n, ret);
		return -1;
	}
	if (memcmp(out, mad, MAD_SIZE)) {
		for (unsigned int i = 0; i < MAD_SIZE; i++)
			if (out[i] != mad[i]) {
				FAIL("CM MAD %u: byte %u re-encoded 0x%02x, "
				     "captured 0x%02x\n",
				     n, i, out[i], mad[i]);
				break;
			}
		return -1;
	}

	if (cm_mad_reserved_mask(m->hdr.attr_id, mask)) {
		FAIL("CM MAD %u: no reserved mask\n", n);
		return -1;
	}
	memcpy(noisy, mad, MAD_SIZE);
	for (unsigned int i = 0; i < MAD_DATA_SIZE; i++)
		noisy[MAD_HDR_SIZE + i] |= mask[i];
	ret = cm_mad_decode(noisy, sizeof(noisy), &m2);
	if (ret || memcmp(&m2, m, sizeof(m2))) {
		FAIL("CM MAD %u: reserved bits set change the decode (%d)\n", n,
		     ret);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *path = SRD_RXE_VECTORS_DIR "/rping_cm.pcap";
	unsigned int frames = 0, other = 0, cm = 0, exact = 0;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt pkt;
	int ret;

	ret = srd_pcap_open(&r, path);
	if (ret == -ENOENT) {
		printf("FAIL: %s not found\n", path);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "FAIL: open %s: %d\n", path, ret);
		return 1;
	}
	if (cm_mad_layout_check())
		FAIL("field tables do not check\n");

	while ((ret = srd_pcap_next(&r, &pkt)) == 1) {
		const uint8_t *ip = pkt.data + pkt.l3_off, *udp, *bth, *mad;
		size_t avail = pkt.caplen - pkt.l3_off, ihl, paylen, madlen;
		struct cm_msg m;
		char line[256];

		frames++;
		if (pkt.l3_proto != 0x0800 || avail < 20) {
			FAIL("frame %u: not IPv4\n", frames);
			continue;
		}
		ihl = (ip[0] & 0x0f) * 4u;
		if (avail < ihl + 8 || ip[9] != 17 ||
		    be16(ip + ihl + 2) != ROCE_UDP_PORT) {
			FAIL("frame %u: not RoCEv2\n", frames);
			continue;
		}
		udp = ip + ihl;
		paylen = be16(udp + 4) - 8u;
		bth = udp + 8;
		if (be16(udp + 4) < 8 || ihl + 8 + paylen > avail ||
		    paylen < sizeof(struct roce_bth) + ROCE_ICRC_BYTES) {
			FAIL("frame %u: cut\n", frames);
			continue;
		}
		if ((be32(bth + 4) & ROCE_QPN_MASK) != 1) {
			other++;
			continue;
		}
		/* QP1: UD SEND Only, GSI Q_Key, from QP1. */
		EXPECT_EQ("QP1 packet", bth[0], ROCE_UD_SEND_ONLY);
		EXPECT_EQ("QP1 packet", be32(bth + 12), ROCE_GSI_QKEY);
		EXPECT_EQ("QP1 packet", be32(bth + 16) & ROCE_QPN_MASK, 1);
		madlen = paylen - 12 - 8 - ROCE_ICRC_BYTES -
			 ((bth[1] & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT);
		mad = bth + 12 + 8;
		if (madlen != MAD_SIZE) {
			FAIL("frame %u: MAD of %zu bytes\n", frames, madlen);
			continue;
		}
		ret = cm_mad_decode(mad, madlen, &m);
		if (ret) {
			FAIL("frame %u: decode %d\n", frames, ret);
			continue;
		}
		cm_msg_format(line, sizeof(line), &m);
		printf("frame %u: %s\n", frames, line);
		check_msg(cm, &m);
		if (!roundtrip(cm, mad, &m))
			exact++;
		cm++;
	}
	srd_pcap_close(&r);
	if (ret < 0)
		FAIL("reading %s: %d\n", path, ret);
	if (cm != NWANT)
		FAIL("%u CM MADs, expected %zu\n", cm, NWANT);
	printf("%u frames: %u CM MADs decoded, %u re-encoded byte-exactly; "
	       "%u other packets\n",
	       frames, cm, exact, other);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
