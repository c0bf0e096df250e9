/* SPDX-License-Identifier: MIT */
/*
 * The completer: takes ACKs, NAKs, READ responses and atomic ACKs for an
 * RC requester, lands READ data and atomic results, writes send CQEs in
 * order, and drives retries: the retransmit timer and sequence NAKs count
 * against retry_cnt, RNR NAKs against rnr_retry (7: forever) after
 * waiting the time the NAK carries.
 *
 * One function per state, each returning the next state.
 */
#include <errno.h>
#include <string.h>

#include "daemon/core/core.h"
#include "daemon/transport/engine.h"

enum comp_state {
	CS_GET_WQE,
	CS_CHECK_PSN,
	CS_CHECK_ACK,
	CS_READ,
	CS_ATOMIC,
	CS_COMPLETE,
	CS_RNR,
	CS_RETRY,
	CS_ERROR,
	CS_DONE,
};

static const char *const comp_state_name[] = {
	[CS_GET_WQE] = "GET_WQE",
	[CS_CHECK_PSN] = "CHECK_PSN",
	[CS_CHECK_ACK] = "CHECK_ACK",
	[CS_READ] = "READ",
	[CS_ATOMIC] = "ATOMIC",
	[CS_COMPLETE] = "COMPLETE",
	[CS_RNR] = "RNR",
	[CS_RETRY] = "RETRY",
	[CS_ERROR] = "ERROR",
	[CS_DONE] = "DONE",
};

static const char *completer_state_name(unsigned int s)
{
	return s < sizeof(comp_state_name) / sizeof(comp_state_name[0])
		       ? comp_state_name[s]
		       : "?";
}

struct comp_ctx {
	struct srd_qp_transport *tp;
	struct srd_pkt *pkt;
	struct srd_swqe *s;
	uint32_t idx;	   /* of s */
	uint32_t last_psn; /* of s */
	uint32_t retry_psn;
	enum ibv_wc_status status;
	bool progress;
};

static const uint64_t rnr_table_ns[32] = {
	655360000, 10000,     20000,	30000,	   40000,     60000,
	80000,	   120000,    160000,	240000,	   320000,    480000,
	640000,	   960000,    1280000,	1920000,   2560000,   3840000,
	5120000,   7680000,   10240000, 15360000,  20480000,  30720000,
	40960000,  61440000,  81920000, 122880000, 163840000, 245760000,
	327680000, 491520000,
};

uint64_t tp_rnr_ns(uint8_t timer)
{
	return rnr_table_ns[timer & 31];
}

uint64_t tp_timeout_ns(uint8_t timeout)
{
	if (!timeout)
		return 0;
	if (timeout > 31)
		timeout = 31;
	return 4096ull << timeout;
}

static void reset_retries(struct srd_qp_transport *tp)
{
	tp->retry_left = tp->qp->attr.retry_cnt;
	tp->rnr_left = tp->qp->attr.rnr_retry;
	tp->peer_wait_since = 0;
}

static void advance_una(struct srd_qp_transport *tp, uint32_t psn)
{
	uint32_t next = (psn + 1) & ROCE_PSN_MASK;

	if (roce_psn_cmp(next, tp->una_psn) <= 0)
		return;
	cwnd_acked(tp, (next - tp->una_psn) & ROCE_PSN_MASK);
	tp->una_psn = next;
	if (tp->recovering && roce_psn_cmp(next, tp->recover_psn) >= 0)
		tp->recovering = false;
}

static bool is_rd_atomic(const struct srd_swqe *s)
{
	return s->kind == SWQE_K_READ || s->kind == SWQE_K_ATOMIC;
}

/* Take the head WQE off the SQ with a status. */
static void retire_head(struct srd_qp_transport *tp, enum ibv_wc_status status)
{
	struct srd_swqe *s = tp_swqe(tp, tp->sq_head);

	if (is_rd_atomic(s) && s->state != SWQE_POSTED && !s->rd_freed &&
	    tp->rd_atomic)
		tp->rd_atomic--;
	tp_send_cqe(tp, s, tp->sq_head, status);
	if (tp->sq_next == tp->sq_head)
		tp->sq_next++;
	tp->sq_head++;
}

