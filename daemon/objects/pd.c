/* SPDX-License-Identifier: MIT */
/* Protection domains. */
#include <errno.h>
#include <stdlib.h>

#include "daemon/core/core.h"

struct srd_pd *pd_get(struct srd_client *c, uint32_t handle)
{
	struct srd_pd *pd = table_get(&c->d->pds, handle);

	return pd && pd->owner == c ? pd : NULL;
}

int cmd_alloc_pd(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	struct srd_pd *pd = calloc(1, sizeof(*pd));
	int64_t h;

	if (!pd)
		return -ENOMEM;
	h = res_alloc(c, SRD_RES_PD, pd);
	if (h < 0) {
		free(pd);
		return h;
	}
	pd->handle = h;
	pd->owner = c;
	REP(rp, struct srd_handle_rep)->handle = pd->handle;
	return 0;
}

void pd_destroy(struct srd_pd *pd)
{
	res_free(pd->owner->d, pd->owner, SRD_RES_PD, pd->handle);
	free(pd);
}

int cmd_dealloc_pd(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_pd *pd = pd_get(c, req->handle);

	if (!pd)
		return -EINVAL;
	if (pd->refcnt)
		return -EBUSY;
	pd_destroy(pd);
	return 0;
}
