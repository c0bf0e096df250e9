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

#include "daemon/cm/cm_mad.h"
#include "daemon/net/roce.h"
#include "daemon/net/pcap.h"
#include "t_assert.h"

#ifndef SRD_RXE_VECTORS_DIR
#error "SRD_RXE_VECTORS_DIR must name the rxe capture directory"
#endif

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

	T_EQ(r->local_comm_id, CLIENT_COMM_ID);
	T_EQ(r->vendor_id, 0);
	T_EQ(r->service_id, 0x0000000001061c06ull);
	T_EQ(r->local_ca_guid, CLIENT_GUID);
	T_EQ(r->local_qkey, 0);
	T_EQ(r->local_qpn, QPN);
	T_EQ(r->responder_resources, 1);
	T_EQ(r->local_eecn, 0);
	T_EQ(r->initiator_depth, 1);
	T_EQ(r->remote_eecn, 0);
	T_EQ(r->remote_cm_response_timeout, 0x14);
	T_EQ(r->transport_type, CM_TST_RC);
	T_EQ(r->flow_control, 0);
	T_EQ(r->starting_psn, 0xf8d62a);
	T_EQ(r->local_cm_response_timeout, 0x14);
	T_EQ(r->retry_count, 7);
	T_EQ(r->pkey, 0xffff);
	T_EQ(r->path_mtu, 3); /* 1024 */
	T_EQ(r->rdc_exists, 0);
	T_EQ(r->rnr_retry_count, 7);
	T_EQ(r->max_cm_retries, 15);
	T_EQ(r->srq, 0);
	T_EQ(r->ext_transport_type, 0);
	T_EQ(r->primary.local_lid, 0xffff);
	T_EQ(r->primary.remote_lid, 0xffff);
	if (memcmp(r->primary.local_gid, client_gid, 16) ||
	    memcmp(r->primary.remote_gid, server_gid, 16))
		T_FAIL("%s: primary GIDs are not ::ffff:10.77.0.11 -> .10", w);
	/*
	 * The bytes are 9c 02 70 00: flow label 0x9c027, rate 0.  tshark 4.0
	 * shows 0x009c0 and 0x1c: it reads the word from the wrong bytes.
	 */
	T_EQ(r->primary.flow_label, 0x9c027);
	T_EQ(r->primary.packet_rate, 0);
	T_EQ(r->primary.traffic_class, 0);
	T_EQ(r->primary.hop_limit, 0x40);
	T_EQ(r->primary.sl, 0);
	T_EQ(r->primary.subnet_local, 0);
	T_EQ(r->primary.local_ack_timeout, 0x13);
	if (memcmp(&r->alternate, zero, sizeof(r->alternate)))
		T_FAIL("%s: alternate path is not empty", w);
	T_EQ(r->sap_supported, 0);

	/* rdma_cm's view: TCP port space, port 7174. */
	if (cm_ip_service_id_parse(r->service_id, &ps, &port))
		T_FAIL("%s: service ID not an IP one", w);
	T_EQ(ps, CM_PS_TCP);
	T_EQ(port, RPING_PORT);
	T_EQ(cm_ip_service_id(CM_PS_TCP, RPING_PORT), r->service_id);

	if (cma_hdr_decode(r->private_data, sizeof(r->private_data), &h))
		T_FAIL("%s: cma_hdr does not decode", w);
	T_EQ(h.version, CMA_HDR_VERSION);
	T_EQ(h.ip_version, 4);
	T_EQ(h.src_port, CLIENT_PORT);
	if (cma_hdr_to_sockaddr(&h, r->service_id, &src, &dst))
		T_FAIL("%s: cma_hdr_to_sockaddr", w);
	T_EQ(src.ss_family, AF_INET);
	T_EQ(dst.ss_family, AF_INET);
	T_EQ(ntohl(s4->sin_addr.s_addr), 0x0a4d000b);
	T_EQ(ntohl(d4->sin_addr.s_addr), 0x0a4d000a);
	T_EQ(ntohs(s4->sin_port), CLIENT_PORT);
	T_EQ(ntohs(d4->sin_port), RPING_PORT);
	/* Rebuilt from the addresses, the header is what the kernel sent. */
	if (cma_hdr_from_sockaddr(&h2, (const struct sockaddr *)&src,
				  (const struct sockaddr *)&dst) ||
	    cma_hdr_encode(&h2, again, sizeof(again)) ||
	    memcmp(again, r->private_data, CMA_HDR_SIZE))
		T_FAIL("%s: cma_hdr rebuilt from sockaddrs differs", w);
	/* rping sends no private data of its own. */
	if (memcmp(r->private_data + CMA_HDR_SIZE, zero,
		   CMA_REQ_USER_DATA_SIZE))
		T_FAIL("%s: consumer private data not zero", w);
}

