/* SPDX-License-Identifier: MIT */
/*
 * xhost's verbs: the device named on the command line, the GID of the
 * address family under test, QPs connected to the peer over the control
 * connection, and posting with several SGEs.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "xhost.h"

double xh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0,    0,
					    0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, prefix, sizeof(prefix));
}

int xh_find_gid(struct ibv_context *ctx, int fam, union ibv_gid *gid)
{
	static const uint8_t zero[16];
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, T_PORT, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;

		if (ibv_query_gid(ctx, T_PORT, i, &g))
			continue;
		if (!memcmp(g.raw, zero, 16))
			continue;
		if (fam == AF_INET && gid_is_v4(&g)) {
			*gid = g;
			return i;
		}
		/* IPv6: a global (or unique local) address, not fe80::/10. */
		if (fam == AF_INET6 && !gid_is_v4(&g) &&
		    !(g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80)) {
			*gid = g;
			return i;
		}
	}
	return -1;
}

void xh_dev_open(struct xh *x)
{
	struct t_dev *d = &x->d;
	char str[INET6_ADDRSTRLEN];
	int i;

	memset(d, 0, sizeof(*d));
	d->list = ibv_get_device_list(&d->num_devices);
	if (!d->list || d->num_devices < 1)
		T_FAIL("no RDMA device (socket %s)",
		       getenv("SOFTRDMA_SOCKET") ?: "default");
	for (i = 0; i < d->num_devices; i++)
		if (!x->devname ||
		    !strcmp(ibv_get_device_name(d->list[i]), x->devname))
			break;
	if (i == d->num_devices)
		T_FAIL("no device %s", x->devname);
	d->ctx = T_NONNULL(ibv_open_device(d->list[i]));
	T_OK(ibv_query_device(d->ctx, &d->attr));
	T_OK(ibv_query_port(d->ctx, T_PORT, &d->port));
	if (d->port.state != IBV_PORT_ACTIVE)
		T_FAIL("%s port 1 is %s, not ACTIVE",
		       ibv_get_device_name(d->list[i]),
		       ibv_port_state_str(d->port.state));
	x->gidx = xh_find_gid(d->ctx, x->family, &x->gid);
	if (x->gidx < 0)
		T_FAIL("%s has no %s GID", ibv_get_device_name(d->list[i]),
		       x->family == AF_INET ? "IPv4" : "IPv6");
	d->gid = x->gid;
	d->pd = T_NONNULL(ibv_alloc_pd(d->ctx));
	if (!x->mtu)
		x->mtu = d->port.active_mtu;
	x->mtu_bytes = 128u << x->mtu;
	inet_ntop(AF_INET6, x->gid.raw, str, sizeof(str));
	t_log("%s: GID[%d] %s, port active MTU %u, path MTU %u",
	      ibv_get_device_name(d->list[i]), x->gidx, str,
	      128u << d->port.active_mtu, x->mtu_bytes);
	t_buf_alloc(d, &x->a, XH_BUF_LEN, T_ACCESS_ALL);
	t_buf_alloc(d, &x->b, XH_BUF_LEN, T_ACCESS_ALL);
}

void xh_dev_close(struct xh *x)
{
	t_buf_free(&x->a);
	t_buf_free(&x->b);
	t_dev_close(&x->d);
}

void xh_conn_init(struct xh_conn *c, enum ibv_qp_type type)
{
	memset(c, 0, sizeof(*c));
	c->type = type;
	c->timeout = 14;
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 1;
	c->max_send_wr = 256;
	c->max_recv_wr = 256;
	c->cqe = 1024;
}

static void ah_attr(struct xh *x, const struct xh_ep *r, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, r->gid, 16);
	ah->grh.sgid_index = (uint8_t)x->gidx;
	ah->grh.hop_limit = 64;
	ah->port_num = T_PORT;
}

struct ibv_ah *xh_ah_create(struct xh *x, const struct xh_ep *r)
{
	struct ibv_ah_attr aa;

	ah_attr(x, r, &aa);
	return T_NONNULL(ibv_create_ah(x->d.pd, &aa));
}

