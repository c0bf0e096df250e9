/* SPDX-License-Identifier: MIT */
/*
 * Datagram rsockets: the first datagram to a peer goes over UDP and
 * teaches both sides each other's QPN, the next ones over UD QPs; each
 * arrives whole with its sender's address, in both directions, with
 * rsendto / rrecvfrom and with rconnect + rsend / rrecv; rpoll sees them;
 * a datagram too big for a slot is refused.
 */
#include <arpa/inet.h>
#include <fcntl.h>

#include "t_rs.h"

static int dgram_socket(uint16_t *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = rsocket(AF_INET, SOCK_DGRAM, 0);

	T_GE(fd, 0);
	t_rs_addr(&sin, 0);
	T_RS_OK(rbind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	T_RS_OK(rgetsockname(fd, (struct sockaddr *)&sin, &len));
	*port = ntohs(sin.sin_port);
	T_NE(*port, 0);
	return fd;
}

static void recv_one(int fd, uint32_t seed, size_t len, uint16_t from_port)
{
	uint8_t buf[4096];
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	T_EQ(rpoll(&p, 1, T_WAIT_MS), 1);
	T_EQ(p.revents, POLLIN);
	memset(buf, 0, sizeof(buf));
	T_EQ(rrecvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
		       &flen),
	     (ssize_t)len);
	t_check_fill_at(__FILE__, __LINE__, buf, len, seed, "datagram");
	T_EQ(flen, sizeof(from));
	T_EQ(from.sin_family, AF_INET);
	T_EQ(ntohs(from.sin_port), from_port);
	T_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
}

int main(void)
{
	uint8_t buf[4096];
	struct sockaddr_in to;
	uint16_t pa, pb;
	int a, b, c;
	size_t sizes[] = { 1, 100, 1000, 2000 };

	t_init("rs_dgram");
	a = dgram_socket(&pa);
	b = dgram_socket(&pb);
	/* Nothing yet. */
	T_NEG_ERRNO(rrecvfrom(a, buf, sizeof(buf), MSG_DONTWAIT, NULL, NULL),
		    EWOULDBLOCK);

	/* Ping-pong in several sizes: the first goes over UDP, the rest
	 * over UD once the QPNs are known; the data is the same. */
	for (int round = 0; round < 20; round++) {
		size_t len = sizes[round % 4];

		t_fill(buf, len, (uint32_t)round);
		t_rs_addr(&to, pb);
		T_EQ(rsendto(a, buf, len, 0, (struct sockaddr *)&to,
			     sizeof(to)),
		     (ssize_t)len);
		recv_one(b, (uint32_t)round, len, pa);
		t_fill(buf, len, 1000 + (uint32_t)round);
		t_rs_addr(&to, pa);
		T_EQ(rsendto(b, buf, len, 0, (struct sockaddr *)&to,
			     sizeof(to)),
		     (ssize_t)len);
		recv_one(a, 1000 + (uint32_t)round, len, pb);
	}
	/* A burst, then all of it read. */
	t_rs_addr(&to, pb);
	for (uint32_t i = 0; i < 30; i++) {
		t_fill(buf, 512, 2000 + i);
		T_EQ(rsendto(a, buf, 512, 0, (struct sockaddr *)&to,
			     sizeof(to)),
		     512);
	}
	for (uint32_t i = 0; i < 30; i++)
		recv_one(b, 2000 + i, 512, pa);
	/* Bigger than a slot. */
	T_NEG_ERRNO(rsendto(a, buf, 4000, 0, (struct sockaddr *)&to,
			    sizeof(to)),
		    EMSGSIZE);

	/* A connected datagram socket, never bound: rsend / rrecv. */
	c = rsocket(AF_INET, SOCK_DGRAM, 0);
	T_GE(c, 0);
	T_RS_OK(rconnect(c, (struct sockaddr *)&to, sizeof(to)));
	for (uint32_t i = 0; i < 5; i++) {
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);

		t_fill(buf, 300, 3000 + i);
		T_EQ(rsend(c, buf, 300, 0), 300);
		T_RS_OK(rgetsockname(c, (struct sockaddr *)&me, &ml));
		recv_one(b, 3000 + i, 300, ntohs(me.sin_port));
		t_fill(buf, 200, 4000 + i);
		T_EQ(rsendto(b, buf, 200, 0, (struct sockaddr *)&me,
			     sizeof(me)),
		     200);
		memset(buf, 0, sizeof(buf));
		T_EQ(rrecv(c, buf, sizeof(buf), 0), 200);
		t_check_fill_at(__FILE__, __LINE__, buf, 200, 4000 + i,
				"reply");
	}
	T_RS_OK(rclose(c));
	T_RS_OK(rclose(a));
	T_RS_OK(rclose(b));
	t_pass();
}
