/* SPDX-License-Identifier: MIT */
/*
 * cm_probe: what the RDMA CM carries besides a connection, between two
 * hosts, through librdmacm's public API alone: private data in REQ, REP
 * and REJ, rejects, teardown from either side, a REQ nobody answers, and
 * a peer gone from the network and a peer process that dies connected.  The same binary (dynamically
 * linked against librdmacm.so.1 and libibverbs.so.1) runs on the host on
 * softrdma and in the interop guest on rdma-core and the kernel's CM.
 *
 *   cm_probe [-b ADDR] [-p PORT] CASES [SERVER]
 *
 * Without SERVER it listens on ADDR (any address without -b); with it,
 * it connects.  CASES is a comma-separated list of the names below; both
 * sides get the same one.  The first byte of each REQ's private data
 * names its case, so the server follows the client.  Each side prints
 * one line per case:
 *   probe CASE ROLE ok|FAIL WHAT
 * A failure ends the program (exit 1).
 *
 *   reject    REQ with 56 B of private data; the server checks them and
 *             rejects with 148 B; the client sees REJECTED, status 28
 *             (consumer reject) and the 148 B.
 *   accept    REP with 196 B of private data, checked by the client; a
 *             4 KiB SEND over the new QP, checked by the server; the
 *             client disconnects (DREQ) and both see DISCONNECTED.
 *   srv_disc  the same connection, but the server disconnects.
 *   timeout   the network drops everything between the two (the test
 *             sets that up): the client's REQs go unanswered and it sees
 *             UNREACHABLE with -ETIMEDOUT; the server must see nothing
 *             and waits to be stopped.
 *   srv_exit  the server process exits connected, without a word: its
 *             CM must say DREQ for it; the client sees DISCONNECTED.
 *   cli_exit  the same with the client exiting.
 * srv_exit and cli_exit end their process, and the server waits for good
 * in timeout, so any of them comes last.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "probe_report.h"

#define PROBE_PORT "18700"
#define EVENT_MS 20000	  /* one CM step on an emulated guest */
#define TIMEOUT_MS 200000 /* REQs into the void: 16 tries ~6 s apart */
#define DISC_MS 10000	  /* DREQ after a disconnect or an exit */
#define REQ_PD 56	  /* 92 B of REQ private data less the CMA header */
#define REP_PD 196
#define REJ_PD 148
#define REJ_CONSUMER 28 /* IBTA reject reason: consumer defined */
#define MSG_BYTES 4096

enum pcase {
	C_REJECT = 1,
	C_ACCEPT,
	C_SRV_DISC,
	C_TIMEOUT,
	C_SRV_EXIT,
	C_CLI_EXIT
};

static const char *const case_names[] = {
	[C_REJECT] = "reject",	   [C_ACCEPT] = "accept",
	[C_SRV_DISC] = "srv_disc", [C_TIMEOUT] = "timeout",
	[C_SRV_EXIT] = "srv_exit", [C_CLI_EXIT] = "cli_exit",
};
#define N_CASES (sizeof(case_names) / sizeof(case_names[0]))

struct probe {
	bool server;
	const char *bind;
	const char *host;
	const char *port;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
};

/* One connection's QP and buffer. */
struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* The bytes of every private data and message: the case first, then a
 * pattern that differs per kind (seed) and per byte. */
