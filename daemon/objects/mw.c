/* SPDX-License-Identifier: MIT */
/*
 * Memory windows: allocation, binding through a QP's send queue, local
 * and remote invalidation, and remote access through a window's rkey.
 * The rules are IBTA's as rxe and ConnectX apply them: type 1 windows are
 * bound with ibv_bind_mw and never invalidated, type 2 windows are bound
 * by a WQE of a QP of their PD, only while unbound, and invalidated by a
 * LOCAL_INV or by a SEND with Invalidate arriving on the QP they were
 * bound through.  An MR with windows bound cannot be deregistered.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "daemon/core/core.h"

/* Rights a window may grant; the rest of a bind's access is ignored. */
#define MW_ACCESS_KNOWN                                     \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

static_assert(SRD_MAX_MW <= 1u << 16, "window handles are 16 bits");

static bool key_is_mw(uint32_t key)
{
	return key >> 24 >= SRD_MW_TAG_MIN;
}

static struct srd_mw *mw_lookup_key(struct srd_daemon *d, uint32_t key)
{
	struct srd_mw *mw = table_get(&d->mws, ((key >> 8) & 0xffff) + 1);

	return mw && mw->rkey == key ? mw : NULL;
}

/* A new window's rkey: nothing in it follows from another window's, and
 * a reused handle never gives back an old key (its key byte changed when
 * it was freed). */
static uint32_t mw_new_rkey(struct srd_daemon *d, uint32_t handle)
{
	uint32_t tag =
		SRD_MW_TAG_MIN + arc4random_uniform(256 - SRD_MW_TAG_MIN);

	return tag << 24 | (handle - 1) << 8 | table_gen(&d->mws, handle);
}

static void mw_unbind(struct srd_mw *mw)
{
	if (mw->bound && mw->mr)
		mw->mr->num_mw--;
	mw->bound = false;
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
}

int cmd_alloc_mw(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_alloc_mw_req *req = rq->data;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	struct srd_alloc_mw_rep *rep;
	struct srd_mw *mw;
	int64_t idx;

	if (!pd || (req->type != IBV_MW_TYPE_1 && req->type != IBV_MW_TYPE_2))
		return -EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	idx = res_alloc(c, SRD_RES_MW, mw);
	if (idx < 0) {
		free(mw);
		return idx;
	}
	mw->handle = idx;
	mw->rkey = mw_new_rkey(c->d, (uint32_t)idx);
	mw->owner = c;
	mw->pd = pd;
	mw->type = req->type;
	pd->refcnt++;
	rep = REP(rp, struct srd_alloc_mw_rep);
	rep->handle = mw->handle;
	rep->rkey = mw->rkey;
	return 0;
}

void mw_destroy(struct srd_mw *mw)
{
	mw_unbind(mw);
	mw->pd->refcnt--;
	res_free(mw->owner->d, mw->owner, SRD_RES_MW, mw->handle);
	free(mw);
}

int cmd_dealloc_mw(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_mw *mw = table_get(&c->d->mws, req->handle);

	if (!mw || mw->owner != c)
		return -EINVAL;
	/* A bound window may go: its rkey stops working (rxe, mlx5). */
	mw_destroy(mw);
	return 0;
}

/* Whether a bind of mw to [addr, addr + len) of mr with access may go. */
static int bind_check(const struct srd_qp *qp, const struct srd_mw *mw,
		      const struct srd_mr *mr, uint64_t addr, uint64_t len,
		      int access)
{
	if (mw->type == IBV_MW_TYPE_1) {
		/* o10-36.2.2: type 1 windows are never zero based. */
		if (access & IBV_ACCESS_ZERO_BASED)
			return -EINVAL;
	} else {
		/* o10-37.2.30, C10-72, o10-37.2.40 */
		if (mw->bound || qp->pd != mw->pd || !mr || !len)
			return -EINVAL;
	}
	if (!mr)
		return 0;
	if (mr->pd != mw->pd)
		return -EPERM;
	/* C10-73, C10-74 */
	if (!(mr->access & IBV_ACCESS_MW_BIND))
		return -EACCES;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return -EACCES;
	/* C10-75: inside the MR, zero based or not. */
	if (addr < mr->iova || addr - mr->iova > mr->length ||
	    len > mr->length - (addr - mr->iova))
		return -ERANGE;
	return 0;
}

