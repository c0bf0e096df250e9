/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand transport headers as RoCEv2 carries them (IBTA vol. 1 ch. 9,
 * Annex A17): the Base Transport Header and the extended headers, all big
 * endian on the wire.  The in-memory wire keeps their values in a parsed
 * packet; the UDP wire serializes exactly these layouts.
 */
#ifndef SOFTRDMA_COMMON_ROCE_H
#define SOFTRDMA_COMMON_ROCE_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/inet.h"

#define ROCE_UDP_PORT 4791
#define ROCE_ICRC_BYTES 4
#define ROCE_GRH_BYTES 40
#define ROCE_PSN_MASK 0xffffffu

/*
 * A UD receive's wc.sl on RoCE v2, as ConnectX reports it (and UCX reads
 * it to find the destination address in the GRH area): bit 3, the frame
 * had a UDP header; bits 2..0, its L3 header, 2 for IPv4 (in bytes 20..39
 * of the GRH area), 1 for IPv6.  RoCE v2 carries no SL to report.
 */
#define ROCE_WC_SL_UDP 0x8
#define ROCE_WC_SL_IPV6 0x1
#define ROCE_WC_SL_IPV4 0x2
static inline uint8_t roce_ud_wc_sl(const uint8_t sgid[16])
{
	return ROCE_WC_SL_UDP |
	       (srd_gid_is_v4mapped(sgid) ? ROCE_WC_SL_IPV4 : ROCE_WC_SL_IPV6);
}
#define ROCE_QPN_MASK 0xffffffu
#define ROCE_DEFAULT_PKEY 0xffff
/* Does a packet's P_Key match the port's one, the full-member default?
 * As IBA's rule (and rxe's pkey_match): the same 15-bit partition, either
 * side a full member, so a limited member of the default partition
 * (0x7fff) matches too. */
static inline bool roce_pkey_ok(uint16_t pkey)
{
	return (pkey & 0x7fff) == (ROCE_DEFAULT_PKEY & 0x7fff);
}
/* The GSI QP's well-known Q_Key (IBTA 10.2.4). */
#define ROCE_GSI_QKEY 0x80010000u

/* BTH opcode: 3 bits of transport, 5 bits of operation. */
enum roce_transport {
	ROCE_TR_RC = 0x00,
	ROCE_TR_UC = 0x20,
	ROCE_TR_RD = 0x40,
	ROCE_TR_UD = 0x60,
	ROCE_TR_CNP = 0x80,
	/* eXtended Reliable Connected: the RC operations, 0xA0 apart;
	 * requests carry the XRCETH after the BTH, responses do not. */
	ROCE_TR_XRC = 0xa0,
	ROCE_TR_MASK = 0xe0,
};

enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0a,
	ROCE_RC_WRITE_ONLY_IMM = 0x0b,
	ROCE_RC_READ_REQUEST = 0x0c,
	ROCE_RC_READ_RESPONSE_FIRST = 0x0d,
	ROCE_RC_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_RC_READ_RESPONSE_LAST = 0x0f,
	ROCE_RC_READ_RESPONSE_ONLY = 0x10,
	ROCE_RC_ACKNOWLEDGE = 0x11,
	ROCE_RC_ATOMIC_ACKNOWLEDGE = 0x12,
	ROCE_RC_COMPARE_SWAP = 0x13,
	ROCE_RC_FETCH_ADD = 0x14,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
	/* IBTA 1.5 (Annex A19): FETH + RETH; RETH + 8 bytes of payload.
	 * Both are answered by a zero-length RDMA READ RESPONSE ONLY. */
	ROCE_RC_FLUSH = 0x1c,
	ROCE_RC_ATOMIC_WRITE = 0x1d,

	ROCE_UC_SEND_FIRST = 0x20,
	ROCE_UC_SEND_MIDDLE = 0x21,
	ROCE_UC_SEND_LAST = 0x22,
	ROCE_UC_SEND_LAST_IMM = 0x23,
	ROCE_UC_SEND_ONLY = 0x24,
	ROCE_UC_SEND_ONLY_IMM = 0x25,
	ROCE_UC_WRITE_FIRST = 0x26,
	ROCE_UC_WRITE_MIDDLE = 0x27,
	ROCE_UC_WRITE_LAST = 0x28,
	ROCE_UC_WRITE_LAST_IMM = 0x29,
	ROCE_UC_WRITE_ONLY = 0x2a,
	ROCE_UC_WRITE_ONLY_IMM = 0x2b,

	ROCE_UD_SEND_ONLY = 0x64,
	ROCE_UD_SEND_ONLY_IMM = 0x65,
};

/* The operation of an opcode without its transport: an RC opcode for
 * RC and XRC alike. */
#define ROCE_OP_MASK 0x1fu
static inline uint8_t roce_op_code(uint8_t opcode)
{
	return opcode & ROCE_OP_MASK;
}

/* --- Base Transport Header (12 bytes) ------------------------------------ */
/* flags: SE(7) M(6) PadCnt(5:4) TVer(3:0) */
#define ROCE_BTH_SE 0x80
#define ROCE_BTH_MIG 0x40
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_PAD_MASK 0x30
#define ROCE_BTH_TVER_MASK 0x0f
/* qpn word: FECN(31) BECN(30) resv6 DestQP(23:0) */
#define ROCE_BTH_FECN (1u << 31)
#define ROCE_BTH_BECN (1u << 30)
/* apsn word: AckReq(31) resv7 PSN(23:0) */
#define ROCE_BTH_ACKREQ (1u << 31)

