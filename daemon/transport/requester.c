/* SPDX-License-Identifier: MIT */
/*
 * The requester: turns send WQEs into request packets.  SEND and WRITE
 * messages are cut into FIRST/MIDDLE/LAST (or ONLY) packets of the path
 * MTU with consecutive PSNs; a READ is one request that reserves a PSN for
 * every response packet; an atomic is one request.  It honours the fence
 * and the max_rd_atomic limit, keeps RC within its window (tp->cwnd), asks
 * for an ACK at the end of a message that nothing sendable follows
 * (send_follows), every SRD_PKTS_PER_ACK packets and four times per
 * window, goes back to an earlier PSN when the
 * completer says so (requester_rewind) and forward past what an ACK says
 * arrived (requester_skip).
 *
 * State: each WQE is POSTED -> ACTIVE -> SENT (or BAD after its local
 * checks failed); sq_next is the WQE that sends next.
 */
#include <string.h>

#include "daemon/transport/engine.h"

static const char *const swqe_state_name[] = {
	[SWQE_POSTED] = "POSTED", [SWQE_ACTIVE] = "ACTIVE",
	[SWQE_SENT] = "SENT",	  [SWQE_BAD] = "BAD",
	[SWQE_DONE] = "DONE",
};

const char *requester_state_name(uint8_t state)
{
	return state < sizeof(swqe_state_name) / sizeof(swqe_state_name[0])
		       ? swqe_state_name[state]
		       : "?";
}

static bool is_rd_atomic(const struct srd_swqe *s)
{
	return s->kind == SWQE_K_READ || s->kind == SWQE_K_ATOMIC;
}

static uint32_t max_rd_atomic(const struct srd_qp_transport *tp)
{
	/* 0 would forbid READs for good; real devices treat it as 1. */
	return tp->qp->attr.max_rd_atomic ? tp->qp->attr.max_rd_atomic : 1;
}

static bool req_can_start(struct srd_qp_transport *tp, const struct srd_swqe *s)
{
	if ((s->w.flags & SRD_WQE_FENCE) && tp->rd_atomic)
		return false;
	if (is_rd_atomic(s) && tp->rd_atomic >= max_rd_atomic(tp))
		return false;
	if (srd_qpt_reliable(tp->qp->type) && tp_inflight(tp) >= tp->cwnd)
		return false;
	return true;
}

/* Packets a pass may still send: the budget, and for RC the window. */
static uint32_t req_room(const struct srd_qp_transport *tp, uint32_t budget)
{
	uint32_t in = tp_inflight(tp);

	if (!srd_qpt_reliable(tp->qp->type) || in >= tp->cwnd)
		return budget;
	return tp->cwnd - in < budget ? tp->cwnd - in : budget;
}

static void req_start(struct srd_qp_transport *tp, struct srd_swqe *s)
{
	s->state = SWQE_ACTIVE;
	s->first_psn = tp->psn;
	if (s->kind == SWQE_K_ATOMIC || tp->qp->type == IBV_QPT_UD)
		s->npkts = 1;
	else
		s->npkts = tp_npkts(s->length, tp->mtu);
	s->pkts_sent = 0;
	s->rd_pkts = 0;
	s->rd_done = 0;
	if (is_rd_atomic(s))
		tp->rd_atomic++;
}

bool tp_route_local(struct srd_qp_transport *tp)
{
	if (!tp->route_valid) {
		tp->route_dev = wire_route(tp->eng->d,
					   &tp->qp->attr.ah_attr.grh.dgid,
					   tp->qp->attr.dest_qp_num);
		tp->route_valid = true;
	}
	return tp->route_dev != NULL;
}

void tp_fill_path(struct srd_qp_transport *tp, struct srd_pkt *pkt)
{
	struct srd_qp *qp = tp->qp;
	const struct ibv_ah_attr *av = &qp->attr.ah_attr;
	const struct srd_port *port = &qp->dev->port;

	pkt->qpn = qp->attr.dest_qp_num & ROCE_QPN_MASK;
	pkt->dgid = av->grh.dgid;
	if (av->grh.sgid_index < SRD_MAX_GIDS)
		pkt->sgid = port->gid[av->grh.sgid_index];
	pkt->flow_label = av->grh.flow_label & ROCE_FLOW_LABEL_MASK;
	pkt->hop_limit = av->grh.hop_limit;
	pkt->tclass = av->grh.traffic_class;
	pkt->sl = av->sl;
	pkt->src_qpn = qp->qpn;
	tp_route_local(tp);
	pkt->dst_dev = tp->route_dev;
}

