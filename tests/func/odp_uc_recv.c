/* SPDX-License-Identifier: MIT */
/*
 * UC into memory on demand, whose bytes only the owner's thread writes
 * (docs/trust.md): a receive completes only once its data is there.
 *   - a 100 B SEND, a 64 KiB SEND (16 packets) and a 32 KiB WRITE with
 *     immediate land intact, each visible when its CQE is polled, in
 *     order;
 *   - into a write-protected receive buffer, a SEND completes the receive
 *     with LOC_PROT_ERR, changes no byte, and the QP goes to the error
 *     state (as a copy the daemon refused would).
 */
#include <string.h>
#include <sys/mman.h>

#include "t_util.h"

#define LEN (256u * 1024)
#define SEED 11

int main(void)
{
	struct ibv_wc wc;
	struct ibv_mr *smr, *rmr;
	struct t_pair p;
	struct t_dev d;
	uint8_t *src, *dst, *want;

	t_init("odp_uc_recv");
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_UC, NULL, NULL);
	src = t_zalloc(LEN);
	want = t_zalloc(LEN);
	dst = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(dst != MAP_FAILED);
	t_fill(src, LEN, SEED);
	smr = ibv_reg_mr(d.pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	T_NONNULL(smr);
	rmr = ibv_reg_mr(d.pd, dst, LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_ON_DEMAND);
	T_NONNULL(rmr);

	t_post_recv(p.b, 1, rmr, dst, 4096);
	t_post_recv(p.b, 2, rmr, dst + 65536, 65536);
	t_post_recv(p.b, 3, rmr, dst + 131072, 4096);
	t_post_send(p.a, 11, IBV_WR_SEND, smr, src, 100, IBV_SEND_SIGNALED, 0,
		    0);
	t_post_send(p.a, 12, IBV_WR_SEND, smr, src + 4096, 65536,
		    IBV_SEND_SIGNALED, 0, 0);
	t_post_send(p.a, 13, IBV_WR_RDMA_WRITE_WITH_IMM, smr, src + 100000,
		    32768, IBV_SEND_SIGNALED, (uintptr_t)dst + 163840,
		    rmr->rkey);
	for (uint64_t id = 11; id <= 13; id++)
		T_EXPECT_WC(p.cq_a, &wc, id, IBV_WC_SUCCESS, T_ANY_OPCODE);

	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 100);
	T_MEMEQ(dst, src, 100);
	T_EXPECT_WC(p.cq_b, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 65536);
	T_MEMEQ(dst + 65536, src + 4096, 65536);
	T_EXPECT_WC(p.cq_b, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	T_EQ(wc.byte_len, 32768);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
	T_MEMEQ(dst + 163840, src + 100000, 32768);

	/* Write-protected: refused, nothing changed, the QP stops. */
	memcpy(want, dst, LEN);
	T_OK(mprotect(dst, LEN, PROT_READ));
	t_post_recv(p.b, 4, rmr, dst + 8192, 4096);
	t_post_send(p.a, 14, IBV_WR_SEND, smr, src + 200000, 100,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 14, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 4, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	T_MEMEQ(dst, want, LEN);
	T_EQ(t_qp_state(p.b), IBV_QPS_ERR);
	T_OK(mprotect(dst, LEN, PROT_READ | PROT_WRITE));

	T_OK(ibv_dereg_mr(rmr));
	T_OK(ibv_dereg_mr(smr));
	T_OK(munmap(dst, LEN));
	t_free(src, LEN);
	t_free(want, LEN);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
