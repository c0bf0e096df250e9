/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 ICRC on the CRC-32 engine: the pseudo-header with its
 * variant fields masked, built from a packet or from what a UDP socket
 * shows, and the checks of a received packet whose headers are known
 * (icrc_v4id.c solves for the IPv4 identification a UDP socket hides).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/net/icrc.h"

#define IPV4_HDR_SIZE SRD_IPV4_HDR_BYTES
#define IPV6_HDR_SIZE 40
/* Pseudo-header: IPv4 with options or IPv6, UDP, BTH. */
#define PSEUDO_MAX (60 + SRD_ICRC_UDP_SIZE + SRD_ICRC_BTH_SIZE)

static inline uint32_t load_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

/*
 * The register after the LRH's ones, hdr (hlen bytes of IP and UDP
 * header) and the BTH, variant fields masked.  The ones go in as bytes
 * from the preset: IPv4's 8 + 20 + 8 + 12 bytes are three whole blocks
 * for the carry-less path, with no table.
 */
static uint32_t icrc_head(uint8_t *hdr, size_t hlen, const uint8_t *bth)
{
	uint8_t b[8 + PSEUDO_MAX];

	memset(b, 0xff, 8);
	memcpy(b + 8, hdr, hlen);
	memcpy(b + 8 + hlen, bth, SRD_ICRC_BTH_SIZE);
	b[8 + hlen - 2] = 0xff; /* UDP checksum */
	b[8 + hlen - 1] = 0xff;
	b[8 + hlen + 4] = 0xff; /* FECN, BECN, resv6a */
	return srd_crc32_update(~0u, b, 8 + hlen + SRD_ICRC_BTH_SIZE);
}

static uint32_t icrc_raw(uint8_t *hdr, size_t hlen, const uint8_t *bth,
			 size_t len)
{
	return srd_crc32_update(icrc_head(hdr, hlen, bth),
				bth + SRD_ICRC_BTH_SIZE,
				len - SRD_ICRC_BTH_SIZE - SRD_ICRC_SIZE);
}

static void mask_ipv4(uint8_t *ip)
{
	ip[1] = 0xff;  /* TOS: DSCP and ECN */
	ip[8] = 0xff;  /* TTL */
	ip[10] = 0xff; /* header checksum */
	ip[11] = 0xff;
}

static void mask_ipv6(uint8_t *ip6)
{
	/* Traffic class and flow label; the version stays. */
	ip6[0] |= 0x0f;
	ip6[1] = 0xff;
	ip6[2] = 0xff;
	ip6[3] = 0xff;
	ip6[7] = 0xff; /* hop limit */
}

uint32_t srd_icrc_ipv4(const void *ip, const void *udp, size_t udp_len)
{
	uint8_t hdr[PSEUDO_MAX];
	size_t ihl = (*(const uint8_t *)ip & 0x0f) * 4u;

	if (ihl < IPV4_HDR_SIZE)
		ihl = IPV4_HDR_SIZE;
	memcpy(hdr, ip, ihl);
	mask_ipv4(hdr);
	memcpy(hdr + ihl, udp, SRD_ICRC_UDP_SIZE);
	return ~icrc_raw(hdr, ihl + SRD_ICRC_UDP_SIZE,
			 (const uint8_t *)udp + SRD_ICRC_UDP_SIZE,
			 udp_len - SRD_ICRC_UDP_SIZE);
}