static void ud_fill_path(struct srd_qp_transport *tp, const struct srd_swqe *s,
			 struct srd_pkt *pkt)
{
	struct srd_qp *qp = tp->qp;
	uint32_t qkey = s->w.remote_qkey;

	/* A Q_Key with the high bit set means "use the QP's own". */
	if (qkey & 0x80000000u)
		qkey = qp->attr.qkey;
	pkt->qpn = s->w.remote_qpn & ROCE_QPN_MASK;
	pkt->deth.qkey = qkey;
	pkt->deth.sqp = qp->qpn;
	pkt->dgid = s->dgid;
	if (s->sgid_index < SRD_MAX_GIDS)
		pkt->sgid = qp->dev->port.gid[s->sgid_index];
	pkt->flow_label = s->flow_label & ROCE_FLOW_LABEL_MASK;
	pkt->hop_limit = s->hop_limit;
	pkt->tclass = s->tclass;
	pkt->sl = s->sl;
	pkt->src_qpn = qp->qpn;
	pkt->dst_dev = wire_route(tp->eng->d, &s->dgid, pkt->qpn);
}

static uint32_t ack_every(const struct srd_qp_transport *tp)
{
	uint32_t n = tp->cwnd / 4;

	return n < 1 ? 1 : n < SRD_PKTS_PER_ACK ? n : SRD_PKTS_PER_ACK;
}

/*
 * A SEND or WRITE is posted behind WQE idx and may start at once: the last
 * packet of idx need not ask for an ACK, the burst's packets do every
 * ack_every() of them and its end does.  An ACK per message cost a busy
 * sender a third of its receive work.  READs, atomics and fenced WQEs
 * wait on responses, so the message before them asks.
 */
static bool send_follows(struct srd_qp_transport *tp, uint32_t idx)
{
	const struct srd_swqe *n;

	if (tp_state(tp) != IBV_QPS_RTS)
		return false; /* SQD reports the drain once all is ACKed */
	if (idx + 1 == tp->sq_fetched)
		/* Posted but not fetched: the next pass sends it. */
		return __atomic_load_n(&tp->qp->sq.ctl->prod,
				       __ATOMIC_ACQUIRE) != tp->sq_fetched;
	n = tp_swqe(tp, idx + 1);
	/* A local operation completes behind this one: it needs the ACK. */
	return n->state == SWQE_POSTED && !is_rd_atomic(n) &&
	       n->kind != SWQE_K_LOCAL && !(n->w.flags & SRD_WQE_FENCE);
}

/* Build the next packet of a SEND or WRITE, or on the in-memory wire a
 * train of up to max_train full packets; returns true if it is the last
 * of the message. */
