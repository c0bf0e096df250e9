/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm ids: creating and destroying them, binding and resolving
 * addresses, options, and keeping the application's view of an id
 * (addresses, device, path) in step with the daemon's.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/sa.h>

#include "librdmacm/cma.h"

struct cma_id_priv *cma_alloc_id(struct rdma_event_channel *ch, void *context,
				 enum rdma_port_space ps,
				 enum ibv_qp_type qp_type)
{
	struct cma_id_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->id.channel = ch;
	p->id.context = context;
	p->id.ps = ps;
	p->id.qp_type = qp_type;
	p->handle = SRD_NO_HANDLE;
	pthread_mutex_init(&p->mut, NULL);
	pthread_cond_init(&p->cond, NULL);
	return p;
}

void cma_free_id(struct cma_id_priv *p)
{
	cma_mc_id_gone(p);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->mut);
	free(p->qp_init_attr);
	free(p);
}

static socklen_t addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

static void addr_copy(struct sockaddr_storage *to, const struct sockaddr *a)
{
	memset(to, 0, sizeof(*to));
	if (a)
		memcpy(to, a, addr_len(a));
}

int cma_query(struct cma_id_priv *p)
{
	struct srd_handle_req req = { .handle = p->handle };
	struct srd_cm_query_rep r;
	int err;

	err = cma_id_cmd(p, SRD_CMD_CM_QUERY, &req, sizeof(req), &r, sizeof(r));
	if (err)
		return cma_ret(err);
	return cma_query_apply(p, &r);
}

int cma_query_apply(struct cma_id_priv *p, struct srd_cm_query_rep *rp)
{
	struct srd_cm_query_rep r = *rp;
	struct rdma_cm_id *id = &p->id;
	struct ibv_sa_path_rec *pr = &p->path;

	id->route.addr.src_storage = r.src;
	id->route.addr.dst_storage = r.dst;
	if (r.dev_name[0] && !p->cma_dev) {
		r.dev_name[sizeof(r.dev_name) - 1] = 0;
		p->cma_dev = cma_dev_get(r.dev_name);
		if (!p->cma_dev)
			return -1;
		id->verbs = p->cma_dev->verbs;
	}
	if (!r.dev_name[0])
		return 0;
	id->port_num = r.port_num;
	id->route.addr.addr.ibaddr.sgid = r.sgid;
	id->route.addr.addr.ibaddr.dgid = r.dgid;
	id->route.addr.addr.ibaddr.pkey = htons(r.pkey);
	if (!r.num_paths) {
		id->route.num_paths = 0;
		id->route.path_rec = NULL;
		return 0;
	}
	memset(pr, 0, sizeof(*pr));
	pr->dgid = r.dgid;
	pr->sgid = r.sgid;
	pr->flow_label = htonl(r.flow_label);
	pr->hop_limit = r.hop_limit;
	pr->traffic_class = r.traffic_class;
	pr->reversible = 1;
	pr->numb_path = 1;
	pr->pkey = htons(r.pkey);
	pr->sl = r.sl;
	pr->mtu_selector = 2; /* exactly */
	pr->mtu = r.mtu;
	pr->rate_selector = 2;
	pr->rate = r.rate;
	pr->packet_life_time_selector = 2;
	pr->packet_life_time = r.packet_life_time;
	id->route.path_rec = pr;
	id->route.num_paths = 1;
	return 0;
}

int cma_complete(struct cma_id_priv *p)
{
	struct rdma_cm_event *ev;
	int ret;

	if (!p->sync)
		return 0;
	if (p->id.event) {
		rdma_ack_cm_event(p->id.event);
		p->id.event = NULL;
	}
	ret = rdma_get_cm_event(p->id.channel, &p->id.event);
	if (ret)
		return ret;
	ev = p->id.event;
	if (!ev->status)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return cma_err(ECONNREFUSED);
	return cma_err(ev->status < 0 ? -ev->status : ev->status);
}

int cma_create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps,
		   enum ibv_qp_type qp_type)
{
	struct srd_cm_create_id_req req = { .ps = ps, .qp_type = qp_type };
	struct srd_handle_rep rep;
	struct cma_id_priv *p;
	bool sync = !channel;
	int err;

	if (cma_init())
		return -1;
	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	p = cma_alloc_id(channel, context, ps, qp_type);
	if (!p) {
		err = -ENOMEM;
		goto err_chan;
	}
	p->sync = sync;
	req.uid = (uintptr_t)p;
	err = cma_id_cmd(p, SRD_CMD_CM_CREATE_ID, &req, sizeof(req), &rep,
			 sizeof(rep));
	if (err)
		goto err_free;
	p->handle = rep.handle;
	cma_insert(p);
	*id = &p->id;
	return 0;

err_free:
	cma_free_id(p);
err_chan:
	if (sync)
		rdma_destroy_event_channel(channel);
	return cma_err(-err);
}

LIB_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
			      struct rdma_cm_id **id, void *context,
			      enum rdma_port_space ps)
{
	enum ibv_qp_type t = (ps == RDMA_PS_IB || ps == RDMA_PS_TCP)
				     ? IBV_QPT_RC
				     : IBV_QPT_UD;

	return cma_create_id2(channel, id, context, ps, t);
}

