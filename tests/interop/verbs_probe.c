/* SPDX-License-Identifier: MIT */
/*
 * verbs_probe: every RC opcode and every error status that crosses the
 * wire, between two hosts, through the public verbs API alone.  The same
 * binary (dynamically linked against libibverbs.so.1) runs on the host on
 * softrdma and in the interop guest on rdma-core and rdma_rxe.
 *
 *   verbs_probe [-d DEV] [-i PORT] [-g GIDX] [-m MTU] [-s SIZE] [-p TCP]
 *               CASES [SERVER]
 *
 * Without SERVER it serves (the responder: it receives, is written, read
 * and the target of the atomics); with it, it connects and drives.  CASES
 * is a comma-separated list of the names below, or "ops", "errors".  Both
 * sides get the same list; a TCP connection carries the QP addresses (as
 * the pingpongs do) and keeps the two in step.  Each side checks its own
 * completions, data and QP states and prints one line per case:
 *   probe CASE ROLE ok|FAIL WHAT
 * A failure ends the program (exit 1); the peer sees the connection close
 * and fails too.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>

#include <infiniband/verbs.h>

#include "probe_report.h"

#define PROBE_TCP_PORT "18600"
#define IO_MS 60000	  /* the peer may be an emulated guest */
#define WC_MS 20000	  /* longest wait for one completion */
#define DEFAULT_SIZE 5000 /* five packets at MTU 1024 */
#define IMM 0x1234abcdu
/*
 * rdma_rxe's vendor id (no OUI; softrdma reports it too, with a part id of
 * its own).  rxe writes a user QP's receive completion into the ring the
 * library reads with the kernel's IB_WC_* flags, where "with invalidate"
 * is bit 2 (libibverbs' IBV_WC_IP_CSUM_OK), not IBV_WC_WITH_INV's bit 3;
 * rdma-core 44 copies the entry as it is.
 */
#define RXE_VENDOR_ID 0xffffff
#define RXE_WC_WITH_INV (1u << 2)

/* One side's QP and buffer; both ends are x86-64 little-endian, the
 * struct goes as it is. */
struct ep {
	char name[16];
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint64_t val;
	uint32_t step;
	uint32_t pad;
};

struct probe {
	bool server;
	const char *devname;
	const char *host;
	const char *port;
	uint8_t ib_port;
	int gidx;
	enum ibv_mtu mtu;
	size_t size;
	int fd;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	enum ibv_mtu active_mtu;
	/* rdma_rxe: its receive completions carry the kernel's wc flags. */
	bool rxe;
};

/* The QP of one case and what the case sets for it. */
struct cs {
	struct probe *p;
	const char *name;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	struct ep me, peer;
	unsigned int qp_access;
	uint8_t timeout, retry_cnt, rnr_retry;
	char fig[200];
	unsigned int step;
};

struct pcase {
	const char *name;
	const char *group;
	void (*run)(struct cs *c);
};

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* The TCP side channel                                                */

static void io_all(int fd, void *buf, size_t len, bool out)
{
	uint8_t *b = buf;
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = { fd, out ? POLLOUT : POLLIN, 0 };
		ssize_t n;
		int r = poll(&pfd, 1, IO_MS);

		CHECK(r > 0, "the peer said nothing for %d s", IO_MS / 1000);
		n = out ? send(fd, b + done, len - done, MSG_NOSIGNAL)
			: recv(fd, b + done, len - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		CHECK(n > 0, "the peer closed the connection (%s)",
		      n ? strerror(errno) : "EOF");
		done += (size_t)n;
	}
}

/* Sends mine, returns the peer's; both must be at the same step of the
 * same case. */
static struct ep xchg_ep(struct cs *c, const struct ep *mine)
{
	struct ep peer;
	struct ep out = *mine;

	snprintf(out.name, sizeof(out.name), "%s", c->name);
	io_all(c->p->fd, &out, sizeof(out), true);
	io_all(c->p->fd, &peer, sizeof(peer), false);
	peer.name[sizeof(peer.name) - 1] = 0;
	CHECK(strcmp(peer.name, c->name) == 0, "the peer runs case %s",
	      peer.name);
	return peer;
}

static uint64_t xchg(struct cs *c, uint64_t val)
{
	struct ep e = { .val = val, .step = c->step };
	struct ep r = xchg_ep(c, &e);

	CHECK(r.step == c->step, "the peer is at step %u, we at %u", r.step,
	      c->step);
	c->step++;
	return r.val;
}

static void sync_peer(struct cs *c)
{
	xchg(c, 0);
}

