/* SPDX-License-Identifier: MIT */
/*
 * The BTH opcode table (IBTA vol. 1, table 38).  XRC repeats the RC rows
 * 0xA0 apart, each request with the XRCETH right after the BTH; IBTA 1.5
 * Annex A19's FLUSH and ATOMIC WRITE are RC rows only here.
 */
#include "daemon/transport/opcode.h"

#define BTH 12
#define DETH 8
#define RETH 16
#define ATMETH 28
#define AETH 4
#define ATMACK 8
#define IMM 4
#define IETH 4
#define FETH 4
#define XRCETH 4

#define REQ (OPF_VALID | OPF_REQ)
#define RSP (OPF_VALID | OPF_RESP)

#define OP(code, nm, m, len) \
	[code] = { .name = nm, .mask = (m), .hdr_len = (len) }

/* RC, UC and XRC share the SEND and WRITE rows; x adds the XRCETH (its
 * mask bit and length) to each of them. */
#define SEND_WRITE_ROWS_X(tr, p, xm, xl)                                       \
	OP(tr | 0x00, p "SEND_FIRST",                                          \
	   REQ | xm | OPF_SEND | OPF_FIRST | OPF_PAYLOAD, BTH + xl),           \
		OP(tr | 0x01, p "SEND_MIDDLE",                                 \
		   REQ | xm | OPF_SEND | OPF_MIDDLE | OPF_PAYLOAD, BTH + xl),  \
		OP(tr | 0x02, p "SEND_LAST",                                   \
		   REQ | xm | OPF_SEND | OPF_LAST | OPF_PAYLOAD | OPF_RWQE,    \
		   BTH + xl),                                                  \
		OP(tr | 0x03, p "SEND_LAST_WITH_IMMEDIATE",                    \
		   REQ | xm | OPF_SEND | OPF_LAST | OPF_PAYLOAD | OPF_RWQE |   \
			   OPF_IMM,                                            \
		   BTH + IMM + xl),                                            \
		OP(tr | 0x04, p "SEND_ONLY",                                   \
		   REQ | xm | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE,    \
		   BTH + xl),                                                  \
		OP(tr | 0x05, p "SEND_ONLY_WITH_IMMEDIATE",                    \
		   REQ | xm | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE |   \
			   OPF_IMM,                                            \
		   BTH + IMM + xl),                                            \
		OP(tr | 0x06, p "RDMA_WRITE_FIRST",                            \
		   REQ | xm | OPF_WRITE | OPF_FIRST | OPF_PAYLOAD | OPF_RETH,  \
		   BTH + RETH + xl),                                           \
		OP(tr | 0x07, p "RDMA_WRITE_MIDDLE",                           \
		   REQ | xm | OPF_WRITE | OPF_MIDDLE | OPF_PAYLOAD, BTH + xl), \
		OP(tr | 0x08, p "RDMA_WRITE_LAST",                             \
		   REQ | xm | OPF_WRITE | OPF_LAST | OPF_PAYLOAD, BTH + xl),   \
		OP(tr | 0x09, p "RDMA_WRITE_LAST_WITH_IMMEDIATE",              \
		   REQ | xm | OPF_WRITE | OPF_LAST | OPF_PAYLOAD | OPF_IMM |   \
			   OPF_RWQE,                                           \
		   BTH + IMM + xl),                                            \
		OP(tr | 0x0a, p "RDMA_WRITE_ONLY",                             \
		   REQ | xm | OPF_WRITE | OPF_ONLY | OPF_PAYLOAD | OPF_RETH,   \
		   BTH + RETH + xl),                                           \
		OP(tr | 0x0b, p "RDMA_WRITE_ONLY_WITH_IMMEDIATE",              \
		   REQ | xm | OPF_WRITE | OPF_ONLY | OPF_PAYLOAD | OPF_RETH |  \
			   OPF_IMM | OPF_RWQE,                                 \
		   BTH + RETH + IMM + xl)

#define SEND_WRITE_ROWS(tr, p) SEND_WRITE_ROWS_X(tr, p, 0, 0)

