/* SPDX-License-Identifier: MIT */
/*
 * Events: wait on the channel's fd (it counts pending events), fetch one
 * from the daemon, and turn it into what rdma-core's librdmacm hands out,
 * doing on the way what it does (a new id for a connection request, the
 * active side's QP moved to RTS on the response, addresses refreshed).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librdmacm/cma.h"

static void copy_conn(struct cma_event *e, const struct srd_cm_event_rep *r)
{
	struct rdma_conn_param *c = &e->event.param.conn;

	c->responder_resources = r->conn.responder_resources;
	c->initiator_depth = r->conn.initiator_depth;
	c->flow_control = r->conn.flow_control;
	c->retry_count = r->conn.retry_count;
	c->rnr_retry_count = r->conn.rnr_retry_count;
	c->srq = r->conn.srq;
	c->qp_num = r->conn.qp_num;
	c->private_data_len = r->conn.private_data_len;
	if (c->private_data_len) {
		memcpy(e->private_data, r->conn.private_data,
		       c->private_data_len);
		c->private_data = e->private_data;
	}
}

static void copy_ud(struct cma_event *e, const struct srd_cm_event_rep *r)
{
	struct rdma_ud_param *u = &e->event.param.ud;

	u->ah_attr = r->ah_attr;
	u->qp_num = r->ud_qp_num;
	u->qkey = r->ud_qkey;
	u->private_data_len = r->conn.private_data_len;
	if (u->private_data_len) {
		memcpy(e->private_data, r->conn.private_data,
		       u->private_data_len);
		u->private_data = e->private_data;
	}
}

/* Keep the QP attributes the event brought, for the library's own QP
 * moves that follow. */
static void keep_attrs(struct cma_id_priv *p,
		       const struct srd_cm_event_ext_rep *x)
{
	p->attr_valid = x->attr_valid;
	memcpy(p->attr, x->attr, sizeof(p->attr));
}

/* The id a connection request made: ours to describe now. */
static struct cma_id_priv *conn_req_id(struct cma_id_priv *listen,
				       struct srd_cm_event_ext_rep *x)
{
	const struct srd_cm_event_rep *r = &x->ev;
	struct cma_id_priv *p;

	p = cma_alloc_id(listen->id.channel, listen->id.context, listen->id.ps,
			 listen->id.qp_type);
	if (!p)
		return NULL;
	p->handle = r->handle;
	p->initiator_depth = r->conn.initiator_depth;
	p->responder_resources = r->conn.responder_resources;
	p->remote_ece.vendor_id = r->conn.ece_vendor_id;
	p->remote_ece.options = r->conn.ece_options;
	cma_insert(p);
	/* A synchronous listener's requests get channels of their own. */
	if (listen->sync && rdma_migrate_id(&p->id, NULL))
		goto err;
	if (x->has_query ? cma_query_apply(p, &x->query) : cma_query(p))
		goto err;
	keep_attrs(p, x);
	return p;
err:
	cma_remove(p);
	cma_free_id(p);
	return NULL;
}

static void drop_new_id(uint32_t handle, struct rdma_event_channel *ch)
{
	struct srd_handle_req req = { .handle = handle };

	cma_cmd(ch, SRD_CMD_CM_DESTROY_ID, &req, sizeof(req), NULL, 0);
}

/* The channel was destroyed under a waiter: rdma-core's waiter blocks
 * for good on its fd (or reads a closed one: EBADF, which programs such as
 * rping's event thread take for a fatal error and exit on).  Wait for
 * good, whatever the fd does now. */
static void destroyed_under_us(struct rdma_event_channel *ch)
{
	if (!cma_chan(ch)->closing)
		return;
	for (;;)
		pause();
}

/* Fetch one event, waiting on the fd as its flags say. */
static int fetch(struct rdma_event_channel *ch, struct srd_cm_event_ext_rep *x)
{
	struct srd_cm_get_event_req req = { .flags = SRD_CM_EVENT_EXT };
	uint8_t b;
	int err;

	for (;;) {
		ssize_t n;

		destroyed_under_us(ch);
		n = read(ch->fd, &b, 1);
		destroyed_under_us(ch);
		if (n < 0)
			return -1;
		if (n != 1)
			return cma_err(EIO); /* the daemon went away */
		err = cma_cmd(ch, SRD_CMD_CM_GET_EVENT, &req, sizeof(req), x,
			      sizeof(*x));
		destroyed_under_us(ch);
		/* -EAGAIN: its id went away meanwhile; wait for the next. */
		if (err != -EAGAIN)
			return cma_ret(err);
	}
}

