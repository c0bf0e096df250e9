/* SPDX-License-Identifier: MIT */
/*
 * rsockets, for now without RDMA: rsocket() itself is not available yet,
 * so every descriptor these calls see is an ordinary one, and on an
 * ordinary descriptor rdma-core's rsockets do what the socket call they
 * mirror does.  That is what the rdmacm examples need from them (rpoll
 * on an event channel's fd, above all).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "librdmacm/cma.h"

LIB_EXPORT int rsocket(int domain, int type, int protocol)
{
	return cma_err(EOPNOTSUPP);
}

LIB_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	return bind(socket, addr, addrlen);
}

LIB_EXPORT int rlisten(int socket, int backlog)
{
	return listen(socket, backlog);
}

LIB_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return accept(socket, addr, addrlen);
}

LIB_EXPORT int rconnect(int socket, const struct sockaddr *addr,
			socklen_t addrlen)
{
	return connect(socket, addr, addrlen);
}

LIB_EXPORT int rshutdown(int socket, int how)
{
	return shutdown(socket, how);
}

LIB_EXPORT int rclose(int socket)
{
	return close(socket);
}

LIB_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	return recv(socket, buf, len, flags);
}

LIB_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			     struct sockaddr *src_addr, socklen_t *addrlen)
{
	return recvfrom(socket, buf, len, flags, src_addr, addrlen);
}

LIB_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	return recvmsg(socket, msg, flags);
}

LIB_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	return send(socket, buf, len, flags);
}

LIB_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			   const struct sockaddr *dest_addr, socklen_t addrlen)
{
	return sendto(socket, buf, len, flags, dest_addr, addrlen);
}

LIB_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	return sendmsg(socket, msg, flags);
}

LIB_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return read(socket, buf, count);
}

LIB_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return readv(socket, iov, iovcnt);
}

LIB_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return write(socket, buf, count);
}

LIB_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return writev(socket, iov, iovcnt);
}

LIB_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

LIB_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
		       fd_set *exceptfds, struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

LIB_EXPORT int rgetpeername(int socket, struct sockaddr *addr,
			    socklen_t *addrlen)
{
	return getpeername(socket, addr, addrlen);
}

LIB_EXPORT int rgetsockname(int socket, struct sockaddr *addr,
			    socklen_t *addrlen)
{
	return getsockname(socket, addr, addrlen);
}

LIB_EXPORT int rsetsockopt(int socket, int level, int optname,
			   const void *optval, socklen_t optlen)
{
	if (level == SOL_RDMA)
		return cma_err(ENOTSOCK);
	return setsockopt(socket, level, optname, optval, optlen);
}

LIB_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval,
			   socklen_t *optlen)
{
	if (level == SOL_RDMA)
		return cma_err(ENOTSOCK);
	return getsockopt(socket, level, optname, optval, optlen);
}

LIB_EXPORT int rfcntl(int socket, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl(socket, cmd, arg);
}

LIB_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags,
			off_t offset)
{
	return cma_err(ENOTSOCK);
}

LIB_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	return cma_err(ENOTSOCK);
}

LIB_EXPORT size_t riowrite(int socket, const void *buf, size_t count,
			   off_t offset, int flags)
{
	errno = ENOTSOCK;
	return 0;
}