void completer_head_check(struct srd_qp_transport *tp)
{
	struct srd_swqe *s;

	if (tp->sq_head == tp->sq_fetched || tp->sq_head != tp->sq_next)
		return;
	s = tp_swqe(tp, tp->sq_head);
	if (s->state != SWQE_BAD)
		return;
	retire_head(tp, s->status);
	if (srd_qpt_reliable(tp->qp->type))
		tp_error(tp, -1);
	else
		tp_sq_error(tp);
}

/*
 * Retire from the head what is finished: local operations, operations
 * acknowledged behind a READ still being placed, such READs once placed,
 * and an operation that failed behind one (its error, then the QP's).
 */
void completer_retire_local(struct srd_qp_transport *tp)
{
	while (tp->sq_head != tp->sq_next) {
		struct srd_swqe *s = tp_swqe(tp, tp->sq_head);

		if (s->state == SWQE_DONE && !s->placing) {
			retire_head(tp, IBV_WC_SUCCESS);
		} else if (s->state == SWQE_BAD) {
			retire_head(tp, s->status);
			tp_error(tp, -1);
			return;
		} else {
			break;
		}
	}
	completer_head_check(tp);
}

void completer_place_retired(struct srd_qp_transport *tp, uint32_t idx, int err)
{
	enum ibv_qp_state st = tp_state(tp);
	struct srd_swqe *s;

	/* Flushed meanwhile, or no longer outstanding. */
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return;
	/* Account the job before any rewind: a rewind moves sq_next back,
	 * and the READ would no longer look outstanding. */
	if (idx - tp->sq_head < tp->sq_next - tp->sq_head) {
		s = tp_swqe(tp, idx);
		if (s->kind == SWQE_K_READ && s->placing) {
			s->placing--;
			if (err && s->state != SWQE_BAD) {
				s->state = SWQE_BAD;
				s->status = err == -EACCES
						    ? IBV_WC_LOC_PROT_ERR
						    : IBV_WC_REM_ACCESS_ERR;
			}
		}
	}
	/* Responses dropped for want of room: ask for them again, as a
	 * timeout would, without counting a retry. */
	if (!tp->place_rd_pending && tp->place_rd_resend) {
		tp->place_rd_resend = false;
		if (tp_outstanding(tp))
			requester_rewind(tp, tp->una_psn);
	}
	completer_retire_local(tp);
}

static enum comp_state get_wqe(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	completer_retire_local(tp);
	if (tp_state(tp) != IBV_QPS_RTS && tp_state(tp) != IBV_QPS_SQD)
		return CS_DONE;

	if (!tp_outstanding(tp))
		return CS_DONE;
	/* Past what is finished but retires behind a READ being placed. */
	c->idx = tp->sq_head;
	while (c->idx != tp->sq_next && tp_swqe(tp, c->idx)->state == SWQE_DONE)
		c->idx++;
	if (c->idx == tp->sq_fetched)
		return CS_DONE;
	c->s = tp_swqe(tp, c->idx);
	if (c->s->state != SWQE_ACTIVE && c->s->state != SWQE_SENT)
		return CS_DONE;
	c->last_psn = (c->s->first_psn + c->s->npkts - 1) & ROCE_PSN_MASK;
	return CS_CHECK_PSN;
}

/*
 * Responses past a READ or atomic response that never came imply a NAK:
 * ask again from there, once per gap (every response still in flight
 * says the same), as rxe does.  The next progress allows another.
 */
static enum comp_state implied_retry(struct comp_ctx *c, uint32_t psn)
{
	struct srd_qp_transport *tp = c->tp;

	psn &= ROCE_PSN_MASK;
	if (tp->implied_retry && tp->implied_psn == psn)
		return CS_DONE;
	tp->implied_retry = true;
	tp->implied_psn = psn;
	c->retry_psn = psn;
	return CS_RETRY;
}