static void fill(uint8_t *b, size_t n, enum pcase c, uint8_t seed)
{
	b[0] = (uint8_t)c;
	for (size_t i = 1; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

static bool same(const uint8_t *b, size_t n, enum pcase c, uint8_t seed)
{
	uint8_t want[MSG_BYTES];

	fill(want, n, c, seed);
	return memcmp(b, want, n) == 0;
}

/* ------------------------------------------------------------------ */
/* CM events                                                           */

/* The next event of the channel within ms, or NULL at the deadline. */
static struct rdma_cm_event *next_event(struct probe *p, int ms)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int r;

	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	CHECK(r >= 0, "poll on the event channel: %s", strerror(errno));
	if (r == 0)
		return NULL;
	CHECK(rdma_get_cm_event(p->ch, &ev) == 0, "rdma_get_cm_event: %s",
	      strerror(errno));
	return ev;
}

/* The next event, which must be of type want for id (any id if NULL). */
static struct rdma_cm_event *expect_event(struct probe *p,
					  struct rdma_cm_id *id,
					  enum rdma_cm_event_type want, int ms)
{
	struct rdma_cm_event *ev = next_event(p, ms);

	CHECK(ev, "no %s within %d s", rdma_event_str(want), ms / 1000);
	CHECK(ev->event == want && (!id || ev->id == id),
	      "%s (status %d) where %s was due", rdma_event_str(ev->event),
	      ev->status, rdma_event_str(want));
	return ev;
}

static void ack(struct rdma_cm_event *ev)
{
	CHECK(rdma_ack_cm_event(ev) == 0, "rdma_ack_cm_event: %s",
	      strerror(errno));
}

/* ------------------------------------------------------------------ */
/* QPs                                                                 */

static void conn_qp(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};

	c->id = id;
	c->pd = ibv_alloc_pd(id->verbs);
	CHECK(c->pd, "ibv_alloc_pd: %s", strerror(errno));
	c->cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	CHECK(c->cq, "ibv_create_cq: %s", strerror(errno));
	c->buf = calloc(1, MSG_BYTES);
	CHECK(c->buf, "out of memory");
	c->mr = ibv_reg_mr(c->pd, c->buf, MSG_BYTES, IBV_ACCESS_LOCAL_WRITE);
	CHECK(c->mr, "ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	CHECK(rdma_create_qp(id, c->pd, &qa) == 0, "rdma_create_qp: %s",
	      strerror(errno));
}

static void conn_free(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	free(c->buf);
	if (c->id)
		rdma_destroy_id(c->id);
	memset(c, 0, sizeof(*c));
}

static void post(struct conn *c, bool recv)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf,
			       .length = MSG_BYTES,
			       .lkey = c->mr->lkey };
	int err;

	if (recv) {
		struct ibv_recv_wr wr = { .wr_id = 1,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *bad;

		err = ibv_post_recv(c->id->qp, &wr, &bad);
	} else {
		struct ibv_send_wr wr = { .wr_id = 2,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND },
				   *bad;

		err = ibv_post_send(c->id->qp, &wr, &bad);
	}
	CHECK(err == 0, "ibv_post_%s: %s", recv ? "recv" : "send",
	      strerror(err));
}

static void expect_wc(struct conn *c, enum ibv_wc_opcode op)
{
	double end = now_s() + EVENT_MS / 1000.0;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0 && now_s() < end)
		usleep(200);
	CHECK(n == 1, "no completion within %d s", EVENT_MS / 1000);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == op,
	      "completion %s, opcode %d", ibv_wc_status_str(wc.status),
	      wc.opcode);
	if (op == IBV_WC_RECV)
		CHECK(wc.byte_len == MSG_BYTES, "received %u B", wc.byte_len);
}

/* ------------------------------------------------------------------ */
/* Client                                                              */

