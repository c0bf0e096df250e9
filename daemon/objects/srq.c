/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues: a ring of receive WQEs in a memfd.  The engine
 * takes WQEs from it and raises the limit event; this file creates, arms,
 * queries and destroys them.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/core/core.h"

struct srd_srq *srq_get(struct srd_client *c, uint32_t handle)
{
	struct srd_srq *srq = table_get(&c->d->srqs, handle);

	return srq && srq->owner == c ? srq : NULL;
}

int cmd_create_srq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_create_srq_req *req = rq->data;
	const struct ibv_device_attr *a = &c->dev->attr;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	struct srd_xrcd_handle *xh = NULL;
	struct srd_create_srq_rep *rep;
	struct srd_cq *cq = NULL;
	struct srd_srq *srq;
	uint32_t room, entries, slot;
	void *map;
	int64_t h;
	int fd;

	if (!pd || !req->max_wr || req->max_wr > (uint32_t)a->max_srq_wr ||
	    req->max_sge > (uint32_t)a->max_srq_sge ||
	    req->srq_limit > req->max_wr)
		return -EINVAL;
	if (req->srq_type == IBV_SRQT_XRC) {
		xh = xrcd_get(c, req->xrcd_handle);
		cq = cq_get(c, req->cq_handle);
		if (!xh || !cq)
			return -EINVAL;
	} else if (req->srq_type != IBV_SRQT_BASIC) {
		return -EOPNOTSUPP; /* tag matching */
	}
	entries = srd_pow2_roundup(req->max_wr);
	slot = srd_recv_slot_size(req->max_sge ? req->max_sge : 1);
	room = (slot - sizeof(struct srd_recv_wqe)) / sizeof(struct srd_sge);
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->map_len = SRD_RING_CTL_BYTES + (size_t)entries * slot;
	fd = shm_create("softrdma-srq", srq->map_len, 0, &map);
	if (fd < 0) {
		free(srq);
		return fd;
	}
	h = res_alloc(c, SRD_RES_SRQ, srq);
	if (h < 0) {
		munmap(map, srq->map_len);
		close(fd);
		free(srq);
		return h;
	}
	srq->handle = h;
	srq->owner = c;
	srq->pd = pd;
	srq->xh = xh;
	srq->cq = cq;
	srq->user_handle = req->user_handle;
	srq->entries = entries;
	srq->slot_size = slot;
	srq->max_wr = entries;
	srq->max_sge = room < (uint32_t)a->max_srq_sge
			       ? room
			       : (uint32_t)a->max_srq_sge;
	/* As rxe: a limit given at creation arms the SRQ. */
	srq->limit = req->srq_limit;
	srq->map = map;
	srq->ctl = map;
	srq->ring = (uint8_t *)map + SRD_RING_CTL_BYTES;
	pd->refcnt++;
	if (xh) {
		xh->refcnt++;
		cq->refcnt++;
	}

	rep = REP(rp, struct srd_create_srq_rep);
	rep->handle = srq->handle;
	rep->max_wr = srq->max_wr;
	rep->max_sge = srq->max_sge;
	rep->entries = srq->entries;
	rep->slot_size = srq->slot_size;
	rep->ring_offset = SRD_RING_CTL_BYTES;
	rep->map_len = srq->map_len;
	rep->srq_num = xh ? srq->handle : 0;
	rep_add_fd(rp, fd, false);
	return 0;
}

int cmd_modify_srq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_modify_srq_req *req = rq->data;
	struct srd_srq *srq = srq_get(c, req->handle);

	if (!srq)
		return -EINVAL;
	/* Resizing (IBV_SRQ_MAX_WR) is not offered: the device does not
	 * advertise IBV_DEVICE_SRQ_RESIZE. */
	if (req->attr_mask & ~IBV_SRQ_LIMIT)
		return -EINVAL;
	if (req->attr_mask & IBV_SRQ_LIMIT) {
		if (req->attr.srq_limit > srq->max_wr || srq->in_error)
			return -EINVAL;
		srq->limit = req->attr.srq_limit;
	}
	return 0;
}

int cmd_query_srq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_srq *srq = srq_get(c, req->handle);
	struct ibv_srq_attr *a;

	if (!srq)
		return -EINVAL;
	a = &REP(rp, struct srd_query_srq_rep)->attr;
	a->max_wr = srq->max_wr;
	a->max_sge = srq->max_sge;
	a->srq_limit = srq->limit;
	return 0;
}

void srq_destroy(struct srd_srq *srq)
{
	engine_srq_destroyed(srq);
	srq->pd->refcnt--;
	if (srq->xh) {
		srq->xh->refcnt--;
		srq->cq->refcnt--;
	}
	munmap(srq->map, srq->map_len);
	res_free(srq->owner->d, srq->owner, SRD_RES_SRQ, srq->handle);
	free(srq);
}

int cmd_destroy_srq(struct srd_client *c, struct srd_req *rq,
		    struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_srq *srq = srq_get(c, req->handle);

	if (!srq)
		return -EINVAL;
	if (srq->refcnt)
		return -EBUSY;
	srq_destroy(srq);
	return 0;
}