static enum comp_state check_psn(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_swqe *s = c->s;
	uint32_t psn = c->pkt->psn;

	/* Nothing sent has that PSN yet. */
	if (roce_psn_cmp(psn, tp->psn) >= 0)
		return CS_DONE;
	if (roce_psn_cmp(psn, c->last_psn) > 0) {
		/* A response to something later: a SEND or WRITE before
		 * it is implicitly acknowledged... */
		if (!is_rd_atomic(s) && s->state == SWQE_SENT)
			return CS_COMPLETE;
		/* ...but a READ or atomic lost its response. */
		if (is_rd_atomic(s) && s->state == SWQE_SENT)
			return implied_retry(c, s->first_psn + s->rd_pkts);
		return CS_DONE;
	}
	if (roce_psn_cmp(psn, tp->una_psn) < 0)
		return CS_DONE; /* duplicate of something acknowledged */
	return CS_CHECK_ACK;
}

static enum comp_state check_ack(struct comp_ctx *c)
{
	struct srd_pkt *pkt = c->pkt;
	struct srd_swqe *s = c->s;
	uint8_t syn = pkt->aeth.syndrome;

	if (pkt->mask & OPF_READ) {
		uint32_t want = (s->first_psn + s->rd_pkts) & ROCE_PSN_MASK;

		/* ATOMIC WRITE and FLUSH are answered by a READ RESPONSE
		 * ONLY without data (IBTA 1.5 A19, as rxe). */
		if (s->w.opcode == IBV_WR_ATOMIC_WRITE ||
		    s->w.opcode == IBV_WR_FLUSH) {
			if (pkt->psn != s->first_psn)
				return CS_DONE;
			if (roce_op_code(pkt->opcode) !=
				    ROCE_RC_READ_RESPONSE_ONLY ||
			    pkt->paylen ||
			    (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK) {
				c->status = IBV_WC_BAD_RESP_ERR;
				return CS_ERROR;
			}
			return CS_COMPLETE;
		}
		if (s->kind != SWQE_K_READ)
			return CS_DONE;
		/* A response beyond the next one: some went missing, unless
		 * we dropped them for want of room to place them, and ask
		 * again once the jobs out are done. */
		if (roce_psn_cmp(pkt->psn, want) > 0)
			return c->tp->place_rd_resend ? CS_DONE
						      : implied_retry(c, want);
		if (pkt->psn != want)
			return CS_DONE;
		return CS_READ;
	}
	if (roce_op_code(pkt->opcode) == ROCE_RC_ATOMIC_ACKNOWLEDGE) {
		if (s->kind != SWQE_K_ATOMIC || pkt->psn != s->first_psn)
			return CS_DONE;
		if (s->w.opcode == IBV_WR_ATOMIC_WRITE ||
		    s->w.opcode == IBV_WR_FLUSH) {
			c->status = IBV_WC_BAD_RESP_ERR;
			return CS_ERROR;
		}
		return CS_ATOMIC;
	}
	if (roce_op_code(pkt->opcode) != ROCE_RC_ACKNOWLEDGE)
		return CS_DONE;
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		if (is_rd_atomic(s))
			return CS_DONE;
		advance_una(c->tp, pkt->psn);
		c->progress = true;
		if (s->state == SWQE_SENT && pkt->psn == c->last_psn)
			return CS_COMPLETE;
		return CS_DONE;
	case ROCE_AETH_RNR_NAK:
		return CS_RNR;
	case ROCE_AETH_NAK:
		switch (syn & ROCE_AETH_VALUE_MASK) {
		case ROCE_NAK_PSN_SEQ:
			c->tp->cnt.seq_naks_rcvd++;
			/* Everything before the PSN arrived: that is forward
			 * progress, and the retry count limits retries
			 * without progress (a lossy path is not a dead one). */
			if (roce_psn_cmp(pkt->psn, c->tp->una_psn) > 0) {
				advance_una(c->tp, pkt->psn - 1);
				c->progress = true;
			}
			c->retry_psn = pkt->psn;
			return CS_RETRY;
		case ROCE_NAK_INVALID_REQ:
			c->status = IBV_WC_REM_INV_REQ_ERR;
			return CS_ERROR;
		case ROCE_NAK_REM_ACCESS:
			c->status = IBV_WC_REM_ACCESS_ERR;
			return CS_ERROR;
		case ROCE_NAK_REM_OP:
			c->status = IBV_WC_REM_OP_ERR;
			return CS_ERROR;
		case ROCE_NAK_INVALID_RD_REQ:
			c->status = IBV_WC_REM_INV_RD_REQ_ERR;
			return CS_ERROR;
		default:
			return CS_DONE;
		}
	default:
		return CS_DONE;
	}
}

