/* SPDX-License-Identifier: MIT */
/*
 * Multicast joins, as rdma-core's librdmacm keeps them: the library
 * remembers each join (address, flags, context), the device answers with
 * MULTICAST_JOIN, and when that event is fetched the id's QP (if it has
 * one, and unless the join is send-only) is attached to the group; an
 * attach that fails turns the event into MULTICAST_ERROR.  Leaving
 * detaches the QP and forgets the join; events of a join left meanwhile
 * are dropped.  Destroying the id forgets its joins without detaching,
 * as rdma-core does (the application leaves first).
 */
#include <stdlib.h>
#include <string.h>

#include "librdmacm/cma.h"

struct cma_mc {
	struct list_node node;
	struct cma_id_priv *p;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	uint16_t join_flags;
	bool attached;
	void *context;
	union ibv_gid mgid;
	uint16_t mlid;
};

static struct list_head mcs = { { &mcs.n, &mcs.n } };
static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;

static socklen_t mc_addrlen(const struct sockaddr *a)
{
	if (!a)
		return 0;
	switch (a->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

/* Under mc_lock. */
static struct cma_mc *mc_by_uid(struct cma_id_priv *p, uint64_t uid)
{
	list_for_each (&mcs, it) {
		struct cma_mc *mc = list_entry(it, struct cma_mc, node);

		if ((uintptr_t)mc == uid && mc->p == p)
			return mc;
	}
	return NULL;
}

static struct cma_mc *mc_by_addr(struct cma_id_priv *p,
				 const struct sockaddr *a, socklen_t len)
{
	list_for_each (&mcs, it) {
		struct cma_mc *mc = list_entry(it, struct cma_mc, node);

		if (mc->p == p && mc->addrlen == len &&
		    !memcmp(&mc->addr, a, len))
			return mc;
	}
	return NULL;
}

static int join(struct rdma_cm_id *id, struct sockaddr *addr,
		uint16_t join_flags, void *context)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_join_mcast_req req = { .handle = p->handle,
					     .join_flags = join_flags };
	socklen_t len = mc_addrlen(addr);
	struct cma_mc *mc;
	int err;

	if (!len)
		return cma_err(EINVAL);
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return cma_err(ENOMEM);
	mc->p = p;
	memcpy(&mc->addr, addr, len);
	mc->addrlen = len;
	mc->join_flags = join_flags;
	mc->context = context;
	pthread_mutex_lock(&mc_lock);
	list_add_tail(&mcs, &mc->node);
	pthread_mutex_unlock(&mc_lock);
	req.uid = (uintptr_t)mc;
	memcpy(&req.addr, addr, len);
	err = cma_id_cmd(p, SRD_CMD_CM_JOIN_MCAST, &req, sizeof(req), NULL, 0);
	if (err) {
		pthread_mutex_lock(&mc_lock);
		list_del(&mc->node);
		pthread_mutex_unlock(&mc_lock);
		free(mc);
		return cma_ret(err);
	}
	return p->sync ? cma_complete(p) : 0;
}

LIB_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				   void *context)
{
	if (!id)
		return cma_err(EINVAL);
	return join(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

LIB_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *attr,
				      void *context)
{
	if (!id || !attr || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS))
		return cma_err(EINVAL);
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return cma_err(EINVAL);
	return join(id, attr->addr, (uint16_t)attr->join_flags, context);
}

LIB_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id,
				    struct sockaddr *addr)
{
	struct srd_cm_leave_mcast_req req = { 0 };
	socklen_t len = mc_addrlen(addr);
	struct cma_id_priv *p;
	struct cma_mc *mc;
	int err;

	if (!id || !len)
		return cma_err(EINVAL);
	p = cma_id(id);
	pthread_mutex_lock(&mc_lock);
	mc = mc_by_addr(p, addr, len);
	if (mc) {
		list_del(&mc->node);
		if (mc->attached && id->qp)
			ibv_detach_mcast(id->qp, &mc->mgid, mc->mlid);
	}
	pthread_mutex_unlock(&mc_lock);
	if (!mc)
		return cma_err(EADDRNOTAVAIL);
	req.handle = p->handle;
	req.uid = (uintptr_t)mc;
	err = cma_id_cmd(p, SRD_CMD_CM_LEAVE_MCAST, &req, sizeof(req), NULL, 0);
	free(mc);
	return cma_ret(err);
}

int cma_mc_event(struct cma_id_priv *p, struct cma_event *e,
		 const struct srd_cm_event_rep *r)
{
	struct rdma_ud_param *u = &e->event.param.ud;
	struct cma_mc *mc;
	int ret = 0;

	pthread_mutex_lock(&mc_lock);
	mc = mc_by_uid(p, r->mc_uid);
	if (!mc) {
		pthread_mutex_unlock(&mc_lock);
		return -1;
	}
	u->private_data = mc->context;
	if (r->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
		u->ah_attr = r->ah_attr;
		u->qp_num = r->ud_qp_num;
		u->qkey = r->ud_qkey;
		mc->mgid = r->ah_attr.grh.dgid;
		mc->mlid = r->ah_attr.dlid;
		/* A send-only member sends to the group, never hears it. */
		if (p->id.qp && !mc->attached &&
		    mc->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) {
			ret = ibv_attach_mcast(p->id.qp, &mc->mgid, mc->mlid);
			mc->attached = !ret;
		}
		if (ret) {
			/* rdma-core reports the failure as -1, errno set. */
			errno = ret;
			e->event.event = RDMA_CM_EVENT_MULTICAST_ERROR;
			e->event.status = -1;
		}
	}
	pthread_mutex_unlock(&mc_lock);
	return 0;
}

void cma_mc_id_gone(struct cma_id_priv *p)
{
	pthread_mutex_lock(&mc_lock);
	list_for_each (&mcs, it) {
		struct cma_mc *mc = list_entry(it, struct cma_mc, node);

		if (mc->p == p) {
			list_del(&mc->node);
			free(mc);
		}
	}
	pthread_mutex_unlock(&mc_lock);
}
