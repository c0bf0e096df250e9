/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's private state and the interfaces between its
 * parts: requester (WQEs to packets), responder (requests to execution,
 * ACKs and NAKs), completer (responses to CQEs, retries), the wires, and
 * flushing.
 *
 * Packets on the in-memory wire are delivered synchronously: wire_send()
 * returns after the destination processed the packet.  A packet's payload
 * reference therefore never outlives the engine pass that built it, and
 * nothing the main loop does between passes (deregistering an MR,
 * destroying a QP) can leave a packet pointing at freed memory.  The
 * recursion is bounded: requester -> responder -> completer, and the
 * completer never sends.
 */
#ifndef SOFTRDMA_TRANSPORT_ENGINE_H
#define SOFTRDMA_TRANSPORT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/net/roce.h"
#include "daemon/core/objects.h"
#include "daemon/transport/dma.h"
#include "daemon/transport/pkt.h"

#define SRD_TP_MAX_SGE 32
#define SRD_MAX_MSG_SZ 0x80000000ull /* port max_msg_sz */
#define SRD_REQ_BUDGET 128	     /* packets a requester sends per pass */
#define SRD_READ_BUDGET 128	     /* READ response packets per pass */
#define SRD_PKTS_PER_ACK 64	     /* AckReq at least this often */
#define SRD_MAX_UNACKED 8192	     /* PSN window of a requester */
#define SRD_CWND_MIN 16		     /* smallest window after losses */
#define SRD_CWND_INIT 64	     /* window of a new connection */
/* A round trip longer than the path's own by this much (and by the
 * path's own again) means a queue is building toward the peer. */
#define SRD_QDELAY_NS 2000000ull
#define SRD_RTT_EPOCH_NS \
	2000000000ull /* the path's round trip is kept this long */

/* Engine-wide state. */
#define SRD_ACK_DEFER_MAX 64 /* QPs with an ACK held over a receive batch */

struct srd_engine {
	struct srd_daemon *d;
	uint64_t now;	  /* time of the current pass */
	bool in_progress; /* inside engine_progress() */
	/*
	 * While a batch from the UDP socket is handed out, RC ACKs wait for
	 * its end: one ACK for the newest PSN of each QP says what the ACKs
	 * of every packet asking for one would (fewer packets both ways).
	 */
	bool defer_acks;
	uint32_t nack_deferred;
	struct srd_qp_transport *ack_deferred[SRD_ACK_DEFER_MAX];
	uint64_t wire_drops;
	struct srd_wire *wire;	     /* wire.h */
	struct list_head place_busy; /* rings with jobs out (place.c) */
};

enum srd_swqe_state {
	SWQE_POSTED, /* fetched, no packet sent */
	SWQE_ACTIVE, /* some packets sent (or being resent) */
	SWQE_SENT,   /* every packet sent, waiting for the response */
	SWQE_BAD,    /* failed a local check: completes with status */
	SWQE_DONE,   /* a local operation, executed: completes in order */
};

enum srd_swqe_kind {
	SWQE_K_SEND,
	SWQE_K_WRITE,
	SWQE_K_READ,
	SWQE_K_ATOMIC,
	SWQE_K_LOCAL, /* BIND_MW, LOCAL_INV: executed by the requester */
};

/* The engine's private copy of a send WQE and its progress. */
struct srd_swqe {
	uint8_t state;	/* enum srd_swqe_state */
	uint8_t kind;	/* enum srd_swqe_kind */
	uint8_t status; /* enum ibv_wc_status for SWQE_BAD */
	bool imm;
	bool inv;	 /* SEND with Invalidate: the last packet has an IETH */
	uint32_t length; /* message length */
	uint32_t first_psn; /* RC/UC: PSN of the first packet */
	uint32_t npkts;	    /* PSNs the message uses */
	uint32_t pkts_sent; /* SEND/WRITE: packets sent so far */
	uint32_t rd_pkts;   /* READ: responses received */
	/* READ: placement jobs still out (place.c).  A READ whose responses
	 * all came is DONE, and retires once this is 0. */
	uint32_t placing;
	bool rd_freed;	  /* READ: its rd_atomic credit went back early */
	uint64_t rd_done; /* READ: bytes received */
	/* UD: where to */
	union ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t sl;
	/* the slot as copied from the ring: header, then SGEs or inline */
	struct srd_send_wqe w;
	_Alignas(8) uint8_t body[];
};

