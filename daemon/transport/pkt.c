/* SPDX-License-Identifier: MIT */
/* Header serialization, driven by the opcode table. */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "daemon/transport/pkt.h"

void srd_pkt_init(struct srd_pkt *pkt, uint8_t opcode)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->mask = srd_op_mask(opcode);
	pkt->pkey = ROCE_DEFAULT_PKEY;
	pkt->npkts = 1;
}

static void put(uint8_t *buf, unsigned int off, const void *h, size_t n)
{
	memcpy(buf + off, h, n);
}

int srd_pkt_hdr_write(const struct srd_pkt *pkt, uint8_t *buf, size_t len)
{
	uint32_t m = pkt->mask;
	unsigned int hl = srd_pkt_hdr_len(pkt);
	struct roce_bth bth;

	if (!(m & OPF_VALID) || len < hl || pkt->npkts != 1)
		return -ENOSPC;
	bth.opcode = pkt->opcode;
	bth.flags = (pkt->se ? ROCE_BTH_SE : 0) |
		    (pkt->mig ? ROCE_BTH_MIG : 0) |
		    (srd_pkt_pad(pkt->paylen) << ROCE_BTH_PAD_SHIFT) |
		    (pkt->tver & ROCE_BTH_TVER_MASK);
	bth.pkey = htobe16(pkt->pkey);
	bth.qpn = htobe32(pkt->qpn & ROCE_QPN_MASK);
	bth.apsn = htobe32((pkt->ack_req ? ROCE_BTH_ACKREQ : 0) |
			   (pkt->psn & ROCE_PSN_MASK));
	put(buf, 0, &bth, sizeof(bth));

	if (m & OPF_DETH) {
		struct roce_deth h = {
			.qkey = htobe32(pkt->deth.qkey),
			.sqp = htobe32(pkt->deth.sqp & ROCE_QPN_MASK),
		};
		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_DETH), &h,
		    sizeof(h));
	}
	if (m & OPF_XRCETH) {
		struct roce_xrceth h = {
			.srqn = htobe32(pkt->xrc_srqn & ROCE_XRC_SRQN_MASK),
		};

		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_XRCETH), &h,
		    sizeof(h));
	}
	if (m & OPF_FETH) {
		struct roce_feth h = { .bits = htobe32(pkt->feth) };

		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_FETH), &h,
		    sizeof(h));
	}
	if (m & OPF_RETH) {
		struct roce_reth h = {
			.va = htobe64(pkt->reth.va),
			.rkey = htobe32(pkt->reth.rkey),
			.len = htobe32(pkt->reth.len),
		};
		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_RETH), &h,
		    sizeof(h));
	}
	if (m & OPF_ATMETH) {
		struct roce_atmeth h = {
			.va = htobe64(pkt->atm.va),
			.rkey = htobe32(pkt->atm.rkey),
			.swap_add = htobe64(pkt->atm.swap_add),
			.compare = htobe64(pkt->atm.compare),
		};
		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_ATMETH), &h,
		    sizeof(h));
	}
	if (m & OPF_AETH) {
		struct roce_aeth h = {
			.smsn = htobe32((uint32_t)pkt->aeth.syndrome << 24 |
					(pkt->aeth.msn & ROCE_AETH_MSN_MASK)),
		};
		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_AETH), &h,
		    sizeof(h));
	}
	if (m & OPF_ATMACK) {
		struct roce_atmack h = { .orig = htobe64(pkt->atm_orig) };

		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_ATMACK), &h,
		    sizeof(h));
	}
	if (m & OPF_IMM) /* already in network order */
		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_IMM), &pkt->imm, 4);
	if (m & OPF_IETH) {
		struct roce_ieth h = { .rkey = htobe32(pkt->ieth_rkey) };

		put(buf, srd_op_hdr_offset(pkt->opcode, OPF_IETH), &h,
		    sizeof(h));
	}
	return hl;
}

static void get(void *h, const uint8_t *buf, unsigned int off, size_t n)
{
	memcpy(h, buf + off, n);
}

int srd_pkt_hdr_read(struct srd_pkt *pkt, const uint8_t *buf, size_t len)
{
	struct roce_bth bth;
	unsigned int hl, pad;
	uint32_t m, apsn;

	if (len < sizeof(bth))
		return -EINVAL;
	get(&bth, buf, 0, sizeof(bth));
	srd_pkt_init(pkt, bth.opcode);
	m = pkt->mask;
	hl = srd_pkt_hdr_len(pkt);
	pad = (bth.flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	if (!(m & OPF_VALID) || len < hl + pad)
		return -EINVAL;
	if (!(m & OPF_PAYLOAD) && len != hl)
		return -EINVAL;
	pkt->se = bth.flags & ROCE_BTH_SE;
	pkt->mig = bth.flags & ROCE_BTH_MIG;
	pkt->tver = bth.flags & ROCE_BTH_TVER_MASK;
	pkt->pkey = be16toh(bth.pkey);
	pkt->qpn = be32toh(bth.qpn) & ROCE_QPN_MASK;
	apsn = be32toh(bth.apsn);
	pkt->ack_req = apsn & ROCE_BTH_ACKREQ;
	pkt->psn = apsn & ROCE_PSN_MASK;
	pkt->paylen = len - hl - pad;

	if (m & OPF_DETH) {
		struct roce_deth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_DETH),
		    sizeof(h));
		pkt->deth.qkey = be32toh(h.qkey);
		pkt->deth.sqp = be32toh(h.sqp) & ROCE_QPN_MASK;
	}
	if (m & OPF_XRCETH) {
		struct roce_xrceth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_XRCETH),
		    sizeof(h));
		pkt->xrc_srqn = be32toh(h.srqn) & ROCE_XRC_SRQN_MASK;
	}
	if (m & OPF_FETH) {
		struct roce_feth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_FETH),
		    sizeof(h));
		pkt->feth = be32toh(h.bits);
	}
	if (m & OPF_RETH) {
		struct roce_reth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_RETH),
		    sizeof(h));
		pkt->reth.va = be64toh(h.va);
		pkt->reth.rkey = be32toh(h.rkey);
		pkt->reth.len = be32toh(h.len);
	}
	if (m & OPF_ATMETH) {
		struct roce_atmeth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_ATMETH),
		    sizeof(h));
		pkt->atm.va = be64toh(h.va);
		pkt->atm.rkey = be32toh(h.rkey);
		pkt->atm.swap_add = be64toh(h.swap_add);
		pkt->atm.compare = be64toh(h.compare);
	}
	if (m & OPF_AETH) {
		struct roce_aeth h;
		uint32_t v;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_AETH),
		    sizeof(h));
		v = be32toh(h.smsn);
		pkt->aeth.syndrome = v >> 24;
		pkt->aeth.msn = v & ROCE_AETH_MSN_MASK;
	}
	if (m & OPF_ATMACK) {
		struct roce_atmack h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_ATMACK),
		    sizeof(h));
		pkt->atm_orig = be64toh(h.orig);
	}
	if (m & OPF_IMM)
		get(&pkt->imm, buf, srd_op_hdr_offset(pkt->opcode, OPF_IMM), 4);
	if (m & OPF_IETH) {
		struct roce_ieth h;

		get(&h, buf, srd_op_hdr_offset(pkt->opcode, OPF_IETH),
		    sizeof(h));
		pkt->ieth_rkey = be32toh(h.rkey);
	}
	return hl;
}
