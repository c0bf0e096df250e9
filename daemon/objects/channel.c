/* SPDX-License-Identifier: MIT */
/*
 * Completion channels: a pipe.  The client polls the read end; the daemon
 * writes a CQ's user_handle to it when an armed CQ gets its event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/core/core.h"

struct srd_comp_channel *channel_get(struct srd_client *c, uint32_t handle)
{
	struct srd_comp_channel *ch = table_get(&c->d->channels, handle);

	return ch && ch->owner == c ? ch : NULL;
}

int cmd_create_comp_channel(struct srd_client *c, struct srd_req *rq,
			    struct srd_rep *rp)
{
	struct srd_comp_channel *ch;
	int64_t h;
	int p[2], err;

	/* The write end stays with the daemon. */
	err = limits_charge(c, SRD_RES_FDS, 1);
	if (err)
		return err;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		limits_uncharge(c, SRD_RES_FDS, 1);
		return -ENOMEM;
	}
	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		limits_uncharge(c, SRD_RES_FDS, 1);
		free(ch);
		return err;
	}
	/* Events are dropped rather than block the device when the pipe is
	 * full: one pending event per armed CQ is all a reader needs. */
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	h = res_alloc(c, SRD_RES_CHANNEL, ch);
	if (h < 0) {
		close(p[0]);
		close(p[1]);
		limits_uncharge(c, SRD_RES_FDS, 1);
		free(ch);
		return h;
	}
	ch->handle = h;
	ch->owner = c;
	ch->wfd = p[1];
	REP(rp, struct srd_handle_rep)->handle = ch->handle;
	rep_add_fd(rp, p[0], false);
	return 0;
}

void channel_destroy(struct srd_comp_channel *ch)
{
	close(ch->wfd);
	limits_uncharge(ch->owner, SRD_RES_FDS, 1);
	res_free(ch->owner->d, ch->owner, SRD_RES_CHANNEL, ch->handle);
	free(ch);
}

int cmd_destroy_comp_channel(struct srd_client *c, struct srd_req *rq,
			     struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_comp_channel *ch = channel_get(c, req->handle);

	if (!ch)
		return -EINVAL;
	if (ch->refcnt)
		return -EBUSY;
	channel_destroy(ch);
	return 0;
}
