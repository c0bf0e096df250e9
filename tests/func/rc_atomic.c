/* SPDX-License-Identifier: MIT */
/*
 * RC atomics on a host-order 64-bit word: compare-and-swap (match swaps,
 * mismatch leaves it; both return the old value), fetch-and-add (returns
 * the old value, adds, wraps at 2^64); byte_len 8 and the right opcodes.
 */
#include <stdio.h>

#include "t_util.h"

static struct t_pair p;
static struct t_buf res, tgt;

static uint64_t atomic(uint64_t id, enum ibv_wr_opcode op, int slot,
		       uint64_t cmp_add, uint64_t swap)
{
	struct ibv_wc wc;

	*(volatile uint64_t *)res.p = 0xdeaddeaddeaddeadull;
	t_post_atomic(p.a, id, op, res.mr, res.p,
		      (uintptr_t)tgt.p + 8 * (uint64_t)slot, tgt.mr->rkey,
		      cmp_add, swap);
	T_EXPECT_WC(p.cq_a, &wc, id, IBV_WC_SUCCESS,
		    op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP
						    : IBV_WC_FETCH_ADD);
	T_EQ(wc.byte_len, 8);
	return *(volatile uint64_t *)res.p;
}

int main(void)
{
	uint64_t *w;
	struct t_dev d;
	int i;

	t_init("rc_atomic");
	t_dev_open(&d);
	T_NE(d.attr.atomic_cap, IBV_ATOMIC_NONE);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &res, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &tgt, 4096, T_ACCESS_ALL);
	w = (uint64_t *)tgt.p;
	w[0] = 0x1111222233334444ull;
	w[1] = 0xaaaa;
	w[2] = 0xfffffffffffffffeull;
	w[3] = 0x5555555555555555ull;

	/* CAS, match: swapped, old value back. */
	T_EQ(atomic(1, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 0x1111222233334444ull,
		    0x9999888877776666ull),
	     0x1111222233334444ull);
	T_EQ(w[0], 0x9999888877776666ull);
	/* CAS, mismatch: unchanged, current value back. */
	T_EQ(atomic(2, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 0x1111222233334444ull,
		    0x1ull),
	     0x9999888877776666ull);
	T_EQ(w[0], 0x9999888877776666ull);

	/* FAA: old value back, sum stored; neighbours untouched. */
	T_EQ(atomic(3, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 5, 0), 0xaaaa);
	T_EQ(w[1], 0xaaaa + 5);
	T_EQ(atomic(4, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 0), 0xaaaa + 5);
	T_EQ(w[1], 0xaaaa + 5);
	T_EQ(atomic(5, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 3, 0),
	     0xfffffffffffffffeull);
	T_EQ(w[2], 1); /* wraps */
	T_EQ(w[0], 0x9999888877776666ull);
	T_EQ(w[3], 0x5555555555555555ull);

	/* A run of adds, each seeing the previous one. */
	for (i = 0; i < 100; i++)
		T_EQ(atomic(10 + i, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, 1, 0),
		     0x5555555555555555ull + (uint64_t)i);
	T_EQ(w[3], 0x5555555555555555ull + 100);

	/* Several atomics in flight at once, in order. */
	{
		struct ibv_wc wc;
		uint64_t *r = (uint64_t *)res.p;

		w[4] = 0;
		for (i = 0; i < 32; i++)
			t_post_atomic(p.a, 200 + i, IBV_WR_ATOMIC_FETCH_AND_ADD,
				      res.mr, r + 8 + i, (uintptr_t)(w + 4),
				      tgt.mr->rkey, 2, 0);
		for (i = 0; i < 32; i++)
			T_EXPECT_WC(p.cq_a, &wc, 200 + i, IBV_WC_SUCCESS,
				    IBV_WC_FETCH_ADD);
		for (i = 0; i < 32; i++)
			T_EQ(r[8 + i], 2 * (uint64_t)i);
		T_EQ(w[4], 64);
	}

	t_buf_free(&res);
	t_buf_free(&tgt);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