static enum comp_state do_read(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_pkt *pkt = c->pkt;
	struct srd_swqe *s = c->s;
	struct srd_dma dst;
	int err, placed;

	if (pkt->paylen > (uint64_t)tp->mtu * pkt->npkts ||
	    s->rd_done + pkt->paylen > s->length) {
		c->status = IBV_WC_BAD_RESP_ERR;
		return CS_ERROR;
	}
	dma_init_sgl(&dst, swqe_sge(s), s->w.num_sge, tp->qp->pd, NULL,
		     IBV_ACCESS_LOCAL_WRITE);
	dma_seek(&dst, s->rd_done);
	/* Our own thread may place it (place.c), and always does into
	 * memory on demand: the READ then retires once every job of it is
	 * done.  No room for it now: dropped, and asked for again once the
	 * jobs out are done. */
	placed = srd_qpt_reliable(tp->qp->type) && pkt->paylen
			 ? place_post(tp, &dst, &pkt->pay, pkt->paylen,
				      SRD_PLACE_K_READ, c->idx,
				      s->placing ||
					      s->length >= SRD_PLACE_MIN_BYTES)
			 : -EAGAIN;
	if (placed == -ENOBUFS || placed == -EFAULT) {
		tp->place_rd_resend |= placed == -ENOBUFS;
		return CS_DONE;
	}
	if (placed > 0) {
		s->placing += (uint32_t)placed;
	} else {
		err = dma_copy(tp->eng->d, &dst, &pkt->pay, pkt->paylen);
		if (err == -EFAULT)
			return CS_DONE; /* never arrived: retried later */
		if (err) {
			c->status = IBV_WC_LOC_PROT_ERR;
			return CS_ERROR;
		}
	}
	s->rd_done += pkt->paylen;
	s->rd_pkts += pkt->npkts;
	advance_una(tp, pkt->psn + pkt->npkts - 1);
	c->progress = true;
	if (!(pkt->mask & OPF_LAST))
		return CS_DONE;
	if (s->rd_done != s->length || pkt->psn != c->last_psn) {
		c->status = IBV_WC_BAD_RESP_ERR;
		return CS_ERROR;
	}
	if (s->placing) {
		/* Everything came: its credit goes back now, its completion
		 * waits for the placement (completer_place_retired). */
		s->state = SWQE_DONE;
		s->rd_freed = true;
		if (tp->rd_atomic)
			tp->rd_atomic--;
		return CS_DONE;
	}
	return CS_COMPLETE;
}

static enum comp_state do_atomic(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;
	struct srd_dma dst, src;
	uint64_t orig = c->pkt->atm_orig; /* host order, as rxe stores it */

	dma_init_sgl(&dst, swqe_sge(c->s), c->s->w.num_sge, tp->qp->pd, NULL,
		     IBV_ACCESS_LOCAL_WRITE);
	dma_init_buf(&src, &orig, sizeof(orig));
	if (dma_copy(tp->eng->d, &dst, &src, sizeof(orig))) {
		c->status = IBV_WC_LOC_PROT_ERR;
		return CS_ERROR;
	}
	advance_una(tp, c->pkt->psn);
	c->progress = true;
	return CS_COMPLETE;
}

