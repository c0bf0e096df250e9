/* SPDX-License-Identifier: MIT */
/*
 * What rdma_cm adds on top of the IB CM: the service IDs of the IP port
 * spaces and the 36-byte CMA header in front of a REQ's or SIDR_REQ's
 * private data.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "daemon/cm/cm_mad.h"

int cm_ip_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint64_t space = sid >> 16;

	switch (space) {
	case CM_PS_IPOIB:
	case CM_PS_TCP:
	case CM_PS_UDP:
	case CM_PS_IB:
		break;
	default:
		return -EINVAL;
	}
	if (ps)
		*ps = (uint16_t)space;
	if (port)
		*port = (uint16_t)sid;
	return 0;
}

/* Offsets in the 36-byte header. */
enum {
	CMA_OFF_VERSION = 0,
	CMA_OFF_IP_VERSION = 1,
	CMA_OFF_PORT = 2,
	CMA_OFF_SRC = 4,
	CMA_OFF_DST = 20,
};
static_assert(CMA_OFF_DST + 16 == CMA_HDR_SIZE, "cma_hdr is 36 bytes");

int cma_hdr_decode(const void *buf, size_t len, struct cma_hdr *h)
{
	const uint8_t *p = buf;

	memset(h, 0, sizeof(*h));
	if (!buf || len < CMA_HDR_SIZE)
		return -EBADMSG;
	h->version = p[CMA_OFF_VERSION];
	h->ip_version = p[CMA_OFF_IP_VERSION] >> 4;
	h->src_port = mad_get_be16(p + CMA_OFF_PORT);
	memcpy(h->src_addr, p + CMA_OFF_SRC, 16);
	memcpy(h->dst_addr, p + CMA_OFF_DST, 16);
	if (h->version != CMA_HDR_VERSION ||
	    (h->ip_version != 4 && h->ip_version != 6))
		return -EBADMSG;
	return 0;
}

int cma_hdr_encode(const struct cma_hdr *h, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (!h || !buf || len < CMA_HDR_SIZE || h->version != CMA_HDR_VERSION ||
	    (h->ip_version != 4 && h->ip_version != 6))
		return -EINVAL;
	p[CMA_OFF_VERSION] = h->version;
	p[CMA_OFF_IP_VERSION] = (uint8_t)(h->ip_version << 4);
	mad_put_be16(p + CMA_OFF_PORT, h->src_port);
	memcpy(p + CMA_OFF_SRC, h->src_addr, 16);
	memcpy(p + CMA_OFF_DST, h->dst_addr, 16);
	return 0;
}

int cma_hdr_from_sockaddr(struct cma_hdr *h, const struct sockaddr *src,
			  const struct sockaddr *dst)
{
	if (!h || !src || !dst || src->sa_family != dst->sa_family)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->version = CMA_HDR_VERSION;
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)src;
		const struct sockaddr_in *d = (const struct sockaddr_in *)dst;

		h->ip_version = 4;
		h->src_port = ntohs(s->sin_port);
		memcpy(h->src_addr + 12, &s->sin_addr, 4);
		memcpy(h->dst_addr + 12, &d->sin_addr, 4);
	} else if (src->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)src;
		const struct sockaddr_in6 *d = (const struct sockaddr_in6 *)dst;

		h->ip_version = 6;
		h->src_port = ntohs(s->sin6_port);
		memcpy(h->src_addr, &s->sin6_addr, 16);
		memcpy(h->dst_addr, &d->sin6_addr, 16);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

int cma_hdr_to_sockaddr(const struct cma_hdr *h, uint64_t service_id,
			struct sockaddr_storage *src,
			struct sockaddr_storage *dst)
{
	uint16_t dport = (uint16_t)service_id;

	if (!h || !src || !dst)
		return -EINVAL;
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (h->ip_version == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		s->sin_family = AF_INET;
		s->sin_port = htons(h->src_port);
		memcpy(&s->sin_addr, h->src_addr + 12, 4);
		d->sin_family = AF_INET;
		d->sin_port = htons(dport);
		memcpy(&d->sin_addr, h->dst_addr + 12, 4);
	} else if (h->ip_version == 6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(h->src_port);
		memcpy(&s->sin6_addr, h->src_addr, 16);
		d->sin6_family = AF_INET6;
		d->sin6_port = htons(dport);
		memcpy(&d->sin6_addr, h->dst_addr, 16);
	} else {
		return -EINVAL;
	}
	return 0;
}
