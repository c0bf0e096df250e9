/* SPDX-License-Identifier: MIT */
/*
 * QP1, the GSI QP of a device, as the kernel's MAD layer keeps it: a UD QP
 * the daemon owns through a client of its own that has no socket.  Its
 * rings, CQ and receive buffers are daemon memory made by the core's own
 * object functions; MADs go out as inline SEND WQEs to QPN 1 with the GSI
 * Q_Key and come back as receive CQEs with the 40-byte GRH in front, all
 * through the transport engine like any QP's traffic.
 *
 * The QP is made with a QPN from the table and then renumbered 1, the
 * number no table hands out; the wire reaches it through dev->gsi.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/inet.h"
#include "daemon/net/roce.h"
#include "daemon/cm/cm.h"

#define GSI_SQ_DEPTH 256
#define GSI_RQ_DEPTH 512
/* Room for the GRH and the largest UD message a port carries: a MAD is
 * 256 bytes, but anything may arrive, and a message longer than its
 * receive buffer would take the QP to the error state. */
#define GSI_RECV_SLOT (40 + 4096 + 24)
#define GSI_AH_CACHE 64
#define GSI_BACKLOG_MAX 8192 /* MADs waiting for a send slot */
#define GSI_QPN 1

struct gsi_ah {
	uint32_t handle; /* 0: free */
	uint32_t inflight;
	uint64_t used;
	struct cm_av key;
};

struct gsi_pending {
	struct list_node node;
	struct cm_av path;
	uint8_t mad[MAD_SIZE];
};

struct cm_port {
	struct list_node node; /* in cm->ports */
	struct srd_cm *cm;
	struct srd_device *dev;
	struct srd_client kc; /* the daemon's own client for the device */
	struct srd_pd *pd;
	struct srd_cq *cq;
	struct srd_qp *qp;
	struct srd_mr *mr;
	uint8_t *buf; /* receive buffers, GSI_RECV_SLOT each */
	size_t buf_len;
	uint32_t rq_prod;
	uint32_t sq_prod;
	uint32_t sq_done;
	uint32_t cq_cons;
	uint64_t ah_clock;
	struct gsi_ah ah[GSI_AH_CACHE];
	struct list_head backlog;
	uint32_t nbacklog;
};

struct srd_device *cm_port_dev(const struct cm_port *p)
{
	return p->dev;
}

/* Run one of the core's command handlers as the port's own client. */
static int kcmd(struct cm_port *p, srd_cmd_fn *fn, const void *req,
		uint32_t len, int *fds, int nfds, void *rep, size_t rep_len)
{
	static struct srd_rep rp; /* large; the daemon is single threaded */
	struct srd_req rq = {
		.data = req, .len = len, .fds = fds, .nfds = nfds
	};
	int err;

	rp.len = 0;
	rp.nfds = 0;
	rp.keep_mask = 0;
	err = fn(&p->kc, &rq, &rp);
	/* The memfds of rings are for a client to map; ours are mapped. */
	for (int i = 0; i < rp.nfds; i++)
		if (!(rp.keep_mask & (1u << i)))
			close(rp.fds[i]);
	if (!err && rep)
		memcpy(rep, rp.data, rep_len < rp.len ? rep_len : rp.len);
	return err;
}

static int gsi_modify(struct cm_port *p, uint32_t handle,
		      enum ibv_qp_state state, uint32_t mask,
		      const struct ibv_qp_attr *a)
{
	struct srd_modify_qp_req req = { .handle = handle };

	req.attr = *a;
	req.attr.qp_state = state;
	req.attr_mask = mask | IBV_QP_STATE;
	return kcmd(p, cmd_modify_qp, &req, sizeof(req), NULL, 0, NULL, 0);
}

