/* SPDX-License-Identifier: MIT */
/*
 * ibv_advise_mr.  The daemon checks the request as the kernel and mlx5 do
 * and answers where each SGE lies in our address space; the prefetch is
 * then ours to do: the device reaches our pages through our own page
 * tables, so faulting them in (MADV_POPULATE_*) is what saves it the
 * fault later.  Always done before returning, so FLUSH costs nothing more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

/* Linux 5.14; older headers lack them. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int populate(uint64_t addr, uint64_t len, bool write)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = (uintptr_t)addr & ~(ps - 1);
	uintptr_t e = ((uintptr_t)(addr + len) + ps - 1) & ~(ps - 1);

	if (madvise((void *)s, e - s,
		    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ))
		return errno == EINVAL ? 0
				       : -EFAULT; /* EINVAL: no such advice */
	return 0;
}

int srd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		  uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	union {
		struct srd_advise_mr_req req;
		uint8_t b[sizeof(struct srd_advise_mr_req) +
			  SRD_ADVISE_MAX_SGE * sizeof(struct srd_advise_sge)];
	} u;
	struct srd_advise_sge rep[SRD_ADVISE_MAX_SGE];
	struct srd_cmd_args a = {
		.op = SRD_CMD_ADVISE_MR,
		.req = &u,
		.rep = rep,
	};
	int ret;

	if (!pd || (num_sge && !sg_list))
		return EINVAL;
	/* The kernel's own bound is its attribute size; ours is a message. */
	if (!num_sge || num_sge > SRD_ADVISE_MAX_SGE)
		return EINVAL;
	memset(&u.req, 0, sizeof(u.req));
	u.req.pd_handle = pd->handle;
	u.req.advice = (uint32_t)advice;
	u.req.flags = flags;
	u.req.num_sge = num_sge;
	for (uint32_t i = 0; i < num_sge; i++) {
		u.req.sge[i].addr = sg_list[i].addr;
		u.req.sge[i].length = sg_list[i].length;
		u.req.sge[i].lkey = sg_list[i].lkey;
	}
	a.req_len = sizeof(u.req) + num_sge * sizeof(u.req.sge[0]);
	a.rep_len = num_sge * sizeof(rep[0]);
	ret = srd_ctx_cmd(to_ctx(pd->context), &a);
	if (ret)
		return srd_ret_errno(ret);
	for (uint32_t i = 0; i < num_sge; i++) {
		if (!rep[i].length)
			continue;
		ret = populate(rep[i].addr, rep[i].length,
			       advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
		/* Without FLUSH the device would have reported nothing. */
		if (ret && (flags & IBV_ADVISE_MR_FLAG_FLUSH))
			return -ret;
	}
	return 0;
}
