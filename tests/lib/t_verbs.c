/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the tests: the device, registered buffers, CQs, QPs
 * and their connection, and posting one work request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "t_util.h"

void t_dev_open(struct t_dev *d)
{
	memset(d, 0, sizeof(*d));
	d->list = ibv_get_device_list(&d->num_devices);
	if (!d->list)
		T_FAIL("ibv_get_device_list: NULL, errno %s", t_errname(errno));
	if (d->num_devices < 1)
		T_FAIL("no RDMA device (daemon %s, socket %s)",
		       getenv("SOFTRDMAD") ? getenv("SOFTRDMAD") : "default",
		       t_socket_name());
	d->ctx = T_NONNULL(ibv_open_device(d->list[0]));
	T_OK(ibv_query_device(d->ctx, &d->attr));
	T_OK(ibv_query_port(d->ctx, T_PORT, &d->port));
	T_EQ(ibv_query_gid(d->ctx, T_PORT, T_GID_INDEX, &d->gid), 0);
	d->pd = T_NONNULL(ibv_alloc_pd(d->ctx));
	/* Now that a daemon serves us, remember it for the signal paths. */
	t_daemon_pid();
}

void t_dev_of(struct t_dev *d, struct ibv_context *ctx, struct ibv_pd *pd)
{
	memset(d, 0, sizeof(*d));
	d->ctx = ctx;
	d->pd = pd;
	T_OK(ibv_query_device(ctx, &d->attr));
	T_OK(ibv_query_port(ctx, T_PORT, &d->port));
	T_OK(ibv_query_gid(ctx, T_PORT, T_GID_INDEX, &d->gid));
}

void t_dev_close(struct t_dev *d)
{
	if (d->pd)
		T_OK(ibv_dealloc_pd(d->pd));
	if (d->ctx)
		T_OK(ibv_close_device(d->ctx));
	if (d->list)
		ibv_free_device_list(d->list);
	memset(d, 0, sizeof(*d));
}

void t_buf_alloc(struct t_dev *d, struct t_buf *b, size_t len, int access)
{
	b->len = len;
	b->p = t_zalloc(len);
	b->mr = T_NONNULL(ibv_reg_mr(d->pd, b->p, len, access));
	T_PTR_EQ(b->mr->addr, b->p);
	T_EQ(b->mr->length, len);
}

void t_buf_free(struct t_buf *b)
{
	if (b->mr)
		T_OK(ibv_dereg_mr(b->mr));
	t_free(b->p, b->len);
	memset(b, 0, sizeof(*b));
}

struct ibv_cq *t_cq_create(struct t_dev *d, int cqe,
			   struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = T_NONNULL(ibv_create_cq(d->ctx, cqe, NULL, ch, 0));

	T_GE(cq->cqe, cqe);
	return cq;
}

void t_qp_init_attr(struct ibv_qp_init_attr *ia, enum ibv_qp_type type,
		    struct ibv_cq *scq, struct ibv_cq *rcq)
{
	memset(ia, 0, sizeof(*ia));
	ia->qp_type = type;
	ia->send_cq = scq;
	ia->recv_cq = rcq;
	ia->cap.max_send_wr = 64;
	ia->cap.max_recv_wr = 64;
	ia->cap.max_send_sge = 4;
	ia->cap.max_recv_sge = 4;
	ia->cap.max_inline_data = 64;
}

struct ibv_qp *t_qp_ex_create(struct t_dev *d, struct ibv_cq *cq,
			      enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_init_attr_ex ix = { 0 };

	t_qp_init_attr(&ia, type, cq, cq);
	ix.qp_type = type;
	ix.send_cq = cq;
	ix.recv_cq = cq;
	ix.cap = ia.cap;
	ix.pd = d->pd;
	ix.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ix.send_ops_flags = ops;
	return ibv_create_qp_ex(d->ctx, &ix);
}

