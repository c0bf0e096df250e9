/* SPDX-License-Identifier: MIT */
/*
 * Multicast attach and detach: one command each, the device checks them
 * as ib_uverbs and ib_attach_mcast do (UD QPs and multicast GIDs only,
 * EINVAL otherwise; attaching twice is no error; detaching a group the QP
 * is not attached to is EINVAL; over the device's limits ENOMEM).
 */
#include <errno.h>

#include "libibverbs/ibverbs.h"

static int mcast_cmd(struct ibv_qp *qp, uint32_t op, const union ibv_gid *gid,
		     uint16_t lid)
{
	struct srd_mcast_req req = { 0 };
	struct srd_cmd_args a = {
		.op = op,
		.req = &req,
		.req_len = sizeof(req),
	};

	if (!qp || !gid)
		return srd_ret_errno(-EINVAL);
	req.qp_handle = qp->handle;
	req.lid = lid;
	req.gid = *gid;
	return srd_ret_errno(srd_ctx_cmd(to_ctx(qp->context), &a));
}

LIB_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				uint16_t lid)
{
	return mcast_cmd(qp, SRD_CMD_ATTACH_MCAST, gid, lid);
}

LIB_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				uint16_t lid)
{
	return mcast_cmd(qp, SRD_CMD_DETACH_MCAST, gid, lid);
}
