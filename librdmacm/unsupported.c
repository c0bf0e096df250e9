/* SPDX-License-Identifier: MIT */
/*
 * What this first version of the connection manager does not do:
 * multicast (no multicast groups on the soft device yet) and ECE.  Each
 * fails cleanly, so programs that only may use them still load and run.
 */
#include "librdmacm/cma.h"

LIB_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				   void *context)
{
	return cma_err(EOPNOTSUPP);
}

LIB_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *attr,
				      void *context)
{
	return cma_err(EOPNOTSUPP);
}

LIB_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id,
				    struct sockaddr *addr)
{
	return cma_err(EOPNOTSUPP);
}

LIB_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return cma_err(EOPNOTSUPP);
}

LIB_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return cma_err(EOPNOTSUPP);
}