LIB_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_handle_req req = { .handle = p->handle };
	int err;

	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	err = cma_id_cmd(p, SRD_CMD_CM_DESTROY_ID, &req, sizeof(req), NULL, 0);
	if (err && err != -EIO)
		return cma_ret(err);
	cma_remove(p);
	/* As rdma-core: every event handed out must be acked first. */
	pthread_mutex_lock(&p->mut);
	while (p->events_completed < p->events_fetched)
		pthread_cond_wait(&p->cond, &p->mut);
	pthread_mutex_unlock(&p->mut);
	if (p->sync)
		rdma_destroy_event_channel(id->channel);
	cma_free_id(p);
	return 0;
}

LIB_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_bind_req req = { .handle = p->handle };
	struct srd_cm_bind_rep rep;
	int err;

	if (!addr || !addr_len(addr))
		return cma_err(EINVAL);
	addr_copy(&req.addr, addr);
	err = cma_id_cmd(p, SRD_CMD_CM_BIND, &req, sizeof(req), &rep,
			 sizeof(rep));
	if (err)
		return cma_ret(err);
	return cma_query(p);
}

LIB_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
				 struct sockaddr *dst, int timeout_ms)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_resolve_addr_req req = { .handle = p->handle };
	int err;

	if (!dst || !addr_len(dst))
		return cma_err(EINVAL);
	req.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (src && addr_len(src))
		addr_copy(&req.src, src);
	addr_copy(&req.dst, dst);
	err = cma_id_cmd(p, SRD_CMD_CM_RESOLVE_ADDR, &req, sizeof(req), NULL,
			 0);
	if (err)
		return cma_ret(err);
	addr_copy(&id->route.addr.dst_storage, dst);
	return cma_complete(p);
}

LIB_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_resolve_route_req req = {
		.handle = p->handle,
		.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0,
	};
	int err;

	err = cma_id_cmd(p, SRD_CMD_CM_RESOLVE_ROUTE, &req, sizeof(req), NULL,
			 0);
	if (err)
		return cma_ret(err);
	return cma_complete(p);
}

/* RDMA_OPTION_IB_PATH: an array of struct ibv_path_data, of which the
 * kernel takes the primary, bidirectional path for the CM (GMP); the
 * daemon gets that path record. */
static int set_ib_path(struct cma_id_priv *p, struct srd_cm_set_option_req *req,
		       const void *optval, size_t optlen)
{
	const uint32_t want = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
			      IBV_PATH_FLAG_BIDIRECTIONAL;
	const struct ibv_path_data *d = optval;
	size_t n = optlen / sizeof(*d);

	static_assert(sizeof(d->path) <= sizeof(req->optval), "path fits");
	if (!optval || !optlen || optlen % sizeof(*d))
		return cma_err(EINVAL);
	while (n && d->flags != want) {
		d++;
		n--;
	}
	if (!n)
		return cma_err(EINVAL);
	memcpy(req->optval, &d->path, sizeof(d->path));
	req->optlen = sizeof(d->path);
	return cma_ret(cma_id_cmd(p, SRD_CMD_CM_SET_OPTION, req, sizeof(*req),
				  NULL, 0));
}

LIB_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
			       void *optval, size_t optlen)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_set_option_req req = {
		.handle = p->handle,
		.level = (uint32_t)level,
		.optname = (uint32_t)optname,
		.optlen = (uint32_t)optlen,
	};

	p->attr_valid = 0; /* options change what INIT_QP_ATTR says */
	if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
		return set_ib_path(p, &req, optval, optlen);
	if (optlen > sizeof(req.optval) || (optlen && !optval))
		return cma_err(EINVAL);
	if (optlen)
		memcpy(req.optval, optval, optlen);
	return cma_ret(cma_id_cmd(p, SRD_CMD_CM_SET_OPTION, &req, sizeof(req),
				  NULL, 0));
}

static __be16 addr_port(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)a)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)a)->sin6_port;
	case AF_IB:
		return htons((uint16_t)(be64toh(((const struct sockaddr_ib *)a)
							->sib_sid) &
					RDMA_IB_IP_PORT_MASK));
	default:
		return 0;
	}
}

LIB_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return addr_port(&id->route.addr.src_addr);
}

LIB_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return addr_port(&id->route.addr.dst_addr);
}

LIB_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
			       struct rdma_event_channel *channel)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_migrate_req req = {
		.handle = p->handle,
		.uid = (uintptr_t)p,
	};
	struct rdma_event_channel *old = id->channel;
	bool sync = !channel;
	int err;

	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	err = cma_cmd(channel, SRD_CMD_CM_MIGRATE, &req, sizeof(req), NULL, 0);
	if (err) {
		if (sync)
			rdma_destroy_event_channel(channel);
		return cma_ret(err);
	}
	if (p->sync) {
		if (id->event) {
			rdma_ack_cm_event(id->event);
			id->event = NULL;
		}
	}
	/* Events already handed out are acked on the old channel first. */
	pthread_mutex_lock(&p->mut);
	while (p->events_completed < p->events_fetched)
		pthread_cond_wait(&p->cond, &p->mut);
	id->channel = channel;
	pthread_mutex_unlock(&p->mut);
	if (p->sync)
		rdma_destroy_event_channel(old);
	p->sync = sync;
	return 0;
}
