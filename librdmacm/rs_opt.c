/* SPDX-License-Identifier: MIT */
/*
 * Socket options and fcntl of rsockets, with rdma-core's meanings: buffer
 * sizes are doubled on set as the kernel does, options that mean nothing
 * over a reliable connection are accepted and remembered, and the SOL_RDMA
 * sizes can change only before connecting.  Other descriptors go to the
 * ordinary calls.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

static int opt_int(const void *optval, socklen_t optlen)
{
	int v = 0;

	memcpy(&v, optval, optlen < sizeof(v) ? optlen : sizeof(v));
	return v;
}

static int set_sol_socket(struct rsocket *rs, int optname, const void *optval,
			  socklen_t optlen, bool *on)
{
	switch (optname) {
	case SO_REUSEADDR:
		/* The CM may not know the option; the socket still does. */
		if (rs->cm_id &&
		    rdma_set_option(rs->cm_id, RDMA_OPTION_ID,
				    RDMA_OPTION_ID_REUSEADDR, (void *)optval,
				    optlen) &&
		    errno != ENOSYS && errno != EINVAL && errno != ENOTSUP)
			return -1;
		*on = opt_int(optval, optlen) != 0;
		return 0;
	case SO_RCVBUF:
		if (!rs->rbuf && !rs->qp_list)
			rs->rbuf_size = (uint32_t)opt_int(optval, optlen) << 1;
		if (rs->rbuf_size < RS_SNDLOWAT)
			rs->rbuf_size = RS_SNDLOWAT << 1;
		return 0;
	case SO_SNDBUF:
		if (!rs->sbuf)
			rs->sbuf_size = (uint32_t)opt_int(optval, optlen) << 1;
		if (rs->sbuf_size < RS_SNDLOWAT)
			rs->sbuf_size = RS_SNDLOWAT << 1;
		return 0;
	case SO_LINGER:
		if (optlen < sizeof(struct linger))
			return cma_err(EINVAL);
		/* Kept inverted, so that the default (0) reads as on. */
		*on = !((const struct linger *)optval)->l_onoff;
		return 0;
	case SO_KEEPALIVE:
		/* Over RC the device notices a dead peer; remembered. */
		*on = opt_int(optval, optlen) != 0;
		if (*on && !rs->keepalive_time)
			rs->keepalive_time = 7200;
		return 0;
	case SO_OOBINLINE:
		*on = opt_int(optval, optlen) != 0;
		return 0;
	default:
		return cma_err(ENOTSUP);
	}
}

static int set_sol_rdma(struct rsocket *rs, int optname, const void *optval,
			socklen_t optlen)
{
	uint32_t v = (uint32_t)opt_int(optval, optlen);

	if (rs->state >= rs_opening)
		return cma_err(EINVAL);
	switch (optname) {
	case RDMA_SQSIZE:
		rs->sq_size =
			(uint16_t)(v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE);
		return 0;
	case RDMA_RQSIZE:
		rs->rq_size =
			(uint16_t)(v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE);
		return 0;
	case RDMA_INLINE:
		rs->sq_inline =
			(uint16_t)(v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE);
		return 0;
	case RDMA_IOMAPSIZE:
		rs->target_iomap_size = (uint16_t)rs_scale_to_value(
			(uint8_t)rs_value_to_scale((int)v, 8), 8);
		return 0;
	case RDMA_ROUTE:
		free(rs->route);
		rs->route = malloc(optlen);
		if (!rs->route)
			return cma_err(ENOMEM);
		memcpy(rs->route, optval, optlen);
		rs->route_len = optlen;
		return 0;
	default:
		return cma_err(ENOTSUP);
	}
}

