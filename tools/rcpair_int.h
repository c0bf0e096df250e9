/* SPDX-License-Identifier: MIT */
/* Inside the RC pair: buffer layout, the command protocol, posting. */
#ifndef SOFTRDMA_TOOLS_RCPAIR_INT_H
#define SOFTRDMA_TOOLS_RCPAIR_INT_H

#include <stdbool.h>

#include "rcpair.h"

/* Buffer layout (offsets into rcp.buf). */
#define RCP_LAT_RX_OFF 0    /* the peer's latency writes land here */
#define RCP_LAT_TX_OFF 64   /* source of our latency writes */
#define RCP_SEND_TX_OFF 128 /* source of our SENDs */
#define RCP_RECV_OFF 4096   /* receive slots */
#define RCP_RECV_SLOTS 64
#define RCP_RECV_SLOT_SIZE 64
#define RCP_BW_OFF 8192 /* bandwidth area, bw_max bytes */

#define RCP_SQ_DEPTH 128
#define RCP_LAT_SIG_EVERY 16
#define RCP_LAT_DEPTH 64
/* READs each side lets in flight (as ib_read_bw asks for 16). */
#define RCP_RD_DEPTH 16
#define RCP_TIMEOUT_NS (10ULL * 1000000000ULL)

enum rcp_op {
	RCP_OP_QUIT = 1,
	RCP_OP_WRITE_LAT,
	RCP_OP_SEND_LAT,
	RCP_OP_WRITE_BW,
	RCP_OP_READ_BW,
};

/* Initiator to server. */
struct rcp_cmd {
	uint32_t op;
	uint32_t iters; /* warmup included */
	uint64_t size;
	uint64_t seed;
};

/* Server to initiator: once when ready, once when done. */
struct rcp_reply {
	int32_t status;
	uint32_t phase;
};

enum {
	RCP_PHASE_READY = 1,
	RCP_PHASE_DONE = 2
};

int rcp_fail(struct rcp *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int rcp_sock_send(struct rcp *p, const void *buf, size_t len);
int rcp_sock_recv(struct rcp *p, void *buf, size_t len);
int rcp_reply(struct rcp *p, int status, uint32_t phase);

int rcp_post_recv_slot(struct rcp *p, unsigned int slot);
/* Posts wr, signaling one in sig_every (or this one if force) and keeping
 * no more than depth WRs outstanding. */
int rcp_post(struct rcp *p, struct ibv_send_wr *wr, unsigned int sig_every,
	     unsigned int depth, bool force);
/* Waits for every signaled WR to complete. */
int rcp_drain(struct rcp *p);

/* The serving side of each measurement. */
int rcp_serve_write_lat(struct rcp *p, const struct rcp_cmd *c);
int rcp_serve_send_lat(struct rcp *p, const struct rcp_cmd *c);
int rcp_serve_write_bw(struct rcp *p, const struct rcp_cmd *c);
int rcp_serve_read_bw(struct rcp *p, const struct rcp_cmd *c);

#endif