struct roce_bth {
	uint8_t opcode;
	uint8_t flags;
	uint16_t pkey;
	uint32_t qpn;
	uint32_t apsn;
} __attribute__((packed));
static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");

/* --- XRC Extended Transport Header (4 bytes): resv8, XRCSRQ(23:0) -------- */
/* Right after the BTH of every XRC request (IBTA vol. 1 9.3.1.1): the SRQ
 * of the target's XRC domain the message is for. */
struct roce_xrceth {
	uint32_t srqn;
} __attribute__((packed));
static_assert(sizeof(struct roce_xrceth) == 4, "XRCETH is 4 bytes");
#define ROCE_XRC_SRQN_MASK 0xffffffu

/* --- RDMA Extended Transport Header (16 bytes) ---------------------------- */
struct roce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
} __attribute__((packed));
static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");

/* --- ACK Extended Transport Header (4 bytes): Syndrome(31:24) MSN(23:0) --- */
struct roce_aeth {
	uint32_t smsn;
} __attribute__((packed));
static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");

/* Syndrome: type in bits 6:5, value in bits 4:0 (bit 7 reserved). */
#define ROCE_AETH_TYPE_MASK 0x60
#define ROCE_AETH_VALUE_MASK 0x1f
enum roce_aeth_type {
	ROCE_AETH_ACK = 0x00,
	ROCE_AETH_RNR_NAK = 0x20,
	ROCE_AETH_NAK = 0x60,
};
/* ACK value: credit count; 0x1f = end-to-end flow control not used. */
#define ROCE_AETH_CREDITS_INVALID 0x1f
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REM_ACCESS = 2,
	ROCE_NAK_REM_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};
#define ROCE_AETH_MSN_MASK 0xffffffu

/* --- FLUSH Extended Transport Header (4 bytes, IBTA 1.5 A19.4.1) ---------- */
/* resv26, selectivity level (5:4), placement type (3:0); before the RETH */
struct roce_feth {
	uint32_t bits;
} __attribute__((packed));
static_assert(sizeof(struct roce_feth) == 4, "FETH is 4 bytes");
#define ROCE_FETH_PLT_MASK 0x0fu
#define ROCE_FETH_SEL_MASK 0x30u
#define ROCE_FETH_SEL_SHIFT 4
/* placement types, selectivity levels */
#define ROCE_FLUSH_GLOBAL 0x1u
#define ROCE_FLUSH_PERSISTENT 0x2u
#define ROCE_FLUSH_RANGE 0u
#define ROCE_FLUSH_MR 1u
/* ATOMIC WRITE carries exactly this many payload bytes */
#define ROCE_ATOMIC_WRITE_BYTES 8

/* --- Atomic Extended Transport Header (28 bytes) -------------------------- */
struct roce_atmeth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
} __attribute__((packed));
static_assert(sizeof(struct roce_atmeth) == 28, "AtomicETH is 28 bytes");

/* --- Atomic Acknowledge Extended Transport Header (8 bytes) --------------- */
struct roce_atmack {
	uint64_t orig;
} __attribute__((packed));
static_assert(sizeof(struct roce_atmack) == 8, "AtomicAckETH is 8 bytes");

/* --- Immediate Data (4 bytes), carried as the application gave it -------- */
struct roce_immdt {
	uint32_t imm;
} __attribute__((packed));
static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");

/* --- Invalidate Extended Transport Header (4 bytes) ----------------------- */
struct roce_ieth {
	uint32_t rkey;
} __attribute__((packed));
static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");

/* --- Datagram Extended Transport Header (8 bytes) ------------------------- */
struct roce_deth {
	uint32_t qkey;
	uint32_t sqp; /* resv8, SrcQP(23:0) */
} __attribute__((packed));
static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");

/* --- The 40-byte GRH in front of every UD receive ------------------------- */
/* Global Route Header layout; for RoCEv2 over IPv6 it is the IPv6 header. */
struct roce_grh {
	uint32_t ver_tclass_flow; /* version(31:28) tclass(27:20) flow(19:0) */
	uint16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t sgid[16];
	uint8_t dgid[16];
} __attribute__((packed));
static_assert(sizeof(struct roce_grh) == ROCE_GRH_BYTES, "GRH is 40 bytes");

/* IPv4 header as it sits at offset 20 of the GRH buffer for RoCEv2/IPv4. */
struct roce_ipv4 {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;
	uint8_t ttl;
	uint8_t protocol;
	uint16_t check;
	uint32_t saddr;
	uint32_t daddr;
} __attribute__((packed));
static_assert(sizeof(struct roce_ipv4) == 20, "IPv4 header is 20 bytes");

struct roce_udp {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t check;
} __attribute__((packed));
static_assert(sizeof(struct roce_udp) == 8, "UDP header is 8 bytes");

/* PSNs are 24-bit sequence numbers compared within half the space. */
static inline int32_t roce_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}

#endif
