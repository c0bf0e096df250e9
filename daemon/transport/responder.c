/* SPDX-License-Identifier: MIT */
/*
 * The responder: checks every request packet (PSN, opcode sequence, what
 * the QP allows, receive WQE, lengths, keys), executes it (lands SEND data
 * in the receive WQE, WRITE data in the MR, runs atomics, queues READ
 * replies), completes receive WQEs and acknowledges.  Its error states
 * become NAKs for RC and silent drops for UC and UD, as IBTA classifies
 * them.  Duplicates are acknowledged again; duplicate READs and atomics
 * are answered from the responder resources (max_dest_rd_atomic of them).
 * During a UDP receive batch an in-order ACK is held and replaced by the
 * next one; it leaves at the batch's end or before any other response.
 *
 * One function per state, each returning the next state.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/core/core.h"
#include "daemon/transport/engine.h"

enum resp_state {
	RS_CHECK_PSN,
	RS_CHECK_OP_SEQ,
	RS_CHECK_OP_VALID,
	RS_CHECK_RESOURCE,
	RS_CHECK_LENGTH,
	RS_CHECK_RKEY,
	RS_EXECUTE,
	RS_COMPLETE,
	RS_ACKNOWLEDGE,
	RS_DUPLICATE,
	RS_ERR_PSN_SEQ,
	RS_ERR_RNR,
	RS_ERR_INV_REQ,
	RS_ERR_ACCESS,
	RS_ERR_LENGTH,
	RS_ERR_LOC_PROT,
	RS_ERR_MALFORMED,
	RS_ERR_INV_RKEY,
	RS_DROP_MSG,
	RS_DONE,
};

static const char *const resp_state_name[] = {
	[RS_CHECK_PSN] = "CHECK_PSN",
	[RS_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
	[RS_CHECK_OP_VALID] = "CHECK_OP_VALID",
	[RS_CHECK_RESOURCE] = "CHECK_RESOURCE",
	[RS_CHECK_LENGTH] = "CHECK_LENGTH",
	[RS_CHECK_RKEY] = "CHECK_RKEY",
	[RS_EXECUTE] = "EXECUTE",
	[RS_COMPLETE] = "COMPLETE",
	[RS_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RS_DUPLICATE] = "DUPLICATE",
	[RS_ERR_PSN_SEQ] = "ERR_PSN_SEQ",
	[RS_ERR_RNR] = "ERR_RNR",
	[RS_ERR_INV_REQ] = "ERR_INV_REQ",
	[RS_ERR_ACCESS] = "ERR_ACCESS",
	[RS_ERR_LENGTH] = "ERR_LENGTH",
	[RS_ERR_LOC_PROT] = "ERR_LOC_PROT",
	[RS_ERR_MALFORMED] = "ERR_MALFORMED",
	[RS_ERR_INV_RKEY] = "ERR_INV_RKEY",
	[RS_DROP_MSG] = "DROP_MSG",
	[RS_DONE] = "DONE",
};

static const char *responder_state_name(unsigned int s)
{
	return s < sizeof(resp_state_name) / sizeof(resp_state_name[0])
		       ? resp_state_name[s]
		       : "?";
}

struct resp_ctx {
	struct srd_qp_transport *tp;
	struct srd_pkt *pkt;
	uint32_t m;
	bool rc, uc, ud; /* rc: RC and XRC */
};

#define ACK_SYNDROME (ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID)

static void put_ack(struct srd_qp_transport *tp, uint8_t syndrome, uint32_t psn)
{
	struct srd_pkt pkt;

	srd_pkt_init(&pkt, tp_transport(tp) | ROCE_RC_ACKNOWLEDGE);
	pkt.psn = psn & ROCE_PSN_MASK;
	pkt.aeth.syndrome = syndrome;
	pkt.aeth.msn = tp->msn & ROCE_AETH_MSN_MASK;
	tp_fill_path(tp, &pkt);
	tp->cnt.tx_pkts++;
	wire_send(tp, &pkt);
}

void responder_ack_flush(struct srd_qp_transport *tp)
{
	struct srd_engine *e = tp->eng;

	if (!tp->ack_deferred)
		return;
	tp->ack_deferred = false;
	for (uint32_t i = 0; i < e->nack_deferred; i++) {
		if (e->ack_deferred[i] == tp) {
			e->ack_deferred[i] =
				e->ack_deferred[--e->nack_deferred];
			break;
		}
	}
	if (tp_state(tp) != IBV_QPS_ERR && tp_state(tp) != IBV_QPS_RESET)
		put_ack(tp, ACK_SYNDROME, tp->ack_psn);
}

void engine_acks_flush(struct srd_engine *e)
{
	while (e->nack_deferred)
		responder_ack_flush(e->ack_deferred[e->nack_deferred - 1]);
}

/* Responses leave in PSN order: a held ACK goes before anything else. */
static void send_ack(struct srd_qp_transport *tp, uint8_t syndrome,
		     uint32_t psn)
{
	responder_ack_flush(tp);
	put_ack(tp, syndrome, psn);
}

/* The ACK of an in-order request: held to the batch's end if one is
 * being received, replacing one held before (it covers it). */
static void send_ack_in_order(struct srd_qp_transport *tp, uint32_t psn)
{
	struct srd_engine *e = tp->eng;

	/* After a loss the requester runs a small window: one ACK for all
	 * of it, if lost, would stall it until its timer. */
	if (tp->nak_recent &&
	    ((psn - tp->nak_psn) & ROCE_PSN_MASK) >= SRD_MAX_UNACKED)
		tp->nak_recent = false;
	if (!e->defer_acks || tp->nak_recent ||
	    (!tp->ack_deferred && e->nack_deferred >= SRD_ACK_DEFER_MAX)) {
		send_ack(tp, ACK_SYNDROME, psn);
		return;
	}
	if (!tp->ack_deferred) {
		e->ack_deferred[e->nack_deferred++] = tp;
		tp->ack_deferred = true;
	}
	tp->ack_psn = psn & ROCE_PSN_MASK;
}

static void send_atomic_ack(struct srd_qp_transport *tp, uint64_t orig,
			    uint32_t psn)
{
	struct srd_pkt pkt;

	responder_ack_flush(tp);
	srd_pkt_init(&pkt, tp_transport(tp) | ROCE_RC_ATOMIC_ACKNOWLEDGE);
	pkt.psn = psn & ROCE_PSN_MASK;
	pkt.aeth.syndrome = ACK_SYNDROME;
	pkt.aeth.msn = tp->msn & ROCE_AETH_MSN_MASK;
	pkt.atm_orig = orig;
	tp_fill_path(tp, &pkt);
	tp->cnt.tx_pkts++;
	wire_send(tp, &pkt);
}