/* A receive WQE taken from the RQ or the SRQ. */
struct srd_rwqe {
	bool valid;
	bool srq;
	bool malformed; /* num_sge beyond the queue's max_sge or slot */
	uint32_t idx;	/* free-running RQ (or SRQ) index */
	uint64_t wr_id;
	uint32_t num_sge;
	uint64_t total;	      /* sum of SGE lengths */
	uint64_t done;	      /* bytes written so far */
	struct srd_srq *xsrq; /* taken from this XRC SRQ: completes on its CQ */
	struct srd_sge sge[SRD_TP_MAX_SGE];
};

enum srd_res_type {
	SRD_RES_NONE,
	SRD_RES_READ,
	SRD_RES_ATOMIC,
	SRD_RES_RESP0, /* ATOMIC WRITE, FLUSH: a zero-length READ response */
};

/* Responder resource: what a duplicate READ or atomic needs to replay. */
struct srd_resp_res {
	uint8_t type;
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t rkey;
	uint64_t va; /* READ: original range */
	uint32_t length;
	uint64_t orig; /* atomic: value returned */
	/* READ reply in progress */
	uint32_t cur_psn;
	uint64_t cur_va;
	uint64_t resid;
	bool cur_first;
};

/* Responder's view of the message in progress. */
enum srd_resp_seq {
	SRD_SEQ_NONE,
	SRD_SEQ_SEND,
	SRD_SEQ_WRITE,
};

struct srd_qp_transport {
	struct srd_qp *qp;
	struct srd_engine *eng;

	/* --- send queue and requester --- */
	uint8_t *swq; /* sq.entries private WQE copies */
	uint32_t swq_stride;
	uint32_t sq_head;    /* oldest WQE not completed */
	uint32_t sq_next;    /* WQE the requester works on */
	uint32_t sq_fetched; /* WQEs copied from the ring */
	uint32_t psn;	     /* next PSN to send */
	uint32_t psn_max;    /* next PSN after the highest ever sent */
	uint32_t una_psn;    /* oldest unacknowledged PSN */
	uint32_t noack_pkts;
	/* RC: packets allowed in flight, SRD_CWND_MIN..SRD_MAX_UNACKED.
	 * Go-back-N resends all in flight after a loss, so a lossy path
	 * gets a small window: it starts at SRD_CWND_INIT and grows by what
	 * each ACK acknowledges up to ssthresh (doubling each round trip),
	 * by one packet a window above it; a loss halves it (once a
	 * window: until una_psn passes recover_psn) and sets ssthresh
	 * there, a timeout sets it to the minimum. */
	uint32_t cwnd;
	uint32_t ssthresh;
	uint32_t cwnd_acc; /* packets acknowledged toward the next +1 */
	uint32_t recover_psn;
	bool recovering;
	/* One round trip measured at a time: the newest PSN sent when none
	 * was being timed, until an ACK covers it; a resend cancels it.
	 * The smallest of this epoch's and the last epoch's samples is the
	 * path's own round trip (cwnd.c). */
	bool rtt_armed;
	uint32_t rtt_psn;
	uint64_t rtt_t0;
	uint64_t rtt_epoch;
	uint64_t rtt_min_cur;
	uint64_t rtt_min_prev;
	uint32_t rd_atomic; /* READ/atomic WQEs outstanding */
	uint8_t retry_left;
	uint8_t rnr_left;
	bool implied_retry;   /* asked again for a missing READ response */
	uint32_t implied_psn; /* from there */
	bool rnr_wait;
	bool sq_hostile;
	bool drained_sent;
	bool sqd_notify; /* SQ_DRAINED asked for when entering SQD */
	uint64_t rnr_deadline;
	uint64_t rexmit_deadline; /* 0: not armed */