static int tcp_open(struct probe *p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, one = 1, r;
	double end = now_s() + 30;

	if (p->server) {
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
					   .sin6_port = htons(
						   strtoul(p->port, NULL, 10)),
					   .sin6_addr = IN6ADDR_ANY_INIT };
		struct sockaddr_in a4 = { .sin_family = AF_INET,
					  .sin_port = a6.sin6_port,
					  .sin_addr.s_addr = INADDR_ANY };
		int zero = 0, lfd;

		/* Both families where IPv6 is up, IPv4 alone where not. */
		lfd = socket(AF_INET6, SOCK_STREAM, 0);
		if (lfd >= 0) {
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
			if (bind(lfd, (struct sockaddr *)&a6, sizeof(a6))) {
				close(lfd);
				lfd = -1;
			}
		}
		if (lfd < 0) {
			lfd = socket(AF_INET, SOCK_STREAM, 0);
			CHECK(lfd >= 0, "socket: %s", strerror(errno));
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			CHECK(bind(lfd, (struct sockaddr *)&a4, sizeof(a4)) ==
				      0,
			      "bind port %s: %s", p->port, strerror(errno));
		}
		CHECK(listen(lfd, 1) == 0, "listen: %s", strerror(errno));
		printf("probe listening on port %s\n", p->port);
		fflush(stdout);
		struct pollfd pfd = { lfd, POLLIN, 0 };
		CHECK(poll(&pfd, 1, IO_MS) == 1, "no client came");
		fd = accept(lfd, NULL, NULL);
		CHECK(fd >= 0, "accept: %s", strerror(errno));
		close(lfd);
	} else {
		r = getaddrinfo(p->host, p->port, &hints, &res);
		CHECK(r == 0, "%s: %s", p->host, gai_strerror(r));
		/* The server may still be starting: try for a while. */
		while (fd < 0) {
			for (ai = res; ai && fd < 0; ai = ai->ai_next) {
				fd = socket(ai->ai_family, SOCK_STREAM, 0);
				if (fd >= 0 &&
				    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
					close(fd);
					fd = -1;
				}
			}
			CHECK(fd >= 0 || now_s() < end, "connect to %s:%s: %s",
			      p->host, p->port, strerror(errno));
			if (fd < 0)
				pause_us(200000);
		}
		freeaddrinfo(res);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ------------------------------------------------------------------ */
/* Verbs                                                               */

static void dev_open(struct probe *p)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	int i;

	CHECK(list && list[0], "no RDMA device");
	for (i = 0; list[i]; i++) {
		if (!p->devname ||
		    strcmp(ibv_get_device_name(list[i]), p->devname) == 0)
			break;
	}
	CHECK(list[i], "no device %s", p->devname);
	p->ctx = ibv_open_device(list[i]);
	CHECK(p->ctx, "ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	p->pd = ibv_alloc_pd(p->ctx);
	CHECK(p->pd, "ibv_alloc_pd: %s", strerror(errno));
	CHECK(ibv_query_port(p->ctx, p->ib_port, &pa) == 0, "ibv_query_port");
	p->active_mtu = pa.active_mtu;
	CHECK(ibv_query_device(p->ctx, &da) == 0, "ibv_query_device");
	p->rxe = da.vendor_id == RXE_VENDOR_ID && da.vendor_part_id == 0;
	if (!p->mtu)
		p->mtu = pa.active_mtu;
	CHECK(ibv_query_gid(p->ctx, p->ib_port, p->gidx, &p->gid) == 0,
	      "ibv_query_gid %d", p->gidx);
}

static unsigned int mtu_bytes(enum ibv_mtu m)
{
	return 128u << m;
}

static const char *qps_name(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS",
					 "SQD",	  "SQE",  "ERR" };

	return (unsigned int)s < 7 ? n[s] : "?";
}

static enum ibv_qp_state qp_state(struct cs *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	CHECK(ibv_query_qp(c->qp, &a, IBV_QP_STATE, &ia) == 0,
	      "ibv_query_qp: %s", strerror(errno));
	return a.qp_state;
}

/* The QP reaches state s within ms. */
static void expect_state(struct cs *c, enum ibv_qp_state s, int ms)
{
	double end = now_s() + ms / 1e3;
	enum ibv_qp_state got;

	while ((got = qp_state(c)) != s && now_s() < end)
		pause_us(10000);
	CHECK(got == s, "QP in %s, not %s", qps_name(got), qps_name(s));
}

static bool poll_wc(struct cs *c, struct ibv_wc *wc, int ms)
{
	double end = now_s() + ms / 1e3;
	unsigned int n = 0;
	int r;

	for (;;) {
		r = ibv_poll_cq(c->cq, 1, wc);
		CHECK(r >= 0, "ibv_poll_cq: %d", r);
		if (r == 1)
			return true;
		if (now_s() > end)
			return false;
		/* Spin a little, then leave the CPU to an emulated kernel. */
		if (++n > 100)
			pause_us(200);
	}
}

static void expect_wc(struct cs *c, struct ibv_wc *wc, uint64_t wr_id,
		      enum ibv_wc_status st, int opcode)
{
	CHECK(poll_wc(c, wc, WC_MS), "no completion of wr %" PRIu64 " in %d s",
	      wr_id, WC_MS / 1000);
	CHECK(wc->wr_id == wr_id && wc->status == st,
	      "wr %" PRIu64 ": %s (%d), wanted wr %" PRIu64 " %s",
	      (uint64_t)wc->wr_id, ibv_wc_status_str(wc->status), wc->status,
	      wr_id, ibv_wc_status_str(st));
	CHECK(st != IBV_WC_SUCCESS || opcode < 0 || (int)wc->opcode == opcode,
	      "wr %" PRIu64 ": opcode %d, wanted %d", wr_id, wc->opcode,
	      opcode);
}

