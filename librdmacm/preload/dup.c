/* SPDX-License-Identifier: MIT */
/*
 * Descriptor calls on app fds: duplicates share the rsocket (the last
 * close closes it), fcntl's flags go to the rsocket, fstat says socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "preload.h"

/* newfd now holds what oldfd holds; s is oldfd's socket. */
static int share(int newfd, struct pl_sock *s)
{
	atomic_fetch_add(&s->refs, 1);
	if (pl_set(newfd, s)) {
		atomic_fetch_sub(&s->refs, 1);
		pl_real.close(newfd);
		errno = ENOMEM;
		return -1;
	}
	return newfd;
}

/* Whatever newfd held goes, as dup2 closes it. */
static void drop(int newfd)
{
	struct pl_sock *t = pl_lookup(newfd);

	if (t) {
		pl_clear(newfd);
		pl_sock_put(t);
	}
}

static struct pl_sock *rsocket_of(int fd)
{
	struct pl_sock *s = pl_lookup(fd);

	/* A fork-safe socket is made an rsocket before it is shared. */
	if (s && pl_rfd(fd) < 0)
		return NULL;
	return s;
}

PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	struct pl_sock *s;
	int ret;

	pl_init();
	s = rsocket_of(oldfd);
	if (oldfd == newfd) {
		errno = EINVAL;
		return -1;
	}
	ret = pl_real.dup3(oldfd, newfd, flags);
	if (ret < 0)
		return ret;
	drop(newfd);
	return s ? share(newfd, s) : ret;
}

PL_EXPORT int dup2(int oldfd, int newfd)
{
	struct pl_sock *s;
	int ret;

	pl_init();
	s = rsocket_of(oldfd);
	if (oldfd == newfd)
		return pl_real.dup2(oldfd, newfd);
	ret = pl_real.dup2(oldfd, newfd);
	if (ret < 0)
		return ret;
	drop(newfd);
	return s ? share(newfd, s) : ret;
}

PL_EXPORT int dup(int oldfd)
{
	struct pl_sock *s;
	int ret;

	pl_init();
	s = rsocket_of(oldfd);
	ret = pl_real.dup(oldfd);
	if (ret < 0 || !s)
		return ret;
	return share(ret, s);
}

static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, va_list ap)
{
	struct pl_sock *s = rsocket_of(fd);
	void *p;
	long arg;
	int ret;

	switch (cmd) {
	case F_GETFL:
		return s ? rfcntl(s->rfd, F_GETFL) : real(fd, cmd);
	case F_SETFL:
		arg = va_arg(ap, long);
		return s ? rfcntl(s->rfd, F_SETFL, (int)arg)
			 : real(fd, cmd, arg);
	case F_GETFD:
		return real(fd, cmd);
	case F_SETFD:
		/* Close-on-exec belongs to the app fd. */
		arg = va_arg(ap, long);
		ret = real(fd, cmd, arg);
		if (!ret && s)
			rfcntl(s->rfd, F_SETFD, (int)arg);
		return ret;
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		arg = va_arg(ap, long);
		ret = real(fd, cmd, arg);
		return ret >= 0 && s ? share(ret, s) : ret;
	case F_GETOWN:
	case F_GETSIG:
	case F_GETLEASE:
	case F_GETPIPE_SZ:
		return real(fd, cmd);
	case F_SETOWN:
	case F_SETSIG:
	case F_SETLEASE:
	case F_NOTIFY:
	case F_SETPIPE_SZ:
	case F_ADD_SEALS:
	case F_GET_SEALS:
		arg = va_arg(ap, long);
		return real(fd, cmd, arg);
	default:
		p = va_arg(ap, void *);
		return real(fd, cmd, p);
	}
}

PL_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int ret;

	pl_init();
	va_start(ap, cmd);
	ret = do_fcntl(pl_real.fcntl, fd, cmd, ap);
	va_end(ap);
	return ret;
}

PL_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int ret;

	pl_init();
	va_start(ap, cmd);
	ret = do_fcntl(pl_real.fcntl64, fd, cmd, ap);
	va_end(ap);
	return ret;
}

PL_EXPORT int fstat(int fd, struct stat *st)
{
	int ret;

	pl_init();
	ret = pl_real.fstat(fd, st);
	if (!ret && pl_lookup(fd))
		st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | S_IFSOCK;
	return ret;
}

PL_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int ret;

	pl_init();
	ret = pl_real.fstat64(fd, st);
	if (!ret && pl_lookup(fd))
		st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | S_IFSOCK;
	return ret;
}
