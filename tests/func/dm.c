/* SPDX-License-Identifier: MIT */
/*
 * Device memory: ibv_alloc_dm / ibv_free_dm, ibv_memcpy_{to,from}_dm,
 * ibv_reg_dm_mr (zero based), DM as a local SGE and as the target of
 * remote WRITE, READ and atomics, max_dm_size, and the errors: too large
 * or zero (EINVAL), the device's memory used up (ENOMEM), copies outside
 * the DM (EFAULT) or not in 4-byte words (EINVAL), an MR without
 * IBV_ACCESS_ZERO_BASED or beyond the DM (EINVAL), freeing a DM with an
 * MR on it (EBUSY), re-registering a DM MR (EINVAL).  A client that dies
 * gives its device memory back.
 *
 * Built with SOFTRDMA_NO_INLINE_VERBS: every verb here, inline in
 * <infiniband/verbs.h>, is called through the library's exported copy.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <stdio.h>
#include <unistd.h>

#include "t_util.h"

#define DM_LEN 8192

static struct ibv_dm *dm_alloc(struct t_dev *d, size_t len)
{
	struct ibv_alloc_dm_attr a = { .length = len };

	return ibv_alloc_dm(d->ctx, &a);
}

static void alloc_errors(struct t_dev *d, uint64_t max)
{
	struct ibv_alloc_dm_attr a = { .length = 64, .comp_mask = 1 };
	struct ibv_dm *all, *dm;

	T_NULL_ERRNO(ibv_alloc_dm(d->ctx, &a), EINVAL);
	T_NULL_ERRNO(dm_alloc(d, 0), EINVAL);
	T_NULL_ERRNO(dm_alloc(d, max + 1), EINVAL);
	/* All of it, then nothing is left; freeing gives it back. */
	all = T_NONNULL(dm_alloc(d, max));
	T_NULL_ERRNO(dm_alloc(d, 64), ENOMEM);
	T_OK(ibv_free_dm(all));
	dm = T_NONNULL(dm_alloc(d, max - 64));
	all = T_NONNULL(dm_alloc(d, 1)); /* one 64-byte granule */
	T_NULL_ERRNO(dm_alloc(d, 1), ENOMEM);
	T_OK(ibv_free_dm(all));
	T_OK(ibv_free_dm(dm));
}

/* Holds all of the device's memory, with an MR on it, and dies. */
static int child_hog(int fd, void *arg)
{
	uint64_t max = *(uint64_t *)arg;
	struct ibv_dm *dm;
	struct t_dev d;
	char c = 0;

	t_dev_open(&d);
	dm = T_NONNULL(dm_alloc(&d, max));
	T_NONNULL(
		ibv_reg_dm_mr(d.pd, dm, 0, max,
			      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE));
	t_sock_send(fd, &c, 1);
	t_sock_recv(fd, &c, 1);
	/* Dies holding it all: nothing is given back by the client. */
	_exit(0);
}

/* A client that dies gives its device memory back. */
static void dying_client(struct t_dev *d, uint64_t max)
{
	uint64_t until;
	struct t_child ch;
	struct ibv_dm *dm;
	char c = 0;

	t_fork(&ch, child_hog, &max);
	t_sock_recv(ch.fd, &c, 1);
	T_NULL_ERRNO(dm_alloc(d, 64), ENOMEM);
	t_sock_send(ch.fd, &c, 1);
	T_EQ(t_child_wait(&ch, T_WAIT_MS), 0);
	until = t_now_ms() + T_WAIT_MS;
	while (!(dm = dm_alloc(d, max)) && errno == ENOMEM &&
	       t_now_ms() < until)
		t_sleep_ms(10);
	T_ASSERT(dm);
	T_OK(ibv_free_dm(dm));
}

