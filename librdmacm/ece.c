/* SPDX-License-Identifier: MIT */
/*
 * Enhanced connection establishment (ECE), as rdma-core's librdmacm does
 * it.  An application that manages its own QP sets the options its REQ
 * or REP offers and reads the peer's (rdma_set_local_ece,
 * rdma_get_remote_ece); for a QP librdmacm made, the options come from
 * and go to the provider (ibv_query_ece / ibv_set_ece).  The daemon
 * carries them in the CM messages.  A passive side answers with the
 * vendor ID it received and its own options; rdma_reject_ece refuses
 * them with REJ reason 35.
 */
#include <string.h>

#include "librdmacm/cma.h"

LIB_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cma_id_priv *p;

	if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask)
		return cma_err(EINVAL);
	p = cma_id(id);
	p->local_ece.vendor_id = ece->vendor_id;
	p->local_ece.options = ece->options;
	return 0;
}

LIB_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cma_id_priv *p;

	if (!id || id->qp || !ece)
		return cma_err(EINVAL);
	p = cma_id(id);
	ece->vendor_id = p->remote_ece.vendor_id;
	ece->options = p->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

/* A provider without ECE says EOPNOTSUPP: that is no error here. */
static int ece_ret(int ret)
{
	return ret && ret != EOPNOTSUPP ? cma_err(ret) : 0;
}

int cma_ece_qp_created(struct cma_id_priv *p, struct ibv_qp *qp)
{
	struct ibv_ece ece = { 0 };
	int ret = ibv_query_ece(qp, &ece);

	if (ece_ret(ret))
		return -1;
	p->local_ece.vendor_id = ece.vendor_id;
	p->local_ece.options = ece.options;
	if (!p->remote_ece.vendor_id)
		return 0; /* an active side's QP: nothing heard yet */
	/* The QP of a request: what both ends share, or nothing when the
	 * vendors differ. */
	if (p->remote_ece.vendor_id != p->local_ece.vendor_id) {
		ece.vendor_id = p->local_ece.vendor_id;
		ece.options = 0;
	} else {
		ece = p->remote_ece;
	}
	ece.comp_mask = 0;
	return ece_ret(ibv_set_ece(qp, &ece));
}

int cma_ece_qp_ready(struct cma_id_priv *p, struct ibv_qp *qp)
{
	struct ibv_ece ece = { 0 };
	int ret;

	if (!p->remote_ece.vendor_id)
		return 0;
	ret = ibv_query_ece(qp, &ece);
	if (ece_ret(ret))
		return -1;
	p->local_ece.options = ece.options;
	return 0;
}

int cma_ece_conn_resp(struct cma_id_priv *p, uint32_t vendor_id,
		      uint32_t options)
{
	struct ibv_ece ece = { .vendor_id = vendor_id, .options = options };
	int ret;

	if (!vendor_id) {
		/* The peer knows no ECE: nothing is enabled. */
		ece.vendor_id = p->local_ece.vendor_id;
		ece.options = 0;
	} else if (vendor_id != p->local_ece.vendor_id) {
		/* A REP must echo our vendor ID: the peer is broken. */
		cma_modify_qp_err(&p->id);
		return -EINVAL;
	}
	p->remote_ece.vendor_id = vendor_id;
	ret = ibv_set_ece(p->id.qp, &ece);
	if (ret && ret != EOPNOTSUPP)
		return -ret;
	ret = cma_process_conn_resp(p);
	if (ret)
		return ret;
	ret = ibv_query_ece(p->id.qp, &ece);
	if (ret && ret != EOPNOTSUPP) {
		cma_modify_qp_err(&p->id);
		return -ret;
	}
	p->local_ece.options = ret == EOPNOTSUPP ? 0 : ece.options;
	return 0;
}