/* ATOMIC WRITE and FLUSH are acknowledged by a RDMA READ RESPONSE ONLY
 * without data (IBTA 1.5 A19; rxe's send_read_response_ack). */
static void send_resp0(struct srd_qp_transport *tp, uint32_t psn)
{
	struct srd_pkt pkt;

	responder_ack_flush(tp);
	srd_pkt_init(&pkt, tp_transport(tp) | ROCE_RC_READ_RESPONSE_ONLY);
	pkt.psn = psn & ROCE_PSN_MASK;
	pkt.aeth.syndrome = ACK_SYNDROME;
	pkt.aeth.msn = tp->msn & ROCE_AETH_MSN_MASK;
	tp_fill_path(tp, &pkt);
	tp->cnt.tx_pkts++;
	wire_send(tp, &pkt);
}

/* Forget the message in progress; a receive WQE already taken is kept
 * for the next message (UC drops, IBTA class D1). */
static void abort_msg(struct srd_qp_transport *tp)
{
	tp->seq = SRD_SEQ_NONE;
	tp->rwqe.done = 0;
	tp->wr_resid = 0;
}

static bool is_start(uint32_t m)
{
	return m & OPF_FIRST;
}

/* --- checks ------------------------------------------------------------- */

/* A train whose first packets were seen already: keep the new ones. */
static void trim_train(struct resp_ctx *c, uint32_t skip)
{
	struct srd_pkt *pkt = c->pkt;
	uint64_t bytes = (uint64_t)skip * c->tp->mtu;

	c->tp->cnt.dup_requests += skip;
	pkt->npkts -= skip;
	pkt->psn = (pkt->psn + skip) & ROCE_PSN_MASK;
	pkt->paylen -= bytes;
	dma_advance(&pkt->pay, bytes);
	if (pkt->mask & OPF_FIRST) {
		pkt->opcode = srd_op_transport(pkt->opcode) |
			      ((pkt->mask & OPF_SEND) ? ROCE_RC_SEND_MIDDLE
						      : ROCE_RC_WRITE_MIDDLE);
		pkt->mask = srd_op_mask(pkt->opcode);
		c->m = pkt->mask;
	}
}

static enum resp_state check_psn(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	uint32_t psn = c->pkt->psn;
	int32_t diff;

	if (c->ud)
		return RS_CHECK_OP_VALID;
	if (c->uc) {
		/* UC resynchronizes on the next FIRST or ONLY. */
		if (tp->drop_msg || psn != tp->epsn) {
			abort_msg(tp);
			if (is_start(c->m)) {
				tp->drop_msg = false;
				tp_set_epsn(tp, psn);
				return RS_CHECK_OP_SEQ;
			}
			tp_set_epsn(tp, psn + c->pkt->npkts);
			return RS_DROP_MSG;
		}
		return RS_CHECK_OP_SEQ;
	}
	diff = roce_psn_cmp(psn, tp->epsn);
	if (diff < 0 && c->pkt->npkts > 1 &&
	    roce_psn_cmp(psn + c->pkt->npkts - 1, tp->epsn) >= 0) {
		trim_train(c, (tp->epsn - psn) & ROCE_PSN_MASK);
		diff = 0;
	}
	if (diff > 0) {
		uint32_t top = (psn + c->pkt->npkts - 1) & ROCE_PSN_MASK;

		/* One NAK per gap: the requester goes back anyway, and what
		 * it had in flight arrives in order behind the gap.  A PSN
		 * below one seen since then means it went back and the
		 * expected packet was lost again: one more NAK, not a wait
		 * for its timer. */
		if (tp->nak_sent && roce_psn_cmp(psn, tp->nak_top) >= 0) {
			tp->nak_top = top;
			return RS_DONE;
		}
		tp->nak_sent = true;
		tp->nak_top = top;
		return RS_ERR_PSN_SEQ;
	}
	if (diff < 0)
		return RS_DUPLICATE;
	tp->nak_sent = false;
	return RS_CHECK_OP_SEQ;
}

static enum resp_state check_op_seq(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	uint32_t m = c->m;
	bool ok;

	switch (tp->seq) {
	case SRD_SEQ_SEND:
		ok = (m & OPF_SEND) && !(m & OPF_FIRST);
		break;
	case SRD_SEQ_WRITE:
		ok = (m & OPF_WRITE) && !(m & OPF_FIRST);
		break;
	default:
		ok = m & OPF_FIRST;
		break;
	}
	if (ok)
		return RS_CHECK_OP_VALID;
	if (c->rc)
		return RS_ERR_INV_REQ;
	/* UC: the message in progress is lost; this may start a new one. */
	abort_msg(tp);
	if (is_start(m))
		return RS_CHECK_OP_VALID;
	return RS_DROP_MSG;
}

#define FLUSH_ACCESS (IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT)

/* The rights a FLUSH needs, QP and MR alike: one per placement type. */
static int flush_access(uint32_t feth)
{
	return ((feth & ROCE_FLUSH_GLOBAL) ? IBV_ACCESS_FLUSH_GLOBAL : 0) |
	       ((feth & ROCE_FLUSH_PERSISTENT) ? IBV_ACCESS_FLUSH_PERSISTENT
					       : 0);
}

static enum resp_state check_op_valid(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_qp *qp = tp->qp;
	int access = qp->attr.qp_access_flags;
	uint32_t m = c->m;

	/* An operation the QP is not enabled for is an Invalid Request
	 * (class C), as rxe and the adapters answer it; the MR's rights
	 * are checked with the key (Remote Access Error). */
	if ((m & OPF_WRITE) && (m & OPF_FIRST) &&
	    !(access & IBV_ACCESS_REMOTE_WRITE))
		return c->rc ? RS_ERR_INV_REQ : RS_DROP_MSG;
	if ((m & OPF_READ) && !(access & IBV_ACCESS_REMOTE_READ))
		return RS_ERR_INV_REQ;
	if ((m & OPF_ATOMIC) && !(access & IBV_ACCESS_REMOTE_ATOMIC))
		return RS_ERR_INV_REQ;
	if ((m & OPF_ATOMIC_WRITE) && !(access & IBV_ACCESS_REMOTE_WRITE))
		return RS_ERR_INV_REQ;
	if ((m & OPF_FLUSH) &&
	    (flush_access(c->pkt->feth) & ~access & FLUSH_ACCESS))
		return RS_ERR_ACCESS;
	if ((m & (OPF_READ | OPF_ATOMIC | OPF_ATOMIC_WRITE | OPF_FLUSH)) &&
	    !qp->attr.max_dest_rd_atomic)
		return RS_ERR_INV_REQ;
	if (c->ud && c->pkt->deth.qkey != qp->attr.qkey) {
		tp->cnt.qkey_drops++;
		if (qp->dev && qp->dev->port.qkey_viol < 0xffff)
			qp->dev->port.qkey_viol++;
		return RS_DONE;
	}
	return RS_CHECK_RESOURCE;
}

