/* SPDX-License-Identifier: MIT */
/*
 * The connection manager inside softrdmad, as Linux has it in the kernel:
 *
 *   gsi.c    QP1 of every device: a UD QP the daemon owns, posting and
 *            reaping MADs through the transport engine like any QP
 *   ib_cm.c  the IB CM protocol: comm IDs, REQ/REP/RTU/REJ/MRA/DREQ/DREP
 *            and SIDR, retransmission, TIMEWAIT
 *   cma.c    rdma_cm ids on top of it: addresses, ports, listeners,
 *            the events a consumer sees
 *   addr.c   address and route resolution, port spaces
 *   event.c  event channels: one command connection each
 *   cm_cmds.c the command family (common/proto_cm.h)
 *
 * ib_cm.c calls up into cma.c (cma_req_recv, cma_conn_event) the way the
 * kernel's ib_cm calls its consumer's handler; nothing below cma.c knows
 * about addresses or channels.
 */
#ifndef SOFTRDMA_DAEMON_CM_CM_H
#define SOFTRDMA_DAEMON_CM_CM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>

#include "daemon/cm/cm_mad.h"
#include "common/list.h"
#include "common/proto_cm.h"
#include "daemon/core/core.h"
#include "daemon/device/link.h"

/* The kernel CM's settings for RoCE (rdma_cm's CMA_* values). */
#define CM_GSI_QKEY 0x80010000u
#define CM_RESPONSE_TIMEOUT 20 /* 4.096 us * 2^20, about 4 s */
#define CM_MAX_RETRIES 15
#define CM_PACKET_LIFE_TIME 18
#define CM_MRA_SERVICE_TIMEOUT 24
#define CM_HOP_LIMIT 64
#define CM_UDP_QKEY 0x01234567u /* RDMA_UDP_QKEY */
#define CM_PKEY 0xffff

struct srd_cm;
struct cm_port;
struct cm_conn;
struct cma_id;
struct cm_chan;

/* Counters of the CM, for statistics. */
struct srd_cm_counters {
	uint64_t mad_rx;	/* CM MADs received and decoded */
	uint64_t mad_tx;	/* MADs posted */
	uint64_t mad_bad;	/* dropped: not a well-formed CM MAD */
	uint64_t mad_unmatched; /* dropped: no conn, or not in this state */
	uint64_t mad_dup;	/* duplicates (answered or ignored) */
	uint64_t mad_tx_drop;	/* could not be sent */
	uint64_t retransmits;
	uint64_t timeouts; /* conns given up after their retries */
	uint64_t conns;	   /* comm IDs made */
	uint64_t stale;	   /* REQs refused as stale (REJ 10) */
};

/* Where one peer is, as seen from one of our GIDs. */
struct cm_av {
	union ibv_gid sgid; /* ours */
	union ibv_gid dgid; /* the peer's */
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
};

/* What the GRH of a received MAD says. */
struct cm_mad_src {
	struct cm_port *port;
	union ibv_gid sgid; /* the peer's */
	union ibv_gid dgid; /* ours */
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint32_t src_qp;
};

struct srd_cm {
	struct srd_daemon *d;
	struct list_head ports;	    /* struct cm_port */
	struct list_head chans;	    /* struct cm_chan */
	struct list_head conns;	    /* struct cm_conn */
	struct list_head bound;	    /* ids holding a port (cma_id.bind_node) */
	struct list_head listeners; /* ids listening (cma_id.listen_node) */
	struct srd_table ids;	    /* cma ids by handle */
	struct srd_table conn_tab;  /* conns by comm ID */
	uint32_t comm_salt;
	uint64_t tid_next;
	uint64_t deadline; /* earliest conn timer, UINT64_MAX: none */
	uint64_t next_dev_scan;
	struct srd_cm_counters cnt;
	struct srd_dev_notifier notifier; /* devices coming and going */
};

/* What the CM holds and its counters, as CM_STATS reports them. */
void cm_stats(struct srd_daemon *d, struct srd_cm_stats_rep *r);

