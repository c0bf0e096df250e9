/* SPDX-License-Identifier: MIT */
/*
 * Protection domains: alloc/dealloc, and a PD still in use (an MR, a QP,
 * an AH) cannot be deallocated: EBUSY.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_pd *pd, *pds[16];
	struct ibv_qp_init_attr ia;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct t_dev d;
	char *buf;
	int i;

	t_init("pd");
	t_dev_open(&d);
	buf = t_zalloc(8192);

	for (i = 0; i < 16; i++) {
		pds[i] = T_NONNULL(ibv_alloc_pd(d.ctx));
		T_PTR_EQ(pds[i]->context, d.ctx);
	}
	for (i = 0; i < 16; i++)
		T_OK(ibv_dealloc_pd(pds[i]));

	/* An MR holds its PD. */
	pd = T_NONNULL(ibv_alloc_pd(d.ctx));
	mr = T_NONNULL(ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE));
	T_PTR_EQ(mr->pd, pd);
	T_RET(ibv_dealloc_pd(pd), EBUSY);
	T_OK(ibv_dereg_mr(mr));

	/* So does a QP. */
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = T_NONNULL(ibv_create_qp(pd, &ia));
	T_PTR_EQ(qp->pd, pd);
	T_RET(ibv_dealloc_pd(pd), EBUSY);
	T_OK(ibv_destroy_qp(qp));

	/* And an AH. */
	t_ah_attr_init(&aa, &d.gid);
	ah = T_NONNULL(ibv_create_ah(pd, &aa));
	T_RET(ibv_dealloc_pd(pd), EBUSY);
	T_OK(ibv_destroy_ah(ah));

	/* Free of users: gone. */
	T_OK(ibv_dealloc_pd(pd));
	T_OK(ibv_destroy_cq(cq));
	t_free(buf, 8192);
	t_dev_close(&d);
	t_pass();
}
