/* SPDX-License-Identifier: MIT */
/*
 * Registering memory on the caller's own stack, over and over: the pages
 * move onto shared memory under the running thread, whose frames may sit
 * on the same pages.  Nothing the thread keeps there may be lost: its
 * locals, return addresses and the buffer itself stay intact through 300
 * registrations and deregistrations, each with a transfer through the MR.
 * (A thread that kept writing its stack while another swapped the pages
 * would crash or see stale values here; under ThreadSanitizer's runtime,
 * which writes much more on the stack, at once.)
 */
#include "t_util.h"

#define ROUNDS 300

static uint32_t seed = 1;

static __attribute__((noinline)) void
round_trip(struct t_pair *pp, struct t_buf *peer, size_t len, int round)
{
	volatile uint64_t guard_hi = 0x1122334455667788ull ^ (uint64_t)round;
	uint8_t buf[6000];
	volatile uint64_t guard_lo = 0x8877665544332211ull ^ (uint64_t)round;
	uint8_t *p = buf + (round % 64);
	struct ibv_mr *mr;

	t_fill(p, len, seed);
	mr = T_NONNULL(ibv_reg_mr(pp->d->pd, p, len, T_ACCESS_ALL));
	T_CHECK_FILL(p, len, seed);
	T_EQ(guard_hi, 0x1122334455667788ull ^ (uint64_t)round);
	T_EQ(guard_lo, 0x8877665544332211ull ^ (uint64_t)round);

	seed++;
	t_fill(peer->p, len, seed);
	t_post_send(pp->a, 1, IBV_WR_RDMA_WRITE, peer->mr, peer->p,
		    (uint32_t)len, IBV_SEND_SIGNALED, (uintptr_t)p, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(p, len, seed);

	T_OK(ibv_dereg_mr(mr));
	T_CHECK_FILL(p, len, seed);
	T_EQ(guard_hi, 0x1122334455667788ull ^ (uint64_t)round);
	T_EQ(guard_lo, 0x8877665544332211ull ^ (uint64_t)round);
	seed++;
}

int main(void)
{
	struct t_dev d;
	struct t_pair pp;
	struct t_buf peer;

	t_init("mr_stack");
	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, 8192, T_ACCESS_ALL);
	for (int i = 0; i < ROUNDS; i++)
		round_trip(&pp, &peer, 1000 + (size_t)(i * 13) % 4900, i);
	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
