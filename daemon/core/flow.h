/* SPDX-License-Identifier: MIT */
/*
 * Raw packet QPs and flow steering: a device's packet socket on its
 * interface (transport/raw.c) and the rules (ibv_create_flow) that steer
 * the frames it receives to raw packet QPs (flow.c).
 */
#ifndef SOFTRDMA_DAEMON_FLOW_H
#define SOFTRDMA_DAEMON_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/list.h"
#include "daemon/core/objects.h"

/* Rules a device and a client may hold; specs in one rule. */
#define SRD_FLOW_MAX_PER_DEV 4096
#define SRD_FLOW_MAX_PER_CLIENT 1024
#define SRD_FLOW_MAX_SPECS 8

/* Ethernet header; with one 802.1Q tag. */
#define SRD_ETH_HLEN 14
#define SRD_VLAN_HLEN 4

/*
 * What a rule can look at in a frame, as bytes in network order, so a
 * rule is a masked compare of two keys.  The layer bytes (l3, proto,
 * l4_ok, vlan) let a spec require its layer: an IPv4 spec asks l3 == 4,
 * a UDP spec proto == 17 and l4_ok (ports present: a first fragment).
 */
struct srd_flow_key {
	uint8_t dmac[6];
	uint8_t smac[6];
	uint8_t vlan; /* 1: the frame carries an 802.1Q tag */
	uint8_t l3;   /* 4, 6, or 0 for anything else */
	uint8_t proto;
	uint8_t l4_ok;
	uint8_t ethertype[2]; /* inside the tag, if any */
	uint8_t tci[2];
	uint8_t src_ip[16]; /* IPv4: the first 4 bytes */
	uint8_t dst_ip[16];
	uint8_t tos; /* IPv4 TOS, IPv6 traffic class */
	uint8_t ttl; /* IPv4 TTL, IPv6 hop limit */
	uint8_t flow_label[4];
	uint8_t sport[2];
	uint8_t dport[2];
};

struct srd_flow {
	struct list_node node; /* in raw->rules, by priority */
	uint32_t handle;
	struct srd_client *owner;
	struct srd_qp *qp;
	uint8_t type; /* enum ibv_flow_attr_type */
	bool dont_trap;
	uint16_t priority;
	struct srd_flow_key val; /* already masked */
	struct srd_flow_key mask;
};

/* Frames the device's raw side saw and what became of them. */
struct srd_raw_counters {
	uint64_t rx_frames;    /* arrived on the interface */
	uint64_t rx_unsteered; /* no rule took it */
	uint64_t rx_roce;      /* RoCE v2 frames left to the RoCE path */
	uint64_t rx_no_rwqe;   /* steered to a QP without a receive posted */
	uint64_t rx_bad;       /* too short, too long, unreadable */
	uint64_t tx_frames;
	uint64_t tx_drops; /* the interface refused them */
};

/* A device's raw side, while it has raw packet QPs. */
struct srd_raw_port {
	struct srd_device *dev;
	int fd; /* AF_PACKET, bound to the interface */
	int ifindex;
	bool loopback; /* lo: every frame sent comes back in */
	bool ready;    /* readable, as far as the loop knows */
	uint32_t nqps;
	uint32_t nrules;
	uint32_t idle_passes;
	struct list_head rules;
	struct srd_raw_counters cnt;
};

/* --- flow.c --- */
/* The key of a frame's bytes; false if it is shorter than a header. */
bool flow_key_of(const uint8_t *buf, size_t len, struct srd_flow_key *k);
/* Is the frame a RoCE v2 packet (UDP to port 4791 or the daemon's)? */
bool flow_key_is_roce(const struct srd_flow_key *k, uint16_t roce_port);
/*
 * The QPs a received frame goes to, each once: the NORMAL rules of the
 * best priority that match (and, past a DONT_TRAP rule, the next), else
 * the MC_DEFAULT rules for a multicast frame, else ALL_DEFAULT; SNIFFER
 * rules always.  outgoing: a frame sent on the interface (sniffers
 * only); roce: one the RoCE path owns (sniffers only).  Returns how many
 * QPs were written to out (at most max); *steered: how many of them are
 * there by a rule other than a sniffer's.
 */
uint32_t flow_steer(struct srd_raw_port *rp, const struct srd_flow_key *k,
		    bool outgoing, bool roce, struct srd_qp **out, uint32_t max,
		    uint32_t *steered);
/* Destroy the rules steering to qp (the QP goes). */
void flow_qp_gone(struct srd_qp *qp);
/* Destroy every rule c holds. */
void flow_client_gone(struct srd_client *c);

/* --- transport/raw.c --- */
/* The device's raw side, opened by its first raw packet QP: 0,
 * -EOPNOTSUPP (the daemon may not open a packet socket), -ENODEV. */
int raw_port_get(struct srd_device *dev);
void raw_port_put(struct srd_device *dev);
/* The longest frame a raw QP may send on dev (Ethernet header with a
 * tag, and the interface MTU). */
uint32_t raw_max_frame(const struct srd_device *dev);
/* Can this daemon open packet sockets at all (CAP_NET_RAW)? */
bool raw_supported(void);
/* sum += c, counter by counter. */
void raw_counters_add(struct srd_raw_counters *sum,
		      const struct srd_raw_counters *c);

#endif
