/* SPDX-License-Identifier: MIT */
/*
 * Connection-management commands (common/proto_cm.h): what rdma_ucm's
 * write() commands are to the kernel.  Every command but OPEN needs the
 * connection to be an event channel already, and names only ids of that
 * channel.
 */
#include <errno.h>
#include <string.h>

#include "daemon/cm/cm.h"

static int chan_get(struct srd_client *c, struct cm_chan **ch)
{
	if (!c->d->cm)
		return -EPROTO;
	*ch = cm_chan_of(c->d->cm, c);
	return *ch ? 0 : -EPROTO;
}

static int id_get(struct srd_client *c, uint32_t handle, struct cma_id **id)
{
	struct cm_chan *ch;
	int err = chan_get(c, &ch);

	if (err)
		return err;
	*id = cma_id_get(c->d->cm, ch, handle);
	return *id ? 0 : -EINVAL;
}

static int cmd_cm_open(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	int fd, err;

	err = cm_init(c->d);
	if (err)
		return err;
	err = cm_chan_open(c->d->cm, c, &fd);
	if (err)
		return err;
	/* QP1 on every device, so requests find an answer. */
	list_for_each (&c->d->devices, it)
		cm_port_get(c->d->cm, list_entry(it, struct srd_device, node));
	rep_add_fd(rp, fd, true);
	return 0;
}

static int cmd_cm_create_id(struct srd_client *c, struct srd_req *rq,
			    struct srd_rep *rp)
{
	const struct srd_cm_create_id_req *req = rq->data;
	struct cm_chan *ch;
	struct cma_id *id;
	int err = chan_get(c, &ch);

	if (!err)
		err = cma_create_id(c->d->cm, ch, req->uid, (uint16_t)req->ps,
				    (uint8_t)req->qp_type, &id);
	if (err)
		return err;
	REP(rp, struct srd_handle_rep)->handle = id->handle;
	return 0;
}

static int cmd_cm_destroy_id(struct srd_client *c, struct srd_req *rq,
			     struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (!err)
		cma_destroy_id(id);
	return err;
}

static int cmd_cm_bind(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_cm_bind_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (!err)
		err = cma_bind(id, &req->addr);
	if (!err)
		REP(rp, struct srd_cm_bind_rep)->addr = id->src;
	return err;
}

static int cmd_cm_resolve_addr(struct srd_client *c, struct srd_req *rq,
			       struct srd_rep *rp)
{
	const struct srd_cm_resolve_addr_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_resolve_addr(id, &req->src, &req->dst);
}

static int cmd_cm_resolve_route(struct srd_client *c, struct srd_req *rq,
				struct srd_rep *rp)
{
	const struct srd_cm_resolve_route_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_resolve_route(id);
}

static int cmd_cm_query(struct srd_client *c, struct srd_req *rq,
			struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (!err)
		cma_query(id, REP(rp, struct srd_cm_query_rep));
	return err;
}

static int cmd_cm_init_qp_attr(struct srd_client *c, struct srd_req *rq,
			       struct srd_rep *rp)
{
	const struct srd_cm_init_qp_attr_req *req = rq->data;
	struct srd_cm_init_qp_attr_rep *rep;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (err)
		return err;
	rep = REP(rp, struct srd_cm_init_qp_attr_rep);
	return cma_init_qp_attr(id, req->qp_state, &rep->attr, &rep->attr_mask);
}

static int cmd_cm_listen(struct srd_client *c, struct srd_req *rq,
			 struct srd_rep *rp)
{
	const struct srd_cm_listen_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_listen(id, req->backlog);
}

static int cmd_cm_connect(struct srd_client *c, struct srd_req *rq,
			  struct srd_rep *rp)
{
	const struct srd_cm_connect_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_connect(id, &req->p);
}

static int cmd_cm_accept(struct srd_client *c, struct srd_req *rq,
			 struct srd_rep *rp)
{
	const struct srd_cm_accept_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (err)
		return err;
	if (req->uid)
		id->uid = req->uid;
	return cma_accept(id, &req->p);
}

