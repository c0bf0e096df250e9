/* SPDX-License-Identifier: MIT */
/*
 * The in-memory wire: a packet for a GID of one of this daemon's devices
 * goes straight to the QP with its destination QPN on that device.  The
 * payload stays a reference to the sender's buffer; the receiver copies it
 * once into its destination.  Delivery is synchronous (see engine.h).
 *
 * What a network would check is checked here too: the opcode's transport
 * must match the QP type, and an RC/UC QP only accepts packets from the
 * GID its path points at.
 */
#include <string.h>

#include "daemon/transport/engine.h"

struct srd_device *wire_route(struct srd_daemon *d, const union ibv_gid *dgid)
{
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		for (unsigned int i = 0; i < SRD_MAX_GIDS; i++)
			if (dev->port.gid_valid[i] &&
			    !memcmp(dev->port.gid[i].raw, dgid->raw,
				    sizeof(dgid->raw)))
				return dev;
	}
	return NULL;
}

static bool type_matches(uint8_t opcode, enum ibv_qp_type type)
{
	switch (srd_op_transport(opcode)) {
	case ROCE_TR_RC:
		return type == IBV_QPT_RC;
	case ROCE_TR_UC:
		return type == IBV_QPT_UC;
	case ROCE_TR_UD:
		return type == IBV_QPT_UD;
	default:
		return false;
	}
}

void wire_send(struct srd_qp_transport *src, struct srd_pkt *pkt)
{
	struct srd_engine *e = src->eng;
	struct srd_qp *dst;

	/* Not one of ours: the UDP wire's job; dropped until it exists. */
	if (!pkt->dst_dev || !(pkt->mask & OPF_VALID)) {
		e->wire_drops++;
		return;
	}
	dst = qp_lookup_num(e->d, pkt->qpn);
	if (!dst || dst->dev != pkt->dst_dev || !dst->tp) {
		e->wire_drops++;
		return;
	}
	if (!type_matches(pkt->opcode, dst->type) ||
	    pkt->pkey != ROCE_DEFAULT_PKEY ||
	    (dst->type != IBV_QPT_UD &&
	     memcmp(dst->attr.ah_attr.grh.dgid.raw, pkt->sgid.raw,
		    sizeof(pkt->sgid.raw)))) {
		dst->tp->cnt.rx_drops += pkt->npkts;
		return;
	}
	if (pkt->mask & OPF_RESP)
		completer_rx(dst->tp, pkt);
	else
		responder_rx(dst->tp, pkt);
}
