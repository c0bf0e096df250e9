/* SPDX-License-Identifier: MIT */
/*
 * Shared code of the functional tests: open the device, build CQs and QPs,
 * connect two QPs to each other in one process or across a fork, wait for
 * completions and events with a deadline (a test never hangs), and
 * assertions that print file:line with what was expected and what came.
 *
 * Every test calls t_init() first.  Unless SOFTRDMA_SOCKET is already set,
 * t_init() gives the test a private socket name, so the library starts a
 * fresh daemon (from SOFTRDMAD) for this test alone; it is stopped when the
 * test exits.  Children made with t_fork() share their parent's daemon.
 */
#ifndef SOFTRDMA_TESTS_T_UTIL_H
#define SOFTRDMA_TESTS_T_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "t_assert.h"

/* Fixed addresses for tests that map memory where another process must
 * find it (k = 0..7, 64 GiB apart): below where mmap() places mappings,
 * and inside what ASan and TSan both take for application memory. */
#define T_FIXED_ADDR(k) \
	((uint8_t *)(uintptr_t)(0x7e9000000000ull + ((uint64_t)(k) << 36)))
#define T_WAIT_MS 5000	/* longest wait for one completion or event */
#define T_QUIET_MS 200	/* how long "nothing happens" is watched for */
#define T_WATCHDOG_S 55 /* the whole test, below the ctest timeout */

#define T_PORT 1
#define T_GID_INDEX 0
#define T_QKEY 0x11111111u
#define T_ACCESS_ALL                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* ------------------------------------------------------------------ */
/* Test life cycle and reporting                                       */

void t_init(const char *name);
/* Before t_init(): the daemon reads text as its configuration file. */
void t_config(const char *text);
/* The watchdog's seconds: T_WATCHDOG_S unless SRD_TEST_WATCHDOG_S says. */
unsigned int t_watchdog_s(void);

const char *t_wc_opcode_name(int opcode);

/* The daemon serving this test (0 if none is found), and its socket. */
pid_t t_daemon_pid(void);
const char *t_socket_name(void);
/* Milliseconds on the monotonic clock. */
uint64_t t_now_ms(void);
void t_sleep_ms(unsigned int ms);

/* ------------------------------------------------------------------ */
/* Memory                                                              */

/* Zeroed, page aligned, never freed by the caller with free(): t_free. */
void *t_zalloc(size_t len);
void t_free(void *p, size_t len);
/* A deterministic pattern, different for every seed. */
uint8_t t_pattern(uint32_t seed, size_t i);
void t_fill(void *buf, size_t len, uint32_t seed);
/* Wait up to timeout_ms for buf to hold the fill of seed (data placed by
 * a peer without a completion on this side); false on timeout. */
bool t_wait_fill(const volatile void *buf, size_t len, uint32_t seed,
		 int timeout_ms);
void t_check_fill_at(const char *file, int line, const void *buf, size_t len,
		     uint32_t seed, const char *what);
void t_memeq_at(const char *file, int line, const void *got,
		const void *expected, size_t len, const char *what);
