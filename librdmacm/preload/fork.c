/* SPDX-License-Identifier: MIT */
/*
 * RDMAV_FORK_SAFE=1: a forking server cannot hand an RDMA connection to
 * its child, so streams connect over TCP first and become rsockets on
 * their first transfer, in whichever process makes it.  The handshake is
 * rdma-core's, so either side may run rdma-core's preload library: the
 * accepting side listens with an rsocket on the port of its TCP socket
 * (one process at a time, under the named semaphore /rsocket_fork) and
 * sends a 4-byte zero over TCP; the connecting side waits for that zero
 * and connects an rsocket to the TCP peer's address.  The TCP socket is
 * then closed and the app fd holds /dev/null like any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "preload.h"

static int fork_active(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint32_t msg = 1;
	int fl, r;
	ssize_t n;

	fl = pl_real.fcntl(fd, F_GETFL);
	pl_real.fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	n = pl_real.recv(fd, &msg, sizeof(msg), MSG_PEEK | MSG_WAITALL);
	pl_real.fcntl(fd, F_SETFL, fl);
	if (n != sizeof(msg) || msg)
		return -1;
	if (pl_real.getpeername(fd, (struct sockaddr *)&ss, &len))
		return -1;
	r = rsocket(ss.ss_family, SOCK_STREAM, 0);
	if (r < 0)
		return -1;
	pl_set_rsocket_options(r);
	if (rconnect(r, (struct sockaddr *)&ss, len)) {
		rclose(r);
		return -1;
	}
	if (fl > 0 && (fl & O_NONBLOCK))
		rfcntl(r, F_SETFL, O_NONBLOCK);
	return r;
}

static int fork_passive(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint32_t msg = 0;
	int one = 1, l, r = -1, fl;
	sem_t *sem;

	if (pl_real.getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	/* Listen on the port only, as rdma-core's does. */
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = INADDR_ANY;
	else
		memset(&((struct sockaddr_in6 *)&ss)->sin6_addr, 0,
		       sizeof(struct in6_addr));
	sem = sem_open("/rsocket_fork", O_CREAT | O_RDWR, 0770, 1);
	if (sem == SEM_FAILED)
		return -1;
	l = rsocket(ss.ss_family, SOCK_STREAM, 0);
	if (l < 0)
		goto out;
	rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sem_wait(sem);
	if (!rbind(l, (struct sockaddr *)&ss, len) && !rlisten(l, 1) &&
	    pl_real.write(fd, &msg, sizeof(msg)) == sizeof(msg))
		r = raccept(l, NULL, NULL);
	rclose(l);
	sem_post(sem);
	if (r >= 0) {
		pl_set_rsocket_options(r);
		fl = pl_real.fcntl(fd, F_GETFL);
		if (fl > 0 && (fl & O_NONBLOCK))
			rfcntl(r, F_SETFL, O_NONBLOCK);
	}
out:
	sem_close(sem);
	return r;
}

void pl_fork_convert(int fd, struct pl_sock *s)
{
	int kind, r, null, e = errno;

	pthread_mutex_lock(&s->lock);
	kind = atomic_load(&s->kind);
	if (kind != PL_FORK_ACTIVE && kind != PL_FORK_PASSIVE)
		goto out;
	pl_inside++;
	r = kind == PL_FORK_ACTIVE ? fork_active(fd) : fork_passive(fd);
	pl_inside--;
	if (r < 0) {
		/* Stay on TCP: the peer is not doing this. */
		atomic_store(&s->kind, PL_FORK);
		goto out;
	}
	/* The app fd's number now holds /dev/null instead of TCP. */
	null = pl_reserve(false);
	pl_real.shutdown(fd, SHUT_RDWR);
	if (null < 0 || pl_real.dup2(null, fd) < 0) {
		pl_inside++;
		rclose(r);
		pl_inside--;
	} else {
		s->rfd = r;
		atomic_store_explicit(&s->kind, PL_RSOCKET,
				      memory_order_release);
	}
	if (null >= 0)
		pl_real.close(null);
out:
	pthread_mutex_unlock(&s->lock);
	errno = e;
}
