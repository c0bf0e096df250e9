/* SPDX-License-Identifier: MIT */
/*
 * Faults on the wires: frames (private serialized copies) that are
 * corrupted, duplicated, held back and released, and the in-memory wire's
 * arrival point where receive-side rules apply.  See wire.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/core/core.h"
#include "daemon/core/mcast.h"
#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

/* Held frames beyond these are lost (counted): memory stays bounded. */
#define MAX_HELD 65536
#define MAX_HELD_BYTES (256ull << 20)

#define ACT(a) (1u << SRD_FAULT_##a)

static struct wire_frame *frame_new(const struct srd_udp_meta *m,
				    const uint8_t *buf, size_t len)
{
	struct wire_frame *f = malloc(sizeof(*f) + len);

	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->m = *m;
	f->len = len;
	memcpy(f->data, buf, len);
	list_node_init(&f->node);
	return f;
}

struct wire_frame *wire_frame_of_pkt(struct srd_wire *w,
				     const struct srd_device *dev, uint32_t qpn,
				     const struct srd_pkt *pkt)
{
	struct srd_udp_meta m;
	struct wire_frame *f;
	int len;

	wire_pkt_meta(w, dev, qpn, pkt, &m);
	len = wire_serialize(w, pkt, &m, w->scratch, SRD_UDP_MAX_PAYLOAD);
	if (len < 0)
		return NULL;
	f = frame_new(&m, w->scratch, len);
	if (f) {
		f->id_known = true;
		f->src_qpn = qpn;
	}
	return f;
}

struct wire_frame *wire_frame_of_bytes(const struct srd_udp_meta *m,
				       const uint8_t *buf, size_t len)
{
	return frame_new(m, buf, len);
}

static void hold(struct srd_wire *w, struct wire_frame *f,
		 const struct srd_fault_verdict *v, enum wire_next next)
{
	struct list_node *at = w->held.n.prev;

	if (w->nheld >= MAX_HELD || w->held_bytes + f->len > MAX_HELD_BYTES) {
		w->frames_lost++;
		if (f->cnt)
			f->cnt->fault_drops++;
		free(f);
		return;
	}
	f->next = next;
	f->due = w->e->now + v->hold_ns;
	/* Reorder: out once `overtake` later packets went by (or at due);
	 * a delay holds for its time only. */
	f->after_seq = (v->actions & ACT(REORDER)) && !(v->actions & ACT(DELAY))
			       ? w->seq + v->overtake
			       : 0;
	/* Sorted by due time, FIFO among equals. */
	while (at != &w->held.n &&
	       list_entry(at, struct wire_frame, node)->due > f->due)
		at = at->prev;
	f->node.prev = at;
	f->node.next = at->next;
	at->next->prev = &f->node;
	at->next = &f->node;
	w->nheld++;
	w->held_bytes += f->len;
	if (f->after_seq)
		w->nreorder++;
}

/*
 * Flip one bit from the BTH to the ICRC, where the receiver's ICRC check
 * must catch it: not in BTH byte 4 (covered as ones), and, for a receiver
 * that checks IPv4 without the identification (a UDP socket: 1 in 2^15
 * corruptions would pass that check), not where it would pass.  A real
 * path has the UDP checksum and the link's CRC besides; injected
 * corruption only has the ICRC.
 */
static void corrupt(struct srd_wire *w, struct wire_frame *f,
		    enum wire_next next)
{
	bool noid = wire_meta_v4(&f->m) &&
		    (next == WIRE_NEXT_UDP || !f->id_known);

	for (int tries = 0; tries < 64; tries++) {
		uint64_t bit = srd_faults_random(&w->faults) % (f->len * 8ull);

		if (bit / 8 == 4)
			continue;
		f->data[bit / 8] ^= 1u << (bit % 8);
		if (!noid || wire_check_icrc(&f->m, false, f->data, f->len))
			return;
		f->data[bit / 8] ^= 1u << (bit % 8);
	}
}

