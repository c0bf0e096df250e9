/* SPDX-License-Identifier: MIT */
/* Address handles. */
#include <errno.h>
#include <stdlib.h>

#include "daemon/core/core.h"

int ah_attr_check(const struct srd_device *dev, const struct ibv_ah_attr *a)
{
	if (a->port_num != 1)
		return -EINVAL;
	/* RoCE addresses by GID: every AV needs its GRH. */
	if (!a->is_global)
		return -EINVAL;
	if (!device_gid_valid(dev, a->grh.sgid_index))
		return -EINVAL;
	/* The flow label is 20 bits on the wire; the kernel takes any value
	 * and uses those bits (UCX passes 0xffffffff for "none"). */
	if (a->sl > 15)
		return -EINVAL;
	return 0;
}

struct srd_ah *ah_lookup(struct srd_client *c, uint32_t handle)
{
	struct srd_ah *ah = table_get(&c->d->ahs, handle);

	return ah && ah->owner == c ? ah : NULL;
}

int cmd_create_ah(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_create_ah_req *req = rq->data;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	struct srd_ah *ah;
	int64_t h;
	int err;

	if (!pd)
		return -EINVAL;
	err = ah_attr_check(c->dev, &req->attr);
	if (err)
		return err;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -ENOMEM;
	h = res_alloc(c, SRD_RES_AH, ah);
	if (h < 0) {
		free(ah);
		return h;
	}
	ah->handle = h;
	ah->owner = c;
	ah->pd = pd;
	ah->attr = req->attr;
	pd->refcnt++;
	REP(rp, struct srd_handle_rep)->handle = ah->handle;
	return 0;
}

void ah_destroy(struct srd_ah *ah)
{
	ah->pd->refcnt--;
	res_free(ah->owner->d, ah->owner, SRD_RES_AH, ah->handle);
	free(ah);
}

int cmd_destroy_ah(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_ah *ah = ah_lookup(c, req->handle);

	if (!ah)
		return -EINVAL;
	ah_destroy(ah);
	return 0;
}
