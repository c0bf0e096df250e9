/* SPDX-License-Identifier: MIT */
/*
 * The RC requester's congestion window (tp->cwnd): how many packets may
 * be in flight.  Go-back-N resends everything in flight after a loss, so
 * a path that drops gets a small window.
 *
 * Losses come late: a slow peer behind a queue (rdma_rxe in an emulated
 * guest, behind its tap) drops only once the queue is full, and then a
 * window's worth is sent again.  The round trip grows with that queue
 * long before, so it is timed too, one PSN at a time: a round trip well
 * above the path's own ends slow start where it is, and above it cuts the
 * window by an eighth, once per round trip, so the queue drains before it
 * overflows.  "Well above" is SRD_QDELAY_NS and the path's own round trip
 * again: far more than a host's scheduling hiccups between two softrdma
 * hosts, a few packets' worth for a peer that takes a few MB/s.
 */
#include <stdint.h>

#include "daemon/transport/engine.h"

void cwnd_reset(struct srd_qp_transport *tp)
{
	tp->cwnd = SRD_CWND_INIT;
	tp->ssthresh = SRD_MAX_UNACKED;
	tp->cwnd_acc = 0;
	tp->recovering = false;
	tp->rtt_armed = false;
	tp->rtt_epoch = 0;
	tp->rtt_min_cur = tp->rtt_min_prev = UINT64_MAX;
}

void cwnd_sent_new(struct srd_qp_transport *tp)
{
	if (tp->rtt_armed)
		return;
	tp->rtt_armed = true;
	tp->rtt_psn = (tp->psn_max - 1) & ROCE_PSN_MASK;
	tp->rtt_t0 = tp->eng->now;
}

void cwnd_rewind(struct srd_qp_transport *tp)
{
	/* An ACK after a resend could be for either copy. */
	tp->rtt_armed = false;
}

/* A round trip measured: is a queue building? */
static bool rtt_queueing(struct srd_qp_transport *tp, uint64_t rtt)
{
	uint64_t now = tp->eng->now, base, slack;

	if (now - tp->rtt_epoch >= SRD_RTT_EPOCH_NS) {
		tp->rtt_min_prev = now - tp->rtt_epoch >= 2 * SRD_RTT_EPOCH_NS
					   ? UINT64_MAX
					   : tp->rtt_min_cur;
		tp->rtt_min_cur = UINT64_MAX;
		tp->rtt_epoch = now;
	}
	if (rtt < tp->rtt_min_cur)
		tp->rtt_min_cur = rtt;
	base = tp->rtt_min_cur < tp->rtt_min_prev ? tp->rtt_min_cur
						  : tp->rtt_min_prev;
	slack = base > SRD_QDELAY_NS ? base : SRD_QDELAY_NS;
	return rtt > base + slack;
}

/* The ACK covers the PSN being timed: true when the round trip says the
 * window is too large. */
static bool rtt_sample(struct srd_qp_transport *tp, uint32_t acked)
{
	uint32_t next = (tp->una_psn + acked) & ROCE_PSN_MASK;

	if (!tp->rtt_armed || roce_psn_cmp(next, tp->rtt_psn) <= 0)
		return false;
	tp->rtt_armed = false;
	return rtt_queueing(tp, tp->eng->now - tp->rtt_t0);
}

void cwnd_acked(struct srd_qp_transport *tp, uint32_t acked)
{
	if (rtt_sample(tp, acked)) {
		if (tp->cwnd >= tp->ssthresh) {
			tp->cwnd -= tp->cwnd / 8;
			if (tp->cwnd < SRD_CWND_MIN)
				tp->cwnd = SRD_CWND_MIN;
		}
		tp->ssthresh = tp->cwnd;
		tp->cwnd_acc = 0;
		tp->cnt.delay_backoffs++;
		return;
	}
	if (tp->cwnd < tp->ssthresh) {
		/* Below the last loss's half window (or before any loss):
		 * grow by what arrived, doubling each round trip; a clean
		 * path reaches the full window in a few. */
		tp->cwnd = tp->cwnd + acked < SRD_MAX_UNACKED ? tp->cwnd + acked
							      : SRD_MAX_UNACKED;
	} else {
		/* Near what the path took last time: one packet a window,
		 * so a peer that drops above some depth (rxe behind a slow
		 * guest's queue) sees few losses, each resending little. */
		tp->cwnd_acc += acked;
		while (tp->cwnd_acc >= tp->cwnd && tp->cwnd < SRD_MAX_UNACKED) {
			tp->cwnd_acc -= tp->cwnd;
			tp->cwnd++;
		}
		if (tp->cwnd_acc > tp->cwnd)
			tp->cwnd_acc = tp->cwnd;
	}
}

/* A loss: half of what was in flight may go before the next ACK.  The
 * NAKs and implied retries of one window's losses count once. */
void cwnd_loss(struct srd_qp_transport *tp, bool timeout)
{
	uint32_t in = tp_inflight(tp), w = tp->cwnd < in ? tp->cwnd : in;

	if (tp->recovering && !timeout)
		return;
	w /= 2;
	if (w < SRD_CWND_MIN)
		w = SRD_CWND_MIN;
	tp->ssthresh = w;
	tp->cwnd = timeout ? SRD_CWND_MIN : w;
	tp->cwnd_acc = 0;
	tp->recovering = true;
	tp->recover_psn = tp->psn_max;
}