#define T_CHECK_FILL(buf, len, seed) \
	t_check_fill_at(__FILE__, __LINE__, buf, len, seed, #buf)
#define T_MEMEQ(got, expected, len) \
	t_memeq_at(__FILE__, __LINE__, got, expected, len, #got)

/* ------------------------------------------------------------------ */
/* Device, PD, MR, CQ                                                  */

struct t_dev {
	struct ibv_device **list;
	int num_devices;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid; /* T_GID_INDEX */
};

/* Opens the first device, queries it and allocates a PD. */
void t_dev_open(struct t_dev *d);
void t_dev_close(struct t_dev *d);
/* A t_dev over a context and PD got otherwise (imported): queried, and
 * not to be passed to t_dev_close. */
void t_dev_of(struct t_dev *d, struct ibv_context *ctx, struct ibv_pd *pd);

/* A registered buffer. */
struct t_buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};
void t_buf_alloc(struct t_dev *d, struct t_buf *b, size_t len, int access);
void t_buf_free(struct t_buf *b);

struct ibv_cq *t_cq_create(struct t_dev *d, int cqe,
			   struct ibv_comp_channel *ch);

/* ------------------------------------------------------------------ */
/* QPs and connections                                                 */

/* Defaults: 64 WRs each way, 4 SGEs each way, 64 bytes inline. */
void t_qp_init_attr(struct ibv_qp_init_attr *ia, enum ibv_qp_type type,
		    struct ibv_cq *scq, struct ibv_cq *rcq);
struct ibv_qp *t_qp_create(struct t_dev *d, struct ibv_qp_init_attr *ia);
/* A QP of type on d's PD with t_qp_init_attr()'s sizes, both CQs cq, made
 * by ibv_create_qp_ex with the IBV_QP_EX_WITH_* ops: NULL if refused. */
struct ibv_qp *t_qp_ex_create(struct t_dev *d, struct ibv_cq *cq,
			      enum ibv_qp_type type, uint64_t ops);

/* What one side tells the other to connect, plus an MR it may use. */
struct t_ep {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};
void t_ep_local(struct t_dev *d, struct ibv_qp *qp, uint32_t psn,
		struct t_ep *ep);

struct t_conn_opts {
	enum ibv_mtu mtu; /* 0: the port's active MTU */
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic; /* max_rd_atomic and max_dest_rd_atomic */
	unsigned int access;   /* qp_access_flags */
	uint32_t qkey;	       /* UD */
};
/* timeout 14, retry_cnt 7, rnr_retry 7, min_rnr_timer 1, rd_atomic 16,
 * remote read/write/atomic access, T_QKEY. */
void t_conn_opts_init(struct t_conn_opts *o);

/* A RoCE address vector towards dgid from our GID T_GID_INDEX. */
void t_ah_attr_init(struct ibv_ah_attr *ah, const union ibv_gid *dgid);

/* Each step with rdma-core's required masks for the QP's type. */
void t_qp_to_init(struct ibv_qp *qp, const struct t_conn_opts *o);
void t_qp_to_rtr(struct ibv_qp *qp, const struct t_ep *remote,
		 const struct t_conn_opts *o);
void t_qp_to_rts(struct ibv_qp *qp, uint32_t psn, const struct t_conn_opts *o);
/* RESET -> INIT -> RTR -> RTS. */
void t_qp_connect(struct ibv_qp *qp, uint32_t psn, const struct t_ep *remote,
		  const struct t_conn_opts *o);
void t_qp_set_state(struct ibv_qp *qp, enum ibv_qp_state state);
enum ibv_qp_state t_qp_state(struct ibv_qp *qp);

/*
 * Two QPs of one type in one process, connected to each other: a and b,
 * each with its own CQ for both directions.  UD: both in RTS, ah_a goes
 * from a to b and ah_b from b to a, qkey is the Q_Key of both.
 */
struct t_pair {
	struct t_dev *d;
	enum ibv_qp_type type;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
	struct ibv_ah *ah_a, *ah_b;
	uint32_t qkey;
	struct ibv_qp_cap cap; /* what a was granted */
};
/* ia: NULL for defaults (its CQ fields are ignored); o: NULL for defaults. */
void t_pair_create(struct t_dev *d, struct t_pair *p, enum ibv_qp_type type,
		   const struct ibv_qp_init_attr *ia,
		   const struct t_conn_opts *o);
void t_pair_destroy(struct t_pair *p);

/* One RC QP of a process of its own, with a page-aligned buffer of len
 * bytes registered with access (and LOCAL_WRITE), and a CQ for both. */
struct t_side {
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};
void t_side_open(struct t_side *s, size_t len, int access);
/* Its endpoint, with its buffer (addr, rkey, len) for a peer to reach. */
struct t_ep t_side_ep(struct t_side *s, uint32_t psn);
/* Connect over a step socket: serve sends ours (step mine) and connects
 * to the peer's (step theirs); dial receives the peer's (theirs),
 * connects (o: NULL for defaults) and sends ours (mine).  Both return the
 * peer's endpoint. */
struct t_ep t_side_serve(struct t_side *s, int sock, uint32_t mine,
			 uint32_t theirs, uint32_t psn);
struct t_ep t_side_dial(struct t_side *s, int sock, uint32_t theirs,
			uint32_t mine, uint32_t psn,
			const struct t_conn_opts *o);
void t_side_close(struct t_side *s);

/* ------------------------------------------------------------------ */
/* Posting                                                              */

/* ibv_post_send of one WR; returns its result.  mr NULL: num_sge 0 (unless
 * inline).  A _WITH_IMM opcode carries imm_data htobe32((uint32_t)wr_id). */
int t_post_send_ret(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		    struct ibv_mr *mr, void *addr, uint32_t len,
		    unsigned int flags, uint64_t raddr, uint32_t rkey);
void t_post_send_at(const char *file, int line, struct ibv_qp *qp,
		    uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_mr *mr,
		    void *addr, uint32_t len, unsigned int flags,
		    uint64_t raddr, uint32_t rkey);
#define t_post_send(...) t_post_send_at(__FILE__, __LINE__, __VA_ARGS__)

void t_post_atomic_at(const char *file, int line, struct ibv_qp *qp,
		      uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_mr *mr,
		      void *addr, uint64_t raddr, uint32_t rkey,
		      uint64_t compare_add, uint64_t swap);
#define t_post_atomic(...) t_post_atomic_at(__FILE__, __LINE__, __VA_ARGS__)

void t_post_ud_at(const char *file, int line, struct ibv_qp *qp, uint64_t wr_id,
		  struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey,
		  struct ibv_mr *mr, void *addr, uint32_t len,
		  unsigned int flags);
#define t_post_ud(...) t_post_ud_at(__FILE__, __LINE__, __VA_ARGS__)

int t_post_recv_ret(struct ibv_qp *qp, uint64_t wr_id, struct ibv_mr *mr,
		    void *addr, uint32_t len);
void t_post_recv_at(const char *file, int line, struct ibv_qp *qp,
		    uint64_t wr_id, struct ibv_mr *mr, void *addr,
		    uint32_t len);
#define t_post_recv(...) t_post_recv_at(__FILE__, __LINE__, __VA_ARGS__)

void t_post_srq_recv_at(const char *file, int line, struct ibv_srq *srq,
			uint64_t wr_id, struct ibv_mr *mr, void *addr,
			uint32_t len);
#define t_post_srq_recv(...) t_post_srq_recv_at(__FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Completions and events                                              */

/* 1: a completion is in *wc; 0: none within timeout_ms. */
int t_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);

