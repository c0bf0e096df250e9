/* SPDX-License-Identifier: MIT */
/*
 * The ICRC on built packets, against a reference written straight from the
 * definition (one CRC-32, bit at a time, over ones for the LRH and the
 * masked headers): IPv4 with and without options, IPv6, the functions
 * from parts, the no-id check for every flag setting, and bad lengths.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/net/icrc.h"
#include "t_assert.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static void fill(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd();
}

static uint32_t crc_bits(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return crc;
}

/*
 * The definition: CRC-32 over 8 bytes of ones, then the IP header, UDP
 * header and BTH with their variant fields replaced by ones, then the
 * rest of the UDP payload but the ICRC.
 */
static uint32_t reference(const uint8_t *ip, size_t iplen, const uint8_t *udp,
			  size_t udp_len)
{
	static uint8_t copy[70000];
	size_t i;

	memset(copy, 0xff, 8);
	memcpy(copy + 8, ip, iplen);
	memcpy(copy + 8 + iplen, udp, udp_len - 4);
	if ((ip[0] >> 4) == 4) {
		copy[8 + 1] = 0xff;
		copy[8 + 8] = 0xff;
		copy[8 + 10] = 0xff;
		copy[8 + 11] = 0xff;
	} else {
		/* Traffic class is bits 4-11, flow label bits 12-31. */
		for (i = 4; i < 32; i++)
			copy[8 + i / 8] |= 0x80 >> (i % 8);
		copy[8 + 7] = 0xff;
	}
	copy[8 + iplen + 6] = 0xff;
	copy[8 + iplen + 7] = 0xff;
	copy[8 + iplen + 8 + 4] = 0xff;
	return ~crc_bits(~0u, copy, 8 + iplen + udp_len - 4);
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A random RoCEv2 packet over IPv4 (ihl words) or IPv6; returns UDP len. */
static size_t build(uint8_t *pkt, int v6, size_t ihl, size_t paylen)
{
	size_t iplen = v6 ? 40 : ihl * 4, udp_len = 8 + paylen;
	uint8_t *udp = pkt + iplen;

	fill(pkt, iplen + udp_len);
	if (v6) {
		pkt[0] = (uint8_t)(0x60 | (pkt[0] & 0x0f));
		put16(pkt + 4, (uint32_t)udp_len);
		pkt[6] = 17;
	} else {
		pkt[0] = (uint8_t)(0x40 | ihl);
		put16(pkt + 2, (uint32_t)(iplen + udp_len));
		pkt[6] &= 0x40; /* DF or nothing, offset 0 */
		pkt[7] = 0;
		pkt[9] = 17;
	}
	put16(udp + 2, 4791);
	put16(udp + 4, (uint32_t)udp_len);
	return udp_len;
}

static void definition(void)
{
	static uint8_t pkt[70000];
	static const size_t lens[] = { 16,  20,	  44,	60,   64,   124,
				       268, 1040, 1052, 4112, 9000, 65507 };
	size_t i, ihl, udp_len, iplen;
	uint32_t want, got;
	int v6;

	for (v6 = 0; v6 < 2; v6++)
		for (ihl = 5; ihl <= (v6 ? 5u : 15u); ihl += 5)
			for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				udp_len = build(pkt, v6, ihl, lens[i]);
				iplen = v6 ? 40 : ihl * 4;
				want = reference(pkt, iplen, pkt + iplen,
						 udp_len);
				got = v6 ? srd_icrc_ipv6(pkt, pkt + iplen,
							 udp_len)
					 : srd_icrc_ipv4(pkt, pkt + iplen,
							 udp_len);
				if (got != want)
					T_FAIL("v6 %d ihl %zu len %zu: %08x, "
					       "definition %08x",
					       v6, ihl, lens[i], got, want);
			}
}

/* Variant fields do not move the ICRC; every other header bit does. */
static void masks(void)
{
	static uint8_t pkt[2000];
	size_t udp_len, iplen, bit;
	uint32_t base;
	int v6;

	for (v6 = 0; v6 < 2; v6++) {
		iplen = v6 ? 40 : 20;
		udp_len = build(pkt, v6, 5, 1040);
		base = v6 ? srd_icrc_ipv6(pkt, pkt + iplen, udp_len)
			  : srd_icrc_ipv4(pkt, pkt + iplen, udp_len);
		for (bit = 0; bit < (iplen + 8 + 12) * 8; bit++) {
			size_t byte = bit / 8, b = bit % 8;
			int masked, moved;
			uint32_t c;

			if (v6)
				masked = (bit >= 4 && bit < 32) || byte == 7;
			else
				masked = byte == 1 || byte == 8 || byte == 10 ||
					 byte == 11;
			masked |= byte == iplen + 6 || byte == iplen + 7 ||
				  byte == iplen + 8 + 4;
			pkt[byte] ^= 0x80 >> b;
			c = v6 ? srd_icrc_ipv6(pkt, pkt + iplen, udp_len)
			       : srd_icrc_ipv4(pkt, pkt + iplen, udp_len);
			pkt[byte] ^= 0x80 >> b;
			moved = c != base;
			/* The IHL is what says where UDP starts: skip it. */
			if (!v6 && byte == 0 && b >= 4)
				continue;
			if (moved == masked)
				T_FAIL("v6 %d header bit %zu: %s", v6, bit,
				       masked ? "masked but covered"
					      : "covered but ignored");
		}
	}
}