static int cmd_cm_reject(struct srd_client *c, struct srd_req *rq,
			 struct srd_rep *rp)
{
	const struct srd_cm_reject_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err
		   : cma_reject(id, req->private_data, req->private_data_len,
				req->reason);
}

static int cmd_cm_disconnect(struct srd_client *c, struct srd_req *rq,
			     struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_disconnect(id);
}

static int cmd_cm_notify(struct srd_client *c, struct srd_req *rq,
			 struct srd_rep *rp)
{
	const struct srd_cm_notify_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_notify(id, req->event);
}

static int cmd_cm_set_option(struct srd_client *c, struct srd_req *rq,
			     struct srd_rep *rp)
{
	const struct srd_cm_set_option_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	if (err)
		return err;
	if (req->optlen > sizeof(req->optval))
		return -EINVAL;
	return cma_set_option(id, req->level, req->optname, req->optval,
			      req->optlen);
}

static int cmd_cm_migrate(struct srd_client *c, struct srd_req *rq,
			  struct srd_rep *rp)
{
	const struct srd_cm_migrate_req *req = rq->data;
	struct cm_chan *ch;
	struct cma_id *id;
	struct srd_cm *cm;
	int err = chan_get(c, &ch);

	if (err)
		return err;
	cm = c->d->cm;
	id = table_get(&cm->ids, req->handle);
	/* Only between channels of one process, as rdma_ucm checks. */
	if (!id || !id->chan || id->chan->c->pid != c->pid ||
	    id->chan->c->uid != c->uid)
		return -EINVAL;
	for (uint32_t h = cm->ids.first; h < table_end(&cm->ids); h++) {
		struct cma_id *x = table_get(&cm->ids, h);

		if (x && x->listener == id)
			cma_events_move(x, ch);
	}
	cma_events_move(id, ch);
	if (req->uid)
		id->uid = req->uid;
	return 0;
}

/* What the library does after the event, answered in advance. */
static void event_ext(struct cma_id *id, struct srd_cm_event_ext_rep *x)
{
	static const uint8_t states[SRD_CM_NATTR] = {
		[SRD_CM_ATTR_INIT] = IBV_QPS_INIT,
		[SRD_CM_ATTR_RTR] = IBV_QPS_RTR,
		[SRD_CM_ATTR_RTS] = IBV_QPS_RTS,
	};

	cma_query(id, &x->query);
	x->has_query = 1;
	if (x->ev.event != RDMA_CM_EVENT_CONNECT_REQUEST &&
	    x->ev.event != RDMA_CM_EVENT_CONNECT_RESPONSE)
		return;
	if (id->qp_type == IBV_QPT_UD)
		return;
	for (int i = 0; i < SRD_CM_NATTR; i++) {
		struct srd_cm_init_qp_attr_rep *a = &x->attr[i];

		if (!cma_init_qp_attr(id, states[i], &a->attr, &a->attr_mask))
			x->attr_valid |= 1u << i;
	}
}

static int cmd_cm_get_event(struct srd_client *c, struct srd_req *rq,
			    struct srd_rep *rp)
{
	const struct srd_cm_get_event_req *req = rq->data;
	bool ext = rq->len >= sizeof(*req) && (req->flags & SRD_CM_EVENT_EXT);
	struct srd_cm_event_ext_rep *x = NULL;
	struct srd_cm_event_rep *rep;
	struct cm_chan *ch;
	struct cma_id *id;
	int err = chan_get(c, &ch);

	if (err)
		return err;
	if (ext) {
		x = REP(rp, struct srd_cm_event_ext_rep);
		rep = &x->ev;
	} else {
		rep = REP(rp, struct srd_cm_event_rep);
	}
	err = cm_chan_take(ch, rep, &id);
	if (err) {
		rp->len = 0;
		return err;
	}
	if (rep->event == RDMA_CM_EVENT_CONNECT_REQUEST && id->listener) {
		id->listener->pending--;
		id->listener = NULL;
	}
	if (x)
		event_ext(id, x);
	return 0;
}

