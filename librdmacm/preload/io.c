/* SPDX-License-Identifier: MIT */
/* Data calls: an app fd of an rsocket reads and writes the rsocket. */
#include <errno.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "preload.h"

PL_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rread(rfd, buf, count) : pl_real.read(fd, buf, count);
}

PL_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rreadv(rfd, iov, iovcnt)
			: pl_real.readv(fd, iov, iovcnt);
}

PL_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rrecv(rfd, buf, len, flags)
			: pl_real.recv(fd, buf, len, flags);
}

PL_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			   __SOCKADDR_ARG addr, socklen_t *alen)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rrecvfrom(rfd, buf, len, flags, PL_SA(addr), alen)
			: pl_real.recvfrom(fd, buf, len, flags, PL_SA(addr),
					   alen);
}

PL_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rrecvmsg(rfd, msg, flags)
			: pl_real.recvmsg(fd, msg, flags);
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rwrite(rfd, buf, count)
			: pl_real.write(fd, buf, count);
}

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rwritev(rfd, iov, iovcnt)
			: pl_real.writev(fd, iov, iovcnt);
}

PL_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	int rfd = pl_rfd(fd);

	pl_init();
	return rfd >= 0 ? rsend(rfd, buf, len, flags)
			: pl_real.send(fd, buf, len, flags);
}

PL_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			 __CONST_SOCKADDR_ARG addr, socklen_t alen)
{
	int rfd = pl_rfd(fd);
	ssize_t ret;

	pl_init();
	if (rfd < 0)
		return pl_real.sendto(fd, buf, len, flags, PL_SA(addr), alen);
	/* A datagram rsocket may open sockets of its own to route. */
	pl_inside++;
	ret = rsendto(rfd, buf, len, flags, PL_SA(addr), alen);
	pl_inside--;
	return ret;
}

PL_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	int rfd = pl_rfd(fd);
	ssize_t ret;

	pl_init();
	if (rfd < 0)
		return pl_real.sendmsg(fd, msg, flags);
	pl_inside++;
	ret = rsendmsg(rfd, msg, flags);
	pl_inside--;
	return ret;
}

/* Read the file through a buffer into the rsocket: at *off (which moves,
 * the file position does not) or at the file position (which moves). */
static ssize_t send_file(int rfd, int in_fd, off64_t *off, size_t count)
{
	static __thread char buf[65536];
	size_t done = 0;
	ssize_t n, w;

	while (done < count) {
		size_t want = count - done < sizeof(buf) ? count - done
							 : sizeof(buf);

		n = off ? pread64(in_fd, buf, want, *off)
			: pl_real.read(in_fd, buf, want);
		if (n <= 0) {
			if (n < 0 && !done)
				return -1;
			break;
		}
		w = rwrite(rfd, buf, (size_t)n);
		if (w < 0) {
			if (!off)
				lseek(in_fd, -n, SEEK_CUR);
			if (!done)
				return -1;
			break;
		}
		if (off)
			*off += w;
		else if (w < n)
			lseek(in_fd, w - n, SEEK_CUR);
		done += (size_t)w;
		if (w < n)
			break;
	}
	return (ssize_t)done;
}

PL_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	int rfd = pl_rfd(out_fd);
	off64_t o;
	ssize_t ret;

	pl_init();
	if (rfd < 0)
		return pl_real.sendfile(out_fd, in_fd, offset, count);
	if (!offset)
		return send_file(rfd, in_fd, NULL, count);
	o = *offset;
	ret = send_file(rfd, in_fd, &o, count);
	*offset = (off_t)o;
	return ret;
}

PL_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset,
			     size_t count)
{
	int rfd = pl_rfd(out_fd);

	pl_init();
	if (rfd < 0)
		return pl_real.sendfile64(out_fd, in_fd, offset, count);
	return send_file(rfd, in_fd, offset, count);
}
