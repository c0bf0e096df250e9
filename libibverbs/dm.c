/* SPDX-License-Identifier: MIT */
/*
 * Device memory: ibv_alloc_dm maps the memory the daemon allocated (a
 * memfd), so ibv_memcpy_{to,from}_dm are plain copies with no command;
 * ibv_reg_dm_mr asks the daemon for a zero-based MR over part of it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

struct srd_dm {
	struct ibv_dm dm;
	uint8_t *map;
	size_t map_len;
	uint64_t length;
};

static struct srd_dm *to_dm(struct ibv_dm *d)
{
	return container_of(d, struct srd_dm, dm);
}

/* mlx5's rules: the range must lie in the DM (EFAULT); the device moves
 * 4-byte words, so offset and length must be multiples of 4 (EINVAL). */
static int dm_range_check(const struct srd_dm *dm, uint64_t off, size_t len)
{
	if (off > dm->length || len > dm->length - off)
		return EFAULT;
	if ((off | len) & 3)
		return EINVAL;
	return 0;
}

static int memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			const void *host_addr, size_t length)
{
	struct srd_dm *dm = to_dm(ibdm);
	int ret = dm_range_check(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy(dm->map + dm_offset, host_addr, length);
	return 0;
}

static int memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			  uint64_t dm_offset, size_t length)
{
	struct srd_dm *dm = to_dm(ibdm);
	int ret = dm_range_check(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy(host_addr, dm->map + dm_offset, length);
	return 0;
}

/* Map a DM's memfd (the daemon keeps its own copy) into dm.  0 or -errno;
 * fd is closed either way. */
static int dm_map(struct srd_dm *dm, struct ibv_context *context, int fd,
		  uint64_t map_len, uint64_t length, uint32_t handle)
{
	void *map;

	if (map_len < length || map_len > SIZE_MAX) {
		close(fd);
		return -EPROTO;
	}
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	/* Device memory is the device's: a forked child does not get it. */
	madvise(map, map_len, MADV_DONTFORK);
	dm->map = map;
	dm->map_len = map_len;
	dm->length = length;
	dm->dm.context = context;
	dm->dm.memcpy_to_dm = memcpy_to_dm;
	dm->dm.memcpy_from_dm = memcpy_from_dm;
	dm->dm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->dm.handle = handle;
	return 0;
}

struct ibv_dm *srd_alloc_dm(struct ibv_context *context,
			    struct ibv_alloc_dm_attr *attr)
{
	struct srd_alloc_dm_req req = { 0 };
	struct srd_alloc_dm_rep rep;
	int fd = -1;
	struct srd_dm *dm;
	int ret;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	req.length = attr->length;
	req.log_align_req = attr->log_align_req;
	ret = srd_ctx_cmd_fd(to_ctx(context), SRD_CMD_ALLOC_DM, &req,
			     sizeof(req), &rep, sizeof(rep), &fd);
	if (ret)
		goto err_free;
	ret = dm_map(dm, context, fd, rep.map_len, attr->length, rep.handle);
	if (ret) {
		srd_destroy_handle(context, SRD_CMD_FREE_DM, rep.handle);
		goto err_free;
	}
	return &dm->dm;

err_free:
	free(dm);
	errno = -ret;
	return NULL;
}

struct ibv_dm *srd_import_dm(struct ibv_context *context, uint32_t handle)
{
	struct srd_handle_req req = { .handle = handle };
	struct srd_import_dm_rep rep;
	struct srd_dm *dm = calloc(1, sizeof(*dm));
	int fd = -1, ret;

	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	ret = srd_ctx_cmd_fd(to_ctx(context), SRD_CMD_IMPORT_DM, &req,
			     sizeof(req), &rep, sizeof(rep), &fd);
	if (!ret)
		ret = dm_map(dm, context, fd, rep.map_len, rep.length, handle);
	if (ret) {
		free(dm);
		errno = -ret;
		return NULL;
	}
	return &dm->dm;
}

void srd_unimport_dm(struct ibv_dm *ibdm)
{
	struct srd_dm *dm = to_dm(ibdm);

	munmap(dm->map, dm->map_len);
	free(dm);
}

int srd_free_dm(struct ibv_dm *ibdm)
{
	struct srd_dm *dm = to_dm(ibdm);
	int ret;

	ret = srd_destroy_handle(ibdm->context, SRD_CMD_FREE_DM, ibdm->handle);
	if (ret)
		return srd_ret_errno(ret);
	munmap(dm->map, dm->map_len);
	free(dm);
	return 0;
}

struct ibv_mr *srd_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			     uint64_t dm_offset, size_t length,
			     unsigned int access)
{
	struct srd_reg_dm_mr_req req = {
		.pd_handle = pd->handle,
		.dm_handle = ibdm->handle,
		.offset = dm_offset,
		.length = length,
		.access = access,
	};
	struct srd_reg_mr_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_REG_DM_MR,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct srd_umr *mr;

	/* libibverbs: DM MRs are zero based, the mapping is not the
	 * application's to address. */
	if (!(access & IBV_ACCESS_ZERO_BASED) || ibdm->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	mr = srd_ctx_cmd_new(pd->context, sizeof(*mr), &a);
	if (!mr)
		return NULL;
	srd_umr_init(mr, pd, NULL, length, (int)access, rep.handle, rep.lkey,
		     rep.rkey);
	return &mr->mr;
}