static enum resp_state check_resource(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	uint32_t m = c->m;
	bool need = ((m & OPF_SEND) && (m & OPF_FIRST)) ||
		    ((m & OPF_WRITE) && (m & OPF_IMM));
	int err;

	if (!need || tp->rwqe.valid)
		return RS_CHECK_LENGTH;
	err = rq_take(tp);
	if (err == -EAGAIN) {
		if (c->rc)
			return RS_ERR_RNR;
		tp->cnt.no_rwqe_drops++;
		return c->uc ? RS_DROP_MSG : RS_DONE;
	}
	if (err)
		return RS_DONE; /* hostile ring: the queue is in error */
	if (tp->rwqe.malformed)
		return RS_ERR_MALFORMED;
	return RS_CHECK_LENGTH;
}

static enum resp_state check_length(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	uint32_t m = c->m, len = pkt->paylen;
	bool bad = false;

	if (c->ud) {
		if (len > tp->mtu) {
			tp->cnt.rx_drops++;
			return RS_DONE;
		}
	} else if (m & (OPF_SEND | OPF_WRITE)) {
		if (!(m & OPF_LAST)) /* FIRST, MIDDLE: full */
			bad = len != (uint64_t)tp->mtu * pkt->npkts;
		else if (pkt->npkts != 1)
			bad = true;
		else if (!(m & OPF_FIRST))
			bad = !len || len > tp->mtu; /* LAST */
		else
			bad = len > tp->mtu; /* ONLY */
	}
	if (!bad && (m & OPF_WRITE)) {
		if (m & OPF_FIRST) {
			if (pkt->reth.len > SRD_MAX_MSG_SZ)
				bad = true;
			else if (m & OPF_LAST)
				bad = pkt->reth.len != len;
			else
				bad = pkt->reth.len <= len;
		} else {
			bad = len > tp->wr_resid ||
			      ((m & OPF_LAST) && len != tp->wr_resid);
		}
	}
	if (!bad && (m & OPF_READ))
		bad = pkt->reth.len > SRD_MAX_MSG_SZ;
	if (m & OPF_ATOMIC_WRITE)
		bad = len != ROCE_ATOMIC_WRITE_BYTES ||
		      pkt->reth.len != ROCE_ATOMIC_WRITE_BYTES;
	if (m & OPF_FLUSH) {
		uint32_t plt = pkt->feth & ROCE_FETH_PLT_MASK;
		uint32_t sel = (pkt->feth & ROCE_FETH_SEL_MASK) >>
			       ROCE_FETH_SEL_SHIFT;

		bad = !plt ||
		      (plt & ~(ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT)) ||
		      sel > ROCE_FLUSH_MR || pkt->reth.len > SRD_MAX_MSG_SZ;
	}
	if (bad)
		return c->rc ? RS_ERR_INV_REQ : RS_DROP_MSG;

	if (m & OPF_SEND) {
		uint64_t need = tp->rwqe.done + len;

		if (c->ud)
			need += ROCE_GRH_BYTES;
		if (need > tp->rwqe.total)
			return RS_ERR_LENGTH;
	}
	return RS_CHECK_RKEY;
}

static enum resp_state check_rkey(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_qp *qp = tp->qp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_daemon *d = tp->eng->d;
	uint32_t m = c->m;
	uint64_t va;

	if (m & OPF_ATOMIC) {
		if (pkt->atm.va & 7)
			return RS_ERR_INV_REQ;
		va = pkt->atm.va;
		if (!rkey_lookup(d, pkt->atm.rkey, qp->pd, qp->qpn, &va, 8,
				 IBV_ACCESS_REMOTE_ATOMIC))
			return RS_ERR_ACCESS;
		return RS_EXECUTE;
	}
	if (m & OPF_ATOMIC_WRITE) {
		/* Naturally aligned, or invalid (IBTA 1.5 oA19-28). */
		if (pkt->reth.va & 7)
			return RS_ERR_INV_REQ;
		va = pkt->reth.va;
		if (!rkey_lookup(d, pkt->reth.rkey, qp->pd, qp->qpn, &va,
				 ROCE_ATOMIC_WRITE_BYTES,
				 IBV_ACCESS_REMOTE_WRITE))
			return RS_ERR_ACCESS;
		return RS_EXECUTE;
	}
	if (m & OPF_FLUSH) {
		bool whole = ((pkt->feth & ROCE_FETH_SEL_MASK) >>
			      ROCE_FETH_SEL_SHIFT) == ROCE_FLUSH_MR;

		/* The key always; the range only when it is one (a whole
		 * MR flush ignores va and length, as rxe). */
		va = pkt->reth.va;
		if (!rkey_lookup(d, pkt->reth.rkey, qp->pd, qp->qpn, &va,
				 whole ? 0 : pkt->reth.len,
				 flush_access(pkt->feth)))
			return RS_ERR_ACCESS;
		return RS_EXECUTE;
	}
	if ((m & OPF_READ) || ((m & OPF_WRITE) && (m & OPF_FIRST))) {
		int access = (m & OPF_READ) ? IBV_ACCESS_REMOTE_READ
					    : IBV_ACCESS_REMOTE_WRITE;

		/* A zero-length RDMA needs no key (IBTA 9.4.4, 9.4.5). */
		va = pkt->reth.va;
		if (pkt->reth.len &&
		    !rkey_lookup(d, pkt->reth.rkey, qp->pd, qp->qpn, &va,
				 pkt->reth.len, access))
			return c->rc ? RS_ERR_ACCESS : RS_DROP_MSG;
		if (m & OPF_WRITE) {
			tp->wr_va = pkt->reth.va;
			tp->wr_rkey = pkt->reth.rkey;
			tp->wr_resid = pkt->reth.len;
			tp->wr_len = pkt->reth.len;
		}
	}
	return RS_EXECUTE;
}

/* --- execution ---------------------------------------------------------- */

/* The 40 bytes in front of a UD receive: the IPv6 header, or for RoCEv2
 * over IPv4 20 zero bytes and the IPv4 header, as the packet had them. */
