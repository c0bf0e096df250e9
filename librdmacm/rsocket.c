/* SPDX-License-Identifier: MIT */
/*
 * The rsocket calls.  A descriptor that is an rsocket (rs_table.c) is
 * served over RDMA; any other goes to the socket call the r* call mirrors,
 * which is what rdma-core's rsockets do for descriptors they do not own
 * (the rdmacm examples rpoll an event channel's fd, for one).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

LIB_EXPORT int rsocket(int domain, int type, int protocol)
{
	int stype = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct rsocket *rs;
	int fd;

	if ((domain != AF_INET && domain != AF_INET6) ||
	    (stype != SOCK_STREAM && stype != SOCK_DGRAM) ||
	    (stype == SOCK_STREAM && protocol && protocol != IPPROTO_TCP) ||
	    (stype == SOCK_DGRAM && protocol && protocol != IPPROTO_UDP))
		return cma_err(ENOTSUP);
	rs = rs_alloc(NULL);
	if (!rs)
		return cma_err(ENOMEM);
	rs->fd_flags = (type & SOCK_CLOEXEC) ? FD_CLOEXEC : 0;
	rs->fs_flags = (type & SOCK_NONBLOCK) ? O_NONBLOCK : 0;
	if (stype == SOCK_DGRAM) {
		if (ds_socket(rs, domain) || rs_insert(rs, rs->udp_sock))
			goto err;
		return rs->index;
	}
	if (rdma_create_id(NULL, &rs->cm_id, rs, RDMA_PS_TCP))
		goto err;
	rs->cm_id->route.addr.src_addr.sa_family = (sa_family_t)domain;
	fd = rs->cm_id->channel->fd;
	if (type & SOCK_CLOEXEC)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	if ((rs->fs_flags & O_NONBLOCK) && rs_set_nonblocking(rs, true))
		goto err;
	if (rs_insert(rs, fd))
		goto err;
	return fd;
err : {
	int e = errno;

	rs_free(rs);
	return cma_err(e);
}
}

LIB_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return bind(socket, addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return ds_bind(rs, addr, addrlen);
	if (rs->state != rs_init)
		return cma_err(EINVAL);
	if (rdma_bind_addr(rs->cm_id, (struct sockaddr *)addr))
		return -1;
	rs->state = rs_bound;
	return 0;
}

LIB_EXPORT int rlisten(int socket, int backlog)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return listen(socket, backlog);
	if (rs->type == SOCK_DGRAM)
		return cma_err(EOPNOTSUPP);
	if (rs->state == rs_listening)
		return 0;
	if (rs->state > rs_bound)
		return cma_err(EINVAL);
	if (rdma_listen(rs->cm_id, backlog))
		return -1;
	rs->state = rs_listening;
	return 0;
}

LIB_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsocket *rs = rs_lookup(socket);
	int fd;

	if (!rs)
		return accept(socket, addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return cma_err(EOPNOTSUPP);
	if (rs->state != rs_listening)
		return cma_err(EINVAL);
	fd = rs_accept(rs);
	if (fd >= 0 && addr && addrlen)
		rgetpeername(fd, addr, addrlen);
	return fd;
}

LIB_EXPORT int rconnect(int socket, const struct sockaddr *addr,
			socklen_t addrlen)
{
	struct rsocket *rs = rs_lookup(socket);
	struct sockaddr *dst;

	if (!rs)
		return connect(socket, addr, addrlen);
	if (!addr || addrlen > sizeof(struct sockaddr_storage))
		return cma_err(EINVAL);
	if (rs->type == SOCK_DGRAM)
		return ds_connect(rs, addr, addrlen);
	if (rs->state & rs_connected)
		return cma_err(EISCONN);
	if (rs->state & rs_opening) {
		if (rs_do_connect(rs) && errno == EINPROGRESS)
			errno = EALREADY;
		return rs->state & rs_connected ? 0 : -1;
	}
	if (rs->state > rs_bound)
		return cma_err(EINVAL);
	dst = &rs->cm_id->route.addr.dst_addr;
	memcpy(dst, addr, addrlen);
	return rs_do_connect(rs);
}

LIB_EXPORT int rshutdown(int socket, int how)
{
	struct rsocket *rs = rs_lookup(socket);
	uint32_t ctrl;
	int ret = 0;

	if (!rs)
		return shutdown(socket, how);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return cma_err(EINVAL);
	if (rs->type == SOCK_DGRAM) {
		if (how != SHUT_WR)
			rs->state &= ~rs_readable;
		if (how != SHUT_RD)
			rs->state &= ~rs_writable;
		return 0;
	}
	if (!(rs->state & (rs_connected | rs_disconnected | rs_error)))
		return cma_err(ENOTCONN);
	if (rs->state & rs_connected) {
		if (how == SHUT_RDWR) {
			ctrl = RS_CTRL_DISCONNECT;
			rs->state &= ~(rs_readable | rs_writable);
		} else if (how == SHUT_WR) {
			rs->state &= ~rs_writable;
			ctrl = (rs->state & rs_readable) ? RS_CTRL_SHUTDOWN
							 : RS_CTRL_DISCONNECT;
		} else {
			rs->state &= ~rs_readable;
			if (rs->state & rs_writable)
				return 0;
			ctrl = RS_CTRL_DISCONNECT;
		}
		if (!rs_ctrl_avail(rs)) {
			ret = rs_process_cq(rs, false, rs_conn_can_send_ctrl);
			if (ret)
				return ret;
		}
		if ((rs->state & rs_connected) && rs_ctrl_avail(rs)) {
			rs->ctrl_seqno++;
			ret = rs_post_msg(rs, rs_msg_set(RS_OP_CTRL, ctrl));
		}
	}
	if (rs->state & rs_connected)
		rs_process_cq(rs, false, rs_conn_all_sends_done);
	if ((rs->state & rs_disconnected) && rs->cm_id->qp) {
		/* Flush the receives: a thread in rpoll wakes up. */
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ibv_req_notify_cq(rs->cm_id->recv_cq, 0);
		ibv_modify_qp(rs->cm_id->qp, &a, IBV_QP_STATE);
	}
	return ret;
}

