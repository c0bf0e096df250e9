/* SPDX-License-Identifier: MIT */
/*
 * Multicast on the wires (the groups themselves: daemon/core/mcast.h).
 *
 * Sending: a UD packet to a multicast GID reaches the members of its group
 * on every device of this daemon that shares the sender's interface (the
 * in-memory wire, as Linux loops a multicast packet back to its own
 * interface), and leaves on UDP for the IP group the GID maps to
 * (::ffff:224.x.y.z -> 224.x.y.z, ff.. as it is) out of that interface.
 * The UDP sockets do not loop multicast back (the in-memory wire has
 * delivered it), except with --wire udp, where the kernel's loopback is
 * the only way to the local members.  A device on lo sends nothing on
 * UDP: nobody else is there.
 *
 * Receiving: the receive socket joins the IP group on a device's interface
 * while a QP of that device is attached to the group; a packet arriving
 * for a multicast address goes to the devices on the interface it came
 * in on, and there to every attached QP whose Q_Key matches (the
 * responder's check).
 */
#ifndef SOFTRDMA_DAEMON_NET_MCAST_H
#define SOFTRDMA_DAEMON_NET_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct srd_daemon;
struct srd_device;
struct srd_engine;
struct srd_pkt;
struct srd_qp_transport;
struct srd_udp;
struct srd_udp_meta;
struct srd_wire;

/* Join (or leave) the IP group of a multicast GID on dev's interface. */
void srd_net_mcast_join(struct srd_daemon *d, const struct srd_device *dev,
			const uint8_t gid[16], bool join);
/* The UDP sockets' multicast loopback (on only for --wire udp). */
void srd_udp_mcast_setup(struct srd_udp *u, bool loop);

/* Whether a packet goes to a multicast group. */
bool wire_pkt_is_mcast(const struct srd_pkt *pkt);
/*
 * A multicast packet from src: delivered to the local members.  Returns
 * true when the packet goes no further, false when it also leaves on the
 * UDP wire (the caller sends it there).
 */
bool wire_mcast_send(struct srd_qp_transport *src, struct srd_pkt *pkt);
/* Deliver a packet for QPN 0xFFFFFF on pkt->dst_dev to its group's
 * members.  0, or -ENOENT when no QP there is attached. */
int wire_mcast_deliver(struct srd_engine *e, struct srd_pkt *pkt);
/* How multicast bytes arrive (wire_mcast_rx). */
enum {
	WIRE_MC_UDP = 1 << 0,	/* from the socket: counted as UDP */
	WIRE_MC_JUDGE = 1 << 1, /* the receive fault rules apply */
};
/*
 * Multicast bytes arriving (from UDP, or a frame of the in-memory wire):
 * to each device of the interface m->ifindex names that holds the group,
 * each counted and judged by the receive fault rules on its own.  only:
 * the name of the one device a delayed or duplicated frame goes to
 * (counted and judged when it first arrived), or NULL.
 */
void wire_mcast_rx(struct srd_wire *w, const struct srd_udp_meta *m,
		   bool id_known, uint8_t *buf, size_t len, unsigned int how,
		   const char *only);

#endif