struct ibv_qp *t_qp_create(struct t_dev *d, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp_cap want = ia->cap;
	struct ibv_qp *qp = T_NONNULL(ibv_create_qp(d->pd, ia));

	T_EQ(qp->state, IBV_QPS_RESET);
	T_EQ(qp->qp_type, ia->qp_type);
	T_GE(ia->cap.max_send_wr, want.max_send_wr);
	T_GE(ia->cap.max_send_sge, want.max_send_sge);
	T_GE(ia->cap.max_inline_data, want.max_inline_data);
	if (!ia->srq) {
		T_GE(ia->cap.max_recv_wr, want.max_recv_wr);
		T_GE(ia->cap.max_recv_sge, want.max_recv_sge);
	}
	return qp;
}

void t_ep_local(struct t_dev *d, struct ibv_qp *qp, uint32_t psn,
		struct t_ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->qpn = qp->qp_num;
	ep->psn = psn & 0xffffff;
	ep->gid = d->gid;
}

void t_conn_opts_init(struct t_conn_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;
	o->max_rd_atomic = 16;
	o->access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC;
	o->qkey = T_QKEY;
}

static const struct t_conn_opts *opts_or_default(const struct t_conn_opts *o,
						 struct t_conn_opts *def)
{
	if (o)
		return o;
	t_conn_opts_init(def);
	return def;
}

void t_ah_attr_init(struct ibv_ah_attr *ah, const union ibv_gid *dgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = T_GID_INDEX;
	ah->grh.hop_limit = 64;
	ah->port_num = T_PORT;
}

void t_qp_to_init(struct ibv_qp *qp, const struct t_conn_opts *o)
{
	struct ibv_qp_attr attr = { 0 };
	struct t_conn_opts def;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	o = opts_or_default(o, &def);
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = T_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		attr.qkey = o->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		attr.qp_access_flags = o->access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	T_OK(ibv_modify_qp(qp, &attr, mask));
	T_EQ(qp->state, IBV_QPS_INIT);
}

void t_qp_to_rtr(struct ibv_qp *qp, const struct t_ep *remote,
		 const struct t_conn_opts *o)
{
	struct ibv_qp_attr attr = { 0 };
	struct ibv_port_attr port;
	struct t_conn_opts def;
	int mask = IBV_QP_STATE;

	o = opts_or_default(o, &def);
	attr.qp_state = IBV_QPS_RTR;
	if (qp->qp_type != IBV_QPT_UD) {
		if (o->mtu) {
			attr.path_mtu = o->mtu;
		} else {
			T_OK(ibv_query_port(qp->context, T_PORT, &port));
			attr.path_mtu = port.active_mtu;
		}
		attr.dest_qp_num = remote->qpn;
		attr.rq_psn = remote->psn;
		t_ah_attr_init(&attr.ah_attr, &remote->gid);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	/* An XRC initiator has no responder, a target no requester. */
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_RECV) {
		attr.max_dest_rd_atomic = o->max_rd_atomic;
		attr.min_rnr_timer = o->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	T_OK(ibv_modify_qp(qp, &attr, mask));
	T_EQ(qp->state, IBV_QPS_RTR);
}

void t_qp_to_rts(struct ibv_qp *qp, uint32_t psn, const struct t_conn_opts *o)
{
	struct ibv_qp_attr attr = { 0 };
	struct t_conn_opts def;
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	o = opts_or_default(o, &def);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = psn & 0xffffff;
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND) {
		attr.timeout = o->timeout;
		attr.retry_cnt = o->retry_cnt;
		attr.rnr_retry = o->rnr_retry;
		attr.max_rd_atomic = o->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	} else if (qp->qp_type == IBV_QPT_XRC_RECV) {
		attr.timeout = o->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	T_OK(ibv_modify_qp(qp, &attr, mask));
	T_EQ(qp->state, IBV_QPS_RTS);
}

void t_qp_connect(struct ibv_qp *qp, uint32_t psn, const struct t_ep *remote,
		  const struct t_conn_opts *o)
{
	t_qp_to_init(qp, o);
	t_qp_to_rtr(qp, remote, o);
	t_qp_to_rts(qp, psn, o);
}

void t_qp_set_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	T_OK(ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	T_EQ(qp->state, state);
}

enum ibv_qp_state t_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr attr;

	T_OK(ibv_query_qp(qp, &attr, IBV_QP_STATE, &ia));
	return attr.qp_state;
}