static void expect_no_wc(struct cs *c)
{
	struct ibv_wc wc;

	CHECK(!poll_wc(c, &wc, 200), "unexpected completion: wr %" PRIu64 " %s",
	      (uint64_t)wc.wr_id, ibv_wc_status_str(wc.status));
}

static void post_send(struct cs *c, uint64_t wr_id, enum ibv_wr_opcode op,
		      size_t off, size_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)c->buf + off, (uint32_t)len,
			       c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	int r;

	switch (op) {
	case IBV_WR_SEND_WITH_IMM:
		wr.imm_data = htobe32(IMM);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wr.imm_data = htobe32(IMM);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		break;
	case IBV_WR_SEND_WITH_INV:
		wr.invalidate_rkey = rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* The caller left compare (or add) in c->me.val and swap
		 * in c->me.addr; the result's 8 bytes land at off. */
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = c->me.val;
		wr.wr.atomic.swap = c->me.addr;
		break;
	default:
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		break;
	}
	r = ibv_post_send(c->qp, &wr, &bad);
	CHECK(r == 0, "ibv_post_send op %d: %s", op, strerror(r));
}

static void post_recv(struct cs *c, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)c->buf + off, (uint32_t)len,
			       c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id,
				  .sg_list = &sge,
				  .num_sge = len ? 1 : 0 },
			   *bad;
	int r = ibv_post_recv(c->qp, &wr, &bad);

	CHECK(r == 0, "ibv_post_recv: %s", strerror(r));
}

static uint8_t pattern(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u;

	return (uint8_t)(x >> 13 ^ x >> 3 ^ i);
}

static void fill(struct cs *c, size_t off, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		c->buf[off + i] = pattern(seed, i);
}

static void check_fill(struct cs *c, size_t off, size_t len, uint32_t seed,
		       const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(c->buf[off + i] == pattern(seed, i),
		      "%s: byte %zu of %zu is 0x%02x, not 0x%02x", what, i, len,
		      c->buf[off + i], pattern(seed, i));
}

static void check_zero(struct cs *c, size_t off, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(c->buf[off + i] == 0, "%s: byte %zu is 0x%02x", what, i,
		      c->buf[off + i]);
}

