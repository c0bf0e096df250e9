/* SPDX-License-Identifier: MIT */
/*
 * Queue depth: max_send_wr WRs in flight at once all complete; one more
 * before any completion is reaped is refused with ENOMEM and bad_wr
 * pointing at it (slots free only as completions are polled); the same
 * for the receive queue.  A chained list stops at the first WR that does
 * not fit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "t_util.h"

int main(void)
{
	struct ibv_send_wr *wrs, *bad;
	struct ibv_recv_wr *rwrs, *rbad;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge, rsge;
	struct t_buf s, t;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint32_t n, rn, i;

	t_init("rc_depth");
	t_dev_open(&d);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_send_wr = 100;
	ia.cap.max_recv_wr = 50;
	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	n = p.cap.max_send_wr;
	t_log("max_send_wr 100 -> %u", n);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, 4096, T_ACCESS_ALL);

	/* n + 1 WRs in one chained list: n go in, the last is refused. */
	wrs = calloc(n + 1, sizeof(*wrs));
	T_ASSERT(wrs != NULL);
	sge = (struct ibv_sge){ (uintptr_t)s.p, 16, s.mr->lkey };
	for (i = 0; i <= n; i++) {
		wrs[i].wr_id = i;
		wrs[i].opcode = IBV_WR_RDMA_WRITE;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].wr.rdma.remote_addr = (uintptr_t)t.p + (i % 200) * 16;
		wrs[i].wr.rdma.rkey = t.mr->rkey;
		wrs[i].next = i < n ? &wrs[i + 1] : NULL;
	}
	bad = NULL;
	T_RET(ibv_post_send(p.a, &wrs[0], &bad), ENOMEM);
	T_PTR_EQ(bad, &wrs[n]);
	/* Until a completion is polled, still full. */
	t_sleep_ms(50);
	wrs[n].next = NULL;
	bad = NULL;
	T_RET(ibv_post_send(p.a, &wrs[n], &bad), ENOMEM);
	T_PTR_EQ(bad, &wrs[n]);
	for (i = 0; i < n; i++)
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_EXPECT_NO_WC(p.cq_a, 20);
	/* Reaped: the whole queue is free again. */
	T_OK(ibv_post_send(p.a, &wrs[1], &bad));
	for (i = 1; i <= n; i++)
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* Receive queue: rn fit, one more is ENOMEM. */
	rn = p.cap.max_recv_wr;
	rwrs = calloc(rn + 1, sizeof(*rwrs));
	T_ASSERT(rwrs != NULL);
	rsge = (struct ibv_sge){ (uintptr_t)t.p, 64, t.mr->lkey };
	for (i = 0; i <= rn; i++) {
		rwrs[i].wr_id = 1000 + i;
		rwrs[i].sg_list = &rsge;
		rwrs[i].num_sge = 1;
		rwrs[i].next = i < rn ? &rwrs[i + 1] : NULL;
	}
	rbad = NULL;
	T_RET(ibv_post_recv(p.b, &rwrs[0], &rbad), ENOMEM);
	T_PTR_EQ(rbad, &rwrs[rn]);
	/* Consume them all with sends; then the queue takes rn again. */
	for (i = 0; i < rn; i++) {
		t_post_send(p.a, 2000 + i, IBV_WR_SEND, s.mr, s.p, 8,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p.cq_a, &wc, 2000 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
	}
	rwrs[rn - 1].next = NULL;
	T_OK(ibv_post_recv(p.b, &rwrs[0], &rbad));

	free(wrs);
	free(rwrs);
	t_buf_free(&s);
	t_buf_free(&t);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
