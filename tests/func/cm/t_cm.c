/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/msg.h"

#include "t_cm.h"

struct rdma_event_channel *t_cm_channel(void)
{
	return T_NONNULL(rdma_create_event_channel());
}

struct rdma_cm_event *t_cm_next(struct rdma_event_channel *ch, int timeout_ms)
{
	struct rdma_cm_event *ev;

	if (!t_fd_readable(ch->fd, timeout_ms))
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		T_FAIL("rdma_get_cm_event: %s", strerror(errno));
	return ev;
}

struct rdma_cm_event *t_cm_expect_at(const char *file, int line,
				     struct rdma_event_channel *ch,
				     enum rdma_cm_event_type type, int status,
				     struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev = t_cm_next(ch, T_WAIT_MS);

	if (!ev)
		t_fail_at(file, line, "no event within %d ms, expected %s",
			  T_WAIT_MS, rdma_event_str(type));
	if (ev->event != type ||
	    (status != T_CM_ANY_STATUS && ev->status != status))
		t_fail_at(file, line,
			  "event %s status %d, expected %s status %d",
			  rdma_event_str(ev->event), ev->status,
			  rdma_event_str(type), status);
	if (id && ev->id != id)
		t_fail_at(file, line, "%s on id %p, expected id %p",
			  rdma_event_str(type), (void *)ev->id, (void *)id);
	return ev;
}

void t_cm_expect_none_at(const char *file, int line,
			 struct rdma_event_channel *ch, int quiet_ms)
{
	struct rdma_cm_event *ev = t_cm_next(ch, quiet_ms);

	if (ev)
		t_fail_at(file, line, "unexpected event %s status %d",
			  rdma_event_str(ev->event), ev->status);
}

void t_cm_addr(struct sockaddr_in *sin, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

uint16_t t_cm_listen(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		     enum rdma_port_space ps)
{
	struct sockaddr_in sin;
	uint16_t port;

	T_EQ(rdma_create_id(ch, id, NULL, ps), 0);
	t_cm_addr(&sin, 0);
	T_EQ(rdma_bind_addr(*id, (struct sockaddr *)&sin), 0);
	T_EQ(rdma_listen(*id, 8), 0);
	port = ntohs(rdma_get_src_port(*id));
	T_NE(port, 0);
	return port;
}

void t_cm_resolve(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		  uint16_t port)
{
	struct sockaddr_in dst;

	t_cm_addr(&dst, port);
	T_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, id);
	T_ASSERT(id->verbs != NULL);
	T_EQ(rdma_resolve_route(id, 1000), 0);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, id);
	T_EQ(id->route.num_paths, 1);
}

void t_cm_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	T_EQ(rdma_create_qp(id, NULL, &ia), 0);
	T_ASSERT(id->qp && id->send_cq && id->recv_cq);
}

void t_cm_pair_connect(struct t_cm_pair *p)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;

	memset(p, 0, sizeof(*p));
	p->pch = t_cm_channel();
	p->ach = t_cm_channel();
	p->port = t_cm_listen(p->pch, &p->listen, RDMA_PS_TCP);
	T_EQ(rdma_create_id(p->ach, &p->client, NULL, RDMA_PS_TCP), 0);
	t_cm_resolve(p->ach, p->client, p->port);
	t_cm_qp(p->client, IBV_QPT_RC);
	T_EQ(rdma_connect(p->client, &cp), 0);
	ev = T_CM_EXPECT(p->pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_PTR_EQ(ev->listen_id, p->listen);
	p->server = ev->id;
	T_EQ(rdma_ack_cm_event(ev), 0);
	t_cm_qp(p->server, IBV_QPT_RC);
	T_EQ(rdma_accept(p->server, &cp), 0);
	T_CM_EXPECT_ACK(p->ach, RDMA_CM_EVENT_ESTABLISHED, 0, p->client);
	T_CM_EXPECT_ACK(p->pch, RDMA_CM_EVENT_ESTABLISHED, 0, p->server);
}

