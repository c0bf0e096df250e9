/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <endian.h>

#include "daemon/net/icrc.h"
#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

static struct srd_rep rp; /* replies are large: not on the stack */

void eh_init(struct eh *h)
{
	memset(h, 0, sizeof(*h));
	t_core_init(&h->t);
	h->now = 1000000000ull;
	h->step = 1000;
	h->pd = eh_pd(h);
}

void eh_fini(struct eh *h)
{
	t_core_fini(&h->t);
}

uint32_t eh_pd(struct eh *h)
{
	T_EQ(t_core_cmd(h->t.c, SRD_CMD_ALLOC_PD, NULL, 0, NULL, 0, &rp), 0);
	return ((struct srd_handle_rep *)rp.data)->handle;
}

static void reg(struct eh *h, uint32_t pd, size_t len, int access, bool pvm,
		struct eh_mr *out)
{
	union {
		struct srd_reg_mr_req r;
		struct {
			uint8_t hdr[offsetof(struct srd_reg_mr_req, piece)];
			struct srd_mr_piece p;
		};
	} q;
	struct srd_reg_mr_rep *rep = (void *)rp.data;
	size_t span = (len + 4095) & ~(size_t)4095;
	int fd = -1;

	memset(&q, 0, sizeof(q));
	if (pvm) {
		out->p = mmap(NULL, span, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else {
		fd = memfd_create("eh", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		T_ASSERT(fd >= 0 && !ftruncate(fd, span));
		T_ASSERT(!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
		out->p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED,
			      fd, 0);
	}
	T_ASSERT(out->p != MAP_FAILED);
	out->len = len;
	q.r.pd_handle = pd;
	q.r.access = access;
	q.r.addr = (uintptr_t)out->p;
	q.r.length = len;
	q.r.iova = (uintptr_t)out->p;
	q.r.span_start = (uintptr_t)out->p;
	q.r.span_len = span;
	q.r.num_pieces = 1;
	q.p.len = span;
	q.p.kind = pvm ? SRD_PIECE_PVM : SRD_PIECE_FD;
	T_EQ(t_core_cmd(h->t.c, SRD_CMD_REG_MR, &q, sizeof(q), &fd, !pvm, &rp),
	     0);
	out->handle = rep->handle;
	out->lkey = rep->lkey;
	T_EQ(rep->rkey, rep->lkey);
	out->mr = mr_lookup_key(&h->t.d, rep->lkey);
	T_ASSERT(out->mr);
}

void eh_mr(struct eh *h, uint32_t pd, size_t len, int access, struct eh_mr *out)
{
	reg(h, pd, len, access, false, out);
}

void eh_mr_pvm(struct eh *h, uint32_t pd, size_t len, int access,
	       struct eh_mr *out)
{
	reg(h, pd, len, access, true, out);
}

int eh_dereg(struct eh *h, struct eh_mr *m)
{
	struct srd_handle_req q = { .handle = m->handle };

	return t_core_cmd(h->t.c, SRD_CMD_DEREG_MR, &q, sizeof(q), NULL, 0,
			  &rp);
}

void eh_cq(struct eh *h, uint32_t cqe, struct eh_cq *out)
{
	int memfd;

	memset(out, 0, sizeof(*out));
	T_EQ(cq_create(h->t.c, cqe, NULL, (uintptr_t)out, &out->cq, &memfd), 0);
	close(memfd);
}

void eh_srq(struct eh *h, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
	    struct eh_srq *out)
{
	struct srd_create_srq_req q = {
		.pd_handle = pd,
		.max_wr = max_wr,
		.max_sge = max_sge,
		.user_handle = (uintptr_t)out,
	};
	struct srd_create_srq_rep *rep = (void *)rp.data;

	memset(out, 0, sizeof(*out));
	T_EQ(t_core_cmd(h->t.c, SRD_CMD_CREATE_SRQ, &q, sizeof(q), NULL, 0,
			&rp),
	     0);
	for (int i = 0; i < rp.nfds; i++)
		close(rp.fds[i]);
	out->handle = rep->handle;
	out->srq = srq_get(h->t.c, rep->handle);
	T_ASSERT(out->srq);
}

void eh_qp(struct eh *h, uint32_t pd, enum ibv_qp_type type, struct eh_cq *scq,
	   struct eh_cq *rcq, struct eh_srq *srq, const struct ibv_qp_cap *cap,
	   bool sig_all, struct eh_qp *out)
{
	struct srd_create_qp_req q = {
		.pd_handle = pd,
		.send_cq_handle = scq->cq->handle,
		.recv_cq_handle = rcq->cq->handle,
		.srq_handle = srq ? srq->handle : SRD_NO_HANDLE,
		.qp_type = type,
		.sq_sig_all = sig_all,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 64,
			 .max_send_sge = 4,
			 .max_recv_sge = 4,
			 .max_inline_data = 64 },
		.user_handle = (uintptr_t)out,
		.stage_bytes = h->stage_bytes,
	};
	struct srd_create_qp_rep *rep = (void *)rp.data;

	if (cap)
		q.cap = *cap;
	memset(out, 0, sizeof(*out));
	T_EQ(t_core_cmd(h->t.c, SRD_CMD_CREATE_QP, &q, sizeof(q), NULL, 0, &rp),
	     0);
	for (int i = 0; i < rp.nfds; i++)
		close(rp.fds[i]);
	out->handle = rep->handle;
	out->qpn = rep->qp_num;
	out->qp = qp_get(h->t.c, rep->handle);
	T_ASSERT(out->qp && out->qp->tp);
}

int eh_destroy_qp(struct eh *h, struct eh_qp *q)
{
	struct srd_handle_req r = { .handle = q->handle };

	return t_core_cmd(h->t.c, SRD_CMD_DESTROY_QP, &r, sizeof(r), NULL, 0,
			  &rp);
}

int eh_modify(struct eh *h, struct eh_qp *q, struct ibv_qp_attr *a, int mask)
{
	struct srd_modify_qp_req r;

	memset(&r, 0, sizeof(r));
	r.handle = q->handle;
	r.attr_mask = mask;
	r.attr = *a;
	return t_core_cmd(h->t.c, SRD_CMD_MODIFY_QP, &r, sizeof(r), NULL, 0,
			  &rp);
}

/* PSNs close to the 24-bit wrap, different per QP. */
static uint32_t psn_of(uint32_t qpn)
{
	return (0xfffff8 + qpn * 0x101) & 0xffffff;
}

static void fill_av(struct eh *h, struct ibv_ah_attr *av)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->port_num = 1;
	av->grh.dgid = h->t.c->dev->port.gid[0];
	av->grh.sgid_index = 0;
	av->grh.hop_limit = 64;
}

void eh_connect(struct eh *h, struct eh_qp *q, uint32_t dest_qpn,
		const struct eh_conn *c)
{
	static const struct eh_conn dflt;
	struct ibv_qp_attr a;
	bool rc = q->qp->type == IBV_QPT_RC;
	int mask;

	if (!c)
		c = &dflt;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = c->no_access ? 0
			    : c->access	 ? c->access
			    : rc	 ? IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ |
					    IBV_ACCESS_REMOTE_ATOMIC
				 : IBV_ACCESS_REMOTE_WRITE;
	T_EQ(eh_modify(h, q, &a,
		       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS),
	     0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	fill_av(h, &a.ah_attr);
	if (c->dgid)
		a.ah_attr.grh.dgid = *c->dgid;
	a.ah_attr.grh.sgid_index = c->sgid_index;
	a.path_mtu = c->mtu ? c->mtu : IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = c->has_rq_psn ? c->rq_psn : psn_of(dest_qpn);
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (rc) {
		a.max_dest_rd_atomic = c->max_dest_rd_atomic < 0 ? 0
				       : c->max_dest_rd_atomic
					       ? c->max_dest_rd_atomic
					       : 16;
		a.min_rnr_timer = c->min_rnr_timer ? c->min_rnr_timer : 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	T_EQ(eh_modify(h, q, &a, mask), 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn_of(q->qpn);
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt ? c->retry_cnt : 7;
		a.rnr_retry = c->rnr_retry ? c->rnr_retry : 7;
		a.max_rd_atomic = c->max_rd_atomic ? c->max_rd_atomic : 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	T_EQ(eh_modify(h, q, &a, mask), 0);
	T_EQ(eh_state(q), IBV_QPS_RTS);
}

void eh_connect_pair(struct eh *h, struct eh_qp *a, struct eh_qp *b,
		     const struct eh_conn *c)
{
	eh_connect(h, a, b->qpn, c);
	eh_connect(h, b, a->qpn, c);
}

void eh_ud_ready(struct eh *h, struct eh_qp *q, uint32_t qkey)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	T_EQ(eh_modify(h, q, &a,
		       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_QKEY),
	     0);
	a.qp_state = IBV_QPS_RTR;
	T_EQ(eh_modify(h, q, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn_of(q->qpn);
	T_EQ(eh_modify(h, q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

uint32_t eh_ah(struct eh *h, uint32_t pd)
{
	struct srd_create_ah_req q;

	memset(&q, 0, sizeof(q));
	q.pd_handle = pd;
	fill_av(h, &q.attr);
	q.attr.sl = 3;
	T_EQ(t_core_cmd(h->t.c, SRD_CMD_CREATE_AH, &q, sizeof(q), NULL, 0, &rp),
	     0);
	return ((struct srd_handle_rep *)rp.data)->handle;
}

struct srd_sge eh_sge(const struct eh_mr *m, size_t off, uint32_t len)
{
	struct srd_sge s = {
		.addr = (uintptr_t)m->p + off,
		.length = len,
		.lkey = m->lkey,
	};

	return s;
}

void eh_post_send(struct eh_qp *q, const struct srd_send_wqe *w,
		  const struct srd_sge *sge, const void *inl)
{
	struct srd_wq *wq = &q->qp->sq;
	uint8_t *slot = wq->ring + (size_t)(q->sq_prod & (wq->entries - 1)) *
					   wq->slot_size;

	memset(slot, 0, wq->slot_size);
	memcpy(slot, w, sizeof(*w));
	if (w->flags & SRD_WQE_INLINE) {
		uint32_t n = w->inline_len;

		if (n > wq->slot_size - sizeof(*w))
			n = wq->slot_size - sizeof(*w);
		memcpy(slot + sizeof(*w), inl, n);
	} else if (w->num_sge && sge) {
		uint32_t n = w->num_sge * sizeof(*sge);

		if (n > wq->slot_size - sizeof(*w))
			n = wq->slot_size - sizeof(*w);
		memcpy(slot + sizeof(*w), sge, n);
	}
	q->sq_prod++;
	__atomic_store_n(&wq->ctl->prod, q->sq_prod, __ATOMIC_RELEASE);
}

static void post_rq(uint8_t *ring, uint32_t entries, uint32_t slot_size,
		    uint32_t *prod, uint32_t *ctl_prod, uint64_t wr_id,
		    const struct srd_sge *sge, uint32_t num_sge)
{
	uint8_t *slot = ring + (size_t)(*prod & (entries - 1)) * slot_size;
	struct srd_recv_wqe w = { .wr_id = wr_id, .num_sge = num_sge };

	memset(slot, 0, slot_size);
	memcpy(slot, &w, sizeof(w));
	if (sge && num_sge * sizeof(*sge) <= slot_size - sizeof(w))
		memcpy(slot + sizeof(w), sge, num_sge * sizeof(*sge));
	(*prod)++;
	__atomic_store_n(ctl_prod, *prod, __ATOMIC_RELEASE);
}

void eh_post_recv(struct eh_qp *q, uint64_t wr_id, const struct srd_sge *sge,
		  uint32_t num_sge)
{
	struct srd_wq *wq = &q->qp->rq;

	post_rq(wq->ring, wq->entries, wq->slot_size, &q->rq_prod,
		&wq->ctl->prod, wr_id, sge, num_sge);
}

void eh_post_srq(struct eh_srq *s, uint64_t wr_id, const struct srd_sge *sge,
		 uint32_t num_sge)
{
	post_rq(s->srq->ring, s->srq->entries, s->srq->slot_size, &s->prod,
		&s->srq->ctl->rq.prod, wr_id, sge, num_sge);
}

int eh_run(struct eh *h, int passes)
{
	int n = 0;

	while (passes--) {
		if (engine_progress(&h->t.d, h->now))
			n++;
		h->now += h->step;
	}
	return n;
}

void eh_settle(struct eh *h)
{
	for (int i = 0; i < 1000000; i++)
		if (!eh_run(h, 1))
			return;
	T_ASSERT(!"engine never went idle");
}

bool eh_poll(struct eh_cq *cq, struct srd_cqe *out)
{
	struct srd_cq *c = cq->cq;
	struct srd_cqe *e = &c->ring[cq->cons & (c->entries - 1)];

	if (__atomic_load_n(&e->owner, __ATOMIC_ACQUIRE) !=
	    srd_cqe_owner_for(cq->cons, c->log_entries))
		return false;
	*out = *e;
	cq->cons++;
	__atomic_store_n(&c->ctl->cons, cq->cons, __ATOMIC_RELEASE);
	return true;
}

struct srd_cqe eh_wait(struct eh *h, struct eh_cq *cq, int max)
{
	struct srd_cqe e;

	for (int i = 0; i <= max; i++) {
		if (eh_poll(cq, &e))
			return e;
		eh_run(h, 1);
	}
	fprintf(stderr, "no CQE after %d passes\n", max);
	exit(T_EXIT_FAIL);
}

void eh_none(struct eh_cq *cq)
{
	struct srd_cqe e;

	if (eh_poll(cq, &e)) {
		fprintf(stderr, "unexpected CQE wr_id %llu status %u op %u\n",
			(unsigned long long)e.wr_id, e.status, e.opcode);
		exit(T_EXIT_FAIL);
	}
}

bool eh_event(struct eh *h, struct srd_async_event *ev)
{
	return read(h->t.async_fd, ev, sizeof(*ev)) == sizeof(*ev);
}

void eh_expect_event(struct eh *h, uint32_t type, uint64_t user_handle)
{
	struct srd_async_event ev;

	while (eh_event(h, &ev))
		if (ev.event_type == type && ev.user_handle == user_handle)
			return;
	fprintf(stderr, "async event %u for 0x%llx not seen\n", type,
		(unsigned long long)user_handle);
	exit(T_EXIT_FAIL);
}

void eh_bth(uint8_t *p, uint8_t opcode, uint32_t qpn, uint32_t psn)
{
	uint32_t v;

	memset(p, 0, 12);
	p[0] = opcode;
	p[2] = p[3] = 0xff; /* the default P_Key */
	v = htobe32(qpn & ROCE_QPN_MASK);
	memcpy(p + 4, &v, 4);
	v = htobe32(psn & ROCE_PSN_MASK);
	memcpy(p + 8, &v, 4);
}

void eh_udp_rx(struct eh *h, const struct eh_qp *q, const union ibv_gid *peer,
	       uint8_t *p, size_t len)
{
	struct srd_udp_meta m = { .sport = 49152,
				  .dport = 4791,
				  .hop_limit = 64 };
	struct srd_icrc_udp4 f = { .sport = htons(m.sport),
				   .dport = htons(m.dport) };

	memcpy(m.src.s6_addr, peer->raw, 16);
	memcpy(m.dst.s6_addr, q->qp->dev->port.gid[0].raw, 16);
	memcpy(&f.saddr, &m.src.s6_addr[12], 4);
	memcpy(&f.daddr, &m.dst.s6_addr[12], 4);
	srd_icrc_put(p, len,
		     srd_icrc_v4_from_parts(&f, 0, SRD_IPV4_DF, p, len));
	wire_udp_rx(h->t.d.engine->wire, &m, p, len);
}

void eh_udp_ack(struct eh *h, const struct eh_qp *q, const union ibv_gid *peer,
		uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	uint8_t p[12 + 4 + 4] = { 0 };
	uint32_t v = htobe32((uint32_t)syndrome << 24 | (msn & 0xffffff));

	eh_bth(p, ROCE_RC_ACKNOWLEDGE, q->qpn, psn);
	memcpy(p + 12, &v, 4);
	eh_udp_rx(h, q, peer, p, sizeof(p));
}