LIB_EXPORT int rclose(int socket)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return close(socket);
	if (rs->type == SOCK_STREAM && (rs->state & rs_connected))
		rshutdown(socket, SHUT_RDWR);
	rs_free(rs);
	return 0;
}

static ssize_t recv_one(struct rsocket *rs, void *buf, size_t len, int flags)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	if (rs->type == SOCK_DGRAM)
		return ds_recvfrom(rs, buf, len, flags, NULL, NULL);
	return rs_recvv(rs, &v, 1, flags);
}

/* Vectors of datagrams: received into the first, sent gathered. */
static ssize_t recvv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		     int flags)
{
	if (rs->type == SOCK_DGRAM)
		return iovcnt ? ds_recvfrom(rs, iov[0].iov_base, iov[0].iov_len,
					    flags, NULL, NULL)
			      : 0;
	return rs_recvv(rs, iov, iovcnt, flags);
}

static ssize_t sendv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		     int flags, const struct sockaddr *to, socklen_t tolen)
{
	uint8_t msg[DS_MSG_SIZE];
	size_t len = 0;

	if (rs->type == SOCK_STREAM)
		return rs_sendv(rs, iov, iovcnt, flags);
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > sizeof(msg) - len)
			return cma_err(EMSGSIZE);
		memcpy(msg + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	return ds_sendto(rs, msg, len, flags, to, tolen);
}

LIB_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return recv(socket, buf, len, flags);
	return recv_one(rs, buf, len, flags);
}