static int cmd_cm_stats(struct srd_client *c, struct srd_req *rq,
			struct srd_rep *rp)
{
	cm_stats(c->d, REP(rp, struct srd_cm_stats_rep));
	return 0;
}

#define CM_CMD(op, fn, type) \
	[(op)-SRD_CMD_CM_BASE] = { (fn), sizeof(type), F_NO_DEV }

static int cmd_cm_join_mcast(struct srd_client *c, struct srd_req *rq,
			     struct srd_rep *rp)
{
	const struct srd_cm_join_mcast_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_join_mcast(id, req);
}

static int cmd_cm_leave_mcast(struct srd_client *c, struct srd_req *rq,
			      struct srd_rep *rp)
{
	const struct srd_cm_leave_mcast_req *req = rq->data;
	struct cma_id *id;
	int err = id_get(c, req->handle, &id);

	return err ? err : cma_leave_mcast(id, req->uid);
}

static const struct cmd_desc cm_cmds[SRD_CM_NCMDS] = {
	[0] = { cmd_cm_open, 0, F_NO_DEV },
	CM_CMD(SRD_CMD_CM_CREATE_ID, cmd_cm_create_id,
	       struct srd_cm_create_id_req),
	CM_CMD(SRD_CMD_CM_DESTROY_ID, cmd_cm_destroy_id, struct srd_handle_req),
	CM_CMD(SRD_CMD_CM_BIND, cmd_cm_bind, struct srd_cm_bind_req),
	CM_CMD(SRD_CMD_CM_RESOLVE_ADDR, cmd_cm_resolve_addr,
	       struct srd_cm_resolve_addr_req),
	CM_CMD(SRD_CMD_CM_RESOLVE_ROUTE, cmd_cm_resolve_route,
	       struct srd_cm_resolve_route_req),
	CM_CMD(SRD_CMD_CM_QUERY, cmd_cm_query, struct srd_handle_req),
	CM_CMD(SRD_CMD_CM_INIT_QP_ATTR, cmd_cm_init_qp_attr,
	       struct srd_cm_init_qp_attr_req),
	CM_CMD(SRD_CMD_CM_LISTEN, cmd_cm_listen, struct srd_cm_listen_req),
	CM_CMD(SRD_CMD_CM_CONNECT, cmd_cm_connect, struct srd_cm_connect_req),
	CM_CMD(SRD_CMD_CM_ACCEPT, cmd_cm_accept, struct srd_cm_accept_req),
	CM_CMD(SRD_CMD_CM_REJECT, cmd_cm_reject, struct srd_cm_reject_req),
	CM_CMD(SRD_CMD_CM_DISCONNECT, cmd_cm_disconnect, struct srd_handle_req),
	CM_CMD(SRD_CMD_CM_NOTIFY, cmd_cm_notify, struct srd_cm_notify_req),
	CM_CMD(SRD_CMD_CM_SET_OPTION, cmd_cm_set_option,
	       struct srd_cm_set_option_req),
	CM_CMD(SRD_CMD_CM_MIGRATE, cmd_cm_migrate, struct srd_cm_migrate_req),
	[SRD_CMD_CM_GET_EVENT -
		SRD_CMD_CM_BASE] = { cmd_cm_get_event, 0, F_NO_DEV | F_VAR },
	[SRD_CMD_CM_STATS - SRD_CMD_CM_BASE] = { cmd_cm_stats, 0, F_NO_DEV },
	CM_CMD(SRD_CMD_CM_JOIN_MCAST, cmd_cm_join_mcast,
	       struct srd_cm_join_mcast_req),
	CM_CMD(SRD_CMD_CM_LEAVE_MCAST, cmd_cm_leave_mcast,
	       struct srd_cm_leave_mcast_req),
};

const struct cmd_family cm_cmd_family = {
	.base = SRD_CMD_CM_BASE,
	.count = SRD_CM_NCMDS,
	.cmds = cm_cmds,
};