	/* --- responder --- */
	uint32_t epsn; /* expected PSN */
	uint32_t msn;
	uint8_t seq; /* enum srd_resp_seq */
	bool nak_sent;
	bool ack_deferred; /* in eng->ack_deferred, for ack_psn */
	uint32_t ack_psn;
	bool nak_recent;  /* a sequence NAK within a window's PSNs */
	uint32_t nak_psn; /* ...at this PSN */
	uint32_t nak_top; /* highest PSN seen since the NAK */
	bool drop_msg;	  /* UC: dropping until the next FIRST/ONLY */
	bool comm_est;
	bool rq_hostile;
	bool last_wqe_sent;
	uint32_t rq_taken; /* free-running RQ index */
	struct srd_rwqe rwqe;
	/* RDMA WRITE in progress */
	uint64_t wr_va;
	uint32_t wr_rkey;
	uint64_t wr_resid;
	uint64_t wr_len;
	/* READ and atomic resources */
	struct srd_resp_res *res;
	uint32_t nres;
	uint32_t res_next;
	struct srd_resp_res *rd_active; /* READ reply being sent */
	/* Placement by the memory's owner (place.c): jobs not yet retired,
	 * the newest (its ACK waits on it), and requests dropped behind
	 * them (a sequence NAK asks for them again once all are done). */
	uint32_t place_pending;
	struct place_shadow *place_last;
	bool place_resend;
	/* The receive CQE being made waits on the newest job (its packet
	 * was handed over); UC: a job of ours failed (the QP is in error:
	 * what still waits completes flushed). */
	bool place_defer;
	bool place_failed;
	bool place_fail_cqe; /* the next CQE waiting on a job says so */
	/* As requester: READ responses out as jobs on our own ring, and
	 * whether one was dropped for want of room meanwhile. */
	uint32_t place_rd_pending;
	bool place_rd_resend;
	/* Since when our retries wait on a peer's placement (completer.c). */
	uint64_t peer_wait_since;

	/* --- misc --- */
	bool flush_pending;
	uint32_t mtu;		      /* bytes */
	struct srd_device *route_dev; /* RC/UC destination, when routed */
	bool route_valid;
	struct srd_tp_counters cnt;
};

static inline struct srd_swqe *tp_swqe(struct srd_qp_transport *tp,
				       uint32_t idx)
{
	return (struct srd_swqe *)(tp->swq +
				   (size_t)(idx & (tp->qp->sq.entries - 1)) *
					   tp->swq_stride);
}

static inline const struct srd_sge *swqe_sge(const struct srd_swqe *s)
{
	return (const struct srd_sge *)s->body;
}

/* The BTH transport of the QP's packets (RC, UC or XRC; UD builds its
 * own). */
static inline uint8_t tp_transport(const struct srd_qp_transport *tp)
{
	switch (tp->qp->type) {
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		return ROCE_TR_XRC;
	case IBV_QPT_UC:
		return ROCE_TR_UC;
	default:
		return ROCE_TR_RC;
	}
}

static inline enum ibv_qp_state tp_state(const struct srd_qp_transport *tp)
{
	return tp->qp->attr.qp_state;
}

/* --- cwnd.c: the RC congestion window --- */
void cwnd_reset(struct srd_qp_transport *tp);
/* psn_max moved on: new data went out. */
void cwnd_sent_new(struct srd_qp_transport *tp);
/* The requester goes back to resend. */
void cwnd_rewind(struct srd_qp_transport *tp);
/* una_psn is about to move on by acked packets. */
void cwnd_acked(struct srd_qp_transport *tp, uint32_t acked);
/* A loss seen by a sequence NAK or an implied retry, or a timeout. */
void cwnd_loss(struct srd_qp_transport *tp, bool timeout);

/* The next PSN to send and the next expected, kept in the QP's attributes
 * as well: query_qp reports them live, as rxe does. */
static inline void tp_set_psn(struct srd_qp_transport *tp, uint32_t psn)
{
	tp->psn = psn & ROCE_PSN_MASK;
	tp->qp->attr.sq_psn = tp->psn;
	if (roce_psn_cmp(tp->psn, tp->psn_max) > 0) {
		tp->psn_max = tp->psn;
		cwnd_sent_new(tp);
	}
}

static inline void tp_set_epsn(struct srd_qp_transport *tp, uint32_t psn)
{
	tp->epsn = psn & ROCE_PSN_MASK;
	tp->qp->attr.rq_psn = tp->epsn;
}