uint32_t srd_icrc_ipv6(const void *ip6, const void *udp, size_t udp_len)
{
	uint8_t hdr[PSEUDO_MAX];

	memcpy(hdr, ip6, IPV6_HDR_SIZE);
	mask_ipv6(hdr);
	memcpy(hdr + IPV6_HDR_SIZE, udp, SRD_ICRC_UDP_SIZE);
	return ~icrc_raw(hdr, IPV6_HDR_SIZE + SRD_ICRC_UDP_SIZE,
			 (const uint8_t *)udp + SRD_ICRC_UDP_SIZE,
			 udp_len - SRD_ICRC_UDP_SIZE);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void build_udp(uint8_t *p, uint16_t sport, uint16_t dport, size_t len)
{
	memcpy(p, &sport, 2);
	memcpy(p + 2, &dport, 2);
	put_be16(p + 4, (uint16_t)(SRD_ICRC_UDP_SIZE + len));
	/* The checksum is masked. */
}

static void build_ipv4(uint8_t *ip, const struct srd_icrc_udp4 *f, uint16_t id,
		       uint16_t frag_off, size_t len)
{
	struct srd_ipv4_fields h = {
		.protocol = SRD_IPPROTO_UDP,
		.payload_len = (uint16_t)(SRD_ICRC_UDP_SIZE + len),
		.id = id,
		.frag_off = frag_off,
		.saddr = &f->saddr,
		.daddr = &f->daddr,
	};

	srd_ipv4_build(ip, &h);
	mask_ipv4(ip);
	build_udp(ip + IPV4_HDR_SIZE, f->sport, f->dport, len);
}

uint32_t srd_icrc_v4_from_parts(const struct srd_icrc_udp4 *f, uint16_t id,
				uint16_t frag_off, const void *bth, size_t len)
{
	uint8_t hdr[PSEUDO_MAX];

	build_ipv4(hdr, f, id, frag_off, len);
	return ~icrc_raw(hdr, IPV4_HDR_SIZE + SRD_ICRC_UDP_SIZE, bth, len);
}

/* hdr holds hlen bytes of IP and UDP header; the CRC register over it and
 * the gathered BTH ... pad (the first piece holds the BTH). */
static uint32_t icrc_raw_iov(uint8_t *hdr, size_t hlen, const struct iovec *iov,
			     int iovcnt, size_t len)
{
	size_t left = len - SRD_ICRC_SIZE, skip = SRD_ICRC_BTH_SIZE;
	uint32_t crc;

	crc = icrc_head(hdr, hlen, iov[0].iov_base);
	left -= SRD_ICRC_BTH_SIZE;
	for (int i = 0; i < iovcnt && left; i++) {
		size_t n = iov[i].iov_len - skip;

		if (n > left)
			n = left;
		crc = srd_crc32_update(
			crc, (const uint8_t *)iov[i].iov_base + skip, n);
		left -= n;
		skip = 0;
	}
	return crc;
}

uint32_t srd_icrc_v4_from_iov(const struct srd_icrc_udp4 *f, uint16_t id,
			      uint16_t frag_off, const struct iovec *iov,
			      int iovcnt, size_t len)
{
	uint8_t hdr[PSEUDO_MAX];

	build_ipv4(hdr, f, id, frag_off, len);
	return ~icrc_raw_iov(hdr, IPV4_HDR_SIZE + SRD_ICRC_UDP_SIZE, iov,
			     iovcnt, len);
}

static void build_ipv6(uint8_t *hdr, const struct srd_icrc_udp6 *f, size_t len)
{
	memset(hdr, 0, IPV6_HDR_SIZE);
	hdr[0] = 0x60;
	put_be16(hdr + 4, (uint16_t)(SRD_ICRC_UDP_SIZE + len));
	hdr[6] = SRD_IPPROTO_UDP; /* next header */
	memcpy(hdr + 8, f->saddr, 16);
	memcpy(hdr + 24, f->daddr, 16);
	mask_ipv6(hdr);
	build_udp(hdr + IPV6_HDR_SIZE, f->sport, f->dport, len);
}

uint32_t srd_icrc_v6_from_iov(const struct srd_icrc_udp6 *f,
			      const struct iovec *iov, int iovcnt, size_t len)
{
	uint8_t hdr[PSEUDO_MAX];

	build_ipv6(hdr, f, len);
	return ~icrc_raw_iov(hdr, IPV6_HDR_SIZE + SRD_ICRC_UDP_SIZE, iov,
			     iovcnt, len);
}

uint32_t srd_icrc_v6_from_parts(const struct srd_icrc_udp6 *f, const void *bth,
				size_t len)
{
	uint8_t hdr[PSEUDO_MAX];

	build_ipv6(hdr, f, len);
	return ~icrc_raw(hdr, IPV6_HDR_SIZE + SRD_ICRC_UDP_SIZE, bth, len);
}

void srd_icrc_put(void *buf, size_t len, uint32_t icrc)
{
	uint8_t *p = (uint8_t *)buf + len - SRD_ICRC_SIZE;

	p[0] = icrc & 0xff;
	p[1] = (icrc >> 8) & 0xff;
	p[2] = (icrc >> 16) & 0xff;
	p[3] = icrc >> 24;
}

uint32_t srd_icrc_get(const void *buf, size_t len)
{
	return load_le32((const uint8_t *)buf + len - SRD_ICRC_SIZE);
}

int srd_icrc_check_ipv4(const void *ip, const void *udp, size_t udp_len)
{
	if (udp_len < SRD_ICRC_UDP_SIZE ||
	    !srd_icrc_len_ok(udp_len - SRD_ICRC_UDP_SIZE))
		return -EINVAL;
	if (srd_icrc_ipv4(ip, udp, udp_len) != srd_icrc_get(udp, udp_len))
		return -EBADMSG;
	return 0;
}

int srd_icrc_check_ipv6(const void *ip6, const void *udp, size_t udp_len)
{
	if (udp_len < SRD_ICRC_UDP_SIZE ||
	    !srd_icrc_len_ok(udp_len - SRD_ICRC_UDP_SIZE))
		return -EINVAL;
	if (srd_icrc_ipv6(ip6, udp, udp_len) != srd_icrc_get(udp, udp_len))
		return -EBADMSG;
	return 0;
}

int srd_icrc_check_v6(const struct srd_icrc_udp6 *f, const void *bth,
		      size_t len)
{
	if (!srd_icrc_len_ok(len))
		return -EINVAL;
	if (srd_icrc_v6_from_parts(f, bth, len) != srd_icrc_get(bth, len))
		return -EBADMSG;
	return 0;
}
