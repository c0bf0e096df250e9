/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm addressing: IP addresses to devices and GIDs, port spaces
 * (binding, ephemeral ports, the kernel's rules for sharing a port), and
 * address and route resolution.
 *
 * Resolution is immediate: a destination that is one of our GIDs is in
 * this daemon; any other is reached from the source address the kernel's
 * routing picks for it (a connected UDP socket tells), on the device
 * owning that address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/cm/cm.h"

/* The kernel's default net.ipv4.ip_local_port_range. */
#define CMA_EPHEMERAL_LO 32768
#define CMA_EPHEMERAL_HI 60999

bool cma_addr_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (a->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)a)->sin6_addr);
	return true;
}

/* 127/8 and ::1, which the kernel's cma_any_addr() counts with the
 * wildcard: binding one attaches no device. */
bool cma_addr_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)
				      ->sin_addr.s_addr) >>
			24) == IN_LOOPBACKNET;
	if (a->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
			&((const struct sockaddr_in6 *)a)->sin6_addr);
	return false;
}

uint16_t cma_addr_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

void cma_addr_set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

void cma_addr_to_gid(const struct sockaddr_storage *a, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (a->ss_family == AF_INET) {
		srd_gid_from_v4(gid->raw,
				&((const struct sockaddr_in *)a)->sin_addr);
	} else if (a->ss_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)a)->sin6_addr,
		       16);
	}
}

int cma_addr_check(const struct sockaddr_storage *a)
{
	switch (a->ss_family) {
	case AF_INET:
	case AF_INET6:
		return 0;
	case AF_IB:
		return -EAFNOSUPPORT;
	default:
		return -EINVAL;
	}
}

static bool addr_eq(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b)
{
	union ibv_gid ga, gb;

	if (a->ss_family != b->ss_family)
		return false;
	cma_addr_to_gid(a, &ga);
	cma_addr_to_gid(b, &gb);
	return !memcmp(ga.raw, gb.raw, 16);
}

struct srd_device *cma_addr_dev(struct srd_cm *cm,
				const struct sockaddr_storage *a,
				uint8_t *gid_index)
{
	union ibv_gid gid;

	cma_addr_to_gid(a, &gid);
	list_for_each (&cm->d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		for (unsigned int i = 0; i < SRD_MAX_GIDS; i++) {
			if (!dev->port.gid_valid[i] ||
			    memcmp(dev->port.gid[i].raw, gid.raw, 16))
				continue;
			if (gid_index)
				*gid_index = (uint8_t)i;
			return dev;
		}
	}
	return NULL;
}

/* The kernel's cma_check_port(): may id hold port next to the others? */
static int port_check(struct cma_id *id, uint16_t port, bool reuse)
{
	list_for_each (&id->cm->bound, it) {
		struct cma_id *o = list_entry(it, struct cma_id, bind_node);

		if (o == id || o->ps != id->ps ||
		    cma_addr_port(&o->src) != port)
			continue;
		if (o->state != CMA_LISTEN && reuse && o->reuseaddr)
			continue;
		if (id->afonly && o->afonly &&
		    id->src.ss_family != o->src.ss_family)
			continue;
		if (cma_addr_any(&id->src) || cma_addr_any(&o->src))
			return -EADDRNOTAVAIL;
		if (addr_eq(&id->src, &o->src))
			return -EADDRINUSE;
	}
	return 0;
}

static bool port_used(struct srd_cm *cm, uint16_t ps, uint16_t port)
{
	list_for_each (&cm->bound, it) {
		struct cma_id *o = list_entry(it, struct cma_id, bind_node);

		if (o->ps == ps && cma_addr_port(&o->src) == port)
			return true;
	}
	return false;
}

static void port_range(unsigned int *lo, unsigned int *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	*lo = CMA_EPHEMERAL_LO;
	*hi = CMA_EPHEMERAL_HI;
	if (!f)
		return;
	if (fscanf(f, "%u %u", lo, hi) != 2 || *lo < 1 || *hi > 65535 ||
	    *lo > *hi) {
		*lo = CMA_EPHEMERAL_LO;
		*hi = CMA_EPHEMERAL_HI;
	}
	fclose(f);
}

