/* SPDX-License-Identifier: MIT */
/* The UDP wire's sockets and its receive side (see udp.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/core/core.h"
#include "daemon/net/icrc.h"
#include "daemon/net/udp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

#define RX_CTL_SIZE 256
#define SOCK_BUF (8 << 20)

static void set_int(int fd, int level, int opt, int v)
{
	setsockopt(fd, level, opt, &v, sizeof(v));
}

/* As large a buffer as allowed: a root daemon may exceed rmem_max. */
static void set_buf(int fd, int opt, int force_opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

static int bind_port(int fd, int family, uint16_t port)
{
	if (family == AF_INET6) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
					   .sin6_port = htons(port),
					   .sin6_addr = IN6ADDR_ANY_INIT };

		return bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno
								    : 0;
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons(port) };

		return bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno
								    : 0;
	}
}

static int bound_port(int fd)
{
	struct sockaddr_in6 sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len))
		return -errno;
	/* sin_port and sin6_port sit at the same offset. */
	return ntohs(sa.sin6_port);
}

static int new_socket(int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0);
	return fd;
}

static int open_rx(struct srd_udp *u, uint16_t port)
{
	int fd, err;

	u->family = AF_INET6;
	fd = new_socket(AF_INET6);
	if (fd == -EAFNOSUPPORT) {
		u->family = AF_INET;
		fd = new_socket(AF_INET);
	}
	if (fd < 0)
		return fd;
	err = bind_port(fd, u->family, port);
	if (err == -EADDRNOTAVAIL && u->family == AF_INET6) {
		/* IPv6 present but unusable (disabled): IPv4 only. */
		close(fd);
		u->family = AF_INET;
		fd = new_socket(AF_INET);
		if (fd < 0)
			return fd;
		err = bind_port(fd, u->family, port);
	}
	if (err) {
		close(fd);
		return err;
	}
	u->rx_fd = fd;
	err = bound_port(fd);
	if (err < 0)
		return err;
	u->port = err;
	/* Where each packet was going: its device. */
	set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
	set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
	set_int(fd, IPPROTO_IP, IP_RECVTTL, 1);
	if (u->family == AF_INET6) {
		set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1);
		/* rxe sends a UDP checksum of zero over IPv6 too (its tunnel
		 * socket computes none; the ICRC covers the packet), which
		 * the kernel drops for a socket that does not allow it. */
		set_int(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, 1);
	}
	u->gro =
		!setsockopt(fd, IPPROTO_UDP, UDP_GRO, &(int){ 1 }, sizeof(int));
	set_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE, SOCK_BUF);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &u->rcvbuf,
		       &(socklen_t){ sizeof(int) }))
		u->rcvbuf = 0;
	return 0;
}

static int open_tx(struct srd_udp *u, unsigned int k)
{
	int fd = new_socket(u->family), err, seg = 1000;

	if (fd < 0)
		return fd;
	set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
	err = bind_port(fd, u->family, SRD_UDP_SPORT_BASE + k);
	if (err == -EADDRINUSE || err == -EACCES)
		err = bind_port(fd, u->family, 0);
	if (!err)
		err = bound_port(fd);
	if (err < 0) {
		close(fd);
		return err;
	}
	u->tx_fd[k] = fd;
	u->tx_port[k] = err;
	/* Don't Fragment: IPv4 identification 0, the ICRC's assumption. */
	set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
	if (u->family == AF_INET6)
		set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IP_PMTUDISC_DO);
	set_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE, SOCK_BUF);
	/* Nothing arrives here that matters: keep no backlog. */
	set_int(fd, SOL_SOCKET, SO_RCVBUF, 1);
	if (k == 0 &&
	    !setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg))) {
		seg = 0;
		setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg));
		u->gso = true;
	}
	return 0;
}

int srd_udp_open(struct srd_udp *u, uint16_t port)
{
	int err;

	memset(u, 0, sizeof(*u));
	u->rx_fd = -1;
	for (unsigned int k = 0; k < SRD_UDP_POOL; k++)
		u->tx_fd[k] = -1;
	u->gso_max_segs = 64;
	err = open_rx(u, port);
	for (unsigned int k = 0; !err && k < SRD_UDP_POOL; k++)
		err = open_tx(u, k);
	if (err)
		goto err_close;
	u->rbufsz = u->gro ? 65536 : SRD_UDP_MAX_PAYLOAD + 1;
	u->rbuf = malloc(u->rbufsz * SRD_UDP_RX_BATCH);
	u->rctl = malloc(RX_CTL_SIZE * SRD_UDP_RX_BATCH);
	u->arena = malloc(SRD_UDP_TX_ARENA);
	if (!u->rbuf || !u->rctl || !u->arena) {
		err = -ENOMEM;
		goto err_close;
	}
	return 0;

err_close:
	srd_udp_close(u);
	return err;
}