static void check_rep(const char *w, const struct cm_rep *r)
{
	T_EQ(r->local_comm_id, SERVER_COMM_ID);
	T_EQ(r->remote_comm_id, CLIENT_COMM_ID);
	T_EQ(r->local_qkey, 0);
	T_EQ(r->local_qpn, QPN);
	T_EQ(r->local_eecn, 0);
	T_EQ(r->starting_psn, 0x602e66);
	T_EQ(r->vendor_id, 0);
	T_EQ(r->responder_resources, 1);
	T_EQ(r->initiator_depth, 1);
	T_EQ(r->target_ack_delay, 0x0f);
	T_EQ(r->failover_accepted, 0);
	T_EQ(r->flow_control, 0);
	T_EQ(r->rnr_retry_count, 7);
	T_EQ(r->srq, 0);
	T_EQ(r->local_ca_guid, SERVER_GUID);
	if (memcmp(r->private_data, zero, sizeof(r->private_data)))
		T_FAIL("%s: private data not zero", w);
}

/* Comm IDs and private data of RTU, DREQ and DREP. */
static void check_ids(const char *w, uint32_t lcid, uint32_t rcid,
		      uint32_t want_l, uint32_t want_r, const uint8_t *pd,
		      size_t pdlen)
{
	T_EQ(lcid, want_l);
	T_EQ(rcid, want_r);
	if (memcmp(pd, zero, pdlen))
		T_FAIL("%s: private data not zero", w);
}

/* The capture's CM exchange, in order. */
static const uint16_t want_attr[] = { CM_ATTR_REQ, CM_ATTR_REP, CM_ATTR_RTU,
				      CM_ATTR_DREQ, CM_ATTR_DREP };
#define NWANT (sizeof(want_attr) / sizeof(want_attr[0]))

static void check_msg(unsigned int n, const struct cm_msg *m)
{
	char w[64];

	snprintf(w, sizeof(w), "CM MAD %u (%s)", n, cm_mad_str(m->hdr.attr_id));
	T_EQ(m->hdr.base_version, 1);
	T_EQ(m->hdr.mgmt_class, MAD_CLASS_CM);
	T_EQ(m->hdr.class_version, 2);
	T_EQ(m->hdr.method, MAD_METHOD_SEND);
	T_EQ(m->hdr.status, 0);
	T_EQ(m->hdr.class_specific, 0);
	T_EQ(m->hdr.tid, TID);
	T_EQ(m->hdr.attr_mod, 0);
	if (n >= NWANT)
		T_FAIL("%s: more CM MADs than the capture's five", w);
	T_EQ(m->hdr.attr_id, want_attr[n]);
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
		T_EQ(m->dreq.remote_qpn_eecn, QPN);
		break;
	case CM_ATTR_DREP:
		check_ids(w, m->drep.local_comm_id, m->drep.remote_comm_id,
			  SERVER_COMM_ID, CLIENT_COMM_ID, m->drep.private_data,
			  sizeof(m->drep.private_data));
		break;
	}
}

