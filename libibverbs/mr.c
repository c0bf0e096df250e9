/* SPDX-License-Identifier: MIT */
/* Memory registration: share the pages (mem.c), then ask for the keys. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "libibverbs/ibverbs.h"

#define SRD_ACCESS_WRITABLE                                 \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)

/* The kernel's ib_check_mr_access() rules, before we move any memory. */
static int check_access(unsigned int access)
{
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Fill the registration part of a REG_MR/REREG_MR request. */
static size_t fill_reg(struct srd_reg_mr_req *r, uint32_t pd_handle,
		       unsigned int access, const void *addr, size_t length,
		       uint64_t iova, const struct srd_mem_desc *d)
{
	r->pd_handle = pd_handle;
	r->access = access;
	r->addr = (uintptr_t)addr;
	r->length = length;
	r->iova = iova;
	r->span_start = d->span_start;
	r->span_len = d->span_len;
	r->num_pieces = d->num_pieces;
	memcpy(r->piece, d->piece, d->num_pieces * sizeof(r->piece[0]));
	return sizeof(*r) + d->num_pieces * sizeof(r->piece[0]);
}

/* Make the pages reachable and describe them.  An ODP MR leaves them
 * alone: nothing moved, looked at or touched (the daemon reaches each page
 * in place when it needs it), so the request carries no pieces. */
static int acquire(const void *addr, size_t length, unsigned int access,
		   struct srd_mem_desc *d, struct srd_mem_ref *ref)
{
	if (access & IBV_ACCESS_ON_DEMAND) {
		memset(d, 0, offsetof(struct srd_mem_desc, piece));
		d->nfds = 0;
		ref->seg = NULL;
		ref->nseg = 0;
		return 0;
	}
	return srd_mem_acquire(addr, length, access & SRD_ACCESS_WRITABLE, d,
			       ref);
}

/* Does the daemon reach any of it in place (its writes then want our
 * placement thread)? */
static bool in_place(unsigned int access, const struct srd_mem_desc *d)
{
	if (access & IBV_ACCESS_ON_DEMAND)
		return true;
	for (uint32_t i = 0; i < d->num_pieces; i++)
		if (d->piece[i].kind == SRD_PIECE_PVM)
			return true;
	return false;
}

/* The implicit ODP MR: addr NULL and length SIZE_MAX, the whole address
 * space at iova == address. */
static bool implicit_args(const void *addr, size_t length)
{
	return !addr && length == SIZE_MAX;
}

bool srd_mr_implicit(const struct ibv_mr *mr)
{
	return implicit_args(mr->addr, mr->length);
}

void srd_umr_init(struct srd_umr *mr, struct ibv_pd *pd, void *addr,
		  size_t length, int access, uint32_t handle, uint32_t lkey,
		  uint32_t rkey)
{
	mr->access = access;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = handle;
	mr->mr.lkey = lkey;
	mr->mr.rkey = rkey;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t iova, unsigned int access)
{
	union {
		struct srd_reg_mr_req req;
		uint8_t b[sizeof(struct srd_reg_mr_req) +
			  SRD_MR_MAX_PIECES * sizeof(struct srd_mr_piece)];
	} u;
	struct srd_reg_mr_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_REG_MR,
		.req = &u,
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct srd_mem_desc *d;
	struct srd_context *ctx;
	struct srd_umr *mr;
	int ret;

	if (!pd || !length) {
		errno = EINVAL;
		return NULL;
	}
	/* Optional access bits are hints a device may ignore. */
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	ret = check_access(access);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	/* As mlx5: an implicit MR is an ODP one at iova 0. */
	if (implicit_args(addr, length) &&
	    (!(access & IBV_ACCESS_ON_DEMAND) || iova)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = to_ctx(pd->context);
	mr = calloc(1, sizeof(*mr));
	d = malloc(sizeof(*d));
	if (!mr || !d) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = acquire(addr, length, access, d, &mr->mem);
	if (ret)
		goto err_free;
	memset(&u.req, 0, sizeof(u.req));
	a.req_len = fill_reg(&u.req, pd->handle, access, addr, length, iova, d);
	a.fds = d->fds;
	a.nfds = d->nfds;
	/* Before the keys exist: memory on demand is written only by our
	 * own thread (place.c), from its first access on. */
	if (in_place(access, d))
		srd_place_want(ctx);
	ret = srd_ctx_cmd(ctx, &a);
	if (ret)
		goto err_release;
	free(d);
	srd_umr_init(mr, pd, addr, length, (int)access, rep.handle, rep.lkey,
		     rep.rkey);
	return &mr->mr;

err_release:
	srd_mem_release(&mr->mem);
err_free:
	free(d);
	free(mr);
	errno = -ret;
	return NULL;
}

#undef ibv_reg_mr
LIB_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				     size_t length, int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
LIB_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					  size_t length, uint64_t iova,
					  int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

LIB_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					   size_t length, uint64_t iova,
					   unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

LIB_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					    size_t length, uint64_t iova,
					    int fd, int access)
{
	/* No device memory to import from. */
	errno = EOPNOTSUPP;
	return NULL;
}

LIB_EXPORT int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd,
			    void *addr, size_t length, int access)
{
	union {
		struct srd_rereg_mr_req req;
		uint8_t b[sizeof(struct srd_rereg_mr_req) +
			  SRD_MR_MAX_PIECES * sizeof(struct srd_mr_piece)];
	} u;
	struct srd_reg_mr_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_REREG_MR,
		.req = &u,
		.req_len = sizeof(u.req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct srd_umr *mr = to_mr(ibmr);
	struct srd_mem_ref nref = { 0 };
	struct srd_mem_desc *d = NULL;
	struct ibv_pd *npd = ibmr->pd;
	unsigned int nacc = (unsigned int)mr->access;
	int ret;

	if (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		      IBV_REREG_MR_CHANGE_ACCESS))
		goto err_input;
	/* No flag at all is the kernel's to refuse (EINVAL). */
	if (!flags) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_CMD;
	}
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length))
		goto err_input;
	if (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))
		goto err_input;
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd)
			goto err_input;
		npd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		nacc = (unsigned int)access & ~IBV_ACCESS_OPTIONAL_RANGE;
		/* Access rules are the device's to enforce: a refusal is a
		 * failed command, as with the kernel. */
		ret = check_access(nacc);
		if (ret) {
			errno = -ret;
			return IBV_REREG_MR_ERR_CMD;
		}
	}
	/* Paging on demand or not is another translation of the same
	 * range (mlx5 makes a new MR behind the same handle). */
	if (((nacc ^ (unsigned int)mr->access) & IBV_ACCESS_ON_DEMAND) &&
	    !(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		if (srd_mr_implicit(ibmr)) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_CMD;
		}
		flags |= IBV_REREG_MR_CHANGE_TRANSLATION;
		addr = ibmr->addr;
		length = ibmr->length;
	}

	memset(&u.req, 0, sizeof(u.req));
	u.req.handle = ibmr->handle;
	u.req.flags = (uint32_t)flags;
	u.req.reg.pd_handle = npd->handle;
	u.req.reg.access = nacc;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		d = malloc(sizeof(*d));
		if (!d) {
			errno = ENOMEM;
			return IBV_REREG_MR_ERR_CMD;
		}
		ret = acquire(addr, length, nacc, d, &nref);
		if (ret) {
			free(d);
			errno = -ret;
			return IBV_REREG_MR_ERR_CMD;
		}
		a.req_len = offsetof(struct srd_rereg_mr_req, reg) +
			    fill_reg(&u.req.reg, npd->handle, nacc, addr,
				     length, (uintptr_t)addr, d);
		a.fds = d->fds;
		a.nfds = d->nfds;
	}
	if (d && in_place(nacc, d))
		srd_place_want(to_ctx(ibmr->context));
	ret = srd_ctx_cmd(to_ctx(ibmr->context), &a);
	free(d);
	if (ret) {
		srd_mem_release(&nref);
		errno = -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	srd_place_quiesce(to_ctx(ibmr->context));
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		srd_mem_release(&mr->mem);
		mr->mem = nref;
		ibmr->addr = addr;
		ibmr->length = length;
	}
	ibmr->pd = npd;
	ibmr->lkey = rep.lkey;
	ibmr->rkey = rep.rkey;
	mr->access = (int)nacc;
	return 0;

err_input:
	errno = EINVAL;
	return IBV_REREG_MR_ERR_INPUT;
}

LIB_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct srd_umr *mr = to_mr(ibmr);
	int ret;

	ret = srd_destroy_handle(ibmr->context, SRD_CMD_DEREG_MR, ibmr->handle);
	if (ret)
		return srd_ret_errno(ret);
	srd_place_quiesce(to_ctx(ibmr->context));
	/* The daemon has unmapped it: the pages may go back to private. */
	srd_mem_release(&mr->mem);
	free(mr);
	return 0;
}
