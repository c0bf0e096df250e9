/* SPDX-License-Identifier: MIT */
/*
 * The UDP wire's send queue: packets gathered during an engine pass (their
 * payload pieces pointing into the MRs, so the only copy is the kernel's),
 * ICRCs computed as they are queued, then one sendmmsg per run of packets
 * on one pool socket, equal-size packets of one flow as GSO batches.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/net/icrc.h"
#include "daemon/net/udp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/* A GSO batch stays under the 64 KiB a UDP datagram can carry. */
#define GSO_MAX_BYTES 63000
#define MSG_MAX_IOV 1024
#define TRAILER 8

int srd_udp_tx_reserve(struct srd_udp *u, size_t bytes, unsigned int niov)
{
	bytes = (bytes + 7) & ~(size_t)7;
	bytes += TRAILER;
	niov += 1;
	if (bytes > SRD_UDP_TX_ARENA || niov > MSG_MAX_IOV)
		return -EMSGSIZE;
	if (u->arena_used + bytes > SRD_UDP_TX_ARENA ||
	    u->niov + niov > SRD_UDP_TXQ_IOVS || u->nmsg >= SRD_UDP_TXQ_MSGS ||
	    u->npkts >= SRD_UDP_TXQ_PKTS)
		srd_udp_tx_flush(u);
	return 0;
}

void *srd_udp_tx_alloc(struct srd_udp *u, size_t n)
{
	void *p = u->arena + u->arena_used;

	u->arena_used += (n + 7) & ~(size_t)7;
	return p;
}

static bool same_flow(const struct srd_udp_meta *a,
		      const struct srd_udp_meta *b)
{
	return !memcmp(&a->src, &b->src, sizeof(a->src)) &&
	       !memcmp(&a->dst, &b->dst, sizeof(a->dst)) &&
	       a->dport == b->dport && a->tclass == b->tclass &&
	       a->hop_limit == b->hop_limit && a->ifindex == b->ifindex;
}

void srd_udp_icrc_v4_fields(const struct srd_udp_meta *m, uint16_t sport,
			    struct srd_icrc_udp4 *f)
{
	f->sport = htons(sport);
	f->dport = htons(m->dport);
	memcpy(&f->saddr, &m->src.s6_addr[12], 4);
	memcpy(&f->daddr, &m->dst.s6_addr[12], 4);
}

uint32_t srd_udp_icrc(const struct srd_udp_meta *m, uint16_t sport, uint16_t id,
		      const struct iovec *iov, int niov, size_t len)
{
	if (srd_addr_v4(&m->dst)) {
		struct srd_icrc_udp4 f;

		srd_udp_icrc_v4_fields(m, sport, &f);
		return srd_icrc_v4_from_iov(&f, id, SRD_IPV4_DF, iov, niov,
					    len);
	} else {
		struct srd_icrc_udp6 f = { .sport = htons(sport),
					   .dport = htons(m->dport) };

		memcpy(f.saddr, &m->src, 16);
		memcpy(f.daddr, &m->dst, 16);
		return srd_icrc_v6_from_iov(&f, iov, niov, len);
	}
}

void srd_udp_icrc_seal(const struct srd_udp_meta *m, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	srd_icrc_put(buf, len, srd_udp_icrc(m, m->sport, 0, &iov, 1, len));
}

void srd_udp_tx_queue(struct srd_udp *u, uint32_t qpn,
		      const struct srd_udp_meta *m, const struct iovec *iov,
		      int niov, size_t len, bool sealed,
		      struct srd_net_counters *cnt)
{
	unsigned int sock = srd_udp_pool_index(qpn);
	struct srd_udp_msg *g = u->nmsg ? &u->msg[u->nmsg - 1] : NULL;
	struct iovec *v = &u->iov[u->niov];
	uint16_t id = 0;
	int n = niov;

	if (g && !g->closed && !sealed && u->gso && g->sock == sock &&
	    g->cnt == cnt && len <= g->seg && g->nseg < u->gso_max_segs &&
	    g->bytes + len <= GSO_MAX_BYTES &&
	    g->niov + niov + 1 <= MSG_MAX_IOV && same_flow(&g->m, m)) {
		/* The kernel numbers the segments of a batch 0, 1, ... */
		id = g->nseg;
	} else {
		g = &u->msg[u->nmsg++];
		memset(g, 0, sizeof(*g));
		g->m = *m;
		g->cnt = cnt;
		g->iov_first = u->niov;
		g->seg = len;
		g->sock = sock;
		g->closed = sealed;
	}
	memcpy(v, iov, niov * sizeof(*iov));
	if (!sealed) {
		uint8_t *t = srd_udp_tx_alloc(u, SRD_ICRC_SIZE);

		srd_icrc_put(t, SRD_ICRC_SIZE,
			     srd_udp_icrc(m, u->tx_port[sock], id, iov, niov,
					  len));
		v[n].iov_base = t;
		v[n].iov_len = SRD_ICRC_SIZE;
		n++;
	}
	u->niov += n;
	g->niov += n;
	g->bytes += len;
	g->nseg++;
	if (len < g->seg)
		g->closed = true; /* only the last may be shorter */
	u->npkts++;
	if (u->cap) {
		struct srd_pcap_roce r;

		srd_capture_addr(&r, m->src.s6_addr, m->dst.s6_addr,
				 u->tx_port[sock], m->dport,
				 srd_addr_v4(&m->dst) ? id : 0);
		if (!srd_capture_iov(u->cap, &r, v, n, len) && cnt)
			cnt->captured++;
	}
}

