/* SPDX-License-Identifier: MIT */
/*
 * Descriptors that are not rsockets go to the ordinary calls: data over
 * a socketpair with rsend / rrecv / rwrite / rreadv, rpoll and rselect
 * over pipes (what the rdmacm examples do with an event channel's fd),
 * rshutdown and rclose.  Other socket types are not rsockets.
 */
#include <sys/select.h>
#include <sys/uio.h>
#include <unistd.h>

#include "t_rs.h"

int main(void)
{
	struct pollfd p[2];
	struct timeval tv = { 0, 20000 };
	char buf[16], a[3], b[3];
	struct iovec iov[2] = { { a, 3 }, { b, 3 } };
	int sv[2], pp[2], lfd;
	uint16_t port;
	fd_set rd;

	t_init("rs_passthrough");
	T_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	T_EQ(rsend(sv[0], "hello", 5, 0), 5);
	T_EQ(rrecv(sv[1], buf, sizeof(buf), 0), 5);
	T_EQ(memcmp(buf, "hello", 5), 0);
	T_EQ(rwrite(sv[1], "abcdef", 6), 6);
	T_EQ(rreadv(sv[0], iov, 2), 6);
	T_EQ(memcmp(a, "abc", 3), 0);
	T_EQ(memcmp(b, "def", 3), 0);

	T_EQ(pipe(pp), 0);
	p[0] = (struct pollfd){ .fd = pp[0], .events = POLLIN };
	p[1] = (struct pollfd){ .fd = sv[0], .events = POLLIN };
	T_EQ(rpoll(p, 2, 20), 0);
	T_EQ(write(pp[1], "x", 1), 1);
	T_EQ(rpoll(p, 2, 1000), 1);
	T_EQ(p[0].revents, POLLIN);
	FD_ZERO(&rd);
	FD_SET(pp[0], &rd);
	FD_SET(sv[0], &rd);
	T_EQ(rselect(sv[0] > pp[0] ? sv[0] + 1 : pp[0] + 1, &rd, NULL, NULL,
		     &tv),
	     1);
	T_ASSERT(FD_ISSET(pp[0], &rd));
	T_ASSERT(!FD_ISSET(sv[0], &rd));

	/* rselect over an rsocket listener and the pipe. */
	lfd = t_rs_listen(&port);
	FD_ZERO(&rd);
	FD_SET(pp[0], &rd);
	FD_SET(lfd, &rd);
	tv = (struct timeval){ 1, 0 };
	T_EQ(rselect(lfd > pp[0] ? lfd + 1 : pp[0] + 1, &rd, NULL, NULL, &tv),
	     1);
	T_ASSERT(FD_ISSET(pp[0], &rd));
	T_ASSERT(!FD_ISSET(lfd, &rd));
	T_RS_OK(rclose(lfd));

	T_RS_OK(rshutdown(sv[0], SHUT_WR));
	T_EQ(rrecv(sv[1], buf, sizeof(buf), 0), 0);
	T_RS_OK(rclose(sv[0]));
	T_RS_OK(rclose(sv[1]));
	T_RS_OK(rclose(pp[0]));
	T_RS_OK(rclose(pp[1]));
	T_NEG_ERRNO(rclose(pp[0]), EBADF);

	T_NEG_ERRNO(rsocket(AF_INET, SOCK_SEQPACKET, 0), ENOTSUP);
	t_pass();
}