static struct rdma_cm_id *client_id(struct probe *p)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *id;
	int err;

	err = rdma_getaddrinfo(p->host, p->port, &hints, &res);
	CHECK(err == 0, "rdma_getaddrinfo %s: %s", p->host,
	      err == -1 ? strerror(errno) : gai_strerror(err));
	CHECK(rdma_create_id(p->ch, &id, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	CHECK(rdma_resolve_addr(id, NULL, res->ai_dst_addr, 5000) == 0,
	      "rdma_resolve_addr: %s", strerror(errno));
	rdma_freeaddrinfo(res);
	ack(expect_event(p, id, RDMA_CM_EVENT_ADDR_RESOLVED, EVENT_MS));
	CHECK(rdma_resolve_route(id, 5000) == 0, "rdma_resolve_route: %s",
	      strerror(errno));
	ack(expect_event(p, id, RDMA_CM_EVENT_ROUTE_RESOLVED, EVENT_MS));
	return id;
}

/* What either side offers: one READ each way, RNR retried for good; the
 * private data of case pc with the pattern of seed. */
static struct rdma_conn_param conn_param(uint8_t *pd, uint8_t len,
					 enum pcase pc, uint8_t seed)
{
	struct rdma_conn_param cp = {
		.private_data = pd,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	fill(pd, len, pc, seed);
	return cp;
}

static void client_connect(struct probe *p, struct conn *c, enum pcase pc)
{
	uint8_t pd[REQ_PD];
	struct rdma_conn_param cp = conn_param(pd, sizeof(pd), pc, 0x11);

	conn_qp(c, client_id(p));
	CHECK(rdma_connect(c->id, &cp) == 0, "rdma_connect: %s",
	      strerror(errno));
}

/* The REP's private data, in the ESTABLISHED event. */
static void client_established(struct probe *p, struct conn *c, enum pcase pc)
{
	struct rdma_cm_event *ev =
		expect_event(p, c->id, RDMA_CM_EVENT_ESTABLISHED, EVENT_MS);

	CHECK(ev->param.conn.private_data_len == REP_PD,
	      "ESTABLISHED with %u B of private data, not %d",
	      ev->param.conn.private_data_len, REP_PD);
	CHECK(same(ev->param.conn.private_data, REP_PD, pc, 0x33), "the REP's "
								   "private "
								   "data "
								   "differ");
	ack(ev);
}

static double wait_disconnected(struct probe *p, struct rdma_cm_id *id,
				double since)
{
	ack(expect_event(p, id, RDMA_CM_EVENT_DISCONNECTED, DISC_MS));
	return now_s() - since;
}

/* srv_exit and cli_exit, once connected: the side that exits does so at
 * once; the other must see its CM's DREQ. */
static void exit_case(struct probe *p, struct conn *c, bool mine)
{
	double t;

	if (mine) {
		probe_ok("connected, exiting without a word");
		_exit(0);
	}
	t = wait_disconnected(p, c->id, now_s());
	probe_ok("the %s exited connected: DISCONNECTED after %.0f ms",
		 probe_server ? "client" : "server", t * 1e3);
}

static void client_case(struct probe *p, enum pcase pc)
{
	struct rdma_cm_event *ev;
	struct conn c = { 0 };
	double t0, t;

	client_connect(p, &c, pc);
	switch (pc) {
	case C_REJECT:
		ev = expect_event(p, c.id, RDMA_CM_EVENT_REJECTED, EVENT_MS);
		CHECK(ev->status == REJ_CONSUMER, "REJECTED, status %d, not %d",
		      ev->status, REJ_CONSUMER);
		CHECK(ev->param.conn.private_data_len == REJ_PD,
		      "REJECTED with %u B of private data, not %d",
		      ev->param.conn.private_data_len, REJ_PD);
		CHECK(same(ev->param.conn.private_data, REJ_PD, pc, 0x55),
		      "the REJ's private data differ");
		ack(ev);
		probe_ok("REJECTED, status %d, %d B of private data intact",
			 REJ_CONSUMER, REJ_PD);
		break;
	case C_ACCEPT:
	case C_SRV_DISC:
		client_established(p, &c, pc);
		fill(c.buf, MSG_BYTES, pc, 0x77);
		post(&c, false);
		expect_wc(&c, IBV_WC_SEND);
		if (pc == C_ACCEPT) {
			t0 = now_s();
			CHECK(rdma_disconnect(c.id) == 0, "rdma_disconnect: %s",
			      strerror(errno));
			t = wait_disconnected(p, c.id, t0);
			probe_ok("REP's %d B intact, SEND %d B, disconnected "
				 "in %.0f ms",
				 REP_PD, MSG_BYTES, t * 1e3);
		} else {
			wait_disconnected(p, c.id, now_s());
			probe_ok("REP's %d B intact, SEND %d B, the server's "
				 "DREQ seen",
				 REP_PD, MSG_BYTES);
		}
		break;
	case C_TIMEOUT:
		t0 = now_s();
		ev = next_event(p, TIMEOUT_MS);
		CHECK(ev, "no event within %d s of an unanswered REQ",
		      TIMEOUT_MS / 1000);
		CHECK(ev->event == RDMA_CM_EVENT_UNREACHABLE &&
			      ev->status == -ETIMEDOUT,
		      "%s, status %d, where UNREACHABLE -ETIMEDOUT was due",
		      rdma_event_str(ev->event), ev->status);
		ack(ev);
		t = now_s() - t0;
		/* The kernel (6.1) sends the REQ 16 times (15 retries),
		 * 6.1-6.4 s apart: about 100 s. */
		CHECK(t > 60 && t < 150, "UNREACHABLE after %.1f s", t);
		probe_ok("UNREACHABLE, -ETIMEDOUT after %.1f s", t);
		break;
	case C_SRV_EXIT:
	case C_CLI_EXIT:
		client_established(p, &c, pc);
		exit_case(p, &c, pc == C_CLI_EXIT);
		break;
	}
	conn_free(&c);
}

/* ------------------------------------------------------------------ */
/* Server                                                              */

static void server_listen(struct probe *p)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP },
			     *res;
	int err;

	err = rdma_getaddrinfo(p->bind, p->port, &hints, &res);
	CHECK(err == 0, "rdma_getaddrinfo %s: %s", p->bind ? p->bind : "*",
	      err == -1 ? strerror(errno) : gai_strerror(err));
	CHECK(rdma_create_id(p->ch, &p->listen, NULL, RDMA_PS_TCP) == 0,
	      "rdma_create_id: %s", strerror(errno));
	CHECK(rdma_bind_addr(p->listen, res->ai_src_addr) == 0,
	      "rdma_bind_addr: %s", strerror(errno));
	rdma_freeaddrinfo(res);
	CHECK(rdma_listen(p->listen, 4) == 0, "rdma_listen: %s",
	      strerror(errno));
}

