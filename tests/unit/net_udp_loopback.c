/* SPDX-License-Identifier: MIT */
/*
 * The UDP wire's sockets over loopback: packets queued (one UDP GSO batch
 * of equal-size packets and a shorter last one, a sealed frame, IPv4 and
 * IPv6) come back through the receive socket with the addresses, ports,
 * traffic class and hop limit they were sent with, and an ICRC that
 * checks.  With GRO off the kernel cuts the GSO batch itself: the IPv4
 * identification it gives segment k must be k, as the sender's ICRCs
 * assume.  With GRO on, the batch arrives whole and is cut by the gso_size
 * the kernel reports.  Everything sent is also in the capture file, and
 * every captured packet passes icrc.c's whole-packet check.  An IPv6
 * packet with a UDP checksum of zero, as rdma_rxe sends every packet over
 * IPv6 (its tunnel socket computes none), is received too: a plain IPv6
 * UDP socket would have the kernel drop it (RFC 8200) unless it allows
 * zero checksums (UDP_NO_CHECK6_RX), as rxe's own socket does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/net/roce.h"
#include "daemon/net/icrc.h"
#include "daemon/net/udp.h"
#include "tests/unit/t_proto.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#endif

#define QPN 0x123
#define NPKT 8
#define PKT_LEN 1040 /* BTH + 1024 + ICRC */

struct got {
	struct srd_udp_meta m;
	uint8_t buf[2048];
	size_t len;
};

static struct got got[64];
static unsigned int ngot;

static void rx(void *arg, const struct srd_udp_meta *m, uint8_t *buf,
	       size_t len)
{
	T_ASSERT(ngot < 64);
	T_ASSERT(len <= sizeof(got[0].buf));
	got[ngot].m = *m;
	memcpy(got[ngot].buf, buf, len);
	got[ngot++].len = len;
}

static void fill_bth(uint8_t *b, size_t len, unsigned int seq)
{
	memset(b, 0, len);
	b[0] = ROCE_RC_SEND_MIDDLE;
	b[2] = b[3] = 0xff;
	b[6] = QPN >> 8;
	b[7] = QPN & 0xff;
	b[11] = seq;
	for (size_t i = 12; i < len; i++)
		b[i] = seq * 31 + i;
}

/* Receive until n packets came (loopback is quick, but not instant). */
static void receive(struct srd_udp *u, unsigned int n)
{
	for (int tries = 0; ngot < n && tries < 2000; tries++) {
		if (!srd_udp_rx(u, 64, rx, NULL))
			usleep(1000);
	}
	T_EQ(ngot, n);
}

static void check_v4(struct srd_udp *u, const struct got *g, uint16_t want_id)
{
	struct srd_icrc_udp4 f;
	uint16_t id = 0xffff, frag = 0;

	srd_udp_icrc_v4_fields(&g->m, g->m.sport, &f);
	T_EQ(srd_icrc_check_v4_noid(&f, g->buf, g->len, &id, &frag), 0);
	T_EQ(frag, SRD_IPV4_DF);
	T_EQ(id, want_id);
	T_EQ(g->m.sport, srd_udp_sport(u, QPN));
	T_EQ(g->m.dport, u->port);
}

static void send_batch(struct srd_udp *u, const struct srd_udp_meta *m,
		       struct srd_net_counters *c)
{
	for (unsigned int i = 0; i <= NPKT; i++) {
		size_t len = i < NPKT ? PKT_LEN : PKT_LEN - 512;
		uint8_t *b;
		struct iovec iov;

		T_EQ(srd_udp_tx_reserve(u, len, 1), 0);
		b = srd_udp_tx_alloc(u, len);
		fill_bth(b, len - 4, i);
		iov.iov_base = b;
		iov.iov_len = len - 4;
		srd_udp_tx_queue(u, QPN, m, &iov, 1, len, false, c);
	}
	srd_udp_tx_flush(u);
}