static int port_ephemeral(struct cma_id *id, uint16_t *out)
{
	static unsigned int lo, hi, next;
	unsigned int n;

	if (!lo) {
		port_range(&lo, &hi);
		next = lo + (unsigned int)(srd_now_ns() % (hi - lo + 1));
	}
	n = hi - lo + 1;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int p = next;

		next = next >= hi ? lo : next + 1;
		if (!port_used(id->cm, id->ps, (uint16_t)p)) {
			*out = (uint16_t)p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

/* Put id on the device that owns its source GID. */
static int id_set_dev(struct cma_id *id, struct srd_device *dev,
		      uint8_t gid_index)
{
	struct cm_port *p = cm_port_get(id->cm, dev);

	if (!p)
		return -ENOMEM;
	id->port = p;
	id->sgid_index = gid_index;
	id->sgid = dev->port.gid[gid_index];
	return 0;
}

int cma_bind(struct cma_id *id, const struct sockaddr_storage *addr)
{
	struct srd_device *dev = NULL;
	uint8_t idx = 0;
	uint16_t port;
	int err;

	err = cma_addr_check(addr);
	if (err)
		return err;
	if (id->state != CMA_IDLE)
		return -EINVAL;
	/* As in the kernel, a loopback address binds no device (the id's
	 * verbs stay NULL): resolving a destination picks one. */
	if (!cma_addr_any(addr) && !cma_addr_loopback(addr)) {
		dev = cma_addr_dev(id->cm, addr, &idx);
		if (!dev)
			return -EADDRNOTAVAIL;
	}
	id->src = *addr;
	port = cma_addr_port(addr);
	if (port)
		err = port_check(id, port, id->reuseaddr);
	else
		err = port_ephemeral(id, &port);
	if (!err && dev)
		err = id_set_dev(id, dev, idx);
	if (err) {
		memset(&id->src, 0, sizeof(id->src));
		id->port = NULL;
		return err;
	}
	cma_addr_set_port(&id->src, port);
	id->bound = true;
	list_add_tail(&id->cm->bound, &id->bind_node);
	id->state = CMA_ADDR_BOUND;
	return 0;
}

void cma_unbind(struct cma_id *id)
{
	if (!id->bound)
		return;
	list_del(&id->bind_node);
	id->bound = false;
}

/* A listener must not share its port (reuse only binds side by side). */
int cma_listen_check(struct cma_id *id)
{
	return port_check(id, cma_addr_port(&id->src), false);
}

/* The source address the kernel would use towards dst. */
static int route_source(const struct sockaddr_storage *dst,
			struct sockaddr_storage *src)
{
	struct sockaddr_storage d = *dst;
	socklen_t len = sizeof(*src);
	int fd, err = 0;

	/* Any port will do; the socket only asks the routing table. */
	cma_addr_set_port(&d, 9);
	fd = socket(dst->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&d,
		    d.ss_family == AF_INET ? sizeof(struct sockaddr_in)
					   : sizeof(struct sockaddr_in6)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		err = -errno;
	close(fd);
	return err;
}

static void addr_event(struct cma_id *id, uint32_t event, int status)
{
	struct srd_cm_event_rep rec = {
		.uid = id->uid,
		.handle = id->handle,
		.listen_handle = SRD_NO_HANDLE,
		.event = event,
		.status = status,
	};

	cma_event_queue(id, &rec);
}

static int resolve(struct cma_id *id, struct sockaddr_storage *dst)
{
	struct sockaddr_storage src;
	struct srd_device *dev;
	uint8_t idx;
	int err;

	if (cma_addr_any(dst)) {
		/* As the kernel: "any" means this host. */
		uint16_t port = cma_addr_port(dst);

		if (dst->ss_family == AF_INET)
			((struct sockaddr_in *)dst)->sin_addr.s_addr =
				htonl(INADDR_LOOPBACK);
		else
			((struct sockaddr_in6 *)dst)->sin6_addr =
				in6addr_loopback;
		cma_addr_set_port(dst, port);
	}
	if (id->port)
		return 0; /* bound to an address: its device */
	dev = cma_addr_dev(id->cm, dst, &idx);
	if (dev) {
		src = *dst;
	} else if (cma_addr_loopback(&id->src) &&
		   (dev = cma_addr_dev(id->cm, &id->src, &idx))) {
		/* Bound to a loopback address, towards one that is not ours
		 * (a multicast group): the device on lo, which the kernel
		 * does not have, is the one such an id can use. */
		src = id->src;
	} else {
		err = route_source(dst, &src);
		if (err)
			return err;
		dev = cma_addr_dev(id->cm, &src, &idx);
		if (!dev)
			return -ENODEV;
	}
	err = id_set_dev(id, dev, idx);
	if (err)
		return err;
	/* The source address becomes the one used, the port stays. */
	cma_addr_set_port(&src, cma_addr_port(&id->src));
	id->src = src;
	return 0;
}

int cma_resolve_addr(struct cma_id *id, const struct sockaddr_storage *src,
		     const struct sockaddr_storage *dst)
{
	struct sockaddr_storage d = *dst;
	int err = cma_addr_check(dst);

	if (err)
		return err;
	if (src && src->ss_family && src->ss_family != dst->ss_family)
		return -EINVAL;
	if (id->state == CMA_IDLE) {
		struct sockaddr_storage any = { .ss_family = dst->ss_family };

		err = cma_bind(id, src && src->ss_family ? src : &any);
		if (err)
			return err;
	}
	if (id->state != CMA_ADDR_BOUND || id->src.ss_family != d.ss_family)
		return -EINVAL;
	err = resolve(id, &d);
	if (err) {
		addr_event(id, RDMA_CM_EVENT_ADDR_ERROR, err);
		return 0;
	}
	id->dst = d;
	cma_addr_to_gid(&id->dst, &id->dgid);
	id->state = CMA_ADDR_RESOLVED;
	addr_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

int cma_resolve_route(struct cma_id *id)
{
	const struct srd_device *dev;

	if (id->state != CMA_ADDR_RESOLVED || !id->port)
		return -EINVAL;
	dev = cm_port_dev(id->port);
	id->mtu = dev->port.active_mtu;
	id->hop_limit = CM_HOP_LIMIT;
	id->route = true;
	id->state = CMA_ROUTE_RESOLVED;
	addr_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}
