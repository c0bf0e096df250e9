/* SPDX-License-Identifier: MIT */
/*
 * The BTH opcode table: for every opcode, its name, the headers that follow
 * the BTH, where it sits in a message and what it does.  Building and
 * parsing packets are both driven by it.
 */
#ifndef SOFTRDMA_TRANSPORT_OPCODE_H
#define SOFTRDMA_TRANSPORT_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/net/roce.h"

enum srd_op_flags {
	/* headers after the BTH, in wire order */
	OPF_DETH = 1u << 0,
	OPF_RETH = 1u << 1,
	OPF_ATMETH = 1u << 2,
	OPF_AETH = 1u << 3,
	OPF_ATMACK = 1u << 4,
	OPF_IMM = 1u << 5,
	OPF_IETH = 1u << 6,
	OPF_PAYLOAD = 1u << 7,
	/* direction: a request to a responder, or a response to a requester */
	OPF_REQ = 1u << 8,
	OPF_RESP = 1u << 9,
	/* operation */
	OPF_SEND = 1u << 10,
	OPF_WRITE = 1u << 11,
	OPF_READ = 1u << 12,
	OPF_ATOMIC = 1u << 13,
	OPF_ACK = 1u << 14, /* ACKNOWLEDGE or ATOMIC ACKNOWLEDGE */
	/* position in the message */
	OPF_FIRST = 1u << 15,
	OPF_MIDDLE = 1u << 16,
	OPF_LAST = 1u << 17,
	OPF_ONLY = OPF_FIRST | OPF_LAST,
	/* the message consumes a receive WQE when it completes */
	OPF_RWQE = 1u << 18,
	OPF_VALID = 1u << 19,
	/* IBTA 1.5: the FLUSH Extended Transport Header; FLUSH; ATOMIC
	 * WRITE.  Both are one-packet requests answered by a zero-length
	 * READ RESPONSE ONLY, replayed from a responder resource. */
	OPF_FETH = 1u << 20,
	OPF_FLUSH = 1u << 21,
	OPF_ATOMIC_WRITE = 1u << 22,
	/* the XRC Extended Transport Header (the target SRQ), right after
	 * the BTH of every XRC request */
	OPF_XRCETH = 1u << 23,
};

struct srd_opcode_info {
	const char *name;
	uint32_t mask;	 /* enum srd_op_flags */
	uint8_t hdr_len; /* BTH and extended headers */
};

extern const struct srd_opcode_info srd_opcodes[256];

static inline uint32_t srd_op_mask(uint8_t opcode)
{
	return srd_opcodes[opcode].mask;
}

static inline const char *srd_op_name(uint8_t opcode)
{
	const char *n = srd_opcodes[opcode].name;

	return n ? n : "UNKNOWN";
}

/* Offset of one extended header (one OPF_* header bit) from the start of
 * the BTH, for an opcode whose mask has it. */
unsigned int srd_op_hdr_offset(uint8_t opcode, uint32_t hdr);

/* Transport of an opcode: ROCE_TR_RC, _UC, _UD... */
static inline uint8_t srd_op_transport(uint8_t opcode)
{
	return opcode & ROCE_TR_MASK;
}

/* The request opcode for a message kind at a position.  kind is
 * OPF_SEND or OPF_WRITE; pos is OPF_FIRST, OPF_MIDDLE, OPF_LAST or
 * OPF_ONLY; tr is ROCE_TR_RC, ROCE_TR_UC or ROCE_TR_XRC. */
uint8_t srd_op_request(uint8_t tr, uint32_t kind, uint32_t pos, bool imm);

/* The READ response opcode at a position, for transport tr (RC, XRC). */
uint8_t srd_op_read_response(uint8_t tr, uint32_t pos);

#endif
