/* SPDX-License-Identifier: MIT */
/*
 * Verbs the soft device does not offer: sharing objects between
 * processes, enhanced connection establishment.  They fail the
 * way rdma-core fails on a device without the feature.
 */
#include <errno.h>

#include "libibverbs/ibverbs.h"

LIB_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	errno = EOPNOTSUPP;
	return NULL;
}

LIB_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					uint32_t pd_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

LIB_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
}

LIB_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

LIB_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
}

LIB_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					uint32_t dm_handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

LIB_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
}

LIB_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

LIB_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