static void build_grh(const struct srd_pkt *pkt, uint8_t out[ROCE_GRH_BYTES])
{
	uint32_t udp_len = sizeof(struct roce_udp) + srd_pkt_hdr_len(pkt) +
			   pkt->paylen + srd_pkt_pad(pkt->paylen) +
			   ROCE_ICRC_BYTES;

	memset(out, 0, ROCE_GRH_BYTES);
	if (srd_gid_is_v4mapped(pkt->sgid.raw)) {
		struct srd_ipv4_fields ip = {
			.tos = pkt->tclass,
			.ttl = pkt->hop_limit,
			.protocol = SRD_IPPROTO_UDP,
			.payload_len = (uint16_t)udp_len,
			.frag_off = SRD_IPV4_DF,
			.saddr = &pkt->sgid.raw[12],
			.daddr = &pkt->dgid.raw[12],
		};

		srd_ipv4_build(out + 20, &ip);
	} else {
		struct roce_grh g = {
			.ver_tclass_flow = htobe32(
				6u << 28 | (uint32_t)pkt->tclass << 20 |
				(pkt->flow_label & SRD_IPV6_FLOW_LABEL_MASK)),
			.paylen = htobe16(udp_len),
			.next_hdr = 17,
			.hop_limit = pkt->hop_limit,
		};

		memcpy(g.sgid, pkt->sgid.raw, 16);
		memcpy(g.dgid, pkt->dgid.raw, 16);
		memcpy(out, &g, sizeof(g));
	}
}

/* --- placement by the memory's owner (place.c) ---------------------------- */

/* Does this packet complete a message (a receive CQE follows it)? */
static bool completes(uint32_t m)
{
	return (m & OPF_LAST) && ((m & OPF_SEND) || (m & OPF_IMM));
}

/* What may be handed over as a placement job while others are out: a
 * packet of a reliable WRITE or SEND, in order; anything else must see
 * the jobs before it done. */
static bool may_place(const struct resp_ctx *c)
{
	const struct srd_qp_transport *tp = c->tp;

	return srd_qpt_reliable(tp->qp->type) &&
	       (c->m & (OPF_WRITE | OPF_SEND)) && !tp->place_resend &&
	       c->pkt->psn == tp->epsn;
}

/* Dropped behind the jobs out: asked for again when they are done. */
static enum resp_state wait_placed(struct resp_ctx *c)
{
	c->tp->place_resend = true;
	c->tp->cnt.place_waits += c->pkt->npkts;
	return RS_DONE;
}

enum placement {
	PL_COPY,   /* not handed over: copy it here */
	PL_PLACED, /* handed over (or placed already): go on */
	PL_WAIT,   /* dropped, to come again once the jobs are done */
	PL_DROP,   /* UC: dropped, as lost on the wire */
	PL_LOST,   /* the source is gone: as if lost on the wire */
};

/*
 * Hand len bytes from src to the owner of dst (place.c).  Memory on
 * demand is always handed over: only its owner's thread writes it.  last:
 * the bytes complete a message; its receive CQE then waits for the job
 * (tp->place_defer), as a reliable QP's ACK does (place_hold_ack): none
 * precedes the data.  What cannot be handed over behind jobs that were,
 * or finds no room, is dropped: a reliable QP asks for it again once the
 * jobs are done, UC loses it as on the wire.  peer: other in-place memory
 * may be handed over too (a copy worth the owner's wake-up).
 */
static enum placement place_payload(struct resp_ctx *c, struct srd_dma *dst,
				    struct srd_dma *src, uint32_t len,
				    bool peer, bool last)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	bool send = c->m & OPF_SEND;
	bool reliable = srd_qpt_reliable(tp->qp->type);
	enum srd_place_kind kind =
		send ? (last ? SRD_PLACE_K_SEND_LAST : SRD_PLACE_K_SEND)
		     : (last ? SRD_PLACE_K_LAST : SRD_PLACE_K_WRITE);
	int r;

	/* UD keeps its way (maps checked, then the copy): a local UD
	 * sender is never dropped for want of room, and its CQEs would
	 * have to wait in order behind jobs of any number. */
	if (c->ud || (reliable && pkt->psn != tp->epsn))
		return PL_COPY;
	r = place_post(tp, dst, src, len, kind, pkt->psn + pkt->npkts - 1,
		       reliable && peer);
	if (r > 0) {
		tp->place_defer = last;
		return PL_PLACED;
	}
	if (r == -EFAULT)
		return PL_LOST;
	if (r == -ENOBUFS || tp->place_pending)
		return reliable ? PL_WAIT : PL_DROP;
	return PL_COPY;
}

/* UC: a job failed (its memory could not be written, as a copy here
 * could not): the QP stops, as for a local protection error.  The CQE
 * that waited on the job says so; those behind it complete flushed. */
static void unreliable_retired(struct srd_qp_transport *tp,
			       const struct srd_place_done *d)
{
	enum ibv_qp_state qs = tp_state(tp);
	struct srd_cqe cqe;

	if (d->err && !tp->place_failed && qs != IBV_QPS_ERR) {
		tp->place_failed = true;
		if (d->cqe) {
			cqe = *d->cqe;
			cqe.status = IBV_WC_LOC_PROT_ERR;
			tp_cq_push(tp, d->cq, &cqe);
		} else if (tp->rwqe.valid) {
			struct srd_recv_cqe_info info = {
				.status = IBV_WC_LOC_PROT_ERR,
				.opcode = IBV_WC_RECV,
				.src_qp = tp->qp->attr.dest_qp_num,
			};

			tp_recv_cqe(tp, &info);
		} else {
			/* Its message's CQE waits on a later job. */
			tp->place_fail_cqe = true;
		}
		tp_error(tp, -1);
		return;
	}
	if (!d->cqe)
		return;
	cqe = *d->cqe;
	if (tp->place_fail_cqe) {
		tp->place_fail_cqe = false;
		cqe.status = IBV_WC_LOC_PROT_ERR;
	} else if (d->err || tp->place_failed || qs == IBV_QPS_ERR) {
		cqe.status = IBV_WC_WR_FLUSH_ERR;
	}
	tp_cq_push(tp, d->cq, &cqe);
}

