/* SPDX-License-Identifier: MIT */
/* Multicast on the in-memory and UDP wires (see mcast.h). */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/core/core.h"
#include "daemon/device/link.h"
#include "daemon/core/mcast.h"
#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

static bool dev_on_lo(const struct srd_device *dev)
{
	return !strcmp(dev->netdev, "lo");
}

static bool same_link(const struct srd_device *a, const struct srd_device *b)
{
	return !strcmp(a->netdev, b->netdev);
}

/* Does another device on dev's interface still hold the group? */
static bool group_elsewhere(struct srd_daemon *d, const struct srd_device *dev,
			    const uint8_t gid[16])
{
	list_for_each (&d->devices, it) {
		struct srd_device *o = list_entry(it, struct srd_device, node);

		if (o != dev && same_link(o, dev) && mcast_find(o, gid))
			return true;
	}
	return false;
}

void srd_net_mcast_join(struct srd_daemon *d, const struct srd_device *dev,
			const uint8_t gid[16], bool join)
{
	struct srd_wire *w = d->engine ? d->engine->wire : NULL;
	unsigned int ifindex;
	int ret;

	if (!w || !w->udp)
		return;
	/* One membership per interface and group, whoever asked first. */
	if (group_elsewhere(d, dev, gid))
		return;
	ifindex = if_nametoindex(dev->netdev);
	if (srd_addr_v4((const struct in6_addr *)gid)) {
		struct ip_mreqn mr = { .imr_ifindex = (int)ifindex };

		memcpy(&mr.imr_multiaddr, gid + 12, 4);
		ret = setsockopt(w->udp->rx_fd, IPPROTO_IP,
				 join ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP,
				 &mr, sizeof(mr));
	} else if (w->udp->family == AF_INET6) {
		struct ipv6_mreq mr = { .ipv6mr_interface = ifindex };

		memcpy(&mr.ipv6mr_multiaddr, gid, 16);
		ret = setsockopt(w->udp->rx_fd, IPPROTO_IPV6,
				 join ? IPV6_ADD_MEMBERSHIP
				      : IPV6_DROP_MEMBERSHIP,
				 &mr, sizeof(mr));
	} else {
		errno = EAFNOSUPPORT;
		ret = -1;
	}
	if (ret && !(join && errno == EADDRINUSE))
		srd_log(SRD_LOG_WARN, "%s: %s multicast group on %s: %s",
			dev->name, join ? "joining" : "leaving", dev->netdev,
			strerror(errno));
}

void srd_udp_mcast_setup(struct srd_udp *u, bool loop)
{
	int v = loop;

	for (unsigned int k = 0; k < SRD_UDP_POOL; k++) {
		if (u->tx_fd[k] < 0)
			continue;
		setsockopt(u->tx_fd[k], IPPROTO_IP, IP_MULTICAST_LOOP, &v,
			   sizeof(v));
		if (u->family == AF_INET6)
			setsockopt(u->tx_fd[k], IPPROTO_IPV6,
				   IPV6_MULTICAST_LOOP, &v, sizeof(v));
	}
}

bool wire_pkt_is_mcast(const struct srd_pkt *pkt)
{
	return (pkt->mask & OPF_DETH) && mcast_gid_is_mc(pkt->dgid.raw);
}

int wire_mcast_deliver(struct srd_engine *e, struct srd_pkt *pkt)
{
	struct srd_mcast_group *g = mcast_find(pkt->dst_dev, pkt->dgid.raw);

	if (!g)
		return -ENOENT;
	if (!roce_pkey_ok(pkt->pkey)) {
		wire_bad_pkey(pkt->dst_dev);
		return -EPERM;
	}
	if (srd_op_transport(pkt->opcode) != ROCE_TR_UD)
		return -EPERM;
	/* Each member reads the payload from the same place: a copy of
	 * the packet each, so one's progress is not another's. */
	for (uint32_t i = 0; i < g->nqps; i++) {
		struct srd_qp *qp = g->qp[i];
		struct srd_pkt p = *pkt;

		if (qp->tp)
			responder_rx(qp->tp, &p);
	}
	return 0;
}