/* The next REQ, which must be of case pc, with its private data. */
static struct rdma_cm_id *server_req(struct probe *p, enum pcase pc)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint8_t got;

	ev = expect_event(p, NULL, RDMA_CM_EVENT_CONNECT_REQUEST,
			  pc == C_REJECT ? 4 * EVENT_MS : TIMEOUT_MS);
	id = ev->id;
	CHECK(ev->param.conn.private_data_len == REQ_PD,
	      "REQ with %u B of private data, not %d",
	      ev->param.conn.private_data_len, REQ_PD);
	got = ((const uint8_t *)ev->param.conn.private_data)[0];
	CHECK(got == pc, "REQ of case %u, not %u", got, pc);
	CHECK(same(ev->param.conn.private_data, REQ_PD, pc, 0x11), "REQ data "
								   "differ");
	ack(ev);
	return id;
}

static void server_accept(struct probe *p, struct conn *c, enum pcase pc)
{
	uint8_t pd[REP_PD];
	struct rdma_conn_param cp = conn_param(pd, sizeof(pd), pc, 0x33);

	post(c, true);
	CHECK(rdma_accept(c->id, &cp) == 0, "rdma_accept: %s", strerror(errno));
	ack(expect_event(p, c->id, RDMA_CM_EVENT_ESTABLISHED, EVENT_MS));
}

/* timeout: the network drops everything, so no event may come; the
 * test stops this server once the client is done. */
static void server_sees_nothing(struct probe *p) __attribute__((noreturn));