const struct srd_opcode_info srd_opcodes[256] = {
	SEND_WRITE_ROWS(ROCE_TR_RC, "RC_"),
	OP(ROCE_RC_READ_REQUEST, "RC_RDMA_READ_REQUEST",
	   REQ | OPF_READ | OPF_ONLY | OPF_RETH, BTH + RETH),
	OP(ROCE_RC_READ_RESPONSE_FIRST, "RC_RDMA_READ_RESPONSE_FIRST",
	   RSP | OPF_READ | OPF_FIRST | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_RC_READ_RESPONSE_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE",
	   RSP | OPF_READ | OPF_MIDDLE | OPF_PAYLOAD, BTH),
	OP(ROCE_RC_READ_RESPONSE_LAST, "RC_RDMA_READ_RESPONSE_LAST",
	   RSP | OPF_READ | OPF_LAST | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_RC_READ_RESPONSE_ONLY, "RC_RDMA_READ_RESPONSE_ONLY",
	   RSP | OPF_READ | OPF_ONLY | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE",
	   RSP | OPF_ACK | OPF_ONLY | OPF_AETH, BTH + AETH),
	OP(ROCE_RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
	   RSP | OPF_ACK | OPF_ATOMIC | OPF_ONLY | OPF_AETH | OPF_ATMACK,
	   BTH + AETH + ATMACK),
	OP(ROCE_RC_COMPARE_SWAP, "RC_COMPARE_SWAP",
	   REQ | OPF_ATOMIC | OPF_ONLY | OPF_ATMETH, BTH + ATMETH),
	OP(ROCE_RC_FETCH_ADD, "RC_FETCH_ADD",
	   REQ | OPF_ATOMIC | OPF_ONLY | OPF_ATMETH, BTH + ATMETH),
	OP(ROCE_RC_SEND_LAST_INV, "RC_SEND_LAST_WITH_INVALIDATE",
	   REQ | OPF_SEND | OPF_LAST | OPF_PAYLOAD | OPF_RWQE | OPF_IETH,
	   BTH + IETH),
	OP(ROCE_RC_SEND_ONLY_INV, "RC_SEND_ONLY_WITH_INVALIDATE",
	   REQ | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE | OPF_IETH,
	   BTH + IETH),
	/* IBTA 1.5 Annex A19, as Linux rxe (6.2) names and builds them */
	OP(ROCE_RC_FLUSH, "RC_FLUSH",
	   REQ | OPF_FLUSH | OPF_ONLY | OPF_FETH | OPF_RETH, BTH + FETH + RETH),
	OP(ROCE_RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE",
	   REQ | OPF_ATOMIC_WRITE | OPF_ONLY | OPF_RETH | OPF_PAYLOAD,
	   BTH + RETH),

	SEND_WRITE_ROWS(ROCE_TR_UC, "UC_"),

	OP(ROCE_UD_SEND_ONLY, "UD_SEND_ONLY",
	   REQ | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE | OPF_DETH,
	   BTH + DETH),
	OP(ROCE_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_WITH_IMMEDIATE",
	   REQ | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE | OPF_DETH |
		   OPF_IMM,
	   BTH + DETH + IMM),

	SEND_WRITE_ROWS_X(ROCE_TR_XRC, "XRC_", OPF_XRCETH, XRCETH),
	OP(ROCE_TR_XRC | ROCE_RC_READ_REQUEST, "XRC_RDMA_READ_REQUEST",
	   REQ | OPF_XRCETH | OPF_READ | OPF_ONLY | OPF_RETH,
	   BTH + XRCETH + RETH),
	OP(ROCE_TR_XRC | ROCE_RC_READ_RESPONSE_FIRST,
	   "XRC_RDMA_READ_RESPONSE_FIRST",
	   RSP | OPF_READ | OPF_FIRST | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_TR_XRC | ROCE_RC_READ_RESPONSE_MIDDLE,
	   "XRC_RDMA_READ_RESPONSE_MIDDLE",
	   RSP | OPF_READ | OPF_MIDDLE | OPF_PAYLOAD, BTH),
	OP(ROCE_TR_XRC | ROCE_RC_READ_RESPONSE_LAST,
	   "XRC_RDMA_READ_RESPONSE_LAST",
	   RSP | OPF_READ | OPF_LAST | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_TR_XRC | ROCE_RC_READ_RESPONSE_ONLY,
	   "XRC_RDMA_READ_RESPONSE_ONLY",
	   RSP | OPF_READ | OPF_ONLY | OPF_PAYLOAD | OPF_AETH, BTH + AETH),
	OP(ROCE_TR_XRC | ROCE_RC_ACKNOWLEDGE, "XRC_ACKNOWLEDGE",
	   RSP | OPF_ACK | OPF_ONLY | OPF_AETH, BTH + AETH),
	OP(ROCE_TR_XRC | ROCE_RC_ATOMIC_ACKNOWLEDGE, "XRC_ATOMIC_ACKNOWLEDGE",
	   RSP | OPF_ACK | OPF_ATOMIC | OPF_ONLY | OPF_AETH | OPF_ATMACK,
	   BTH + AETH + ATMACK),
	OP(ROCE_TR_XRC | ROCE_RC_COMPARE_SWAP, "XRC_COMPARE_SWAP",
	   REQ | OPF_XRCETH | OPF_ATOMIC | OPF_ONLY | OPF_ATMETH,
	   BTH + XRCETH + ATMETH),
	OP(ROCE_TR_XRC | ROCE_RC_FETCH_ADD, "XRC_FETCH_ADD",
	   REQ | OPF_XRCETH | OPF_ATOMIC | OPF_ONLY | OPF_ATMETH,
	   BTH + XRCETH + ATMETH),
	OP(ROCE_TR_XRC | ROCE_RC_SEND_LAST_INV, "XRC_SEND_LAST_WITH_INVALIDATE",
	   REQ | OPF_XRCETH | OPF_SEND | OPF_LAST | OPF_PAYLOAD | OPF_RWQE |
		   OPF_IETH,
	   BTH + XRCETH + IETH),
	OP(ROCE_TR_XRC | ROCE_RC_SEND_ONLY_INV, "XRC_SEND_ONLY_WITH_INVALIDATE",
	   REQ | OPF_XRCETH | OPF_SEND | OPF_ONLY | OPF_PAYLOAD | OPF_RWQE |
		   OPF_IETH,
	   BTH + XRCETH + IETH),
};

