/* SPDX-License-Identifier: MIT */
/*
 * The in-memory wire: a packet for a GID of one of this daemon's devices
 * goes straight to the QP with its destination QPN on that device.  The
 * payload stays a reference to the sender's buffer; the receiver copies it
 * once into its destination.  Delivery is synchronous (see engine.h).
 *
 * What a network would check is checked here too, for packets from UDP as
 * well: the opcode's transport must match the QP type, and an RC/UC QP
 * only accepts packets from the GID its path points at.
 */
#include <errno.h>
#include <string.h>

#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

static bool dev_has_gid(const struct srd_device *dev, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < SRD_MAX_GIDS; i++)
		if (dev->port.gid_valid[i] &&
		    !memcmp(dev->port.gid[i].raw, gid, 16))
			return true;
	return false;
}

struct srd_device *wire_dev_by_gid(struct srd_daemon *d, const uint8_t gid[16])
{
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (dev_has_gid(dev, gid))
			return dev;
	}
	return NULL;
}

struct srd_device *wire_dev_for(struct srd_daemon *d, const uint8_t gid[16],
				uint32_t qpn)
{
	struct srd_device *first = wire_dev_by_gid(d, gid);
	struct srd_qp *qp;

	/* QP1 and multicast belong to every device; the first answers. */
	if (!first || qpn == 1 || qpn == ROCE_QPN_MASK)
		return first;
	qp = qp_lookup_num(d, qpn);
	if (qp && qp->dev != first && dev_has_gid(qp->dev, gid))
		return qp->dev;
	return first;
}

struct srd_device *wire_route(struct srd_daemon *d, const union ibv_gid *dgid,
			      uint32_t qpn)
{
	/* Forced UDP: no destination is local, so no trains either. */
	if (d->engine && d->engine->wire && d->engine->wire->force_udp)
		return NULL;
	return wire_dev_for(d, dgid->raw, qpn & ROCE_QPN_MASK);
}

static bool type_matches(uint8_t opcode, enum ibv_qp_type type)
{
	switch (srd_op_transport(opcode)) {
	case ROCE_TR_XRC: /* requests to the target, responses back */
		return type == ((srd_op_mask(opcode) & OPF_RESP)
					? IBV_QPT_XRC_SEND
					: IBV_QPT_XRC_RECV);
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

void wire_bad_pkey(struct srd_device *dev)
{
	if (dev && dev->port.bad_pkey < 0xffff)
		dev->port.bad_pkey++;
}

int wire_deliver(struct srd_engine *e, struct srd_pkt *pkt)
{
	struct srd_qp *dst;

	if (!pkt->dst_dev || !(pkt->mask & OPF_VALID))
		return -ENOENT;
	if (pkt->qpn == ROCE_QPN_MASK && (pkt->mask & OPF_DETH))
		return wire_mcast_deliver(e, pkt); /* 0xFFFFFF: a group */
	/* QPN 1 is each device's own QP1 (cm/gsi.c). */
	dst = pkt->qpn == 1 ? pkt->dst_dev->gsi : qp_lookup_num(e->d, pkt->qpn);
	if (!dst || dst->dev != pkt->dst_dev || !dst->tp)
		return -ENOENT;
	if (!roce_pkey_ok(pkt->pkey)) {
		wire_bad_pkey(pkt->dst_dev);
		dst->tp->cnt.rx_drops += pkt->npkts;
		return -EPERM;
	}
	if (!type_matches(pkt->opcode, dst->type) ||
	    (dst->type != IBV_QPT_UD &&
	     memcmp(dst->attr.ah_attr.grh.dgid.raw, pkt->sgid.raw,
		    sizeof(pkt->sgid.raw)))) {
		dst->tp->cnt.rx_drops += pkt->npkts;
		return -EPERM;
	}
	if (pkt->mask & OPF_RESP)
		completer_rx(dst->tp, pkt);
	else
		responder_rx(dst->tp, pkt);
	return 0;
}
