/* SPDX-License-Identifier: MIT */
/*
 * A byte stream checked byte for byte, as rstream -T a -T v runs it:
 * two processes, non-blocking rsockets driven by rpoll, nothing inline,
 * 1 MiB writes and odd sizes, one direction and then the other; with
 * 512 KiB socket buffers (a 1 MiB receive buffer, granted half by half),
 * as rstream sets them, and with 8 KiB ones (a half ends every 8 KiB).
 * Every byte is a function of its offset in the stream (and of a seed per
 * direction) that repeats at no power of two, so a byte placed, staged or
 * read at a wrong offset shows, whichever ring it went wrong in.
 */
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_rs.h"

#define XFER_MAX ((1 << 20) + 4099)

/* Transfers of each phase: size and count. */
static const struct {
	uint32_t size, count;
} phases[] = {
	/* as rstream's 1m_bw */
	{ 1 << 20, 60 },
	/* odd sizes: writes end anywhere in a half */
	{ (1 << 20) + 4099, 8 },
	{ 65537, 40 },
	{ 333, 300 },
	{ 1 << 20, 20 },
};

struct side {
	int fd;
	uint8_t *buf;
	uint64_t sent, rcvd; /* stream offsets, this side's direction */
	uint8_t seed_out, seed_in;
	uint32_t rbuf; /* the receive buffer's size */
	uint32_t div;  /* phases run count / div times (at least once) */
	const char *name;
};

static uint64_t deadline;

static uint8_t stream_byte(uint64_t at, uint8_t seed)
{
	return (uint8_t)(at ^ (at >> 8) ^ (at >> 16) ^ (at >> 24)) + seed;
}

/* Both processes give up a little before the watchdog would bark, which
 * the ctest entry sets past the minute this can take under TSan. */
static uint64_t stream_deadline(void)
{
	return t_now_ms() + (t_watchdog_s() - 5) * 1000ull;
}

static void wait_ev(int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };

	for (;;) {
		int n = rpoll(&p, 1, 0);

		T_GE(n, 0);
		if (n) {
			T_EQ(p.revents & (POLLERR | POLLHUP | POLLNVAL), 0);
			return;
		}
		T_ASSERT(t_now_ms() < deadline);
	}
}

static void send_xfer(struct side *s, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		s->buf[i] = stream_byte(s->sent + i, s->seed_out);
	for (uint32_t off = 0; off < size;) {
		ssize_t n;

		wait_ev(s->fd, POLLOUT);
		n = rsend(s->fd, s->buf + off, size - off, 0);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				T_FAIL("%s: rsend: %s", s->name,
				       t_errname(errno));
			continue;
		}
		T_GT(n, 0);
		T_LE(n, (ssize_t)(size - off));
		off += (uint32_t)n;
	}
	s->sent += size;
}

static void recv_xfer(struct side *s, uint32_t size)
{
	for (uint32_t off = 0; off < size;) {
		ssize_t n;

		wait_ev(s->fd, POLLIN);
		n = rrecv(s->fd, s->buf + off, size - off, 0);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				T_FAIL("%s: rrecv: %s", s->name,
				       t_errname(errno));
			continue;
		}
		T_GT(n, 0);
		T_LE(n, (ssize_t)(size - off));
		off += (uint32_t)n;
	}
	for (uint32_t i = 0; i < size; i++) {
		uint64_t at = s->rcvd + i;
		uint8_t want = stream_byte(at, s->seed_in);

		if (s->buf[i] != want)
			T_FAIL("%s: stream byte %llu (receive buffer offset "
			       "%llu) is %#x, not %#x",
			       s->name, (unsigned long long)at,
			       (unsigned long long)(at % s->rbuf), s->buf[i],
			       want);
	}
	s->rcvd += size;
}

/* The client sends each phase first and then receives it back, the
 * server the other way round (rstream's order). */