static void cs_setup(struct cs *c, struct probe *p, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->name = name;
	probe_case = name;
	c->len = p->size + 4096;
	c->buf = aligned_alloc(4096, (c->len + 4095) & ~(size_t)4095);
	CHECK(c->buf, "no memory");
	memset(c->buf, 0, c->len);
	c->mr = ibv_reg_mr(p->pd, c->buf, c->len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_MW_BIND);
	CHECK(c->mr, "ibv_reg_mr: %s", strerror(errno));
	c->cq = ibv_create_cq(p->ctx, 64, NULL, NULL, 0);
	CHECK(c->cq, "ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = c->cq;
	c->qp = ibv_create_qp(p->pd, &ia);
	CHECK(c->qp, "ibv_create_qp: %s", strerror(errno));
	c->qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC;
	c->timeout = 14; /* 67 ms: an emulated guest is slow */
	c->retry_cnt = 7;
	c->rnr_retry = 7;
}

/* Exchanges addresses and takes the QP to RTS; the peer's ep is in
 * c->peer, its buffer the MR's first c->p->size bytes. */
static void cs_connect(struct cs *c)
{
	struct probe *p = c->p;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = p->ib_port,
				 .qp_access_flags = c->qp_access };
	struct ibv_qp_init_attr ia;
	int r;

	c->me.qpn = c->qp->qp_num;
	c->me.psn = (uint32_t)(now_s() * 1e6) & 0xffffff;
	memcpy(c->me.gid, &p->gid, 16);
	c->me.addr = (uintptr_t)c->buf;
	c->me.rkey = c->mr->rkey;
	c->me.len = (uint32_t)c->len; /* the MR's length */
	c->peer = xchg_ep(c, &c->me);

	r = ibv_modify_qp(c->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS);
	CHECK(r == 0, "to INIT: %s", strerror(r));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p->mtu;
	a.dest_qp_num = c->peer.qpn;
	a.rq_psn = c->peer.psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 14; /* 1.28 ms */
	a.ah_attr.is_global = 1;
	memcpy(&a.ah_attr.grh.dgid, c->peer.gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)p->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = p->ib_port;
	r = ibv_modify_qp(c->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	CHECK(r == 0, "to RTR: %s", strerror(r));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = 4;
	r = ibv_modify_qp(c->qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC);
	CHECK(r == 0, "to RTS: %s", strerror(r));
	CHECK(ibv_query_qp(c->qp, &a, IBV_QP_PATH_MTU, &ia) == 0, "ibv_query_"
								  "qp");
	CHECK(a.path_mtu == p->mtu, "path MTU %u, asked for %u",
	      mtu_bytes(a.path_mtu), mtu_bytes(p->mtu));
}

static void cs_teardown(struct cs *c)
{
	/* Both ends are done with the QPs before either destroys its own. */
	sync_peer(c);
	if (c->qp)
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
	CHECK(ibv_destroy_cq(c->cq) == 0, "ibv_destroy_cq");
	CHECK(ibv_dereg_mr(c->mr) == 0, "ibv_dereg_mr");
	free(c->buf);
	probe_ok("%s", c->fig);
	probe_case = "-";
}

static void figure_rate(struct cs *c, const char *what, size_t len, double t)
{
	snprintf(c->fig, sizeof(c->fig), "%s %zu B at MTU %u, %.1f MB/s", what,
		 len, mtu_bytes(c->p->mtu), t > 0 ? len / t / 1e6 : 0.0);
}

/* ------------------------------------------------------------------ */
/* The opcodes                                                         */

static void run_send(struct cs *c, bool imm)
{
	size_t n = c->p->size;
	struct ibv_wc wc;
	double t;

	cs_connect(c);
	if (c->p->server) {
		post_recv(c, 1, 0, n);
		sync_peer(c);
		expect_wc(c, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
		CHECK(wc.byte_len == n, "byte_len %u, not %zu", wc.byte_len, n);
		CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm, "wc_flags 0x%x",
		      wc.wc_flags);
		CHECK(!imm || be32toh(wc.imm_data) == IMM, "imm 0x%08x",
		      be32toh(wc.imm_data));
		CHECK(wc.qp_num == c->qp->qp_num, "qp_num 0x%x", wc.qp_num);
		check_fill(c, 0, n, 11, "received");
		snprintf(c->fig, sizeof(c->fig), "received %zu B%s, data ok", n,
			 imm ? " + imm 0x1234abcd" : "");
	} else {
		fill(c, 0, n, 11);
		sync_peer(c);
		t = now_s();
		post_send(c, 1, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 0, n,
			  0, 0);
		expect_wc(c, &wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
		figure_rate(c, "sent", n, now_s() - t);
	}
}

static void case_send(struct cs *c)
{
	run_send(c, false);
}

static void case_send_imm(struct cs *c)
{
	run_send(c, true);
}

static void run_write(struct cs *c, bool imm)
{
	size_t n = c->p->size;
	struct ibv_wc wc;
	double t;

	cs_connect(c);
	if (c->p->server) {
		if (imm)
			post_recv(c, 2, 0, 0);
		sync_peer(c);
		if (imm) {
			expect_wc(c, &wc, 2, IBV_WC_SUCCESS,
				  IBV_WC_RECV_RDMA_WITH_IMM);
			CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "wc_flags 0x%x",
			      wc.wc_flags);
			CHECK(be32toh(wc.imm_data) == IMM, "imm 0x%08x",
			      be32toh(wc.imm_data));
			CHECK(wc.byte_len == n, "byte_len %u, not %zu",
			      wc.byte_len, n);
		}
		sync_peer(c); /* the writer has its completion */
		check_fill(c, 0, n, 12, "written");
		check_zero(c, n, 64, "past the write");
		if (!imm)
			expect_no_wc(c);
		snprintf(c->fig, sizeof(c->fig), "written %zu B%s, data ok", n,
			 imm ? " + imm 0x1234abcd" : "");
	} else {
		fill(c, 0, n, 12);
		sync_peer(c);
		t = now_s();
		post_send(c, 2,
			  imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
			  0, n, c->peer.addr, c->peer.rkey);
		expect_wc(c, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		figure_rate(c, "wrote", n, now_s() - t);
		sync_peer(c);
	}
}

static void case_write(struct cs *c)
{
	run_write(c, false);
}

static void case_write_imm(struct cs *c)
{
	run_write(c, true);
}

static void case_read(struct cs *c)
{
	size_t n = c->p->size;
	struct ibv_wc wc;
	double t;

	cs_connect(c);
	if (c->p->server) {
		fill(c, 0, n, 13);
		sync_peer(c);
		sync_peer(c);
		expect_no_wc(c);
		check_fill(c, 0, n, 13, "read source");
		snprintf(c->fig, sizeof(c->fig), "read from: %zu B", n);
	} else {
		sync_peer(c);
		t = now_s();
		post_send(c, 3, IBV_WR_RDMA_READ, 0, n, c->peer.addr,
			  c->peer.rkey);
		expect_wc(c, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		t = now_s() - t;
		CHECK(wc.byte_len == n, "byte_len %u, not %zu", wc.byte_len, n);
		check_fill(c, 0, n, 13, "read");
		check_zero(c, n, 64, "past the read");
		figure_rate(c, "read", n, t);
		snprintf(c->fig + strlen(c->fig),
			 sizeof(c->fig) - strlen(c->fig), ", data ok");
		sync_peer(c);
	}
}

static uint64_t *u64_at(struct cs *c, size_t off)
{
	return (uint64_t *)(void *)(c->buf + off);
}

/* One atomic of the client: compare_add and swap, 8 bytes back. */
static uint64_t atomic_op(struct cs *c, enum ibv_wr_opcode op, uint64_t cmp,
			  uint64_t swap)
{
	struct ibv_wc wc;

	c->me.val = cmp;
	c->me.addr = swap;
	*u64_at(c, 64) = 0;
	post_send(c, 4, op, 64, 8, c->peer.addr + 8, c->peer.rkey);
	expect_wc(c, &wc, 4, IBV_WC_SUCCESS,
		  op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP
						  : IBV_WC_FETCH_ADD);
	return *u64_at(c, 64);
}

static const uint64_t A0 = 0x0123456789abcdefull, A1 = 0xfedcba9876543210ull,
		      A2 = 0x1111222233334444ull, ADD = 0x0000000100000003ull;

static void case_cas(struct cs *c)
{
	uint64_t v;

	cs_connect(c);
	if (c->p->server) {
		*u64_at(c, 8) = A0;
		sync_peer(c);
		sync_peer(c);
		CHECK(*u64_at(c, 8) == A1,
		      "target 0x%016" PRIx64 ", not 0x%016" PRIx64,
		      *u64_at(c, 8), A1);
		v = *u64_at(c, 0) | *u64_at(c, 16);
		CHECK(v == 0, "a neighbour changed");
		snprintf(c->fig, sizeof(c->fig),
			 "target 0x%016" PRIx64 " -> 0x%016" PRIx64, A0, A1);
	} else {
		sync_peer(c);
		/* A compare that matches swaps; one that does not leaves
		 * the target and returns it. */
		v = atomic_op(c, IBV_WR_ATOMIC_CMP_AND_SWP, A0, A1);
		CHECK(v == A0, "CAS 1 returned 0x%016" PRIx64, v);
		v = atomic_op(c, IBV_WR_ATOMIC_CMP_AND_SWP, A0, A2);
		CHECK(v == A1, "CAS 2 (no match) returned 0x%016" PRIx64, v);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig),
			 "swap returned old, mismatch left it");
	}
}

static void case_faa(struct cs *c)
{
	uint64_t v;

	cs_connect(c);
	if (c->p->server) {
		*u64_at(c, 8) = A0;
		sync_peer(c);
		sync_peer(c);
		CHECK(*u64_at(c, 8) == A0 + 2 * ADD,
		      "target 0x%016" PRIx64 ", not 0x%016" PRIx64,
		      *u64_at(c, 8), A0 + 2 * ADD);
		snprintf(c->fig, sizeof(c->fig),
			 "target 0x%016" PRIx64 " + 2 x 0x%" PRIx64, A0, ADD);
	} else {
		sync_peer(c);
		v = atomic_op(c, IBV_WR_ATOMIC_FETCH_AND_ADD, ADD, 0);
		CHECK(v == A0, "FAA 1 returned 0x%016" PRIx64, v);
		v = atomic_op(c, IBV_WR_ATOMIC_FETCH_AND_ADD, ADD, 0);
		CHECK(v == A0 + ADD, "FAA 2 returned 0x%016" PRIx64, v);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig), "fetched old values twice");
	}
}

