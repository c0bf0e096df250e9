/* SPDX-License-Identifier: MIT */
/*
 * Many connections at once: 128 RC pairs sharing two CQs, every pair
 * carrying a SEND and a WRITE of its own pattern at the same time; each
 * completion names the right QP and every byte lands where it should.
 */
#include <stdio.h>
#include <stdlib.h>

#include "t_util.h"

#define PAIRS 128
#define MSG 2048

int main(void)
{
	struct ibv_qp *a[PAIRS], *b[PAIRS];
	struct ibv_qp_init_attr ia;
	struct ibv_cq *ca, *cb;
	struct t_buf s, r, w;
	struct ibv_wc wc;
	struct t_dev d;
	int i, seen_recv[PAIRS] = { 0 }, seen_send[PAIRS] = { 0 };

	t_init("rc_many_qps");
	t_dev_open(&d);
	ca = t_cq_create(&d, 4 * PAIRS, NULL);
	cb = t_cq_create(&d, 4 * PAIRS, NULL);
	t_buf_alloc(&d, &s, PAIRS * MSG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, PAIRS * MSG, T_ACCESS_ALL);
	t_buf_alloc(&d, &w, PAIRS * MSG, T_ACCESS_ALL);
	for (i = 0; i < PAIRS; i++) {
		struct t_ep ea, eb;

		t_qp_init_attr(&ia, IBV_QPT_RC, ca, ca);
		ia.cap.max_send_wr = 4;
		ia.cap.max_recv_wr = 4;
		a[i] = t_qp_create(&d, &ia);
		t_qp_init_attr(&ia, IBV_QPT_RC, cb, cb);
		ia.cap.max_send_wr = 4;
		ia.cap.max_recv_wr = 4;
		b[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, a[i], (uint32_t)i * 1000, &ea);
		t_ep_local(&d, b[i], (uint32_t)i * 1000 + 500, &eb);
		t_qp_connect(a[i], ea.psn, &eb, NULL);
		t_qp_connect(b[i], eb.psn, &ea, NULL);
	}
	for (i = 0; i < PAIRS; i++) {
		t_post_recv(b[i], (uint64_t)i, r.mr, r.p + i * MSG, MSG);
		t_fill(s.p + i * MSG, MSG, (uint32_t)i);
	}
	for (i = 0; i < PAIRS; i++) {
		t_post_send(a[i], (uint64_t)i, IBV_WR_SEND, s.mr, s.p + i * MSG,
			    MSG - i, IBV_SEND_SIGNALED, 0, 0);
		t_post_send(a[i], 1000 + (uint64_t)i, IBV_WR_RDMA_WRITE, s.mr,
			    s.p + i * MSG, MSG, IBV_SEND_SIGNALED,
			    (uintptr_t)w.p + (PAIRS - 1 - i) * MSG, w.mr->rkey);
	}
	for (i = 0; i < 2 * PAIRS; i++) {
		uint64_t k;

		if (!t_poll(ca, &wc, T_WAIT_MS))
			T_FAIL("%d of %d send completions", i, 2 * PAIRS);
		T_WC_STATUS(&wc, IBV_WC_SUCCESS);
		k = wc.wr_id % 1000;
		T_LT(k, PAIRS);
		T_EQ(wc.qp_num, a[k]->qp_num);
		seen_send[k]++;
	}
	for (i = 0; i < PAIRS; i++) {
		uint64_t k;

		if (!t_poll(cb, &wc, T_WAIT_MS))
			T_FAIL("%d of %d receive completions", i, PAIRS);
		T_WC_STATUS(&wc, IBV_WC_SUCCESS);
		k = wc.wr_id;
		T_LT(k, PAIRS);
		T_EQ(wc.qp_num, b[k]->qp_num);
		T_EQ(wc.byte_len, MSG - k);
		seen_recv[k]++;
	}
	for (i = 0; i < PAIRS; i++) {
		T_EQ(seen_send[i], 2);
		T_EQ(seen_recv[i], 1);
		T_CHECK_FILL(r.p + i * MSG, MSG - (size_t)i, (uint32_t)i);
		T_CHECK_FILL(w.p + (PAIRS - 1 - i) * MSG, MSG, (uint32_t)i);
	}
	for (i = 0; i < PAIRS; i++) {
		T_OK(ibv_destroy_qp(a[i]));
		T_OK(ibv_destroy_qp(b[i]));
	}
	T_OK(ibv_destroy_cq(ca));
	T_OK(ibv_destroy_cq(cb));
	t_buf_free(&s);
	t_buf_free(&r);
	t_buf_free(&w);
	t_dev_close(&d);
	t_pass();
}
