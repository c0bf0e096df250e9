/* SPDX-License-Identifier: MIT */
/*
 * Selective signaling: with sq_sig_all = 0 only WRs flagged
 * IBV_SEND_SIGNALED complete, and a signaled completion frees the send
 * queue slots of the unsignaled WRs before it (the SQ never overflows if
 * the application reaps every Nth).  With sq_sig_all = 1 every WR
 * completes.  The receiver always completes its receives.
 */
#include <stdio.h>

#include "t_util.h"

#define TOTAL 1000
#define EVERY 8
#define SLOTS 256

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_buf s, t, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	uint32_t depth;
	int posted = 0, reaped = 0, next_sig = EVERY - 1, ret, i;

	t_init("rc_unsignaled");
	t_dev_open(&d);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_send_wr = 16;
	ia.sq_sig_all = 0;
	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	depth = p.cap.max_send_wr;
	t_buf_alloc(&d, &s, SLOTS * 64, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, SLOTS * 64, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);

	/* WR i writes 64 bytes of pattern i into slot i % SLOTS. */
	while (reaped < TOTAL) {
		while (posted < TOTAL && (uint32_t)(posted - reaped) < depth) {
			uint8_t *src = s.p + (posted % SLOTS) * 64;

			t_fill(src, 64, (uint32_t)posted);
			ret = t_post_send_ret(
				p.a, (uint64_t)posted, IBV_WR_RDMA_WRITE, s.mr,
				src, 64,
				posted % EVERY == EVERY - 1 ? IBV_SEND_SIGNALED
							    : 0,
				(uintptr_t)t.p + (posted % SLOTS) * 64,
				t.mr->rkey);
			if (ret)
				T_FAIL("post of WR %d with %d unreaped (depth "
				       "%u): %s",
				       posted, posted - reaped, depth,
				       t_errname(ret));
			posted++;
		}
		/* Source slots are reused only after their WR is reaped:
		 * SLOTS is far above depth. */
		T_EXPECT_WC(p.cq_a, &wc, (uint64_t)next_sig, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		reaped = next_sig + 1;
		next_sig += EVERY;
		if (next_sig >= TOTAL && reaped < TOTAL)
			T_FAIL("TOTAL must be a multiple of EVERY");
	}
	T_EXPECT_NO_WC(p.cq_a, 50);
	for (i = TOTAL - SLOTS; i < TOTAL; i++)
		T_CHECK_FILL(t.p + (i % SLOTS) * 64, 64, (uint32_t)i);

	/* An unsignaled SEND: no completion for the sender, but one for the
	 * receiver; a later signaled WR completes alone. */
	t_post_recv(p.b, 1, r.mr, r.p, 4096);
	t_fill(s.p, 32, 5);
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 32, 0, 0, 0);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(r.p, 32, 5);
	t_post_send(p.a, 3, IBV_WR_RDMA_WRITE, s.mr, s.p, 8, IBV_SEND_SIGNALED,
		    (uintptr_t)t.p, t.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_EXPECT_NO_WC(p.cq_a, 20);
	t_pair_destroy(&p);

	/* sq_sig_all = 1: every WR completes, flagged or not. */
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.sq_sig_all = 1;
	t_pair_create(&d, &p, IBV_QPT_RC, &ia, NULL);
	for (i = 0; i < 20; i++)
		t_post_send(p.a, 10 + i, IBV_WR_RDMA_WRITE, s.mr, s.p, 8, 0,
			    (uintptr_t)t.p, t.mr->rkey);
	for (i = 0; i < 20; i++)
		T_EXPECT_WC(p.cq_a, &wc, 10 + i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
	T_EXPECT_NO_WC(p.cq_a, 20);

	t_buf_free(&s);
	t_buf_free(&t);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