/* SEND with Invalidate of a type 2 window the server bound through the
 * QP: the window works for a WRITE, the SEND invalidates it, the next
 * WRITE through it is a remote access error. */
static void case_send_inv(struct cs *c)
{
	size_t n = c->p->size < 4096 ? c->p->size : 4096;
	struct ibv_mw *mw = NULL;
	struct ibv_wc wc;
	uint32_t rkey = 0;
	int r;

	cs_connect(c);
	if (c->p->server) {
		struct ibv_send_wr wr = { .wr_id = 9,
					  .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		mw = ibv_alloc_mw(c->p->pd, IBV_MW_TYPE_2);
		CHECK(mw, "ibv_alloc_mw type 2: %s", strerror(errno));
		rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info.mr = c->mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)c->buf + 4096;
		wr.bind_mw.bind_info.length = n;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
						       IBV_ACCESS_REMOTE_READ;
		r = ibv_post_send(c->qp, &wr, &bad);
		CHECK(r == 0, "post BIND_MW: %s", strerror(r));
		expect_wc(c, &wc, 9, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		post_recv(c, 5, 0, n);
		xchg(c, rkey);
		expect_wc(c, &wc, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
		CHECK(wc.wc_flags &
			      (c->p->rxe ? RXE_WC_WITH_INV : IBV_WC_WITH_INV),
		      "wc_flags 0x%x, no WITH_INV%s", wc.wc_flags,
		      c->p->rxe ? " (rxe's bit 2)" : "");
		CHECK(wc.invalidated_rkey == rkey,
		      "invalidated rkey 0x%x, not 0x%x", wc.invalidated_rkey,
		      rkey);
		CHECK(wc.byte_len == n, "byte_len %u", wc.byte_len);
		check_fill(c, 0, n, 14, "received");
		check_fill(c, 4096, n, 15, "written through the window");
		sync_peer(c); /* the WRITE after the invalidation */
		/* Writing through an invalid key is class J: the QP fails. */
		expect_state(c, IBV_QPS_ERR, 5000);
		check_fill(c, 4096, n, 15, "the window after its invalidation");
		snprintf(c->fig, sizeof(c->fig),
			 "window 0x%x written, invalidated by the SEND "
			 "(%s)",
			 rkey, c->p->rxe ? "rxe: wc_flags bit 2" : "WITH_INV");
		sync_peer(c);
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
		c->qp = NULL;
		CHECK(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
	} else {
		rkey = (uint32_t)xchg(c, 0);
		fill(c, 4096, n, 15);
		post_send(c, 6, IBV_WR_RDMA_WRITE, 4096, n, c->peer.addr + 4096,
			  rkey);
		expect_wc(c, &wc, 6, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		fill(c, 0, n, 14);
		post_send(c, 7, IBV_WR_SEND_WITH_INV, 0, n, 0, rkey);
		expect_wc(c, &wc, 7, IBV_WC_SUCCESS, IBV_WC_SEND);
		memset(c->buf + 4096, 0, n);
		post_send(c, 8, IBV_WR_RDMA_WRITE, 4096, n, c->peer.addr + 4096,
			  rkey);
		expect_wc(c, &wc, 8, IBV_WC_REM_ACCESS_ERR, -1);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig),
			 "write, send+inv 0x%x ok; next write REM_ACCESS_ERR",
			 rkey);
		sync_peer(c);
	}
}

/* Binds mw, named by the key it has now, to n bytes at 4096 with rkey. */
static void bind_type2(struct cs *c, struct ibv_mw *mw, uint64_t wr_id,
		       uint32_t rkey, size_t n, enum ibv_wc_status st)
{
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	int r;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = c->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)c->buf + 4096;
	wr.bind_mw.bind_info.length = n;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = ibv_post_send(c->qp, &wr, &bad);
	CHECK(r == 0, "post BIND_MW: %s", strerror(r));
	expect_wc(c, &wc, wr_id, st, IBV_WC_BIND_MW);
}

static void post_local_inv(struct cs *c, uint64_t wr_id, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey },
			   *bad;
	struct ibv_wc wc;
	int r = ibv_post_send(c->qp, &wr, &bad);

	CHECK(r == 0, "post LOCAL_INV: %s", strerror(r));
	expect_wc(c, &wc, wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
}

/* The server's window invalidated by the client's SEND with Invalidate:
 * the server waits for the receive and checks it. */
static void server_inv_recv(struct cs *c, uint64_t wr_id, uint32_t rkey,
			    size_t n)
{
	struct ibv_wc wc;

	expect_wc(c, &wc, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV);
	CHECK(wc.wc_flags & (c->p->rxe ? RXE_WC_WITH_INV : IBV_WC_WITH_INV),
	      "wc_flags 0x%x, no WITH_INV", wc.wc_flags);
	CHECK(wc.invalidated_rkey == rkey, "invalidated rkey 0x%x, not 0x%x",
	      wc.invalidated_rkey, rkey);
	CHECK(wc.byte_len == n, "byte_len %u", wc.byte_len);
}

/* A type 2 window goes round twice: bound, invalidated by the client's
 * SEND with Invalidate, bound again with the next key byte, invalidated
 * with LOCAL_INV, bound again with that same key byte.  The client
 * writes through each binding; at the end a WRITE with the first rkey is
 * a remote access error. */
static void case_mw_rebind(struct cs *c)
{
	size_t n = c->p->size < 4096 ? c->p->size : 4096;
	struct ibv_wc wc;
	uint32_t k1, k2;

	cs_connect(c);
	if (c->p->server) {
		struct ibv_mw *mw = ibv_alloc_mw(c->p->pd, IBV_MW_TYPE_2);

		CHECK(mw, "ibv_alloc_mw type 2: %s", strerror(errno));
		k1 = ibv_inc_rkey(mw->rkey);
		bind_type2(c, mw, 20, k1, n, IBV_WC_SUCCESS);
		mw->rkey = k1;
		post_recv(c, 21, 0, n);
		xchg(c, k1);
		server_inv_recv(c, 21, k1, n);
		check_fill(c, 4096, n, 16, "written through the first binding");
		k2 = ibv_inc_rkey(k1);
		bind_type2(c, mw, 22, k2, n, IBV_WC_SUCCESS);
		mw->rkey = k2;
		xchg(c, k2);
		sync_peer(c); /* the client wrote through k2 */
		check_fill(c, 4096, n, 17,
			   "written through the second binding");
		post_local_inv(c, 23, k2);
		bind_type2(c, mw, 24, k2, n, IBV_WC_SUCCESS);
		sync_peer(c);
		sync_peer(c); /* the client wrote through k2 again */
		check_fill(c, 4096, n, 18, "written through the third binding");
		sync_peer(c); /* the WRITE with k1 */
		expect_state(c, IBV_QPS_ERR, 5000);
		check_fill(c, 4096, n, 18, "the window after a WRITE with k1");
		snprintf(c->fig, sizeof(c->fig),
			 "bound 0x%x, send+inv, bound 0x%x, local inv, "
			 "bound 0x%x again",
			 k1, k2, k2);
		sync_peer(c);
		/* The window is still bound to the QP: rxe's QP keeps a
		 * reference for it, and destroying the QP first waits for
		 * it (about 50 s in 6.1, then a WARNING). */
		CHECK(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
		c->qp = NULL;
	} else {
		k1 = (uint32_t)xchg(c, 0);
		fill(c, 4096, n, 16);
		post_send(c, 30, IBV_WR_RDMA_WRITE, 4096, n,
			  c->peer.addr + 4096, k1);
		expect_wc(c, &wc, 30, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		fill(c, 0, n, 14);
		post_send(c, 31, IBV_WR_SEND_WITH_INV, 0, n, 0, k1);
		expect_wc(c, &wc, 31, IBV_WC_SUCCESS, IBV_WC_SEND);
		k2 = (uint32_t)xchg(c, 0);
		fill(c, 4096, n, 17);
		post_send(c, 32, IBV_WR_RDMA_WRITE, 4096, n,
			  c->peer.addr + 4096, k2);
		expect_wc(c, &wc, 32, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		sync_peer(c);
		sync_peer(c); /* the server bound k2 again */
		fill(c, 4096, n, 18);
		post_send(c, 33, IBV_WR_RDMA_WRITE, 4096, n,
			  c->peer.addr + 4096, k2);
		expect_wc(c, &wc, 33, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		sync_peer(c);
		fill(c, 4096, n, 19);
		post_send(c, 34, IBV_WR_RDMA_WRITE, 4096, n,
			  c->peer.addr + 4096, k1);
		expect_wc(c, &wc, 34, IBV_WC_REM_ACCESS_ERR, -1);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig),
			 "wrote 0x%x, 0x%x, 0x%x; 0x%x then REM_ACCESS_ERR", k1,
			 k2, k2, k1);
		sync_peer(c);
	}
}

/* ------------------------------------------------------------------ */
/* The errors that cross the wire                                      */

/* A receiver with nothing posted and rnr_retry 0: RNR_RETRY_EXC_ERR;
 * the responder's QP stays in RTS. */
static void case_rnr(struct cs *c)
{
	struct ibv_wc wc;

	c->rnr_retry = 0;
	cs_connect(c);
	if (c->p->server) {
		sync_peer(c);
		sync_peer(c);
		expect_no_wc(c);
		expect_state(c, IBV_QPS_RTS, 0);
		snprintf(c->fig, sizeof(c->fig), "no receive: RNR NAK, QP RTS");
	} else {
		sync_peer(c);
		post_send(c, 1, IBV_WR_SEND, 0, 64, 0, 0);
		expect_wc(c, &wc, 1, IBV_WC_RNR_RETRY_EXC_ERR, -1);
		expect_state(c, IBV_QPS_ERR, 1000);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig), "SEND: %s",
			 ibv_wc_status_str(wc.status));
	}
}

/* A bind that names a type 2 window by a key it no longer has: bound
 * with a new key byte, invalidated by the client's SEND with Invalidate,
 * then bound again through an ibv_mw whose rkey was never moved to the
 * new key.  rxe compares the whole key (rxe_bind_mw()): MW_BIND_ERR, and
 * the QP goes to the error state. */
static void case_mw_stale(struct cs *c)
{
	size_t n = c->p->size < 4096 ? c->p->size : 4096;
	struct ibv_wc wc;
	uint32_t k1;

	cs_connect(c);
	if (c->p->server) {
		struct ibv_mw *mw = ibv_alloc_mw(c->p->pd, IBV_MW_TYPE_2);

		CHECK(mw, "ibv_alloc_mw type 2: %s", strerror(errno));
		k1 = ibv_inc_rkey(mw->rkey);
		bind_type2(c, mw, 40, k1, n, IBV_WC_SUCCESS);
		post_recv(c, 41, 0, n);
		xchg(c, k1);
		server_inv_recv(c, 41, k1, n);
		/* mw->rkey still holds the key of ibv_alloc_mw. */
		bind_type2(c, mw, 42, ibv_inc_rkey(k1), n, IBV_WC_MW_BIND_ERR);
		expect_state(c, IBV_QPS_ERR, 5000);
		snprintf(c->fig, sizeof(c->fig),
			 "bound 0x%x, send+inv; named 0x%x: MW_BIND_ERR", k1,
			 mw->rkey);
		sync_peer(c);
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
		c->qp = NULL;
		CHECK(ibv_dealloc_mw(mw) == 0, "ibv_dealloc_mw");
	} else {
		k1 = (uint32_t)xchg(c, 0);
		fill(c, 0, n, 14);
		post_send(c, 43, IBV_WR_SEND_WITH_INV, 0, n, 0, k1);
		expect_wc(c, &wc, 43, IBV_WC_SUCCESS, IBV_WC_SEND);
		snprintf(c->fig, sizeof(c->fig), "send+inv 0x%x ok", k1);
		sync_peer(c);
	}
}

/* A WRITE the responder must refuse: the requester gets status st, the
 * responder's QP goes to the error state and its memory is untouched. */
static void run_refused(struct cs *c, enum ibv_wr_opcode op, bool past_end,
			uint32_t rkey_xor, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	cs_connect(c);
	if (c->p->server) {
		post_recv(c, 1, 0, 64);
		sync_peer(c);
		sync_peer(c);
		expect_state(c, IBV_QPS_ERR, 5000);
		check_zero(c, 0, c->len, "the refused target");
		snprintf(c->fig, sizeof(c->fig),
			 "refused, QP ERR, memory intact");
	} else {
		fill(c, 0, 64, 16);
		sync_peer(c);
		/* past_end: 64 bytes from 32 before the MR's end. */
		post_send(c, 1, op, 0, 64,
			  c->peer.addr + (past_end ? c->peer.len - 32 : 0),
			  c->peer.rkey ^ rkey_xor);
		expect_wc(c, &wc, 1, st, -1);
		expect_state(c, IBV_QPS_ERR, 1000);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig), "%s: %s",
			 op == IBV_WR_RDMA_READ ? "READ" : "WRITE",
			 ibv_wc_status_str(wc.status));
	}
}

