/* SPDX-License-Identifier: MIT */
/*
 * The daemon is killed (SIGKILL) under an XRC receiver: the WRs still
 * queued on its XRC SRQ, which no QP of the process names, complete on
 * the SRQ's CQ with IBV_WC_WR_FLUSH_ERR, in order, within 2 s; what was
 * received before the loss completed normally; the SRQ, the target QP
 * and the domain are destroyed without error.
 */
#include <signal.h>
#include <stdio.h>

#include "t_util.h"

#define NRECV 3
#define LOSS_MS 2000

int main(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
	};
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex ia;
	struct ibv_wc wc[NRECV + 1];
	struct ibv_qp *tgt, *ini;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct t_ep ei, et;
	struct t_buf b;
	struct t_dev d;
	uint32_t n;
	uint64_t t0;
	pid_t daemon;
	int got = 0;

	t_init("xrc_device_loss");
	t_dev_open(&d);
	scq = t_cq_create(&d, 16, NULL);
	rcq = t_cq_create(&d, 16, NULL);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);
	xrcd = T_NONNULL(ibv_open_xrcd(d.ctx, &xa));
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
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
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.send_cq = scq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = d.pd;
	ini = T_NONNULL(ibv_create_qp_ex(d.ctx, &ia));
	t_ep_local(&d, ini, 1, &ei);
	t_ep_local(&d, tgt, 2, &et);
	t_qp_connect(tgt, et.psn, &ei, NULL);
	t_qp_connect(ini, ei.psn, &et, NULL);

	/* One receive used, NRECV left queued. */
	for (int i = 0; i <= NRECV; i++)
		t_post_srq_recv(srq, 10 + i, b.mr, b.p, 4096);
	{
		struct ibv_sge sge = { (uintptr_t)b.p, 100, b.mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.wr_id = 1;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.qp_type.xrc.remote_srqn = n;
		T_OK(ibv_post_send(ini, &wr, &bad));
	}
	T_EXPECT_WC(scq, &wc[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(rcq, &wc[0], 10, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc[0].qp_num, tgt->qp_num);

	daemon = t_daemon_pid();
	T_GT(daemon, 0);
	T_OK(kill(daemon, SIGKILL) ? errno : 0);
	t0 = t_now_ms();
	while (got < NRECV && t_now_ms() - t0 < LOSS_MS) {
		int r = ibv_poll_cq(rcq, NRECV - got, wc + got);

		T_GE(r, 0);
		got += r;
	}
	T_EQ(got, NRECV);
	T_EQ(ibv_poll_cq(rcq, 1, &wc[NRECV]), 0); /* nothing more */
	for (int i = 0; i < NRECV; i++) {
		T_EQ(wc[i].wr_id, 11 + i);
		T_WC_STATUS(&wc[i], IBV_WC_WR_FLUSH_ERR);
		T_EQ(wc[i].opcode, IBV_WC_RECV);
	}
	T_OK(ibv_destroy_qp(ini));
	T_OK(ibv_destroy_qp(tgt));
	T_OK(ibv_destroy_srq(srq));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(scq));
	T_OK(ibv_destroy_cq(rcq));
	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
