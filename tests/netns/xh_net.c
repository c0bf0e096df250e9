/* SPDX-License-Identifier: MIT */
/*
 * The control connection of xhost: plain TCP, IPv4 or IPv6, with deadlines
 * on everything so that a peer that died makes the test fail, not hang.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xhost.h"

int xh_listen(unsigned int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd, one = 1, zero = 0;

	/* Dual stack: IPv4 clients arrive as ::ffff:a.b.c.d. */
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		T_FAIL("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8))
		T_FAIL("listen on port %u: %s", port, strerror(errno));
	return fd;
}

static void tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int xh_accept(int lfd, int timeout_ms)
{
	int fd;

	if (!t_fd_readable(lfd, timeout_ms))
		T_FAIL("no peer connected within %d ms", timeout_ms);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		T_FAIL("accept: %s", strerror(errno));
	tune(fd);
	return fd;
}

/* The peer may not listen yet: retry until the deadline. */
int xh_connect(const char *host, unsigned int port, int timeout_ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	char service[16];
	int fd, err = 0, gai;

	snprintf(service, sizeof(service), "%u", port);
	gai = getaddrinfo(host, service, &hints, &res);
	if (gai)
		T_FAIL("%s: %s", host, gai_strerror(gai));
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family,
				    ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				tune(fd);
				return fd;
			}
			err = errno;
			close(fd);
		}
		if (t_now_ms() >= end)
			break;
		t_sleep_ms(50);
	}
	freeaddrinfo(res);
	T_FAIL("connect to %s port %u: %s", host, port, strerror(err));
}

void xh_send(int fd, const void *buf, size_t len)
{
	t_sock_send(fd, buf, len);
}

void xh_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;

		if (!t_fd_readable(fd, timeout_ms))
			T_FAIL("peer sent nothing within %d ms", timeout_ms);
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			T_FAIL("recv from peer: %s", strerror(errno));
		if (n == 0)
			T_FAIL("peer closed the control connection (it "
			       "failed or exited)");
		p += n;
		len -= (size_t)n;
	}
}

void xh_sync_fd(int fd, uint32_t step, int timeout_ms)
{
	uint32_t got;

	xh_send(fd, &step, sizeof(step));
	xh_recv(fd, &got, sizeof(got), timeout_ms);
	if (got != step)
		T_FAIL("out of step with the peer: it is at step %u, we at %u",
		       got, step);
}

/* Generous: the peer may be waiting out retransmissions. */
#define XH_SYNC_MS 60000

void xh_sync(struct xh *x)
{
	xh_sync_fd(x->fd, ++x->step, XH_SYNC_MS);
}

uint64_t xh_swap_val(struct xh *x, uint64_t mine)
{
	uint64_t theirs;

	xh_send(x->fd, &mine, sizeof(mine));
	xh_recv(x->fd, &theirs, sizeof(theirs), XH_SYNC_MS);
	return theirs;
}
