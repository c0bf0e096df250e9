/* SPDX-License-Identifier: MIT */
/*
 * fork() with registered memory: parent and child each keep their own
 * copy (no sharing either way), the child can use the device on its own,
 * and the parent's MR keeps working once the child is gone.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN (3 * 4096 + 123)

static uint8_t *buf;

/* The child scribbles on its copy, then registers it and moves data with
 * its own context. */
static int child_writes(int fd, void *arg)
{
	struct t_buf peer;
	struct t_pair pp;
	struct ibv_mr *mr;
	struct t_dev d;

	T_CHECK_FILL(buf, LEN, 1);
	t_fill(buf, LEN, 2);
	T_CHECK_FILL(buf, LEN, 2);
	t_sock_sync(fd); /* parent checks its copy now */
	t_sock_sync(fd);

	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, LEN, T_ACCESS_ALL);
	mr = T_NONNULL(ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL));
	t_fill(peer.p, LEN, 5);
	t_post_send(pp.a, 5, IBV_WR_RDMA_WRITE, peer.mr, peer.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(buf, LEN, 5);
	T_OK(ibv_dereg_mr(mr));
	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_sock_sync(fd);
	return 0;
}

/* The child's copy does not see what the parent writes after the fork. */
static int child_reads(int fd, void *arg)
{
	uint8_t up = 1;

	t_sock_send(fd, &up, 1); /* fork is over for this side */
	t_sock_sync(fd);	 /* parent has written */
	T_CHECK_FILL(buf, LEN, 1);
	return 0;
}

int main(void)
{
	struct t_child c;
	struct t_buf peer;
	struct t_pair pp;
	struct ibv_mr *mr;
	struct t_dev d;

	t_init("mr_fork");
	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, LEN, T_ACCESS_ALL);
	buf = t_zalloc(LEN);
	t_fill(buf, LEN, 1);
	mr = T_NONNULL(ibv_reg_mr(d.pd, buf, LEN, T_ACCESS_ALL));

	/* Child writes: the parent's memory is unchanged. */
	t_fork(&c, child_writes, NULL);
	t_sock_sync(c.fd);
	T_CHECK_FILL(buf, LEN, 1);
	t_sock_sync(c.fd);
	/* While the child uses its own MR on its copy, the parent's MR on
	 * the same addresses stays the parent's. */
	t_fill(peer.p, LEN, 4);
	t_post_send(pp.a, 4, IBV_WR_RDMA_WRITE, peer.mr, peer.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	T_CHECK_FILL(buf, LEN, 4);

	/* Parent writes after the fork: the child's copy is unchanged. */
	t_fill(buf, LEN, 1);
	t_fork(&c, child_reads, NULL);
	/* Keep writing until the child is past fork(): whatever the child
	 * does to get its copy, it must be what was there at fork time. */
	do {
		t_fill(buf, LEN, 3);
	} while (!t_fd_readable(c.fd, 0));
	{
		uint8_t up;

		t_sock_recv(c.fd, &up, 1);
	}
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	T_CHECK_FILL(buf, LEN, 3);

	/* With the child gone, the parent's MR still works both ways. */
	t_fill(peer.p, LEN, 6);
	t_post_send(pp.a, 6, IBV_WR_RDMA_WRITE, peer.mr, peer.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 6, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(buf, LEN, 6);
	t_fill(buf, LEN, 7);
	t_post_send(pp.a, 7, IBV_WR_RDMA_READ, peer.mr, peer.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)buf, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 7, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(peer.p, LEN, 7);

	T_OK(ibv_dereg_mr(mr));
	T_CHECK_FILL(buf, LEN, 7);
	t_free(buf, LEN);
	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
