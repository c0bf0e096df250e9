/* SPDX-License-Identifier: MIT */
/*
 * IBTA 1.5 FLUSH and ATOMIC WRITE as Linux rxe (6.2 and later) puts them
 * on the wire, built here byte by byte from its packet format (rxe_hdr.h,
 * rxe_opcode.c: FETH then RETH for RC_FLUSH 0x1C, RETH and 8 bytes of
 * payload for RC_ATOMIC_WRITE 0x1D, a zero-length RDMA READ RESPONSE ONLY
 * as the answer to both), since Linux 6.1 in the interop guest lacks
 * them.  Each frame gets its ICRC from the definition (a bitwise CRC-32
 * over the masked headers); our ICRC must agree and our parser must read
 * every field, and our serializer must write the same header bytes.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/net/icrc.h"
#include "daemon/transport/pkt.h"
#include "t_assert.h"

static uint32_t crc_bits(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return crc;
}

/* IBTA A17.8: ones for the LRH, then IPv4 (TOS, TTL, checksum as ones),
 * UDP (checksum as ones), BTH (resv8a as ones), the rest, no ICRC. */
static uint32_t icrc_definition(const uint8_t *ip, size_t len)
{
	uint8_t copy[256];

	memset(copy, 0xff, 8);
	memcpy(copy + 8, ip, len - 4);
	copy[8 + 1] = 0xff;
	copy[8 + 8] = 0xff;
	copy[8 + 10] = copy[8 + 11] = 0xff;
	copy[8 + 20 + 6] = copy[8 + 20 + 7] = 0xff;
	copy[8 + 28 + 4] = 0xff;
	return ~crc_bits(~0u, copy, 8 + len - 4);
}

static size_t put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return (size_t)n;
}

/* IPv4 + UDP around a transport packet of tlen bytes (BTH on); the ICRC
 * goes last.  Returns the frame's length from the IP header. */
static size_t frame(uint8_t *f, const uint8_t *t, size_t tlen)
{
	size_t len = 20 + 8 + tlen + 4;

	memset(f, 0, 28);
	f[0] = 0x45;
	put(f + 2, len, 2);
	f[6] = 0x40; /* DF, as Linux sends RoCE */
	f[8] = 64;
	f[9] = 17;
	put(f + 12, 0xc0000201, 4);
	put(f + 16, 0xc0000202, 4);
	put(f + 20, 0xc123, 2);
	put(f + 22, ROCE_UDP_PORT, 2);
	put(f + 24, 8 + tlen + 4, 2);
	memcpy(f + 28, t, tlen);
	srd_icrc_put(f + 28 + tlen, 4, icrc_definition(f, len));
	return len;
}

/* rxe's BTH: opcode, SE|M|pad|tver, P_Key, resv8|dest QP, A|resv7|PSN. */
static size_t bth(uint8_t *p, uint8_t op, uint8_t pad, uint32_t qpn, int ackreq,
		  uint32_t psn)
{
	p[0] = op;
	p[1] = (uint8_t)(pad << 4);
	put(p + 2, 0xffff, 2);
	put(p + 4, qpn, 4);
	put(p + 8, (ackreq ? 0x80000000u : 0) | psn, 4);
	return 12;
}

static void check_frame(const uint8_t *f, size_t len, struct srd_pkt *pkt)
{
	T_EQ(srd_icrc_check_ipv4(f, f + 20, len - 20), 0);
	T_EQ(srd_icrc_ipv4(f, f + 20, len - 20), icrc_definition(f, len));
	T_EQ(srd_pkt_hdr_read(pkt, f + 28, len - 28 - 4),
	     (int)srd_pkt_hdr_len(pkt));
}

/* Our serialization of the parsed values gives rxe's header bytes. */
static void check_rewrite(const struct srd_pkt *pkt, const uint8_t *t)
{
	uint8_t out[64];
	int n = srd_pkt_hdr_write(pkt, out, sizeof(out));

	T_EQ(n, (int)srd_pkt_hdr_len(pkt));
	T_ASSERT(n > 0 && memcmp(out, t, (size_t)n) == 0);
}

