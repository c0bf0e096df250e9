/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <pthread.h>

#include "t_rs.h"

void t_rs_addr(struct sockaddr_in *sin, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

int t_rs_listen(uint16_t *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = rsocket(AF_INET, SOCK_STREAM, 0);

	T_GE(fd, 0);
	t_rs_addr(&sin, 0);
	T_RS_OK(rbind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	T_RS_OK(rlisten(fd, 16));
	T_RS_OK(rgetsockname(fd, (struct sockaddr *)&sin, &len));
	T_EQ(len, sizeof(sin));
	T_NE(sin.sin_port, 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

struct accept_arg {
	int listen_fd;
	int fd;
	int err;
};

static void *accept_thread(void *p)
{
	struct accept_arg *a = p;

	a->fd = raccept(a->listen_fd, NULL, NULL);
	a->err = a->fd < 0 ? errno : 0;
	return NULL;
}

int t_rs_connect(int fd, int listen_fd, uint16_t port)
{
	struct accept_arg a = { .listen_fd = listen_fd, .fd = -1 };
	struct sockaddr_in sin;
	pthread_t th;

	T_EQ(pthread_create(&th, NULL, accept_thread, &a), 0);
	t_rs_addr(&sin, port);
	T_RS_OK(rconnect(fd, (struct sockaddr *)&sin, sizeof(sin)));
	T_EQ(pthread_join(th, NULL), 0);
	if (a.fd < 0)
		T_FAIL("raccept: %s", t_errname(a.err));
	return a.fd;
}

int t_rs_pair(int listen_fd, uint16_t port, int *srv)
{
	int fd = rsocket(AF_INET, SOCK_STREAM, 0);

	T_GE(fd, 0);
	*srv = t_rs_connect(fd, listen_fd, port);
	return fd;
}

void t_rs_send_all(int fd, const void *buf, size_t len, size_t chunk)
{
	const uint8_t *p = buf;
	uint64_t end = t_now_ms() + 20000;

	while (len) {
		size_t n = chunk && chunk < len ? chunk : len;
		ssize_t r = rsend(fd, p, n, 0);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			T_ASSERT(t_now_ms() < end);
			T_GE(rpoll(&pfd, 1, 1000), 0);
			continue;
		}
		if (r <= 0)
			T_FAIL("rsend: %zd %s", r, t_errname(errno));
		p += r;
		len -= (size_t)r;
	}
}

void t_rs_recv_all(int fd, void *buf, size_t len, size_t chunk)
{
	uint8_t *p = buf;
	uint64_t end = t_now_ms() + 20000;

	while (len) {
		size_t n = chunk && chunk < len ? chunk : len;
		ssize_t r = rrecv(fd, p, n, 0);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			T_ASSERT(t_now_ms() < end);
			T_GE(rpoll(&pfd, 1, 1000), 0);
			continue;
		}
		if (r <= 0)
			T_FAIL("rrecv: %zd %s (%zu bytes missing)", r,
			       t_errname(errno), len);
		T_LE(r, (ssize_t)n);
		p += r;
		len -= (size_t)r;
	}
}