static enum comp_state do_complete(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	advance_una(tp, c->last_psn);
	c->progress = true;
	/* Behind a READ being placed it completes when that one does. */
	if (c->idx != tp->sq_head) {
		c->s->state = SWQE_DONE;
	} else {
		retire_head(tp, IBV_WC_SUCCESS);
		completer_retire_local(tp);
	}
	if (tp_state(tp) != IBV_QPS_RTS && tp_state(tp) != IBV_QPS_SQD)
		return CS_DONE;
	/* A response to a later PSN acknowledges more. */
	if (roce_psn_cmp(c->pkt->psn, c->last_psn) > 0)
		return CS_GET_WQE;
	return CS_DONE;
}

static enum comp_state do_rnr(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	tp->cnt.rnr_naks_rcvd++;
	if (!tp->rnr_left) {
		c->status = IBV_WC_RNR_RETRY_EXC_ERR;
		return CS_ERROR;
	}
	if (tp->qp->attr.rnr_retry != 7)
		tp->rnr_left--;
	requester_rewind(tp, c->pkt->psn);
	tp->rnr_wait = true;
	tp->rnr_deadline = tp->eng->now + tp_rnr_ns(c->pkt->aeth.syndrome &
						    ROCE_AETH_VALUE_MASK);
	tp->rexmit_deadline = 0;
	return CS_DONE;
}

static enum comp_state do_retry(struct comp_ctx *c)
{
	struct srd_qp_transport *tp = c->tp;

	/* Already going back there (a second NAK for the same loss). */
	if (roce_psn_cmp(c->retry_psn, tp->psn) >= 0)
		return CS_DONE;
	if (!tp->retry_left) {
		c->status = IBV_WC_RETRY_EXC_ERR;
		return CS_ERROR;
	}
	tp->retry_left--;
	cwnd_loss(tp, false);
	requester_rewind(tp, c->retry_psn);
	return CS_DONE;
}

static enum comp_state do_error(struct comp_ctx *c)
{
	/* Behind a READ being placed: its error, and the QP's, once that
	 * one has completed (completer_retire_local). */
	if (c->idx != c->tp->sq_head) {
		c->s->state = SWQE_BAD;
		c->s->status = (uint8_t)c->status;
		return CS_DONE;
	}
	retire_head(c->tp, c->status);
	tp_error(c->tp, -1);
	return CS_DONE;
}

/*
 * An ACK or sequence NAK for what was sent before a rewind and is not
 * sent again yet: the requester moves past what the responder has
 * instead of resending it (and of ignoring the ACK as being for nothing
 * sent, which a window smaller than the message would never undo).
 */
static void skip_acked(struct srd_qp_transport *tp, const struct srd_pkt *pkt)
{
	uint8_t syn = pkt->aeth.syndrome;
	uint32_t upto;

	if (roce_op_code(pkt->opcode) != ROCE_RC_ACKNOWLEDGE)
		return;
	if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
		upto = pkt->psn + 1;
	else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK &&
		 (syn & ROCE_AETH_VALUE_MASK) == ROCE_NAK_PSN_SEQ)
		upto = pkt->psn;
	else
		return;
	upto &= ROCE_PSN_MASK;
	if (roce_psn_cmp(upto, tp->psn) > 0 &&
	    roce_psn_cmp(upto, tp->psn_max) <= 0)
		requester_skip(tp, upto);
}

/*
 * A response to anything sent and not acknowledged, even one a rewind has
 * made stale: the responder is working through what we asked.  A slow
 * peer (rxe in an emulated guest) answers a long queue of READs before
 * it gets to one asked again after a loss; the retransmit timer waits
 * for silence, not for the response we want next.
 */
static bool still_answering(const struct srd_qp_transport *tp, uint32_t psn)
{
	return roce_psn_cmp(psn, tp->una_psn) >= 0 &&
	       roce_psn_cmp(psn, tp->psn_max) < 0;
}