static bool build_send_write(struct srd_qp_transport *tp, struct srd_swqe *s,
			     uint32_t idx, struct srd_pkt *pkt,
			     uint32_t max_train)
{
	struct srd_qp *qp = tp->qp;
	uint32_t k = s->pkts_sent, n = 1;
	uint64_t off = (uint64_t)k * tp->mtu;
	uint32_t paylen = 0;
	bool first = k == 0, last = k + 1 >= s->npkts;
	uint8_t opcode;

	/* Every packet but the last is full: copy a run of them at once. */
	if (!last && qp->type != IBV_QPT_UD && tp_route_local(tp)) {
		n = s->npkts - 1 - k;
		if (n > max_train)
			n = max_train;
		if (!n)
			n = 1;
	}
	if (s->length > off)
		paylen = s->length - off < tp->mtu ? s->length - off : tp->mtu;
	paylen *= n;
	if (qp->type == IBV_QPT_UD) {
		opcode = s->imm ? ROCE_UD_SEND_ONLY_IMM : ROCE_UD_SEND_ONLY;
	} else {
		uint32_t pos = first && last ? OPF_ONLY
			       : first	     ? OPF_FIRST
			       : last	     ? OPF_LAST
					     : OPF_MIDDLE;

		opcode = srd_op_request(tp_transport(tp),
					s->kind == SWQE_K_SEND ? OPF_SEND
							       : OPF_WRITE,
					pos, s->imm);
		/* The rkey to invalidate rides in the last packet. */
		if (s->inv && (pos == OPF_ONLY || pos == OPF_LAST))
			opcode = tp_transport(tp) |
				 (pos == OPF_ONLY ? ROCE_RC_SEND_ONLY_INV
						  : ROCE_RC_SEND_LAST_INV);
	}
	srd_pkt_init(pkt, opcode);
	if (pkt->mask & OPF_IETH)
		pkt->ieth_rkey = s->w.imm_data;
	pkt->psn = (s->first_psn + k) & ROCE_PSN_MASK;
	pkt->npkts = n;
	if (pkt->mask & OPF_RETH) {
		pkt->reth.va = s->w.remote_addr;
		pkt->reth.rkey = s->w.rkey;
		pkt->reth.len = s->length;
	}
	if (pkt->mask & OPF_IMM)
		pkt->imm = s->w.imm_data;
	if (last && (s->w.flags & SRD_WQE_SOLICITED))
		pkt->se = true;
	if (s->w.flags & SRD_WQE_INLINE) {
		dma_init_buf(&pkt->pay, s->body + off, paylen);
	} else {
		dma_init_sgl(&pkt->pay, swqe_sge(s), s->w.num_sge, qp->pd, NULL,
			     0);
		/* The SGEs are still checked piece by piece; the bytes come
		 * from the copy made at post time (checked in swqe_check). */
		if (s->w.flags & SRD_WQE_STAGED)
			pkt->pay.stage = qp->stage + s->w.stage.offset;
		dma_seek(&pkt->pay, off);
	}
	pkt->paylen = paylen;
	if (srd_qpt_reliable(qp->type))
		/* ...and four times per window: a lost packet asking for
		 * one then stalls nothing until the timer. */
		pkt->ack_req = (last && !send_follows(tp, idx)) ||
			       tp->noack_pkts + n >= ack_every(tp) ||
			       tp_inflight(tp) + n >= tp->cwnd;
	s->pkts_sent += n;
	return last;
}

static void build_read(struct srd_qp_transport *tp, struct srd_swqe *s,
		       struct srd_pkt *pkt)
{
	srd_pkt_init(pkt, tp_transport(tp) | ROCE_RC_READ_REQUEST);
	/* After a retry, ask only for what has not arrived. */
	pkt->psn = (s->first_psn + s->rd_pkts) & ROCE_PSN_MASK;
	pkt->reth.va = s->w.remote_addr + s->rd_done;
	pkt->reth.rkey = s->w.rkey;
	pkt->reth.len = s->length - s->rd_done;
	pkt->ack_req = true;
}

static void build_atomic(struct srd_qp_transport *tp, struct srd_swqe *s,
			 struct srd_pkt *pkt)
{
	bool cas = s->w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;

	srd_pkt_init(pkt, tp_transport(tp) | (cas ? ROCE_RC_COMPARE_SWAP
						  : ROCE_RC_FETCH_ADD));
	pkt->psn = s->first_psn;
	pkt->atm.va = s->w.remote_addr;
	pkt->atm.rkey = s->w.rkey;
	pkt->atm.swap_add = cas ? s->w.swap : s->w.compare_add;
	pkt->atm.compare = cas ? s->w.compare_add : 0;
	pkt->ack_req = true;
}

/* IBTA 1.5: ATOMIC WRITE (RETH, the 8 bytes as payload) and FLUSH
 * (FETH, RETH), both one packet answered with a response. */
static void build_atomic_write(struct srd_swqe *s, struct srd_pkt *pkt)
{
	srd_pkt_init(pkt, ROCE_RC_ATOMIC_WRITE);
	pkt->psn = s->first_psn;
	pkt->reth.va = s->w.remote_addr;
	pkt->reth.rkey = s->w.rkey;
	pkt->reth.len = ROCE_ATOMIC_WRITE_BYTES;
	dma_init_buf(&pkt->pay, &s->w.compare_add, ROCE_ATOMIC_WRITE_BYTES);
	pkt->paylen = ROCE_ATOMIC_WRITE_BYTES;
	pkt->ack_req = true;
}