void t_cm_disconnect(struct rdma_event_channel *pch,
		     struct rdma_event_channel *ach, struct rdma_cm_id *client,
		     struct rdma_cm_id *server)
{
	T_EQ(rdma_disconnect(client), 0);
	T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0, server);
	T_EQ(rdma_disconnect(server), 0);
	T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_DISCONNECTED, 0, client);
}

void t_cm_pair_disconnect(struct t_cm_pair *p)
{
	t_cm_disconnect(p->pch, p->ach, p->client, p->server);
}

void t_cm_pair_destroy(struct t_cm_pair *p)
{
	if (p->client) {
		if (p->client->qp)
			rdma_destroy_qp(p->client);
		T_EQ(rdma_destroy_id(p->client), 0);
	}
	if (p->server) {
		if (p->server->qp)
			rdma_destroy_qp(p->server);
		T_EQ(rdma_destroy_id(p->server), 0);
	}
	if (p->listen)
		T_EQ(rdma_destroy_id(p->listen), 0);
	rdma_destroy_event_channel(p->ach);
	rdma_destroy_event_channel(p->pch);
	memset(p, 0, sizeof(*p));
}

struct ibv_mr *t_cm_mr(struct rdma_cm_id *id, size_t len)
{
	void *buf = t_zalloc(len);

	return T_NONNULL(ibv_reg_mr(id->pd, buf, len,
				    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ));
}

void t_cm_mr_free(struct ibv_mr *mr)
{
	void *buf = mr->addr;
	size_t len = mr->length;

	T_EQ(ibv_dereg_mr(mr), 0);
	t_free(buf, len);
}

void t_cm_send_check(struct rdma_cm_id *a, struct ibv_mr *amr,
		     struct rdma_cm_id *b, struct ibv_mr *bmr, size_t len,
		     uint32_t seed)
{
	struct ibv_wc wc;

	memset(bmr->addr, 0, len);
	t_fill(amr->addr, len, seed);
	t_post_recv(b->qp, seed, bmr, bmr->addr, (uint32_t)len);
	t_post_send(a->qp, seed, IBV_WR_SEND, amr, amr->addr, (uint32_t)len,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(a->send_cq, &wc, seed, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(b->recv_cq, &wc, seed, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(bmr->addr, len, seed);
}

static void cmd(int fd, uint32_t op, const void *req, uint32_t len, void *rep,
		size_t rep_len)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_msg_hdr h = { .op = op, .len = len };
	int fds[4], nfds;

	T_GE(srd_msg_send(fd, &h, req, NULL, 0), 0);
	T_GT(srd_msg_recv(fd, buf, sizeof(buf), fds, &nfds, 4), 0);
	memcpy(&h, buf, sizeof(h));
	T_EQ(h.status, 0);
	T_EQ(h.len, rep_len);
	if (rep_len)
		memcpy(rep, buf + sizeof(h), rep_len);
}

/* A command connection of our own to the test's daemon, after HELLO. */
static int daemon_conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct srd_hello_req hello = { .version = SRD_PROTO_VERSION,
				       .pid = (uint32_t)getpid() };
	struct srd_hello_rep hrep;
	size_t n = strlen(t_socket_name());
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	T_GE(fd, 0);
	memcpy(sa.sun_path + 1, t_socket_name(), n);
	T_EQ(connect(fd, (struct sockaddr *)&sa,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				 n)),
	     0);
	cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello), &hrep, sizeof(hrep));
	return fd;
}

void t_cm_stats(struct srd_cm_stats_rep *r)
{
	int fd = daemon_conn();

	cmd(fd, SRD_CMD_CM_STATS, NULL, 0, r, sizeof(*r));
	close(fd);
}

void t_cm_admin(uint32_t op, const void *req, uint32_t len, void *rep,
		size_t rep_len)
{
	int fd = daemon_conn();

	cmd(fd, op, req, len, rep, rep_len);
	close(fd);
}