void completer_rx(struct srd_qp_transport *tp, struct srd_pkt *pkt)
{
	struct comp_ctx c = { .tp = tp, .pkt = pkt };
	enum comp_state st = CS_GET_WQE;
	enum ibv_qp_state qs = tp_state(tp);

	if ((tp->qp->type != IBV_QPT_RC && tp->qp->type != IBV_QPT_XRC_SEND) ||
	    (qs != IBV_QPS_RTS && qs != IBV_QPS_SQD)) {
		tp->cnt.rx_drops += pkt->npkts;
		return;
	}
	tp->cnt.rx_pkts += pkt->npkts;
	skip_acked(tp, pkt);
	while (st != CS_DONE) {
		enum comp_state from = st;

		switch (st) {
		case CS_GET_WQE:
			st = get_wqe(&c);
			break;
		case CS_CHECK_PSN:
			st = check_psn(&c);
			break;
		case CS_CHECK_ACK:
			st = check_ack(&c);
			break;
		case CS_READ:
			st = do_read(&c);
			break;
		case CS_ATOMIC:
			st = do_atomic(&c);
			break;
		case CS_COMPLETE:
			st = do_complete(&c);
			break;
		case CS_RNR:
			st = do_rnr(&c);
			break;
		case CS_RETRY:
			st = do_retry(&c);
			break;
		case CS_ERROR:
			st = do_error(&c);
			break;
		default:
			st = CS_DONE;
			break;
		}
		/* RNR waits, retries and errors (softrdmad --verbose). */
		if (st == CS_RNR || st == CS_RETRY || st == CS_ERROR)
			srd_log(SRD_LOG_DEBUG,
				"qp 0x%x completer: %s -> %s, psn 0x%06x "
				"opcode 0x%02x",
				tp->qp->qpn, completer_state_name(from),
				completer_state_name(st), pkt->psn,
				pkt->opcode);
	}
	if (c.progress) {
		tp->implied_retry = false;
		reset_retries(tp);
		tp_rearm_timer(tp);
	} else if (tp->rexmit_deadline && still_answering(tp, pkt->psn)) {
		tp_rearm_timer(tp);
	}
}

/* The QP we send to is in this daemon and its owner's thread still has
 * jobs of ours to place (place.c): our packets are not lost, its ACK
 * waits on them, as long as a descheduled thread takes, up to
 * SRD_PLACE_PEER_WAIT_NS without progress (peer_wait_over). */
static bool peer_placing(struct srd_qp_transport *tp)
{
	struct srd_qp *peer;

	if (!srd_qpt_reliable(tp->qp->type) || !tp_route_local(tp))
		return false;
	peer = qp_lookup_num(tp->eng->d, tp->qp->attr.dest_qp_num);
	return peer && peer->dev == tp->route_dev && peer->tp &&
	       peer->tp->place_pending;
}

/* A peer's owner that has not placed our data for this long (stopped,
 * or not running its jobs at all) no longer holds our retries back: our
 * QP is another user's, whose wait must end. */
static bool peer_wait_over(struct srd_qp_transport *tp, uint64_t now)
{
	if (!tp->peer_wait_since)
		tp->peer_wait_since = now;
	return now - tp->peer_wait_since >= SRD_PLACE_PEER_WAIT_NS;
}

bool completer_timers(struct srd_qp_transport *tp, uint64_t now)
{
	bool work = false;

	if (tp->rnr_wait && now >= tp->rnr_deadline) {
		tp->rnr_wait = false;
		work = true;
	}
	if (tp->rexmit_deadline && now >= tp->rexmit_deadline) {
		tp->rexmit_deadline = 0;
		if (!tp_outstanding(tp))
			return work;
		if (tp->place_rd_pending ||
		    (peer_placing(tp) && !peer_wait_over(tp, now))) {
			tp_rearm_timer(tp);
			return work;
		}
		tp->cnt.timeouts++;
		if (!tp->retry_left) {
			retire_head(tp, IBV_WC_RETRY_EXC_ERR);
			tp_error(tp, -1);
		} else {
			tp->retry_left--;
			cwnd_loss(tp, true);
			/* This asks for what was dropped for want of room too. */
			tp->place_rd_resend = false;
			requester_rewind(tp, tp->una_psn);
		}
		work = true;
	}
	return work;
}