static void case_rkey(struct cs *c)
{
	/* Another key byte: rxe and softrdma both draw it at random. */
	run_refused(c, IBV_WR_RDMA_WRITE, false, 0x80, IBV_WC_REM_ACCESS_ERR);
}

static void case_bounds(struct cs *c)
{
	run_refused(c, IBV_WR_RDMA_WRITE, true, 0, IBV_WC_REM_ACCESS_ERR);
}

static void case_invreq(struct cs *c)
{
	/* A READ of a QP that allows remote writes only. */
	if (c->p->server)
		c->qp_access = IBV_ACCESS_REMOTE_WRITE;
	run_refused(c, IBV_WR_RDMA_READ, false, 0, IBV_WC_REM_INV_REQ_ERR);
}

/* The responder's QP is destroyed: nothing answers, the requester gives
 * up after retry_cnt retransmissions. */
static void case_retry(struct cs *c)
{
	struct ibv_wc wc;
	double t;

	c->timeout = 12; /* 16.8 ms */
	c->retry_cnt = 2;
	cs_connect(c);
	if (c->p->server) {
		sync_peer(c);
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
		c->qp = NULL;
		sync_peer(c);
		sync_peer(c);
		expect_no_wc(c);
		snprintf(c->fig, sizeof(c->fig), "QP destroyed");
	} else {
		sync_peer(c);
		sync_peer(c);
		t = now_s();
		post_send(c, 1, IBV_WR_SEND, 0, 64, 0, 0);
		expect_wc(c, &wc, 1, IBV_WC_RETRY_EXC_ERR, -1);
		t = now_s() - t;
		expect_state(c, IBV_QPS_ERR, 1000);
		sync_peer(c);
		snprintf(c->fig, sizeof(c->fig), "SEND: %s after %.0f ms",
			 ibv_wc_status_str(wc.status), t * 1e3);
	}
}