void t_cm_wait_idle_at(const char *file, int line, uint32_t ids, int timeout_ms)
{
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	struct srd_cm_stats_rep r;

	for (;;) {
		t_cm_stats(&r);
		if (!r.conns && r.ids <= ids)
			return;
		if (t_now_ms() >= end)
			t_fail_at(file, line,
				  "CM still holds %u conns and %u ids "
				  "(expected 0 and at most %u)",
				  r.conns, r.ids, ids);
		t_sleep_ms(50);
	}
}

void t_cm_gsi_open(struct t_cm_gsi *g)
{
	struct t_conn_opts o;
	struct ibv_qp_init_attr ia;
	struct ibv_ah_attr ah;

	memset(g, 0, sizeof(*g));
	t_dev_open(&g->d);
	g->cq = t_cq_create(&g->d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_UD, g->cq, g->cq);
	g->qp = t_qp_create(&g->d, &ia);
	t_conn_opts_init(&o);
	o.qkey = T_CM_GSI_QKEY;
	t_qp_to_init(g->qp, &o);
	t_qp_to_rtr(g->qp, NULL, &o);
	t_qp_to_rts(g->qp, 0, &o);
	t_ah_attr_init(&ah, &g->d.gid);
	g->ah = T_NONNULL(ibv_create_ah(g->d.pd, &ah));
	t_buf_alloc(&g->d, &g->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
}

void t_cm_gsi_send(struct t_cm_gsi *g, const void *p, uint32_t len)
{
	struct ibv_wc wc;

	memcpy(g->buf.p, p, len);
	t_post_ud(g->qp, ++g->n, g->ah, 1, T_CM_GSI_QKEY, g->buf.mr, g->buf.p,
		  len, IBV_SEND_SIGNALED);
	T_EXPECT_WC(g->cq, &wc, g->n, IBV_WC_SUCCESS, IBV_WC_SEND);
}

void t_cm_gsi_send_msg(struct t_cm_gsi *g, const struct cm_msg *m)
{
	uint8_t mad[MAD_SIZE];

	T_EQ(cm_mad_encode(m, mad, sizeof(mad)), 0);
	t_cm_gsi_send(g, mad, sizeof(mad));
}

void t_cm_forged_req(const struct t_cm_gsi *g, struct cm_msg *m, uint16_t port)
{
	struct sockaddr_in src, dst;
	struct cma_hdr h;

	cm_msg_init(m, CM_ATTR_REQ, 0x1234);
	m->req.local_comm_id = 0x11112222;
	m->req.service_id = cm_ip_service_id(CM_PS_TCP, port);
	m->req.local_ca_guid = 0x4242;
	m->req.local_qpn = 0x999;
	m->req.responder_resources = 1;
	m->req.initiator_depth = 1;
	m->req.remote_cm_response_timeout = 20;
	m->req.local_cm_response_timeout = 20;
	m->req.starting_psn = 0x123456;
	m->req.retry_count = 7;
	m->req.rnr_retry_count = 7;
	m->req.pkey = 0xffff;
	m->req.path_mtu = IBV_MTU_1024;
	m->req.max_cm_retries = 15;
	m->req.primary.local_lid = m->req.primary.remote_lid = 0xffff;
	memcpy(m->req.primary.local_gid, g->d.gid.raw, 16);
	memcpy(m->req.primary.remote_gid, g->d.gid.raw, 16);
	m->req.primary.hop_limit = 64;
	m->req.primary.local_ack_timeout = 19;
	t_cm_addr(&src, 5555);
	t_cm_addr(&dst, port);
	T_EQ(cma_hdr_from_sockaddr(&h, (struct sockaddr *)&src,
				   (struct sockaddr *)&dst),
	     0);
	T_EQ(cma_hdr_encode(&h, m->req.private_data,
			    sizeof(m->req.private_data)),
	     0);
}
