/* SPDX-License-Identifier: MIT */
/*
 * An RC QP pair between two processes joined by a socketpair, and the
 * measurements softrdma-demo and softrdma-bench make over it.  One side
 * (the initiator) drives and times; the other serves: it reads a command
 * from the socket, plays its part, and answers with a status.
 */
#ifndef SOFTRDMA_TOOLS_RCPAIR_H
#define SOFTRDMA_TOOLS_RCPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* What one side tells the other to connect. */
struct rcp_info {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
	uint64_t addr; /* base of the peer-writable buffer */
	uint32_t rkey;
	uint32_t bw_max;
	char mem_path[16]; /* how the device reaches the buffer */
};

struct rcp {
	int sock;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	size_t buf_size;
	size_t bw_max;
	int mr_access; /* added to the MR's access flags */
	uint32_t max_inline;
	/* Yield while busy-polling: set when the two processes and the
	 * daemon cannot each have a CPU. */
	bool yield;
	unsigned int unsignaled; /* WRs posted since the last signaled one */
	unsigned int sig_out;	 /* signaled WRs not yet completed */
	struct rcp_info local;
	struct rcp_info remote;
	char err[128]; /* why the last call failed */
};

/* Opens the device (NULL: the first), creates an RC QP with a buffer
 * whose bandwidth area is bw_max bytes, registered with mr_access on top
 * of local write and remote read and write (IBV_ACCESS_ON_DEMAND: an ODP
 * MR), exchanges addresses over sock and brings the QP to RTS.  Both
 * sides call it.  0 or a negative errno, with the reason in p->err. */
int rcp_open(struct rcp *p, int sock, const char *devname, size_t bw_max,
	     int mr_access);
void rcp_close(struct rcp *p);

/* CPUs this process may run on. */
int rcp_cpus(void);

/* The serving side: answers commands until the initiator says quit.
 * 0, or a negative errno if a command failed or the socket broke. */
int rcp_serve(struct rcp *p);
/* Tells the serving side to return from rcp_serve. */
int rcp_quit(struct rcp *p);

/*
 * 2-byte RDMA WRITE ping-pong: each side writes a counter into the other's
 * buffer and busy-polls its own memory for the answer, as ib_write_lat
 * does.  rtt_ns[i] gets the round trip of iteration i (after warmup ones).
 */
int rcp_write_lat(struct rcp *p, unsigned int iters, unsigned int warmup,
		  uint64_t *rtt_ns);
/* The same with 2-byte SENDs, both sides busy-polling their receive CQ;
 * every payload is checked. */
int rcp_send_lat(struct rcp *p, unsigned int iters, unsigned int warmup,
		 uint64_t *rtt_ns);

/*
 * RDMA WRITE bandwidth: iters writes of size bytes, depth in flight,
 * every sig_every-th signaled.  *ns gets the time from the first post to
 * the last completion.  Then a patterned write and a SEND behind it let the
 * peer check the bytes that landed; a mismatch is -EILSEQ.
 */
int rcp_write_bw(struct rcp *p, size_t size, unsigned int iters,
		 unsigned int depth, unsigned int sig_every, uint64_t *ns);

/*
 * RDMA READ bandwidth: the same from the peer's bandwidth area into ours
 * (the peer fills it with a pattern first, which the last READ must bring
 * back intact, else -EILSEQ).
 */
int rcp_read_bw(struct rcp *p, size_t size, unsigned int iters,
		unsigned int depth, unsigned int sig_every, uint64_t *ns);

uint64_t rcp_now_ns(void);

/* Sorts v and returns its median and 99th percentile, in v's unit. */
void rcp_percentiles(uint64_t *v, unsigned int n, double *median, double *p99);

#endif