void responder_place_retired(struct srd_qp_transport *tp,
			     const struct srd_place_done *d)
{
	enum ibv_qp_state qs = tp_state(tp);
	bool send = d->kind == SRD_PLACE_K_SEND ||
		    d->kind == SRD_PLACE_K_SEND_LAST;
	struct srd_cqe cqe;

	if (!srd_qpt_reliable(tp->qp->type)) {
		unreliable_retired(tp, d);
		return;
	}
	if (d->cqe)
		cqe = *d->cqe;
	if (qs == IBV_QPS_ERR || qs == IBV_QPS_RESET) {
		/* Its receive WQE was taken: it completes, flushed. */
		if (d->cqe && qs == IBV_QPS_ERR) {
			cqe.status = IBV_WC_WR_FLUSH_ERR;
			tp_cq_push(tp, d->cq, &cqe);
		}
		return;
	}
	if (d->err) {
		struct srd_recv_cqe_info info = {
			.status = send ? IBV_WC_LOC_PROT_ERR
				       : IBV_WC_REM_ACCESS_ERR,
			.opcode = IBV_WC_RECV,
			.src_qp = tp->qp->attr.dest_qp_num,
		};
		bool access = d->err == -EACCES && !send;

		/* The data did not land: say so for its packet, and stop
		 * (IBTA class C), as the copy here would have. */
		if (d->cqe) {
			cqe.status = info.status;
			tp_cq_push(tp, d->cq, &cqe);
		} else if (d->err == -EACCES && tp->rwqe.valid) {
			tp_recv_cqe(tp, &info);
		}
		send_ack(tp,
			 ROCE_AETH_NAK | (access ? ROCE_NAK_REM_ACCESS
						 : ROCE_NAK_REM_OP),
			 d->psn);
		tp_error(tp, access		 ? IBV_EVENT_QP_ACCESS_ERR
			     : d->err == -EACCES ? -1
						 : IBV_EVENT_QP_FATAL);
		return;
	}
	if (d->cqe)
		tp_cq_push(tp, d->cq, &cqe);
	if (d->ack)
		send_ack_in_order(tp, d->ack_psn);
	if (!tp->place_pending && tp->place_resend) {
		tp->place_resend = false;
		tp->cnt.seq_naks_sent++;
		tp->nak_recent = true;
		tp->nak_psn = tp->epsn;
		send_ack(tp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, tp->epsn);
	}
}

/*
 * len bytes from src onto dst, both advanced past them: handed to the
 * memory's owner, or copied here.  RS_COMPLETE once they landed (or
 * will, placed); otherwise where to go instead (denied: the state for
 * memory the copy may not write).
 */
static enum resp_state deliver(struct resp_ctx *c, struct srd_dma *dst,
			       struct srd_dma *src, uint32_t len, bool peer,
			       bool last, enum resp_state denied)
{
	struct srd_qp_transport *tp = c->tp;
	int err;

	switch (place_payload(c, dst, src, len, peer, last)) {
	case PL_PLACED:
		dma_advance(dst, len);
		dma_advance(src, len);
		return RS_COMPLETE;
	case PL_WAIT:
		return wait_placed(c);
	case PL_DROP:
		tp->cnt.place_waits += c->pkt->npkts;
		return RS_DROP_MSG;
	case PL_LOST:
		tp->cnt.rx_drops++;
		return RS_DONE;
	case PL_COPY:
		break;
	}
	err = dma_copy(tp->eng->d, dst, src, len);
	if (err == -EFAULT) {
		/* The source went away: as if lost on the wire. */
		tp->cnt.rx_drops++;
		return RS_DONE;
	}
	return err ? denied : RS_COMPLETE;
}

static enum resp_state exec_send(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_qp *qp = tp->qp;
	struct srd_rwqe *rw = &tp->rwqe;
	uint32_t len = c->pkt->paylen;
	bool last = completes(c->m);
	enum resp_state rs;
	struct srd_dma dst;

	if (!rw->valid)
		return c->rc ? RS_ERR_INV_REQ : RS_DROP_MSG;
	dma_init_sgl(&dst, rw->sge, rw->num_sge, qp->pd,
		     qp->srq ? qp->srq->pd : NULL, IBV_ACCESS_LOCAL_WRITE);
	dma_seek(&dst, rw->done);
	if (c->ud) {
		uint8_t grh[ROCE_GRH_BYTES];
		struct srd_dma src;

		build_grh(c->pkt, grh);
		dma_init_buf(&src, grh, sizeof(grh));
		rs = deliver(c, &dst, &src, sizeof(grh), false, last && !len,
			     RS_ERR_LOC_PROT);
		if (rs != RS_COMPLETE)
			return rs;
	}
	rs = len ? deliver(c, &dst, &c->pkt->pay, len,
			   tp->place_pending || len >= SRD_PLACE_MIN_BYTES,
			   last, RS_ERR_LOC_PROT)
		 : RS_COMPLETE;
	if (rs == RS_COMPLETE)
		rw->done += len + (c->ud ? ROCE_GRH_BYTES : 0);
	return rs;
}

static enum resp_state exec_write(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	uint32_t len = c->pkt->paylen;
	enum resp_state rs;
	struct srd_dma dst;

	if (!len)
		return RS_COMPLETE;
	dma_init_range(&dst, tp->wr_rkey, tp->wr_va, len, tp->qp->pd,
		       tp->qp->qpn, IBV_ACCESS_REMOTE_WRITE);
	rs = deliver(c, &dst, &c->pkt->pay, len,
		     tp->place_pending || tp->wr_len >= SRD_PLACE_MIN_BYTES,
		     completes(c->m), c->rc ? RS_ERR_ACCESS : RS_DROP_MSG);
	if (rs == RS_COMPLETE) {
		tp->wr_va += len;
		tp->wr_resid -= len;
	}
	return rs;
}

static struct srd_resp_res *next_res(struct srd_qp_transport *tp)
{
	struct srd_resp_res *res = &tp->res[tp->res_next];

	tp->res_next = (tp->res_next + 1) % tp->nres;
	return res;
}

static enum resp_state exec_read(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_resp_res *res = next_res(tp);
	uint32_t npkts = tp_npkts(pkt->reth.len, tp->mtu);

	memset(res, 0, sizeof(*res));
	res->type = SRD_RES_READ;
	res->first_psn = pkt->psn;
	res->last_psn = (pkt->psn + npkts - 1) & ROCE_PSN_MASK;
	res->rkey = pkt->reth.rkey;
	res->va = pkt->reth.va;
	res->length = pkt->reth.len;
	res->cur_psn = pkt->psn;
	res->cur_va = pkt->reth.va;
	res->resid = pkt->reth.len;
	res->cur_first = true;
	tp_set_epsn(tp, pkt->psn + npkts);
	tp->msn++;
	tp->rd_active = res;
	responder_run(tp, SRD_READ_BUDGET);
	return RS_DONE;
}

