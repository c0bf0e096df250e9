/* SPDX-License-Identifier: MIT */
/* common/msg.c: messages with fds, and every malformed case closing what
 * came with it. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/msg.h"
#include "tests/unit/t_proto.h"

int main(void)
{
	int sv[2], fds[SRD_MAX_FDS], nfds, base, n;
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_msg_hdr h = { .op = 7, .len = 5 };
	int p[2], many[100];

	T_ASSERT(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	T_ASSERT(!pipe(p));
	base = t_self_fd_count();

	/* A message with two fds arrives whole, fds close-on-exec. */
	T_EQ(srd_msg_send(sv[0], &h, "hello", p, 2), sizeof(h) + 5);
	n = srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS);
	T_EQ(n, sizeof(h) + 5);
	T_EQ(nfds, 2);
	T_ASSERT(!memcmp(buf + sizeof(h), "hello", 5));
	T_ASSERT(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	T_EQ(write(fds[1], "x", 1), 1);
	T_EQ(read(p[0], buf, 1), 1);
	srd_close_fds(fds, nfds);
	T_EQ(t_self_fd_count(), base);

	/* No payload, no fds. */
	h.len = 0;
	T_EQ(srd_msg_send(sv[0], &h, NULL, NULL, 0), sizeof(h));
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, 4), sizeof(h));
	T_EQ(nfds, 0);

	/* More fds than the receiver takes: all closed, -EMSGSIZE. */
	h.len = 1;
	T_EQ(srd_msg_send(sv[0], &h, "z", p, 2), sizeof(h) + 1);
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, 1), -EMSGSIZE);
	T_EQ(nfds, 0);
	T_EQ(t_self_fd_count(), base);

	/* More fds than the control buffer holds (kernel truncates). */
	for (int i = 0; i < 100; i++)
		many[i] = p[0];
	h.len = 0;
	t_raw_send(sv[0], &h, sizeof(h), many, 100);
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS),
	     -EMSGSIZE);
	T_EQ(t_self_fd_count(), base);

	/* Shorter than a header, with an fd. */
	t_raw_send(sv[0], "abc", 3, p, 1);
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS),
	     -EBADMSG);
	T_EQ(t_self_fd_count(), base);

	/* A length field that lies. */
	h.len = 100;
	t_raw_send(sv[0], &h, sizeof(h), p, 1);
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS),
	     -EBADMSG);
	T_EQ(t_self_fd_count(), base);

	/* Larger than the buffer: truncated is an error, fds closed. */
	memset(buf, 0, sizeof(buf));
	h.len = 200;
	memcpy(buf, &h, sizeof(h));
	t_raw_send(sv[0], buf, sizeof(h) + 200, p, 1);
	T_EQ(srd_msg_recv(sv[1], buf, 64, fds, &nfds, SRD_MAX_FDS), -EMSGSIZE);
	T_EQ(t_self_fd_count(), base);

	/* Sender side limits. */
	h.len = SRD_MSG_MAX;
	T_EQ(srd_msg_send(sv[0], &h, buf, NULL, 0), -EINVAL);
	h.len = 0;
	T_EQ(srd_msg_send(sv[0], &h, NULL, many, SRD_MAX_FDS + 1), -EINVAL);

	/* End of file. */
	close(sv[0]);
	T_EQ(srd_msg_recv(sv[1], buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS), 0);
	return T_EXIT_PASS;
}
