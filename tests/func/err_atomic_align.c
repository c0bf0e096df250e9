/* SPDX-License-Identifier: MIT */
/*
 * An atomic on a remote address that is not 8-byte aligned is an invalid
 * request: the requester completes with IBV_WC_REM_INV_REQ_ERR and the
 * target word is untouched.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_ATOMIC_CMP_AND_SWP };
	struct t_buf res, tgt;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	t_init("err_atomic_align");
	t_dev_open(&d);
	t_buf_alloc(&d, &res, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &tgt, 4096, T_ACCESS_ALL);

	for (unsigned int i = 0; i < 2; i++) {
		for (unsigned int off = 1; off < 8; off += 3) {
			t_log("%s at offset %u",
			      i ? "compare-swap" : "fetch-add", off);
			t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
			memset(tgt.p, 0x11, 64);
			t_post_atomic(p.a, 1, ops[i], res.mr, res.p,
				      (uintptr_t)tgt.p + 8 + off, tgt.mr->rkey,
				      0x1111111111111111ull, 5);
			T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_REM_INV_REQ_ERR,
				    T_ANY_OPCODE);
			for (int k = 0; k < 64; k++)
				T_EQ(tgt.p[k], 0x11);
			t_pair_destroy(&p);
		}
	}

	t_buf_free(&res);
	t_buf_free(&tgt);
	t_dev_close(&d);
	t_pass();
}
