/* SPDX-License-Identifier: MIT */
/*
 * Device memory (ibv_alloc_dm): what a NIC's on-chip memory is, here a
 * memfd of the daemon that the client maps to read and write it with
 * ibv_memcpy_{to,from}_dm, and that MRs (REG_DM_MR, mr.c) expose to local
 * and remote access.  A device has max_dm_size bytes, counted in 64-byte
 * granules as ConnectX counts its MEMIC; the mapping is whole pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/core/core.h"

#define DM_MAX_LOG_ALIGN 12 /* a DM starts a page of its own */

struct srd_dm *dm_get(struct srd_client *c, uint32_t handle)
{
	struct srd_dm *dm = table_get(&c->d->dms, handle);

	return dm && dm->owner == c ? dm : NULL;
}

static void dm_uncharge(struct srd_client *c, uint64_t charged)
{
	limits_uncharge(c, SRD_RES_FDS, 1);
	limits_uncharge(c, SRD_RES_DM_BYTES, charged);
}

int cmd_alloc_dm(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_alloc_dm_req *req = rq->data;
	struct srd_device *dev = c->dev;
	struct srd_alloc_dm_rep *rep;
	uint64_t charged, map_len;
	struct srd_dm *dm;
	void *map;
	int64_t h;
	int fd, err;

	if (!req->length || req->length > dev->caps_ex.max_dm_size ||
	    req->log_align_req > DM_MAX_LOG_ALIGN || req->rsvd)
		return -EINVAL;
	charged = (req->length + SRD_DM_GRANULE - 1) & ~(SRD_DM_GRANULE - 1);
	/* As a NIC whose memory is taken: ENOMEM, not EINVAL. */
	if (charged > dev->caps_ex.max_dm_size - dev->dm_used)
		return -ENOMEM;
	map_len = (req->length + SRD_PAGE_SIZE - 1) & ~(SRD_PAGE_SIZE - 1ull);
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	/* A user's share of the device's memory, and the memfd kept. */
	err = limits_charge(c, SRD_RES_DM_BYTES, charged);
	if (err) {
		free(dm);
		return err;
	}
	err = limits_charge(c, SRD_RES_FDS, 1);
	if (err) {
		limits_uncharge(c, SRD_RES_DM_BYTES, charged);
		free(dm);
		return err;
	}
	h = res_alloc(c, SRD_RES_DM, dm);
	if (h < 0) {
		dm_uncharge(c, charged);
		free(dm);
		return h;
	}
	fd = shm_create("softrdma-dm", map_len, 0, &map);
	if (fd < 0) {
		res_free(c->d, c, SRD_RES_DM, h);
		dm_uncharge(c, charged);
		free(dm);
		return fd;
	}
	dm->handle = h;
	dm->owner = c;
	dm->dev = dev;
	dm->length = req->length;
	dm->charged = charged;
	dm->map = map;
	dm->map_len = map_len;
	dm->fd = fd; /* kept: an importer maps it too */
	dev->dm_used += charged;
	rep = REP(rp, struct srd_alloc_dm_rep);
	rep->handle = dm->handle;
	rep->map_len = map_len;
	rep_add_fd(rp, fd, true);
	return 0;
}

void dm_destroy(struct srd_dm *dm)
{
	munmap(dm->map, dm->map_len);
	close(dm->fd);
	dm->dev->dm_used -= dm->charged;
	dm_uncharge(dm->owner, dm->charged);
	res_free(dm->owner->d, dm->owner, SRD_RES_DM, dm->handle);
	free(dm);
}

int cmd_free_dm(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_dm *dm = dm_get(c, req->handle);

	if (!dm)
		return -EINVAL;
	/* uverbs keeps a DM with MRs on it. */
	if (dm->refcnt)
		return -EBUSY;
	dm_destroy(dm);
	return 0;
}