LIB_EXPORT int rsetsockopt(int socket, int level, int optname,
			   const void *optval, socklen_t optlen)
{
	struct rsocket *rs = rs_lookup(socket);
	uint64_t *opts = NULL;
	bool on = false;
	int ret;

	if (!rs) {
		if (level == SOL_RDMA)
			return cma_err(ENOTSOCK);
		return setsockopt(socket, level, optname, optval, optlen);
	}
	if (!optval || !optlen)
		return cma_err(EINVAL);
	/* A datagram rsocket's UDP socket takes the ordinary options too. */
	if (rs->type == SOCK_DGRAM && level != SOL_RDMA &&
	    setsockopt(rs->udp_sock, level, optname, optval, optlen))
		return -1;
	switch (level) {
	case SOL_SOCKET:
		opts = &rs->so_opts;
		ret = set_sol_socket(rs, optname, optval, optlen, &on);
		break;
	case IPPROTO_TCP:
		opts = &rs->tcp_opts;
		switch (optname) {
		case TCP_NODELAY:
			on = opt_int(optval, optlen) != 0;
			ret = 0;
			break;
		case TCP_KEEPIDLE:
			if (opt_int(optval, optlen) <= 0)
				return cma_err(EINVAL);
			rs->keepalive_time =
				(unsigned int)opt_int(optval, optlen);
			ret = 0;
			opts = NULL;
			break;
		case TCP_MAXSEG:
		case TCP_KEEPCNT:
		case TCP_KEEPINTVL:
		case TCP_CONGESTION:
			ret = 0; /* nothing to tune over RC */
			opts = NULL;
			break;
		default:
			ret = cma_err(ENOTSUP);
			break;
		}
		break;
	case IPPROTO_IPV6:
		opts = &rs->ipv6_opts;
		if (optname != IPV6_V6ONLY)
			return cma_err(ENOTSUP);
		ret = rs->cm_id ? rdma_set_option(rs->cm_id, RDMA_OPTION_ID,
						  RDMA_OPTION_ID_AFONLY,
						  (void *)optval, optlen)
				: 0;
		on = opt_int(optval, optlen) != 0;
		break;
	case SOL_RDMA:
		ret = set_sol_rdma(rs, optname, optval, optlen);
		break;
	default:
		ret = cma_err(ENOTSUP);
		break;
	}
	if (!ret && opts && optname < 64) {
		if (on)
			*opts |= 1ULL << optname;
		else
			*opts &= ~(1ULL << optname);
	}
	return ret;
}

static int put_int(void *optval, socklen_t *optlen, int v)
{
	if (*optlen < sizeof(int))
		return cma_err(EINVAL);
	memcpy(optval, &v, sizeof(v));
	*optlen = sizeof(int);
	return 0;
}

static int get_sol_socket(struct rsocket *rs, int optname, void *optval,
			  socklen_t *optlen)
{
	struct linger l;

	switch (optname) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:
	case SO_OOBINLINE:
		return put_int(optval, optlen,
			       !!(rs->so_opts & (1ULL << optname)));
	case SO_RCVBUF:
		return put_int(optval, optlen, (int)rs->rbuf_size);
	case SO_SNDBUF:
		return put_int(optval, optlen, (int)rs->sbuf_size);
	case SO_LINGER:
		if (*optlen < sizeof(l))
			return cma_err(EINVAL);
		l.l_onoff = !(rs->so_opts & (1ULL << SO_LINGER));
		l.l_linger = 0;
		memcpy(optval, &l, sizeof(l));
		*optlen = sizeof(l);
		return 0;
	case SO_ERROR: {
		int e = rs->err;

		if (put_int(optval, optlen, e))
			return -1;
		rs->err = 0;
		return 0;
	}
	case SO_TYPE:
		return put_int(optval, optlen, rs->type);
	default:
		return cma_err(ENOTSUP);
	}
}

static int get_ipproto_tcp(struct rsocket *rs, int optname, void *optval,
			   socklen_t *optlen)
{
	struct rdma_cm_id *id = rs->cm_id;

	switch (optname) {
	case TCP_NODELAY:
		return put_int(optval, optlen,
			       !!(rs->tcp_opts & (1ULL << TCP_NODELAY)));
	case TCP_MAXSEG:
		/* The path MTU (IBV_MTU_256 is 1: 1 << 8). */
		return put_int(optval, optlen,
			       id && id->route.num_paths && id->route.path_rec
				       ? 1 << (7 + id->route.path_rec->mtu)
				       : 2048);
	case TCP_KEEPIDLE:
		return put_int(optval, optlen, (int)rs->keepalive_time);
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
		return put_int(optval, optlen, 1);
	default:
		return cma_err(ENOTSUP);
	}
}

