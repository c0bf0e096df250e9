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

#include "t_xrc.h"

#define NRECV 3
#define LOSS_MS 2000

int main(void)
{
	struct ibv_wc wc[NRECV + 1];
	struct ibv_qp *tgt, *ini;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
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
	xrcd = T_NONNULL(t_xrcd_open(d.ctx, -1, 0));
	srq = T_NONNULL(t_xsrq_create(d.ctx, xrcd, rcq, d.pd, 16));
	T_OK(ibv_get_srq_num(srq, &n));
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini = T_NONNULL(t_xrc_ini_create(&d, scq, 4, 0));
	t_xrc_connect(&d, ini, 1, tgt, 2);

	/* One receive used, NRECV left queued. */
	for (int i = 0; i <= NRECV; i++)
		t_post_srq_recv(srq, 10 + i, b.mr, b.p, 4096);
	t_xrc_send(ini, 1, &b, 100, n);
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