static void server_sees_nothing(struct probe *p)
{
	for (;;) {
		struct rdma_cm_event *ev = next_event(p, -1);

		CHECK(!ev, "%s got through", rdma_event_str(ev->event));
	}
}

static void server_case(struct probe *p, enum pcase pc)
{
	struct conn c = { 0 };
	uint8_t rej[REJ_PD];
	double t0, t;

	if (pc == C_TIMEOUT)
		server_sees_nothing(p);
	conn_qp(&c, server_req(p, pc));
	switch (pc) {
	case C_REJECT:
		fill(rej, sizeof(rej), pc, 0x55);
		CHECK(rdma_reject(c.id, rej, sizeof(rej)) == 0,
		      "rdma_reject: %s", strerror(errno));
		probe_ok("REQ's %d B intact, rejected with %d B", REQ_PD,
			 REJ_PD);
		break;
	case C_ACCEPT:
	case C_SRV_DISC:
		server_accept(p, &c, pc);
		expect_wc(&c, IBV_WC_RECV);
		CHECK(same(c.buf, MSG_BYTES, pc, 0x77), "the SEND's data "
							"differ");
		if (pc == C_ACCEPT) {
			wait_disconnected(p, c.id, now_s());
			probe_ok("REQ's %d B intact, accepted with %d B, %d B "
				 "received intact, the client's DREQ seen",
				 REQ_PD, REP_PD, MSG_BYTES);
		} else {
			t0 = now_s();
			CHECK(rdma_disconnect(c.id) == 0, "rdma_disconnect: %s",
			      strerror(errno));
			t = wait_disconnected(p, c.id, t0);
			probe_ok("%d B received intact, disconnected in %.0f "
				 "ms",
				 MSG_BYTES, t * 1e3);
		}
		break;
	case C_TIMEOUT: /* not reached: server_sees_nothing() */
		break;
	case C_SRV_EXIT:
	case C_CLI_EXIT:
		server_accept(p, &c, pc);
		exit_case(p, &c, pc == C_SRV_EXIT);
		break;
	}
	conn_free(&c);
}

/* ------------------------------------------------------------------ */

static enum pcase case_by_name(const char *name)
{
	for (size_t i = 1; i < N_CASES; i++)
		if (strcmp(name, case_names[i]) == 0)
			return (enum pcase)i;
	fprintf(stderr, "cm_probe: no case %s\n", name);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: cm_probe [-b ADDR] [-p PORT] CASES [SERVER]\n"
			"cases: reject accept srv_disc timeout srv_exit "
			"cli_exit\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct probe p = { .port = PROBE_PORT };
	enum pcase list[16];
	size_t n = 0;
	char *cases, *tok, *save;
	int opt;

	while ((opt = getopt(argc, argv, "b:p:")) != -1) {
		switch (opt) {
		case 'b':
			p.bind = optarg;
			break;
		case 'p':
			p.port = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || argc - optind > 2)
		usage();
	cases = strdup(argv[optind]);
	for (tok = strtok_r(cases, ",", &save); tok && n < 16;
	     tok = strtok_r(NULL, ",", &save))
		list[n++] = case_by_name(tok);
	p.host = argv[optind + 1];
	p.server = !p.host;
	probe_server = p.server;
	setvbuf(stdout, NULL, _IOLBF, 0);

	p.ch = rdma_create_event_channel();
	CHECK(p.ch, "rdma_create_event_channel: %s", strerror(errno));
	if (p.server)
		server_listen(&p);
	for (size_t i = 0; i < n; i++) {
		probe_case = case_names[list[i]];
		if (p.server)
			server_case(&p, list[i]);
		else
			client_case(&p, list[i]);
	}
	probe_case = "done";
	if (p.listen)
		rdma_destroy_id(p.listen);
	rdma_destroy_event_channel(p.ch);
	printf("probe done: %zu cases, %s\n", n,
	       p.server ? "server" : "client");
	free(cases);
	return 0;
}