/* The route as ibv_path_data records, one per path. */
static int get_route(struct rsocket *rs, void *optval, socklen_t *optlen)
{
	struct rdma_route *r = &rs->cm_id->route;
	struct ibv_path_data pd;
	socklen_t len = 0;

	if (rs->route) {
		if (*optlen < rs->route_len)
			return cma_err(EINVAL);
		memcpy(optval, rs->route, rs->route_len);
		*optlen = (socklen_t)rs->route_len;
		return 0;
	}
	if (*optlen < sizeof(pd))
		return cma_err(EINVAL);
	for (int i = 0; i < r->num_paths && len + sizeof(pd) <= *optlen; i++) {
		struct ibv_sa_path_rec *sa = &r->path_rec[i];
		uint32_t fl_hop = be32toh(sa->flow_label) << 8 | sa->hop_limit;

		memset(&pd, 0, sizeof(pd));
		pd.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
			   IBV_PATH_FLAG_BIDIRECTIONAL;
		pd.path.dgid = sa->dgid;
		pd.path.sgid = sa->sgid;
		pd.path.dlid = sa->dlid;
		pd.path.slid = sa->slid;
		pd.path.flowlabel_hoplimit = htobe32(fl_hop);
		pd.path.tclass = sa->traffic_class;
		pd.path.reversible_numpath = (uint8_t)(sa->reversible << 7 | 1);
		pd.path.pkey = sa->pkey;
		pd.path.qosclass_sl = htobe16(sa->sl & 0xF);
		pd.path.mtu = (uint8_t)(sa->mtu | 2 << 6);
		pd.path.rate = (uint8_t)(sa->rate | 2 << 6);
		pd.path.packetlifetime =
			(uint8_t)(sa->packet_life_time | 2 << 6);
		memcpy((uint8_t *)optval + len, &pd, sizeof(pd));
		len += sizeof(pd);
	}
	*optlen = len;
	return 0;
}

static int get_sol_rdma(struct rsocket *rs, int optname, void *optval,
			socklen_t *optlen)
{
	switch (optname) {
	case RDMA_SQSIZE:
		return put_int(optval, optlen, rs->sq_size);
	case RDMA_RQSIZE:
		return put_int(optval, optlen, rs->rq_size);
	case RDMA_INLINE:
		return put_int(optval, optlen, rs->sq_inline);
	case RDMA_IOMAPSIZE:
		return put_int(optval, optlen, rs->target_iomap_size);
	case RDMA_ROUTE:
		if (!rs->cm_id)
			return cma_err(ENOTSUP);
		return get_route(rs, optval, optlen);
	default:
		return cma_err(ENOTSUP);
	}
}

LIB_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval,
			   socklen_t *optlen)
{
	struct rsocket *rs = rs_lookup(socket);

	if (!rs) {
		if (level == SOL_RDMA)
			return cma_err(ENOTSOCK);
		return getsockopt(socket, level, optname, optval, optlen);
	}
	if (!optval || !optlen)
		return cma_err(EINVAL);
	switch (level) {
	case SOL_SOCKET:
		return get_sol_socket(rs, optname, optval, optlen);
	case IPPROTO_TCP:
		return get_ipproto_tcp(rs, optname, optval, optlen);
	case IPPROTO_IPV6:
		if (optname != IPV6_V6ONLY)
			return cma_err(ENOTSUP);
		return put_int(optval, optlen,
			       !!(rs->ipv6_opts & (1ULL << IPV6_V6ONLY)));
	case SOL_RDMA:
		return get_sol_rdma(rs, optname, optval, optlen);
	default:
		return cma_err(ENOTSUP);
	}
}

LIB_EXPORT int rfcntl(int socket, int cmd, ...)
{
	struct rsocket *rs = rs_lookup(socket);
	va_list ap;
	int arg = 0, ret = 0;

	va_start(ap, cmd);
	if (!rs) {
		void *p = va_arg(ap, void *);

		va_end(ap);
		return fcntl(socket, cmd, p);
	}
	switch (cmd) {
	case F_GETFL:
		ret = rs->fs_flags;
		break;
	case F_SETFL:
		arg = va_arg(ap, int);
		if ((rs->fs_flags & O_NONBLOCK) != (arg & O_NONBLOCK))
			ret = rs_set_nonblocking(rs, arg & O_NONBLOCK);
		if (!ret)
			rs->fs_flags = arg;
		break;
	case F_GETFD:
		ret = rs->fd_flags;
		break;
	case F_SETFD:
		rs->fd_flags = va_arg(ap, int);
		break;
	default:
		ret = cma_err(ENOTSUP);
		break;
	}
	va_end(ap);
	return ret;
}
