/* SPDX-License-Identifier: MIT */
/*
 * Memory reached in place (no move guard: every MR is a pvm MR) with a
 * page unmapped after registration.  The device reaches such memory with
 * one system call per copy, which stops at the hole: a WRITE before the
 * hole lands intact, a READ of it comes back intact, a WRITE across the
 * hole completes with IBV_WC_REM_ACCESS_ERR and leaves the page behind
 * the hole untouched, and a SEND whose receive buffer crosses the hole
 * fails the receive with IBV_WC_LOC_PROT_ERR.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "t_util.h"

#define PG 4096
#define OLD 0x11

static struct t_dev d;

/* Four pages, registered, the second one unmapped afterwards. */
static uint8_t *holed_mr(struct ibv_mr **mr)
{
	uint8_t *p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED);
	memset(p, OLD, 4 * PG);
	*mr = T_NONNULL(ibv_reg_mr(d.pd, p, 4 * PG, T_ACCESS_ALL));
	T_OK(munmap(p + PG, PG));
	return p;
}

static void untouched(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != OLD)
			T_FAIL("byte %zu behind the hole is %#x", i, p[i]);
}

int main(void)
{
	struct t_pair w, r, s;
	struct t_buf src, loc;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint8_t *p;

	/* Nothing moved, whatever the machine allows. */
	setenv("SOFTRDMA_MOVE_GUARD", "none", 1);
	t_init("mr_pvm_hole");
	t_dev_open(&d);
	t_pair_create(&d, &w, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &src, 4 * PG, T_ACCESS_ALL);
	t_buf_alloc(&d, &loc, 4 * PG, T_ACCESS_ALL);
	p = holed_mr(&mr);

	/* Before the hole: lands, and reads back. */
	t_fill(src.p, PG, 1);
	t_post_send(w.a, 1, IBV_WR_RDMA_WRITE, src.mr, src.p, PG,
		    IBV_SEND_SIGNALED, (uintptr_t)p, mr->rkey);
	T_EXPECT_WC(w.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(p, PG, 1);
	t_post_send(w.a, 2, IBV_WR_RDMA_READ, loc.mr, loc.p, PG,
		    IBV_SEND_SIGNALED, (uintptr_t)p, mr->rkey);
	T_EXPECT_WC(w.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(loc.p, PG, 1);

	/* Across it: a remote access error, nothing behind it written. */
	t_fill(src.p, 3 * PG, 2);
	t_post_send(w.a, 3, IBV_WR_RDMA_WRITE, src.mr, src.p, 3 * PG,
		    IBV_SEND_SIGNALED, (uintptr_t)p, mr->rkey);
	T_EXPECT_WC(w.cq_a, &wc, 3, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	untouched(p + 2 * PG, 2 * PG);
	t_pair_destroy(&w);

	/* Behind it, on a fresh pair: the MR still works there. */
	t_pair_create(&d, &r, IBV_QPT_RC, NULL, NULL);
	t_fill(src.p, PG, 3);
	t_post_send(r.a, 4, IBV_WR_RDMA_WRITE, src.mr, src.p, PG,
		    IBV_SEND_SIGNALED, (uintptr_t)p + 3 * PG, mr->rkey);
	T_EXPECT_WC(r.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(p + 3 * PG, PG, 3);
	t_pair_destroy(&r);

	/* A receive buffer across the hole: the receive fails locally. */
	t_pair_create(&d, &s, IBV_QPT_RC, NULL, NULL);
	t_post_recv(s.b, 5, mr, p + 2 * PG - 8, 16);
	t_fill(src.p, 16, 4);
	t_post_send(s.a, 6, IBV_WR_SEND, src.mr, src.p, 16, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(s.cq_b, &wc, 5, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	t_pair_destroy(&s);

	T_OK(ibv_dereg_mr(mr));
	munmap(p, PG);
	munmap(p + 2 * PG, 2 * PG);
	t_buf_free(&src);
	t_buf_free(&loc);
	t_dev_close(&d);
	return T_EXIT_PASS;
}