/* PSNs sent and not yet acknowledged. */
static inline uint32_t tp_inflight(const struct srd_qp_transport *tp)
{
	return (tp->psn - tp->una_psn) & ROCE_PSN_MASK;
}

static inline uint32_t tp_npkts(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

/* 4.096 us * 2^timeout; 0: no timer. */
uint64_t tp_timeout_ns(uint8_t timeout);
/* IBTA RNR NAK timer field to nanoseconds. */
uint64_t tp_rnr_ns(uint8_t timer);

/* --- engine.c --- */
/* Move the QP to ERR (RC, or any responder error) with an async event
 * (event < 0: none); a no-op when it is already there. */
void tp_error(struct srd_qp_transport *tp, int event);
/* UC/UD send error: the SQ stops (SQE), the RQ keeps working. */
void tp_sq_error(struct srd_qp_transport *tp);
/* Arm the retransmit timer when anything is outstanding. */
void tp_rearm_timer(struct srd_qp_transport *tp);
bool tp_outstanding(struct srd_qp_transport *tp);

/* --- complete.c --- */
/* Write the CQE of a send WQE (if signaled, or an error). */
void tp_send_cqe(struct srd_qp_transport *tp, struct srd_swqe *s, uint32_t idx,
		 enum ibv_wc_status status);
struct srd_recv_cqe_info {
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;
	uint8_t wc_flags;
	bool solicited;
	uint32_t src_qp;
	uint8_t sl;
};
/* Complete the receive WQE in tp->rwqe and release it. */
void tp_recv_cqe(struct srd_qp_transport *tp,
		 const struct srd_recv_cqe_info *info);

/* --- wqe.c: reading the rings --- */
/* Copy newly posted SQ WQEs; returns how many, or -EIO (hostile). */
int sq_fetch(struct srd_qp_transport *tp);
/* Take the next receive WQE into tp->rwqe: 0, -EAGAIN (none), -EIO
 * (hostile ring: the QP or SRQ is in error). */
int rq_take(struct srd_qp_transport *tp);

/* --- requester.c --- */
bool requester_run(struct srd_qp_transport *tp);
/* Go back to resend from psn (timeout, NAK). */
void requester_rewind(struct srd_qp_transport *tp, uint32_t psn);
/* After going back: the responder has everything before psn, so what
 * was sent before the rewind is not sent again up to there. */
void requester_skip(struct srd_qp_transport *tp, uint32_t psn);

/* --- responder.c --- */
void responder_rx(struct srd_qp_transport *tp, struct srd_pkt *pkt);
/* Send the ACK a QP holds (before any other response of it). */
void responder_ack_flush(struct srd_qp_transport *tp);
/* End of a receive batch: every held ACK. */
void engine_acks_flush(struct srd_engine *e);
/* Send queued READ responses; returns true if any were sent. */
bool responder_run(struct srd_qp_transport *tp, unsigned int budget);
void responder_reset(struct srd_qp_transport *tp);
/* Forget the message in progress and queued READ replies, keeping the
 * receive WQE taken (flushing completes it). */
void responder_reset_msg(struct srd_qp_transport *tp);
int responder_set_resources(struct srd_qp_transport *tp, uint32_t n);

/* --- place.c --- */
/* A copy this long is handed to the owner's thread; a shorter one costs
 * less done here than the owner's wake-up would. */
#define SRD_PLACE_MIN_BYTES (16 * 1024)
/* How long a requester's retries wait, without progress, on a local
 * peer's owner placing its data before they count again. */
#define SRD_PLACE_PEER_WAIT_NS 5000000000ull
enum srd_place_kind {
	SRD_PLACE_K_WRITE, /* responder: arg is the last PSN it carried */
	SRD_PLACE_K_READ,  /* requester: arg is the READ's SQ index */
	/* responder: the packet (arg its PSN) completes a message: its
	 * receive CQE waits for the job (place_defer_cqe). */
	SRD_PLACE_K_LAST,
	/* responder, the same into a receive WQE */
	SRD_PLACE_K_SEND,
	SRD_PLACE_K_SEND_LAST,
};
/*
 * Hand len bytes from src to dst at their cursors to the destination
 * owner's thread.  Memory on demand at dst is always handed over, staged
 * through the ring (only its owner's thread writes it, so that its
 * protections hold at the moment of the write); other in-place memory
 * only when peer (a copy long enough to be worth the owner's wake-up) and
 * the source is a process of the same user.  The number of jobs posted
 * (a staged copy may take several); -EAGAIN not handed over (copy it
 * yourself); -ENOBUFS on demand but no room now (drop it, and have it
 * again); -EFAULT the source is gone.  On error nothing changed.
 */
int place_post(struct srd_qp_transport *tp, struct srd_dma *dst,
	       struct srd_dma *src, uint64_t len, enum srd_place_kind kind,
	       uint32_t arg, bool peer);
/* A responder's job as it retires. */
struct srd_place_done {
	uint32_t psn;
	/* 0 (placed), -EACCES (the destination could not be written) or
	 * another (the source could not be read) */
	int err;
	enum srd_place_kind kind;
	bool ack; /* the ACK of ack_psn waited on it */
	uint32_t ack_psn;
	/* the receive CQE that waited on it, for cq */
	const struct srd_cqe *cqe;
	struct srd_cq *cq;
};
/* responder.c: a placement job of tp retired. */
void responder_place_retired(struct srd_qp_transport *tp,
			     const struct srd_place_done *d);
/* tp_recv_cqe with tp->place_defer: the CQE goes out when tp's newest job
 * retires. */
void place_defer_cqe(struct srd_qp_transport *tp, struct srd_cq *cq,
		     const struct srd_cqe *c);
/* Push a CQE of tp's (complete.c). */
void tp_cq_push(struct srd_qp_transport *tp, struct srd_cq *cq,
		const struct srd_cqe *c);
/* completer.c: a READ job of tp retired: 0, -EACCES (our memory could not
 * be written) or another (the source could not be read). */
void completer_place_retired(struct srd_qp_transport *tp, uint32_t idx,
			     int err);
/* The ACK of psn waits for tp's newest job; false: no job is out. */
bool place_hold_ack(struct srd_qp_transport *tp, uint32_t psn);
/* Retire finished jobs; true if any. */
bool place_poll(struct srd_engine *e);
bool place_waiting(const struct srd_engine *e);
/* tp goes or starts over: its jobs retire silently. */
void engine_place_tp_gone(struct srd_qp_transport *tp);

/* --- completer.c --- */
void completer_rx(struct srd_qp_transport *tp, struct srd_pkt *pkt);
/* Complete a local error at the head of the SQ, if there is one. */
void completer_head_check(struct srd_qp_transport *tp);
/* Complete the executed local operations at the head of the SQ, then
 * a local error there. */
void completer_retire_local(struct srd_qp_transport *tp);
/* Retransmit and RNR timers. */
bool completer_timers(struct srd_qp_transport *tp, uint64_t now);

/* --- raw.c: raw packet QPs --- */
/* Frames of the posted send WQEs onto the interface. */
bool raw_send_run(struct srd_qp_transport *tp);
/* Frames received by the devices' packet sockets, steered to QPs. */
bool raw_poll(struct srd_engine *e);

/* --- flush.c --- */
bool flush_run(struct srd_qp_transport *tp);

/* --- wire_mem.c, wire.c (see wire.h) --- */
/* The local device a packet to dgid and QP qpn goes to; NULL: the UDP
 * wire's. */
struct srd_device *wire_route(struct srd_daemon *d, const union ibv_gid *dgid,
			      uint32_t qpn);
/* Send pkt.  On the in-memory wire the destination has processed it (or
 * dropped it) when this returns; the UDP wire sends it at the end of the
 * pass, its payload read then. */
void wire_send(struct srd_qp_transport *src, struct srd_pkt *pkt);
/* Whether an RC/UC QP's path leads to this daemon (the in-memory wire). */
bool tp_route_local(struct srd_qp_transport *tp);
/* Fill the network fields of a packet from an RC/UC QP's path. */
void tp_fill_path(struct srd_qp_transport *tp, struct srd_pkt *pkt);

/* --- state names for debug output --- */
const char *requester_state_name(uint8_t state);

/* --- for tests and listings --- */
const struct srd_tp_counters *engine_qp_counters(const struct srd_qp *qp);

#endif
