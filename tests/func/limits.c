/* SPDX-License-Identifier: MIT */
/*
 * Device limits are enforced: a CQ or QP beyond them is refused with
 * EINVAL, and what is granted is at least what was asked.
 */
#include <stdio.h>

#include "t_util.h"

static void try_qp(struct t_dev *d, struct ibv_cq *cq, const char *what,
		   uint32_t send_wr, uint32_t recv_wr, uint32_t send_sge,
		   uint32_t recv_sge)
{
	struct ibv_qp_init_attr ia;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_send_wr = send_wr;
	ia.cap.max_recv_wr = recv_wr;
	ia.cap.max_send_sge = send_sge;
	ia.cap.max_recv_sge = recv_sge;
	t_log("create_qp with %s", what);
	T_NULL_ERRNO(ibv_create_qp(d->pd, &ia), EINVAL);
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_dev d;
	uint32_t wr, sge;

	t_init("limits");
	t_dev_open(&d);
	wr = (uint32_t)d.attr.max_qp_wr;
	sge = (uint32_t)d.attr.max_sge;

	/* CQ: 1..max_cqe. */
	T_NULL_ERRNO(ibv_create_cq(d.ctx, d.attr.max_cqe + 1, NULL, NULL, 0),
		     EINVAL);
	T_NULL_ERRNO(ibv_create_cq(d.ctx, 0, NULL, NULL, 0), EINVAL);
	T_NULL_ERRNO(ibv_create_cq(d.ctx, -1, NULL, NULL, 0), EINVAL);
	cq = T_NONNULL(ibv_create_cq(d.ctx, d.attr.max_cqe, NULL, NULL, 0));
	T_GE(cq->cqe, d.attr.max_cqe);
	T_OK(ibv_destroy_cq(cq));
	cq = T_NONNULL(ibv_create_cq(d.ctx, 3, NULL, NULL, 0));
	T_GE(cq->cqe, 3);

	/* QP: work requests and SGEs within the device limits. */
	try_qp(&d, cq, "max_send_wr > max_qp_wr", wr + 1, 1, 1, 1);
	try_qp(&d, cq, "max_recv_wr > max_qp_wr", 1, wr + 1, 1, 1);
	try_qp(&d, cq, "max_send_sge > max_sge", 1, 1, sge + 1, 1);
	try_qp(&d, cq, "max_recv_sge > max_sge", 1, 1, 1, sge + 1);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_inline_data = 1u << 20;
	T_NULL_ERRNO(ibv_create_qp(d.pd, &ia), EINVAL);

	/* Exactly at the limits is fine, and granted >= requested. */
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_send_wr = wr;
	ia.cap.max_recv_wr = wr;
	ia.cap.max_send_sge = sge;
	ia.cap.max_recv_sge = sge;
	ia.cap.max_inline_data = 0;
	qp = t_qp_create(&d, &ia);
	T_OK(ibv_destroy_qp(qp));

	/* Odd sizes are rounded up, never down. */
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_send_wr = 7;
	ia.cap.max_recv_wr = 5;
	ia.cap.max_send_sge = 3;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 33;
	qp = t_qp_create(&d, &ia);
	t_log("asked 7/5 wr 3/1 sge 33 inline, got %u/%u wr %u/%u sge %u "
	      "inline",
	      ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
	      ia.cap.max_recv_sge, ia.cap.max_inline_data);
	T_OK(ibv_destroy_qp(qp));

	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
