/* SPDX-License-Identifier: MIT */
/*
 * Creating, connecting, closing and duplicating sockets, and their
 * options.  Only AF_INET and AF_INET6 stream (TCP) and datagram (UDP)
 * sockets become rsockets, as with rdma-core's preload library; when
 * librdmacm cannot make one (no device, say) the program gets a kernel
 * socket, and a stream whose rsocket connect fails outright is moved to
 * a kernel socket that tries again.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "preload.h"

void pl_set_rsocket_options(int rfd)
{
	if (pl_config.sq_size)
		rsetsockopt(rfd, SOL_RDMA, RDMA_SQSIZE, &pl_config.sq_size,
			    sizeof(int));
	if (pl_config.rq_size)
		rsetsockopt(rfd, SOL_RDMA, RDMA_RQSIZE, &pl_config.rq_size,
			    sizeof(int));
	if (pl_config.inline_size)
		rsetsockopt(rfd, SOL_RDMA, RDMA_INLINE, &pl_config.inline_size,
			    sizeof(int));
}

static bool wanted(int domain, int type, int protocol)
{
	int t = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (domain != AF_INET && domain != AF_INET6)
		return false;
	if (t == SOCK_STREAM)
		return !protocol || protocol == IPPROTO_TCP;
	if (t == SOCK_DGRAM && !pl_config.no_dgram)
		return !protocol || protocol == IPPROTO_UDP;
	return false;
}

/* Give the app fd `fd` the rsocket rfd (or the fork-safe kernel socket). */
static int track(int fd, enum pl_kind kind, int rfd)
{
	struct pl_sock *s = pl_sock_new(kind, rfd);

	if (!s || pl_set(fd, s)) {
		int e = ENOMEM;

		if (s)
			pl_sock_put(s);
		errno = e;
		return -1;
	}
	return fd;
}

PL_EXPORT int socket(int domain, int type, int protocol)
{
	int fd, rfd, e;

	pl_init();
	if (pl_inside || !wanted(domain, type, protocol))
		return pl_real.socket(domain, type, protocol);
	if (pl_config.fork_safe &&
	    (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) == SOCK_STREAM) {
		/* TCP until the first transfer, which may be in a child. */
		fd = pl_real.socket(domain, type, protocol);
		if (fd >= 0 && track(fd, PL_FORK, fd) < 0) {
			pl_real.close(fd);
			return -1;
		}
		return fd;
	}
	fd = pl_reserve(type & SOCK_CLOEXEC);
	if (fd < 0)
		return -1;
	pl_inside++;
	rfd = rsocket(domain, type, protocol);
	pl_inside--;
	if (rfd < 0) {
		pl_real.close(fd);
		return pl_real.socket(domain, type, protocol);
	}
	pl_set_rsocket_options(rfd);
	if (track(fd, PL_RSOCKET, rfd) < 0) {
		e = errno;
		rclose(rfd);
		pl_real.close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

PL_EXPORT int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rbind(rfd, PL_SA(addr), len)
			: pl_real.bind(fd, PL_SA(addr), len);
}

PL_EXPORT int listen(int fd, int backlog)
{
	struct pl_sock *s = pl_lookup(fd);
	int rfd = pl_rfd(fd), ret;

	pl_init();
	if (rfd >= 0)
		return rlisten(rfd, backlog);
	ret = pl_real.listen(fd, backlog);
	if (!ret && s && atomic_load(&s->kind) == PL_FORK)
		atomic_store(&s->kind, PL_FORK_LISTEN);
	return ret;
}

PL_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len, int flags)
{
	struct pl_sock *s = pl_lookup(fd);
	int rfd = pl_rfd(fd), nfd, rnew, e;

	pl_init();
	if (rfd < 0) {
		nfd = pl_real.accept4(fd, PL_SA(addr), len, flags);
		if (nfd >= 0 && s && atomic_load(&s->kind) == PL_FORK_LISTEN &&
		    track(nfd, PL_FORK_PASSIVE, nfd) < 0) {
			pl_real.close(nfd);
			return -1;
		}
		return nfd;
	}
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
		errno = EINVAL;
		return -1;
	}
	nfd = pl_reserve(flags & SOCK_CLOEXEC);
	if (nfd < 0)
		return -1;
	pl_inside++;
	rnew = raccept(rfd, PL_SA(addr), len);
	if (rnew >= 0 && (flags & SOCK_NONBLOCK) &&
	    rfcntl(rnew, F_SETFL, rfcntl(rnew, F_GETFL) | O_NONBLOCK) < 0) {
		e = errno;
		rclose(rnew);
		errno = e;
		rnew = -1;
	}
	pl_inside--;
	if (rnew < 0 || track(nfd, PL_RSOCKET, rnew) < 0) {
		e = errno;
		if (rnew >= 0)
			rclose(rnew);
		pl_real.close(nfd);
		errno = e;
		return -1;
	}
	pl_set_rsocket_options(rnew);
	return nfd;
}