static int get_event(struct rdma_event_channel *channel,
		     struct rdma_cm_event **event);

LIB_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	struct cma_channel *c;
	int ret;

	if (!channel || !event)
		return cma_err(EINVAL);
	c = cma_chan(channel);
	c->waiters++;
	ret = get_event(channel, event);
	c->waiters--;
	return ret;
}

static int get_event(struct rdma_event_channel *channel,
		     struct rdma_cm_event **event)
{
	struct srd_cm_event_ext_rep x;
	struct srd_cm_event_rep r;
	struct cma_id_priv *p, *listen;
	struct cma_event *e;

	if (cma_init())
		return -1;
retry:
	if (fetch(channel, &x))
		return -1;
	r = x.ev;
	e = calloc(1, sizeof(*e));
	if (!e)
		return cma_err(ENOMEM);
	e->event.event = r.event;
	e->event.status = r.status;
	if (r.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		listen = cma_lookup(r.listen_handle);
		p = listen ? conn_req_id(listen, &x) : NULL;
		if (!p) {
			drop_new_id(r.handle, channel);
			free(e);
			goto retry;
		}
		e->event.listen_id = &listen->id;
		e->id_priv = listen;
		if (cma_is_ud(p->id.qp_type))
			copy_ud(e, &r);
		else
			copy_conn(e, &r);
	} else {
		p = cma_lookup(r.handle);
		if (!p) {
			free(e);
			goto retry;
		}
		e->id_priv = p;
	}
	e->event.id = &p->id;

	switch (r.event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (x.has_query ? cma_query_apply(p, &x.query) : cma_query(p)) {
			e->event.status = -errno;
			e->event.event = r.event == RDMA_CM_EVENT_ADDR_RESOLVED
						 ? RDMA_CM_EVENT_ADDR_ERROR
						 : RDMA_CM_EVENT_ROUTE_ERROR;
		}
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		copy_conn(e, &r);
		keep_attrs(p, &x);
		if (!p->id.qp) {
			p->remote_ece.vendor_id = r.conn.ece_vendor_id;
			p->remote_ece.options = r.conn.ece_options;
			break;
		}
		e->event.status = cma_ece_conn_resp(p, r.conn.ece_vendor_id,
						    r.conn.ece_options);
		if (!e->event.status) {
			e->event.event = RDMA_CM_EVENT_ESTABLISHED;
		} else {
			e->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
			p->connect_error = true;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (cma_is_ud(p->id.qp_type))
			copy_ud(e, &r);
		else
			copy_conn(e, &r);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (p->connect_error) {
			/* Reported as CONNECT_ERROR already. */
			free(e);
			goto retry;
		}
		copy_conn(e, &r);
		/* Its QP will not be used: stop it, as rdma-core does. */
		cma_modify_qp_err(&p->id);
		break;
	case RDMA_CM_EVENT_MULTICAST_JOIN:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		if (cma_mc_event(p, e, &r)) {
			free(e);
			goto retry;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (p->connect_error) {
			/* Its connection never was, for the application. */
			free(e);
			goto retry;
		}
		copy_conn(e, &r);
		break;
	default:
		copy_conn(e, &r);
		break;
	}
	pthread_mutex_lock(&e->id_priv->mut);
	e->id_priv->events_fetched++;
	pthread_mutex_unlock(&e->id_priv->mut);
	*event = &e->event;
	return 0;
}

LIB_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e;
	struct cma_id_priv *p;

	if (!event)
		return cma_err(EINVAL);
	e = container_of(event, struct cma_event, event);
	p = e->id_priv;
	free(e);
	pthread_mutex_lock(&p->mut);
	p->events_completed++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mut);
	return 0;
}

LIB_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR:
		return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE:
		return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED:
		return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED:
		return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED:
		return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	default:
		return "UNKNOWN EVENT";
	}
}
