/* SPDX-License-Identifier: MIT */
/*
 * Non-blocking rsockets driven by rpoll from one thread: rconnect says
 * EINPROGRESS, the listener polls readable when a request waits and
 * raccept says EAGAIN when none does, POLLOUT tells the connection is
 * up, rrecv says EAGAIN with nothing queued, and rpoll mixes rsockets
 * with an ordinary pipe.
 */
#include <fcntl.h>
#include <unistd.h>

#include "t_rs.h"

/* Poll until fd has ev (or fail); the events seen. */
static short wait_for(int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };
	uint64_t end = t_now_ms() + T_WAIT_MS;

	while (t_now_ms() < end) {
		int n = rpoll(&p, 1, 100);

		T_GE(n, 0);
		if (n && (p.revents & ev))
			return p.revents;
		T_EQ(p.revents & (POLLERR | POLLHUP | POLLNVAL), 0);
	}
	T_FAIL("fd %d: no %#x within %d ms", fd, ev, T_WAIT_MS);
}

int main(void)
{
	struct sockaddr_in sin;
	struct pollfd p[3];
	uint16_t port;
	int lfd, cfd, sfd = -1, pipefd[2], r;
	uint8_t buf[8192], out[8192];
	uint64_t end;

	t_init("rs_nonblock");
	lfd = t_rs_listen(&port);
	T_RS_OK(rfcntl(lfd, F_SETFL, O_NONBLOCK));
	T_EQ(rfcntl(lfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_NEG_ERRNO(raccept(lfd, NULL, NULL), EAGAIN);
	/* Nothing waits: the listener is not readable. */
	p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	T_EQ(rpoll(p, 1, 0), 0);
	T_EQ(rpoll(p, 1, 50), 0);

	cfd = rsocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	T_GE(cfd, 0);
	T_EQ(rfcntl(cfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	t_rs_addr(&sin, port);
	r = rconnect(cfd, (struct sockaddr *)&sin, sizeof(sin));
	T_EQ(r, -1);
	T_EQ(errno, EINPROGRESS);
	/* Not connected yet: sending would block. */
	T_NEG_ERRNO(rsend(cfd, "x", 1, 0), EAGAIN);

	/* Both ends progress from this one thread. */
	end = t_now_ms() + T_WAIT_MS;
	for (;;) {
		int nfds = 2;

		T_ASSERT(t_now_ms() < end);
		p[0] = (struct pollfd){ .fd = cfd, .events = POLLOUT };
		p[1] = (struct pollfd){ .fd = sfd < 0 ? lfd : sfd,
					.events = sfd < 0 ? POLLIN : POLLOUT };
		T_GE(rpoll(p, (nfds_t)nfds, 100), 0);
		T_EQ(p[0].revents & (POLLERR | POLLHUP), 0);
		if (sfd < 0 && (p[1].revents & POLLIN)) {
			sfd = raccept(lfd, NULL, NULL);
			T_GE(sfd, 0);
			T_EQ(rfcntl(sfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
		}
		if ((p[0].revents & POLLOUT) && sfd >= 0 &&
		    (p[1].revents & POLLOUT))
			break;
	}
	T_NEG_ERRNO(raccept(lfd, NULL, NULL), EAGAIN);
	/* Connected: a second rconnect says so. */
	T_NEG_ERRNO(rconnect(cfd, (struct sockaddr *)&sin, sizeof(sin)),
		    EISCONN);

	/* Nothing queued. */
	T_NEG_ERRNO(rrecv(sfd, buf, sizeof(buf), 0), EAGAIN);
	p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	T_EQ(rpoll(p, 1, 0), 0);
	T_EQ(rpoll(p, 1, 30), 0);

	/* rpoll over an rsocket and a pipe: the pipe fires first. */
	T_EQ(pipe(pipefd), 0);
	p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	T_EQ(write(pipefd[1], "p", 1), 1);
	T_EQ(rpoll(p, 2, 1000), 1);
	T_EQ(p[0].revents, 0);
	T_EQ(p[1].revents, POLLIN);
	T_EQ(read(pipefd[0], buf, 1), 1);

	/* Now the rsocket. */
	t_fill(out, sizeof(out), 3);
	t_rs_send_all(cfd, out, sizeof(out), 0);
	T_EQ(wait_for(sfd, POLLIN) & POLLIN, POLLIN);
	p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	T_EQ(rpoll(p, 2, 1000), 1);
	T_EQ(p[0].revents, POLLIN);
	T_EQ(p[1].revents, 0);
	memset(buf, 0, sizeof(buf));
	t_rs_recv_all(sfd, buf, sizeof(buf), 0);
	T_MEMEQ(buf, out, sizeof(out));
	T_NEG_ERRNO(rrecv(sfd, buf, sizeof(buf), 0), EAGAIN);
	/* MSG_DONTWAIT on a blocking descriptor. */
	T_RS_OK(rfcntl(sfd, F_SETFL, 0));
	T_EQ(rfcntl(sfd, F_GETFL) & O_NONBLOCK, 0);
	T_NEG_ERRNO(rrecv(sfd, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);

	/* A sender that outruns its peer's buffer gets EAGAIN, not a hang,
	 * and the data still arrives whole once the peer reads. */
	{
		static uint8_t big[1 << 20], got[1 << 20];
		size_t sent = 0, rcvd = 0;

		t_fill(big, sizeof(big), 8);
		end = t_now_ms() + 20000;
		while (rcvd < sizeof(big)) {
			ssize_t n;

			T_ASSERT(t_now_ms() < end);
			if (sent < sizeof(big)) {
				n = rsend(cfd, big + sent, sizeof(big) - sent,
					  0);
				if (n < 0)
					T_EQ(errno, EAGAIN);
				else
					sent += (size_t)n;
			}
			n = rrecv(sfd, got + rcvd, sizeof(got) - rcvd,
				  MSG_DONTWAIT);
			if (n < 0)
				T_EQ(errno, EAGAIN);
			else
				rcvd += (size_t)n;
		}
		T_MEMEQ(got, big, sizeof(big));
	}

	close(pipefd[0]);
	close(pipefd[1]);
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));
	t_pass();
}
