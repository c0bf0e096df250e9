/* SPDX-License-Identifier: MIT */
/*
 * The transport engine under test without sockets: a daemon core in this
 * process (t_core), real PDs, MRs, CQs, QPs and SRQs made through its
 * command handlers, WQEs written straight into the rings, engine passes
 * run by hand on a clock the test controls, CQEs read from the CQ rings.
 */
#ifndef SOFTRDMA_TESTS_UNIT_ENGINE_HARNESS_H
#define SOFTRDMA_TESTS_UNIT_ENGINE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/transport/engine.h"
#include "tests/unit/t_core.h"

struct eh {
	struct t_core t;
	uint32_t pd;
	uint64_t now;	      /* the engine's clock */
	uint64_t step;	      /* added to now by every pass */
	uint32_t stage_bytes; /* staging area of the QPs eh_qp makes */
};

struct eh_mr {
	struct srd_mr *mr;
	uint32_t handle;
	uint32_t lkey;
	uint8_t *p; /* this process's view; iova == address */
	size_t len;
};

struct eh_cq {
	struct srd_cq *cq;
	uint32_t cons;
};

struct eh_qp {
	struct srd_qp *qp;
	uint32_t handle;
	uint32_t qpn;
	uint32_t sq_prod;
	uint32_t rq_prod;
};

struct eh_srq {
	struct srd_srq *srq;
	uint32_t handle;
	uint32_t prod;
};

/* Connection parameters; zero fields take the defaults shown. */
struct eh_conn {
	enum ibv_mtu mtu;	/* IBV_MTU_1024 */
	int access;		/* remote write|read|atomic, local write */
	uint8_t timeout;	/* 0: no retransmit timer */
	uint8_t retry_cnt;	/* 7 */
	uint8_t rnr_retry;	/* 7 */
	uint8_t min_rnr_timer;	/* 1 (10 us) */
	uint8_t max_rd_atomic;	/* 16 */
	int max_dest_rd_atomic; /* 16; -1 for 0 */
	bool no_access;		/* qp_access_flags 0 */
	/* A peer outside the device (packets the test makes itself): */
	const union ibv_gid *dgid; /* the device's GID 0 */
	uint8_t sgid_index;	   /* 0 */
	bool has_rq_psn; /* rq_psn below, else one made from the QPN */
	uint32_t rq_psn;
};

void eh_init(struct eh *h);
void eh_fini(struct eh *h);
uint32_t eh_pd(struct eh *h);
void eh_mr(struct eh *h, uint32_t pd, size_t len, int access,
	   struct eh_mr *out);
/* Registration where the daemon reaches the pages with process_vm. */
void eh_mr_pvm(struct eh *h, uint32_t pd, size_t len, int access,
	       struct eh_mr *out);
int eh_dereg(struct eh *h, struct eh_mr *m);
void eh_cq(struct eh *h, uint32_t cqe, struct eh_cq *out);
void eh_srq(struct eh *h, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
	    struct eh_srq *out);
/* Create a QP; cap NULL: 64 WRs, 4 SGEs, 64 inline bytes. */
void eh_qp(struct eh *h, uint32_t pd, enum ibv_qp_type type, struct eh_cq *scq,
	   struct eh_cq *rcq, struct eh_srq *srq, const struct ibv_qp_cap *cap,
	   bool sig_all, struct eh_qp *out);
int eh_destroy_qp(struct eh *h, struct eh_qp *q);
int eh_modify(struct eh *h, struct eh_qp *q, struct ibv_qp_attr *a, int mask);
/* RESET -> INIT -> RTR -> RTS toward dest_qpn (RC/UC), or the UD
 * sequence with qkey. */
void eh_connect(struct eh *h, struct eh_qp *q, uint32_t dest_qpn,
		const struct eh_conn *c);
void eh_connect_pair(struct eh *h, struct eh_qp *a, struct eh_qp *b,
		     const struct eh_conn *c);
void eh_ud_ready(struct eh *h, struct eh_qp *q, uint32_t qkey);
uint32_t eh_ah(struct eh *h, uint32_t pd);

/* A send WQE: fill w, sges follow as given (or inline bytes). */
void eh_post_send(struct eh_qp *q, const struct srd_send_wqe *w,
		  const struct srd_sge *sge, const void *inl);
void eh_post_recv(struct eh_qp *q, uint64_t wr_id, const struct srd_sge *sge,
		  uint32_t num_sge);
void eh_post_srq(struct eh_srq *s, uint64_t wr_id, const struct srd_sge *sge,
		 uint32_t num_sge);
struct srd_sge eh_sge(const struct eh_mr *m, size_t off, uint32_t len);

/* A packet from a peer outside the device, through the UDP receive path:
 * p holds the BTH onwards with the last 4 bytes left for the ICRC, which
 * is filled in here; peer is an IPv4-mapped GID, the destination q's
 * device GID 0. */
void eh_bth(uint8_t *p, uint8_t opcode, uint32_t qpn, uint32_t psn);
void eh_udp_rx(struct eh *h, const struct eh_qp *q, const union ibv_gid *peer,
	       uint8_t *p, size_t len);
/* An ACK or NAK (AETH syndrome, MSN) for psn from peer to q. */
void eh_udp_ack(struct eh *h, const struct eh_qp *q, const union ibv_gid *peer,
		uint32_t psn, uint8_t syndrome, uint32_t msn);

/* Engine passes; returns how many did work. */
int eh_run(struct eh *h, int passes);
/* Run until nothing happens for a pass (at most max passes). */
void eh_settle(struct eh *h);
/* Poll one CQE; false if none. */
bool eh_poll(struct eh_cq *cq, struct srd_cqe *out);
/* Run passes until a CQE arrives; fails the test after max passes. */
struct srd_cqe eh_wait(struct eh *h, struct eh_cq *cq, int max);
/* No CQE pending. */
void eh_none(struct eh_cq *cq);
/* One async event if any: true and *ev. */
bool eh_event(struct eh *h, struct srd_async_event *ev);
/* Wait for an event of the given type (others are skipped). */
void eh_expect_event(struct eh *h, uint32_t type, uint64_t user_handle);

static inline enum ibv_qp_state eh_state(const struct eh_qp *q)
{
	return q->qp->attr.qp_state;
}

#define EH_CQE(cqe, st, op, id)           \
	do {                              \
		T_EQ((cqe).status, (st)); \
		T_EQ((cqe).opcode, (op)); \
		T_EQ((cqe).wr_id, (id));  \
	} while (0)

#endif
