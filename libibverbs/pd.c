/* SPDX-License-Identifier: MIT */
/* Protection domains. */
#include <errno.h>
#include <stdlib.h>

#include "libibverbs/ibverbs.h"

LIB_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct srd_handle_rep rep = { 0 };
	struct srd_cmd_args a = {
		.op = SRD_CMD_ALLOC_PD,
		.rep = &rep,
		.rep_len = sizeof(rep),
	};

	return srd_pd_new(context, &a, &rep.handle);
}

struct ibv_pd *srd_pd_new(struct ibv_context *context, struct srd_cmd_args *a,
			  const uint32_t *handle)
{
	struct srd_pd *pd = srd_ctx_cmd_new(context, sizeof(*pd), a);

	if (!pd)
		return NULL;
	atomic_init(&pd->refcnt, 0);
	pd->pd.context = context;
	pd->pd.handle = *handle;
	return &pd->pd;
}

/* Destroy-by-handle commands share this shape. */
int srd_destroy_handle(struct ibv_context *context, uint32_t op,
		       uint32_t handle)
{
	struct srd_handle_req req = { .handle = handle };
	struct srd_cmd_args a = {
		.op = op,
		.req = &req,
		.req_len = sizeof(req),
		.rep_var = true,
	};
	struct srd_context *ctx = to_ctx(context);
	int ret = srd_ctx_cmd(ctx, &a);

	/* The daemon is gone and took the object with it: destroyed, as
	 * rdma-core reports a destroy on a disassociated device. */
	if (ret == -EIO && atomic_load(&ctx->conn.broken))
		return 0;
	return ret;
}

LIB_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct srd_pd *pd = to_pd(ibpd);
	int ret;

	if (pd->protection)
		return srd_ret_errno(-srd_dealloc_parent_domain(pd));
	/* Parent domains on it hold it, as in mlx5. */
	if (atomic_load(&pd->refcnt))
		return srd_ret_errno(-EBUSY);
	ret = srd_destroy_handle(ibpd->context, SRD_CMD_DEALLOC_PD,
				 ibpd->handle);
	if (ret)
		return srd_ret_errno(ret);
	free(pd);
	return 0;
}
