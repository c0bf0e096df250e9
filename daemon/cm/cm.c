/* SPDX-License-Identifier: MIT */
/*
 * The CM's place in the daemon: its pass in the main loop (QP1
 * completions, timers, QP1 on new devices), its earliest timer, and
 * cleaning up after a client, a device or the daemon goes, and the list
 * of ids the administration commands show.  The CM state
 * is made by the first CM command, so a daemon nobody asks for
 * connections pays nothing for it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto_admin.h"
#include "daemon/admin/admin.h"
#include "daemon/cm/cm.h"

#define CM_DEV_SCAN_NS 100000000ull /* look for new devices every 100 ms */

static void cm_device_removed(struct srd_daemon *d, struct srd_device *dev)
{
	struct cm_port *p = cm_port_find(d->cm, dev);

	if (!p)
		return;
	cma_device_removed(d->cm, p);
	cm_port_destroy(p);
}

static void cm_dev_event(struct srd_daemon *d, struct srd_device *dev,
			 enum srd_dev_event ev, void *arg)
{
	struct srd_cm *cm = arg;

	if (d != cm->d)
		return;
	if (ev == SRD_DEV_ADDED)
		cm_port_get(cm, dev);
	else if (ev == SRD_DEV_REMOVED)
		cm_device_removed(d, dev);
}

int cm_init(struct srd_daemon *d)
{
	struct srd_cm *cm;

	if (d->cm)
		return 0;
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return -ENOMEM;
	cm->d = d;
	list_head_init(&cm->ports);
	list_head_init(&cm->chans);
	list_head_init(&cm->conns);
	list_head_init(&cm->bound);
	list_head_init(&cm->listeners);
	table_init(&cm->ids, 1, 1u << 20);
	table_init(&cm->conn_tab, 1, (1u << 24) - 2);
	cm_seed(cm);
	cm->deadline = UINT64_MAX;
	cm->notifier.fn = cm_dev_event;
	cm->notifier.arg = cm;
	device_notifier_add(&cm->notifier);
	d->cm = cm;
	return 0;
}

bool cm_progress(struct srd_daemon *d, uint64_t now)
{
	struct srd_cm *cm = d->cm;
	bool work = false;

	if (!cm)
		return false;
	work |= cm_ports_poll(cm);
	work |= cm_timers(cm, now);
	if (now >= cm->next_dev_scan) {
		/* A device added at run time gets its QP1 here. */
		cm->next_dev_scan = now + CM_DEV_SCAN_NS;
		list_for_each (&d->devices, it) {
			struct srd_device *dev =
				list_entry(it, struct srd_device, node);

			if (!cm_port_find(cm, dev))
				cm_port_get(cm, dev);
		}
	}
	return work;
}

uint64_t cm_next_deadline(struct srd_daemon *d)
{
	return d->cm ? d->cm->deadline : UINT64_MAX;
}

void cm_client_gone(struct srd_client *c)
{
	struct cm_chan *ch;

	if (!c->d->cm)
		return;
	ch = cm_chan_of(c->d->cm, c);
	if (!ch)
		return;
	cm_chan_destroy(ch);
	limits_uncharge(c, SRD_RES_FDS, 2);
}

static uint32_t list_count(const struct list_head *h)
{
	uint32_t n = 0;

	list_for_each (h, it)
		n++;
	return n;
}

void cm_stats(struct srd_daemon *d, struct srd_cm_stats_rep *r)
{
	struct srd_cm *cm = d->cm;

	memset(r, 0, sizeof(*r));
	if (!cm)
		return;
	r->chans = list_count(&cm->chans);
	r->ids = cm->ids.count;
	r->conns = list_count(&cm->conns);
	r->listeners = list_count(&cm->listeners);
	r->ports = list_count(&cm->ports);
	r->mad_rx = cm->cnt.mad_rx;
	r->mad_tx = cm->cnt.mad_tx;
	r->mad_bad = cm->cnt.mad_bad;
	r->mad_unmatched = cm->cnt.mad_unmatched;
	r->mad_dup = cm->cnt.mad_dup;
	r->mad_tx_drop = cm->cnt.mad_tx_drop;
	r->retransmits = cm->cnt.retransmits;
	r->timeouts = cm->cnt.timeouts;
	r->conns_made = cm->cnt.conns;
	r->stale = (uint32_t)cm->cnt.stale;
}

