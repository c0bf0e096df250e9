/* SPDX-License-Identifier: MIT */
/*
 * What the rsocket tests share: a listener on 127.0.0.1 (port chosen by
 * the CM), a connected pair made by a client in this thread and raccept in
 * another, and sending / receiving exact byte counts with a deadline.
 */
#ifndef SOFTRDMA_TESTS_T_RS_H
#define SOFTRDMA_TESTS_T_RS_H

#include <netinet/in.h>
#include <rdma/rsocket.h>

#include "t_util.h"

/* A call returning 0, or -1 with errno. */
#define T_RS_OK(expr)                                              \
	do {                                                       \
		if ((expr) != 0)                                   \
			T_FAIL("%s: %s", #expr, t_errname(errno)); \
	} while (0)

/* 127.0.0.1:port (host order). */
void t_rs_addr(struct sockaddr_in *sin, uint16_t port);
/* A listening rsocket on 127.0.0.1; its port in *port. */
int t_rs_listen(uint16_t *port);
/* Connect fd (an rsocket, options set) to the listener; the server's
 * descriptor. */
int t_rs_connect(int fd, int listen_fd, uint16_t port);
/* A blocking connection: the client's descriptor, the server's in *srv. */
int t_rs_pair(int listen_fd, uint16_t port, int *srv);
/* All of len, in pieces of at most chunk (0: all at once). */
void t_rs_send_all(int fd, const void *buf, size_t len, size_t chunk);
void t_rs_recv_all(int fd, void *buf, size_t len, size_t chunk);

#endif