int main(void)
{
	const unsigned int acc =
		IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t host[DM_LEN], back[DM_LEN];
	struct ibv_device_attr_ex ax;
	struct t_buf src, dst;
	struct ibv_mr *mr, *mr2;
	struct ibv_dm *dm;
	struct t_pair p;
	struct ibv_wc wc;
	uint64_t v;
	struct t_dev d;

	/* The whole device in one client: past a user's share. */
	t_config("limit client dm_bytes unlimited\n"
		 "limit user dm_bytes unlimited\n");
	t_init("dm");
	t_dev_open(&d);
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_EQ(ax.max_dm_size, 256 * 1024);
	alloc_errors(&d, ax.max_dm_size);
	dying_client(&d, ax.max_dm_size);

	dm = T_NONNULL(dm_alloc(&d, DM_LEN));
	T_PTR_EQ(dm->context, d.ctx);
	T_ASSERT(dm->comp_mask & IBV_DM_MASK_HANDLE);

	/* Copies: round trip, range and word checks. */
	t_fill(host, DM_LEN, 1);
	T_OK(ibv_memcpy_to_dm(dm, 0, host, DM_LEN));
	memset(back, 0, sizeof(back));
	T_OK(ibv_memcpy_from_dm(back, dm, 0, DM_LEN));
	T_CHECK_FILL(back, DM_LEN, 1);
	T_RET(ibv_memcpy_to_dm(dm, DM_LEN - 4, host, 8), EFAULT);
	T_RET(ibv_memcpy_from_dm(back, dm, DM_LEN + 4, 4), EFAULT);
	T_RET(ibv_memcpy_to_dm(dm, 2, host, 4), EINVAL);
	T_RET(ibv_memcpy_from_dm(back, dm, 0, 6), EINVAL);
	T_OK(ibv_memcpy_from_dm(back, dm, DM_LEN, 0));

	/* MRs over it. */
	T_NULL_ERRNO(ibv_reg_dm_mr(d.pd, dm, 0, DM_LEN,
				   acc & ~IBV_ACCESS_ZERO_BASED),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_dm_mr(d.pd, dm, 4096, DM_LEN - 4095, acc), EINVAL);
	T_NULL_ERRNO(ibv_reg_dm_mr(d.pd, dm, DM_LEN + 64, 64, acc), EINVAL);
	T_NULL_ERRNO(ibv_reg_dm_mr(d.pd, dm, 0, DM_LEN,
				   IBV_ACCESS_ZERO_BASED |
					   IBV_ACCESS_REMOTE_WRITE),
		     EINVAL);
	mr = T_NONNULL(ibv_reg_dm_mr(d.pd, dm, 0, DM_LEN, acc));
	T_PTR_EQ(mr->addr, NULL);
	T_EQ(mr->length, DM_LEN);
	/* Half of it, at an offset: its address 0 is the DM's 4096. */
	mr2 = T_NONNULL(ibv_reg_dm_mr(d.pd, dm, 4096, 4096, acc));
	T_RET(ibv_free_dm(dm), EBUSY);
	/* As uverbs: an MR over device memory is not re-registered. */
	errno = 0;
	T_EQ(ibv_rereg_mr(mr2, IBV_REREG_MR_CHANGE_PD, d.pd, NULL, 0, 0),
	     IBV_REREG_MR_ERR_CMD);
	T_EQ(errno, EINVAL);

	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &src, DM_LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, DM_LEN, T_ACCESS_ALL);

	/* Remote WRITE into the DM (address = offset in the MR). */
	t_fill(src.p, 3000, 2);
	t_post_send(p.a, 1, IBV_WR_RDMA_WRITE, src.mr, src.p, 3000,
		    IBV_SEND_SIGNALED, 512, mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_OK(ibv_memcpy_from_dm(back, dm, 512, 3000));
	T_CHECK_FILL(back, 3000, 2);
	/* Through the offset MR: its 0 is the DM's 4096. */
	t_post_send(p.a, 2, IBV_WR_RDMA_WRITE, src.mr, src.p, 1000,
		    IBV_SEND_SIGNALED, 0, mr2->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_OK(ibv_memcpy_from_dm(back, dm, 4096, 1000));
	T_CHECK_FILL(back, 1000, 2);
	/* Beyond the MR: a remote access error. */
	t_post_send(p.a, 3, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
		    IBV_SEND_SIGNALED, 4096 - 32, mr2->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	t_pair_destroy(&p);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);

	/* Remote READ out of it. */
	t_fill(host, 2048, 3);
	T_OK(ibv_memcpy_to_dm(dm, 1024, host, 2048));
	t_post_send(p.a, 4, IBV_WR_RDMA_READ, dst.mr, dst.p, 2048,
		    IBV_SEND_SIGNALED, 1024, mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(dst.p, 2048, 3);

	/* Atomics on a word of it. */
	v = 40;
	T_OK(ibv_memcpy_to_dm(dm, 64, &v, 8));
	t_post_atomic(p.a, 5, IBV_WR_ATOMIC_FETCH_AND_ADD, dst.mr, dst.p, 64,
		      mr->rkey, 2, 0);
	T_EXPECT_WC(p.cq_a, &wc, 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	memcpy(&v, dst.p, 8);
	T_EQ(v, 40);
	t_post_atomic(p.a, 6, IBV_WR_ATOMIC_CMP_AND_SWP, dst.mr, dst.p, 64,
		      mr->rkey, 42, 7);
	T_EXPECT_WC(p.cq_a, &wc, 6, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	memcpy(&v, dst.p, 8);
	T_EQ(v, 42);
	T_OK(ibv_memcpy_from_dm(&v, dm, 64, 8));
	T_EQ(v, 7);

	/* The DM as a local SGE: a SEND out of it, a receive into it. */
	t_fill(host, 1500, 4);
	T_OK(ibv_memcpy_to_dm(dm, 2048, host, 1500));
	t_post_recv(p.b, 7, dst.mr, dst.p, DM_LEN);
	t_post_send(p.a, 8, IBV_WR_SEND, mr, (void *)(uintptr_t)2048, 1500,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 8, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 7, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 1500);
	T_CHECK_FILL(dst.p, 1500, 4);
	t_fill(src.p, 700, 5);
	t_post_recv(p.b, 9, mr2, (void *)(uintptr_t)100, 1000);
	t_post_send(p.a, 10, IBV_WR_SEND, src.mr, src.p, 700, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(p.cq_b, &wc, 9, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_OK(ibv_memcpy_from_dm(back, dm, 4096 + 100, 700));
	T_CHECK_FILL(back, 700, 5);

	t_pair_destroy(&p);
	t_buf_free(&src);
	t_buf_free(&dst);
	/* Not while an MR is on it; then it goes. */
	T_OK(ibv_dereg_mr(mr));
	T_RET(ibv_free_dm(dm), EBUSY);
	T_OK(ibv_dereg_mr(mr2));
	T_OK(ibv_free_dm(dm));
	t_dev_close(&d);
	t_pass();
}