/* Append a control message; *used counts the bytes they take. */
static void put_cmsg(struct msghdr *mh, struct cmsghdr **c, size_t *used,
		     int level, int type, const void *data, size_t len)
{
	*c = *c ? CMSG_NXTHDR(mh, *c) : CMSG_FIRSTHDR(mh);
	(*c)->cmsg_level = level;
	(*c)->cmsg_type = type;
	(*c)->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(*c), data, len);
	*used += CMSG_SPACE(len);
}

static void build_msg(struct srd_udp *u, unsigned int i)
{
	struct srd_udp_msg *g = &u->msg[i];
	struct msghdr *mh = &u->tmsg[i].msg_hdr;
	struct sockaddr_in6 *sa6 = &u->tname[i];
	const struct srd_udp_meta *m = &g->m;
	bool v4 = srd_addr_v4(&m->dst);
	int tos = m->tclass, ttl = m->hop_limit ? m->hop_limit : 64;
	struct cmsghdr *c = NULL;
	size_t used = 0;

	memset(mh, 0, sizeof(*mh));
	memset(u->tctl[i], 0, sizeof(u->tctl[i]));
	mh->msg_name = sa6;
	mh->msg_iov = &u->iov[g->iov_first];
	mh->msg_iovlen = g->niov;
	mh->msg_control = u->tctl[i];
	mh->msg_controllen = sizeof(u->tctl[i]);
	if (u->family == AF_INET6) {
		struct in6_pktinfo pi = { .ipi6_addr = m->src };

		memset(sa6, 0, sizeof(*sa6));
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons(m->dport);
		sa6->sin6_addr = m->dst;
		if (IN6_IS_ADDR_LINKLOCAL(&m->dst))
			sa6->sin6_scope_id = m->ifindex;
		/* Link-local and multicast: out of the device's interface. */
		pi.ipi6_ifindex = m->ifindex;
		mh->msg_namelen = sizeof(*sa6);
		put_cmsg(mh, &c, &used, IPPROTO_IPV6, IPV6_PKTINFO, &pi,
			 sizeof(pi));
	} else {
		struct sockaddr_in *sa = (struct sockaddr_in *)sa6;
		struct in_pktinfo pi = { 0 };

		memset(sa, 0, sizeof(*sa));
		sa->sin_family = AF_INET;
		sa->sin_port = htons(m->dport);
		memcpy(&sa->sin_addr, &m->dst.s6_addr[12], 4);
		memcpy(&pi.ipi_spec_dst, &m->src.s6_addr[12], 4);
		pi.ipi_ifindex = m->ifindex; /* set for multicast only */
		mh->msg_namelen = sizeof(*sa);
		put_cmsg(mh, &c, &used, IPPROTO_IP, IP_PKTINFO, &pi,
			 sizeof(pi));
	}
	put_cmsg(mh, &c, &used, v4 ? IPPROTO_IP : IPPROTO_IPV6,
		 v4 ? IP_TOS : IPV6_TCLASS, &tos, sizeof(tos));
	put_cmsg(mh, &c, &used, v4 ? IPPROTO_IP : IPPROTO_IPV6,
		 v4 ? IP_TTL : IPV6_HOPLIMIT, &ttl, sizeof(ttl));
	if (g->nseg > 1) {
		uint16_t seg = g->seg;

		put_cmsg(mh, &c, &used, IPPROTO_UDP, UDP_SEGMENT, &seg,
			 sizeof(seg));
	}
	mh->msg_controllen = used;
}

static void drop_msg(struct srd_udp *u, unsigned int i, int err)
{
	struct srd_udp_msg *g = &u->msg[i];

	if (g->cnt)
		g->cnt->tx_drops += g->nseg;
	/* A kernel or route that cannot segment: single packets from now
	 * on (this batch is lost; its ICRCs assumed the numbering). */
	if (g->nseg > 1 && (err == EIO || err == EINVAL) && u->gso) {
		u->gso = false;
		srd_log(SRD_LOG_WARN,
			"udp: GSO refused (%s), sending single "
			"packets",
			strerror(err));
	}
}

/* Send msg[i..j), all on one pool socket. */
static void send_run(struct srd_udp *u, unsigned int i, unsigned int j)
{
	int fd = u->tx_fd[u->msg[i].sock];
	bool waited = false;

	while (i < j) {
		int n = sendmmsg(fd, &u->tmsg[i], j - i, 0);

		if (n > 0) {
			i += n;
			u->tx_batches++;
			continue;
		}
		if (errno == EINTR)
			continue;
		if ((errno == EAGAIN || errno == ENOBUFS) && !waited) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			/* A full socket buffer: wait a moment once. */
			waited = true;
			poll(&p, 1, 1);
			continue;
		}
		drop_msg(u, i, errno);
		i++;
	}
}

void srd_udp_tx_flush(struct srd_udp *u)
{
	unsigned int i, j;

	for (i = 0; i < u->nmsg; i++) {
		build_msg(u, i);
		if (u->msg[i].nseg > 1)
			u->tx_gso_msgs++;
	}
	for (i = 0; i < u->nmsg; i = j) {
		for (j = i + 1; j < u->nmsg && u->msg[j].sock == u->msg[i].sock;
		     j++)
			;
		send_run(u, i, j);
	}
	u->nmsg = 0;
	u->npkts = 0;
	u->niov = 0;
	u->arena_used = 0;
}
