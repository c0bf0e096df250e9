/* SPDX-License-Identifier: MIT */
/*
 * The receive path from bytes: packets from the UDP socket and frames the
 * fault injection kept.  Everything a peer writes is distrusted: lengths,
 * ICRC and headers are checked here, the rest (PSN window, opcode
 * sequence, keys, lengths against the QP) by the responder and completer,
 * which NAK or drop as IBTA says.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/core/mcast.h"
#include "daemon/net/icrc.h"
#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

void wire_rx_deliver(struct srd_wire *w, struct srd_device *dev,
		     const struct srd_udp_meta *m, bool id_known, uint8_t *buf,
		     size_t len)
{
	struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);
	struct srd_pkt pkt;
	int hl;

	if (len < SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE ||
	    len > SRD_UDP_MAX_PAYLOAD) {
		c->rx_malformed++;
		return;
	}
	if (wire_check_icrc(m, id_known, buf, len)) {
		c->rx_icrc_errors++;
		return;
	}
	hl = srd_pkt_hdr_read(&pkt, buf, len - SRD_ICRC_SIZE);
	if (hl < 0 || pkt.tver) {
		c->rx_malformed++;
		return;
	}
	memcpy(pkt.sgid.raw, &m->src, 16);
	memcpy(pkt.dgid.raw, &m->dst, 16);
	pkt.tclass = m->tclass;
	pkt.hop_limit = m->hop_limit;
	pkt.dst_dev = dev;
	if (pkt.mask & OPF_DETH)
		pkt.src_qpn = pkt.deth.sqp;
	/* The responder copies the payload out of the receive buffer. */
	dma_init_buf(&pkt.pay, buf + hl, pkt.paylen);
	wire_deliver_counted(w->e, &pkt, c);
}

int wire_deliver_counted(struct srd_engine *e, struct srd_pkt *pkt,
			 struct srd_net_counters *c)
{
	int err = wire_deliver(e, pkt);

	if (!err || !c)
		return err;
	if (err == -ENOENT)
		c->rx_unknown_qp += pkt->npkts;
	else
		c->rx_drops += pkt->npkts;
	return err;
}

void wire_peek_bth(const uint8_t *buf, size_t len, uint32_t *qpn,
		   uint8_t *opcode)
{
	struct roce_bth bth;

	*qpn = 0;
	*opcode = 0;
	if (len < sizeof(bth))
		return;
	memcpy(&bth, buf, sizeof(bth));
	*opcode = bth.opcode;
	*qpn = be32toh(bth.qpn) & ROCE_QPN_MASK;
}

struct srd_net_counters *wire_rx_count(struct srd_wire *w,
				       const struct srd_device *dev,
				       const struct srd_udp_meta *m, size_t len)
{
	struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);

	c->rx_packets++;
	c->rx_udp_packets++;
	c->rx_bytes += len;
	if (m->truncated) {
		c->rx_malformed++;
		return NULL;
	}
	return c;
}

bool wire_rx_judge(struct srd_wire *w, const struct srd_device *dev,
		   struct srd_net_counters *c, const struct srd_udp_meta *m,
		   const uint8_t *buf, size_t len, bool to_dev)
{
	struct srd_fault_verdict v = { 0 };
	struct wire_frame *f;
	uint32_t qpn;
	uint8_t op;

	if (!w->slow ||
	    !srd_faults_may_match(&w->faults, SRD_FAULT_RX, dev->name))
		return true;
	wire_peek_bth(buf, len, &qpn, &op);
	srd_faults_judge(&w->faults, SRD_FAULT_RX, dev->name, qpn, op, &v);
	if (!v.actions)
		return true;
	if (v.actions & (1u << SRD_FAULT_DROP)) {
		c->fault_drops++;
		return false;
	}
	c->fault_other++;
	f = wire_frame_of_bytes(m, buf, len);
	if (f) {
		if (to_dev)
			snprintf(f->to_dev, sizeof(f->to_dev), "%s", dev->name);
		wire_frame_apply(w, f, &v, WIRE_NEXT_DELIVER);
	}
	return false;
}

void wire_udp_rx(void *arg, const struct srd_udp_meta *m, uint8_t *buf,
		 size_t len)
{
	struct srd_wire *w = arg;
	struct srd_device *dev;
	struct srd_net_counters *c;
	uint32_t qpn;
	uint8_t op;

	w->seq++;
	wire_peek_bth(buf, len, &qpn, &op);
	dev = wire_dev_for(w->d, m->dst.s6_addr, qpn);
	if (!dev && mcast_gid_is_mc(m->dst.s6_addr)) {
		wire_mcast_rx(w, m, false, buf, len,
			      WIRE_MC_UDP | WIRE_MC_JUDGE, NULL);
		return;
	}
	if (!dev) {
		srd_net_dev_counters(w->d, NULL)->rx_no_device++;
		return;
	}
	c = wire_rx_count(w, dev, m, len);
	if (!c)
		return;
	if (w->udp && w->udp->cap && w->udp->capture_rx)
		c->captured++;
	if (wire_rx_judge(w, dev, c, m, buf, len, false))
		wire_rx_deliver(w, dev, m, false, buf, len);
}
