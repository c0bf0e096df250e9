/* SPDX-License-Identifier: MIT */
/*
 * xhost: RDMA between two (or three) hosts, each with its own daemon in its
 * own network namespace.  One program, two roles: the server answers, the
 * client drives; a TCP connection between them carries the addresses (QPN,
 * PSN, GID, buffer address and rkey, as the pingpongs do) and keeps the two
 * in step, one sync per step.
 */
#ifndef SOFTRDMA_TESTS_NETNS_XHOST_H
#define SOFTRDMA_TESTS_NETNS_XHOST_H

#include <stdbool.h>
#include <sys/socket.h>
#include <stdint.h>

#include "t_util.h"

/* Each side's two buffers: a (what it sends, reads into) and b (what the
 * peer writes, reads and sends into).  4 MiB messages plus room. */
#define XH_BUF_LEN (8u << 20)
#define XH_MIB (1u << 20)
#define XH_GRH 40

/* What one side tells the other about a QP and its buffer b. */
struct xh_ep {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint64_t val; /* whatever the step needs to pass along */
};

struct xh {
	bool server;
	const char *test;
	const char *host; /* client: the server's address; ring: the next */
	unsigned int port;
	const char *devname;
	int family; /* AF_INET or AF_INET6: which GID */
	int gidx;
	union ibv_gid gid;
	enum ibv_mtu mtu; /* path MTU asked for (0: the port's) */
	unsigned int mtu_bytes;
	uint64_t bytes;	     /* stream: how much */
	unsigned int count;  /* lossy: messages per transport */
	bool faults;	     /* daemon faults on: UD may reorder/duplicate */
	bool loss;	     /* packets get lost: lossy must lose some */
	const char *cut_cmd; /* cut: commands that cut and mend the path */
	const char *uncut_cmd;
	bool port_events; /* cut: our port must go down and up with it */
	unsigned int ring_nodes, ring_index; /* ring: n, and 1..n */
	int fd;				     /* control connection */
	int fd_prev;			     /* ring: from the previous node */
	struct t_dev d;
	struct t_buf a, b;
	struct xh_ep peer; /* the peer's b */
	unsigned int step;
};

/* A connected RC, UC or UD QP with its own CQs. */
struct xh_qp {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct xh_ep remote; /* the peer's QP and buffer b */
	struct ibv_ah *ah;   /* UD: towards the peer */
};

/* Options of a connection beyond what xh_conn_opts_init() sets. */
struct xh_conn {
	enum ibv_qp_type type;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	unsigned int max_send_wr, max_recv_wr, cqe;
	/* Receives posted before the peer is told we are ready: wr_id i,
	 * prepost_len bytes at b + i * prepost_stride. */
	unsigned int prepost;
	uint32_t prepost_len, prepost_stride;
};

/* xh_net.c: the control connection. */
int xh_listen(unsigned int port);
int xh_accept(int lfd, int timeout_ms);
int xh_connect(const char *host, unsigned int port, int timeout_ms);
void xh_send(int fd, const void *buf, size_t len);
void xh_recv(int fd, void *buf, size_t len, int timeout_ms);
/* Both sides call it with the same step number. */
void xh_sync_fd(int fd, uint32_t step, int timeout_ms);
void xh_sync(struct xh *x);
/* Exchange of a 64-bit value: sends mine, returns the peer's. */
uint64_t xh_swap_val(struct xh *x, uint64_t mine);

/* xh_verbs.c: device, QPs, posting. */
void xh_dev_open(struct xh *x);
void xh_dev_close(struct xh *x);
void xh_conn_init(struct xh_conn *c, enum ibv_qp_type type);
/* Creates a QP, exchanges addresses over fd and connects it (UD: RTS and
 * an AH to the peer); both sides are in RTS when it returns. */
void xh_qp_connect_fd(struct xh *x, int fd, struct xh_qp *q,
		      const struct xh_conn *c);
void xh_qp_connect(struct xh *x, struct xh_qp *q, const struct xh_conn *c);
void xh_qp_destroy(struct xh_qp *q);
/* An AH from our GID to the peer's. */
struct ibv_ah *xh_ah_create(struct xh *x, const struct xh_ep *r);
/* Any QP: wr_id and imm as t_post_send; sges of (offset in buf, len). */
void xh_post_sges(struct xh_qp *q, uint64_t wr_id, enum ibv_wr_opcode op,
		  struct t_buf *buf, const uint32_t (*sge)[2], int n,
		  unsigned int flags, uint64_t raddr, uint32_t rkey);
void xh_post_recv_sges(struct xh_qp *q, uint64_t wr_id, struct t_buf *buf,
		       const uint32_t (*sge)[2], int n);
/* A completion within timeout_ms with that wr_id, status and opcode
 * (T_ANY_OPCODE: any), or the test fails. */
void xh_expect_at(const char *file, int line, struct ibv_cq *cq,
		  struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status st,
		  int opcode, int timeout_ms);
#define XH_EXPECT(cq, wc, id, st, op, ms) \
	xh_expect_at(__FILE__, __LINE__, cq, wc, id, st, op, ms)
/* The next event about a QP must be type, for qp; device and port events
 * (a GID added to the table, ...) in between are logged and passed over. */
void xh_expect_qp_event(struct xh *x, enum ibv_event_type type,
			struct ibv_qp *qp);
double xh_now(void);
/* The GID of family fam on the device, or -1. */
int xh_find_gid(struct ibv_context *ctx, int fam, union ibv_gid *gid);

/* The tests. */
void xh_run_ops(struct xh *x);
void xh_run_errors(struct xh *x);
void xh_run_stream(struct xh *x);
void xh_run_lossy(struct xh *x);
void xh_run_cut(struct xh *x);
void xh_run_ring(struct xh *x);

#endif