static void gsi_post_recv(struct cm_port *p, uint32_t slot)
{
	struct srd_wq *rq = &p->qp->rq;
	uint8_t *w = rq->ring +
		     (size_t)(p->rq_prod & (rq->entries - 1)) * rq->slot_size;
	struct srd_recv_wqe h = { .wr_id = slot, .num_sge = 1 };
	struct srd_sge sge = {
		.addr = (uint64_t)(uintptr_t)(p->buf +
					      (size_t)slot * GSI_RECV_SLOT),
		.length = GSI_RECV_SLOT,
		.lkey = p->mr->lkey,
	};

	memcpy(w, &h, sizeof(h));
	memcpy(w + sizeof(h), &sge, sizeof(sge));
	p->rq_prod++;
}

static void gsi_rq_publish(struct cm_port *p)
{
	__atomic_store_n(&p->qp->rq.ctl->prod, p->rq_prod, __ATOMIC_RELEASE);
}

static void gsi_teardown(struct cm_port *p)
{
	if (p->dev->gsi == p->qp)
		p->dev->gsi = NULL;
	if (p->qp)
		qp_destroy(p->qp);
	for (unsigned int i = 0; i < GSI_AH_CACHE; i++) {
		struct srd_ah *ah = p->ah[i].handle
					    ? ah_lookup(&p->kc, p->ah[i].handle)
					    : NULL;

		if (ah)
			ah_destroy(ah);
		memset(&p->ah[i], 0, sizeof(p->ah[i]));
	}
	if (p->mr)
		mr_destroy(p->mr);
	if (p->cq)
		cq_destroy(p->cq);
	if (p->pd)
		pd_destroy(p->pd);
	if (p->buf)
		munmap(p->buf, p->buf_len);
	p->qp = NULL;
	p->mr = NULL;
	p->cq = NULL;
	p->pd = NULL;
	p->buf = NULL;
}

static int gsi_make_mr(struct cm_port *p)
{
	_Alignas(8) uint8_t buf[sizeof(struct srd_reg_mr_req) +
				sizeof(struct srd_mr_piece)] = { 0 };
	struct srd_reg_mr_req *r = (struct srd_reg_mr_req *)buf;
	struct srd_reg_mr_rep rep;
	void *map;
	int fd, err;

	p->buf_len = (size_t)GSI_RQ_DEPTH * GSI_RECV_SLOT;
	fd = shm_create("softrdma-gsi", p->buf_len, 0, &map);
	if (fd < 0)
		return fd;
	p->buf = map;
	r->pd_handle = p->pd->handle;
	r->access = IBV_ACCESS_LOCAL_WRITE;
	r->addr = r->iova = r->span_start = (uint64_t)(uintptr_t)map;
	r->length = r->span_len = p->buf_len;
	r->num_pieces = 1;
	r->piece[0].len = p->buf_len;
	r->piece[0].kind = SRD_PIECE_FD;
	err = kcmd(p, cmd_reg_mr, buf, sizeof(buf), &fd, 1, &rep, sizeof(rep));
	if (fd >= 0)
		close(fd);
	if (err)
		return err;
	p->mr = mr_get(&p->kc, rep.handle);
	return p->mr ? 0 : -EIO;
}