#define T_ANY_OPCODE (-1)
/* Waits T_WAIT_MS for one completion and checks wr_id, status and, for a
 * successful one, opcode (T_ANY_OPCODE: not checked). */
void t_expect_wc_at(const char *file, int line, struct ibv_cq *cq,
		    struct ibv_wc *wc, uint64_t wr_id,
		    enum ibv_wc_status status, int opcode);
#define T_EXPECT_WC(cq, wc, wr_id, status, opcode) \
	t_expect_wc_at(__FILE__, __LINE__, cq, wc, wr_id, status, opcode)
void t_expect_no_wc_at(const char *file, int line, struct ibv_cq *cq,
		       int quiet_ms);
#define T_EXPECT_NO_WC(cq, ms) t_expect_no_wc_at(__FILE__, __LINE__, cq, ms)
#define T_WC_STATUS(wc, st)                                                 \
	do {                                                                \
		if ((wc)->status != (st))                                   \
			T_FAIL("wr_id %#llx: status \"%s\" (%d), expected " \
			       "\"%s\" (%d)",                               \
			       (unsigned long long)(wc)->wr_id,             \
			       ibv_wc_status_str((wc)->status),             \
			       (int)(wc)->status, ibv_wc_status_str(st),    \
			       (int)(st));                                  \
	} while (0)

/* 1: an event is in *ev (the caller acks it); 0: none within timeout_ms. */
int t_async_wait(struct ibv_context *ctx, struct ibv_async_event *ev,
		 int timeout_ms);
/* Waits for one event, checks its type and object (a QP, CQ or SRQ as
 * the type implies; NULL: not checked), acks it. */
void t_expect_async_at(const char *file, int line, struct ibv_context *ctx,
		       enum ibv_event_type type, const void *obj);
#define T_EXPECT_ASYNC(ctx, type, obj) \
	t_expect_async_at(__FILE__, __LINE__, ctx, type, obj)
void t_expect_no_async_at(const char *file, int line, struct ibv_context *ctx,
			  int quiet_ms);