static void build_flush(struct srd_swqe *s, struct srd_pkt *pkt)
{
	srd_pkt_init(pkt, ROCE_RC_FLUSH);
	pkt->psn = s->first_psn;
	pkt->feth = (uint32_t)s->w.swap;
	pkt->reth.va = s->w.remote_addr;
	pkt->reth.rkey = s->w.rkey;
	pkt->reth.len = (uint32_t)s->w.compare_add;
	pkt->ack_req = true;
}

/* Send the next packet (or train) of WQE idx (ACTIVE); returns how many
 * packets that was. */
static uint32_t req_send_one(struct srd_qp_transport *tp, struct srd_swqe *s,
			     uint32_t idx, uint32_t budget)
{
	struct srd_qp *qp = tp->qp;
	struct srd_pkt pkt;
	bool last = true;

	switch (s->kind) {
	case SWQE_K_READ:
		build_read(tp, s, &pkt);
		tp_set_psn(tp, s->first_psn + s->npkts);
		break;
	case SWQE_K_ATOMIC:
		if (s->w.opcode == IBV_WR_ATOMIC_WRITE)
			build_atomic_write(s, &pkt);
		else if (s->w.opcode == IBV_WR_FLUSH)
			build_flush(s, &pkt);
		else
			build_atomic(tp, s, &pkt);
		tp_set_psn(tp, s->first_psn + 1);
		break;
	default:
		last = build_send_write(tp, s, idx, &pkt, budget);
		tp_set_psn(tp, pkt.psn + pkt.npkts);
		break;
	}
	if (qp->type == IBV_QPT_UD)
		ud_fill_path(tp, s, &pkt);
	else
		tp_fill_path(tp, &pkt);
	/* XRC: every request names the target's SRQ. */
	if (pkt.mask & OPF_XRCETH)
		pkt.xrc_srqn = s->w.remote_srqn & ROCE_XRC_SRQN_MASK;

	/* Move on before the packet leaves: on the in-memory wire its
	 * response is processed before wire_send() returns. */
	if (last) {
		s->state = SWQE_SENT;
		tp->sq_next = idx + 1;
	}
	if (srd_qpt_reliable(qp->type)) {
		uint64_t to = tp_timeout_ns(qp->attr.timeout);

		tp->noack_pkts = pkt.ack_req ? 0 : tp->noack_pkts + pkt.npkts;
		if (to)
			tp->rexmit_deadline = tp->eng->now + to;
	}
	tp->cnt.tx_pkts += pkt.npkts;
	wire_send(tp, &pkt);

	/* UC and UD complete once the last packet is on the wire. */
	if (last && !srd_qpt_reliable(qp->type) && tp->sq_head == idx) {
		tp_send_cqe(tp, s, idx, IBV_WC_SUCCESS);
		tp->sq_head = idx + 1;
		completer_retire_local(tp);
	}
	return pkt.npkts;
}

/* BIND_MW or LOCAL_INV: done here, in SQ order, on no PSN; a failure
 * completes in error (rxe: MW_BIND_ERR, LOC_QP_OP_ERR) and stops the QP. */
static void req_local(struct srd_qp_transport *tp, struct srd_swqe *s,
		      uint32_t idx)
{
	struct srd_daemon *d = tp->eng->d;
	bool bind = s->w.opcode == IBV_WR_BIND_MW;
	int err;

	err = bind ? mw_bind(d, tp->qp, &s->w)
		   : key_invalidate(d, tp->qp, s->w.imm_data, false);
	s->first_psn = tp->psn;
	s->npkts = 0;
	if (err) {
		s->state = SWQE_BAD;
		s->status = bind ? IBV_WC_MW_BIND_ERR : IBV_WC_LOC_QP_OP_ERR;
		completer_head_check(tp);
		return;
	}
	s->state = SWQE_DONE;
	tp->sq_next = idx + 1;
	completer_retire_local(tp);
}