/*
 * Faults or capture on, and the group's members all in this daemon: the
 * packet is judged by the sender's transmit rules, then travels as a frame
 * (bytes with their ICRC), which each member device counts, captures and
 * judges by its receive rules.
 */
static void mcast_send_slow(struct srd_wire *w, struct srd_qp_transport *src,
			    struct srd_pkt *pkt)
{
	struct srd_device *dev = src->qp->dev;
	struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);
	struct srd_fault_verdict v = { 0 };
	struct wire_frame *f;

	c->tx_packets++;
	c->tx_bytes += wire_pkt_bytes(pkt);
	if (srd_faults_may_match(&w->faults, SRD_FAULT_TX, dev->name))
		srd_faults_judge(&w->faults, SRD_FAULT_TX, dev->name,
				 src->qp->qpn, pkt->opcode, &v);
	if (v.actions & (1u << SRD_FAULT_DROP)) {
		c->fault_drops++;
		return;
	}
	f = wire_frame_of_pkt(w, dev, src->qp->qpn, pkt);
	if (!f) {
		c->tx_drops++;
		return;
	}
	f->cnt = c;
	if (v.actions) {
		c->fault_other++;
		wire_frame_apply(w, f, &v, WIRE_NEXT_ARRIVE);
	} else {
		f->next = WIRE_NEXT_ARRIVE;
		wire_frame_go(w, f);
	}
}

bool wire_mcast_send(struct srd_qp_transport *src, struct srd_pkt *pkt)
{
	struct srd_engine *e = src->eng;
	struct srd_wire *w = e->wire;
	struct srd_device *dev = src->qp->dev;
	bool udp = w && w->udp && !dev_on_lo(dev);
	uint32_t bytes;

	/* Forced UDP: the kernel loops the packet back to us. */
	if (w && w->udp && w->force_udp)
		return false;
	if (w && w->slow && !udp) {
		mcast_send_slow(w, src, pkt);
		return true;
	}
	bytes = wire_pkt_bytes(pkt);
	if (w && !udp) {
		struct srd_net_counters *c = srd_net_dev_counters(w->d, dev);

		c->tx_packets++;
		c->tx_bytes += bytes;
		if (w->capturing)
			wire_capture_pkt(w, dev, src->qp->qpn, pkt);
	}
	list_for_each (&e->d->devices, it) {
		struct srd_device *o = list_entry(it, struct srd_device, node);
		struct srd_pkt p;

		if (!o->mcast || !same_link(o, dev))
			continue;
		p = *pkt;
		p.dst_dev = o;
		if (w) {
			struct srd_net_counters *c =
				srd_net_dev_counters(w->d, o);

			c->rx_packets++;
			c->rx_bytes += bytes;
		}
		if (wire_mcast_deliver(e, &p))
			e->wire_drops++;
	}
	return !udp;
}

void wire_mcast_rx(struct srd_wire *w, const struct srd_udp_meta *m,
		   bool id_known, uint8_t *buf, size_t len, unsigned int how,
		   const char *only)
{
	bool taken = false;

	list_for_each (&w->d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);
		struct srd_net_counters *c;

		if (only ? strcmp(dev->name, only) != 0
			 : !mcast_find(dev, m->dst.s6_addr))
			continue;
		/* Only the devices of the interface it came in on. */
		if (!only && m->ifindex && link_of(dev)->ifindex != m->ifindex)
			continue;
		taken = true;
		if (only) {
			/* Counted and judged when it first arrived. */
			wire_rx_deliver(w, dev, m, id_known, buf, len);
			continue;
		}
		if (how & WIRE_MC_UDP) {
			c = wire_rx_count(w, dev, m, len);
			if (!c)
				continue;
		} else {
			c = srd_net_dev_counters(w->d, dev);
			c->rx_packets++;
			c->rx_bytes += len;
		}
		if (!(how & WIRE_MC_JUDGE) ||
		    wire_rx_judge(w, dev, c, m, buf, len, true))
			wire_rx_deliver(w, dev, m, id_known, buf, len);
	}
	if (!taken)
		srd_net_dev_counters(w->d, NULL)->rx_no_device++;
}