void t_pair_create(struct t_dev *d, struct t_pair *p, enum ibv_qp_type type,
		   const struct ibv_qp_init_attr *ia_in,
		   const struct t_conn_opts *o)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts def;
	struct t_ep ea, eb;
	int cqe;

	o = opts_or_default(o, &def);
	memset(p, 0, sizeof(*p));
	p->d = d;
	p->type = type;
	p->qkey = o->qkey;
	if (ia_in)
		ia = *ia_in;
	else
		t_qp_init_attr(&ia, type, NULL, NULL);
	ia.qp_type = type;
	/* Room for everything both queues can hold, even rounded up. */
	cqe = (int)(2 * (ia.cap.max_send_wr + ia.cap.max_recv_wr) + 64);
	p->cq_a = t_cq_create(d, cqe, NULL);
	p->cq_b = t_cq_create(d, cqe, NULL);

	ia.send_cq = ia.recv_cq = p->cq_a;
	p->a = t_qp_create(d, &ia);
	p->cap = ia.cap;
	if (ia_in)
		ia = *ia_in;
	else
		t_qp_init_attr(&ia, type, NULL, NULL);
	ia.qp_type = type;
	ia.send_cq = ia.recv_cq = p->cq_b;
	p->b = t_qp_create(d, &ia);

	t_ep_local(d, p->a, 0x1000 + p->a->qp_num, &ea);
	t_ep_local(d, p->b, 0x2000 + p->b->qp_num, &eb);
	t_qp_connect(p->a, ea.psn, &eb, o);
	t_qp_connect(p->b, eb.psn, &ea, o);
	if (type == IBV_QPT_UD) {
		struct ibv_ah_attr ah;

		t_ah_attr_init(&ah, &d->gid);
		p->ah_a = T_NONNULL(ibv_create_ah(d->pd, &ah));
		p->ah_b = T_NONNULL(ibv_create_ah(d->pd, &ah));
	}
}

void t_pair_destroy(struct t_pair *p)
{
	if (p->ah_a)
		T_OK(ibv_destroy_ah(p->ah_a));
	if (p->ah_b)
		T_OK(ibv_destroy_ah(p->ah_b));
	if (p->a)
		T_OK(ibv_destroy_qp(p->a));
	if (p->b)
		T_OK(ibv_destroy_qp(p->b));
	if (p->cq_a)
		T_OK(ibv_destroy_cq(p->cq_a));
	if (p->cq_b)
		T_OK(ibv_destroy_cq(p->cq_b));
	memset(p, 0, sizeof(*p));
}

/* One SGE over len bytes at addr of mr (lkey 0 without one). */
static struct ibv_sge sge_of(struct ibv_mr *mr, void *addr, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)addr,
				 .length = len,
				 .lkey = mr ? mr->lkey : 0 };
}

/* Post one send WR; fail at file:line naming it (what: "" or "UD " ...). */
static void post_send_at(const char *file, int line, struct ibv_qp *qp,
			 struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret)
		t_fail_at(file, line, "ibv_post_send(%swr_id %#llx): %s", what,
			  (unsigned long long)wr->wr_id, t_errname(ret));
}

int t_post_send_ret(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		    struct ibv_mr *mr, void *addr, uint32_t len,
		    unsigned int flags, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = sge_of(mr, addr, len);
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = flags;
	if (mr || (flags & IBV_SEND_INLINE)) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32((uint32_t)wr_id);
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret && bad != &wr)
		T_FAIL("ibv_post_send failed (%s) but bad_wr is %p, not %p",
		       t_errname(ret), (void *)bad, (void *)&wr);
	return ret;
}

void t_post_send_at(const char *file, int line, struct ibv_qp *qp,
		    uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_mr *mr,
		    void *addr, uint32_t len, unsigned int flags,
		    uint64_t raddr, uint32_t rkey)
{
	int ret = t_post_send_ret(qp, wr_id, op, mr, addr, len, flags, raddr,
				  rkey);

	if (ret)
		t_fail_at(file, line, "ibv_post_send(wr_id %#llx): %s",
			  (unsigned long long)wr_id, t_errname(ret));
}