void srd_udp_close(struct srd_udp *u)
{
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	for (unsigned int k = 0; k < SRD_UDP_POOL; k++)
		if (u->tx_fd[k] >= 0)
			close(u->tx_fd[k]);
	free(u->rbuf);
	free(u->rctl);
	free(u->arena);
	memset(u, 0, sizeof(*u));
	u->rx_fd = -1;
	for (unsigned int k = 0; k < SRD_UDP_POOL; k++)
		u->tx_fd[k] = -1;
}

static void v4_mapped(struct in6_addr *a, const struct in_addr *v4)
{
	srd_gid_from_v4(a->s6_addr, v4);
}

/* Addresses and header fields of a received message; the UDP GRO segment
 * size (0: none) */
static int parse_msg(struct srd_udp *u, struct msghdr *mh,
		     struct srd_udp_meta *m)
{
	const struct sockaddr_in6 *sa6 = mh->msg_name;
	int gso = 0;

	memset(m, 0, sizeof(*m));
	if (sa6->sin6_family == AF_INET6) {
		m->src = sa6->sin6_addr;
		m->sport = ntohs(sa6->sin6_port);
	} else {
		const struct sockaddr_in *sa = mh->msg_name;

		v4_mapped(&m->src, &sa->sin_addr);
		m->sport = ntohs(sa->sin_port);
	}
	m->dport = u->port;
	m->hop_limit = 64;
	m->truncated = mh->msg_flags & (MSG_TRUNC | MSG_CTRUNC);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		const void *data = CMSG_DATA(c);
		int v;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, data, sizeof(pi));
			v4_mapped(&m->dst, &pi.ipi_addr);
			m->ifindex = pi.ipi_ifindex;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, data, sizeof(pi));
			m->dst = pi.ipi6_addr;
			m->ifindex = pi.ipi6_ifindex;
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TOS) {
			m->tclass = *(const uint8_t *)data;
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TTL) {
			memcpy(&v, data, sizeof(v));
			m->hop_limit = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS) {
			memcpy(&v, data, sizeof(v));
			m->tclass = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_HOPLIMIT) {
			memcpy(&v, data, sizeof(v));
			m->hop_limit = v;
		} else if (c->cmsg_level == IPPROTO_UDP &&
			   c->cmsg_type == UDP_GRO) {
			memcpy(&gso, data, sizeof(gso));
		}
	}
	return gso;
}

/* What arrived, its IPv4 identification (which a UDP socket does not
 * show) found from the ICRC so the file's headers match it. */
static void capture_rx(struct srd_udp *u, const struct srd_udp_meta *m,
		       uint8_t *buf, size_t len)
{
	struct srd_pcap_roce r;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	uint16_t id = 0;

	if (srd_addr_v4(&m->src) && srd_addr_v4(&m->dst)) {
		struct srd_icrc_udp4 f;

		srd_udp_icrc_v4_fields(m, m->sport, &f);
		if (srd_icrc_check_v4_noid(&f, buf, len, &id, NULL))
			id = 0;
	}
	srd_capture_addr(&r, m->src.s6_addr, m->dst.s6_addr, m->sport, m->dport,
			 id);
	srd_capture_iov(u->cap, &r, &iov, 1, len);
}

unsigned int srd_udp_rx(struct srd_udp *u, unsigned int budget,
			srd_udp_rx_fn *fn, void *arg)
{
	unsigned int done = 0;

	while (done < budget) {
		unsigned int want = budget - done;
		int n;

		if (want > SRD_UDP_RX_BATCH)
			want = SRD_UDP_RX_BATCH;
		for (unsigned int i = 0; i < want; i++) {
			struct msghdr *mh = &u->rmsg[i].msg_hdr;

			u->riov[i].iov_base = u->rbuf + i * u->rbufsz;
			u->riov[i].iov_len = u->rbufsz;
			mh->msg_name = &u->rname[i];
			mh->msg_namelen = sizeof(u->rname[i]);
			mh->msg_iov = &u->riov[i];
			mh->msg_iovlen = 1;
			mh->msg_control = u->rctl + i * RX_CTL_SIZE;
			mh->msg_controllen = RX_CTL_SIZE;
			mh->msg_flags = 0;
		}
		n = recvmmsg(u->rx_fd, u->rmsg, want, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct srd_udp_meta m;
			uint8_t *buf = u->riov[i].iov_base;
			size_t len = u->rmsg[i].msg_len;
			int seg = parse_msg(u, &u->rmsg[i].msg_hdr, &m);

			if (seg <= 0 || (size_t)seg >= len)
				seg = (int)len;
			else
				u->rx_gro_msgs++;
			/* A GRO batch is a run of packets of seg bytes, the
			 * last maybe shorter. */
			for (size_t off = 0; off < len || !len; off += seg) {
				size_t l = len - off;

				if (l > (size_t)seg)
					l = seg;

				if (u->cap && u->capture_rx && !m.truncated)
					capture_rx(u, &m, buf + off, l);
				fn(arg, &m, buf + off, l);
				done++;
				if (!len)
					break;
			}
		}
		if ((unsigned int)n < want)
			break;
	}
	return done;
}