static void run(struct side *s, bool client)
{
	for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		for (int dir = 0; dir < 2; dir++) {
			bool out = (dir == 0) == client;

			uint32_t n = phases[p].count / s->div;

			for (uint32_t c = 0; c < (n ? n : 1); c++) {
				if (out)
					send_xfer(s, phases[p].size);
				else
					recv_xfer(s, phases[p].size);
			}
		}
	}
}

static void set_opts(int fd, int v)
{
	int zero = 0, one = 1;

	T_RS_OK(rsetsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	T_RS_OK(rsetsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	T_RS_OK(rsetsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	T_RS_OK(rsetsockopt(fd, SOL_RDMA, RDMA_INLINE, &zero, sizeof(zero)));
}

/* The server: a process of its own, as rstream's (run from a fresh
 * image: a forked copy of the library's state would share the parent's
 * connection to the device). */
static void server(int sock_buf, int port_pipe)
{
	struct side srv = { .seed_out = 0x17,
			    .seed_in = 0x40,
			    .rbuf = 2u * (uint32_t)sock_buf,
			    .div = sock_buf < (1 << 19) ? 4 : 1,
			    .name = "client->server" };
	uint16_t port;
	int lfd;

	lfd = t_rs_listen(&port);
	set_opts(lfd, sock_buf);
	T_EQ(write(port_pipe, &port, sizeof(port)), (ssize_t)sizeof(port));
	srv.fd = raccept(lfd, NULL, NULL);
	if (srv.fd < 0)
		T_FAIL("raccept: %s", t_errname(errno));
	T_RS_OK(rfcntl(srv.fd, F_SETFL, O_NONBLOCK));
	srv.buf = t_zalloc(XFER_MAX);
	run(&srv, false);
	/* The client saw its last bytes: it may close now. */
	T_EQ(write(port_pipe, &port, sizeof(port)), (ssize_t)sizeof(port));
	T_RS_OK(rclose(srv.fd));
	T_RS_OK(rclose(lfd));
	_exit(0);
}

static void run_pair(int sock_buf)
{
	struct side cli = { .seed_out = 0x40,
			    .seed_in = 0x17,
			    .rbuf = 2u * (uint32_t)sock_buf,
			    .div = sock_buf < (1 << 19) ? 4 : 1,
			    .name = "server->client" };
	struct sockaddr_in sin;
	uint16_t port;
	int fds[2], status;
	pid_t pid;

	T_EQ(pipe(fds), 0);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		char buf_arg[16], fd_arg[16];

		close(fds[0]);
		snprintf(buf_arg, sizeof(buf_arg), "%d", sock_buf);
		snprintf(fd_arg, sizeof(fd_arg), "%d", fds[1]);
		execl("/proc/self/exe", "rs_stream_verify", "server", buf_arg,
		      fd_arg, (char *)NULL);
		_exit(1);
	}
	close(fds[1]);
	T_EQ(read(fds[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	cli.fd = rsocket(AF_INET, SOCK_STREAM, 0);
	T_GE(cli.fd, 0);
	set_opts(cli.fd, sock_buf);
	t_rs_addr(&sin, port);
	T_RS_OK(rconnect(cli.fd, (struct sockaddr *)&sin, sizeof(sin)));
	T_RS_OK(rfcntl(cli.fd, F_SETFL, O_NONBLOCK));
	cli.buf = t_zalloc(XFER_MAX);
	run(&cli, true);
	T_EQ(cli.sent, cli.rcvd);
	T_EQ(read(fds[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), 0);
	close(fds[0]);
	t_free(cli.buf, XFER_MAX);
	T_RS_OK(rclose(cli.fd));
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server")) {
		t_assert_init("rs_stream_verify server");
		deadline = stream_deadline();
		server((int)strtol(argv[2], NULL, 10),
		       (int)strtol(argv[3], NULL, 10));
	}
	t_init("rs_stream_verify");
	deadline = stream_deadline();
	run_pair(1 << 19);
	run_pair(1 << 13);
	t_pass();
}