#define T_EXPECT_NO_ASYNC(ctx, ms) \
	t_expect_no_async_at(__FILE__, __LINE__, ctx, ms)
/* Is fd readable within timeout_ms? */
bool t_fd_readable(int fd, int timeout_ms);

/* ------------------------------------------------------------------ */
/* Raw packet QPs (t_raw.c)                                            */

/* A raw packet QP on cq (NULL, errno set, if refused); moved to RTS. */
struct ibv_qp *t_raw_qp_create(struct t_dev *d, struct ibv_cq *cq);
void t_raw_qp_ready(struct ibv_qp *qp);
/* Ethernet, IPv4 and UDP headers; addresses in network order, ports in
 * host order. */
struct t_udp4 {
	uint8_t dmac[6], smac[6];
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};
/* An Ethernet/IPv4/UDP frame around pay into buf, both checksums right;
 * its length. */
size_t t_udp4_frame(uint8_t *buf, const struct t_udp4 *u, const void *pay,
		    size_t len);
/* A NORMAL rule: IPv4 (to daddr, 0: any) UDP to dport. */
struct ibv_flow *t_flow_udp4(struct ibv_qp *qp, uint32_t daddr, uint16_t dport,
			     uint16_t priority);

/* ------------------------------------------------------------------ */
/* Two processes                                                       */

struct t_child {
	pid_t pid;
	int fd; /* the parent's end of a socketpair */
};
/* Forks; the child runs fn(fd, arg) with its own end of a socketpair and
 * exits with what fn returns. */
void t_fork(struct t_child *c, int (*fn)(int fd, void *arg), void *arg);
/* Waits for the child; fails the test if it does not exit within
 * timeout_ms or dies of a signal.  Returns its exit status. */
int t_child_wait(struct t_child *c, int timeout_ms);
/* SIGSTOP pid, and wait until every thread of it is stopped. */
void t_stop(pid_t pid);
/* The steps of a test run by several processes: a step number and an
 * endpoint (ep NULL: none), checked on receipt; a parent relays them. */
void t_step_send(int sock, uint32_t step, const struct t_ep *ep);
struct t_ep t_step_recv(int sock, uint32_t step);
void t_step_relay(int from, int to, uint32_t step);
/* Full-length messages over the socketpair; fail on EOF or after
 * 2 * T_WAIT_MS. */
void t_sock_send(int fd, const void *buf, size_t len);
void t_sock_recv(int fd, void *buf, size_t len);
/* Both sides call it: returns when the other side has called it too. */
void t_sock_sync(int fd);
/* A message of len bytes with a descriptor (SCM_RIGHTS) beside it; the
 * receiver gets the descriptor (close-on-exec) or fails the test. */
void t_sock_send_fd(int sock, int fd, const void *buf, size_t len);
int t_sock_recv_fd(int sock, void *buf, size_t len);

/* A system user of that name, made if missing (root; skips otherwise). */
uid_t t_user(const char *name);
/* In a child: drop every group and become uid (gid = uid); exit 3 if the
 * kernel refuses. */
void t_become(uid_t uid);
/* Root: a set-uid-root copy of the program src (a path, or a shell word
 * such as "$(command -v sleep)") named name, in a directory of the test's
 * own under /tmp; its path goes to out.  t_suid_remove() takes it away. */
void t_suid_copy(const char *src, const char *name, char *out, size_t n);
void t_suid_remove(const char *path);
/* Whether pid runs with effective uid euid within 5 s (after an exec). */
bool t_wait_euid(pid_t pid, uid_t euid);
/* Root: this process (and the children it makes from now on) in a network
 * namespace of its own, lo up.  Abstract socket names are per namespace:
 * the test may bind the default ones without touching the machine's
 * daemons.  Skips if the kernel refuses. */
void t_own_netns(void);
/* Root: the daemon started by a child whose RLIMIT_NOFILE (soft and hard)
 * is nofile, held until t_daemon_release (the parent's own limit is left
 * alone: it could not be raised again). */
void t_daemon_nofile(struct t_child *st, unsigned int nofile);
void t_daemon_release(struct t_child *st);

/* How many neighbours of v step by +0 or +1 in (v >> shift) & mask: a
 * counter makes n - 1, random draws a few. */
int t_counter_steps(const uint32_t *v, int n, uint32_t mask, int shift);

#endif
