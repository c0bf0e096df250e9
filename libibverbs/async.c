/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events.  The daemon names objects by the id we gave it at
 * creation; an id no longer in the table belongs to a destroyed object
 * and its event is dropped.  Destroying an object waits until every event
 * handed out for it has been acknowledged.
 */
#include <errno.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

void srd_evobj_add(struct srd_context *ctx, struct srd_evobj *ev,
		   enum srd_obj_type type)
{
	ev->type = type;
	ev->async_reported = 0;
	ev->comp_reported = 0;
	pthread_mutex_lock(&ctx->obj_tab.lock);
	srd_htab_add(&ctx->obj_tab, &ev->hnode);
	pthread_mutex_unlock(&ctx->obj_tab.lock);
}

void srd_evobj_del(struct srd_context *ctx, struct srd_evobj *ev)
{
	pthread_mutex_lock(&ctx->obj_tab.lock);
	srd_htab_del(&ctx->obj_tab, &ev->hnode);
	pthread_mutex_unlock(&ctx->obj_tab.lock);
}

static enum srd_obj_type event_obj_type(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return SRD_OBJ_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return SRD_OBJ_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return SRD_OBJ_SRQ;
	default:
		return 0;
	}
}

/* Find the live object an event names and count the event against it. */
static bool take_object(struct srd_context *ctx, uint64_t id,
			enum srd_obj_type type, struct ibv_async_event *event)
{
	struct srd_hnode *n;
	bool found = false;

	pthread_mutex_lock(&ctx->obj_tab.lock);
	n = srd_htab_find(&ctx->obj_tab, id);
	if (n) {
		struct srd_evobj *eo = container_of(n, struct srd_evobj, hnode);

		if (eo->type == type) {
			found = true;
			eo->async_reported++;
			if (type == SRD_OBJ_CQ)
				event->element.cq =
					&container_of(eo, struct srd_ucq, ev)
						 ->cq;
			else if (type == SRD_OBJ_QP)
				event->element.qp =
					&container_of(eo, struct srd_uqp, ev)
						 ->qp;
			else
				event->element.srq =
					&container_of(eo, struct srd_usrq, ev)
						 ->srq;
		}
	}
	pthread_mutex_unlock(&ctx->obj_tab.lock);
	return found;
}

LIB_EXPORT int ibv_get_async_event(struct ibv_context *context,
				   struct ibv_async_event *event)
{
	struct srd_context *ctx = to_ctx(context);

	for (;;) {
		struct srd_async_event rec;
		enum srd_obj_type type;
		ssize_t got;

		got = read(context->async_fd, &rec, sizeof(rec));
		if (got < 0)
			return -1;
		if (got == 0) {
			/* The device is gone (its daemon exited).  As on a
			 * kernel device's removal: one DEVICE_FATAL, then
			 * EIO for every later wait. */
			if (atomic_exchange(&ctx->device_gone, true)) {
				errno = EIO;
				return -1;
			}
			event->event_type = IBV_EVENT_DEVICE_FATAL;
			event->element.port_num = 0;
			return 0;
		}
		if (got != sizeof(rec)) {
			errno = EIO;
			return -1;
		}
		event->event_type = (enum ibv_event_type)rec.event_type;
		type = event_obj_type(event->event_type);
		if (type) {
			if (take_object(ctx, rec.user_handle, type, event))
				return 0;
			continue;
		}
		switch (event->event_type) {
		case IBV_EVENT_DEVICE_FATAL:
			event->element.port_num = 0;
			return 0;
		case IBV_EVENT_WQ_FATAL:
			continue; /* we hand out no WQs */
		default:
			event->element.port_num = (int)rec.port_num;
			return 0;
		}
	}
}

LIB_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event_obj_type(event->event_type)) {
	case SRD_OBJ_CQ: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case SRD_OBJ_QP: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	case SRD_OBJ_SRQ: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		break;
	}
	default:
		break;
	}
}
