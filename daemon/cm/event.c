/* SPDX-License-Identifier: MIT */
/*
 * Event channels.  Every command connection that opened one holds a queue
 * of events and a stream socket pair whose library end is readable while
 * events wait: one byte stands for "there are events", sent when the
 * queue stops being empty and again after each fetch that leaves some
 * behind.  (A byte per event would not do: a socket's buffer holds only a
 * few hundred small sends.)  The daemon keeps the library's end too, the
 * same open file, to take the byte back when the last waiting event is
 * dropped; if the library has read it already, its fetch finds nothing
 * (-EAGAIN) and it waits for the next byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/cm/cm.h"

struct cm_event_rec {
	struct list_node node;
	struct cma_id *id;
	struct srd_cm_event_rep rec;
};

struct cm_chan *cm_chan_of(struct srd_cm *cm, const struct srd_client *c)
{
	list_for_each (&cm->chans, it) {
		struct cm_chan *ch = list_entry(it, struct cm_chan, node);

		if (ch->c == c)
			return ch;
	}
	return NULL;
}

int cm_chan_open(struct srd_cm *cm, struct srd_client *c, int *fd)
{
	struct cm_chan *ch;
	int sv[2], err;

	if (cm_chan_of(cm, c))
		return -EINVAL;
	/* Both ends stay with the daemon (the library gets a copy). */
	err = limits_charge(c, SRD_RES_FDS, 2);
	if (err)
		return err;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		limits_uncharge(c, SRD_RES_FDS, 2);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		limits_uncharge(c, SRD_RES_FDS, 2);
		free(ch);
		return err;
	}
	/* The library's end blocks until the application says otherwise;
	 * the daemon never blocks on either (MSG_DONTWAIT). */
	ch->rfd = sv[0];
	ch->wfd = sv[1];
	shutdown(ch->rfd, SHUT_WR);
	ch->cm = cm;
	ch->c = c;
	list_head_init(&ch->events);
	list_add_tail(&cm->chans, &ch->node);
	*fd = ch->rfd;
	return 0;
}

/* Say "there are events", unless it is said already. */
static void chan_arm(struct cm_chan *ch)
{
	uint8_t one = 1;

	if (ch->armed || list_empty(&ch->events))
		return;
	if (send(ch->wfd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		ch->armed = true;
	else
		srd_log(SRD_LOG_WARN, "cm: event wakeup for pid %d lost",
			(int)ch->c->pid);
}

/* The queue went empty without a fetch: take the byte back. */
static void chan_disarm(struct cm_chan *ch)
{
	uint8_t b;

	if (!ch->armed || !list_empty(&ch->events))
		return;
	/* Read already: the fetch it leads to clears armed. */
	if (recv(ch->rfd, &b, 1, MSG_DONTWAIT) == 1)
		ch->armed = false;
}

void cma_event_queue(struct cma_id *id, const struct srd_cm_event_rep *rec)
{
	struct cm_event_rec *e;

	if (!id->chan)
		return;
	e = malloc(sizeof(*e));
	if (!e) {
		srd_log(SRD_LOG_ERR, "cm: out of memory: event %u dropped",
			rec->event);
		return;
	}
	e->id = id;
	e->rec = *rec;
	list_add_tail(&id->chan->events, &e->node);
	chan_arm(id->chan);
}

int cm_chan_take(struct cm_chan *ch, struct srd_cm_event_rep *rec,
		 struct cma_id **id)
{
	struct cm_event_rec *e;

	/* The library read the byte before asking. */
	ch->armed = false;
	if (list_empty(&ch->events))
		return -EAGAIN;
	e = list_entry(ch->events.n.next, struct cm_event_rec, node);
	list_del(&e->node);
	*rec = e->rec;
	*id = e->id;
	free(e);
	chan_arm(ch);
	return 0;
}

void cma_events_drop(struct cma_id *id)
{
	if (!id->chan)
		return;
	list_for_each (&id->chan->events, it) {
		struct cm_event_rec *e =
			list_entry(it, struct cm_event_rec, node);

		if (e->id != id)
			continue;
		list_del(it);
		free(e);
	}
	chan_disarm(id->chan);
}

void cma_events_move(struct cma_id *id, struct cm_chan *to)
{
	struct cm_chan *from = id->chan;

	if (from == to)
		return;
	id->chan = to;
	if (!from)
		return;
	list_for_each (&from->events, it) {
		struct cm_event_rec *e =
			list_entry(it, struct cm_event_rec, node);

		if (e->id != id)
			continue;
		list_del(it);
		list_add_tail(&to->events, &e->node);
	}
	chan_disarm(from);
	chan_arm(to);
}

void cm_chan_destroy(struct cm_chan *ch)
{
	struct srd_cm *cm = ch->cm;

	/* Its ids go with it, listeners (and what waits on them) first. */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t h = cm->ids.first; h < table_end(&cm->ids); h++) {
			struct cma_id *id = table_get(&cm->ids, h);

			if (id && id->chan == ch &&
			    (pass || id->state == CMA_LISTEN))
				cma_destroy_id(id);
		}
	list_for_each (&ch->events, it) {
		list_del(it);
		free(list_entry(it, struct cm_event_rec, node));
	}
	close(ch->rfd);
	close(ch->wfd);
	list_del(&ch->node);
	free(ch);
}