LIB_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			     struct sockaddr *src_addr, socklen_t *addrlen)
{
	struct rsocket *rs = rs_lookup(socket);
	ssize_t ret;

	if (!rs)
		return recvfrom(socket, buf, len, flags, src_addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return ds_recvfrom(rs, buf, len, flags, src_addr, addrlen);
	ret = recv_one(rs, buf, len, flags);
	if (ret > 0 && src_addr && addrlen)
		rgetpeername(socket, src_addr, addrlen);
	return ret;
}

LIB_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return recvmsg(socket, msg, flags);
	if (msg->msg_control && msg->msg_controllen)
		return cma_err(ENOTSUP);
	if (rs->type == SOCK_DGRAM && msg->msg_name) {
		socklen_t len = msg->msg_namelen;
		ssize_t ret;

		if (!msg->msg_iovlen)
			return 0;
		ret = ds_recvfrom(rs, msg->msg_iov[0].iov_base,
				  msg->msg_iov[0].iov_len, flags, msg->msg_name,
				  &len);
		msg->msg_namelen = len;
		return ret;
	}
	return recvv(rs, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

LIB_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct rsocket *rs = rs_lookup(socket);
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	if (!rs)
		return send(socket, buf, len, flags);
	if (rs->type == SOCK_DGRAM)
		return ds_sendto(rs, buf, len, flags, NULL, 0);
	return rs_sendv(rs, &v, 1, flags);
}

LIB_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			   const struct sockaddr *dest_addr, socklen_t addrlen)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return sendto(socket, buf, len, flags, dest_addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return ds_sendto(rs, buf, len, flags, dest_addr, addrlen);
	/* As rdma-core: a stream takes no address. */
	if (dest_addr || addrlen)
		return cma_err(EISCONN);
	return rsend(socket, buf, len, flags);
}

LIB_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return sendmsg(socket, msg, flags);
	if (msg->msg_control && msg->msg_controllen)
		return cma_err(ENOTSUP);
	return sendv(rs, msg->msg_iov, (int)msg->msg_iovlen, flags,
		     msg->msg_name, msg->msg_namelen);
}

LIB_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return read(socket, buf, count);
	return recv_one(rs, buf, count, 0);
}

LIB_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return readv(socket, iov, iovcnt);
	return recvv(rs, iov, iovcnt, 0);
}

LIB_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	struct rsocket *rs = rs_lookup(socket);
	struct iovec v = { .iov_base = (void *)buf, .iov_len = count };

	if (!rs)
		return write(socket, buf, count);
	return sendv(rs, &v, 1, 0, NULL, 0);
}

LIB_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return writev(socket, iov, iovcnt);
	return sendv(rs, iov, iovcnt, 0, NULL, 0);
}

/* As the kernel: a length of 0 copies nothing and reports the size, which
 * rdma-core's preload library relies on (getsockname(fd, NULL, &zero)). */
static int copy_addr(struct sockaddr *dst, socklen_t *len,
		     const struct sockaddr *src)
{
	socklen_t size = src->sa_family == AF_INET6
				 ? sizeof(struct sockaddr_in6)
				 : sizeof(struct sockaddr_in);

	if (!len || (!dst && *len))
		return cma_err(EFAULT);
	if (*len)
		memcpy(dst, src, *len < size ? *len : size);
	*len = size;
	return 0;
}

LIB_EXPORT int rgetpeername(int socket, struct sockaddr *addr,
			    socklen_t *addrlen)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return getpeername(socket, addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return getpeername(rs->udp_sock, addr, addrlen);
	if (!(rs->state & (rs_connected | rs_disconnected | rs_opening)))
		return cma_err(ENOTCONN);
	return copy_addr(addr, addrlen, rdma_get_peer_addr(rs->cm_id));
}

LIB_EXPORT int rgetsockname(int socket, struct sockaddr *addr,
			    socklen_t *addrlen)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs)
		return getsockname(socket, addr, addrlen);
	if (rs->type == SOCK_DGRAM)
		return getsockname(rs->udp_sock, addr, addrlen);
	return copy_addr(addr, addrlen, rdma_get_local_addr(rs->cm_id));
}
