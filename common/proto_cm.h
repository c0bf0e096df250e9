/* SPDX-License-Identifier: MIT */
/*
 * The connection-management command family (ops SRD_CMD_CM_BASE and up):
 * what the rdma_ucm character device is to rdma-core's librdmacm.
 *
 * An event channel is one command connection that said HELLO and then
 * CM_OPEN; it needs no OPEN_DEVICE, as a channel is not tied to a device.
 * Its ids live and die with it.  CM_OPEN answers with one end of a stream
 * socket pair which the daemon keeps readable (a byte in it) while events
 * are queued, so the fd is pollable and a read blocks (as its flags say)
 * until an event is pending; the library reads the byte, then fetches one
 * event with CM_GET_EVENT, after which the daemon puts a byte back if more
 * events wait.  A fetch that finds no event (the last one's id was just
 * destroyed) answers -EAGAIN, and the library reads again.
 *
 * Ids are named by handles, daemon-wide and never reused at once; uid is
 * the library's own value, echoed in events.  Addresses travel as
 * struct sockaddr_storage (AF_INET or AF_INET6).
 */
#ifndef SOFTRDMA_COMMON_PROTO_CM_H
#define SOFTRDMA_COMMON_PROTO_CM_H

#include <assert.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "common/proto.h"

enum srd_cm_cmd {
	SRD_CMD_CM_OPEN = SRD_CMD_CM_BASE, /* reply fd: the event fd */
	SRD_CMD_CM_CREATE_ID,
	SRD_CMD_CM_DESTROY_ID,
	SRD_CMD_CM_BIND,
	SRD_CMD_CM_RESOLVE_ADDR,
	SRD_CMD_CM_RESOLVE_ROUTE,
	SRD_CMD_CM_QUERY,
	SRD_CMD_CM_INIT_QP_ATTR,
	SRD_CMD_CM_LISTEN,
	SRD_CMD_CM_CONNECT,
	SRD_CMD_CM_ACCEPT,
	SRD_CMD_CM_REJECT,
	SRD_CMD_CM_DISCONNECT,
	SRD_CMD_CM_NOTIFY,
	SRD_CMD_CM_SET_OPTION,
	SRD_CMD_CM_MIGRATE,
	SRD_CMD_CM_GET_EVENT,
	SRD_CMD_CM_STATS, /* any connection, no channel needed */
	SRD_CMD_CM_JOIN_MCAST,
	SRD_CMD_CM_LEAVE_MCAST,
	SRD_CMD_CM__END
};
#define SRD_CM_NCMDS (SRD_CMD_CM__END - SRD_CMD_CM_BASE)

/* Room for private data in requests and events: more than any CM
 * message's area, and every length an rdma_conn_param can express. */
#define SRD_CM_PRIVATE_DATA_MAX 256

/* Port spaces and option names are rdma_cma.h's values. */

/* --- ids ----------------------------------------------------------------- */
struct srd_cm_create_id_req {
	uint64_t uid;
	uint32_t ps;	  /* enum rdma_port_space */
	uint32_t qp_type; /* enum ibv_qp_type: RC, UC or UD */
};
/* CREATE_ID reply: struct srd_handle_rep.  DESTROY_ID, RESOLVE_ROUTE's
 * handle, QUERY, DISCONNECT: struct srd_handle_req. */

struct srd_cm_bind_req {
	uint32_t handle;
	uint32_t rsvd;
	struct sockaddr_storage addr;
};
/* BIND reply: the address bound, its port filled in. */
struct srd_cm_bind_rep {
	struct sockaddr_storage addr;
};

struct srd_cm_resolve_addr_req {
	uint32_t handle;
	uint32_t timeout_ms;
	struct sockaddr_storage src; /* ss_family 0: none given */
	struct sockaddr_storage dst;
};

struct srd_cm_resolve_route_req {
	uint32_t handle;
	uint32_t timeout_ms;
};

/* Where an id stands: its addresses, device and path. */
struct srd_cm_query_rep {
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	char dev_name[SRD_DEV_NAME_MAX]; /* "": not on a device yet */
	uint64_t node_guid;		 /* big endian */
	union ibv_gid sgid;
	union ibv_gid dgid;
	uint16_t pkey; /* host order */
	uint8_t port_num;
	uint8_t sgid_index;
	uint32_t ps;
	uint32_t qp_type;
	uint32_t num_paths; /* 1 once the route is resolved */
	/* the path (ibv_sa_path_rec's fields, host order) */
	uint32_t flow_label;
	uint8_t mtu; /* enum ibv_mtu */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t packet_life_time;
	uint8_t rate;
	uint8_t sl;
	uint16_t rsvd;
};

struct srd_cm_init_qp_attr_req {
	uint32_t handle;
	uint32_t qp_state; /* enum ibv_qp_state */
};
struct srd_cm_init_qp_attr_rep {
	struct ibv_qp_attr attr;
	uint32_t attr_mask;
	uint32_t rsvd;
};

struct srd_cm_listen_req {
	uint32_t handle;
	int32_t backlog;
};

/* What rdma_conn_param carries, plus the QP when the id has one. */
struct srd_cm_conn_param {
	uint32_t qp_num;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t private_data_len;
	uint8_t rsvd;
	uint8_t private_data[SRD_CM_PRIVATE_DATA_MAX];
	/* ECE (struct ibv_ece): what a REQ or REP carries in its vendor ID
	 * (24 bits) and its MAD's attribute modifier; in CONNECT_REQUEST
	 * and CONNECT_RESPONSE events, what the peer sent. */
	uint32_t ece_vendor_id;
	uint32_t ece_options;
};

