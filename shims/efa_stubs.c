/* SPDX-License-Identifier: MIT */
/*
 * libefa.so.1: every entry point of rdma-core 44's library at its version,
 * answering as the real one does for a device that is not its own.  Generated
 * by scripts/gen_shims.py from shims/libefa.so.1.syms and the prototypes of
 * rdma-core 44's <infiniband/efadv.h>; regenerate rather than edit.
 */
#include <errno.h>

#include "efa_stubs.h"

/* EFA_1.2: NULL, errno EOPNOTSUPP. */
struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* EFA_1.2: NULL, errno EOPNOTSUPP. */
struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx,
				  struct ibv_cq_init_attr_ex *attr_ex,
				  struct efadv_cq_init_attr *efa_attr,
				  uint32_t inlen)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* EFA_1.0: NULL, errno EOPNOTSUPP. */
struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd,
				      struct ibv_qp_init_attr *attr,
				      uint32_t driver_qp_type)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* EFA_1.1: NULL, errno EOPNOTSUPP. */
struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
				  struct ibv_qp_init_attr_ex *attr_ex,
				  struct efadv_qp_init_attr *efa_attr,
				  uint32_t inlen)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* EFA_1.1: EOPNOTSUPP. */
int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr,
		   uint32_t inlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* EFA_1.1: EOPNOTSUPP. */
int efadv_query_device(struct ibv_context *ibvctx,
		       struct efadv_device_attr *attr, uint32_t inlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
