/* SPDX-License-Identifier: MIT */
/*
 * ibv_create_qp_ex and the ibv_wr_* way of posting: wr_start takes the SQ
 * lock, each builder opens a WQE in the ring and the setters fill it,
 * wr_complete publishes the batch (or drops it all on the first error).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/dump.h"
#include "libibverbs/ibverbs.h"

static const uint64_t ops_rc =
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV |
	IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
	IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH;
static const uint64_t ops_uc =
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
static const uint64_t ops_ud = IBV_QP_EX_WITH_SEND |
			       IBV_QP_EX_WITH_SEND_WITH_IMM;
/* An XRC initiator: RC's, but A19 has no XRC ATOMIC WRITE or FLUSH. */
static const uint64_t ops_xrc =
	ops_rc &
	~(uint64_t)(IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH);

static struct srd_uqp *qp_of(struct ibv_qp_ex *x)
{
	return container_of(x, struct srd_uqp, qp_ex);
}

static void wr_start(struct ibv_qp_ex *x)
{
	struct srd_uqp *qp = qp_of(x);
	enum ibv_qp_state state = x->qp_base.state;

	srd_wq_lock(&qp->sq);
	qp->wr_head_start = qp->sq.head;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR)
		qp->wr_err = EINVAL;
}

/* Open the next WQE of the batch; NULL once the batch has failed. */
static struct srd_send_wqe *wr_open(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct srd_uqp *qp = qp_of(x);
	struct srd_uwq *sq = &qp->sq;
	struct srd_send_wqe *w;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!srd_opcode_valid(x->qp_base.qp_type, op) &&
	    !((op == IBV_WR_ATOMIC_WRITE || op == IBV_WR_FLUSH) &&
	      x->qp_base.qp_type == IBV_QPT_RC)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (sq->head - atomic_load_explicit(&sq->tail, memory_order_acquire) >=
	    sq->max_wr) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	/* Unstaged: the slot's place in the staging ring still counts. */
	srd_stage_skip(qp, sq->head, op);
	w = srd_wq_slot(sq, sq->head++);
	memset(w, 0, sizeof(*w));
	w->wr_id = x->wr_id;
	w->opcode = (uint8_t)op;
	if ((x->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all) {
		w->flags |= SRD_WQE_SIGNALED;
		sq->sig_next = sq->head;
	}
	if (x->wr_flags & IBV_SEND_FENCE)
		w->flags |= SRD_WQE_FENCE;
	if (x->wr_flags & IBV_SEND_SOLICITED)
		w->flags |= SRD_WQE_SOLICITED;
	qp->wr_cur = w;
	return w;
}

static void wr_send(struct ibv_qp_ex *x)
{
	wr_open(x, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct srd_send_wqe *w = wr_open(x, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct srd_send_wqe *w = wr_open(x, IBV_WR_SEND_WITH_INV);

	if (w)
		w->imm_data = rkey;
}

static void wr_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct srd_send_wqe *w = wr_open(x, IBV_WR_LOCAL_INV);

	if (w)
		w->imm_data = rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct srd_send_wqe *w;

	if (!mw || !info) {
		qp_of(x)->wr_err = EINVAL;
		return;
	}
	w = wr_open(x, IBV_WR_BIND_MW);
	if (w)
		srd_wqe_bind(w, mw, rkey, info);
	/* No data segments may follow. */
	qp_of(x)->wr_cur = NULL;
}

static void rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey,
		 uint64_t raddr, __be32 imm)
{
	struct srd_send_wqe *w = wr_open(x, op);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = raddr;
		w->imm_data = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	rdma(x, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey,
			      uint64_t raddr, __be32 imm)
{
	rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	rdma(x, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey,
			      uint64_t raddr, uint64_t compare, uint64_t swap)
{
	struct srd_send_wqe *w = wr_open(x, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = raddr;
		w->compare_add = compare;
		w->swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey,
				uint64_t raddr, uint64_t add)
{
	struct srd_send_wqe *w = wr_open(x, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = raddr;
		w->compare_add = add;
	}
}

/* The 8 bytes land at the target in one piece (IBTA 1.5 A19.5). */
static void wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr,
			    const void *atomic_wr)
{
	struct srd_send_wqe *w;

	if (!atomic_wr) {
		qp_of(x)->wr_err = EINVAL;
		return;
	}
	w = wr_open(x, IBV_WR_ATOMIC_WRITE);
	if (w) {
		w->rkey = rkey;
		w->remote_addr = raddr;
		memcpy(&w->compare_add, atomic_wr, sizeof(w->compare_add));
	}
	/* The payload is in the WQE: no data segments follow. */
	qp_of(x)->wr_cur = NULL;
}

static void wr_flush(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr,
		     size_t len, uint8_t type, uint8_t level)
{
	struct srd_send_wqe *w;

	/* As rdma-core's checks: a known placement type and level. */
	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    level > IBV_FLUSH_MR || len > UINT32_MAX) {
		qp_of(x)->wr_err = EINVAL;
		return;
	}
	w = wr_open(x, IBV_WR_FLUSH);
	if (w) {
		w->rkey = rkey;
		w->remote_addr = raddr;
		w->compare_add = len;
		w->swap = srd_wqe_flush_bits(type, level);
	}
	qp_of(x)->wr_cur = NULL;
}

static void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srd_uqp *qp = qp_of(x);
	struct srd_send_wqe *w = qp->wr_cur;

	if (!w)
		return;
	if (!ah) {
		qp->wr_err = EINVAL;
		return;
	}
	w->ah_handle = ah->handle;
	w->remote_qpn = remote_qpn;
	w->remote_qkey = remote_qkey;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t remote_srqn)
{
	struct srd_send_wqe *w = qp_of(x)->wr_cur;

	if (w)
		w->remote_srqn = remote_srqn;
}

static void wr_set_sge_list(struct ibv_qp_ex *x, size_t n,
			    const struct ibv_sge *sg)
{
	struct srd_uqp *qp = qp_of(x);
	struct srd_send_wqe *w = qp->wr_cur;
	struct srd_sge *s;

	if (!w)
		return;
	if (n > qp->sq.max_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	s = (struct srd_sge *)(w + 1);
	for (size_t i = 0; i < n; i++) {
		s[i].addr = sg[i].addr;
		s[i].length = sg[i].length;
		s[i].lkey = sg[i].lkey;
	}
	w->num_sge = (uint8_t)n;
}

static void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(x, 1, &sg);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n,
				    const struct ibv_data_buf *buf)
{
	struct srd_uqp *qp = qp_of(x);
	struct srd_send_wqe *w = qp->wr_cur;
	uint8_t *p;
	size_t total = 0;

	if (!w)
		return;
	for (size_t i = 0; i < n; i++)
		total += buf[i].length;
	if (total > qp->sq.max_inline) {
		qp->wr_err = EINVAL;
		return;
	}
	p = (uint8_t *)(w + 1);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, buf[i].addr, buf[i].length);
		p += buf[i].length;
	}
	w->flags |= SRD_WQE_INLINE;
	w->inline_len = (uint32_t)total;
	w->num_sge = 0;
}