void cm_fini(struct srd_daemon *d)
{
	struct srd_cm *cm = d->cm;

	if (!cm)
		return;
	device_notifier_del(&cm->notifier);
	list_for_each (&cm->chans, it)
		cm_chan_destroy(list_entry(it, struct cm_chan, node));
	list_for_each (&cm->conns, it)
		cm_conn_free(list_entry(it, struct cm_conn, node));
	cm_ports_destroy(cm);
	table_fini(&cm->ids);
	table_fini(&cm->conn_tab);
	free(cm);
	d->cm = NULL;
}

/* --- the ids for `softrdma resource show cm_id` ------------------------- */

static uint32_t admin_state(const struct cma_id *id)
{
	switch (id->state) {
	case CMA_ADDR_BOUND:
		return SRD_CM_STATE_ADDR_BOUND;
	case CMA_ADDR_RESOLVED:
		return SRD_CM_STATE_ADDR_RESOLVED;
	case CMA_ROUTE_RESOLVED:
		return SRD_CM_STATE_ROUTE_RESOLVED;
	case CMA_CONNECT:
		return SRD_CM_STATE_CONNECT;
	case CMA_DISCONNECT:
		return SRD_CM_STATE_DISCONNECT;
	case CMA_LISTEN:
		return SRD_CM_STATE_LISTEN;
	case CMA_DEVICE_REMOVAL:
		return SRD_CM_STATE_DEVICE_REMOVAL;
	default:
		return SRD_CM_STATE_IDLE;
	}
}

static void admin_addr(const struct sockaddr_storage *ss,
		       struct srd_admin_sockaddr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;

		memcpy(a->addr, &s->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;

		memcpy(a->addr, &s->sin6_addr, 16);
	} else {
		return;
	}
	a->family = ss->ss_family;
	a->port = cma_addr_port(ss);
}

static void fill(const struct cma_id *id, struct srd_admin_cm_id_info *e)
{
	memset(e, 0, sizeof(*e));
	e->id = id->handle;
	e->dev_index = id->port ? cm_port_dev(id->port)->index : SRD_ADMIN_END;
	e->pid = id->chan && id->chan->c ? (uint32_t)id->chan->c->pid : 0;
	e->port = id->port ? 1 : 0;
	e->qpn = id->conn ? id->conn->local_qpn : 0;
	e->qp_type = id->qp_type;
	e->state = admin_state(id);
	e->ps = id->ps;
	admin_addr(&id->src, &e->src);
	admin_addr(&id->dst, &e->dst);
}

uint32_t cm_admin_list_ids(const struct srd_client *who, uint32_t start,
			   uint32_t dev_index, struct srd_admin_cm_id_info *out,
			   uint32_t max, uint32_t *next)
{
	struct srd_cm *cm = who->d->cm;
	uint32_t n = 0;

	*next = SRD_ADMIN_END;
	if (!cm)
		return 0;
	for (uint32_t h = start > cm->ids.first ? start : cm->ids.first;
	     h < table_end(&cm->ids); h++) {
		const struct cma_id *id = table_get(&cm->ids, h);

		if (!id)
			continue;
		const struct srd_client *owner = id->chan ? id->chan->c : NULL;
		pid_t pid = owner ? client_pid_seen_by(owner, who) : 0;

		if (dev_index != SRD_ADMIN_ALL &&
		    (!id->port || cm_port_dev(id->port)->index != dev_index))
			continue;
		/* As the objects' listings: only what who's pid namespace
		 * sees, with the pid it sees. */
		if (owner && !pid)
			continue;
		if (n == max) {
			*next = h;
			break;
		}
		fill(id, &out[n]);
		out[n++].pid = (uint32_t)pid;
	}
	return n;
}
