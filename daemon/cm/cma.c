/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm ids: the kernel's rdma_cm (drivers/infiniband/core/cma.c) and
 * rdma_ucm for one process's ids.  An id binds an IP address and port,
 * listens for REQs whose service ID and CMA header name it, or connects
 * through the IB CM; the events a consumer sees are made here from what
 * the IB CM reports.
 *
 * The consumer's QP lives in its library, which moves it through its
 * states with the attributes cma_init_qp_attr() gives (as librdmacm does
 * with rdma_init_qp_attr for user QPs).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/sa.h>

#include "daemon/cm/cm.h"

#define CMA_MAX_BACKLOG 1024 /* net.rdma_ucm.max_backlog */

struct cma_id *cma_id_get(struct srd_cm *cm, struct cm_chan *ch,
			  uint32_t handle)
{
	struct cma_id *id = table_get(&cm->ids, handle);

	return id && id->chan == ch ? id : NULL;
}

int cma_create_id(struct srd_cm *cm, struct cm_chan *ch, uint64_t uid,
		  uint16_t ps, uint8_t qp_type, struct cma_id **out)
{
	struct cma_id *id;
	int64_t h;

	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		if (qp_type != IBV_QPT_RC && qp_type != IBV_QPT_UC)
			return -EINVAL;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		if (qp_type != IBV_QPT_UD)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	h = table_alloc(&cm->ids, id);
	if (h < 0) {
		free(id);
		return -ENOMEM;
	}
	id->handle = (uint32_t)h;
	id->uid = uid;
	id->cm = cm;
	id->chan = ch;
	id->state = CMA_IDLE;
	id->ps = ps;
	id->qp_type = qp_type;
	id->qkey = ps == RDMA_PS_UDP ? CM_UDP_QKEY : 0;
	id->hop_limit = CM_HOP_LIMIT;
	list_node_init(&id->bind_node);
	list_node_init(&id->listen_node);
	*out = id;
	return 0;
}

void cma_destroy_id(struct cma_id *id)
{
	struct srd_cm *cm = id->cm;

	/* Whatever its state now (a listener whose device went away is in
	 * DEVICE_REMOVAL): off the listeners, a no-op if it never was on. */
	list_del(&id->listen_node);
	/* Requests nobody fetched die with their listener. */
	for (uint32_t h = cm->ids.first; id->pending && h < table_end(&cm->ids);
	     h++) {
		struct cma_id *c = table_get(&cm->ids, h);

		if (c && c->listener == id)
			cma_destroy_id(c);
	}
	if (id->conn)
		cm_conn_release(id->conn);
	if (id->listener)
		id->listener->pending--;
	cma_events_drop(id);
	cma_unbind(id);
	table_free(&cm->ids, id->handle);
	free(id);
}

