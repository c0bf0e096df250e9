/* SPDX-License-Identifier: MIT */
/*
 * SOFTRDMA_TRACE: the library dumps every WQE it posts to stderr; with
 * "cqe" the daemon dumps every CQE it writes for this context to the same
 * stderr, which OPEN_DEVICE hands it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dump.h"
#include "common/msg.h"
#include "libibverbs/ibverbs.h"

unsigned int srd_trace_setup(uint32_t *open_flags)
{
	unsigned int flags = srd_trace_flags_from_env();
	struct stat st;
	int fl;

	*open_flags = 0;
	if (!(flags & SRD_TRACE_F_CQE))
		return flags;
	*open_flags = SRD_TRACE_CQE;
	/* Two processes write to a file here, each through its own file
	 * offset unless the file appends: without O_APPEND they would
	 * overwrite each other's lines. */
	if (!fstat(STDERR_FILENO, &st) && S_ISREG(st.st_mode)) {
		fl = fcntl(STDERR_FILENO, F_GETFL);
		if (fl >= 0 && !(fl & O_APPEND))
			fcntl(STDERR_FILENO, F_SETFL, fl | O_APPEND);
	}
	return flags;
}

/* Copies what the daemon writes into the pipe to stderr, until the
 * daemon closes its end. */
static void *trace_relay(void *arg)
{
	int rfd = (int)(intptr_t)arg;
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(rfd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(STDERR_FILENO, buf + off,
					  (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	close(rfd);
	return NULL;
}

/* stderr is a unix socket, which the daemon refuses (it could carry our
 * connection itself and keep it open): it gets a pipe's non-blocking
 * write end, and a thread of ours relays the pipe to stderr. */
static int trace_relay_open(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int p[2], err;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) || pthread_attr_init(&attr)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, trace_relay, (void *)(intptr_t)p[0]);
	pthread_attr_destroy(&attr);
	if (err) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	return p[1];
}

/*
 * What the daemon writes CQE traces to: stderr as a description it can
 * write without blocking and without rights of its own.  A socket (but a
 * unix one) or a regular file is handed over as it is (the daemon sends
 * to a socket with MSG_DONTWAIT); for a pipe or a terminal we open a
 * non-blocking description of our own, with our own rights, as the
 * daemon never opens anything for us; a unix socket gets a pipe that a
 * thread of ours relays.  Returns an fd to pass and close, or -1: no CQE
 * trace.
 */
int srd_trace_fd_open(void)
{
	struct stat st;
	int fd, fl;

	if (fstat(STDERR_FILENO, &st))
		return -1;
	if (S_ISSOCK(st.st_mode) && srd_fd_unix_socket(STDERR_FILENO))
		return trace_relay_open();
	if (S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode))
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
	fd = open("/proc/self/fd/2",
		  O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	fl = fcntl(STDERR_FILENO, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
	fprintf(stderr, "softrdma: stderr cannot be written without "
			"blocking: no CQE trace\n");
	return -1;
}
