/* SPDX-License-Identifier: MIT */
/*
 * A packet as the state machines see it: the header values of the BTH and
 * of the extended headers its opcode carries, what the network layer
 * knows (GIDs, traffic class...), and a reference to its payload.
 *
 * On the in-memory wire the payload is never serialized: it stays a
 * reference to the sender's buffer and the receiver copies it once into
 * its destination.  The UDP wire serializes the same values with
 * srd_pkt_hdr_write() and reads them back with srd_pkt_hdr_read().
 */
#ifndef SOFTRDMA_TRANSPORT_PKT_H
#define SOFTRDMA_TRANSPORT_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "daemon/net/roce.h"
#include "daemon/transport/dma.h"
#include "daemon/transport/opcode.h"

struct srd_device;

struct srd_pkt {
	/* BTH */
	uint8_t opcode;
	bool se;
	bool mig;
	bool ack_req;
	uint8_t tver;
	uint16_t pkey;
	uint32_t qpn; /* destination QP */
	uint32_t psn;
	uint32_t mask; /* srd_opcodes[opcode].mask */

	/* extended headers, valid as mask says */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t len;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atm;
	uint64_t atm_orig;
	uint32_t imm; /* as the application gave it (network order) */
	uint32_t ieth_rkey;
	uint32_t feth;	   /* placement type and selectivity, ROCE_FETH_* */
	uint32_t xrc_srqn; /* XRCETH: the target's SRQ */
	struct {
		uint32_t qkey;
		uint32_t sqp;
	} deth;

	/* network layer */
	union ibv_gid sgid;
	union ibv_gid dgid;
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
	uint8_t sl;
	uint32_t src_qpn;	    /* known to the in-memory wire only */
	struct srd_device *dst_dev; /* routed destination device */
	/*
	 * In-memory only: this packet stands for npkts consecutive packets
	 * of one message, PSNs psn .. psn + npkts - 1, all full path MTU
	 * FIRST/MIDDLE (or READ RESPONSE FIRST/MIDDLE) packets; the opcode
	 * is that of the first.  Their payload moves in one copy.  The LAST
	 * packet of a message always travels alone, and the UDP wire sends
	 * only npkts == 1.
	 */
	uint32_t npkts;

	/* payload */
	uint32_t paylen;
	struct srd_dma pay;
};

/* Zero a packet and set its opcode and BTH defaults. */
void srd_pkt_init(struct srd_pkt *pkt, uint8_t opcode);

/* Bytes of BTH and extended headers for the packet's opcode. */
static inline unsigned int srd_pkt_hdr_len(const struct srd_pkt *pkt)
{
	return srd_opcodes[pkt->opcode].hdr_len;
}

/* Pad bytes that bring the payload to a multiple of 4. */
static inline unsigned int srd_pkt_pad(uint32_t paylen)
{
	return (4 - (paylen & 3)) & 3;
}

/*
 * Serialize the BTH and extended headers (pad count from paylen) into buf
 * of len bytes.  Returns the header length or -ENOSPC.
 */
int srd_pkt_hdr_write(const struct srd_pkt *pkt, uint8_t *buf, size_t len);

/*
 * Parse the BTH and extended headers of a packet of len bytes (BTH up to,
 * not including, the ICRC).  Sets paylen from the pad count; leaves the
 * payload reference empty.  Returns the header length or -EINVAL.
 */
int srd_pkt_hdr_read(struct srd_pkt *pkt, const uint8_t *buf, size_t len);

#endif