static void round_v4(struct srd_udp *u, bool gro)
{
	struct srd_net_counters c = { 0 };
	struct srd_udp_meta m = { .dport = u->port,
				  .tclass = 0x28,
				  .hop_limit = 9 };
	uint64_t gso_before = u->tx_gso_msgs;
	int err;

	inet_pton(AF_INET6, "::ffff:127.0.0.1", &m.src);
	m.dst = m.src;
	err = setsockopt(u->rx_fd, IPPROTO_UDP, UDP_GRO, &(int){ gro },
			 sizeof(int));
	T_ASSERT(!gro || !err);
	ngot = 0;
	send_batch(u, &m, &c);
	T_EQ(c.tx_drops, 0);
	if (u->gso)
		T_EQ(u->tx_gso_msgs, gso_before + 1);
	receive(u, NPKT + 1);
	for (unsigned int i = 0; i <= NPKT; i++) {
		T_EQ(got[i].len, i < NPKT ? PKT_LEN : PKT_LEN - 512);
		T_EQ(got[i].buf[11], i); /* in order */
		T_EQ(got[i].m.tclass, 0x28);
		T_EQ(got[i].m.hop_limit, 9);
		T_ASSERT(!memcmp(&got[i].m.dst, &m.dst, 16));
		T_ASSERT(!memcmp(&got[i].m.src, &m.src, 16));
		check_v4(u, &got[i], u->gso ? i : 0);
	}
	printf("# IPv4 %s GRO: %u packets, GSO %s, ids 0..%u\n",
	       gro ? "with" : "without", ngot, u->gso ? "on" : "off",
	       u->gso ? NPKT : 0);
}

static void round_v6(struct srd_udp *u)
{
	struct srd_net_counters c = { 0 };
	struct srd_udp_meta m = { .dport = u->port,
				  .tclass = 0x40,
				  .hop_limit = 3 };
	uint8_t a[300], b[300];
	struct iovec iov = { .iov_base = a, .iov_len = sizeof(a) - 4 };
	struct srd_icrc_udp6 f;

	if (u->family != AF_INET6)
		return;
	inet_pton(AF_INET6, "::1", &m.src);
	m.dst = m.src;
	ngot = 0;
	fill_bth(a, sizeof(a) - 4, 77);
	T_EQ(srd_udp_tx_reserve(u, sizeof(a), 1), 0);
	srd_udp_tx_queue(u, QPN, &m, &iov, 1, sizeof(a), false, &c);
	/* A sealed frame: its own ICRC (here a wrong one), sent as is.  The
	 * pieces queued stay untouched until the flush. */
	fill_bth(b, sizeof(b) - 4, 78);
	srd_icrc_put(b, sizeof(b), 0xdeadbeef);
	iov.iov_base = b;
	iov.iov_len = sizeof(b);
	T_EQ(srd_udp_tx_reserve(u, sizeof(b), 1), 0);
	srd_udp_tx_queue(u, QPN, &m, &iov, 1, sizeof(b), true, &c);
	srd_udp_tx_flush(u);
	if (c.tx_drops) {
		printf("# IPv6 loopback unusable here\n");
		return;
	}
	receive(u, 2);
	memcpy(f.saddr, &got[0].m.src, 16);
	memcpy(f.daddr, &got[0].m.dst, 16);
	f.sport = htons(got[0].m.sport);
	f.dport = htons(got[0].m.dport);
	T_EQ(got[0].m.tclass, 0x40);
	T_EQ(got[0].m.hop_limit, 3);
	T_EQ(srd_icrc_check_v6(&f, got[0].buf, got[0].len), 0);
	T_EQ(got[1].buf[11], 78);
	T_EQ(srd_icrc_get(got[1].buf, got[1].len), 0xdeadbeef);
	T_EQ(srd_icrc_check_v6(&f, got[1].buf, got[1].len), -EBADMSG);
	printf("# IPv6: ok\n");
}