/* --- gsi.c --------------------------------------------------------------- */
/* The device's QP1, made when first needed.  NULL: out of resources. */
struct cm_port *cm_port_get(struct srd_cm *cm, struct srd_device *dev);
struct cm_port *cm_port_find(struct srd_cm *cm, const struct srd_device *dev);
struct srd_device *cm_port_dev(const struct cm_port *p);
void cm_port_destroy(struct cm_port *p);
/* Post one MAD (MAD_SIZE bytes) along path.  0, or a negative errno. */
int cm_port_send(struct cm_port *p, const uint8_t *mad,
		 const struct cm_av *path);
/* Reap every QP1's completions, feeding received MADs to ib_cm.c. */
bool cm_ports_poll(struct srd_cm *cm);
void cm_ports_destroy(struct srd_cm *cm);

/* --- ib_cm.c ------------------------------------------------------------- */
enum cm_state {
	CM_IDLE,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_MRA_REQ_SENT,
	CM_MRA_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,
	CM_MRA_REP_SENT,
	CM_MRA_REP_RCVD,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
};

/* Enhanced connection establishment: a vendor's options, carried in a
 * REQ's or REP's vendor ID and its MAD header's attribute modifier. */
struct cm_ece {
	uint32_t vendor_id; /* 24 bits on the wire */
	uint32_t attr_mod;
};

/* One communication: a comm ID and what both ends agreed. */
struct cm_conn {
	struct list_node node; /* in cm->conns */
	struct srd_cm *cm;
	struct cma_id *id; /* NULL once the consumer let go */
	struct cm_port *port;
	struct cm_av path;
	uint8_t state; /* enum cm_state */
	bool passive;
	uint32_t local_id;
	uint32_t remote_id;
	uint64_t remote_guid;
	uint64_t tid;
	uint64_t service_id;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t sq_psn; /* the peer's Starting PSN */
	uint32_t rq_psn; /* ours, in our REQ or REP */
	uint32_t remote_qkey;
	uint8_t transport; /* enum cm_transport */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;  /* what our QP uses: the peer's REQ or REP */
	uint8_t rnr_retry_ask;	  /* what our REQ or REP asks of the peer */
	uint8_t path_mtu;	  /* enum ibv_mtu */
	uint8_t ack_timeout;	  /* the QP's local ACK timeout */
	uint8_t packet_life_time; /* the path's (active side) */
	uint8_t flow_control;
	uint8_t srq;
	uint8_t peer_cm_timeout; /* how long the peer takes to answer */
	uint8_t max_retries;
	uint8_t retries;	  /* left for the message in flight */
	struct cm_ece ece_local;  /* what our REQ or REP says */
	struct cm_ece ece_remote; /* what the peer's said */
	uint64_t deadline;	  /* 0: no timer */
	uint64_t timeout_ns;
	bool have_mad; /* mad holds what a resend sends */
	uint8_t mad[MAD_SIZE];
};

/* Events ib_cm.c reports to cma.c. */
enum cm_event {
	CM_EV_REP,	     /* REP received (active) */
	CM_EV_RTU,	     /* RTU received, or COMM_EST (passive) */
	CM_EV_REJ,	     /* REJ received; the conn is gone after */
	CM_EV_DREQ,	     /* DREQ received */
	CM_EV_DREP,	     /* DREP received */
	CM_EV_UNREACHABLE,   /* REQ, REP or SIDR_REQ ran out of retries */
	CM_EV_DREQ_TIMEOUT,  /* DREQ unanswered: in TIMEWAIT anyway */
	CM_EV_TIMEWAIT_EXIT, /* the conn is gone after */
	CM_EV_SIDR_REP,	     /* the conn is gone after */
};

/* cm.c: the CM state, made by the first CM command. */
int cm_init(struct srd_daemon *d);
/* Seeds comm IDs, PSNs and transaction IDs. */
void cm_seed(struct srd_cm *cm);
struct cm_conn *cm_conn_new(struct srd_cm *cm, struct cm_port *port,
			    const struct cm_av *path);