static int gsi_setup(struct cm_port *p)
{
	struct srd_handle_rep hrep;
	struct srd_create_cq_req cq_req = {
		.cqe = GSI_SQ_DEPTH + GSI_RQ_DEPTH,
		.channel_handle = SRD_NO_HANDLE,
	};
	struct srd_create_cq_rep cq_rep;
	struct srd_create_qp_req qp_req = {
		.srq_handle = SRD_NO_HANDLE,
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = GSI_SQ_DEPTH,
			 .max_recv_wr = GSI_RQ_DEPTH,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = MAD_SIZE },
	};
	struct srd_create_qp_rep qp_rep;
	struct ibv_qp_attr a = { .pkey_index = 0,
				 .port_num = 1,
				 .qkey = CM_GSI_QKEY };
	int err;

	err = kcmd(p, cmd_alloc_pd, NULL, 0, NULL, 0, &hrep, sizeof(hrep));
	if (err)
		return err;
	p->pd = pd_get(&p->kc, hrep.handle);
	err = kcmd(p, cmd_create_cq, &cq_req, sizeof(cq_req), NULL, 0, &cq_rep,
		   sizeof(cq_rep));
	if (err)
		goto err;
	p->cq = cq_get(&p->kc, cq_rep.handle);
	err = gsi_make_mr(p);
	if (err)
		goto err;
	qp_req.pd_handle = p->pd->handle;
	qp_req.send_cq_handle = qp_req.recv_cq_handle = p->cq->handle;
	err = kcmd(p, cmd_create_qp, &qp_req, sizeof(qp_req), NULL, 0, &qp_rep,
		   sizeof(qp_rep));
	if (err)
		goto err;
	p->qp = qp_get(&p->kc, qp_rep.handle);
	err = gsi_modify(p, qp_rep.handle, IBV_QPS_INIT,
			 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, &a);
	if (!err)
		err = gsi_modify(p, qp_rep.handle, IBV_QPS_RTR, 0, &a);
	if (!err)
		err = gsi_modify(p, qp_rep.handle, IBV_QPS_RTS, IBV_QP_SQ_PSN,
				 &a);
	if (err)
		goto err;
	/* Renumber: QPN 1 is reached through the device, not the table. */
	table_free(&p->cm->d->qps_by_num, p->qp->qpn);
	p->qp->qpn = p->qp->handle = GSI_QPN;
	p->dev->gsi = p->qp;
	p->rq_prod = p->sq_prod = p->sq_done = p->cq_cons = 0;
	p->rq_prod = __atomic_load_n(&p->qp->rq.ctl->prod, __ATOMIC_RELAXED);
	p->sq_prod = p->sq_done =
		__atomic_load_n(&p->qp->sq.ctl->prod, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < GSI_RQ_DEPTH; i++)
		gsi_post_recv(p, i);
	gsi_rq_publish(p);
	return 0;
err:
	gsi_teardown(p);
	return err;
}

struct cm_port *cm_port_find(struct srd_cm *cm, const struct srd_device *dev)
{
	list_for_each (&cm->ports, it) {
		struct cm_port *p = list_entry(it, struct cm_port, node);

		if (p->dev == dev)
			return p;
	}
	return NULL;
}

struct cm_port *cm_port_get(struct srd_cm *cm, struct srd_device *dev)
{
	struct cm_port *p = cm_port_find(cm, dev);

	if (p)
		return p->qp ? p : NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cm = cm;
	p->dev = dev;
	p->kc.d = cm->d;
	p->kc.fd = -1;
	p->kc.async_wfd = -1;
	p->kc.trace_fd = -1;
	p->kc.pid = getpid();
	p->kc.dev = dev;
	p->kc.hello = true;
	list_head_init(&p->backlog);
	if (gsi_setup(p)) {
		srd_log(SRD_LOG_ERR, "cm: no QP1 on %s", dev->name);
		free(p);
		return NULL;
	}
	list_add_tail(&cm->ports, &p->node);
	srd_log(SRD_LOG_DEBUG, "cm: QP1 up on %s", dev->name);
	return p;
}

void cm_port_destroy(struct cm_port *p)
{
	list_for_each (&p->backlog, it) {
		list_del(it);
		free(list_entry(it, struct gsi_pending, node));
	}
	gsi_teardown(p);
	list_del(&p->node);
	free(p);
}

static bool path_eq(const struct cm_av *a, const struct cm_av *b)
{
	return !memcmp(a->dgid.raw, b->dgid.raw, 16) &&
	       a->sgid_index == b->sgid_index && a->hop_limit == b->hop_limit &&
	       a->tclass == b->tclass && a->flow_label == b->flow_label;
}

/* An address handle towards path, from a small cache: a MAD's AH must
 * live until its send completes (the engine looks it up when it takes
 * the WQE).  -1: all are busy. */