bool requester_run(struct srd_qp_transport *tp)
{
	unsigned int budget = SRD_REQ_BUDGET;
	bool work = false;

	while (budget) {
		enum ibv_qp_state st = tp_state(tp);
		struct srd_swqe *s;
		uint32_t idx;

		if ((st != IBV_QPS_RTS && st != IBV_QPS_SQD) || tp->rnr_wait)
			break;
		if (tp->sq_next == tp->sq_fetched) {
			if (st == IBV_QPS_SQD || sq_fetch(tp) <= 0)
				break;
			work = true;
		}
		idx = tp->sq_next;
		s = tp_swqe(tp, idx);
		if (s->state == SWQE_DONE) {
			/* Executed before a rewind: not again. */
			tp->sq_next = idx + 1;
			continue;
		}
		if (s->state == SWQE_BAD) {
			/* Completes in order, once everything before it has. */
			completer_head_check(tp);
			break;
		}
		if (s->state == SWQE_POSTED) {
			/* SQD: what has started finishes, nothing new starts. */
			if (st == IBV_QPS_SQD || !req_can_start(tp, s))
				break;
			if (s->kind == SWQE_K_LOCAL) {
				req_local(tp, s, idx);
				budget--;
				work = true;
				continue;
			}
			req_start(tp, s);
		} else if (srd_qpt_reliable(tp->qp->type) && !is_rd_atomic(s) &&
			   tp_inflight(tp) >= tp->cwnd) {
			/* The rest of a message waits for ACKs too. */
			break;
		}
		budget -= req_send_one(tp, s, idx, req_room(tp, budget));
		work = true;
	}
	return work;
}

void requester_rewind(struct srd_qp_transport *tp, uint32_t psn)
{
	uint32_t end = tp->sq_next, idx;
	struct srd_swqe *s;

	if (end != tp->sq_fetched && tp_swqe(tp, end)->state == SWQE_ACTIVE)
		end++;
	for (idx = tp->sq_head; idx != end; idx++) {
		s = tp_swqe(tp, idx);
		if (s->state == SWQE_DONE)
			continue;
		if (roce_psn_cmp(psn, s->first_psn + s->npkts - 1) <= 0)
			break;
	}
	if (idx == end)
		return;
	/* Everything after it goes again from the start. */
	for (uint32_t j = idx + 1; j != end; j++) {
		struct srd_swqe *t = tp_swqe(tp, j);

		/* Local operations took effect: they stay done. */
		if (t->state == SWQE_DONE)
			continue;
		if (is_rd_atomic(t))
			tp->rd_atomic--;
		t->state = SWQE_POSTED;
	}
	s = tp_swqe(tp, idx);
	if (roce_psn_cmp(psn, s->first_psn) < 0)
		psn = s->first_psn;
	switch (s->kind) {
	case SWQE_K_READ:
		psn = s->first_psn + s->rd_pkts;
		break;
	case SWQE_K_ATOMIC:
		psn = s->first_psn;
		break;
	default:
		s->pkts_sent = (psn - s->first_psn) & ROCE_PSN_MASK;
		break;
	}
	s->state = SWQE_ACTIVE;
	tp->sq_next = idx;
	cwnd_rewind(tp);
	tp_set_psn(tp, psn);
	tp->noack_pkts = 0;
	tp->cnt.retransmits++;
}

void requester_skip(struct srd_qp_transport *tp, uint32_t psn)
{
	psn &= ROCE_PSN_MASK;
	if (roce_psn_cmp(psn, tp->psn_max) > 0)
		psn = tp->psn_max;
	/* PSNs are given out in WQE order, so starting a WQE again gives
	 * it the PSNs it had. */
	while (roce_psn_cmp(tp->psn, psn) < 0 &&
	       tp->sq_next != tp->sq_fetched) {
		uint32_t idx = tp->sq_next, end;
		struct srd_swqe *s = tp_swqe(tp, idx);

		if (s->state == SWQE_DONE) {
			tp->sq_next = idx + 1;
			continue;
		}
		/* READ data and atomic results must still come back; a
		 * local operation runs in the requester. */
		if (s->state == SWQE_BAD || is_rd_atomic(s) ||
		    s->kind == SWQE_K_LOCAL)
			break;
		if (s->state == SWQE_POSTED)
			req_start(tp, s);
		end = (s->first_psn + s->npkts) & ROCE_PSN_MASK;
		if (roce_psn_cmp(end, psn) <= 0) {
			s->pkts_sent = s->npkts;
			s->state = SWQE_SENT;
			tp->sq_next = idx + 1;
			tp_set_psn(tp, end);
		} else {
			s->pkts_sent = (psn - s->first_psn) & ROCE_PSN_MASK;
			tp_set_psn(tp, psn);
		}
	}
}
