/* SPDX-License-Identifier: MIT */
/*
 * The UDP wire's send path: the transmit fault rules, then each packet
 * onto the socket's queue, its payload straight from the MRs.
 */
#include <errno.h>

#include "daemon/core/core.h"
#include "daemon/net/icrc.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

/* Payload pieces of one packet sent straight from the MRs. */
#define PAY_IOV 8

static const uint8_t zeros[4];

/* Whether the kernel can carry a packet from m->src to m->dst of len
 * bytes (BTH ... ICRC) out of device dev. */
static bool udp_sendable(struct srd_wire *w, const struct srd_device *dev,
			 const struct srd_udp_meta *m, size_t len)
{
	bool v4 = srd_addr_v4(&m->dst);
	size_t ip = v4 ? 20 : 40;

	if (v4 != srd_addr_v4(&m->src) || IN6_IS_ADDR_UNSPECIFIED(&m->src))
		return false;
	if (!v4 && w->udp->family != AF_INET6)
		return false;
	if (len > SRD_UDP_MAX_PAYLOAD ||
	    (dev->port.netdev_mtu && ip + 8 + len > dev->port.netdev_mtu))
		return false;
	return true;
}

/* A packet (npkts 1) onto the UDP queue, its payload straight from the
 * MRs where the daemon maps them. */
static void udp_queue_pkt(struct srd_wire *w, const struct srd_device *dev,
			  uint32_t qpn, const struct srd_pkt *pkt,
			  struct srd_net_counters *c)
{
	struct srd_udp *u = w->udp;
	struct srd_udp_meta m;
	struct iovec iov[PAY_IOV + 2];
	unsigned int hl = srd_pkt_hdr_len(pkt), pad = srd_pkt_pad(pkt->paylen);
	size_t len = hl + pkt->paylen + pad + SRD_ICRC_SIZE;
	struct srd_dma pay = pkt->pay;
	int n = 0, k;
	uint8_t *hdr;

	wire_pkt_meta(w, dev, qpn, pkt, &m);
	if (!udp_sendable(w, dev, &m, len) ||
	    srd_udp_tx_reserve(u, hl + pkt->paylen, PAY_IOV + 2)) {
		c->tx_drops++;
		return;
	}
	hdr = srd_udp_tx_alloc(u, hl);
	srd_pkt_hdr_write(pkt, hdr, hl);
	iov[n].iov_base = hdr;
	iov[n++].iov_len = hl;
	if (pkt->paylen) {
		/* UC and UD complete once queued: their buffers may be
		 * reused before the flush, so they are copied too. */
		k = pay.kind == SRD_DMA_BUF ||
				    srd_op_transport(pkt->opcode) != ROCE_TR_RC
			    ? -ENOTSUP
			    : dma_map_iov(w->d, &pay, pkt->paylen, iov + n,
					  PAY_IOV);
		if (k == -ENOTSUP || k == -E2BIG) {
			/* Inline data (its slot may be reused before the
			 * flush) or memory reached through the client: a
			 * copy of our own. */
			struct srd_dma dst;
			uint8_t *b = srd_udp_tx_alloc(u, pkt->paylen);

			pay = pkt->pay;
			dma_init_buf(&dst, b, pkt->paylen);
			k = dma_copy(w->d, &dst, &pay, pkt->paylen) ? -EFAULT
								    : 1;
			iov[n].iov_base = b;
			iov[n].iov_len = pkt->paylen;
		}
		if (k < 0) {
			/* The memory went away: lost, as on a network. */
			c->tx_drops++;
			return;
		}
		n += k;
	}
	if (pad) {
		iov[n].iov_base = (void *)zeros;
		iov[n++].iov_len = pad;
	}
	srd_udp_tx_queue(u, qpn, &m, iov, n, len, false, c);
}

/* The UDP wire's tx point: faults, then the queue. */
void wire_udp_send(struct srd_wire *w, const struct srd_device *dev,
		   uint32_t qpn, const struct srd_pkt *pkt)
{
	struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);
	struct srd_fault_verdict v = { 0 };

	w->seq++;
	c->tx_packets++;
	c->tx_udp_packets++;
	c->tx_bytes += wire_pkt_bytes(pkt);
	if (!w->udp) {
		c->tx_drops++;
		return;
	}
	if (w->slow &&
	    srd_faults_may_match(&w->faults, SRD_FAULT_TX, dev->name))
		srd_faults_judge(&w->faults, SRD_FAULT_TX, dev->name, qpn,
				 pkt->opcode, &v);
	if (v.actions & (1u << SRD_FAULT_DROP)) {
		c->fault_drops++;
		return;
	}
	if (v.actions) {
		struct wire_frame *f = wire_frame_of_pkt(w, dev, qpn, pkt);

		c->fault_other++;
		if (f) {
			f->cnt = c;
			wire_frame_apply(w, f, &v, WIRE_NEXT_UDP);
		} else {
			c->tx_drops++;
		}
		return;
	}
	udp_queue_pkt(w, dev, qpn, pkt, c);
}