void wire_frame_apply(struct srd_wire *w, struct wire_frame *f,
		      const struct srd_fault_verdict *v, enum wire_next next)
{
	struct wire_frame *copy = NULL;

	if (v->actions & ACT(CORRUPT))
		corrupt(w, f, next);
	if (v->actions & ACT(DUP)) {
		copy = frame_new(&f->m, f->data, f->len);
		if (copy) {
			copy->id_known = f->id_known;
			copy->src_qpn = f->src_qpn;
			copy->cnt = f->cnt;
		}
	}
	if (v->actions & (ACT(DELAY) | ACT(REORDER))) {
		hold(w, f, v, next);
		if (copy)
			hold(w, copy, v, next);
		return;
	}
	f->next = next;
	wire_frame_go(w, f);
	if (copy) {
		copy->next = next;
		wire_frame_go(w, copy);
	}
}

static void capture_frame(struct srd_wire *w, const struct wire_frame *f,
			  struct srd_net_counters *c)
{
	struct srd_pcap_roce r;
	struct iovec iov = { .iov_base = (void *)f->data, .iov_len = f->len };

	srd_capture_addr(&r, f->m.src.s6_addr, f->m.dst.s6_addr, f->m.sport,
			 f->m.dport, 0);
	if (!srd_capture_iov(&w->cap, &r, &iov, 1, f->len) && c)
		c->captured++;
}

/* A frame arriving at its device on the in-memory wire. */
/* The device a frame is for (by its BTH's destination QP too). */
static struct srd_device *frame_dev(struct srd_wire *w,
				    const struct wire_frame *f)
{
	uint32_t qpn;
	uint8_t op;

	wire_peek_bth(f->data, f->len, &qpn, &op);
	return wire_dev_for(w->d, f->m.dst.s6_addr, qpn);
}

static void frame_arrive(struct srd_wire *w, struct wire_frame *f)
{
	struct srd_device *dev = frame_dev(w, f);
	struct srd_fault_verdict v = { 0 };
	struct srd_net_counters *c;

	if (w->capturing)
		capture_frame(w, f, f->cnt);
	if (!dev && mcast_gid_is_mc(f->m.dst.s6_addr)) {
		w->seq++;
		wire_mcast_rx(w, &f->m, f->id_known, f->data, f->len,
			      WIRE_MC_JUDGE, NULL);
		free(f);
		return;
	}
	if (!dev) {
		srd_net_dev_counters(w->d, NULL)->rx_no_device++;
		free(f);
		return;
	}
	w->seq++;
	c = srd_net_dev_counters(w->d, dev);
	c->rx_packets++;
	c->rx_bytes += f->len;
	if (srd_faults_may_match(&w->faults, SRD_FAULT_RX, dev->name)) {
		uint32_t qpn;
		uint8_t op;

		wire_peek_bth(f->data, f->len, &qpn, &op);
		srd_faults_judge(&w->faults, SRD_FAULT_RX, dev->name, qpn, op,
				 &v);
	}
	if (v.actions & ACT(DROP)) {
		c->fault_drops++;
		free(f);
		return;
	}
	if (v.actions) {
		c->fault_other++;
		wire_frame_apply(w, f, &v, WIRE_NEXT_DELIVER);
		return;
	}
	wire_rx_deliver(w, dev, &f->m, f->id_known, f->data, f->len);
	free(f);
}

static void frame_to_udp(struct srd_wire *w, struct wire_frame *f)
{
	struct srd_udp *u = w->udp;
	struct iovec iov;

	if (!u || !srd_addr_v4(&f->m.dst) != !srd_addr_v4(&f->m.src) ||
	    (!srd_addr_v4(&f->m.dst) && u->family != AF_INET6) ||
	    srd_udp_tx_reserve(u, f->len, 1)) {
		if (f->cnt)
			f->cnt->tx_drops++;
		free(f);
		return;
	}
	/* The frame goes now; its bytes must stay until the flush. */
	iov.iov_base = srd_udp_tx_alloc(u, f->len);
	iov.iov_len = f->len;
	memcpy(iov.iov_base, f->data, f->len);
	srd_udp_tx_queue(u, f->src_qpn, &f->m, &iov, 1, f->len, true, f->cnt);
	free(f);
}

