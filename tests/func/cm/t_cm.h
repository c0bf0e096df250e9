/* SPDX-License-Identifier: MIT */
/*
 * What the connection manager tests share: channels, waiting for one
 * event with a deadline, a listener on 127.0.0.1, a connected pair of
 * ids with RC QPs, and sending through them.
 */
#ifndef SOFTRDMA_TESTS_T_CM_H
#define SOFTRDMA_TESTS_T_CM_H

#include <rdma/rdma_cma.h>

#include "daemon/cm/cm_mad.h"
#include "common/proto_cm.h"

#include "t_util.h"

/* Any status (in t_cm_expect). */
#define T_CM_ANY_STATUS 0x7fffffff

struct rdma_event_channel *t_cm_channel(void);
/* The next event on ch within timeout_ms, or NULL. */
struct rdma_cm_event *t_cm_next(struct rdma_event_channel *ch, int timeout_ms);
/* The next event must be type with status (T_CM_ANY_STATUS: any), on
 * id (NULL: any).  The caller acks it. */
struct rdma_cm_event *t_cm_expect_at(const char *file, int line,
				     struct rdma_event_channel *ch,
				     enum rdma_cm_event_type type, int status,
				     struct rdma_cm_id *id);
#define T_CM_EXPECT(ch, type, status, id) \
	t_cm_expect_at(__FILE__, __LINE__, ch, type, status, id)
/* As T_CM_EXPECT, acking the event. */
#define T_CM_EXPECT_ACK(ch, type, status, id) \
	rdma_ack_cm_event(T_CM_EXPECT(ch, type, status, id))
/* No event within quiet_ms. */
void t_cm_expect_none_at(const char *file, int line,
			 struct rdma_event_channel *ch, int quiet_ms);
#define T_CM_EXPECT_NONE(ch, ms) t_cm_expect_none_at(__FILE__, __LINE__, ch, ms)

/* 127.0.0.1:port (port in host order). */
void t_cm_addr(struct sockaddr_in *sin, uint16_t port);
/* A listener on 127.0.0.1, port chosen by the CM; returns the port. */
uint16_t t_cm_listen(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		     enum rdma_port_space ps);
/* Resolve address and route of an active id towards 127.0.0.1:port. */
void t_cm_resolve(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		  uint16_t port);
/* An RC (or UD) QP on id, with its own CQs made by librdmacm. */
void t_cm_qp(struct rdma_cm_id *id, enum ibv_qp_type type);

/* Two ids connected through the CM, each with its own channel. */
struct t_cm_pair {
	struct rdma_event_channel *pch, *ach; /* passive, active */
	struct rdma_cm_id *listen, *server, *client;
	uint16_t port;
};
void t_cm_pair_connect(struct t_cm_pair *p);
/* The client disconnects, then the server: each sees DISCONNECTED on its
 * channel (pch the server's, ach the client's). */
void t_cm_disconnect(struct rdma_event_channel *pch,
		     struct rdma_event_channel *ach, struct rdma_cm_id *client,
		     struct rdma_cm_id *server);
/* Both sides disconnect; both see DISCONNECTED. */
void t_cm_pair_disconnect(struct t_cm_pair *p);
void t_cm_pair_destroy(struct t_cm_pair *p);

/* A registered buffer on an id's PD. */
struct ibv_mr *t_cm_mr(struct rdma_cm_id *id, size_t len);
void t_cm_mr_free(struct ibv_mr *mr);
/* Send len bytes of mr from a to b (b posts the receive first) and check
 * they arrive. */
void t_cm_send_check(struct rdma_cm_id *a, struct ibv_mr *amr,
		     struct rdma_cm_id *b, struct ibv_mr *bmr, size_t len,
		     uint32_t seed);

/* What the daemon's CM holds now (CM_STATS, on a connection of our own). */
void t_cm_stats(struct srd_cm_stats_rep *r);
/* One administration command (common/proto_admin.h) that must succeed,
 * with a reply of exactly rep_len bytes. */
void t_cm_admin(uint32_t op, const void *req, uint32_t len, void *rep,
		size_t rep_len);
/* Wait up to timeout_ms for the CM to hold no conn (TIMEWAIT over) and
 * at most ids ids; fails the test otherwise. */
void t_cm_wait_idle_at(const char *file, int line, uint32_t ids,
		       int timeout_ms);
#define T_CM_WAIT_IDLE(ids, ms) t_cm_wait_idle_at(__FILE__, __LINE__, ids, ms)

/* A UD QP of ours with the GSI Q_Key, sending raw MADs to QP1 of our
 * own GID (what a peer's CM would send, forged). */
#define T_CM_GSI_QKEY 0x80010000u
struct t_cm_gsi {
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct t_buf buf;
	uint64_t n;
};
void t_cm_gsi_open(struct t_cm_gsi *g);
void t_cm_gsi_send(struct t_cm_gsi *g, const void *p, uint32_t len);
void t_cm_gsi_send_msg(struct t_cm_gsi *g, const struct cm_msg *m);
/* A well-formed REQ for 127.0.0.1:port from 127.0.0.1:5555: comm ID
 * 0x11112222, CA GUID 0x4242, QPN 0x999. */
void t_cm_forged_req(const struct t_cm_gsi *g, struct cm_msg *m, uint16_t port);

#endif
