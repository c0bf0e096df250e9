/* SPDX-License-Identifier: MIT */
/*
 * Capture of every packet the wires carry into a pcap file (Ethernet
 * link type, so IPv4 and IPv6 packets mix), for Wireshark and tshark.
 * The in-memory wire has no IP or UDP headers: they are synthesized from
 * the GIDs and ports, as a UDP wire would have sent them.
 */
#ifndef SOFTRDMA_DAEMON_NET_CAPTURE_H
#define SOFTRDMA_DAEMON_NET_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "daemon/net/pcap.h"

struct srd_capture {
	struct srd_pcap_writer w;
	uint8_t *buf; /* gathers a packet */
	size_t cap;
	uint64_t last_flush; /* monotonic ns */
	bool dirty;	     /* written since the last flush */
	bool failed;	     /* a write failed: said once, then off */
	uint64_t packets;    /* written */
	char path[4096];
};

/* Creates (truncates) path; 0 or -errno. */
int srd_capture_open(struct srd_capture *c, const char *path);
void srd_capture_close(struct srd_capture *c);

/*
 * One packet: addresses as r says (its ICRC taken from the data, unless
 * r->fill_icrc), the UDP payload (BTH ... ICRC, len bytes) gathered from
 * iov.  0 or -errno.
 */
int srd_capture_iov(struct srd_capture *c, const struct srd_pcap_roce *r,
		    const struct iovec *iov, int iovcnt, size_t len);

/* Write out what is buffered if it is older than max_age_ns. */
void srd_capture_flush(struct srd_capture *c, uint64_t now, uint64_t max_age);

/*
 * Addresses of a packet from its GIDs (an IPv4-mapped pair is IPv4) and
 * UDP ports (host order).
 */
void srd_capture_addr(struct srd_pcap_roce *r, const uint8_t sgid[16],
		      const uint8_t dgid[16], uint16_t sport, uint16_t dport,
		      uint16_t ip_id);

#endif
