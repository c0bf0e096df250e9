/* SPDX-License-Identifier: MIT */
/*
 * Connecting: listen, connect, accept, reject, disconnect.  The daemon
 * runs the CM protocol; the library moves the application's QP through
 * its states with the attributes the daemon gives for each, at the
 * moments rdma-core's librdmacm does (RTR and RTS before accepting, and
 * on the active side when the reply arrives).
 */
#include <string.h>

#include "librdmacm/cma.h"

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/* rdma-core's check: resources within what the device allows. */
static int valid_param(struct cma_id_priv *p,
		       const struct rdma_conn_param *param)
{
	if (p->id.ps != RDMA_PS_TCP)
		return 0;
	if (!p->id.qp && !param)
		return cma_err(EINVAL);
	if (!param || !p->cma_dev)
		return 0;
	if (param->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    param->initiator_depth > p->cma_dev->max_initiator_depth)
		return cma_err(EINVAL);
	if (param->responder_resources != RDMA_MAX_RESP_RES &&
	    param->responder_resources > p->cma_dev->max_responder_resources)
		return cma_err(EINVAL);
	return 0;
}

static void param_to_daemon(struct cma_id_priv *p,
			    const struct rdma_conn_param *param,
			    struct srd_cm_conn_param *out)
{
	memset(out, 0, sizeof(*out));
	out->responder_resources = p->responder_resources;
	out->initiator_depth = p->initiator_depth;
	if (param) {
		out->flow_control = param->flow_control;
		out->retry_count = param->retry_count;
		out->rnr_retry_count = param->rnr_retry_count;
		out->qp_num = param->qp_num & 0xffffff;
		out->srq = param->srq;
		if (param->private_data && param->private_data_len) {
			out->private_data_len = param->private_data_len;
			memcpy(out->private_data, param->private_data,
			       param->private_data_len);
		}
	} else {
		out->retry_count = 7;
		out->rnr_retry_count = 7;
	}
	if (p->id.qp) {
		out->qp_num = p->id.qp->qp_num;
		out->srq = p->id.qp->srq != NULL;
	}
	out->ece_vendor_id = p->local_ece.vendor_id;
	out->ece_options = p->local_ece.options;
}

LIB_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_listen_req req = { .handle = p->handle,
					 .backlog = backlog };
	int err;

	err = cma_id_cmd(p, SRD_CMD_CM_LISTEN, &req, sizeof(req), NULL, 0);
	if (err)
		return cma_ret(err);
	return cma_query(p);
}

LIB_EXPORT int rdma_connect(struct rdma_cm_id *id,
			    struct rdma_conn_param *param)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_connect_req req = { .handle = p->handle };
	int err;

	err = valid_param(p, param);
	if (err)
		return err;
	if (p->cma_dev) {
		p->initiator_depth = param && param->initiator_depth !=
							     RDMA_MAX_INIT_DEPTH
					     ? param->initiator_depth
					     : p->cma_dev->max_initiator_depth;
		p->responder_resources =
			param && param->responder_resources != RDMA_MAX_RESP_RES
				? param->responder_resources
				: p->cma_dev->max_responder_resources;
	}
	param_to_daemon(p, param, &req.p);
	err = cma_id_cmd(p, SRD_CMD_CM_CONNECT, &req, sizeof(req), NULL, 0);
	if (err)
		return cma_ret(err);
	return cma_complete(p);
}

int cma_process_conn_resp(struct cma_id_priv *p)
{
	struct srd_cm_accept_req req = { .handle = p->handle,
					 .uid = (uintptr_t)p };
	int err;

	if (cma_modify_qp_rtr(&p->id, RDMA_MAX_RESP_RES) ||
	    cma_modify_qp_rts(&p->id, RDMA_MAX_INIT_DEPTH))
		err = -errno;
	else
		err = 0;
	p->attr_valid = 0; /* used up */
	if (!err)	   /* the RTU */
		err = cma_id_cmd(p, SRD_CMD_CM_ACCEPT, &req, sizeof(req), NULL,
				 0);
	if (err)
		cma_modify_qp_err(&p->id);
	return err;
}

LIB_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	int err;

	if (id->qp)
		return cma_err(EINVAL);
	err = cma_process_conn_resp(cma_id(id));
	return err ? cma_err(-err) : 0;
}

