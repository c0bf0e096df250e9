/* SPDX-License-Identifier: MIT */
/*
 * End of stream: after the peer's rshutdown(SHUT_WR) rrecv returns 0 and
 * the other direction still works; after the peer's rclose queued data is
 * still read (rpoll says POLLIN, not POLLHUP, while it lasts), then 0,
 * rpoll reports POLLHUP and sending fails.  A
 * blocked reader wakes up when the peer closes.
 */
#include <pthread.h>
#include <signal.h>

#include "t_rs.h"

static void *close_later(void *p)
{
	int fd = *(int *)p;

	t_sleep_ms(100);
	T_RS_OK(rclose(fd));
	return NULL;
}

int main(void)
{
	uint8_t buf[4096], out[3000];
	struct pollfd p;
	uint16_t port;
	int lfd, cfd, sfd;
	pthread_t th;

	t_init("rs_eof");
	signal(SIGPIPE, SIG_IGN);
	lfd = t_rs_listen(&port);

	/* Half close. */
	cfd = t_rs_pair(lfd, port, &sfd);
	T_EQ(rsend(cfd, "abc", 3, 0), 3);
	T_RS_OK(rshutdown(cfd, SHUT_WR));
	T_NEG_ERRNO(rsend(cfd, "d", 1, 0), EPIPE);
	T_EQ(rrecv(sfd, buf, sizeof(buf), MSG_WAITALL), 3);
	T_EQ(memcmp(buf, "abc", 3), 0);
	T_EQ(rrecv(sfd, buf, sizeof(buf), 0), 0);
	T_EQ(rrecv(sfd, buf, sizeof(buf), 0), 0);
	/* The server can still talk to the half-closed client. */
	T_EQ(rsend(sfd, "back", 4, 0), 4);
	T_EQ(rrecv(cfd, buf, 4, MSG_WAITALL), 4);
	T_EQ(memcmp(buf, "back", 4), 0);
	T_RS_OK(rshutdown(sfd, SHUT_WR));
	T_EQ(rrecv(cfd, buf, sizeof(buf), 0), 0);
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));

	/* Close with data in flight: the data, then end of stream. */
	cfd = t_rs_pair(lfd, port, &sfd);
	t_fill(out, sizeof(out), 4);
	T_EQ(rsend(cfd, out, sizeof(out), 0), (ssize_t)sizeof(out));
	T_RS_OK(rclose(cfd));
	/* Data still queued: readable, not yet hung up (the peer's close
	 * is known by now, rclose waited for its messages to land). */
	p = (struct pollfd){ .fd = sfd, .events = POLLIN };
	T_EQ(rpoll(&p, 1, 1000), 1);
	T_EQ(p.revents, POLLIN);
	memset(buf, 0, sizeof(buf));
	T_EQ(rrecv(sfd, buf, 1000, 0), 1000);
	T_EQ(rpoll(&p, 1, 1000), 1);
	T_EQ(p.revents, POLLIN);
	T_EQ(rrecv(sfd, buf + 1000, sizeof(buf) - 1000, MSG_WAITALL),
	     (ssize_t)sizeof(out) - 1000);
	T_MEMEQ(buf, out, sizeof(out));
	T_EQ(rrecv(sfd, buf, sizeof(buf), 0), 0);
	p = (struct pollfd){ .fd = sfd, .events = POLLIN | POLLOUT };
	T_EQ(rpoll(&p, 1, 1000), 1);
	T_EQ(p.revents & POLLHUP, POLLHUP);
	T_NEG_ERRNO(rsend(sfd, "x", 1, 0), ECONNRESET);
	T_RS_OK(rclose(sfd));

	/* A reader blocked in rrecv sees the close. */
	cfd = t_rs_pair(lfd, port, &sfd);
	T_EQ(pthread_create(&th, NULL, close_later, &cfd), 0);
	T_EQ(rrecv(sfd, buf, sizeof(buf), 0), 0);
	T_EQ(pthread_join(th, NULL), 0);
	T_RS_OK(rclose(sfd));

	/* And one blocked in rpoll. */
	cfd = t_rs_pair(lfd, port, &sfd);
	T_EQ(pthread_create(&th, NULL, close_later, &cfd), 0);
	p = (struct pollfd){ .fd = sfd, .events = POLLIN };
	T_EQ(rpoll(&p, 1, T_WAIT_MS), 1);
	T_NE(p.revents & (POLLIN | POLLHUP), 0);
	T_EQ(rrecv(sfd, buf, sizeof(buf), 0), 0);
	T_EQ(pthread_join(th, NULL), 0);
	T_RS_OK(rclose(sfd));

	T_RS_OK(rclose(lfd));
	t_pass();
}