/* The atomic of pkt at va (in mr's iova space). */
static uint64_t atomic_op(struct srd_mr *mr, uint64_t va,
			  const struct srd_pkt *pkt, bool *ok)
{
	bool cas = roce_op_code(pkt->opcode) == ROCE_RC_COMPARE_SWAP;
	uint8_t *p = mr_ptr(mr, va);
	uint64_t orig, v;

	*ok = true;
	if (p && !((uintptr_t)p & 7)) {
		uint64_t *w = (uint64_t *)p;

		if (!cas)
			return __atomic_fetch_add(w, pkt->atm.swap_add,
						  __ATOMIC_SEQ_CST);
		orig = pkt->atm.compare;
		/* On a mismatch orig is loaded with the current value. */
		__atomic_compare_exchange_n(w, &orig, pkt->atm.swap_add, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return orig;
	}
	/* Memory the daemon reaches through the client's address space:
	 * atomic with respect to the device only. */
	if (mr_read(mr, va, &orig, sizeof(orig))) {
		*ok = false;
		return 0;
	}
	v = cas ? (orig == pkt->atm.compare ? pkt->atm.swap_add : orig)
		: orig + pkt->atm.swap_add;
	if (v != orig && mr_write(mr, va, &v, sizeof(v)))
		*ok = false;
	return orig;
}

static enum resp_state exec_atomic(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	uint64_t va = pkt->atm.va, orig;
	struct srd_mr *mr = rkey_lookup(tp->eng->d, pkt->atm.rkey, tp->qp->pd,
					tp->qp->qpn, &va, 8,
					IBV_ACCESS_REMOTE_ATOMIC);
	struct srd_resp_res *res;
	bool ok;

	if (!mr)
		return RS_ERR_ACCESS;
	orig = atomic_op(mr, va, pkt, &ok);
	if (!ok)
		return RS_ERR_ACCESS;
	res = next_res(tp);
	memset(res, 0, sizeof(*res));
	res->type = SRD_RES_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;
	tp_set_epsn(tp, pkt->psn + 1);
	tp->msn++;
	send_atomic_ack(tp, orig, pkt->psn);
	return RS_DONE;
}

/*
 * ATOMIC WRITE: the 8 bytes land with one aligned store, so no reader,
 * device atomic or CPU, sees half of them; release ordering puts every
 * earlier write of the QP before it (oA19-27).  Memory reached through
 * the client's address space is written in one call: atomic with
 * respect to the device only, as the atomics there.
 */
static enum resp_state exec_atomic_write(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	uint64_t va = pkt->reth.va, v;
	struct srd_mr *mr = rkey_lookup(tp->eng->d, pkt->reth.rkey, tp->qp->pd,
					tp->qp->qpn, &va,
					ROCE_ATOMIC_WRITE_BYTES,
					IBV_ACCESS_REMOTE_WRITE);
	struct srd_dma dst;
	uint8_t *p;

	if (!mr)
		return RS_ERR_ACCESS;
	dma_init_buf(&dst, &v, sizeof(v));
	if (dma_copy(tp->eng->d, &dst, &pkt->pay, sizeof(v))) {
		tp->cnt.rx_drops++; /* the source went away: as if lost */
		return RS_DONE;
	}
	p = mr_ptr(mr, va);
	if (p && !((uintptr_t)p & 7))
		__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELEASE);
	else if (mr_write(mr, va, &v, sizeof(v)))
		return RS_ERR_ACCESS;
	return RS_COMPLETE;
}

/*
 * FLUSH: every write the responder executed before it is in memory the
 * client maps, so a full fence makes it globally visible.  No MR grants
 * IBV_ACCESS_FLUSH_PERSISTENT (mr.c: no persistent memory here), so a
 * persistent flush never gets this far.
 */
static enum resp_state exec_flush(struct resp_ctx *c)
{
	static uint64_t flushes;

	(void)c;
	/* A sequentially consistent read-modify-write is a full barrier,
	 * and one ThreadSanitizer understands (a bare fence it does not). */
	__atomic_fetch_add(&flushes, 1, __ATOMIC_SEQ_CST);
	return RS_COMPLETE;
}

/* ATOMIC WRITE and FLUSH: run, keep a resource for a duplicate, answer. */
static enum resp_state exec_resp0(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_resp_res *res;
	enum resp_state st = (c->m & OPF_FLUSH) ? exec_flush(c)
						: exec_atomic_write(c);

	if (st != RS_COMPLETE)
		return st;
	res = next_res(tp);
	memset(res, 0, sizeof(*res));
	res->type = SRD_RES_RESP0;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	tp_set_epsn(tp, pkt->psn + 1);
	tp->msn++;
	send_resp0(tp, pkt->psn);
	return RS_DONE;
}

static enum resp_state execute(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	uint32_t m = c->m;
	enum resp_state next;

	if (m & OPF_READ)
		return exec_read(c);
	if (m & OPF_ATOMIC)
		return exec_atomic(c);
	if (m & (OPF_ATOMIC_WRITE | OPF_FLUSH))
		return exec_resp0(c);
	next = (m & OPF_SEND) ? exec_send(c) : exec_write(c);
	if (next != RS_COMPLETE)
		return next;
	tp->seq = (m & OPF_LAST)   ? SRD_SEQ_NONE
		  : (m & OPF_SEND) ? SRD_SEQ_SEND
				   : SRD_SEQ_WRITE;
	if (!c->ud)
		tp_set_epsn(tp, c->pkt->psn + c->pkt->npkts);
	if (!(m & OPF_LAST))
		return RS_ACKNOWLEDGE;
	tp->msn++;
	return (m & OPF_RWQE) ? RS_COMPLETE : RS_ACKNOWLEDGE;
}

static enum resp_state complete(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_recv_cqe_info info = {
		.status = IBV_WC_SUCCESS,
		.solicited = pkt->se,
		.sl = pkt->sl,
	};

	if (c->m & OPF_SEND) {
		info.opcode = IBV_WC_RECV;
		info.byte_len = tp->rwqe.done;
	} else {
		info.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		info.byte_len = tp->wr_len;
	}
	if (c->m & OPF_IMM) {
		info.imm = pkt->imm;
		info.wc_flags |= IBV_WC_WITH_IMM;
	}
	if (c->m & OPF_IETH) {
		/* IBTA class J: the message landed, the invalidation did
		 * not: the receive completes in error and the QP stops. */
		if (key_invalidate(tp->eng->d, tp->qp, pkt->ieth_rkey, true))
			return RS_ERR_INV_RKEY;
		info.imm =
			pkt->ieth_rkey; /* host order, as wc.invalidated_rkey */
		info.wc_flags |= IBV_WC_WITH_INV;
	}
	if (c->ud) {
		info.wc_flags |= IBV_WC_GRH;
		info.src_qp = pkt->deth.sqp;
		info.sl = roce_ud_wc_sl(pkt->sgid.raw);
	} else {
		info.src_qp = tp->qp->attr.dest_qp_num;
	}
	tp_recv_cqe(tp, &info);
	return RS_ACKNOWLEDGE;
}

static enum resp_state acknowledge(struct resp_ctx *c)
{
	uint32_t psn = c->pkt->psn + c->pkt->npkts - 1;

	/* An ACK says the data landed: behind a job it waits for it. */
	if (c->rc && c->pkt->ack_req && !place_hold_ack(c->tp, psn))
		send_ack_in_order(c->tp, psn);
	return RS_DONE;
}