/* Byte-exact re-encoding, and reserved bits that change nothing. */
static void roundtrip(unsigned int n, const uint8_t *mad,
		      const struct cm_msg *m)
{
	uint8_t out[MAD_SIZE], noisy[MAD_SIZE], mask[MAD_DATA_SIZE];
	struct cm_msg m2;
	int ret;

	ret = cm_mad_encode(m, out, sizeof(out));
	if (ret)
		T_FAIL("CM MAD %u: encode %d", n, ret);
	for (unsigned int i = 0; i < MAD_SIZE; i++)
		if (out[i] != mad[i])
			T_FAIL("CM MAD %u: byte %u re-encoded 0x%02x, captured "
			       "0x%02x",
			       n, i, out[i], mad[i]);

	if (cm_mad_reserved_mask(m->hdr.attr_id, mask))
		T_FAIL("CM MAD %u: no reserved mask", n);
	memcpy(noisy, mad, MAD_SIZE);
	for (unsigned int i = 0; i < MAD_DATA_SIZE; i++)
		noisy[MAD_HDR_SIZE + i] |= mask[i];
	ret = cm_mad_decode(noisy, sizeof(noisy), &m2);
	if (ret || memcmp(&m2, m, sizeof(m2)))
		T_FAIL("CM MAD %u: reserved bits set change the decode (%d)", n,
		       ret);
}

int main(void)
{
	const char *path = SRD_RXE_VECTORS_DIR "/rping_cm.pcap";
	unsigned int frames = 0, other = 0, cm = 0, exact = 0;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt pkt;
	int ret;

	ret = srd_pcap_open(&r, path);
	if (ret)
		T_FAIL("open %s: %s", path, t_errname(ret));
	if (cm_mad_layout_check())
		T_FAIL("field tables do not check");

	while ((ret = srd_pcap_next(&r, &pkt)) == 1) {
		const uint8_t *ip = pkt.data + pkt.l3_off, *udp, *bth, *mad;
		size_t avail = pkt.caplen - pkt.l3_off, ihl, paylen, madlen;
		struct cm_msg m;
		char line[256];

		frames++;
		if (pkt.l3_proto != 0x0800 || avail < 20)
			T_FAIL("frame %u: not IPv4", frames);
		ihl = (ip[0] & 0x0f) * 4u;
		if (avail < ihl + 8 || ip[9] != 17 ||
		    be16(ip + ihl + 2) != ROCE_UDP_PORT)
			T_FAIL("frame %u: not RoCEv2", frames);
		udp = ip + ihl;
		paylen = be16(udp + 4) - 8u;
		bth = udp + 8;
		if (be16(udp + 4) < 8 || ihl + 8 + paylen > avail ||
		    paylen < sizeof(struct roce_bth) + ROCE_ICRC_BYTES)
			T_FAIL("frame %u: cut", frames);
		if ((be32(bth + 4) & ROCE_QPN_MASK) != 1) {
			other++;
			continue;
		}
		/* QP1: UD SEND Only, GSI Q_Key, from QP1. */
		T_EQ(bth[0], ROCE_UD_SEND_ONLY);
		T_EQ(be32(bth + 12), ROCE_GSI_QKEY);
		T_EQ(be32(bth + 16) & ROCE_QPN_MASK, 1);
		madlen = paylen - 12 - 8 - ROCE_ICRC_BYTES -
			 ((bth[1] & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT);
		mad = bth + 12 + 8;
		if (madlen != MAD_SIZE)
			T_FAIL("frame %u: MAD of %zu bytes", frames, madlen);
		ret = cm_mad_decode(mad, madlen, &m);
		if (ret)
			T_FAIL("frame %u: decode %d", frames, ret);
		cm_msg_format(line, sizeof(line), &m);
		printf("frame %u: %s\n", frames, line);
		check_msg(cm, &m);
		roundtrip(cm, mad, &m);
		exact++;
		cm++;
	}
	srd_pcap_close(&r);
	if (ret < 0)
		T_FAIL("reading %s: %d", path, ret);
	if (cm != NWANT)
		T_FAIL("%u CM MADs, expected %zu", cm, NWANT);
	printf("%u frames: %u CM MADs decoded, %u re-encoded byte-exactly; "
	       "%u other packets\n",
	       frames, cm, exact, other);
	t_pass();
}
