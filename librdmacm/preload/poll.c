/* SPDX-License-Identifier: MIT */
/*
 * poll and select over app fds: when any of them is an rsocket the whole
 * set goes to rpoll (which polls the others through the kernel), with
 * app fds replaced by their rsockets; otherwise straight to the kernel.
 */
#include <errno.h>
#include <stdlib.h>

#include <rdma/rsocket.h>

#include "preload.h"

/* A per-thread array of at least n entries. */
static struct pollfd *scratch(nfds_t n)
{
	static __thread struct pollfd *buf;
	static __thread nfds_t size;

	if (n > size) {
		struct pollfd *p = realloc(buf, n * sizeof(*p));

		if (!p)
			return NULL;
		buf = p;
		size = n;
	}
	return buf;
}

PL_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *r;
	nfds_t i;
	bool any = false;
	int ret;

	pl_init();
	for (i = 0; i < nfds && !any; i++)
		any = pl_lookup(fds[i].fd) != NULL;
	if (!any)
		return pl_real.poll(fds, nfds, timeout);
	r = scratch(nfds);
	if (!r) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < nfds; i++) {
		int rfd = pl_rfd(fds[i].fd);

		r[i].fd = rfd >= 0 ? rfd : fds[i].fd;
		r[i].events = fds[i].events;
		r[i].revents = 0;
	}
	ret = rpoll(r, nfds, timeout);
	for (i = 0; i < nfds; i++)
		fds[i].revents = ret < 0 ? 0 : r[i].revents;
	return ret;
}

PL_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		     struct timeval *tv)
{
	struct pollfd *p;
	int *app, n = 0, ret, count = 0, ms;
	bool any = false;

	pl_init();
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE && !any; fd++)
		any = pl_lookup(fd) &&
		      ((rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) ||
		       (ex && FD_ISSET(fd, ex)));
	if (!any)
		return pl_real.select(nfds, rd, wr, ex, tv);
	p = scratch((nfds_t)nfds);
	app = malloc((size_t)nfds * sizeof(*app));
	if (!p || !app) {
		free(app);
		errno = ENOMEM;
		return -1;
	}
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		short ev = 0;
		int rfd;

		if (rd && FD_ISSET(fd, rd))
			ev |= POLLIN;
		if (wr && FD_ISSET(fd, wr))
			ev |= POLLOUT;
		if (ex && FD_ISSET(fd, ex))
			ev |= POLLPRI;
		if (!ev)
			continue;
		rfd = pl_rfd(fd);
		p[n] = (struct pollfd){ .fd = rfd >= 0 ? rfd : fd,
					.events = ev };
		app[n++] = fd;
	}
	ms = tv ? (int)(tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000) : -1;
	ret = rpoll(p, (nfds_t)n, ms);
	if (ret < 0) {
		free(app);
		return ret;
	}
	if (rd)
		FD_ZERO(rd);
	if (wr)
		FD_ZERO(wr);
	if (ex)
		FD_ZERO(ex);
	for (int i = 0; i < n; i++) {
		short re = p[i].revents;

		/* As the kernel's select: errors and hang-ups make a
		 * descriptor readable and writable for what was asked. */
		if (rd && (p[i].events & POLLIN) &&
		    (re & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(app[i], rd);
			count++;
		}
		if (wr && (p[i].events & POLLOUT) &&
		    (re & (POLLOUT | POLLERR))) {
			FD_SET(app[i], wr);
			count++;
		}
		if (ex && (p[i].events & POLLPRI) && (re & POLLPRI)) {
			FD_SET(app[i], ex);
			count++;
		}
	}
	if (tv && !count)
		*tv = (struct timeval){ 0 };
	free(app);
	return count;
}
