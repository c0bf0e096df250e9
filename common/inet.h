/* SPDX-License-Identifier: MIT */
/*
 * Internet header helpers both sides need: how a RoCE v2 GID holds an IPv4
 * address (IPv4-mapped IPv6, RFC 4291 2.5.5.2), the ones' complement
 * checksum (RFC 1071), the one IPv4 header RoCE v2 sends (20 bytes, no
 * options), and the first word of an IPv6 header.
 */
#ifndef SOFTRDMA_COMMON_INET_H
#define SOFTRDMA_COMMON_INET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SRD_IPV4_HDR_BYTES 20
#define SRD_IPV4_DF 0x4000
#define SRD_IPPROTO_UDP 17
#define SRD_IPV6_FLOW_LABEL_MASK 0xfffffu

static inline bool srd_gid_is_v4mapped(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

/* addr: 4 bytes in network order. */
static inline void srd_gid_from_v4(uint8_t gid[16], const void *addr)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, addr, 4);
}

/* Adds len bytes, as big-endian 16-bit words, to a ones' complement sum. */
static inline uint32_t srd_inet_csum_add(uint32_t sum, const void *buf,
					 size_t len)
{
	const uint8_t *p = buf;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* The checksum of a sum, in host order (0 over a header that is intact). */
static inline uint16_t srd_inet_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

struct srd_ipv4_fields {
	uint8_t tos;
	uint8_t ttl;
	uint8_t protocol;
	uint16_t payload_len; /* bytes after the IPv4 header */
	uint16_t id;
	uint16_t frag_off; /* flags and offset, e.g. SRD_IPV4_DF */
	const void *saddr; /* 4 bytes, network order */
	const void *daddr;
};

/* Writes a 20-byte IPv4 header with its checksum. */
static inline void srd_ipv4_build(uint8_t out[SRD_IPV4_HDR_BYTES],
				  const struct srd_ipv4_fields *f)
{
	uint16_t tot = (uint16_t)(SRD_IPV4_HDR_BYTES + f->payload_len);
	uint16_t sum;

	memset(out, 0, SRD_IPV4_HDR_BYTES);
	out[0] = 0x45;
	out[1] = f->tos;
	out[2] = (uint8_t)(tot >> 8);
	out[3] = (uint8_t)tot;
	out[4] = (uint8_t)(f->id >> 8);
	out[5] = (uint8_t)f->id;
	out[6] = (uint8_t)(f->frag_off >> 8);
	out[7] = (uint8_t)f->frag_off;
	out[8] = f->ttl;
	out[9] = f->protocol;
	memcpy(out + 12, f->saddr, 4);
	memcpy(out + 16, f->daddr, 4);
	sum = srd_inet_csum_fold(srd_inet_csum_add(0, out, SRD_IPV4_HDR_BYTES));
	out[10] = (uint8_t)(sum >> 8);
	out[11] = (uint8_t)sum;
}

/* The parts of an IPv6 header's first word (version, traffic class, flow
 * label), vtf in host order. */
static inline uint8_t srd_ipv6_tclass(uint32_t vtf)
{
	return (uint8_t)(vtf >> 20);
}

static inline uint32_t srd_ipv6_flow_label(uint32_t vtf)
{
	return vtf & SRD_IPV6_FLOW_LABEL_MASK;
}

#endif
