/* SPDX-License-Identifier: MIT */
/*
 * rsetsockopt / rgetsockopt / rfcntl values on rsockets: the SOL_SOCKET,
 * IPPROTO_TCP and SOL_RDMA options rdma-core's rsockets know, sizes that
 * apply to the connection made next (and cannot change after it), and
 * SOL_RDMA on an ordinary socket (ENOTSOCK).
 */
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t_rs.h"

static int get_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -12345;

	T_RS_OK(rgetsockopt(fd, level, name, &v, &len));
	T_EQ(len, sizeof(int));
	return v;
}

static void set_int(int fd, int level, int name, int v)
{
	T_RS_OK(rsetsockopt(fd, level, name, &v, sizeof(v)));
}

int main(void)
{
	struct linger l = { .l_onoff = 1, .l_linger = 5 };
	socklen_t len;
	uint16_t port;
	int lfd, cfd, sfd, fd, v, mss, tcp;
	uint8_t buf[70000];

	t_init("rs_opts");
	fd = rsocket(AF_INET, SOCK_STREAM, 0);
	T_GE(fd, 0);
	/* rdma-core's defaults. */
	T_EQ(get_int(fd, SOL_SOCKET, SO_RCVBUF), 1 << 17);
	T_EQ(get_int(fd, SOL_SOCKET, SO_SNDBUF), 1 << 17);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_SQSIZE), 384);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_RQSIZE), 384);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_INLINE), 64);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_IOMAPSIZE), 0);
	T_EQ(get_int(fd, SOL_SOCKET, SO_ERROR), 0);
	T_EQ(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 0);
	T_EQ(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 0);

	/* Buffer sizes are doubled, as the kernel does. */
	set_int(fd, SOL_SOCKET, SO_RCVBUF, 100000);
	T_EQ(get_int(fd, SOL_SOCKET, SO_RCVBUF), 200000);
	set_int(fd, SOL_SOCKET, SO_SNDBUF, 30000);
	T_EQ(get_int(fd, SOL_SOCKET, SO_SNDBUF), 60000);
	set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	T_EQ(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
	set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	T_EQ(get_int(fd, SOL_SOCKET, SO_REUSEADDR), 1);
	set_int(fd, SOL_SOCKET, SO_REUSEADDR, 0);
	T_EQ(get_int(fd, SOL_SOCKET, SO_REUSEADDR), 0);
	set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	T_EQ(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 1);
	set_int(fd, IPPROTO_TCP, TCP_MAXSEG, 1000); /* accepted, no effect */
	T_RS_OK(rsetsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	len = sizeof(l);
	memset(&l, 0, sizeof(l));
	T_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len));
	T_EQ(len, sizeof(l));
	T_EQ(l.l_onoff, 1);
	l.l_onoff = 0;
	T_RS_OK(rsetsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	T_RS_OK(rgetsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len));
	T_EQ(l.l_onoff, 0);

	set_int(fd, SOL_RDMA, RDMA_SQSIZE, 64);
	set_int(fd, SOL_RDMA, RDMA_RQSIZE, 32);
	set_int(fd, SOL_RDMA, RDMA_INLINE, 16);
	set_int(fd, SOL_RDMA, RDMA_IOMAPSIZE, 4);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_SQSIZE), 64);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_RQSIZE), 32);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_INLINE), 16);
	T_EQ(get_int(fd, SOL_RDMA, RDMA_IOMAPSIZE), 4);
	v = 1;
	T_NEG_ERRNO(rsetsockopt(fd, SOL_RDMA, 99, &v, sizeof(v)), ENOTSUP);
	T_NEG_ERRNO(rsetsockopt(fd, SOL_SOCKET, SO_BROADCAST, &v, sizeof(v)),
		    ENOTSUP);
	len = sizeof(v);
	T_NEG_ERRNO(rgetsockopt(fd, SOL_RDMA, 99, &v, &len), ENOTSUP);

	/* fcntl flags. */
	T_EQ(rfcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_RS_OK(rfcntl(fd, F_SETFL, O_NONBLOCK));
	T_EQ(rfcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_RS_OK(rfcntl(fd, F_SETFL, 0));
	T_EQ(rfcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	T_RS_OK(rclose(fd));

	/* The sizes set on a listener are its connections'; a small queue
	 * and small buffers still carry any amount of data. */
	lfd = rsocket(AF_INET, SOCK_STREAM, 0);
	T_GE(lfd, 0);
	set_int(lfd, SOL_RDMA, RDMA_SQSIZE, 16);
	set_int(lfd, SOL_RDMA, RDMA_RQSIZE, 16);
	set_int(lfd, SOL_RDMA, RDMA_INLINE, 0);
	set_int(lfd, SOL_SOCKET, SO_RCVBUF, 4096);
	set_int(lfd, SOL_SOCKET, SO_SNDBUF, 4096);
	{
		struct sockaddr_in sin;
		socklen_t sl = sizeof(sin);

		t_rs_addr(&sin, 0);
		T_RS_OK(rbind(lfd, (struct sockaddr *)&sin, sizeof(sin)));
		T_RS_OK(rlisten(lfd, 4));
		T_RS_OK(rgetsockname(lfd, (struct sockaddr *)&sin, &sl));
		port = ntohs(sin.sin_port);
	}
	cfd = t_rs_pair(lfd, port, &sfd);
	T_EQ(get_int(sfd, SOL_RDMA, RDMA_SQSIZE), 16);
	T_EQ(get_int(sfd, SOL_RDMA, RDMA_RQSIZE), 16);
	T_EQ(get_int(sfd, SOL_RDMA, RDMA_INLINE), 0);
	T_EQ(get_int(sfd, SOL_SOCKET, SO_RCVBUF), 8192);
	/* Too late to change the queues. */
	v = 100;
	T_NEG_ERRNO(rsetsockopt(sfd, SOL_RDMA, RDMA_SQSIZE, &v, sizeof(v)),
		    EINVAL);
	T_NEG_ERRNO(rsetsockopt(cfd, SOL_RDMA, RDMA_RQSIZE, &v, sizeof(v)),
		    EINVAL);
	T_EQ(get_int(sfd, SOL_RDMA, RDMA_SQSIZE), 16);
	/* The path MTU, a power of two from 256 to 4096. */
	mss = get_int(cfd, IPPROTO_TCP, TCP_MAXSEG);
	T_GE(mss, 256);
	T_LE(mss, 4096);
	T_EQ(mss & (mss - 1), 0);
	/* More than both buffers and queues hold: many rounds of credits
	 * and SGL updates, one thread sending and receiving in turn. */
	t_fill(buf, sizeof(buf), 11);
	{
		static uint8_t in[sizeof(buf)];
		size_t sent = 0, rcvd = 0;
		uint64_t end = t_now_ms() + 20000;

		while (rcvd < sizeof(buf)) {
			ssize_t n;

			T_ASSERT(t_now_ms() < end);
			if (sent < sizeof(buf)) {
				n = rsend(cfd, buf + sent,
					  sizeof(buf) - sent < 3000
						  ? sizeof(buf) - sent
						  : 3000,
					  MSG_DONTWAIT);
				if (n < 0)
					T_EQ(errno, EAGAIN);
				else
					sent += (size_t)n;
			}
			n = rrecv(sfd, in + rcvd, sizeof(in) - rcvd,
				  MSG_DONTWAIT);
			if (n < 0)
				T_EQ(errno, EAGAIN);
			else
				rcvd += (size_t)n;
		}
		T_MEMEQ(in, buf, sizeof(buf));
	}
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));

	/* SOL_RDMA means nothing to an ordinary socket; the rest is its. */
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	T_GE(tcp, 0);
	v = 1;
	T_NEG_ERRNO(rsetsockopt(tcp, SOL_RDMA, RDMA_SQSIZE, &v, sizeof(v)),
		    ENOTSOCK);
	len = sizeof(v);
	T_NEG_ERRNO(rgetsockopt(tcp, SOL_RDMA, RDMA_SQSIZE, &v, &len),
		    ENOTSOCK);
	T_RS_OK(rsetsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)));
	T_EQ(get_int(tcp, IPPROTO_TCP, TCP_NODELAY), 1);
	T_RS_OK(rfcntl(tcp, F_SETFL, O_NONBLOCK));
	T_EQ(fcntl(tcp, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	close(tcp);
	t_pass();
}