int mw_bind(struct srd_daemon *d, const struct srd_qp *qp,
	    const struct srd_send_wqe *w)
{
	struct srd_mw *mw =
		key_is_mw(w->imm_data) ? mw_lookup_key(d, w->imm_data) : NULL;
	int access = (int)(w->bind.access & MW_ACCESS_KNOWN);
	uint64_t len = w->bind.length;
	struct srd_mr *mr = NULL;
	int err;

	if (!mw || mw->owner != qp->owner)
		return -EINVAL;
	if (len) {
		mr = mr_lookup_key(d, w->bind.mr_lkey);
		if (!mr)
			return -EINVAL;
	}
	err = bind_check(qp, mw, mr, w->remote_addr, len, access);
	/* ibv_bind_mw moved the library's key on posting: a type 1 window
	 * takes the new key byte even when the bind fails, so the two stay
	 * in step.  The index stays. */
	if (err && mw->type == IBV_MW_TYPE_1)
		mw->rkey = (mw->rkey & ~0xffu) | (w->rkey & 0xffu);
	if (err)
		return err;
	mw_unbind(mw);
	mw->rkey = (mw->rkey & ~0xffu) | (w->rkey & 0xffu);
	if (!mr)
		return 0; /* a type 1 window bound to nothing */
	mw->bound = true;
	mw->mr = mr;
	mr->num_mw++;
	mw->addr = w->remote_addr;
	mw->length = len;
	mw->access = access;
	if (mw->type == IBV_MW_TYPE_2)
		mw->qpn = qp->qpn;
	return 0;
}

int key_invalidate(struct srd_daemon *d, const struct srd_qp *qp, uint32_t rkey,
		   bool remote)
{
	struct srd_mw *mw;

	/* MRs of user space are never fast-registered: nothing to
	 * invalidate there (rxe refuses them too). */
	if (!key_is_mw(rkey))
		return -EINVAL;
	mw = mw_lookup_key(d, rkey);
	if (!mw || !mw->bound || mw->pd != qp->pd)
		return -EINVAL;
	/* o10-37.2.26: type 1 windows cannot be invalidated. */
	if (mw->type != IBV_MW_TYPE_2)
		return -EINVAL;
	/* Remotely, only through the QP it was bound through. */
	if (remote && mw->qpn != qp->qpn)
		return -EACCES;
	mw_unbind(mw);
	return 0;
}

static struct srd_mr *rkey_resolve(struct srd_daemon *d, uint32_t key,
				   const struct srd_pd *pd, uint32_t qpn,
				   uint64_t *va, uint64_t len, int access,
				   bool live)
{
	int (*check)(const struct srd_mr *, const struct srd_pd *, uint64_t,
		     uint64_t, int) = live ? mr_check : mr_check_copy;
	struct srd_mw *mw;
	uint64_t off;

	if (!key_is_mw(key)) {
		struct srd_mr *mr = mr_lookup_key(d, key);

		if (!mr || check(mr, pd, *va, len, access))
			return NULL;
		return mr;
	}
	mw = mw_lookup_key(d, key);
	if (!mw || !mw->bound || (pd && mw->pd != pd) ||
	    (mw->type == IBV_MW_TYPE_2 && mw->qpn != qpn) ||
	    (mw->access & access) != access || mw->mr->pd != mw->pd)
		return NULL;
	if (mw->access & IBV_ACCESS_ZERO_BASED) {
		off = *va;
	} else {
		if (*va < mw->addr)
			return NULL;
		off = *va - mw->addr;
	}
	if (off > mw->length || len > mw->length - off)
		return NULL;
	/* The window's own rights said yes; the MR gives the bounds. */
	if (check(mw->mr, NULL, mw->addr + off, len, 0))
		return NULL;
	/* Pages behind an ODP MR must also allow what the window grants. */
	if (mw->mr->odp &&
	    (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    mr_odp_check(mw->mr, mw->addr + off, len, true))
		return NULL;
	*va = mw->addr + off;
	return mw->mr;
}

struct srd_mr *rkey_lookup(struct srd_daemon *d, uint32_t key,
			   const struct srd_pd *pd, uint32_t qpn, uint64_t *va,
			   uint64_t len, int access)
{
	return rkey_resolve(d, key, pd, qpn, va, len, access, true);
}

struct srd_mr *rkey_lookup_copy(struct srd_daemon *d, uint32_t key,
				const struct srd_pd *pd, uint32_t qpn,
				uint64_t *va, uint64_t len, int access)
{
	return rkey_resolve(d, key, pd, qpn, va, len, access, false);
}
