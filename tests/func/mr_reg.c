/* SPDX-License-Identifier: MIT */
/*
 * Memory registration on every kind of memory an application has (heap,
 * stack, anonymous mmap, static data), at unaligned addresses and lengths;
 * the device reaches each one both ways.  Access flag and argument errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "t_util.h"

static uint8_t static_buf[20000];
static uint32_t seed = 100;

/* The device writes into [p, p+len) through mr's rkey, then reads from it
 * through its lkey, while the application watches its own memory. */
static void exercise(struct t_pair *pp, struct t_buf *peer, uint8_t *p,
		     size_t len, const char *what)
{
	struct ibv_mr *mr;

	t_log("%s: %zu bytes at %p", what, len, (void *)p);
	mr = T_NONNULL(ibv_reg_mr(pp->d->pd, p, len, T_ACCESS_ALL));
	T_PTR_EQ(mr->addr, p);
	T_EQ(mr->length, len);
	T_PTR_EQ(mr->pd, pp->d->pd);
	T_PTR_EQ(mr->context, pp->d->ctx);
	T_NE(mr->lkey, 0);

	/* Registration keeps what the application had written. */
	T_CHECK_FILL(p, len, seed);

	/* Remote write into it. */
	seed++;
	t_fill(peer->p, len, seed);
	t_post_send(pp->a, 1, IBV_WR_RDMA_WRITE, peer->mr, peer->p,
		    (uint32_t)len, IBV_SEND_SIGNALED, (uintptr_t)p, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(p, len, seed);

	/* The application writes, the device reads it out. */
	seed++;
	t_fill(p, len, seed);
	memset(peer->p, 0, len);
	t_post_send(pp->b, 2, IBV_WR_RDMA_WRITE, mr, p, (uint32_t)len,
		    IBV_SEND_SIGNALED, (uintptr_t)peer->p, peer->mr->rkey);
	T_EXPECT_WC(pp->cq_b, NULL, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(peer->p, len, seed);

	T_OK(ibv_dereg_mr(mr));
	/* Still the application's memory, content and all. */
	T_CHECK_FILL(p, len, seed);
	memset(p, 0x77, len);
	T_EQ(p[len - 1], 0x77);
}

static void flag_errors(struct t_dev *d, uint8_t *p)
{
	struct ibv_mr *mr;

	T_NULL_ERRNO(ibv_reg_mr(d->pd, p, 4096, IBV_ACCESS_REMOTE_WRITE),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_mr(d->pd, p, 4096, IBV_ACCESS_REMOTE_ATOMIC),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_mr(d->pd, p, 4096,
				IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_mr(d->pd, p, 4096,
				IBV_ACCESS_LOCAL_WRITE | (1 << 14)),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_mr(d->pd, p, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL);

	/* Read-only memory, and memory only the remote side reads. */
	mr = T_NONNULL(ibv_reg_mr(d->pd, p, 4096, 0));
	T_OK(ibv_dereg_mr(mr));
	mr = T_NONNULL(ibv_reg_mr(d->pd, p, 4096, IBV_ACCESS_REMOTE_READ));
	T_OK(ibv_dereg_mr(mr));
}

int main(void)
{
	uint8_t stack_buf[12000];
	struct t_buf peer;
	struct t_pair pp;
	struct t_dev d;
	uint8_t *heap, *anon;

	t_init("mr_reg");
	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, 1 << 20, T_ACCESS_ALL);

	heap = malloc(100000);
	T_ASSERT(heap != NULL);
	t_fill(heap + 13, 70001, seed);
	exercise(&pp, &peer, heap + 13, 70001, "heap");
	free(heap);

	t_fill(stack_buf + 7, 11000, seed);
	exercise(&pp, &peer, stack_buf + 7, 11000, "stack");

	anon = mmap(NULL, 3 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(anon != MAP_FAILED);
	t_fill(anon, 3 << 20, seed);
	exercise(&pp, &peer, anon, 1 << 20, "mmap, page aligned");
	t_fill(anon + 4095, 8194, seed);
	exercise(&pp, &peer, anon + 4095, 8194, "mmap, straddling pages");
	munmap(anon, 3 << 20);

	t_fill(static_buf + 1, sizeof(static_buf) - 2, seed);
	exercise(&pp, &peer, static_buf + 1, sizeof(static_buf) - 2,
		 "static array");

	flag_errors(&d, peer.p);

	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
