/* SPDX-License-Identifier: MIT */
/*
 * Names of the CM messages, of the REJ reasons and the SIDR and APR
 * statuses, and one-line descriptions of messages for traces.
 */
#include <stdbool.h>
#include <stdio.h>

#include "daemon/cm/cm_mad.h"
#include "daemon/cm/cm_mad_layout.h"

const char *cm_mad_str(uint16_t attr_id)
{
	const struct cm_layout *l = cm_layout_find(attr_id);

	if (l)
		return l->name;
	if (attr_id == CM_ATTR_CLASS_PORT_INFO)
		return "ClassPortInfo";
	return "unknown";
}

static const char *const rej_reason_names[] = {
	[CM_REJ_NO_QP] = "no QP",
	[CM_REJ_NO_EEC] = "no EEC",
	[CM_REJ_NO_RESOURCES] = "no resources",
	[CM_REJ_TIMEOUT] = "timeout",
	[CM_REJ_UNSUPPORTED] = "unsupported request",
	[CM_REJ_INVALID_COMM_ID] = "invalid comm ID",
	[CM_REJ_INVALID_COMM_INSTANCE] = "invalid comm instance",
	[CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
	[CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport type",
	[CM_REJ_STALE_CONN] = "stale connection",
	[CM_REJ_RDC_NOT_EXIST] = "RDC does not exist",
	[CM_REJ_INVALID_GID] = "invalid GID",
	[CM_REJ_INVALID_LID] = "invalid LID",
	[CM_REJ_INVALID_SL] = "invalid SL",
	[CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid traffic class",
	[CM_REJ_INVALID_HOP_LIMIT] = "invalid hop limit",
	[CM_REJ_INVALID_PACKET_RATE] = "invalid packet rate",
	[CM_REJ_INVALID_ALT_GID] = "invalid alternate GID",
	[CM_REJ_INVALID_ALT_LID] = "invalid alternate LID",
	[CM_REJ_INVALID_ALT_SL] = "invalid alternate SL",
	[CM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "invalid alternate traffic class",
	[CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alternate hop limit",
	[CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alternate packet rate",
	[CM_REJ_PORT_CM_REDIRECT] = "port CM redirect",
	[CM_REJ_PORT_REDIRECT] = "port redirect",
	[CM_REJ_INVALID_MTU] = "invalid MTU",
	[CM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient responder "
					       "resources",
	[CM_REJ_CONSUMER_DEFINED] = "consumer defined",
	[CM_REJ_INVALID_RNR_RETRY] = "invalid RNR retry count",
	[CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local comm ID",
	[CM_REJ_INVALID_CLASS_VERSION] = "invalid class version",
	[CM_REJ_INVALID_FLOW_LABEL] = "invalid flow label",
	[CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alternate flow label",
	[CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option not supported",
};

const char *cm_rej_reason_str(uint16_t reason)
{
	if (reason < sizeof(rej_reason_names) / sizeof(rej_reason_names[0]) &&
	    rej_reason_names[reason])
		return rej_reason_names[reason];
	return "unknown reason";
}

static const char *const sidr_status_names[] = {
	[CM_SIDR_SUCCESS] = "success",
	[CM_SIDR_UNSUPPORTED] = "service ID not supported",
	[CM_SIDR_REJECT] = "rejected by the service provider",
	[CM_SIDR_NO_QP] = "no QP",
	[CM_SIDR_REDIRECT] = "redirect",
	[CM_SIDR_UNSUPPORTED_VERSION] = "class version not supported",
};

const char *cm_sidr_status_str(uint8_t status)
{
	if (status < sizeof(sidr_status_names) / sizeof(sidr_status_names[0]))
		return sidr_status_names[status];
	return "unknown status";
}

static const char *const apr_status_names[] = {
	[CM_APR_SUCCESS] = "success",
	[CM_APR_INVALID_COMM_ID] = "invalid comm ID",
	[CM_APR_UNSUPPORTED] = "unsupported",
	[CM_APR_REJECT] = "rejected",
	[CM_APR_REDIRECT] = "redirect",
	[CM_APR_IS_CURRENT] = "path is current",
	[CM_APR_INVALID_QPN_EECN] = "invalid QPN/EECN",
	[CM_APR_INVALID_LID] = "invalid LID",
	[CM_APR_INVALID_GID] = "invalid GID",
	[CM_APR_INVALID_FLOW_LABEL] = "invalid flow label",
	[CM_APR_INVALID_TCLASS] = "invalid traffic class",
	[CM_APR_INVALID_HOP_LIMIT] = "invalid hop limit",
	[CM_APR_INVALID_PACKET_RATE] = "invalid packet rate",
	[CM_APR_INVALID_SL] = "invalid SL",
};

const char *cm_apr_status_str(uint8_t status)
{
	if (status < sizeof(apr_status_names) / sizeof(apr_status_names[0]))
		return apr_status_names[status];
	return "unknown status";
}

static const char *msg_code_str(uint8_t code, bool mra)
{
	switch (code) {
	case CM_MSG_CODE_REQ:
		return "REQ";
	case CM_MSG_CODE_REP:
		return "REP";
	case 2:
		return mra ? "LAP" : "other";
	default:
		return "reserved";
	}
}

/* The part of a line after the attribute name and TID. */
static int msg_body_format(char *buf, size_t size, const struct cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		return snprintf(buf, size,
				" lcid 0x%08x sid 0x%016llx qpn 0x%06x"
				" psn 0x%06x tst %u mtu %u rr %u id %u",
				m->req.local_comm_id,
				(unsigned long long)m->req.service_id,
				m->req.local_qpn, m->req.starting_psn,
				m->req.transport_type, m->req.path_mtu,
				m->req.responder_resources,
				m->req.initiator_depth);
	case CM_ATTR_MRA:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x mraed %s timeout %u",
				m->mra.local_comm_id, m->mra.remote_comm_id,
				msg_code_str(m->mra.message_mraed, true),
				m->mra.service_timeout);
	case CM_ATTR_REJ:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x rejected %s"
				" reason %u (%s) ari %u",
				m->rej.local_comm_id, m->rej.remote_comm_id,
				msg_code_str(m->rej.message_rejected, false),
				m->rej.reason, cm_rej_reason_str(m->rej.reason),
				m->rej.ari_length);
	case CM_ATTR_REP:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x"
				" psn 0x%06x rr %u id %u",
				m->rep.local_comm_id, m->rep.remote_comm_id,
				m->rep.local_qpn, m->rep.starting_psn,
				m->rep.responder_resources,
				m->rep.initiator_depth);
	case CM_ATTR_RTU:
		return snprintf(buf, size, " lcid 0x%08x rcid 0x%08x",
				m->rtu.local_comm_id, m->rtu.remote_comm_id);
	case CM_ATTR_DREP:
		return snprintf(buf, size, " lcid 0x%08x rcid 0x%08x",
				m->drep.local_comm_id, m->drep.remote_comm_id);
	case CM_ATTR_DREQ:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x",
				m->dreq.local_comm_id, m->dreq.remote_comm_id,
				m->dreq.remote_qpn_eecn);
	case CM_ATTR_LAP:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x qpn 0x%06x",
				m->lap.local_comm_id, m->lap.remote_comm_id,
				m->lap.remote_qpn_eecn);
	case CM_ATTR_APR:
		return snprintf(buf, size,
				" lcid 0x%08x rcid 0x%08x status %u (%s)",
				m->apr.local_comm_id, m->apr.remote_comm_id,
				m->apr.status,
				cm_apr_status_str(m->apr.status));
	case CM_ATTR_SIDR_REQ:
		return snprintf(buf, size,
				" rid 0x%08x sid 0x%016llx pkey 0x%04x",
				m->sidr_req.request_id,
				(unsigned long long)m->sidr_req.service_id,
				m->sidr_req.pkey);
	case CM_ATTR_SIDR_REP:
		return snprintf(buf, size,
				" rid 0x%08x status %u (%s) qpn 0x%06x"
				" qkey 0x%08x sid 0x%016llx",
				m->sidr_rep.request_id, m->sidr_rep.status,
				cm_sidr_status_str(m->sidr_rep.status),
				m->sidr_rep.qpn, m->sidr_rep.qkey,
				(unsigned long long)m->sidr_rep.service_id);
	default:
		return snprintf(buf, size, " attr 0x%04x", m->hdr.attr_id);
	}
}

int cm_msg_format(char *buf, size_t size, const struct cm_msg *m)
{
	int head, body;
	size_t used;

	head = snprintf(buf, size, "%s tid 0x%llx", cm_mad_str(m->hdr.attr_id),
			(unsigned long long)m->hdr.tid);
	if (head < 0)
		return head;
	/* Carry on where the text stops, even if the head was cut. */
	used = (size_t)head < size ? (size_t)head : (size ? size - 1 : 0);
	body = msg_body_format(size ? buf + used : NULL, size ? size - used : 0,
			       m);
	if (body < 0)
		return body;
	return head + body;
}
