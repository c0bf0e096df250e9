/* SPDX-License-Identifier: MIT */
/*
 * Endpoints: an id, its address resolved or bound, and optionally its QP,
 * in one call, for the synchronous style of rdma_client/rdma_server.
 */
#include <stdlib.h>

#include "librdmacm/cma.h"

static int passive_ep(struct rdma_cm_id *id, const struct rdma_addrinfo *res,
		      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct cma_id_priv *p = cma_id(id);

	if (rdma_bind_addr(id, res->ai_src_addr))
		return -1;
	if (pd)
		id->pd = pd;
	if (qp_init_attr) {
		p->qp_init_attr = malloc(sizeof(*qp_init_attr));
		if (!p->qp_init_attr)
			return cma_err(ENOMEM);
		*p->qp_init_attr = *qp_init_attr;
		p->qp_init_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

LIB_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			      struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	int err;

	if (!id || !res || (!res->ai_src_addr && !res->ai_dst_addr))
		return cma_err(EINVAL);
	if (cma_create_id2(NULL, &cm_id, NULL, res->ai_port_space,
			   res->ai_qp_type))
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (passive_ep(cm_id, res, pd, qp_init_attr))
			goto err;
		*id = cm_id;
		return 0;
	}
	if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr,
			      2000) ||
	    rdma_resolve_route(cm_id, 2000))
		goto err;
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(cm_id, pd, qp_init_attr))
			goto err;
	}
	*id = cm_id;
	return 0;
err:
	err = errno;
	rdma_destroy_ep(cm_id);
	return cma_err(err);
}

LIB_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
