/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 UDP wire's sockets: no raw socket, no privilege.
 *
 * Receiving: one socket for the whole daemon, dual stack ([::]:port with
 * IPV6_V6ONLY off, so IPv4 peers appear IPv4-mapped, exactly as RoCE v2
 * GIDs write them), or IPv4 only where the kernel has no IPv6.  It learns
 * each packet's destination address (IP_PKTINFO / IPV6_PKTINFO: which
 * device it is for), traffic class and hop limit, and takes UDP GRO
 * batches apart.
 *
 * Sending: RoCE v2 wants a UDP source port fixed per QP (rxe hashes the
 * QPN into 0xC000..0xFFFF; switches spread flows by it).  A socket per
 * port would be a socket per QP, so there is a pool of SRD_UDP_POOL
 * sockets bound to 0xC000 + k, k = 0..SRD_UDP_POOL-1, and a QP sends
 * through socket srd_udp_pool_index(qpn): every packet of a QP leaves
 * from the same port, and QPs spread over SRD_UDP_POOL flows.  The pool
 * sockets share their ports with other daemons of the namespace
 * (SO_REUSEPORT): nothing is ever sent to them.  A port some other program
 * holds is replaced by a free one.  Don't Fragment is set
 * (IP_PMTUDISC_DO), so Linux sends IPv4 identification 0, which the ICRC
 * covers; under UDP GSO the k-th segment of a batch gets identification k.
 * The source address (the QP's source GID), traffic class and TTL (the
 * GRH's) go with each packet as control messages.
 *
 * Packets are queued during an engine pass and leave in one sendmmsg at
 * its end (or when the queue fills), runs of equal-size packets on one
 * flow as UDP GSO batches where the kernel has UDP_SEGMENT.
 */
#ifndef SOFTRDMA_DAEMON_NET_UDP_H
#define SOFTRDMA_DAEMON_NET_UDP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/inet.h"
#include "daemon/net/capture.h"
#include "daemon/net/icrc.h"
#include "daemon/net/net.h"

#define SRD_UDP_POOL 16
#define SRD_UDP_SPORT_BASE 0xc000
/* Largest UDP payload of one packet we send or accept. */
#define SRD_UDP_MAX_PAYLOAD 65507

/* Sizes of the send queue, flushed when any fills. */
#define SRD_UDP_TXQ_PKTS 512
#define SRD_UDP_TXQ_IOVS 4096
#define SRD_UDP_TXQ_MSGS 512
#define SRD_UDP_TX_ARENA (2u << 20)
/* Datagrams per recvmmsg. */
#define SRD_UDP_RX_BATCH 32

/* One datagram's addresses; IPv4 addresses IPv4-mapped. */
struct srd_udp_meta {
	struct in6_addr src;
	struct in6_addr dst;
	uint16_t sport; /* host order */
	uint16_t dport;
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t ifindex; /* rx: where it arrived; tx: scope of link-local */
	bool truncated;	  /* rx: longer than the buffer */
};

/* A packet received: buf holds len bytes of UDP payload (BTH ... ICRC);
 * the callee may modify them. */
typedef void srd_udp_rx_fn(void *arg, const struct srd_udp_meta *m,
			   uint8_t *buf, size_t len);

/* One sendmsg: a single packet or a GSO batch of equal-size ones. */
struct srd_udp_msg {
	struct srd_udp_meta m;
	struct srd_net_counters *cnt; /* charged with drops */
	uint32_t iov_first;
	uint32_t niov;
	uint32_t bytes;
	uint16_t seg; /* size of each packet but the last */
	uint16_t nseg;
	uint8_t sock; /* pool index */
	bool closed;  /* takes no more packets */
};

struct srd_udp {
	int family; /* AF_INET6 (dual stack) or AF_INET */
	int rx_fd;
	uint16_t port; /* bound, host order: where peers listen too */
	int tx_fd[SRD_UDP_POOL];
	uint16_t tx_port[SRD_UDP_POOL];
	bool gso;
	bool gro;
	int rcvbuf; /* receive buffer the kernel granted */
	unsigned int gso_max_segs;

	/* receiving */
	struct mmsghdr rmsg[SRD_UDP_RX_BATCH];
	struct iovec riov[SRD_UDP_RX_BATCH];
	struct sockaddr_in6 rname[SRD_UDP_RX_BATCH];
	uint8_t *rbuf; /* SRD_UDP_RX_BATCH buffers of rbufsz */
	size_t rbufsz;
	uint8_t *rctl;

	/* sending */
	struct srd_udp_msg msg[SRD_UDP_TXQ_MSGS];
	unsigned int nmsg;
	unsigned int npkts;
	struct iovec iov[SRD_UDP_TXQ_IOVS];
	unsigned int niov;
	uint8_t *arena;
	size_t arena_used;
	struct mmsghdr tmsg[SRD_UDP_TXQ_MSGS];
	struct sockaddr_in6 tname[SRD_UDP_TXQ_MSGS];
	uint8_t tctl[SRD_UDP_TXQ_MSGS][128];

	struct srd_capture *cap; /* NULL: no capture */
	bool capture_rx;	 /* also capture what arrives */
	uint64_t tx_batches;	 /* sendmmsg calls */
	uint64_t tx_gso_msgs;	 /* GSO batches sent */
	uint64_t rx_gro_msgs;	 /* GRO batches received */
};

/*
 * Opens the sockets: receiving on port (0: any free port, then u->port
 * says which), the pool for sending.  0 or -errno (-EADDRINUSE: another
 * daemon has the port).
 */
int srd_udp_open(struct srd_udp *u, uint16_t port);
void srd_udp_close(struct srd_udp *u);

/* What the ICRC of an IPv4 packet covers of m, sent from m->src:sport to
 * m->dst:dport (both addresses IPv4-mapped). */
void srd_udp_icrc_v4_fields(const struct srd_udp_meta *m, uint16_t sport,
			    struct srd_icrc_udp4 *f);
/* The ICRC of the len bytes of UDP payload in iov (BTH first, ICRC field
 * last) as sent from m->src:sport to m->dst:dport with IPv4 id. */
uint32_t srd_udp_icrc(const struct srd_udp_meta *m, uint16_t sport, uint16_t id,
		      const struct iovec *iov, int niov, size_t len);
/* Store in the last 4 of the len bytes at buf (BTH ... ICRC) the ICRC a
 * Linux UDP socket sending them from m->src:sport gets: IPv4 id 0, DF. */
void srd_udp_icrc_seal(const struct srd_udp_meta *m, void *buf, size_t len);

/* The pool socket, hence the UDP source port, of a local QP. */
static inline unsigned int srd_udp_pool_index(uint32_t qpn)
{
	return (uint32_t)(qpn * 0x9e3779b1u) >> 28;
}

static inline uint16_t srd_udp_sport(const struct srd_udp *u, uint32_t qpn)
{
	return u->tx_port[srd_udp_pool_index(qpn)];
}

/*
 * Make room for a packet of up to bytes of arena and niov pieces,
 * flushing the queue if needed.  0, or -EMSGSIZE if it can never fit.
 */
int srd_udp_tx_reserve(struct srd_udp *u, size_t bytes, unsigned int niov);
/* Arena memory (after a reserve), valid until the next flush. */
void *srd_udp_tx_alloc(struct srd_udp *u, size_t n);

/*
 * Queue a packet from the pool socket of qpn.  iov: BTH, extended
 * headers, payload and pad, len - 4 bytes; its ICRC is computed here and
 * follows them.  Sealed: iov holds len bytes, ICRC included, sent as they
 * are.  The pieces must stay valid until the flush.  cnt: charged with
 * tx_drops when the kernel refuses the packet.
 */
void srd_udp_tx_queue(struct srd_udp *u, uint32_t qpn,
		      const struct srd_udp_meta *m, const struct iovec *iov,
		      int niov, size_t len, bool sealed,
		      struct srd_net_counters *cnt);
/* Send what is queued. */
void srd_udp_tx_flush(struct srd_udp *u);

/* Receive and hand over up to budget packets; returns how many. */
unsigned int srd_udp_rx(struct srd_udp *u, unsigned int budget,
			srd_udp_rx_fn *fn, void *arg);

/* Whether an address is IPv4-mapped (a RoCE v2 IPv4 GID). */
static inline bool srd_addr_v4(const struct in6_addr *a)
{
	return srd_gid_is_v4mapped(a->s6_addr);
}

#endif