struct srd_cm_connect_req {
	uint32_t handle;
	uint32_t rsvd;
	struct srd_cm_conn_param p;
};

/* ACCEPT: on a passive id, the reply to its request (REP, or SIDR_REP for
 * UD); on an active id that got CONNECT_RESPONSE, the RTU. */
struct srd_cm_accept_req {
	uint32_t handle;
	uint32_t rsvd;
	uint64_t uid;
	struct srd_cm_conn_param p;
};

struct srd_cm_reject_req {
	uint32_t handle;
	uint8_t private_data_len;
	uint8_t rsvd;
	/* The REJ's reason: 0 or 28 (consumer defined), or 35 (ECE
	 * vendor option not supported); anything else is EINVAL. */
	uint16_t reason;
	uint8_t private_data[SRD_CM_PRIVATE_DATA_MAX];
};

struct srd_cm_notify_req {
	uint32_t handle;
	uint32_t event; /* enum ibv_event_type */
};

#define SRD_CM_OPTVAL_MAX 64
struct srd_cm_set_option_req {
	uint32_t handle;
	uint32_t level;
	uint32_t optname;
	uint32_t optlen;
	uint8_t optval[SRD_CM_OPTVAL_MAX];
};

/* MIGRATE, sent on the channel the id moves to (same process). */
struct srd_cm_migrate_req {
	uint32_t handle;
	uint32_t rsvd;
	uint64_t uid;
};

/* --- events ---------------------------------------------------------------- */
/* GET_EVENT reply.  For CONNECT_REQUEST, handle names the new id (which
 * the library creates its side of) and listen_handle the listener. */
struct srd_cm_event_rep {
	uint64_t uid;
	uint64_t listen_uid;
	uint32_t handle;
	uint32_t listen_handle; /* SRD_NO_HANDLE unless CONNECT_REQUEST */
	uint32_t event;		/* enum rdma_cm_event_type */
	int32_t status;
	struct srd_cm_conn_param conn; /* conn, or ud's private data */
	/* UD (param.ud) */
	struct ibv_ah_attr ah_attr;
	uint32_t ud_qp_num;
	uint32_t ud_qkey;
	/* MULTICAST_JOIN / MULTICAST_ERROR: the join's uid. */
	uint64_t mc_uid;
};

/* --- multicast -------------------------------------------------------------- */
/* JOIN_MCAST: the id joins the group of an IP multicast address; the
 * answer is a MULTICAST_JOIN (or MULTICAST_ERROR) event carrying uid.
 * join_flags are enum rdma_cm_mc_join_flags.  LEAVE_MCAST names the
 * join by its uid.  Both answer with no payload. */
struct srd_cm_join_mcast_req {
	uint32_t handle;
	uint32_t join_flags;
	uint64_t uid;
	struct sockaddr_storage addr;
};
struct srd_cm_leave_mcast_req {
	uint32_t handle;
	uint32_t rsvd;
	uint64_t uid;
};

/* --- statistics ------------------------------------------------------------ */
/* What the CM holds now, and its counters since it started (all zero
 * before the first CM command). */
struct srd_cm_stats_rep {
	uint32_t chans; /* event channels */
	uint32_t ids;	/* rdma_cm ids */
	uint32_t conns; /* comm IDs, those in TIMEWAIT included */
	uint32_t listeners;
	uint32_t ports;		/* devices with a QP1 */
	uint32_t stale;		/* REQs refused as stale connections (REJ 10) */
	uint64_t mad_rx;	/* CM MADs received */
	uint64_t mad_tx;	/* MADs sent */
	uint64_t mad_bad;	/* dropped: not a well-formed CM MAD */
	uint64_t mad_unmatched; /* dropped: no conn, or not its state */
	uint64_t mad_dup;	/* duplicates */
	uint64_t mad_tx_drop;	/* could not be sent */
	uint64_t retransmits;
	uint64_t timeouts;
	uint64_t conns_made;
};

static_assert(sizeof(struct srd_cm_event_rep) + sizeof(struct srd_msg_hdr) <=
		      SRD_MSG_MAX,
	      "CM event fits a message");

/* --- events with what the library asks next ------------------------------ */
/* GET_EVENT with this request (no request: the plain srd_cm_event_rep)
 * answers with srd_cm_event_ext_rep: the event, where its id stands
 * (QUERY's reply) and, for CONNECT_REQUEST and CONNECT_RESPONSE, the QP
 * attributes INIT_QP_ATTR gives now for INIT, RTR and RTS, so the
 * library needs no more round trips to bring a QP up. */
#define SRD_CM_EVENT_EXT 1u
struct srd_cm_get_event_req {
	uint32_t flags; /* SRD_CM_EVENT_EXT */
	uint32_t rsvd;
};

enum {
	SRD_CM_ATTR_INIT,
	SRD_CM_ATTR_RTR,
	SRD_CM_ATTR_RTS,
	SRD_CM_NATTR
};

struct srd_cm_event_ext_rep {
	struct srd_cm_event_rep ev;
	struct srd_cm_query_rep query; /* valid if has_query */
	uint32_t has_query;
	uint32_t attr_valid; /* bit i: attr[i] (SRD_CM_ATTR_*) is valid */
	struct srd_cm_init_qp_attr_rep attr[SRD_CM_NATTR];
};

static_assert(sizeof(struct srd_cm_event_ext_rep) +
			      sizeof(struct srd_msg_hdr) <=
		      SRD_MSG_MAX,
	      "CM event with its extras fits a message");

#endif