int cma_listen(struct cma_id *id, int backlog)
{
	int err;

	if (id->state == CMA_IDLE) {
		struct sockaddr_storage any = { .ss_family = AF_INET };

		err = cma_bind(id, &any);
		if (err)
			return err;
	}
	if (id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	if (id->reuseaddr) {
		err = cma_listen_check(id);
		if (err)
			return err;
	}
	if (backlog <= 0 || backlog > CMA_MAX_BACKLOG)
		backlog = CMA_MAX_BACKLOG;
	id->backlog = backlog;
	id->state = CMA_LISTEN;
	list_add_tail(&id->cm->listeners, &id->listen_node);
	/* Requests come in on QP1: make sure every device has one. */
	list_for_each (&id->cm->d->devices, it)
		cm_port_get(id->cm, list_entry(it, struct srd_device, node));
	return 0;
}

/* --- requests coming in -------------------------------------------------- */

static bool listener_takes(const struct cma_id *l,
			   const struct sockaddr_storage *dst)
{
	union ibv_gid a, b;

	if (cma_addr_any(&l->src)) {
		/* An IPv6 wildcard takes IPv4 too unless it is AF only. */
		return l->src.ss_family == dst->ss_family ||
		       (l->src.ss_family == AF_INET6 && !l->afonly);
	}
	if (l->src.ss_family != dst->ss_family)
		return false;
	cma_addr_to_gid(&l->src, &a);
	cma_addr_to_gid(dst, &b);
	return !memcmp(a.raw, b.raw, 16);
}

static bool listener_on(const struct cma_id *l, uint16_t ps, uint16_t port,
			bool sidr)
{
	return l->ps == ps && cma_addr_port(&l->src) == port &&
	       (l->qp_type == IBV_QPT_UD) == sidr;
}

static void conn_param_from_conn(const struct cm_conn *c,
				 struct srd_cm_conn_param *p)
{
	p->responder_resources = c->responder_resources;
	p->initiator_depth = c->initiator_depth;
	p->flow_control = c->flow_control;
	p->retry_count = c->retry_count;
	p->rnr_retry_count = c->rnr_retry_count;
	p->srq = c->srq;
	p->qp_num = c->remote_qpn;
	p->ece_vendor_id = c->ece_remote.vendor_id;
	p->ece_options = c->ece_remote.attr_mod;
}

int cma_req_recv(struct srd_cm *cm, struct cm_conn *c, const struct cm_msg *m)
{
	bool sidr = m->hdr.attr_id == CM_ATTR_SIDR_REQ;
	const uint8_t *pdata = sidr ? m->sidr_req.private_data
				    : m->req.private_data;
	size_t plen = sidr ? CM_SIDR_REQ_PRIVATE_DATA_SIZE
			   : CM_REQ_PRIVATE_DATA_SIZE;
	int no_service = sidr ? CM_SIDR_UNSUPPORTED : CM_REJ_INVALID_SERVICE_ID;
	int refused = sidr ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED;
	struct sockaddr_storage src, dst;
	struct srd_cm_event_rep rec = { .listen_handle = SRD_NO_HANDLE };
	struct cma_id *l = NULL, *id;
	struct cma_hdr hdr;
	uint16_t ps, port;
	bool any = false;

	if (cm_ip_service_id_parse(c->service_id, &ps, &port))
		return no_service;
	list_for_each (&cm->listeners, it)
		any |= listener_on(list_entry(it, struct cma_id, listen_node),
				   ps, port, sidr);
	if (!any)
		return no_service;
	if (cma_hdr_decode(pdata, plen, &hdr) ||
	    cma_hdr_to_sockaddr(&hdr, c->service_id, &src, &dst))
		return refused;
	list_for_each (&cm->listeners, it) {
		struct cma_id *x = list_entry(it, struct cma_id, listen_node);

		if (listener_on(x, ps, port, sidr) && listener_takes(x, &dst)) {
			l = x;
			break;
		}
	}
	if (!l)
		return refused;
	/* Backlog full: drop, and let the peer's retry find room. */
	if (l->pending >= l->backlog)
		return -ENOMEM;
	if (cma_create_id(cm, l->chan, 0, ps,
			  sidr ? IBV_QPT_UD
			       : (m->req.transport_type == CM_TST_UC
					  ? IBV_QPT_UC
					  : IBV_QPT_RC),
			  &id))
		return -ENOMEM;
	id->state = CMA_CONNECT;
	id->src = dst;
	id->dst = src;
	id->port = c->port;
	id->sgid = c->path.sgid;
	id->sgid_index = c->path.sgid_index;
	id->dgid = c->path.dgid;
	id->route = true;
	id->mtu = sidr ? cm_port_dev(c->port)->port.active_mtu : c->path_mtu;
	id->hop_limit = c->path.hop_limit;
	id->tos = l->tos;
	id->tos_set = l->tos_set;
	id->qkey = l->qkey;
	id->listener = l;
	l->pending++;
	id->conn = c;
	c->id = id;

	rec.uid = 0;
	rec.handle = id->handle;
	rec.listen_uid = l->uid;
	rec.listen_handle = l->handle;
	rec.event = RDMA_CM_EVENT_CONNECT_REQUEST;
	if (!sidr)
		conn_param_from_conn(c, &rec.conn);
	rec.conn.private_data_len = (uint8_t)(plen - CMA_HDR_SIZE);
	memcpy(rec.conn.private_data, pdata + CMA_HDR_SIZE,
	       plen - CMA_HDR_SIZE);
	cma_event_queue(id, &rec);
	return 0;
}

/* --- what the consumer asks for ------------------------------------------- */

static void id_path(const struct cma_id *id, struct cm_av *path)
{
	memset(path, 0, sizeof(*path));
	path->sgid = id->sgid;
	path->dgid = id->dgid;
	path->sgid_index = id->sgid_index;
	path->hop_limit = id->hop_limit;
	path->tclass = id->tos;
}

static uint8_t min7(uint8_t v)
{
	return v > 7 ? 7 : v;
}

int cma_connect(struct cma_id *id, const struct srd_cm_conn_param *p)
{
	bool ud = id->qp_type == IBV_QPT_UD;
	uint8_t pdata[CM_SIDR_REQ_PRIVATE_DATA_SIZE] = { 0 };
	size_t max = ud ? CMA_SIDR_REQ_USER_DATA_SIZE : CMA_REQ_USER_DATA_SIZE;
	struct cma_hdr hdr;
	struct cm_av path;
	struct cm_conn *c;
	int err;

	if (id->state != CMA_ROUTE_RESOLVED || !id->port || id->conn)
		return -EINVAL;
	if (p->private_data_len > max)
		return -EINVAL;
	if (cma_hdr_from_sockaddr(&hdr, (const struct sockaddr *)&id->src,
				  (const struct sockaddr *)&id->dst) ||
	    cma_hdr_encode(&hdr, pdata, sizeof(pdata)))
		return -EINVAL;
	memcpy(pdata + CMA_HDR_SIZE, p->private_data, p->private_data_len);
	id_path(id, &path);
	c = cm_conn_new(id->cm, id->port, &path);
	if (!c)
		return -ENOMEM;
	c->id = id;
	id->conn = c;
	c->service_id = cm_ip_service_id(id->ps, cma_addr_port(&id->dst));
	if (ud) {
		err = cm_send_sidr_req(c, pdata,
				       CMA_HDR_SIZE + p->private_data_len);
	} else {
		const struct srd_device *dev = cm_port_dev(id->port);

		c->local_qpn = p->qp_num;
		c->ece_local.vendor_id = p->ece_vendor_id;
		c->ece_local.attr_mod = p->ece_options;
		c->transport = id->qp_type == IBV_QPT_UC ? CM_TST_UC
							 : CM_TST_RC;
		c->responder_resources = p->responder_resources;
		c->initiator_depth = p->initiator_depth;
		c->flow_control = p->flow_control;
		c->retry_count = min7(p->retry_count);
		c->rnr_retry_ask = min7(p->rnr_retry_count);
		c->rnr_retry_count = c->rnr_retry_ask; /* until the REP */
		c->srq = p->srq ? 1 : 0;
		c->path_mtu = id->mtu;
		c->packet_life_time = CM_PACKET_LIFE_TIME;
		c->ack_timeout = cm_ack_timeout(dev->attr.local_ca_ack_delay,
						c->packet_life_time);
		err = cm_send_req(c, pdata, CMA_HDR_SIZE + p->private_data_len);
	}
	if (err) {
		cm_conn_free(c);
		return err;
	}
	id->state = CMA_CONNECT;
	id->disconnect_reported = false;
	return 0;
}

int cma_accept(struct cma_id *id, const struct srd_cm_conn_param *p)
{
	struct cm_conn *c = id->conn;

	if (!c || id->state != CMA_CONNECT)
		return -EINVAL;
	switch (c->state) {
	case CM_SIDR_REQ_RCVD:
		if (p->private_data_len > CM_SIDR_REP_PRIVATE_DATA_SIZE)
			return -EINVAL;
		return cm_send_sidr_rep(c, CM_SIDR_SUCCESS, p->qp_num, id->qkey,
					p->private_data, p->private_data_len);
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		if (p->private_data_len > CM_REP_PRIVATE_DATA_SIZE)
			return -EINVAL;
		c->local_qpn = p->qp_num;
		c->responder_resources = p->responder_resources;
		c->initiator_depth = p->initiator_depth;
		c->flow_control = p->flow_control;
		/* Our QP keeps the REQ's RNR retry count; the REP asks this
		 * of the peer (the kernel's ib_send_cm_rep). */
		c->rnr_retry_ask = min7(p->rnr_retry_count);
		c->srq = p->srq ? 1 : 0;
		/* The library answers with the peer's vendor ID and its own
		 * options, as rdma-core's does. */
		c->ece_local.vendor_id = p->ece_vendor_id;
		c->ece_local.attr_mod = p->ece_options;
		return cm_send_rep(c, p->private_data, p->private_data_len);
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		return cm_send_rtu(c);
	default:
		return -EINVAL;
	}
}

int cma_reject(struct cma_id *id, const void *pdata, size_t len,
	       uint16_t reason)
{
	struct cm_conn *c = id->conn;

	/* The reasons rdma_ucm lets a consumer give. */
	if (!reason)
		reason = CM_REJ_CONSUMER_DEFINED;
	if (reason != CM_REJ_CONSUMER_DEFINED &&
	    reason != CM_REJ_VENDOR_OPTION_NOT_SUPPORTED)
		return -EINVAL;
	if (!c)
		return -EINVAL;
	switch (c->state) {
	case CM_SIDR_REQ_RCVD:
		if (len > CM_SIDR_REP_PRIVATE_DATA_SIZE)
			return -EINVAL;
		return cm_send_sidr_rep(c, CM_SIDR_REJECT, 0, 0, pdata, len);
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
		if (len > CM_REJ_PRIVATE_DATA_SIZE)
			return -EINVAL;
		return cm_send_rej(c, reason, NULL, 0, pdata, len);
	default:
		return -EINVAL;
	}
}

int cma_disconnect(struct cma_id *id)
{
	struct cm_conn *c = id->conn;

	if (!c || id->qp_type == IBV_QPT_UD)
		return -EINVAL;
	if (c->state == CM_ESTABLISHED)
		return cm_send_dreq(c);
	if (c->state == CM_DREQ_RCVD)
		return cm_send_drep(c);
	return -EINVAL;
}

int cma_notify(struct cma_id *id, uint32_t event)
{
	if (event != IBV_EVENT_COMM_EST)
		return 0;
	if (!id->conn)
		return -EINVAL;
	return cm_establish(id->conn);
}

/* --- QP attributes --------------------------------------------------------- */

static bool conn_knows_peer(const struct cm_conn *c)
{
	switch (c->state) {
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
	case CM_MRA_REP_SENT:
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
	case CM_ESTABLISHED:
		return true;
	default:
		return false;
	}
}

int cma_init_qp_attr(struct cma_id *id, enum ibv_qp_state state,
		     struct ibv_qp_attr *a, uint32_t *mask)
{
	const struct cm_conn *c = id->conn;
	bool rc = id->qp_type == IBV_QPT_RC;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	if (!id->port)
		return -EINVAL;
	/* No connection yet, or UD: what the id alone says. */
	if (!c || id->qp_type == IBV_QPT_UD || state == IBV_QPS_INIT) {
		if (state != IBV_QPS_INIT && id->qp_type != IBV_QPT_UD)
			return -EINVAL;
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			a->qkey = id->qkey;
			*mask |= IBV_QP_QKEY;
		} else {
			*mask |= IBV_QP_ACCESS_FLAGS;
			if (c) {
				a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
				if (c->responder_resources)
					a->qp_access_flags |=
						IBV_ACCESS_REMOTE_READ |
						IBV_ACCESS_REMOTE_ATOMIC;
			}
		}
		return 0;
	}
	if (!conn_knows_peer(c))
		return -EINVAL;
	switch (state) {
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.grh.dgid = c->path.dgid;
		a->ah_attr.grh.sgid_index = c->path.sgid_index;
		a->ah_attr.grh.hop_limit = c->path.hop_limit;
		a->ah_attr.grh.traffic_class = c->path.tclass;
		a->ah_attr.grh.flow_label = c->path.flow_label;
		a->path_mtu = c->path_mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->rq_psn;
		if (rc) {
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = c->responder_resources;
			a->min_rnr_timer = 0;
		}
		return 0;
	case IBV_QPS_RTS:
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		a->sq_psn = c->sq_psn;
		if (rc) {
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = id->timeout_set ? id->timeout
						     : c->ack_timeout;
			a->retry_cnt = c->retry_count;
			a->rnr_retry = c->rnr_retry_count;
			a->max_rd_atomic = c->initiator_depth;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/* --- options and queries --------------------------------------------------- */

static void conn_event(struct cma_id *id, uint32_t event, int status,
		       struct srd_cm_event_rep *rec);

static bool gid_zero_or(const union ibv_gid *g, const union ibv_gid *want)
{
	static const union ibv_gid zero;

	return !memcmp(g, &zero, sizeof(*g)) || !memcmp(g, want, sizeof(*g));
}

/* RDMA_OPTION_IB_PATH on RoCE (the kernel's rdma_set_ib_path): the
 * consumer's path record instead of route resolution, for an id whose
 * address is resolved; ROUTE_RESOLVED follows at once.  The path's MTU
 * (at most the port's), hop limit and traffic class are taken; its GIDs
 * must be the id's (or zero): the address resolution chose the device. */
static int set_ib_path(struct cma_id *id, const void *val, uint32_t len)
{
	struct srd_cm_event_rep rec = { 0 };
	struct ibv_path_record r;
	uint8_t mtu, active;
	uint32_t fh;

	if (len != sizeof(r))
		return -EINVAL;
	memcpy(&r, val, sizeof(r));
	if (id->state != CMA_ADDR_RESOLVED || !id->port ||
	    id->qp_type == IBV_QPT_UD)
		return -EINVAL;
	if (!gid_zero_or(&r.sgid, &id->sgid) ||
	    !gid_zero_or(&r.dgid, &id->dgid))
		return -EINVAL;
	mtu = r.mtu & 0x3f;
	if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
		return -EINVAL;
	active = cm_port_dev(id->port)->port.active_mtu;
	fh = be32toh(r.flowlabel_hoplimit);
	id->mtu = mtu < active ? mtu : active;
	if (fh & 0xff)
		id->hop_limit = (uint8_t)(fh & 0xff);
	id->tos = r.tclass;
	id->route = true;
	id->state = CMA_ROUTE_RESOLVED;
	conn_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, &rec);
	return 0;
}

int cma_set_option(struct cma_id *id, uint32_t level, uint32_t name,
		   const void *val, uint32_t len)
{
	int v;

	if (level == RDMA_OPTION_IB)
		return name == RDMA_OPTION_IB_PATH ? set_ib_path(id, val, len)
						   : -ENOSYS;
	if (level != RDMA_OPTION_ID)
		return -ENOSYS;
	switch (name) {
	case RDMA_OPTION_ID_TOS:
		if (len != sizeof(uint8_t))
			return -EINVAL;
		id->tos = *(const uint8_t *)val;
		id->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (len != sizeof(int))
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		if (!(v && id->state != CMA_LISTEN) && id->state != CMA_IDLE)
			return -EINVAL;
		id->reuseaddr = v != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (len != sizeof(int))
			return -EINVAL;
		if (id->state != CMA_IDLE)
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		id->afonly = v != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (len != sizeof(uint8_t))
			return -EINVAL;
		if (id->qp_type != IBV_QPT_RC || *(const uint8_t *)val > 31)
			return -EINVAL;
		id->timeout = *(const uint8_t *)val;
		id->timeout_set = true;
		return 0;
	default:
		return -ENOSYS;
	}
}

void cma_query(struct cma_id *id, struct srd_cm_query_rep *r)
{
	memset(r, 0, sizeof(*r));
	r->src = id->src;
	r->dst = id->dst;
	r->ps = id->ps;
	r->qp_type = id->qp_type;
	r->pkey = CM_PKEY;
	if (id->port) {
		const struct srd_device *dev = cm_port_dev(id->port);

		memcpy(r->dev_name, dev->name, sizeof(r->dev_name) - 1);
		r->node_guid = dev->node_guid;
		r->port_num = 1;
		r->sgid = id->sgid;
		r->sgid_index = id->sgid_index;
		r->dgid = id->dgid;
	}
	if (id->route) {
		r->num_paths = 1;
		r->mtu = id->mtu;
		r->hop_limit = id->hop_limit;
		r->traffic_class = id->tos;
		r->packet_life_time = CM_PACKET_LIFE_TIME;
		r->rate = IBV_RATE_MAX;
	}
}

/* --- what the IB CM reports ------------------------------------------------ */

static void conn_event(struct cma_id *id, uint32_t event, int status,
		       struct srd_cm_event_rep *rec)
{
	rec->uid = id->uid;
	rec->handle = id->handle;
	rec->listen_handle = SRD_NO_HANDLE;
	rec->event = event;
	rec->status = status;
	cma_event_queue(id, rec);
}

static void disconnected(struct cma_id *id, int status)
{
	struct srd_cm_event_rep rec = { 0 };

	if (id->state != CMA_CONNECT || id->disconnect_reported)
		return;
	id->state = CMA_DISCONNECT;
	id->disconnect_reported = true;
	conn_event(id, RDMA_CM_EVENT_DISCONNECTED, status, &rec);
}

static void sidr_rep_event(struct cma_id *id, const struct cm_sidr_rep *r)
{
	struct srd_cm_event_rep rec = { 0 };
	struct ibv_ah_attr *ah = &rec.ah_attr;

	rec.conn.private_data_len = CM_SIDR_REP_PRIVATE_DATA_SIZE;
	memcpy(rec.conn.private_data, r->private_data,
	       CM_SIDR_REP_PRIVATE_DATA_SIZE);
	if (r->status != CM_SIDR_SUCCESS) {
		conn_event(id, RDMA_CM_EVENT_UNREACHABLE, r->status, &rec);
		return;
	}
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = id->dgid;
	ah->grh.sgid_index = id->sgid_index;
	ah->grh.hop_limit = id->hop_limit;
	ah->grh.traffic_class = id->tos;
	rec.ud_qp_num = r->qpn;
	rec.ud_qkey = r->qkey;
	conn_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, &rec);
}

void cma_conn_event(struct cma_id *id, enum cm_event ev, const struct cm_msg *m,
		    int status)
{
	struct srd_cm_event_rep rec = { 0 };

	if (ev == CM_EV_TIMEWAIT_EXIT) {
		if (id->state == CMA_DISCONNECT)
			conn_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, &rec);
		return;
	}
	if (id->state != CMA_CONNECT)
		return;
	switch (ev) {
	case CM_EV_REP:
		conn_param_from_conn(id->conn, &rec.conn);
		rec.conn.private_data_len = CM_REP_PRIVATE_DATA_SIZE;
		memcpy(rec.conn.private_data, m->rep.private_data,
		       CM_REP_PRIVATE_DATA_SIZE);
		conn_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &rec);
		break;
	case CM_EV_RTU:
		conn_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, &rec);
		break;
	case CM_EV_REJ:
		rec.conn.private_data_len = CM_REJ_PRIVATE_DATA_SIZE;
		memcpy(rec.conn.private_data, m->rej.private_data,
		       CM_REJ_PRIVATE_DATA_SIZE);
		conn_event(id, RDMA_CM_EVENT_REJECTED, m->rej.reason, &rec);
		break;
	case CM_EV_DREQ:
	case CM_EV_DREP:
		disconnected(id, 0);
		break;
	case CM_EV_DREQ_TIMEOUT:
		disconnected(id, status);
		break;
	case CM_EV_UNREACHABLE:
		conn_event(id, RDMA_CM_EVENT_UNREACHABLE, status, &rec);
		break;
	case CM_EV_SIDR_REP:
		sidr_rep_event(id, &m->sidr_rep);
		break;
	default:
		break;
	}
}

void cma_device_removed(struct srd_cm *cm, struct cm_port *p)
{
	for (uint32_t h = cm->ids.first; h < table_end(&cm->ids); h++) {
		struct cma_id *id = table_get(&cm->ids, h);
		struct srd_cm_event_rep rec = { 0 };

		if (!id || id->port != p)
			continue;
		if (id->conn)
			cm_conn_free(id->conn);
		id->port = NULL;
		id->route = false;
		id->state = CMA_DEVICE_REMOVAL;
		conn_event(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, &rec);
	}
	list_for_each (&cm->conns, it) {
		struct cm_conn *c = list_entry(it, struct cm_conn, node);

		if (c->port == p)
			cm_conn_free(c);
	}
}
