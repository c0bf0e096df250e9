/* SPDX-License-Identifier: MIT */
/*
 * Objects of a shared context (ibv_import_device, context.c) by handle:
 * the daemon says what the context holds under it; the library makes the
 * local object.  Unimporting frees only that; destroying (ibv_dealloc_pd,
 * ibv_dereg_mr, ibv_free_dm) destroys the object for every process, as in
 * rdma-core.  An imported MR is the exporter's memory: the daemon reaches
 * it as the exporter registered it, so SGEs and WQEs of any process of the
 * context naming its lkey address the exporter's pages at the exporter's
 * addresses (ibv_mr.addr).
 */
#include <errno.h>
#include <stdlib.h>

#include "libibverbs/ibverbs.h"

LIB_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					uint32_t pd_handle)
{
	struct srd_handle_req req = { .handle = pd_handle };
	struct srd_cmd_args a = {
		.op = SRD_CMD_IMPORT_PD,
		.req = &req,
		.req_len = sizeof(req),
		.rep_var = true,
	};

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	return srd_pd_new(context, &a, &pd_handle);
}

LIB_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	/* A parent domain is no imported PD. */
	if (pd && !srd_parent_domain(pd))
		free(to_pd(pd));
}

LIB_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct srd_import_mr_req req = { .handle = mr_handle };
	struct srd_import_mr_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_IMPORT_MR,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct srd_umr *mr;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	req.pd_handle = pd->handle;
	mr = srd_ctx_cmd_new(pd->context, sizeof(*mr), &a);
	if (!mr)
		return NULL;
	srd_umr_init(mr, pd, (void *)(uintptr_t)rep.iova, rep.length,
		     (int)rep.access, mr_handle, rep.lkey, rep.rkey);
	return &mr->mr;
}

LIB_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	/* It holds no segments: its pages are the exporter's. */
	if (mr)
		free(to_mr(mr));
}

LIB_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					uint32_t dm_handle)
{
	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	return srd_import_dm(context, dm_handle);
}

LIB_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	if (dm)
		srd_unimport_dm(dm);
}
