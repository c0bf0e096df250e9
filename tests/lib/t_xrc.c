/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "t_xrc.h"

struct ibv_xrcd *t_xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &xa);
}

struct ibv_srq *t_xsrq_create(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			      struct ibv_cq *cq, struct ibv_pd *pd,
			      uint32_t max_wr)
{
	struct ibv_srq_init_attr_ex sa;

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = max_wr;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = cq;
	sa.pd = pd;
	return ibv_create_srq_ex(ctx, &sa);
}

struct ibv_qp *t_xrc_tgt_create(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ia.xrcd = xrcd;
	return ibv_create_qp_ex(ctx, &ia);
}

struct ibv_qp *t_xrc_ini_create(struct t_dev *d, struct ibv_cq *cq,
				uint32_t max_wr, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.send_cq = cq;
	ia.cap.max_send_wr = max_wr;
	ia.cap.max_send_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = d->pd;
	if (ops) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = ops;
	}
	return ibv_create_qp_ex(d->ctx, &ia);
}

void t_xrc_connect(struct t_dev *d, struct ibv_qp *ini, uint32_t ini_psn,
		   struct ibv_qp *tgt, uint32_t tgt_psn)
{
	struct t_ep ei, et;

	t_ep_local(d, ini, ini_psn, &ei);
	t_ep_local(d, tgt, tgt_psn, &et);
	t_qp_connect(tgt, et.psn, &ei, NULL);
	t_qp_connect(ini, ei.psn, &et, NULL);
}

void t_xrc_send(struct ibv_qp *ini, uint64_t wr_id, const struct t_buf *b,
		uint32_t len, uint32_t srqn)
{
	struct ibv_sge sge = { (uintptr_t)b->p, len, b->mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.qp_type.xrc.remote_srqn = srqn;
	T_OK(ibv_post_send(ini, &wr, &bad));
}
