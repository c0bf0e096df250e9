/* SPDX-License-Identifier: MIT */
/*
 * CQ moderation (ibv_modify_cq, IBV_CQ_ATTR_MODERATE): an armed CQ holds
 * its completion event back until cq_count CQEs have come, or cq_period
 * µs have passed since the first of them, as a NIC's event moderation
 * does.  CQEs are written at once either way; only the event waits.
 * count 0 and period 0 (the default) raise the event on the first CQE.
 */
#include <errno.h>
#include <stdint.h>

#include "daemon/core/core.h"

static bool mod_active(const struct srd_cq *cq)
{
	return cq->mod.count > 1 || cq->mod.period;
}

static void mod_untime(struct srd_cq *cq)
{
	if (!cq->mod.timed)
		return;
	list_del(&cq->mod.node);
	cq->mod.timed = false;
}

void cq_mod_reset(struct srd_cq *cq)
{
	cq->mod.pending = 0;
	mod_untime(cq);
}

bool cq_mod_hold(struct srd_cq *cq)
{
	if (!mod_active(cq))
		return false;
	cq->mod.pending++;
	if (cq->mod.count && cq->mod.pending >= cq->mod.count)
		return false;
	if (cq->mod.period && !cq->mod.timed) {
		cq->mod.deadline =
			srd_now_ns() + (uint64_t)cq->mod.period * 1000;
		list_add_tail(&cq->owner->d->cq_timers, &cq->mod.node);
		cq->mod.timed = true;
	}
	return true;
}

bool cq_mod_progress(struct srd_daemon *d, uint64_t now_ns)
{
	bool fired = false;

	if (list_empty(&d->cq_timers))
		return false;
	/* Raising an event unlinks only its own CQ, which the iteration
	 * allows. */
	list_for_each (&d->cq_timers, it) {
		struct srd_cq *cq = list_entry(it, struct srd_cq, mod.node);

		if (cq->mod.deadline <= now_ns) {
			cq_raise_event(cq);
			fired = true;
		}
	}
	return fired;
}

uint64_t cq_mod_next_deadline(struct srd_daemon *d)
{
	uint64_t until = UINT64_MAX;

	list_for_each (&d->cq_timers, it) {
		struct srd_cq *cq = list_entry(it, struct srd_cq, mod.node);

		if (cq->mod.deadline < until)
			until = cq->mod.deadline;
	}
	return until;
}

/* The kernel's answers: no attribute or one it does not know is EINVAL
 * (libibverbs) / EOPNOTSUPP (uverbs); a period beyond the device's limit
 * is EINVAL, as mlx5 says. */
int cmd_modify_cq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_modify_cq_req *req = rq->data;
	struct srd_cq *cq = cq_get(c, req->handle);

	if (!cq || !req->attr_mask || req->rsvd)
		return -EINVAL;
	if (req->attr_mask & ~(uint32_t)IBV_CQ_ATTR_MODERATE)
		return -EOPNOTSUPP;
	if (req->cq_period > c->dev->caps_ex.max_cq_period ||
	    req->cq_count > c->dev->caps_ex.max_cq_count)
		return -EINVAL;
	cq->mod.count = req->cq_count;
	cq->mod.period = req->cq_period;
	/* What was held under the old setting is judged by the new one at
	 * the next CQE; a running period keeps its deadline. */
	if (!mod_active(cq) && cq->mod.pending)
		cq_raise_event(cq);
	return 0;
}