static int gsi_ah(struct cm_port *p, const struct cm_av *path)
{
	struct srd_create_ah_req req = { .pd_handle = p->pd->handle };
	struct srd_handle_rep rep;
	int victim = -1;
	struct gsi_ah *e;

	for (int i = 0; i < GSI_AH_CACHE; i++) {
		e = &p->ah[i];
		if (e->handle && path_eq(&e->key, path)) {
			e->used = ++p->ah_clock;
			return i;
		}
		if (e->inflight)
			continue;
		if (victim < 0 || !e->handle ||
		    (p->ah[victim].handle && e->used < p->ah[victim].used))
			victim = i;
	}
	if (victim < 0)
		return -1;
	e = &p->ah[victim];
	if (e->handle) {
		struct srd_ah *ah = ah_lookup(&p->kc, e->handle);

		if (ah)
			ah_destroy(ah);
		e->handle = 0;
	}
	req.attr.is_global = 1;
	req.attr.port_num = 1;
	req.attr.grh.dgid = path->dgid;
	req.attr.grh.sgid_index = path->sgid_index;
	req.attr.grh.hop_limit = path->hop_limit;
	req.attr.grh.traffic_class = path->tclass;
	req.attr.grh.flow_label = path->flow_label;
	if (kcmd(p, cmd_create_ah, &req, sizeof(req), NULL, 0, &rep,
		 sizeof(rep)))
		return -1;
	e->handle = rep.handle;
	e->key = *path;
	e->used = ++p->ah_clock;
	return victim;
}

static bool gsi_sq_full(const struct cm_port *p)
{
	return p->sq_prod - p->sq_done >= p->qp->sq.entries;
}

/* 0 posted, -EAGAIN no room now. */
static int gsi_post(struct cm_port *p, const uint8_t *mad,
		    const struct cm_av *path)
{
	struct srd_wq *sq = &p->qp->sq;
	struct srd_send_wqe w = {
		.opcode = IBV_WR_SEND,
		.flags = SRD_WQE_SIGNALED | SRD_WQE_INLINE,
		.inline_len = MAD_SIZE,
		.remote_qpn = GSI_QPN,
		.remote_qkey = CM_GSI_QKEY,
	};
	uint8_t *slot;
	int a;

	if (gsi_sq_full(p))
		return -EAGAIN;
	a = gsi_ah(p, path);
	if (a < 0)
		return -EAGAIN;
	w.wr_id = (uint64_t)a;
	w.ah_handle = p->ah[a].handle;
	slot = sq->ring +
	       (size_t)(p->sq_prod & (sq->entries - 1)) * sq->slot_size;
	memcpy(slot, &w, sizeof(w));
	memcpy(slot + sizeof(w), mad, MAD_SIZE);
	p->ah[a].inflight++;
	p->sq_prod++;
	__atomic_store_n(&sq->ctl->prod, p->sq_prod, __ATOMIC_RELEASE);
	p->cm->cnt.mad_tx++;
	return 0;
}

int cm_port_send(struct cm_port *p, const uint8_t *mad,
		 const struct cm_av *path)
{
	struct gsi_pending *q;

	if (!p->qp)
		return -ENETDOWN;
	if (list_empty(&p->backlog) && !gsi_post(p, mad, path))
		return 0;
	/* Keep order: behind what already waits. */
	if (p->nbacklog >= GSI_BACKLOG_MAX || !(q = malloc(sizeof(*q)))) {
		p->cm->cnt.mad_tx_drop++;
		return -ENOBUFS;
	}
	q->path = *path;
	memcpy(q->mad, mad, MAD_SIZE);
	list_add_tail(&p->backlog, &q->node);
	p->nbacklog++;
	return 0;
}

static void gsi_flush_backlog(struct cm_port *p)
{
	list_for_each (&p->backlog, it) {
		struct gsi_pending *q =
			list_entry(it, struct gsi_pending, node);

		if (gsi_post(p, q->mad, &q->path))
			return;
		list_del(it);
		p->nbacklog--;
		free(q);
	}
}

/* The GRH in front of a UD receive: an IPv6 header, or for RoCE v2 over
 * IPv4 20 unused bytes and the IPv4 header. */
