/* SPDX-License-Identifier: MIT */
/*
 * What LD_PRELOAD libraries (rdma-core's librspreload.so, ours) rely on:
 *
 * - rgetsockname / rgetpeername with a NULL address and a zero length
 *   succeed and report the address size, as the kernel's do (rdma-core's
 *   preload library learns the family that way when it moves a stream
 *   whose rsocket connect failed onto a kernel socket); a NULL address
 *   with a length is EFAULT;
 * - a datagram rsocket never calls socket() for an IP socket once it
 *   exists: under a preload library that call would come back as another
 *   datagram rsocket.  This program defines socket() itself, so it sees
 *   every call librdmacm makes.
 */
#include <arpa/inet.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "t_rs.h"

static int ip_dgram_calls;
static int counting;

int socket(int domain, int type, int protocol)
{
	if (counting && (domain == AF_INET || domain == AF_INET6) &&
	    (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) == SOCK_DGRAM)
		ip_dgram_calls++;
	return (int)syscall(SYS_socket, domain, type, protocol);
}

static void null_addr(void)
{
	struct sockaddr_in sin;
	socklen_t len = 0;
	uint16_t port;
	int lfd, cfd, sfd;

	lfd = t_rs_listen(&port);
	T_RS_OK(rgetsockname(lfd, NULL, &len));
	T_EQ(len, sizeof(struct sockaddr_in));
	len = sizeof(sin);
	T_NEG_ERRNO(rgetsockname(lfd, NULL, &len), EFAULT);
	T_NEG_ERRNO(rgetsockname(lfd, (struct sockaddr *)&sin, NULL), EFAULT);

	cfd = t_rs_pair(lfd, port, &sfd);
	len = 0;
	T_RS_OK(rgetpeername(cfd, NULL, &len));
	T_EQ(len, sizeof(struct sockaddr_in));
	len = sizeof(sin);
	T_NEG_ERRNO(rgetpeername(cfd, NULL, &len), EFAULT);
	/* A short buffer gets what fits and the full size. */
	len = 4;
	memset(&sin, 0xab, sizeof(sin));
	T_RS_OK(rgetpeername(cfd, (struct sockaddr *)&sin, &len));
	T_EQ(len, sizeof(struct sockaddr_in));
	T_EQ(sin.sin_family, AF_INET);
	T_EQ(sin.sin_addr.s_addr, 0xabababab);
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));
}

static void dgram_no_socket(void)
{
	struct sockaddr_in dst, from;
	socklen_t flen = sizeof(from), len = sizeof(dst);
	struct pollfd p;
	char buf[16];
	int rx, tx;

	rx = rsocket(AF_INET, SOCK_DGRAM, 0);
	T_GE(rx, 0);
	t_rs_addr(&dst, 0);
	T_RS_OK(rbind(rx, (struct sockaddr *)&dst, sizeof(dst)));
	T_RS_OK(rgetsockname(rx, (struct sockaddr *)&dst, &len));
	/* Unbound: the first send binds it to any and finds the source
	 * address the route picks. */
	tx = rsocket(AF_INET, SOCK_DGRAM, 0);
	T_GE(tx, 0);
	counting = 1;
	T_EQ(rsendto(tx, "probe", 5, 0, (struct sockaddr *)&dst, sizeof(dst)),
	     5);
	T_EQ(rsendto(tx, "again", 5, 0, (struct sockaddr *)&dst, sizeof(dst)),
	     5);
	counting = 0;
	T_EQ(ip_dgram_calls, 0);
	p = (struct pollfd){ .fd = rx, .events = POLLIN };
	T_EQ(rpoll(&p, 1, T_WAIT_MS), 1);
	T_EQ(rrecvfrom(rx, buf, sizeof(buf), 0, (struct sockaddr *)&from,
		       &flen),
	     5);
	T_EQ(memcmp(buf, "probe", 5), 0);
	T_EQ(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
	T_RS_OK(rclose(tx));
	T_RS_OK(rclose(rx));
}

int main(void)
{
	t_init("rs_preload");
	null_addr();
	dgram_no_socket();
	t_pass();
}
