/* SPDX-License-Identifier: MIT */
/*
 * The dispatch between the wires (see wire.h): the engine's pass over
 * them and wire_send(), with the in-memory wire's slow path (capture or
 * faults on).  Set-up: wire_config.c; the UDP send path: wire_udp.c.
 */
#include <errno.h>

#include "daemon/core/core.h"
#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

/* Packets taken from the UDP socket per pass. */
#define RX_BUDGET 256
#define RX_IDLE_EVERY 8
/* How long captured packets may wait in memory. */
#define CAPTURE_FLUSH_NS 100000000ull

/* --- the pass ------------------------------------------------------------- */

bool wire_poll(struct srd_engine *e)
{
	struct srd_wire *w = e->wire;
	bool work = false;

	if (!w)
		return false;
	if (w->nheld)
		work |= wire_release(w, e->now);
	/* A busy loop polls the socket without epoll's help; while nothing
	 * comes, only every RX_IDLE_EVERY passes (a system call each). */
	if (w->udp && (!w->rx_skip || !--w->rx_skip)) {
		unsigned int n;

		e->defer_acks = true;
		n = srd_udp_rx(w->udp, RX_BUDGET, wire_udp_rx, w);
		e->defer_acks = false;
		engine_acks_flush(e);
		if (n) {
			work = true;
		} else {
			w->rx_skip = RX_IDLE_EVERY;
		}
	}
	return work;
}

void wire_flush(struct srd_engine *e)
{
	struct srd_wire *w = e->wire;

	if (!w)
		return;
	if (w->nheld)
		wire_release(w, e->now);
	if (w->udp && w->udp->nmsg)
		srd_udp_tx_flush(w->udp);
	if (w->capturing)
		srd_capture_flush(&w->cap, e->now, CAPTURE_FLUSH_NS);
}

uint64_t wire_next_deadline(struct srd_engine *e)
{
	struct srd_wire *w = e ? e->wire : NULL;
	uint64_t t = UINT64_MAX;

	if (!w)
		return t;
	if (w->nheld) {
		struct wire_frame *f =
			list_entry(w->held.n.next, struct wire_frame, node);

		t = f->due;
	}
	if (w->capturing && w->cap.dirty &&
	    w->cap.last_flush + CAPTURE_FLUSH_NS < t)
		t = w->cap.last_flush + CAPTURE_FLUSH_NS;
	return t;
}

/* --- sending -------------------------------------------------------------- */

static struct srd_net_counters *dev_cnt(struct srd_wire *w,
					const struct srd_device *dev)
{
	return srd_net_dev_counters(w->d, dev);
}

/* The in-memory wire with capture or faults on. */
static void mem_slow(struct srd_wire *w, const struct srd_device *dev,
		     uint32_t qpn, struct srd_pkt *pkt)
{
	struct srd_net_counters *c = dev_cnt(w, dev);
	bool tx = srd_faults_may_match(&w->faults, SRD_FAULT_TX, dev->name);
	bool rx = srd_faults_may_match(&w->faults, SRD_FAULT_RX,
				       pkt->dst_dev->name);
	struct srd_pkt part;

	w->seq += pkt->npkts;
	c->tx_packets += pkt->npkts;
	c->tx_bytes += wire_pkt_bytes(pkt);
	if (!tx && !rx) {
		/* Seen whole: captured packet by packet, delivered as is. */
		for (uint32_t i = 0; w->capturing && i < pkt->npkts; i++) {
			if (pkt->npkts == 1) {
				wire_capture_pkt(w, dev, qpn, pkt);
			} else {
				wire_train_part(pkt, i, &part);
				wire_capture_pkt(w, dev, qpn, &part);
			}
		}
		wire_mem_arrive(w, pkt);
		return;
	}
	for (uint32_t i = 0; i < pkt->npkts; i++) {
		struct srd_pkt *p = pkt;
		struct srd_fault_verdict v = { 0 };

		if (pkt->npkts > 1) {
			wire_train_part(pkt, i, &part);
			p = &part;
		}
		if (tx)
			srd_faults_judge(&w->faults, SRD_FAULT_TX, dev->name,
					 qpn, p->opcode, &v);
		if (v.actions & (1u << SRD_FAULT_DROP)) {
			c->fault_drops++;
			continue;
		}
		if (v.actions) {
			struct wire_frame *f =
				wire_frame_of_pkt(w, dev, qpn, p);

			c->fault_other++;
			if (f) {
				f->cnt = c;
				wire_frame_apply(w, f, &v, WIRE_NEXT_ARRIVE);
			}
			continue;
		}
		if (w->capturing)
			wire_capture_pkt(w, dev, qpn, p);
		wire_mem_arrive(w, p);
	}
}

void wire_send(struct srd_qp_transport *src, struct srd_pkt *pkt)
{
	struct srd_engine *e = src->eng;
	struct srd_wire *w = e->wire;
	struct srd_device *dev = src->qp->dev;

	/* Multicast: the local members first, then maybe UDP below. */
	if (!pkt->dst_dev && wire_pkt_is_mcast(pkt) &&
	    wire_mcast_send(src, pkt))
		return;
	if (pkt->dst_dev && (!w || !w->slow)) {
		struct srd_net_counters *c = NULL;
		uint32_t bytes = wire_pkt_bytes(pkt);

		if (w) {
			c = dev_cnt(w, dev);
			c->tx_packets += pkt->npkts;
			c->tx_bytes += bytes;
			c = dev_cnt(w, pkt->dst_dev);
			c->rx_packets += pkt->npkts;
			c->rx_bytes += bytes;
		}
		if (wire_deliver_counted(e, pkt, c))
			e->wire_drops++;
		return;
	}
	if (!w) {
		e->wire_drops++;
		return;
	}
	if (pkt->dst_dev) {
		mem_slow(w, dev, src->qp->qpn, pkt);
		return;
	}
	/* Trains never leave for UDP (tp_route_local() says the path is
	 * not local), but should one come, it goes packet by packet. */
	if (pkt->npkts > 1) {
		struct srd_pkt part;

		for (uint32_t i = 0; i < pkt->npkts; i++) {
			wire_train_part(pkt, i, &part);
			wire_udp_send(w, dev, src->qp->qpn, &part);
		}
	} else {
		wire_udp_send(w, dev, src->qp->qpn, pkt);
	}
	/* Queued payload points into MRs: outside a pass nothing says they
	 * stay until the pass's end, so it leaves now. */
	if (!e->in_progress && w->udp && w->udp->nmsg)
		srd_udp_tx_flush(w->udp);
}