/* What rxe sends over IPv6: a UDP checksum of zero (the ICRC is right). */
static void round_v6_zero_csum(struct srd_udp *u)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t salen = sizeof(sa);
	struct srd_icrc_udp6 f;
	uint8_t a[200];
	int fd;

	if (u->family != AF_INET6)
		return;
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T_ASSERT(fd >= 0);
	T_EQ(setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_TX, &(int){ 1 },
			sizeof(int)),
	     0);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("# IPv6 loopback unusable here: %s\n", strerror(errno));
		close(fd);
		return;
	}
	T_EQ(getsockname(fd, (struct sockaddr *)&sa, &salen), 0);
	memcpy(f.saddr, &sa.sin6_addr, 16);
	memcpy(f.daddr, &sa.sin6_addr, 16);
	f.sport = sa.sin6_port;
	f.dport = htons(u->port);
	fill_bth(a, sizeof(a), 79);
	srd_icrc_put(a, sizeof(a), srd_icrc_v6_from_parts(&f, a, sizeof(a)));
	sa.sin6_port = htons(u->port);
	ngot = 0;
	T_EQ(sendto(fd, a, sizeof(a), 0, (struct sockaddr *)&sa, sizeof(sa)),
	     (ssize_t)sizeof(a));
	close(fd);
	receive(u, 1);
	T_EQ(got[0].len, sizeof(a));
	T_EQ(got[0].buf[11], 79);
	T_EQ(srd_icrc_check_v6(&f, got[0].buf, got[0].len), 0);
	printf("# IPv6 with a zero UDP checksum (as rxe sends): ok\n");
}

/* Every captured packet checks with the IP header the capture shows. */
static unsigned int check_capture(const char *path)
{
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	unsigned int n = 0;

	T_EQ(srd_pcap_open(&r, path), 0);
	while (srd_pcap_next(&r, &p) == 1) {
		const uint8_t *ip = p.data + p.l3_off;
		bool v4 = p.l3_proto == 0x0800;
		size_t ihl = v4 ? 20 : 40;
		size_t udp_len = p.caplen - p.l3_off - ihl;

		T_ASSERT(v4 || p.l3_proto == 0x86dd);
		/* UDP only, and not the frame sealed with a wrong ICRC. */
		if (ip[v4 ? 9 : 6] != 17 || ip[ihl + 8 + 11] == 78)
			continue;
		if (v4)
			T_EQ(srd_icrc_check_ipv4(ip, ip + ihl, udp_len), 0);
		else
			T_EQ(srd_icrc_check_ipv6(ip, ip + ihl, udp_len), 0);
		n++;
	}
	srd_pcap_close(&r);
	return n;
}

int main(void)
{
	static struct srd_udp u;
	struct srd_capture cap;
	char path[] = "/tmp/net_udp_loopback.XXXXXX";
	int fd = mkstemp(path), err;
	unsigned int n, rounds;

	T_ASSERT(fd >= 0);
	close(fd);
	err = srd_udp_open(&u, 0);
	if (err) {
		printf("SKIP: no UDP socket: %s\n", strerror(-err));
		return T_EXIT_SKIP;
	}
	printf("# port %u, family %s, GSO %d, GRO %d, source ports %u..\n",
	       u.port, u.family == AF_INET6 ? "dual stack" : "IPv4", u.gso,
	       u.gro, u.tx_port[0]);
	for (unsigned int k = 0; k < SRD_UDP_POOL; k++)
		T_ASSERT(u.tx_port[k] >= 1024);
	T_EQ(srd_capture_open(&cap, path), 0);
	u.cap = &cap;
	round_v4(&u, false);
	if (u.gro)
		round_v4(&u, true);
	round_v6(&u);
	round_v6_zero_csum(&u);
	rounds = u.gro ? 2 : 1;
	srd_capture_close(&cap);
	srd_udp_close(&u);
	n = check_capture(path);
	T_ASSERT(n >= (NPKT + 1) * rounds);
	unlink(path);
	printf("PASS net_udp_loopback (%u packets captured)\n", n);
	return T_EXIT_PASS;
}