void wire_frame_go(struct srd_wire *w, struct wire_frame *f)
{
	struct srd_device *dev;

	switch (f->next) {
	case WIRE_NEXT_ARRIVE:
		frame_arrive(w, f);
		return;
	case WIRE_NEXT_UDP:
		frame_to_udp(w, f);
		return;
	default:
		if (f->to_dev[0]) {
			wire_mcast_rx(w, &f->m, f->id_known, f->data, f->len, 0,
				      f->to_dev);
			free(f);
			return;
		}
		dev = frame_dev(w, f);
		if (dev)
			wire_rx_deliver(w, dev, &f->m, f->id_known, f->data,
					f->len);
		else
			srd_net_dev_counters(w->d, NULL)->rx_no_device++;
		free(f);
		return;
	}
}

static void unhold(struct srd_wire *w, struct wire_frame *f)
{
	list_del(&f->node);
	w->nheld--;
	w->held_bytes -= f->len;
	if (f->after_seq)
		w->nreorder--;
}

bool wire_release(struct srd_wire *w, uint64_t now)
{
	struct list_head due;

	list_head_init(&due);
	list_for_each (&w->held, it) {
		struct wire_frame *f = list_entry(it, struct wire_frame, node);

		if (f->due <= now || (f->after_seq && w->seq >= f->after_seq)) {
			unhold(w, f);
			list_add_tail(&due, &f->node);
		} else if (!w->nreorder) {
			break; /* the rest are due later */
		}
	}
	if (list_empty(&due))
		return false;
	/* Moving on may hold new frames: not while walking the list. */
	list_for_each (&due, it) {
		struct wire_frame *f = list_entry(it, struct wire_frame, node);

		list_del(&f->node);
		wire_frame_go(w, f);
	}
	return true;
}

void wire_held_fini(struct srd_wire *w)
{
	list_for_each (&w->held, it) {
		struct wire_frame *f = list_entry(it, struct wire_frame, node);

		unhold(w, f);
		free(f);
	}
}

void wire_mem_arrive(struct srd_wire *w, struct srd_pkt *pkt)
{
	struct srd_device *dev = pkt->dst_dev;
	struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);
	struct srd_fault_verdict v = { 0 };

	c->rx_packets += pkt->npkts;
	c->rx_bytes += wire_pkt_bytes(pkt);
	if (pkt->npkts == 1 &&
	    srd_faults_may_match(&w->faults, SRD_FAULT_RX, dev->name))
		srd_faults_judge(&w->faults, SRD_FAULT_RX, dev->name, pkt->qpn,
				 pkt->opcode, &v);
	if (v.actions & ACT(DROP)) {
		c->fault_drops++;
		return;
	}
	if (v.actions) {
		/* The sender's QP picks the UDP source port the frame's
		 * ICRC covers. */
		struct wire_frame *f =
			wire_frame_of_pkt(w, dev, pkt->src_qpn, pkt);

		c->fault_other++;
		if (f)
			wire_frame_apply(w, f, &v, WIRE_NEXT_DELIVER);
		return;
	}
	wire_deliver_counted(w->e, pkt, c);
}

void wire_capture_pkt(struct srd_wire *w, const struct srd_device *dev,
		      uint32_t qpn, const struct srd_pkt *pkt)
{
	struct srd_udp_meta m;
	struct srd_pcap_roce r;
	struct iovec iov;
	int len;

	wire_pkt_meta(w, dev, qpn, pkt, &m);
	len = wire_serialize(w, pkt, &m, w->scratch, SRD_UDP_MAX_PAYLOAD);
	if (len < 0)
		return;
	iov.iov_base = w->scratch;
	iov.iov_len = len;
	srd_capture_addr(&r, m.src.s6_addr, m.dst.s6_addr, m.sport, m.dport, 0);
	if (!srd_capture_iov(&w->cap, &r, &iov, 1, len))
		srd_net_dev_counters(w->d, dev)->captured++;
}