static void parts_and_noid(void)
{
	static uint8_t pkt[9100];
	size_t iplen, udp_len, n;
	uint16_t id, frag, want_frag;
	uint8_t *udp;
	int v6, ret;

	for (n = 0; n < 3000; n++) {
		v6 = n % 3 == 2;
		iplen = v6 ? 40 : 20;
		udp_len = build(pkt, v6, 5, 16 + 4 * (rnd() % 2260));
		udp = pkt + iplen;
		if (v6) {
			struct srd_icrc_udp6 f6;

			memcpy(f6.saddr, pkt + 8, 16);
			memcpy(f6.daddr, pkt + 24, 16);
			memcpy(&f6.sport, udp, 2);
			memcpy(&f6.dport, udp + 2, 2);
			srd_icrc_put(udp, udp_len,
				     srd_icrc_ipv6(pkt, udp, udp_len));
			if (srd_icrc_v6_from_parts(&f6, udp + 8, udp_len - 8) !=
			    srd_icrc_get(udp, udp_len))
				T_FAIL("v6 #%zu: from parts differs", n);
			if (srd_icrc_check_v6(&f6, udp + 8, udp_len - 8) ||
			    srd_icrc_check_ipv6(pkt, udp, udp_len))
				T_FAIL("v6 #%zu: check refused", n);
			udp[8 + rnd() % (udp_len - 8)] ^= 0x10;
			if (srd_icrc_check_v6(&f6, udp + 8, udp_len - 8) !=
			    -EBADMSG)
				T_FAIL("v6 #%zu: corruption passed", n);
			continue;
		}
		struct srd_icrc_udp4 f4;

		/* Linux's own UDP sends: id 0 with DF, now and then. */
		if (n % 10 == 0) {
			pkt[4] = pkt[5] = 0;
			pkt[6] = 0x40;
		}
		memcpy(&f4.saddr, pkt + 12, 4);
		memcpy(&f4.daddr, pkt + 16, 4);
		memcpy(&f4.sport, udp, 2);
		memcpy(&f4.dport, udp + 2, 2);
		srd_icrc_put(udp, udp_len, srd_icrc_ipv4(pkt, udp, udp_len));
		want_frag = (uint16_t)(pkt[6] << 8 | pkt[7]);
		if (srd_icrc_v4_from_parts(
			    &f4, (uint16_t)(pkt[4] << 8 | pkt[5]), want_frag,
			    udp + 8, udp_len - 8) != srd_icrc_get(udp, udp_len))
			T_FAIL("v4 #%zu: from parts differs", n);
		ret = srd_icrc_check_v4_noid(&f4, udp + 8, udp_len - 8, &id,
					     &frag);
		if (ret || id != (pkt[4] << 8 | pkt[5]) || frag != want_frag)
			T_FAIL("v4 #%zu: no-id check %d id %04x flags %04x, "
			       "want %02x%02x %04x",
			       n, ret, id, frag, pkt[4], pkt[5], want_frag);
		/* A wrong length is a different packet. */
		if (srd_icrc_check_v4_noid(&f4, udp + 8, udp_len - 12, &id,
					   &frag) == 0 &&
		    id == (pkt[4] << 8 | pkt[5]))
			T_FAIL("v4 #%zu: shorter packet passed", n);
	}
}

static void lengths(void)
{
	static uint8_t buf[70000];
	struct srd_icrc_udp4 f4 = { 0 };
	struct srd_icrc_udp6 f6 = { 0 };
	uint16_t id;

	/* Bad lengths are refused. */
	T_EQ(srd_icrc_check_v4_noid(&f4, buf, 15, &id, NULL), -EINVAL);
	T_EQ(srd_icrc_check_v4_noid(&f4, buf, 65528, &id, NULL), -EINVAL);
	T_EQ(srd_icrc_check_v6(&f6, buf, 0), -EINVAL);
	T_EQ(srd_icrc_check_ipv4(buf, buf + 20, 23), -EINVAL);
	T_EQ(srd_icrc_check_ipv6(buf, buf + 40, 7), -EINVAL);
	if (srd_icrc_check_v4_noid(&f4, buf, 65527, &id, NULL) == -EINVAL)
		T_FAIL("the largest datagram was refused");
	srd_icrc_put(buf, 8, 0x11223344);
	/* The ICRC is stored least significant byte first. */
	T_EQ(buf[4], 0x44);
	T_EQ(buf[7], 0x11);
	T_EQ(srd_icrc_get(buf, 8), 0x11223344);
}

int main(void)
{
	definition();
	masks();
	parts_and_noid();
	lengths();
	printf("ICRC equals the definition for IPv4 (with options), IPv6; "
	       "masks exact; no-id check finds every id\n");
	t_pass();
}
