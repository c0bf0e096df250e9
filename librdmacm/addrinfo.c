/* SPDX-License-Identifier: MIT */
/*
 * rdma_getaddrinfo: getaddrinfo() with RDMA's flavour, as rdma-core does
 * it without an address-resolution service: the first address found,
 * as the source of a passive endpoint or the destination of an active
 * one, with the port space and QP type the socket type implies.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "librdmacm/cma.h"

static const struct rdma_addrinfo no_hints;

static void to_ai_hints(struct addrinfo *ai, const struct rdma_addrinfo *h)
{
	memset(ai, 0, sizeof(*ai));
	if (h->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (h->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (h->ai_family != AF_IB)
		ai->ai_family = h->ai_family;
	switch (h->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	default:
		break;
	}
	switch (h->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_UDP:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	default:
		break;
	}
}

static int copy_addr(struct sockaddr **dst, socklen_t *dst_len,
		     const struct sockaddr *src, socklen_t len)
{
	*dst = calloc(1, len);
	if (!*dst)
		return cma_err(ENOMEM);
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

static int from_ai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *h,
		   const struct addrinfo *ai)
{
	if (h->ai_qp_type)
		rai->ai_qp_type = h->ai_qp_type;
	else
		rai->ai_qp_type = ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD
								: IBV_QPT_RC;
	if (h->ai_port_space)
		rai->ai_port_space = h->ai_port_space;
	else
		rai->ai_port_space = ai->ai_protocol == IPPROTO_UDP
					     ? RDMA_PS_UDP
					     : RDMA_PS_TCP;
	rai->ai_family = ai->ai_family;
	if (h->ai_flags & RAI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		if (ai->ai_canonname &&
		    !(rai->ai_src_canonname = strdup(ai->ai_canonname)))
			return cma_err(ENOMEM);
		return copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				 ai->ai_addr, ai->ai_addrlen);
	}
	if (ai->ai_canonname &&
	    !(rai->ai_dst_canonname = strdup(ai->ai_canonname)))
		return cma_err(ENOMEM);
	return copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr,
			 ai->ai_addrlen);
}

LIB_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_connect);
		free(res->ai_route);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
	}
}

LIB_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints,
				struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	struct addrinfo ai_hints, *ai;
	int ret = 0;

	if (!node && !service && !hints)
		return cma_err(EINVAL);
	if (!res)
		return cma_err(EINVAL);
	rai = calloc(1, sizeof(*rai));
	if (!rai)
		return cma_err(ENOMEM);
	if (!hints)
		hints = &no_hints;
	if (node || service) {
		to_ai_hints(&ai_hints, hints);
		ret = getaddrinfo(node, service,
				  hints == &no_hints ? NULL : &ai_hints, &ai);
		if (ret) {
			/* getaddrinfo's own code, as rdma-core returns it. */
			rdma_freeaddrinfo(rai);
			return ret;
		}
		ret = from_ai(rai, hints, ai);
		freeaddrinfo(ai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
					hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (!ret && !rai->ai_src_len && hints->ai_src_len)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				hints->ai_src_addr, hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}