/* Frees a conn (no message sent); the id forgets it. */
void cm_conn_free(struct cm_conn *c);
/* The consumer lets go: say what the state asks (REJ, DREQ, DREP). */
void cm_conn_release(struct cm_conn *c);

/* Messages: each builds from the conn's fields, sends, arms the timer
 * and moves the state.  0 or a negative errno. */
int cm_send_req(struct cm_conn *c, const void *pdata, size_t len);
int cm_send_rep(struct cm_conn *c, const void *pdata, size_t len);
int cm_send_rtu(struct cm_conn *c);
/* REJ, then the conn is freed. */
int cm_send_rej(struct cm_conn *c, uint16_t reason, const void *ari,
		size_t ari_len, const void *pdata, size_t len);
int cm_send_dreq(struct cm_conn *c);
int cm_send_drep(struct cm_conn *c);
int cm_send_sidr_req(struct cm_conn *c, const void *pdata, size_t len);
/* SIDR_REP, then the conn is freed. */
int cm_send_sidr_rep(struct cm_conn *c, uint8_t status, uint32_t qpn,
		     uint32_t qkey, const void *pdata, size_t len);
/* The passive side sees traffic before the RTU (rdma_notify COMM_EST). */
int cm_establish(struct cm_conn *c);

void cm_mad_recv(struct srd_cm *cm, const struct cm_mad_src *src,
		 const struct cm_msg *m);
bool cm_timers(struct srd_cm *cm, uint64_t now);
/* The path back to whoever sent a MAD. */
int cm_av_from_src(const struct cm_mad_src *src, struct cm_av *path);
/* IBTA time exponent to nanoseconds, as the kernel rounds it (ms). */
uint64_t cm_time_ns(uint8_t iba_time);
/* The kernel's local ACK timeout from a CA's ACK delay and a life time. */
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

/* --- cma.c --------------------------------------------------------------- */
enum cma_state {
	CMA_IDLE,
	CMA_ADDR_BOUND,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,
	CMA_DISCONNECT,
	CMA_LISTEN,
	CMA_DEVICE_REMOVAL,
};

struct cma_id {
	uint32_t handle;
	uint64_t uid;
	struct srd_cm *cm;
	struct cm_chan *chan;
	uint8_t state; /* enum cma_state */
	uint16_t ps;
	uint8_t qp_type;
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	bool bound; /* holds its source port */
	struct list_node bind_node;
	struct list_node listen_node;
	struct cm_port *port; /* NULL: on no device yet */
	uint8_t sgid_index;
	union ibv_gid sgid;
	union ibv_gid dgid;
	bool route;
	uint8_t mtu; /* enum ibv_mtu */
	uint8_t hop_limit;
	uint8_t tos;
	bool tos_set;
	bool reuseaddr;
	bool afonly;
	uint8_t timeout; /* RDMA_OPTION_ID_ACK_TIMEOUT */
	bool timeout_set;
	int backlog;
	int pending;		 /* CONNECT_REQUESTs not fetched yet */
	struct cma_id *listener; /* until its CONNECT_REQUEST is fetched */
	struct cm_conn *conn;
	uint32_t qkey;
	bool disconnect_reported;
};

struct cma_id *cma_id_get(struct srd_cm *cm, struct cm_chan *ch,
			  uint32_t handle);
int cma_create_id(struct srd_cm *cm, struct cm_chan *ch, uint64_t uid,
		  uint16_t ps, uint8_t qp_type, struct cma_id **out);
void cma_destroy_id(struct cma_id *id);
int cma_listen(struct cma_id *id, int backlog);
int cma_connect(struct cma_id *id, const struct srd_cm_conn_param *p);
int cma_accept(struct cma_id *id, const struct srd_cm_conn_param *p);
/* reason: 0 (consumer defined), 28 or 35 (ECE option not supported). */
int cma_reject(struct cma_id *id, const void *pdata, size_t len,
	       uint16_t reason);