unsigned int srd_op_hdr_offset(uint8_t opcode, uint32_t hdr)
{
	static const struct {
		uint32_t bit;
		uint8_t len;
	} order[] = {
		{ OPF_DETH, DETH },	{ OPF_XRCETH, XRCETH },
		{ OPF_FETH, FETH },	{ OPF_RETH, RETH },
		{ OPF_ATMETH, ATMETH }, { OPF_AETH, AETH },
		{ OPF_ATMACK, ATMACK }, { OPF_IMM, IMM },
		{ OPF_IETH, IETH },
	};
	uint32_t mask = srd_opcodes[opcode].mask;
	unsigned int off = BTH;

	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (order[i].bit == hdr)
			return off;
		if (mask & order[i].bit)
			off += order[i].len;
	}
	return off;
}

uint8_t srd_op_request(uint8_t tr, uint32_t kind, uint32_t pos, bool imm)
{
	uint8_t op;

	if (kind == OPF_SEND) {
		switch (pos) {
		case OPF_FIRST:
			op = ROCE_RC_SEND_FIRST;
			break;
		case OPF_MIDDLE:
			op = ROCE_RC_SEND_MIDDLE;
			break;
		case OPF_LAST:
			op = imm ? ROCE_RC_SEND_LAST_IMM : ROCE_RC_SEND_LAST;
			break;
		default:
			op = imm ? ROCE_RC_SEND_ONLY_IMM : ROCE_RC_SEND_ONLY;
			break;
		}
	} else {
		switch (pos) {
		case OPF_FIRST:
			op = ROCE_RC_WRITE_FIRST;
			break;
		case OPF_MIDDLE:
			op = ROCE_RC_WRITE_MIDDLE;
			break;
		case OPF_LAST:
			op = imm ? ROCE_RC_WRITE_LAST_IMM : ROCE_RC_WRITE_LAST;
			break;
		default:
			op = imm ? ROCE_RC_WRITE_ONLY_IMM : ROCE_RC_WRITE_ONLY;
			break;
		}
	}
	return tr | op;
}

uint8_t srd_op_read_response(uint8_t tr, uint32_t pos)
{
	switch (pos) {
	case OPF_FIRST:
		return tr | ROCE_RC_READ_RESPONSE_FIRST;
	case OPF_MIDDLE:
		return tr | ROCE_RC_READ_RESPONSE_MIDDLE;
	case OPF_LAST:
		return tr | ROCE_RC_READ_RESPONSE_LAST;
	default:
		return tr | ROCE_RC_READ_RESPONSE_ONLY;
	}
}
