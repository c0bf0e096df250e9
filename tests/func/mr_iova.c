/* SPDX-License-Identifier: MIT */
/*
 * ibv_reg_mr_iova2: the MR is addressed through its lkey and rkey at the
 * given iova, not at the application's virtual address (ibv_reg_mr(3):
 * "the virtual base address of the MR when accessed through a lkey or
 * rkey").
 */
#include <stdio.h>

#include "t_util.h"

#define LEN (64 * 1024)

static void check_iova(struct t_pair *pp, struct t_buf *peer, uint64_t iova)
{
	struct ibv_mr *mr;
	uint8_t *buf = t_zalloc(LEN);
	const uint32_t off = 1000, len = 20000;

	t_log("iova %#llx for %p", (unsigned long long)iova, (void *)buf);
	mr = T_NONNULL(
		ibv_reg_mr_iova2(pp->d->pd, buf, LEN, iova, T_ACCESS_ALL));
	T_PTR_EQ(mr->addr, buf);
	T_EQ(mr->length, LEN);

	/* The peer writes at iova + off: it lands at buf + off. */
	t_fill(peer->p, len, 1);
	t_post_send(pp->a, 1, IBV_WR_RDMA_WRITE, peer->mr, peer->p, len,
		    IBV_SEND_SIGNALED, iova + off, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(buf + off, len, 1);
	T_EQ(buf[off - 1], 0);
	T_EQ(buf[off + len], 0);

	/* The peer reads at iova. */
	t_fill(buf, LEN, 2);
	t_post_send(pp->a, 2, IBV_WR_RDMA_READ, peer->mr, peer->p, LEN,
		    IBV_SEND_SIGNALED, iova, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(peer->p, LEN, 2);

	/* A local SGE through the lkey is in iova space too. */
	memset(peer->p, 0, LEN);
	t_fill(buf, LEN, 3);
	t_post_send(pp->b, 3, IBV_WR_RDMA_WRITE, mr,
		    (void *)(uintptr_t)(iova + 512), 4096, IBV_SEND_SIGNALED,
		    (uintptr_t)peer->p, peer->mr->rkey);
	T_EXPECT_WC(pp->cq_b, NULL, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_MEMEQ(peer->p, buf + 512, 4096);

	/* Beyond the MR's iova range: refused. */
	t_post_send(pp->a, 4, IBV_WR_RDMA_WRITE, peer->mr, peer->p, 16,
		    IBV_SEND_SIGNALED, iova + LEN - 8, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, 4, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);

	T_OK(ibv_dereg_mr(mr));
	t_free(buf, LEN);
}

int main(void)
{
	struct t_buf peer;
	struct t_pair pp;
	struct t_dev d;

	t_init("mr_iova");
	t_dev_open(&d);
	t_buf_alloc(&d, &peer, LEN, T_ACCESS_ALL);

	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	check_iova(&pp, &peer, 0x100000000000ull);
	t_pair_destroy(&pp);

	/* hca_va 0 is zero based. */
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	check_iova(&pp, &peer, 0);
	t_pair_destroy(&pp);

	t_buf_free(&peer);
	t_dev_close(&d);
	t_pass();
}
