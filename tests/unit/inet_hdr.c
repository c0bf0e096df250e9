/* SPDX-License-Identifier: MIT */
/*
 * common/inet.h: the ones' complement checksum against RFC 1071's worked
 * example, an IPv4 header built byte for byte as a known one, the
 * IPv4-mapped GID form, and the IPv6 traffic class and flow label.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/inet.h"
#include "t_proto.h"

int main(void)
{
	/* RFC 1071 section 3: the sum of these words folds to 0xddf2. */
	static const uint8_t rfc[8] = { 0x00, 0x01, 0xf2, 0x03,
					0xf4, 0xf5, 0xf6, 0xf7 };
	/* A real IPv4/UDP header (checksum 0xb861). */
	static const uint8_t known[20] = { 0x45, 0x00, 0x00, 0x73, 0x00,
					   0x00, 0x40, 0x00, 0x40, 0x11,
					   0xb8, 0x61, 0xc0, 0xa8, 0x00,
					   0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	static const uint8_t odd[3] = { 0x12, 0x34, 0x56 };
	const uint8_t src[4] = { 192, 168, 0, 1 },
		      dst[4] = { 192, 168, 0, 199 };
	struct srd_ipv4_fields f = {
		.ttl = 64,
		.protocol = SRD_IPPROTO_UDP,
		.payload_len = 0x73 - SRD_IPV4_HDR_BYTES,
		.frag_off = SRD_IPV4_DF,
		.saddr = src,
		.daddr = dst,
	};
	uint8_t hdr[SRD_IPV4_HDR_BYTES], gid[16];

	T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, rfc, sizeof(rfc))),
	     (uint16_t)~0xddf2);
	/* Sums chain, and an odd tail is padded with a zero byte. */
	T_EQ(srd_inet_csum_add(srd_inet_csum_add(0, rfc, 4), rfc + 4, 4),
	     srd_inet_csum_add(0, rfc, 8));
	T_EQ(srd_inet_csum_add(0, odd, sizeof(odd)), 0x1234 + 0x5600);
	/* An intact header sums to zero. */
	T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, known, sizeof(known))), 0);

	memset(hdr, 0xaa, sizeof(hdr));
	srd_ipv4_build(hdr, &f);
	for (size_t i = 0; i < sizeof(hdr); i++)
		T_EQ(hdr[i], known[i]);
	f.tos = 0x02; /* ECT(0) */
	f.id = 0xbeef;
	srd_ipv4_build(hdr, &f);
	T_EQ(hdr[1], 0x02);
	T_EQ(hdr[4] << 8 | hdr[5], 0xbeef);
	T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, hdr, sizeof(hdr))), 0);

	memset(gid, 0x55, sizeof(gid));
	srd_gid_from_v4(gid, src);
	T_ASSERT(srd_gid_is_v4mapped(gid));
	for (int i = 0; i < 10; i++)
		T_EQ(gid[i], 0);
	T_EQ(gid[10], 0xff);
	T_EQ(gid[11], 0xff);
	T_ASSERT(!memcmp(gid + 12, src, 4));
	gid[11] = 0xfe;
	T_ASSERT(!srd_gid_is_v4mapped(gid));
	memset(gid, 0, sizeof(gid)); /* ::, not ::ffff:0.0.0.0 */
	T_ASSERT(!srd_gid_is_v4mapped(gid));
	gid[0] = 0xfe; /* fe80::ffff:... is link-local IPv6 */
	gid[10] = gid[11] = 0xff;
	T_ASSERT(!srd_gid_is_v4mapped(gid));
	/* Version 6, traffic class 0xb8 (EF), flow label 0xabcde. */
	T_EQ(srd_ipv6_tclass(0x6b8abcde), 0xb8);
	T_EQ(srd_ipv6_flow_label(0x6b8abcde), 0xabcde);
	T_EQ(srd_ipv6_flow_label(0xffffffff), 0xfffff);
	T_EQ(srd_ipv6_tclass(0x60000000), 0);
	printf("ok inet_hdr\n");
	return T_EXIT_PASS;
}