int cma_disconnect(struct cma_id *id);
int cma_notify(struct cma_id *id, uint32_t event);
int cma_init_qp_attr(struct cma_id *id, enum ibv_qp_state state,
		     struct ibv_qp_attr *attr, uint32_t *mask);
int cma_set_option(struct cma_id *id, uint32_t level, uint32_t name,
		   const void *val, uint32_t len);
void cma_query(struct cma_id *id, struct srd_cm_query_rep *r);
/* A device is going away: its ids get DEVICE_REMOVAL. */
void cma_device_removed(struct srd_cm *cm, struct cm_port *p);

/* Up-calls from ib_cm.c. */
/* A REQ or SIDR_REQ on a new conn: 0 if a listener took it, else the
 * REJ reason (SIDR: the SIDR_REP status) to answer with, or -ENOMEM to
 * drop it without an answer (backlog full: the peer retries). */
int cma_req_recv(struct srd_cm *cm, struct cm_conn *c, const struct cm_msg *m);
void cma_conn_event(struct cma_id *id, enum cm_event ev, const struct cm_msg *m,
		    int status);

/* --- mcast.c ------------------------------------------------------------ */
/* rdma_join_multicast on RoCE: checks, then MULTICAST_JOIN (the library
 * attaches the QP).  0 or a negative errno. */
int cma_join_mcast(struct cma_id *id, const struct srd_cm_join_mcast_req *req);
int cma_leave_mcast(struct cma_id *id, uint64_t uid);

/* --- addr.c ------------------------------------------------------------- */
bool cma_addr_any(const struct sockaddr_storage *a);
bool cma_addr_loopback(const struct sockaddr_storage *a);
uint16_t cma_addr_port(const struct sockaddr_storage *a);
void cma_addr_set_port(struct sockaddr_storage *a, uint16_t port);
/* An IP address as a RoCE v2 GID (IPv4-mapped for IPv4). */
void cma_addr_to_gid(const struct sockaddr_storage *a, union ibv_gid *gid);
int cma_addr_check(const struct sockaddr_storage *a);
/* The device owning an address (a GID), and its index there. */
struct srd_device *cma_addr_dev(struct srd_cm *cm,
				const struct sockaddr_storage *a,
				uint8_t *gid_index);
/* Bind id to addr (port 0: an ephemeral one).  0 or a negative errno. */
int cma_bind(struct cma_id *id, const struct sockaddr_storage *addr);
void cma_unbind(struct cma_id *id);
/* May a bound id listen (no other id shares its port)? */
int cma_listen_check(struct cma_id *id);
/* Resolution: fills the id's source, device and GIDs. */
int cma_resolve_addr(struct cma_id *id, const struct sockaddr_storage *src,
		     const struct sockaddr_storage *dst);
int cma_resolve_route(struct cma_id *id);

/* --- event.c ------------------------------------------------------------- */
struct cm_chan {
	struct list_node node; /* in cm->chans */
	struct srd_cm *cm;
	struct srd_client *c;
	int rfd; /* the library's end: a byte per event queued */
	int wfd;
	struct list_head events; /* struct cm_event_rec, oldest first */
	bool armed;		 /* the byte saying "events wait" was sent */
};

struct cm_chan *cm_chan_of(struct srd_cm *cm, const struct srd_client *c);
int cm_chan_open(struct srd_cm *cm, struct srd_client *c, int *fd);
void cm_chan_destroy(struct cm_chan *ch);
/* Queue an event on id's channel. */
void cma_event_queue(struct cma_id *id, const struct srd_cm_event_rep *rec);
/* The oldest event: 0, or -EAGAIN when none is queued. */
int cm_chan_take(struct cm_chan *ch, struct srd_cm_event_rep *rec,
		 struct cma_id **id);
/* Drop the events queued for id; move them to another channel. */
void cma_events_drop(struct cma_id *id);
void cma_events_move(struct cma_id *id, struct cm_chan *to);

#endif
