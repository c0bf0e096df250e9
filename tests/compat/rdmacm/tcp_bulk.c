// SPDX-License-Identifier: MIT
/*
 * An ordinary TCP program, built without any RDMA header, for running
 * under librspreload.so: the client sends a byte pattern, the server
 * checks and echoes it, the client checks the echo and the end of the
 * stream.
 *
 *   tcp_bulk server ADDR PORT [fork]  prints "listening" once it listens
 *   tcp_bulk client ADDR PORT BYTES [select] [blocking]
 *
 * The client connects without blocking (connect, poll for POLLOUT,
 * SO_ERROR; "blocking": a blocking connect), then moves data with poll (or select) over its socket and a
 * pipe, a descriptor of another kind.  The server uses blocking calls on
 * a dup2'ed copy of the accepted socket, in a child process with "fork"
 * (what RDMAV_FORK_SAFE=1 is for under the preload).  Both print "ok" and
 * figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	fprintf(stderr, "tcp_bulk: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct addrinfo *resolve(const char *host, const char *port, int passive)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	struct addrinfo *ai = NULL;
	int ret = getaddrinfo(host, port, &hints, &ai);

	if (ret) {
		fprintf(stderr, "tcp_bulk: %s: %s\n", host, gai_strerror(ret));
		return NULL;
	}
	return ai;
}

/* Blocking: read everything, checking it, and write it back. */
static int echo(int fd)
{
	static uint8_t buf[CHUNK];
	uint64_t total, done = 0;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(total)) {
		n = read(fd, (uint8_t *)&total + got, sizeof(total) - got);
		if (n <= 0)
			return fail("read length");
		got += (size_t)n;
	}
	while (done < total) {
		size_t want = total - done < CHUNK ? total - done : CHUNK;

		n = recv(fd, buf, want, 0);
		if (n <= 0)
			return fail("recv");
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != pattern(done + (uint64_t)i)) {
				fprintf(stderr, "tcp_bulk: byte %llu differs\n",
					(unsigned long long)(done +
							     (uint64_t)i));
				return 1;
			}
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = send(fd, buf + off, (size_t)(n - off), 0);

			if (w <= 0)
				return fail("send");
			off += w;
		}
		done += (uint64_t)n;
	}
	printf("ok server echoed %llu bytes\n", (unsigned long long)total);
	return 0;
}

/* Serve the connection in a child, as forking servers do. */
static int serve_forked(int lfd, int cfd, int (*serve)(int))
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return fail("fork");
	if (!pid) {
		close(lfd);
		_exit(serve(cfd));
	}
	close(cfd);
	if (waitpid(pid, &status, 0) != pid)
		return fail("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int serve(int cfd)
{
	int one = 1, dfd, ret;

	/* The stream lives on in a copy at another number. */
	dfd = dup2(cfd, cfd + 20);
	if (dfd != cfd + 20)
		return fail("dup2");
	close(cfd);
	if (setsockopt(dfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return fail("TCP_NODELAY");
	ret = echo(dfd);
	close(dfd);
	return ret;
}

static int server(const char *host, const char *port, int forking)
{
	struct addrinfo *ai = resolve(host, port, 1);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	int one = 1, lfd, cfd, ret;

	if (!ai)
		return 1;
	lfd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (lfd < 0)
		return fail("socket");
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		return fail("SO_REUSEADDR");
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 4))
		return fail("bind/listen");
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	cfd = accept(lfd, (struct sockaddr *)&peer, &plen);
	if (cfd < 0)
		return fail("accept");
	if (peer.ss_family != AF_INET && peer.ss_family != AF_INET6) {
		fprintf(stderr, "tcp_bulk: peer family %d\n", peer.ss_family);
		return 1;
	}
	ret = forking ? serve_forked(lfd, cfd, serve) : serve(cfd);
	close(lfd);
	return ret;
}

static int connect_to(const char *host, const char *port, int blocking)
{
	struct addrinfo *ai = resolve(host, port, 0);
	struct pollfd p;
	socklen_t len = sizeof(int);
	int fd, err = -1;

	if (!ai)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0) {
		fail("socket");
		return -1;
	}
	if (blocking) {
		if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			fail("connect");
			return -1;
		}
		freeaddrinfo(ai);
		return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ? -1
									   : fd;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		fail("O_NONBLOCK");
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		fail("connect");
		return -1;
	}
	freeaddrinfo(ai);
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, 30000) != 1 || !(p.revents & POLLOUT)) {
		fprintf(stderr, "tcp_bulk: connect: revents %#x\n", p.revents);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		errno = err;
		fail("SO_ERROR");
		return -1;
	}
	return fd;
}

