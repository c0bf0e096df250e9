/* SPDX-License-Identifier: MIT */
/*
 * Memory windows: allocation by command, binding as a WQE on the QP's
 * send queue (ibv_bind_mw for type 1, IBV_WR_BIND_MW / ibv_wr_bind_mw for
 * both), as rdma-core's providers do it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libibverbs/ibverbs.h"

struct ibv_mw *srd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct srd_alloc_mw_req req = { .pd_handle = pd->handle,
					.type = (uint32_t)type };
	struct srd_alloc_mw_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_ALLOC_MW,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct ibv_mw *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = srd_ctx_cmd_new(pd->context, sizeof(*mw), &a);
	if (!mw)
		return NULL;
	mw->context = pd->context;
	mw->pd = pd;
	mw->handle = rep.handle;
	mw->rkey = rep.rkey;
	mw->type = type;
	return mw;
}

int srd_dealloc_mw(struct ibv_mw *mw)
{
	int ret =
		srd_destroy_handle(mw->context, SRD_CMD_DEALLOC_MW, mw->handle);

	if (ret)
		return srd_ret_errno(ret);
	free(mw);
	return 0;
}

int srd_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *info = &mw_bind->bind_info;
	struct ibv_send_wr wr, *bad;
	int ret;

	/* Type 1 windows are never zero based (rxe, IBTA o10-36.2.2). */
	if (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = (unsigned int)mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	/* Each bind changes the key byte, so the old rkey stops working. */
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = *info;
	ret = srd_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