static const struct pcase cases[] = {
	{ "send", "ops", case_send },
	{ "send_imm", "ops", case_send_imm },
	{ "write", "ops", case_write },
	{ "write_imm", "ops", case_write_imm },
	{ "read", "ops", case_read },
	{ "cas", "ops", case_cas },
	{ "faa", "ops", case_faa },
	{ "send_inv", "ops", case_send_inv },
	{ "mw_rebind", "ops", case_mw_rebind },
	{ "rnr", "errors", case_rnr },
	{ "rkey", "errors", case_rkey },
	{ "bounds", "errors", case_bounds },
	{ "invreq", "errors", case_invreq },
	{ "mw_stale", "errors", case_mw_stale },
	{ "retry", "errors", case_retry },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void usage(void) __attribute__((noreturn));

static void usage(void)
{
	fprintf(stderr, "usage: verbs_probe [-d DEV] [-i PORT] [-g GIDX] [-m "
			"MTU] "
			"[-s SIZE] [-p TCP] CASES [SERVER]\ncases:");
	for (size_t i = 0; i < NCASES; i++)
		fprintf(stderr, " %s", cases[i].name);
	fprintf(stderr, " (groups: ops errors)\n");
	exit(2);
}

/* 256..4096 bytes to the enum: 128 << IBV_MTU_x bytes. */
static enum ibv_mtu mtu_enum(unsigned long b)
{
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (mtu_bytes((enum ibv_mtu)m) == b)
			return (enum ibv_mtu)m;
	usage();
}

int main(int argc, char **argv)
{
	struct probe p = { .ib_port = 1,
			   .port = PROBE_TCP_PORT,
			   .size = DEFAULT_SIZE };
	bool want[NCASES] = { false };
	char *list, *tok, *save = NULL, *end;
	unsigned int n = 0;
	int o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt(argc, argv, "d:i:g:m:s:p:")) != -1) {
		switch (o) {
		case 'd':
			p.devname = optarg;
			break;
		case 'i':
			p.ib_port = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case 'g':
			/* An empty or non-numeric index is a mistake, not 0. */
			p.gidx = (int)strtol(optarg, &end, 0);
			if (end == optarg || *end || p.gidx < 0)
				usage();
			break;
		case 'm':
			p.mtu = mtu_enum(strtoul(optarg, NULL, 0));
			break;
		case 's':
			p.size = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			p.port = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || argc - optind > 2 || p.size < 64 ||
	    p.size > (64u << 20))
		usage();
	list = strdup(argv[optind]);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (size_t i = 0; i < NCASES; i++) {
			if (!strcmp(tok, cases[i].name) ||
			    !strcmp(tok, cases[i].group)) {
				want[i] = true;
				found = true;
			}
		}
		if (!found)
			usage();
	}
	free(list);
	p.host = argc - optind == 2 ? argv[optind + 1] : NULL;
	p.server = !p.host;
	probe_server = p.server;
	dev_open(&p);
	p.fd = tcp_open(&p);
	for (size_t i = 0; i < NCASES; i++) {
		struct cs c;

		if (!want[i])
			continue;
		cs_setup(&c, &p, cases[i].name);
		cases[i].run(&c);
		cs_teardown(&c);
		n++;
	}
	printf("probe done: %u cases, %s, path MTU %u (port %u)\n", n,
	       p.server ? "server" : "client", mtu_bytes(p.mtu),
	       mtu_bytes(p.active_mtu));
	close(p.fd);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.ctx);
	return 0;
}