static void to_rtr(struct xh *x, struct xh_qp *q, const struct xh_conn *c)
{
	struct ibv_qp_attr attr = { 0 }, got;
	struct ibv_qp_init_attr ia;
	int mask = IBV_QP_STATE;

	attr.qp_state = IBV_QPS_RTR;
	if (c->type != IBV_QPT_UD) {
		attr.path_mtu = x->mtu;
		attr.dest_qp_num = q->remote.qpn;
		attr.rq_psn = q->remote.psn;
		ah_attr(x, &q->remote, &attr.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (c->type == IBV_QPT_RC) {
		attr.max_dest_rd_atomic = 16;
		attr.min_rnr_timer = c->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	T_OK(ibv_modify_qp(q->qp, &attr, mask));
	if (c->type == IBV_QPT_UD)
		return;
	/* The path MTU must be the one asked for: a silent fallback would
	 * leave the big-frame runs testing small frames. */
	T_OK(ibv_query_qp(q->qp, &got, IBV_QP_PATH_MTU | IBV_QP_AV, &ia));
	T_EQ(got.path_mtu, x->mtu);
	T_EQ(got.ah_attr.grh.sgid_index, x->gidx);
}

static void to_rts(struct xh_qp *q, uint32_t psn, const struct xh_conn *c)
{
	struct ibv_qp_attr attr = { 0 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = psn;
	if (c->type == IBV_QPT_RC) {
		attr.timeout = c->timeout;
		attr.retry_cnt = c->retry_cnt;
		attr.rnr_retry = c->rnr_retry;
		attr.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	T_OK(ibv_modify_qp(q->qp, &attr, mask));
	T_EQ(t_qp_state(q->qp), IBV_QPS_RTS);
}

void xh_qp_connect_fd(struct xh *x, int fd, struct xh_qp *q,
		      const struct xh_conn *c)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct xh_ep me = { 0 };

	memset(q, 0, sizeof(*q));
	q->scq = t_cq_create(&x->d, (int)c->cqe, NULL);
	q->rcq = t_cq_create(&x->d, (int)c->cqe, NULL);
	t_qp_init_attr(&ia, c->type, q->scq, q->rcq);
	ia.cap.max_send_wr = c->max_send_wr;
	ia.cap.max_recv_wr = c->max_recv_wr;
	q->qp = t_qp_create(&x->d, &ia);
	t_conn_opts_init(&o);
	t_qp_to_init(q->qp, &o);

	me.qpn = q->qp->qp_num;
	/* Random PSNs, now and then right below the 24-bit wrap. */
	me.psn = (uint32_t)lrand48() & 0xffffff;
	if (lrand48() % 4 == 0)
		me.psn = 0xffffff - (uint32_t)(lrand48() % 64);
	memcpy(me.gid, x->gid.raw, 16);
	me.addr = (uintptr_t)x->b.p;
	me.rkey = x->b.mr->rkey;
	me.len = (uint32_t)x->b.len;
	xh_send(fd, &me, sizeof(me));
	xh_recv(fd, &q->remote, sizeof(q->remote), 30000);

	to_rtr(x, q, c);
	to_rts(q, me.psn, c);
	if (c->type == IBV_QPT_UD)
		q->ah = xh_ah_create(x, &q->remote);
	for (unsigned int i = 0; i < c->prepost; i++)
		t_post_recv(q->qp, i, x->b.mr,
			    x->b.p + (size_t)i * c->prepost_stride,
			    c->prepost_len);
	/* Nobody sends before both ends can take it. */
	xh_sync_fd(fd, 0xc0ec7, 30000);
}

void xh_qp_connect(struct xh *x, struct xh_qp *q, const struct xh_conn *c)
{
	xh_qp_connect_fd(x, x->fd, q, c);
	x->peer = q->remote;
}

void xh_qp_destroy(struct xh_qp *q)
{
	if (q->ah)
		T_OK(ibv_destroy_ah(q->ah));
	if (q->qp)
		T_OK(ibv_destroy_qp(q->qp));
	T_OK(ibv_destroy_cq(q->scq));
	T_OK(ibv_destroy_cq(q->rcq));
	memset(q, 0, sizeof(*q));
}

#define XH_MAX_SGE 8

void xh_post_sges(struct xh_qp *q, uint64_t wr_id, enum ibv_wr_opcode op,
		  struct t_buf *buf, const uint32_t (*sge)[2], int n,
		  unsigned int flags, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sg[XH_MAX_SGE];
	int ret;

	T_LE(n, XH_MAX_SGE);
	for (int i = 0; i < n; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(buf->p + sge[i][0]),
					  sge[i][1], buf->mr->lkey };
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.sg_list = sg;
	wr.num_sge = n;
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32((uint32_t)wr_id);
	if (q->ah) {
		wr.wr.ud.ah = q->ah;
		wr.wr.ud.remote_qpn = q->remote.qpn;
		wr.wr.ud.remote_qkey = T_QKEY;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = ibv_post_send(q->qp, &wr, &bad);
	if (ret)
		T_FAIL("ibv_post_send(wr_id %#llx, %d SGEs): %s",
		       (unsigned long long)wr_id, n, t_errname(ret));
}

void xh_post_recv_sges(struct xh_qp *q, uint64_t wr_id, struct t_buf *buf,
		       const uint32_t (*sge)[2], int n)
{
	struct ibv_recv_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sg[XH_MAX_SGE];
	int ret;

	T_LE(n, XH_MAX_SGE);
	for (int i = 0; i < n; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(buf->p + sge[i][0]),
					  sge[i][1], buf->mr->lkey };
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = n;
	ret = ibv_post_recv(q->qp, &wr, &bad);
	if (ret)
		T_FAIL("ibv_post_recv(wr_id %#llx, %d SGEs): %s",
		       (unsigned long long)wr_id, n, t_errname(ret));
}

void xh_expect_at(const char *file, int line, struct ibv_cq *cq,
		  struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status st,
		  int opcode, int timeout_ms)
{
	struct ibv_wc local;

	if (!wc)
		wc = &local;
	if (!t_poll(cq, wc, timeout_ms))
		t_fail_at(file, line,
			  "no completion within %d ms (expected wr_id %#llx, "
			  "\"%s\")",
			  timeout_ms, (unsigned long long)wr_id,
			  ibv_wc_status_str(st));
	if (wc->status != st || wc->wr_id != wr_id ||
	    (st == IBV_WC_SUCCESS && opcode != T_ANY_OPCODE &&
	     (int)wc->opcode != opcode))
		t_fail_at(file, line,
			  "completion wr_id %#llx \"%s\" opcode %s byte_len "
			  "%u, expected wr_id %#llx \"%s\" opcode %s",
			  (unsigned long long)wc->wr_id,
			  ibv_wc_status_str(wc->status),
			  t_wc_opcode_name(wc->opcode), wc->byte_len,
			  (unsigned long long)wr_id, ibv_wc_status_str(st),
			  opcode == T_ANY_OPCODE ? "any"
						 : t_wc_opcode_name(opcode));
}

void xh_expect_qp_event(struct xh *x, enum ibv_event_type type,
			struct ibv_qp *qp)
{
	uint64_t end = t_now_ms() + T_WAIT_MS;
	struct ibv_async_event ev;

	for (;;) {
		uint64_t now = t_now_ms();
		enum ibv_event_type got;
		struct ibv_qp *on;

		if (now >= end ||
		    !t_async_wait(x->d.ctx, &ev, (int)(end - now)))
			T_FAIL("no %s within %d ms", ibv_event_type_str(type),
			       T_WAIT_MS);
		got = ev.event_type;
		on = ev.element.qp;
		ibv_ack_async_event(&ev);
		switch (got) {
		case IBV_EVENT_GID_CHANGE:
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_PORT_ERR:
		case IBV_EVENT_LID_CHANGE:
		case IBV_EVENT_PKEY_CHANGE:
		case IBV_EVENT_SM_CHANGE:
		case IBV_EVENT_CLIENT_REREGISTER:
			t_log("async event %s (passed over)",
			      ibv_event_type_str(got));
			continue;
		default:
			break;
		}
		if (got != type)
			T_FAIL("async event %s, expected %s",
			       ibv_event_type_str(got),
			       ibv_event_type_str(type));
		T_PTR_EQ(on, qp);
		return;
	}
}
