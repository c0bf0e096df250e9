/* SPDX-License-Identifier: MIT */
/*
 * ibv_set_ece / ibv_query_ece: the device's vendor ID with any options
 * (what was set reads back), vendor ID 0 is EOPNOTSUPP (libibverbs), a
 * comp_mask or another vendor's ID is EINVAL (mlx5).
 */
#include <errno.h>

#include "t_util.h"

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_ece ece = { 0 }, got;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct t_dev d;

	t_init("ece");
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);

	T_OK(ibv_query_ece(qp, &got));
	T_EQ(got.vendor_id, d.attr.vendor_id);
	T_EQ(got.options, 0);
	T_EQ(got.comp_mask, 0);

	ece.vendor_id = d.attr.vendor_id;
	ece.options = 0xdeadbeef;
	T_OK(ibv_set_ece(qp, &ece));
	T_OK(ibv_query_ece(qp, &got));
	T_EQ(got.vendor_id, d.attr.vendor_id);
	T_EQ(got.options, 0xdeadbeef);

	ece.vendor_id = 0;
	T_RET(ibv_set_ece(qp, &ece), EOPNOTSUPP);
	ece.vendor_id = 0x02c9;
	T_RET(ibv_set_ece(qp, &ece), EINVAL);
	ece.vendor_id = d.attr.vendor_id;
	ece.comp_mask = 1;
	T_RET(ibv_set_ece(qp, &ece), EINVAL);
	/* Refused ones change nothing. */
	T_OK(ibv_query_ece(qp, &got));
	T_EQ(got.options, 0xdeadbeef);

	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
