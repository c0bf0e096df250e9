/* SPDX-License-Identifier: MIT */
/*
 * The RC requester's congestion window (tp->cwnd): how many packets may
 * be in flight.  Go-back-N resends everything in flight after a loss, so
 * a path that drops gets a small window.
 */
#include "daemon/transport/engine.h"

void cwnd_reset(struct srd_qp_transport *tp)
{
	tp->cwnd = SRD_CWND_INIT;
	tp->ssthresh = SRD_MAX_UNACKED;
	tp->cwnd_acc = 0;
	tp->recovering = false;
}

void cwnd_acked(struct srd_qp_transport *tp, uint32_t acked)
{
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
