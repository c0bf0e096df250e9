/* SPDX-License-Identifier: MIT */
/*
 * No RLIMIT_MEMLOCK failures: with the limit at 0, registering 64 MiB
 * works, and the device reaches both ends of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "t_util.h"

#define BIG (64u << 20)
#define CHUNK (1u << 20)

/* Root has CAP_IPC_LOCK, which ignores the limit: drop it so the limit
 * binds as it does for an ordinary user. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3,
						0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return;
	data[0].effective &= ~(1u << CAP_IPC_LOCK);
	data[0].permitted &= ~(1u << CAP_IPC_LOCK);
	data[0].inheritable &= ~(1u << CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, data))
		t_log("capset: %s", strerror(errno));
}

int main(void)
{
	struct rlimit rl = { 0, 0 };
	struct t_buf peer;
	struct t_pair pp;
	struct ibv_mr *mr;
	struct t_dev d;
	uint8_t *big;

	t_init("mr_memlock");
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit(RLIMIT_MEMLOCK, 0): %s", strerror(errno));
	drop_ipc_lock();
	{
		static char page[4096] __attribute__((aligned(4096)));

		/* The limit is in force: mlock of one page fails. */
		if (mlock(page, sizeof(page)) == 0) {
			t_log("mlock still allowed: the limit does not bind");
			munlock(page, sizeof(page));
		}
	}
	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, CHUNK, T_ACCESS_ALL);

	big = malloc(BIG);
	T_ASSERT(big != NULL);
	t_fill(big + BIG - CHUNK, CHUNK, 1);
	mr = T_NONNULL(ibv_reg_mr(d.pd, big, BIG, T_ACCESS_ALL));
	T_EQ(mr->length, BIG);
	T_CHECK_FILL(big + BIG - CHUNK, CHUNK, 1);

	/* The last MiB out, the first MiB in. */
	t_post_send(pp.a, 1, IBV_WR_RDMA_READ, peer.mr, peer.p, CHUNK,
		    IBV_SEND_SIGNALED, (uintptr_t)big + BIG - CHUNK, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(peer.p, CHUNK, 1);
	t_fill(peer.p, CHUNK, 2);
	t_post_send(pp.a, 2, IBV_WR_RDMA_WRITE, peer.mr, peer.p, CHUNK,
		    IBV_SEND_SIGNALED, (uintptr_t)big, mr->rkey);
	T_EXPECT_WC(pp.cq_a, NULL, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(big, CHUNK, 2);

	T_OK(ibv_dereg_mr(mr));
	T_CHECK_FILL(big, CHUNK, 2);
	free(big);
	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
