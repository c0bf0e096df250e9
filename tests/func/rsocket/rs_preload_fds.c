/* SPDX-License-Identifier: MIT */
/*
 * Our librspreload.so (LD_PRELOAD set by ctest) under plain socket calls:
 * a TCP socket is an rsocket (no kernel listener on its port) whose
 * descriptor fstat calls a socket; close-on-exec stays on the descriptor;
 * O_NONBLOCK, a non-blocking connect, SO_ERROR; accept4 with SOCK_NONBLOCK; dup, dup2 and F_DUPFD_CLOEXEC copies share
 * the stream, which lives until the last copy closes; sendfile with and
 * without an offset; select over the socket and a pipe; shutdown.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_util.h"

/* Some socket listens on TCP port (hex in /proc/net/tcp, state 0A). */
static bool kernel_listens(uint16_t port)
{
	char line[256];
	unsigned int p, st;
	bool found = false;
	FILE *f = fopen("/proc/net/tcp", "r");

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &p, &st) == 2 &&
		    p == port && st == 0x0A)
			found = true;
	fclose(f);
	return found;
}

static int accepted = -1;

static void *accept_thread(void *arg)
{
	accepted =
		accept4(*(int *)arg, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	return NULL;
}

static void read_exact(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		T_EQ(poll(&p, 1, T_WAIT_MS), 1);
		n = read(fd, (char *)buf + got, len - got);
		T_GT(n, 0);
		got += (size_t)n;
	}
}

static void write_all(int fd, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		T_GT(n, 0);
		off += (size_t)n;
	}
}

int main(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	static char big[200000], back[200000];
	char buf[16], path[] = "/tmp/rs_preload_fds.XXXXXX";
	struct timeval tv = { 5, 0 };
	int lfd, cfd, sfd, d, d2, d3, file, pp[2];
	struct stat st;
	off_t off;
	pthread_t th;
	fd_set rd;

	t_init("rs_preload_fds");
	if (!getenv("LD_PRELOAD"))
		t_skip("run with LD_PRELOAD=librspreload.so");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	T_GE(lfd, 0);
	T_EQ(fstat(lfd, &st), 0);
	T_ASSERT(S_ISSOCK(st.st_mode));
	T_EQ(fcntl(lfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_EQ(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	T_EQ(listen(lfd, 4), 0);
	T_EQ(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	T_NE(sin.sin_port, 0);
	T_ASSERT(!kernel_listens(ntohs(sin.sin_port)));

	cfd = socket(AF_INET, SOCK_STREAM, 0);
	T_GE(cfd, 0);
	T_EQ(fcntl(cfd, F_GETFD) & FD_CLOEXEC, 0);
	/* rsockets finish accepting once the connecting side answers, so
	 * accept4 runs in a thread of its own. */
	T_EQ(fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK), 0);
	T_EQ(fcntl(cfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_EQ(pthread_create(&th, NULL, accept_thread, &lfd), 0);
	if (connect(cfd, (struct sockaddr *)&sin, sizeof(sin)))
		T_EQ(errno, EINPROGRESS);
	{
		struct pollfd p = { .fd = cfd, .events = POLLOUT };
		socklen_t elen = sizeof(int);
		int err = -1;

		T_EQ(poll(&p, 1, T_WAIT_MS), 1);
		T_EQ(p.revents, POLLOUT);
		T_EQ(getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &elen), 0);
		T_EQ(err, 0);
	}
	T_EQ(pthread_join(th, NULL), 0);
	sfd = accepted;
	T_GE(sfd, 0);
	T_EQ(fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) & ~O_NONBLOCK), 0);
	T_EQ(fcntl(sfd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	T_EQ(fcntl(sfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	T_NEG_ERRNO(recv(sfd, buf, sizeof(buf), 0), EAGAIN);

	/* A copy outlives the original. */
	d = dup(cfd);
	T_GE(d, 0);
	T_EQ(close(cfd), 0);
	write_all(d, "hello", 5);
	read_exact(sfd, buf, 5);
	T_EQ(memcmp(buf, "hello", 5), 0);
	d2 = dup2(d, d + 40);
	T_EQ(d2, d + 40);
	d3 = fcntl(d2, F_DUPFD_CLOEXEC, d + 50);
	T_GE(d3, d + 50);
	T_EQ(fcntl(d3, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	T_EQ(close(d), 0);
	T_EQ(close(d2), 0);
	write_all(d3, "again", 5);
	read_exact(sfd, buf, 5);
	T_EQ(memcmp(buf, "again", 5), 0);

	/* sendfile: at an offset (the file position stays), then from the
	 * file position (which moves). */
	t_fill(big, sizeof(big), 7);
	file = mkstemp(path);
	T_GE(file, 0);
	unlink(path);
	write_all(file, big, sizeof(big));
	T_EQ(lseek(file, 1000, SEEK_SET), 1000);
	off = 0;
	T_EQ(sendfile(d3, file, &off, 100000), 100000);
	T_EQ(off, 100000);
	T_EQ(lseek(file, 0, SEEK_CUR), 1000);
	read_exact(sfd, back, 100000);
	T_EQ(memcmp(back, big, 100000), 0);
	T_EQ(sendfile(d3, file, NULL, 5000), 5000);
	T_EQ(lseek(file, 0, SEEK_CUR), 6000);
	read_exact(sfd, back, 5000);
	T_EQ(memcmp(back, big + 1000, 5000), 0);
	close(file);

	/* select over the stream and a pipe: only the stream is ready. */
	T_EQ(pipe(pp), 0);
	write_all(d3, "x", 1);
	FD_ZERO(&rd);
	FD_SET(sfd, &rd);
	FD_SET(pp[0], &rd);
	T_EQ(select((sfd > pp[0] ? sfd : pp[0]) + 1, &rd, NULL, NULL, &tv), 1);
	T_ASSERT(FD_ISSET(sfd, &rd));
	T_ASSERT(!FD_ISSET(pp[0], &rd));
	read_exact(sfd, buf, 1);

	/* The end of the stream once the last copy shuts down. */
	T_EQ(shutdown(d3, SHUT_WR), 0);
	{
		struct pollfd p = { .fd = sfd, .events = POLLIN };

		T_EQ(poll(&p, 1, T_WAIT_MS), 1);
		T_EQ(read(sfd, buf, sizeof(buf)), 0);
	}
	T_EQ(close(d3), 0);
	T_EQ(close(sfd), 0);
	T_EQ(close(lfd), 0);
	close(pp[0]);
	close(pp[1]);
	t_pass();
}