/* Wait for the socket (and the pipe) with poll or select. */
static int wait_fds(int fd, int pipe_rd, int want_out, int use_select, int *in,
		    int *out, int *pipe_in)
{
	if (use_select) {
		fd_set r, w;
		int n;

		FD_ZERO(&r);
		FD_ZERO(&w);
		FD_SET(fd, &r);
		FD_SET(pipe_rd, &r);
		if (want_out)
			FD_SET(fd, &w);
		n = select((fd > pipe_rd ? fd : pipe_rd) + 1, &r, &w, NULL,
			   NULL);
		if (n < 0)
			return fail("select");
		*in = FD_ISSET(fd, &r);
		*out = FD_ISSET(fd, &w);
		*pipe_in = FD_ISSET(pipe_rd, &r);
	} else {
		struct pollfd p[2] = {
			{ .fd = pipe_rd, .events = POLLIN },
			{ .fd = fd,
			  .events = POLLIN | (want_out ? POLLOUT : 0) },
		};

		if (poll(p, 2, -1) < 0)
			return fail("poll");
		if (p[1].revents & (POLLERR | POLLNVAL)) {
			fprintf(stderr, "tcp_bulk: revents %#x\n",
				p[1].revents);
			return 1;
		}
		*in = !!(p[1].revents & (POLLIN | POLLHUP));
		*out = !!(p[1].revents & POLLOUT);
		*pipe_in = !!(p[0].revents & POLLIN);
	}
	return 0;
}

static int client(const char *host, const char *port, uint64_t total,
		  int use_select, int blocking)
{
	static uint8_t sbuf[CHUNK], rbuf[CHUNK];
	uint64_t sent = 0, rcvd = 0, hdr = total;
	int fd, pipefd[2], in, out, pipe_in, pipe_seen = 0;
	size_t hdr_sent = 0;
	double t0;
	ssize_t n;

	fd = connect_to(host, port, blocking);
	if (fd < 0 || pipe(pipefd))
		return 1;
	/* The pipe gets ready in the middle of the stream. */
	t0 = now();
	while (rcvd < total || hdr_sent < sizeof(hdr)) {
		if (wait_fds(fd, pipefd[0], sent < total, use_select, &in, &out,
			     &pipe_in))
			return 1;
		if (pipe_in) {
			char c;

			if (read(pipefd[0], &c, 1) != 1 || c != 'p')
				return fail("pipe");
			pipe_seen++;
		}
		if (out && hdr_sent < sizeof(hdr)) {
			n = send(fd, (uint8_t *)&hdr + hdr_sent,
				 sizeof(hdr) - hdr_sent, 0);
			if (n < 0 && errno != EAGAIN)
				return fail("send length");
			hdr_sent += n > 0 ? (size_t)n : 0;
		} else if (out && sent < total) {
			size_t len = total - sent < CHUNK ? total - sent
							  : CHUNK;

			for (size_t i = 0; i < len; i++)
				sbuf[i] = pattern(sent + i);
			n = write(fd, sbuf, len);
			if (n < 0 && errno != EAGAIN)
				return fail("write");
			if (n > 0) {
				if (sent < total / 2 &&
				    sent + (uint64_t)n >= total / 2 &&
				    write(pipefd[1], "p", 1) != 1)
					return fail("pipe write");
				sent += (uint64_t)n;
			}
		}
		if (in) {
			n = read(fd, rbuf, sizeof(rbuf));
			if (n == 0) {
				fprintf(stderr, "tcp_bulk: EOF at %llu\n",
					(unsigned long long)rcvd);
				return 1;
			}
			if (n < 0 && errno != EAGAIN)
				return fail("read");
			for (ssize_t i = 0; i < n; i++) {
				if (rbuf[i] != pattern(rcvd + (uint64_t)i)) {
					fprintf(stderr,
						"tcp_bulk: echo byte %llu "
						"differs\n",
						(unsigned long long)(rcvd +
								     (uint64_t)
									     i));
					return 1;
				}
			}
			rcvd += n > 0 ? (uint64_t)n : 0;
		}
	}
	t0 = now() - t0;
	/* The server closes after the echo: the stream ends. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	n = read(fd, rbuf, sizeof(rbuf));
	if (n != 0) {
		fprintf(stderr, "tcp_bulk: read after the echo: %zd\n", n);
		return 1;
	}
	if (total && pipe_seen != 1) {
		fprintf(stderr, "tcp_bulk: the pipe was seen %d times\n",
			pipe_seen);
		return 1;
	}
	close(fd);
	printf("ok client %llu bytes each way %.3f s %.1f MB/s\n",
	       (unsigned long long)total, t0,
	       t0 > 0 ? 2.0 * (double)total / t0 / 1e6 : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3],
			      argc == 5 && !strcmp(argv[4], "fork"));
	if (argc >= 5 && !strcmp(argv[1], "client")) {
		int use_select = 0, blocking = 0;

		for (int i = 5; i < argc; i++) {
			use_select |= !strcmp(argv[i], "select");
			blocking |= !strcmp(argv[i], "blocking");
		}
		return client(argv[2], argv[3], strtoull(argv[4], NULL, 0),
			      use_select, blocking);
	}
	fprintf(stderr, "usage: tcp_bulk server ADDR PORT [fork] | "
			"tcp_bulk client ADDR PORT BYTES [select] "
			"[blocking]\n");
	return 2;
}
