/* SPDX-License-Identifier: MIT */
/*
 * The XRC verbs through the library's exported functions
 * (SOFTRDMA_NO_INLINE_VERBS), as bindings that cannot use the header's
 * inline bodies call them: open and close a domain, an XRC SRQ and its
 * number, a target QP and an initiator, ibv_open_qp, one SEND through
 * ibv_wr_set_xrc_srqn.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <dlfcn.h>
#include <stdio.h>

#include "t_util.h"

#define LEN 5000

int main(void)
{
	static const char *const names[] = {
		"ibv_open_xrcd",       "ibv_close_xrcd",   "ibv_create_srq_ex",
		"ibv_get_srq_num",     "ibv_create_qp_ex", "ibv_open_qp",
		"ibv_wr_set_xrc_srqn",
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
	};
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp_open_attr oa;
	struct ibv_qp *tgt, *ini, *opened;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct t_ep ei, et;
	struct ibv_qp_ex *x;
	struct t_buf src, dst;
	struct ibv_wc wc;
	struct t_dev d;
	uint32_t n;

	t_init("xrc_exports");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!dlsym(RTLD_DEFAULT, names[i]))
			T_FAIL("%s is not exported", names[i]);
	/* The calls below go to those symbols, not to inline bodies. */
	T_PTR_EQ((void *)&ibv_open_xrcd, dlsym(RTLD_DEFAULT, "ibv_open_xrcd"));
	T_PTR_EQ((void *)&ibv_open_qp, dlsym(RTLD_DEFAULT, "ibv_open_qp"));

	t_dev_open(&d);
	scq = t_cq_create(&d, 16, NULL);
	rcq = t_cq_create(&d, 16, NULL);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, LEN, T_ACCESS_ALL);
	xrcd = T_NONNULL(ibv_open_xrcd(d.ctx, &xa));
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = rcq;
	sa.pd = d.pd;
	srq = T_NONNULL(ibv_create_srq_ex(d.ctx, &sa));
	T_OK(ibv_get_srq_num(srq, &n));

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ia.xrcd = xrcd;
	tgt = T_NONNULL(ibv_create_qp_ex(d.ctx, &ia));
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = tgt->qp_num;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	/* One handle per context: a second one here is refused. */
	T_NULL_ERRNO(ibv_open_qp(d.ctx, &oa), EINVAL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.send_cq = scq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = d.pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ini = T_NONNULL(ibv_create_qp_ex(d.ctx, &ia));
	t_ep_local(&d, ini, 1, &ei);
	t_ep_local(&d, tgt, 2, &et);
	t_qp_connect(tgt, et.psn, &ei, NULL);
	t_qp_connect(ini, ei.psn, &et, NULL);

	t_post_srq_recv(srq, 7, dst.mr, dst.p, LEN);
	t_fill(src.p, LEN, 3);
	x = T_NONNULL(ibv_qp_to_qp_ex(ini));
	ibv_wr_start(x);
	x->wr_id = 8;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, n);
	ibv_wr_set_sge(x, src.mr->lkey, (uintptr_t)src.p, LEN);
	T_OK(ibv_wr_complete(x));
	T_EXPECT_WC(scq, &wc, 8, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(rcq, &wc, 7, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.qp_num, tgt->qp_num);
	T_EQ(wc.byte_len, LEN);
	T_CHECK_FILL(dst.p, LEN, 3);

	T_OK(ibv_destroy_qp(ini));
	T_OK(ibv_destroy_qp(tgt));
	/* The target is gone with its last handle. */
	opened = ibv_open_qp(d.ctx, &oa);
	T_ASSERT(!opened);
	T_OK(ibv_destroy_srq(srq));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_destroy_cq(rcq));
	t_buf_free(&src);
	t_buf_free(&dst);
	t_dev_close(&d);
	t_pass();
}