void t_post_atomic_at(const char *file, int line, struct ibv_qp *qp,
		      uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_mr *mr,
		      void *addr, uint64_t raddr, uint32_t rkey,
		      uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sge = sge_of(mr, addr, 8);
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
		.wr.atomic = { .remote_addr = raddr,
			       .rkey = rkey,
			       .compare_add = compare_add,
			       .swap = swap },
	};

	post_send_at(file, line, qp, &wr, "atomic ");
}

void t_post_ud_at(const char *file, int line, struct ibv_qp *qp, uint64_t wr_id,
		  struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey,
		  struct ibv_mr *mr, void *addr, uint32_t len,
		  unsigned int flags)
{
	struct ibv_sge sge = sge_of(mr, addr, len);
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_SEND,
		.send_flags = flags,
		.sg_list = &sge,
		.num_sge = 1,
		.wr.ud = { .ah = ah, .remote_qpn = rqpn, .remote_qkey = qkey },
	};

	post_send_at(file, line, qp, &wr, "UD ");
}

int t_post_recv_ret(struct ibv_qp *qp, uint64_t wr_id, struct ibv_mr *mr,
		    void *addr, uint32_t len)
{
	struct ibv_sge sge = sge_of(mr, addr, len);
	struct ibv_recv_wr wr = { 0 }, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	if (mr) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	ret = ibv_post_recv(qp, &wr, &bad);
	if (ret && bad != &wr)
		T_FAIL("ibv_post_recv failed (%s) but bad_wr is %p, not %p",
		       t_errname(ret), (void *)bad, (void *)&wr);
	return ret;
}

void t_post_recv_at(const char *file, int line, struct ibv_qp *qp,
		    uint64_t wr_id, struct ibv_mr *mr, void *addr, uint32_t len)
{
	int ret = t_post_recv_ret(qp, wr_id, mr, addr, len);

	if (ret)
		t_fail_at(file, line, "ibv_post_recv(wr_id %#llx): %s",
			  (unsigned long long)wr_id, t_errname(ret));
}

void t_post_srq_recv_at(const char *file, int line, struct ibv_srq *srq,
			uint64_t wr_id, struct ibv_mr *mr, void *addr,
			uint32_t len)
{
	struct ibv_sge sge = sge_of(mr, addr, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id,
				  .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	int ret;

	ret = ibv_post_srq_recv(srq, &wr, &bad);
	if (ret)
		t_fail_at(file, line, "ibv_post_srq_recv(wr_id %#llx): %s",
			  (unsigned long long)wr_id, t_errname(ret));
}

void t_side_open(struct t_side *s, size_t len, int access)
{
	struct ibv_qp_init_attr ia;

	t_dev_open(&s->d);
	s->cq = t_cq_create(&s->d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, s->cq, s->cq);
	s->qp = t_qp_create(&s->d, &ia);
	s->len = len;
	s->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(s->buf != MAP_FAILED);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | access);
	T_NONNULL(s->mr);
}

struct t_ep t_side_ep(struct t_side *s, uint32_t psn)
{
	struct t_ep ep;

	t_ep_local(&s->d, s->qp, psn, &ep);
	ep.addr = (uintptr_t)s->buf;
	ep.rkey = s->mr->rkey;
	ep.len = (uint32_t)s->len;
	return ep;
}

struct t_ep t_side_serve(struct t_side *s, int sock, uint32_t mine,
			 uint32_t theirs, uint32_t psn)
{
	struct t_ep ep = t_side_ep(s, psn), peer;

	t_step_send(sock, mine, &ep);
	peer = t_step_recv(sock, theirs);
	t_qp_connect(s->qp, psn, &peer, NULL);
	return peer;
}

struct t_ep t_side_dial(struct t_side *s, int sock, uint32_t theirs,
			uint32_t mine, uint32_t psn,
			const struct t_conn_opts *o)
{
	struct t_ep peer = t_step_recv(sock, theirs), ep = t_side_ep(s, psn);

	t_qp_connect(s->qp, psn, &peer, o);
	t_step_send(sock, mine, &ep);
	return peer;
}

void t_side_close(struct t_side *s)
{
	T_OK(ibv_dereg_mr(s->mr));
	T_OK(munmap(s->buf, s->len));
	T_OK(ibv_destroy_qp(s->qp));
	T_OK(ibv_destroy_cq(s->cq));
	t_dev_close(&s->d);
}