static void gsi_parse_grh(const uint8_t *grh, struct cm_mad_src *src)
{
	memset(src->sgid.raw, 0, 16);
	memset(src->dgid.raw, 0, 16);
	if ((grh[20] >> 4) == 4) {
		const uint8_t *ip = grh + 20;

		srd_gid_from_v4(src->sgid.raw, ip + 12);
		srd_gid_from_v4(src->dgid.raw, ip + 16);
		src->tclass = ip[1];
		src->hop_limit = ip[8];
		src->flow_label = 0;
	} else {
		uint32_t vtf = mad_get_be32(grh);

		src->tclass = srd_ipv6_tclass(vtf);
		src->flow_label = srd_ipv6_flow_label(vtf);
		src->hop_limit = grh[7];
		memcpy(src->sgid.raw, grh + 8, 16);
		memcpy(src->dgid.raw, grh + 24, 16);
	}
}

static void gsi_recv(struct cm_port *p, const struct srd_cqe *e)
{
	struct srd_cm *cm = p->cm;
	struct cm_mad_src src = { .port = p, .src_qp = e->src_qp };
	const uint8_t *b;
	struct cm_msg m;

	if (e->status != IBV_WC_SUCCESS || e->wr_id >= GSI_RQ_DEPTH ||
	    e->byte_len != ROCE_GRH_BYTES + MAD_SIZE) {
		cm->cnt.mad_bad++;
		return;
	}
	b = p->buf + (size_t)e->wr_id * GSI_RECV_SLOT;
	gsi_parse_grh(b, &src);
	if (cm_mad_decode(b + ROCE_GRH_BYTES, MAD_SIZE, &m)) {
		cm->cnt.mad_bad++;
		return;
	}
	cm->cnt.mad_rx++;
	cm_mad_recv(cm, &src, &m);
}

static bool cm_port_poll(struct cm_port *p)
{
	struct srd_cq *cq = p->cq;
	bool work = false, reposted = false;

	if (!p->qp)
		return false;
	for (;;) {
		struct srd_cqe *e = &cq->ring[p->cq_cons & (cq->entries - 1)];
		uint8_t owner = atomic_load_explicit(
			(_Atomic uint8_t *)&e->owner, memory_order_acquire);
		struct srd_cqe c;

		if (owner != srd_cqe_owner_for(p->cq_cons, cq->log_entries))
			break;
		memcpy(&c, e, sizeof(c));
		p->cq_cons++;
		__atomic_store_n(&cq->ctl->cons, p->cq_cons, __ATOMIC_RELEASE);
		work = true;
		if (c.flags & SRD_CQE_RECV) {
			gsi_recv(p, &c);
			if (c.wr_id < GSI_RQ_DEPTH) {
				gsi_post_recv(p, (uint32_t)c.wr_id);
				reposted = true;
			}
		} else {
			if (c.wr_id < GSI_AH_CACHE && p->ah[c.wr_id].inflight)
				p->ah[c.wr_id].inflight--;
			p->sq_done++;
			if (c.status != IBV_WC_SUCCESS)
				p->cm->cnt.mad_tx_drop++;
		}
	}
	if (reposted)
		gsi_rq_publish(p);
	if (work && !list_empty(&p->backlog))
		gsi_flush_backlog(p);
	/* A QP1 that left RTS (it should not) is made again. */
	if (p->qp->attr.qp_state != IBV_QPS_RTS) {
		srd_log(SRD_LOG_WARN, "cm: QP1 of %s in state %d: remade",
			p->dev->name, (int)p->qp->attr.qp_state);
		gsi_teardown(p);
		gsi_setup(p);
		work = true;
	}
	return work;
}

bool cm_ports_poll(struct srd_cm *cm)
{
	bool work = false;

	list_for_each (&cm->ports, it)
		work |= cm_port_poll(list_entry(it, struct cm_port, node));
	return work;
}

void cm_ports_destroy(struct srd_cm *cm)
{
	list_for_each (&cm->ports, it)
		cm_port_destroy(list_entry(it, struct cm_port, node));
}
