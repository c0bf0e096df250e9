/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 invariant CRC (IBTA Annex A17).
 *
 * The ICRC is the IEEE 802.3 CRC-32 (reflected polynomial 0xEDB88320,
 * register preset to all ones, result inverted) over:
 *   8 bytes of 0xff standing in for the LRH RoCEv2 does not have,
 *   the IP header with its variant fields set to ones (IPv4: TOS, TTL,
 *   header checksum; IPv6: traffic class, flow label, hop limit),
 *   the UDP header with its checksum set to ones,
 *   the BTH with byte 4 (FECN, BECN, resv6a) set to ones,
 *   everything after the BTH up to the ICRC (extended headers, payload, pad).
 * The IPv4 identification, flags and fragment offset are covered as sent.
 * On the wire the ICRC follows the pad and is stored least significant byte
 * first, as an Ethernet FCS is: srd_icrc_put()/srd_icrc_get() do that.
 *
 * Lengths: the functions on whole packets take `udp_len`, the UDP length
 * (UDP header, BTH, ..., pad and the 4-byte ICRC); those on a UDP payload
 * take its length (BTH ... ICRC).  The CRC covers all but the last 4 bytes.
 * The functions computing an ICRC expect at least SRD_ICRC_MIN_UDP_LEN
 * bytes from the UDP header on; the checks verify lengths.
 */
#ifndef SOFTRDMA_DAEMON_NET_ICRC_H
#define SOFTRDMA_DAEMON_NET_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/inet.h"
#include "daemon/net/crc32.h"

#define SRD_ICRC_SIZE 4
#define SRD_ICRC_BTH_SIZE 12
#define SRD_ICRC_UDP_SIZE 8
/* UDP header, BTH and ICRC: the smallest UDP length carrying an ICRC. */
#define SRD_ICRC_MIN_UDP_LEN \
	(SRD_ICRC_UDP_SIZE + SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE)

/*
 * ICRC of a packet over IPv4.  ip: the IPv4 header (IHL * 4 bytes);
 * udp: the UDP header, followed by BTH ... ICRC, udp_len bytes in all.
 * The result is the value to store with srd_icrc_put().
 */
uint32_t srd_icrc_ipv4(const void *ip, const void *udp, size_t udp_len);
/* ICRC of a packet over IPv6; ip: the 40-byte fixed IPv6 header. */
uint32_t srd_icrc_ipv6(const void *ip6, const void *udp, size_t udp_len);

/*
 * What a UDP socket sees of a packet: addresses and ports, all in network
 * byte order as in struct sockaddr_in/sockaddr_in6, and the UDP payload
 * (BTH ... ICRC).  The functions below rebuild the IP and UDP headers the
 * ICRC covers from them.
 */
struct srd_icrc_udp4 {
	uint32_t saddr;
	uint32_t daddr;
	uint16_t sport;
	uint16_t dport;
};

struct srd_icrc_udp6 {
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint16_t sport;
	uint16_t dport;
};

/*
 * ICRC of an IPv4 packet from its parts, for a sender that hands the UDP
 * payload to a socket: the IPv4 header is taken as IHL 5, total length
 * 28 + len, protocol UDP, identification id and flags/fragment-offset word
 * frag_off (host order: SRD_IPV4_DF or 0).  bth: the UDP payload, len
 * bytes including the 4-byte ICRC.  A UDP socket with IP_PMTUDISC_DO sends
 * id 0 with DF on Linux.
 */
uint32_t srd_icrc_v4_from_parts(const struct srd_icrc_udp4 *f, uint16_t id,
				uint16_t frag_off, const void *bth, size_t len);
/* The same over IPv6 (payload length 8 + len, next header UDP). */
uint32_t srd_icrc_v6_from_parts(const struct srd_icrc_udp6 *f, const void *bth,
				size_t len);

/*
 * The same from a gather list, for a sender whose headers and payload lie
 * apart: iov holds the UDP payload up to, not including, the ICRC (BTH,
 * extended headers, payload, pad: len - 4 bytes in all), and the first
 * piece holds at least the BTH.  len counts the ICRC, as above.
 */
uint32_t srd_icrc_v4_from_iov(const struct srd_icrc_udp4 *f, uint16_t id,
			      uint16_t frag_off, const struct iovec *iov,
			      int iovcnt, size_t len);
uint32_t srd_icrc_v6_from_iov(const struct srd_icrc_udp6 *f,
			      const struct iovec *iov, int iovcnt, size_t len);

/* A UDP payload of len bytes (BTH ... ICRC) can hold an ICRC and fit IP. */
static inline bool srd_icrc_len_ok(size_t len)
{
	return len >= SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE &&
	       len <= 65535u - SRD_ICRC_UDP_SIZE;
}

/* Store/load the ICRC in the last 4 bytes of the len bytes at buf. */
void srd_icrc_put(void *buf, size_t len, uint32_t icrc);
uint32_t srd_icrc_get(const void *buf, size_t len);

/*
 * Checks of a received packet: 0 if the ICRC in its last 4 bytes is right,
 * -EBADMSG if not, -EINVAL if the length is too short to hold (UDP,) BTH
 * and ICRC or too long for IP.  The first two take the whole packet from
 * its IP header; udp_len as above.
 */
int srd_icrc_check_ipv4(const void *ip, const void *udp, size_t udp_len);
int srd_icrc_check_ipv6(const void *ip6, const void *udp, size_t udp_len);
/* From a UDP socket: bth is the UDP payload, len bytes with the ICRC. */
int srd_icrc_check_v6(const struct srd_icrc_udp6 *f, const void *bth,
		      size_t len);

/*
 * Check of an IPv4 packet received on an ordinary UDP socket, which does
 * not show the identification and flags that the ICRC covers (icrc_v4id.c).
 * The CRC is affine in those bits, so this solves for the 16-bit id (with
 * DF set, and with no flags) that makes the ICRC right; at most one answer
 * exists.
 * On success returns 0 and stores the id and flags word found (host order;
 * either pointer may be NULL).  Returns -EBADMSG if no id explains the
 * ICRC, -EINVAL for a bad length.
 *
 * Cost: one ICRC over the packet plus about twenty 32-bit carry-less
 * multiplications.  Strength: a random corruption passes with probability
 * 2^-15 instead of 2^-32, since 17 of the 32 check bits go to the unknown
 * header bits; the full check (srd_icrc_check_ipv4) still catches every
 * error burst of up to 32 bits.
 */
int srd_icrc_check_v4_noid(const struct srd_icrc_udp4 *f, const void *bth,
			   size_t len, uint16_t *id, uint16_t *frag_off);

#endif
