/* SPDX-License-Identifier: MIT */
/*
 * Connect and accept: both ends see each other's addresses, a byte goes
 * each way, the accepted descriptor is a real fd, and connecting to a
 * port nobody listens on fails with ECONNREFUSED.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include "t_rs.h"

int main(void)
{
	struct sockaddr_in a, b;
	socklen_t alen = sizeof(a), blen = sizeof(b);
	uint16_t port;
	int lfd, cfd, sfd, fd;
	char c = 'x';

	t_init("rs_connect");
	lfd = t_rs_listen(&port);
	/* rsockets hand out real descriptors (their event channel's). */
	T_GE(fcntl(lfd, F_GETFD), 0);
	cfd = t_rs_pair(lfd, port, &sfd);
	T_GE(fcntl(sfd, F_GETFD), 0);
	T_NE(cfd, sfd);

	T_RS_OK(rgetpeername(cfd, (struct sockaddr *)&a, &alen));
	T_EQ(alen, sizeof(a));
	T_EQ(a.sin_family, AF_INET);
	T_EQ(ntohs(a.sin_port), port);
	T_EQ(ntohl(a.sin_addr.s_addr), INADDR_LOOPBACK);
	T_RS_OK(rgetsockname(sfd, (struct sockaddr *)&b, &blen));
	T_EQ(ntohs(b.sin_port), port);
	/* The client's address as the server sees it is the client's own. */
	alen = sizeof(a);
	blen = sizeof(b);
	T_RS_OK(rgetsockname(cfd, (struct sockaddr *)&a, &alen));
	T_RS_OK(rgetpeername(sfd, (struct sockaddr *)&b, &blen));
	T_EQ(a.sin_port, b.sin_port);
	T_NE(a.sin_port, 0);

	T_EQ(rsend(cfd, &c, 1, 0), 1);
	c = 0;
	T_EQ(rrecv(sfd, &c, 1, 0), 1);
	T_EQ(c, 'x');
	c = 'y';
	T_EQ(rwrite(sfd, &c, 1), 1);
	T_EQ(rread(cfd, &c, 1), 1);
	T_EQ(c, 'y');

	/* A second connection on the same listener. */
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	cfd = t_rs_pair(lfd, port, &sfd);
	T_EQ(rsend(sfd, "z", 1, 0), 1);
	T_EQ(rrecv(cfd, &c, 1, 0), 1);
	T_EQ(c, 'z');
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));

	/* Nobody listens there now. */
	fd = rsocket(AF_INET, SOCK_STREAM, 0);
	T_GE(fd, 0);
	t_rs_addr(&a, port);
	T_NEG_ERRNO(rconnect(fd, (struct sockaddr *)&a, sizeof(a)),
		    ECONNREFUSED);
	/* Not connected: no data either way. */
	T_NEG_ERRNO(rsend(fd, &c, 1, 0), ENOTCONN);
	T_RS_OK(rclose(fd));

	/* What rsockets do not provide. */
	T_NEG_ERRNO(rsocket(AF_UNIX, SOCK_STREAM, 0), ENOTSUP);
	T_NEG_ERRNO(rsocket(AF_INET, SOCK_STREAM, IPPROTO_UDP), ENOTSUP);
	t_pass();
}