static void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(x, 1, &b);
}

static int wr_complete(struct ibv_qp_ex *x)
{
	struct srd_uqp *qp = qp_of(x);
	struct srd_uwq *sq = &qp->sq;
	struct srd_context *ctx = to_ctx(x->qp_base.context);
	bool posted;
	int err = qp->wr_err;

	if (!err && sq->head != qp->wr_head_start && srd_ctx_dead(ctx))
		err = EIO; /* the device is lost (flush.c) */
	if (err) {
		sq->head = qp->wr_head_start;
		srd_wq_unlock(sq);
		return err;
	}
	if (ctx->trace & SRD_TRACE_F_WQE)
		for (uint32_t i = qp->wr_head_start; i != sq->head; i++)
			srd_dump_send_wqe(stderr, x->qp_base.qp_num, i,
					  srd_wq_slot(sq, i), sq->slot_size);
	posted = sq->head != qp->wr_head_start;
	if (posted) {
		__atomic_store_n(&sq->ctl->prod, sq->head, __ATOMIC_RELEASE);
		srd_wq_publish_signaled(sq);
	}
	srd_wq_unlock(sq);
	if (posted)
		srd_ring_doorbell(ctx);
	return 0;
}

static void wr_abort(struct ibv_qp_ex *x)
{
	struct srd_uqp *qp = qp_of(x);

	qp->sq.head = qp->wr_head_start;
	srd_wq_unlock(&qp->sq);
}

static void init_ops(struct srd_uqp *qp, uint64_t ops)
{
	struct ibv_qp_ex *x = &qp->qp_ex;

	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	if (x->qp_base.qp_type == IBV_QPT_UD)
		x->wr_set_ud_addr = wr_set_ud_addr;
	if (x->qp_base.qp_type == IBV_QPT_XRC_SEND)
		x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	if (ops & IBV_QP_EX_WITH_SEND)
		x->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		x->wr_atomic_write = wr_atomic_write;
	if (ops & IBV_QP_EX_WITH_FLUSH)
		qp->qp_ex_flush.wr_flush = wr_flush;
	qp->has_ex = true;
}

struct ibv_qp *srd_create_qp_ex(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr basic;
	uint64_t ops = 0, allowed;
	struct srd_uqp *qp;

	if (attr->comp_mask &
	    ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			IBV_QP_INIT_ATTR_XRCD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		/* A target: its domain and nothing else (rdma-core's
		 * ibv_cmd_create_qp_ex2 takes no PD or CQ for it). */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    attr->xrcd->context != context) {
			errno = EINVAL;
			return NULL;
		}
		if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
		    attr->create_flags) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
			errno = EINVAL;
			return NULL;
		}
		qp = srd_xrc_tgt_create(context, attr);
		return qp ? &qp->qp : NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		allowed = attr->qp_type == IBV_QPT_RC	      ? ops_rc
			  : attr->qp_type == IBV_QPT_UC	      ? ops_uc
			  : attr->qp_type == IBV_QPT_XRC_SEND ? ops_xrc
			  : attr->qp_type == IBV_QPT_RAW_PACKET
				  ? IBV_QP_EX_WITH_SEND
				  : ops_ud;
		if (ops & ~allowed) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	memset(&basic, 0, sizeof(basic));
	basic.qp_context = attr->qp_context;
	basic.send_cq = attr->send_cq;
	basic.recv_cq = attr->recv_cq;
	basic.srq = attr->srq;
	basic.cap = attr->cap;
	basic.qp_type = attr->qp_type;
	basic.sq_sig_all = attr->sq_sig_all;
	qp = srd_qp_create(context, attr->pd, &basic);
	if (!qp)
		return NULL;
	attr->cap = basic.cap;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		init_ops(qp, ops);
	return &qp->qp;
}