LIB_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_accept_req req = { .handle = p->handle,
					 .uid = (uintptr_t)p };
	int err;

	/* Checked before the QP moves, so a bad call leaves it as it was. */
	if (param &&
	    param->private_data_len > (cma_is_ud(id->qp_type) ? 136 : 196))
		return cma_err(EINVAL);
	if (!cma_is_ud(id->qp_type)) {
		err = valid_param(p, param);
		if (err)
			return err;
		if (!param || param->initiator_depth == RDMA_MAX_INIT_DEPTH)
			p->initiator_depth =
				p->cma_dev
					? min_u8(p->initiator_depth,
						 p->cma_dev->max_initiator_depth)
					: p->initiator_depth;
		else
			p->initiator_depth = param->initiator_depth;
		if (!param || param->responder_resources == RDMA_MAX_RESP_RES)
			p->responder_resources =
				p->cma_dev
					? min_u8(p->responder_resources,
						 p->cma_dev
							 ->max_responder_resources)
					: p->responder_resources;
		else
			p->responder_resources = param->responder_resources;
		if (id->qp) {
			int err2 =
				cma_modify_qp_rtr(id, p->responder_resources) ||
				cma_modify_qp_rts(id, p->initiator_depth);

			p->attr_valid = 0; /* used up */
			if (err2)
				return -1;
		}
	}
	param_to_daemon(p, param, &req.p);
	/* The REP echoes the vendor ID the REQ carried. */
	req.p.ece_vendor_id = p->remote_ece.vendor_id;
	err = cma_id_cmd(p, SRD_CMD_CM_ACCEPT, &req, sizeof(req), NULL, 0);
	if (err) {
		cma_modify_qp_err(id);
		return cma_ret(err);
	}
	if (cma_is_ud(id->qp_type))
		return 0;
	return cma_complete(p);
}

static int reject(struct rdma_cm_id *id, const void *private_data,
		  uint8_t private_data_len, uint16_t reason)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_reject_req req = { .handle = p->handle,
					 .reason = reason };

	if (private_data_len && !private_data)
		return cma_err(EINVAL);
	req.private_data_len = private_data_len;
	if (private_data_len)
		memcpy(req.private_data, private_data, private_data_len);
	return cma_ret(
		cma_id_cmd(p, SRD_CMD_CM_REJECT, &req, sizeof(req), NULL, 0));
}

LIB_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 0);
}

LIB_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	/* IBTA's "vendor option not supported". */
	return reject(id, private_data, private_data_len, 35);
}

LIB_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_handle_req req = { .handle = p->handle };
	int err;

	/* The QP stops first, as rdma-core does on InfiniBand and RoCE. */
	if (cma_modify_qp_err(id))
		return -1;
	err = cma_id_cmd(p, SRD_CMD_CM_DISCONNECT, &req, sizeof(req), NULL, 0);
	if (err)
		return cma_ret(err);
	return cma_complete(p);
}

LIB_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct cma_id_priv *p = cma_id(id);
	struct srd_cm_notify_req req = { .handle = p->handle,
					 .event = (uint32_t)event };

	return cma_ret(
		cma_id_cmd(p, SRD_CMD_CM_NOTIFY, &req, sizeof(req), NULL, 0));
}

LIB_EXPORT int rdma_get_request(struct rdma_cm_id *listen,
				struct rdma_cm_id **id)
{
	struct cma_id_priv *p = cma_id(listen);
	struct rdma_cm_event *event;
	int ret;

	if (!p->sync)
		return cma_err(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	ret = rdma_get_cm_event(listen->channel, &event);
	if (ret)
		return ret;
	if (event->event == RDMA_CM_EVENT_REJECTED) {
		ret = cma_err(ECONNREFUSED);
		goto err;
	}
	if (event->status) {
		ret = cma_err(event->status < 0 ? -event->status
						: event->status);
		goto err;
	}
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = cma_err(EINVAL);
		goto err;
	}
	if (p->qp_init_attr) {
		struct ibv_qp_init_attr attr = *p->qp_init_attr;

		ret = rdma_create_qp(event->id, listen->pd, &attr);
		if (ret) {
			struct rdma_cm_id *nid = event->id;

			rdma_ack_cm_event(event);
			rdma_destroy_id(nid);
			return ret;
		}
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
err:
	rdma_ack_cm_event(event);
	return ret;
}