PL_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

/* The rsocket could not connect: carry on with a kernel socket in the
 * app fd's place, with the options that matter copied over. */
static int to_kernel(int fd, struct pl_sock *s, int family)
{
	int k, fl, one = 1, v;
	socklen_t len = sizeof(v);

	k = pl_real.socket(family, SOCK_STREAM, 0);
	if (k < 0)
		return -1;
	fl = rfcntl(s->rfd, F_GETFL);
	if (fl > 0)
		pl_real.fcntl(k, F_SETFL, fl);
	if (!rgetsockopt(s->rfd, SOL_SOCKET, SO_REUSEADDR, &v, &len) && v)
		pl_real.setsockopt(k, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
	len = sizeof(v);
	if (!rgetsockopt(s->rfd, IPPROTO_TCP, TCP_NODELAY, &v, &len) && v)
		pl_real.setsockopt(k, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
	/* dup3 keeps the app fd's number and its close-on-exec flag. */
	fl = pl_real.fcntl(fd, F_GETFD);
	if (pl_real.dup3(k, fd, fl > 0 && (fl & FD_CLOEXEC) ? O_CLOEXEC : 0) <
	    0) {
		pl_real.close(k);
		return -1;
	}
	pl_real.close(k);
	pl_clear(fd);
	pl_sock_put(s);
	return 0;
}

PL_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct pl_sock *s = pl_lookup(fd);
	int rfd = pl_rfd(fd), ret;

	pl_init();
	if (rfd >= 0) {
		pl_inside++;
		ret = rconnect(rfd, PL_SA(addr), len);
		pl_inside--;
		if (ret && errno == EINPROGRESS && len <= sizeof(s->dst)) {
			memcpy(&s->dst, PL_SA(addr), len);
			s->dst_len = len;
		}
		if (!ret || errno == EINPROGRESS || errno == EALREADY ||
		    errno == EISCONN || errno == EAGAIN || errno == EINTR ||
		    atomic_load(&s->refs) > 1)
			return ret;
		if (to_kernel(fd, s, PL_SA(addr)->sa_family))
			return -1;
	} else if (s && atomic_load(&s->kind) == PL_FORK) {
		atomic_store(&s->kind, PL_FORK_ACTIVE);
	}
	return pl_real.connect(fd, PL_SA(addr), len);
}

PL_EXPORT int shutdown(int fd, int how)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rshutdown(rfd, how) : pl_real.shutdown(fd, how);
}

PL_EXPORT int close(int fd)
{
	struct pl_sock *s = pl_lookup(fd);
	int ret;

	pl_init();
	if (!s)
		return pl_real.close(fd);
	pl_clear(fd);
	ret = pl_real.close(fd);
	if (pl_sock_put(s))
		ret = -1;
	return ret;
}

PL_EXPORT int getpeername(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rgetpeername(rfd, PL_SA(addr), len)
			: pl_real.getpeername(fd, PL_SA(addr), len);
}

PL_EXPORT int getsockname(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rgetsockname(rfd, PL_SA(addr), len)
			: pl_real.getsockname(fd, PL_SA(addr), len);
}

PL_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			 socklen_t len)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rsetsockopt(rfd, level, name, val, len)
			: pl_real.setsockopt(fd, level, name, val, len);
}

/* A non-blocking rsocket connect was refused after connect() returned:
 * connect over TCP now, waiting, and give SO_ERROR what that gave. */
static int refused_to_kernel(int fd, struct pl_sock *s)
{
	struct sockaddr_storage dst = s->dst;
	socklen_t len = s->dst_len;
	int fl, err = 0;

	if (to_kernel(fd, s, dst.ss_family))
		return errno;
	fl = pl_real.fcntl(fd, F_GETFL);
	if (fl > 0 && (fl & O_NONBLOCK))
		pl_real.fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (pl_real.connect(fd, (struct sockaddr *)&dst, len))
		err = errno;
	if (fl > 0 && (fl & O_NONBLOCK))
		pl_real.fcntl(fd, F_SETFL, fl);
	return err;
}

PL_EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct pl_sock *s = pl_lookup(fd);
	int rfd = pl_rfd(fd), ret, err;

	pl_init();
	if (rfd < 0)
		return pl_real.getsockopt(fd, level, name, val, len);
	ret = rgetsockopt(rfd, level, name, val, len);
	if (ret || level != SOL_SOCKET || name != SO_ERROR || !s->dst_len)
		return ret;
	memcpy(&err, val, sizeof(err));
	if (err != ECONNREFUSED || atomic_load(&s->refs) > 1) {
		if (err)
			s->dst_len = 0; /* failed otherwise: as it is */
		return 0;
	}
	err = refused_to_kernel(fd, s);
	memcpy(val, &err, sizeof(err));
	return 0;
}
