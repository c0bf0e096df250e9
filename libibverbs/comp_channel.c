/* SPDX-License-Identifier: MIT */
/* Completion channels and completion events. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

LIB_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct srd_handle_rep rep;
	int fd = -1;
	struct srd_comp_channel *ch;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ret = srd_ctx_cmd_fd(to_ctx(context), SRD_CMD_CREATE_COMP_CHANNEL, NULL,
			     0, &rep, sizeof(rep), &fd);
	if (ret) {
		free(ch);
		errno = -ret;
		return NULL;
	}
	ch->ch.context = context;
	ch->ch.fd = fd;
	ch->ch.refcnt = 0;
	ch->handle = rep.handle;
	return &ch->ch;
}

LIB_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibv_context *context = channel->context;
	int ret;

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		errno = EBUSY;
		return EBUSY;
	}
	ret = srd_destroy_handle(context, SRD_CMD_DESTROY_COMP_CHANNEL,
				 to_chan(channel)->handle);
	pthread_mutex_unlock(&context->mutex);
	if (ret)
		return srd_ret_errno(ret);
	close(channel->fd);
	free(to_chan(channel));
	return 0;
}

LIB_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				struct ibv_cq **cq, void **cq_context)
{
	struct srd_context *ctx = to_ctx(channel->context);

	for (;;) {
		struct srd_comp_event ev;
		struct srd_hnode *n;
		ssize_t got;

		got = read(channel->fd, &ev, sizeof(ev));
		if (got < 0)
			return -1;
		if (got != sizeof(ev)) {
			errno = EIO;
			return -1;
		}
		pthread_mutex_lock(&ctx->obj_tab.lock);
		n = srd_htab_find(&ctx->obj_tab, ev.cq_user_handle);
		if (n) {
			struct srd_evobj *eo =
				container_of(n, struct srd_evobj, hnode);

			if (eo->type == SRD_OBJ_CQ) {
				struct srd_ucq *c =
					container_of(eo, struct srd_ucq, ev);

				eo->comp_reported++;
				pthread_mutex_unlock(&ctx->obj_tab.lock);
				*cq = &c->cq;
				*cq_context = c->cq.cq_context;
				return 0;
			}
		}
		/* The CQ is gone: an event it left behind. */
		pthread_mutex_unlock(&ctx->obj_tab.lock);
	}
}

LIB_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