static void flush_request(void)
{
	uint8_t t[64], f[128];
	size_t n = 0, len;
	struct srd_pkt pkt;

	/* IB_FLUSH_GLOBAL, IB_FLUSH_RANGE: feth_init(pkt, type, level). */
	n += bth(t, 0x1c, 0, 0x000123, 1, 0x00abcd);
	n += put(t + n, (0u << 4) | 1u, 4);
	n += put(t + n, 0x00007f0012345000ull, 8);
	n += put(t + n, 0x0004a1b2, 4);
	n += put(t + n, 4096, 4);
	T_EQ(n, 32);
	len = frame(f, t, n);
	check_frame(f, len, &pkt);
	T_EQ(pkt.opcode, ROCE_RC_FLUSH);
	T_EQ(srd_pkt_hdr_len(&pkt), 32);
	T_ASSERT(pkt.mask & OPF_FLUSH);
	T_EQ(pkt.mask & (OPF_FIRST | OPF_LAST), OPF_ONLY);
	T_ASSERT(!(pkt.mask & OPF_PAYLOAD));
	T_EQ(pkt.feth, 1);
	T_EQ(pkt.reth.va, 0x00007f0012345000ull);
	T_EQ(pkt.reth.rkey, 0x0004a1b2);
	T_EQ(pkt.reth.len, 4096);
	T_ASSERT(pkt.qpn == 0x123 && pkt.psn == 0xabcd && pkt.ack_req);
	T_EQ(pkt.paylen, 0);
	check_rewrite(&pkt, t);
	/* Whole-MR selectivity, both placement types. */
	put(t + 12, (1u << 4) | 3u, 4);
	len = frame(f, t, n);
	check_frame(f, len, &pkt);
	T_EQ(pkt.feth, 0x13);
	T_EQ((pkt.feth & ROCE_FETH_SEL_MASK) >> ROCE_FETH_SEL_SHIFT,
	     ROCE_FLUSH_MR);
	check_rewrite(&pkt, t);
	/* A payload on a FLUSH is malformed. */
	memset(t + n, 0, 4);
	len = frame(f, t, n + 4);
	T_LT(srd_pkt_hdr_read(&pkt, f + 28, len - 28 - 4), 0);
}

static void atomic_write_request(void)
{
	static const uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t t[64], f[128];
	size_t n = 0, len;
	struct srd_pkt pkt;

	n += bth(t, 0x1d, 0, 0x000456, 1, 0xfffffe);
	n += put(t + n, 0x0000000000201000ull, 8);
	n += put(t + n, 0x00001c2d, 4);
	n += put(t + n, 8, 4);
	T_EQ(n, 28);
	memcpy(t + n, value, 8); /* the bytes as the application gave them */
	len = frame(f, t, n + 8);
	check_frame(f, len, &pkt);
	T_EQ(pkt.opcode, ROCE_RC_ATOMIC_WRITE);
	T_EQ(srd_pkt_hdr_len(&pkt), 28);
	T_ASSERT(pkt.mask & OPF_ATOMIC_WRITE);
	T_ASSERT(pkt.mask & OPF_PAYLOAD);
	T_ASSERT(pkt.reth.va == 0x201000 && pkt.reth.rkey == 0x1c2d);
	T_EQ(pkt.reth.len, ROCE_ATOMIC_WRITE_BYTES);
	T_EQ(pkt.paylen, ROCE_ATOMIC_WRITE_BYTES);
	T_EQ(memcmp(f + 28 + 28, value, 8), 0);
	T_EQ(pkt.psn, 0xfffffe);
	check_rewrite(&pkt, t);
}

static void read_response_ack(void)
{
	uint8_t t[64], f[128];
	size_t n = 0, len;
	struct srd_pkt pkt;

	/* send_read_response_ack(): AETH_ACK_UNLIMITED, the MSN. */
	n += bth(t, 0x10, 0, 0x000789, 0, 0x00abcd);
	n += put(t + n, (0x1fu << 24) | 0x000042, 4);
	len = frame(f, t, n);
	check_frame(f, len, &pkt);
	T_EQ(pkt.opcode, ROCE_RC_READ_RESPONSE_ONLY);
	T_EQ(pkt.paylen, 0);
	T_ASSERT(pkt.aeth.syndrome == 0x1f && pkt.aeth.msn == 0x42);
	check_rewrite(&pkt, t);
	/* A flipped byte fails the ICRC. */
	f[28 + 13] ^= 0x01;
	T_NE(srd_icrc_check_ipv4(f, f + 20, len - 20), 0);
}

int main(void)
{
	flush_request();
	atomic_write_request();
	read_response_ack();
	t_pass();
}