static struct srd_resp_res *find_res(struct srd_qp_transport *tp, uint32_t psn,
				     uint8_t type)
{
	for (uint32_t i = 0; i < tp->nres; i++) {
		struct srd_resp_res *r = &tp->res[i];

		if (r->type == type && roce_psn_cmp(psn, r->first_psn) >= 0 &&
		    roce_psn_cmp(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

static enum resp_state duplicate(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_resp_res *res;

	tp->cnt.dup_requests += pkt->npkts;
	if (c->m & (OPF_SEND | OPF_WRITE)) {
		/* Already done: say so again (C9-105). */
		send_ack(tp, ACK_SYNDROME, tp->epsn - 1);
		return RS_DONE;
	}
	if (c->m & OPF_ATOMIC) {
		res = find_res(tp, pkt->psn, SRD_RES_ATOMIC);
		if (res && res->first_psn == pkt->psn)
			send_atomic_ack(tp, res->orig, pkt->psn);
		return RS_DONE;
	}
	if (c->m & (OPF_ATOMIC_WRITE | OPF_FLUSH)) {
		/* Answered again, not executed again (oA19-14). */
		res = find_res(tp, pkt->psn, SRD_RES_RESP0);
		if (res)
			send_resp0(tp, pkt->psn);
		return RS_DONE;
	}
	res = find_res(tp, pkt->psn, SRD_RES_READ);
	if (!res || pkt->reth.rkey != res->rkey || pkt->reth.va < res->va ||
	    pkt->reth.len > res->length ||
	    pkt->reth.va + pkt->reth.len > res->va + res->length)
		return RS_DONE;
	/* Replay from the PSN asked for, over the range asked for. */
	res->cur_psn = pkt->psn;
	res->cur_va = pkt->reth.va;
	res->resid = pkt->reth.len;
	res->cur_first = true;
	tp->rd_active = res;
	responder_run(tp, SRD_READ_BUDGET);
	return RS_DONE;
}

/* --- errors ------------------------------------------------------------- */

static void complete_rwqe_error(struct resp_ctx *c, enum ibv_wc_status st)
{
	struct srd_recv_cqe_info info = {
		.status = st,
		.opcode = IBV_WC_RECV,
		.src_qp = c->ud ? c->pkt->deth.sqp
				: c->tp->qp->attr.dest_qp_num,
	};

	/* An error says nothing landed: it need not wait for a job. */
	c->tp->place_defer = false;
	if (c->tp->rwqe.valid)
		tp_recv_cqe(c->tp, &info);
}

static enum resp_state err_psn_seq(struct resp_ctx *c)
{
	c->tp->cnt.seq_naks_sent++;
	c->tp->nak_recent = true;
	c->tp->nak_psn = c->tp->epsn;
	send_ack(c->tp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ, c->tp->epsn);
	return RS_DONE;
}

static enum resp_state err_rnr(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	tp->cnt.rnr_naks_sent++;
	send_ack(tp,
		 ROCE_AETH_RNR_NAK |
			 (tp->qp->attr.min_rnr_timer & ROCE_AETH_VALUE_MASK),
		 c->pkt->psn);
	return RS_DONE;
}

/* RC class C/A errors: complete the receive in progress, NAK, go to ERR. */
static enum resp_state err_fatal(struct resp_ctx *c, enum ibv_wc_status st,
				 uint8_t nak, int event)
{
	complete_rwqe_error(c, st);
	if (c->rc)
		send_ack(c->tp, ROCE_AETH_NAK | nak, c->pkt->psn);
	tp_error(c->tp, event);
	return RS_DONE;
}

static enum resp_state drop_msg(struct resp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	tp->cnt.uc_drops++;
	abort_msg(tp);
	/* Drop everything up to the next FIRST or ONLY. */
	if (!(c->m & OPF_LAST))
		tp->drop_msg = true;
	return RS_DONE;
}

/*
 * An XRC target QP has no PD and no receive queue of its own: each
 * request names, in its XRCETH, an SRQ of the QP's domain, whose PD
 * checks the keys and whose WQEs and CQ take the message (IBTA 9.2.4,
 * 10.2.9).  A message keeps the SRQ it started on.  A request naming no
 * such SRQ is an invalid request (NAK, the QP goes to the error state)
 * when it is the one expected; anything else is dropped.  False: drop.
 */
static bool xrc_request(struct srd_qp_transport *tp, struct srd_pkt *pkt,
			enum resp_state *st)
{
	struct srd_qp *qp = tp->qp;
	struct srd_srq *srq;

	srq = xrc_srq_lookup(tp->eng->d, pkt->xrc_srqn, qp->xrcd);
	if (srq && tp->rwqe.valid && tp->rwqe.xsrq && tp->rwqe.xsrq != srq)
		srq = NULL;
	if (srq) {
		qp->srq = srq;
		qp->pd = srq->pd;
		return true;
	}
	tp->cnt.xrc_srqn_errs++;
	if (pkt->psn != tp->epsn) {
		tp->cnt.rx_drops += pkt->npkts;
		return false;
	}
	srd_log(SRD_LOG_DEBUG, "qp 0x%x: XRC request for SRQ 0x%x of no domain",
		qp->qpn, pkt->xrc_srqn);
	*st = RS_ERR_INV_REQ;
	return true;
}

void responder_rx(struct srd_qp_transport *tp, struct srd_pkt *pkt)
{
	struct srd_qp *qp = tp->qp;
	enum ibv_qp_state qs = tp_state(tp);
	struct resp_ctx c = {
		.tp = tp,
		.pkt = pkt,
		.m = pkt->mask,
		.rc = srd_qpt_reliable(qp->type),
		.uc = qp->type == IBV_QPT_UC,
		.ud = qp->type == IBV_QPT_UD,
	};
	enum resp_state st = RS_CHECK_PSN;

	if (qs != IBV_QPS_RTR && qs != IBV_QPS_RTS && qs != IBV_QPS_SQD &&
	    qs != IBV_QPS_SQE) {
		tp->cnt.rx_drops += pkt->npkts;
		return;
	}
	tp->cnt.rx_pkts += pkt->npkts;
	if (qs == IBV_QPS_RTR && !tp->comm_est) {
		tp->comm_est = true;
		qp_async_event(qp, IBV_EVENT_COMM_EST);
	}
	/* A READ reply goes out whole before anything that follows it. */
	if (tp->rd_active) {
		responder_run(tp, UINT_MAX);
		if (tp_state(tp) == IBV_QPS_ERR)
			return;
	}
	/* Behind placement jobs only more of them, in order (UC and UD
	 * drop what cannot be one: place_payload). */
	if (tp->place_pending && srd_qpt_reliable(qp->type) && !may_place(&c)) {
		wait_placed(&c);
		return;
	}
	if (qp->type == IBV_QPT_XRC_RECV && !xrc_request(tp, pkt, &st))
		return;
	while (st != RS_DONE) {
		enum resp_state from = st;

		switch (st) {
		case RS_CHECK_PSN:
			st = check_psn(&c);
			break;
		case RS_CHECK_OP_SEQ:
			st = check_op_seq(&c);
			break;
		case RS_CHECK_OP_VALID:
			st = check_op_valid(&c);
			break;
		case RS_CHECK_RESOURCE:
			st = check_resource(&c);
			break;
		case RS_CHECK_LENGTH:
			st = check_length(&c);
			break;
		case RS_CHECK_RKEY:
			st = check_rkey(&c);
			break;
		case RS_EXECUTE:
			st = execute(&c);
			break;
		case RS_COMPLETE:
			st = complete(&c);
			break;
		case RS_ACKNOWLEDGE:
			st = acknowledge(&c);
			break;
		case RS_DUPLICATE:
			st = duplicate(&c);
			break;
		case RS_ERR_PSN_SEQ:
			st = err_psn_seq(&c);
			break;
		case RS_ERR_RNR:
			st = err_rnr(&c);
			break;
		case RS_ERR_INV_REQ:
			st = err_fatal(&c, IBV_WC_REM_INV_REQ_ERR,
				       ROCE_NAK_INVALID_REQ,
				       IBV_EVENT_QP_REQ_ERR);
			break;
		case RS_ERR_ACCESS:
			st = err_fatal(&c, IBV_WC_REM_ACCESS_ERR,
				       ROCE_NAK_REM_ACCESS,
				       IBV_EVENT_QP_ACCESS_ERR);
			break;
		case RS_ERR_LENGTH:
			st = c.uc ? drop_msg(&c)
				  : err_fatal(&c, IBV_WC_LOC_LEN_ERR,
					      ROCE_NAK_INVALID_REQ, -1);
			break;
		case RS_ERR_LOC_PROT:
			st = err_fatal(&c, IBV_WC_LOC_PROT_ERR, ROCE_NAK_REM_OP,
				       -1);
			break;
		case RS_ERR_MALFORMED:
			st = err_fatal(&c, IBV_WC_LOC_QP_OP_ERR,
				       ROCE_NAK_REM_OP, -1);
			break;
		case RS_ERR_INV_RKEY:
			st = err_fatal(&c, IBV_WC_REM_INV_REQ_ERR,
				       ROCE_NAK_INVALID_REQ,
				       IBV_EVENT_QP_REQ_ERR);
			break;
		case RS_DROP_MSG:
			st = drop_msg(&c);
			break;
		default:
			st = RS_DONE;
			break;
		}
		/* What the responder refused, and where (softrdmad --verbose). */
		if (st >= RS_DUPLICATE && st < RS_DONE)
			srd_log(SRD_LOG_DEBUG,
				"qp 0x%x responder: %s -> %s, psn 0x%06x "
				"opcode 0x%02x",
				qp->qpn, responder_state_name(from),
				responder_state_name(st), pkt->psn,
				pkt->opcode);
	}
}

bool responder_run(struct srd_qp_transport *tp, unsigned int budget)
{
	struct srd_qp *qp = tp->qp;
	bool sent = false;

	if (tp->rd_active)
		responder_ack_flush(tp);
	while (tp->rd_active && budget) {
		struct srd_resp_res *res = tp->rd_active;
		enum ibv_qp_state qs = tp_state(tp);
		bool last = res->resid <= tp->mtu;
		uint32_t n = last ? res->resid : tp->mtu, count = 1;
		uint32_t pos = res->cur_first && last ? OPF_ONLY
			       : res->cur_first	      ? OPF_FIRST
			       : last		      ? OPF_LAST
						      : OPF_MIDDLE;
		struct srd_pkt pkt;

		if (qs != IBV_QPS_RTR && qs != IBV_QPS_RTS &&
		    qs != IBV_QPS_SQD) {
			tp->rd_active = NULL;
			break;
		}
		/* Full packets before the last go as one train locally. */
		if (!last && tp_route_local(tp)) {
			count = (res->resid - 1) / tp->mtu;
			if (count > budget)
				count = budget;
			n = count * tp->mtu;
		}
		budget -= count;
		if (n) {
			uint64_t va = res->cur_va;

			/* The MR (or window) went away while its READ was
			 * answered. */
			if (!rkey_lookup(tp->eng->d, res->rkey, qp->pd, qp->qpn,
					 &va, n, IBV_ACCESS_REMOTE_READ)) {
				tp->rd_active = NULL;
				send_ack(tp,
					 ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS,
					 res->cur_psn);
				tp_error(tp, IBV_EVENT_QP_ACCESS_ERR);
				return true;
			}
		}
		srd_pkt_init(&pkt, srd_op_read_response(tp_transport(tp), pos));
		pkt.psn = res->cur_psn;
		pkt.npkts = count;
		if (pkt.mask & OPF_AETH) {
			pkt.aeth.syndrome = ACK_SYNDROME;
			pkt.aeth.msn = tp->msn & ROCE_AETH_MSN_MASK;
		}
		dma_init_range(&pkt.pay, res->rkey, res->cur_va, n, qp->pd,
			       qp->qpn, IBV_ACCESS_REMOTE_READ);
		pkt.paylen = n;
		tp_fill_path(tp, &pkt);
		res->cur_psn = (res->cur_psn + count) & ROCE_PSN_MASK;
		res->cur_va += n;
		res->resid -= n;
		res->cur_first = false;
		if (last)
			tp->rd_active = NULL;
		tp->cnt.tx_pkts += count;
		wire_send(tp, &pkt);
		sent = true;
	}
	return sent;
}

void responder_reset_msg(struct srd_qp_transport *tp)
{
	tp->seq = SRD_SEQ_NONE;
	tp->nak_sent = false;
	tp->drop_msg = false;
	tp->wr_resid = 0;
	tp->rd_active = NULL;
}

void responder_reset(struct srd_qp_transport *tp)
{
	responder_reset_msg(tp);
	tp->rwqe.valid = false;
	tp->rwqe.done = 0;
	tp->res_next = 0;
	if (tp->res)
		memset(tp->res, 0, tp->nres * sizeof(*tp->res));
}

int responder_set_resources(struct srd_qp_transport *tp, uint32_t n)
{
	struct srd_resp_res *r;

	if (!n)
		n = 1;
	if (n == tp->nres)
		return 0;
	r = calloc(n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	free(tp->res);
	tp->res = r;
	tp->nres = n;
	tp->res_next = 0;
	tp->rd_active = NULL;
	return 0;
}
