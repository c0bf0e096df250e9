/* SPDX-License-Identifier: MIT */
/*
 * Enhanced connection establishment options on a QP, as mlx5 offers them
 * (rxe has none: EOPNOTSUPP).  The soft device implements no optional
 * protocol feature, so it accepts any options under its own vendor ID and
 * reports back what was set: both ends of a connection read the same
 * agreement (librdmacm carries it in the CM REQ and REP, ece.c there).
 */
#include <errno.h>

#include "common/proto.h"
#include "libibverbs/ibverbs.h"

LIB_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (!qp || !ece)
		return srd_ret_errno(-EINVAL);
	/* libibverbs' own rule, before the provider sees it. */
	if (!ece->vendor_id)
		return srd_ret_errno(-EOPNOTSUPP);
	/* mlx5's: no extension known, and the options are the vendor's. */
	if (ece->comp_mask || ece->vendor_id != SRD_VENDOR_ID)
		return srd_ret_errno(-EINVAL);
	to_qp(qp)->ece_options = ece->options;
	return 0;
}

LIB_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (!qp || !ece)
		return srd_ret_errno(-EINVAL);
	ece->vendor_id = SRD_VENDOR_ID;
	ece->options = to_qp(qp)->ece_options;
	ece->comp_mask = 0;
	return 0;
}
