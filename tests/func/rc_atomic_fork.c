/* SPDX-License-Identifier: MIT */
/*
 * Two processes hammer one 64-bit counter with fetch-and-add: the parent
 * over a QP pair of its own, the child over its own context and QP.  The
 * final value is exact and every old value returned is unique: together
 * they are exactly 0 .. 2N-1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "t_util.h"

#define N 3000
#define DEPTH 16

/* N fetch-adds of 1 with up to DEPTH in flight; old values into out[]. */
static void hammer(struct ibv_qp *qp, struct ibv_cq *cq, struct t_buf *res,
		   uint64_t raddr, uint32_t rkey, uint64_t *out)
{
	uint64_t *slots = (uint64_t *)res->p;
	int posted = 0, done = 0;
	struct ibv_wc wc;

	while (done < N) {
		while (posted < N && posted - done < DEPTH) {
			t_post_atomic(qp, (uint64_t)posted,
				      IBV_WR_ATOMIC_FETCH_AND_ADD, res->mr,
				      slots + posted % DEPTH, raddr, rkey, 1,
				      0);
			posted++;
		}
		T_EXPECT_WC(cq, &wc, (uint64_t)done, IBV_WC_SUCCESS,
			    IBV_WC_FETCH_ADD);
		out[done] = slots[done % DEPTH];
		done++;
	}
}

static int child(int fd, void *arg)
{
	struct ibv_qp_init_attr ia;
	struct t_ep me, parent;
	struct t_buf res;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_dev d;
	uint64_t *out = calloc(N, sizeof(*out));

	T_ASSERT(out != NULL);
	t_dev_open(&d);
	cq = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_buf_alloc(&d, &res, 4096, T_ACCESS_ALL);
	t_ep_local(&d, qp, 0x777, &me);
	t_sock_recv(fd, &parent, sizeof(parent));
	t_sock_send(fd, &me, sizeof(me));
	t_qp_connect(qp, me.psn, &parent, NULL);
	t_sock_sync(fd);

	hammer(qp, cq, &res, parent.addr, parent.rkey, out);
	t_sock_send(fd, out, N * sizeof(*out));
	t_sock_sync(fd);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&res);
	t_dev_close(&d);
	free(out);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_ep me, peer;
	struct t_buf res, ctr;
	struct t_child c;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_pair p;
	struct t_dev d;
	uint64_t *all;
	int i;

	t_init("rc_atomic_fork");
	all = calloc(2 * N, sizeof(*all));
	T_ASSERT(all != NULL);
	t_fork(&c, child, NULL);

	t_dev_open(&d);
	t_buf_alloc(&d, &ctr, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &res, 4096, T_ACCESS_ALL);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	cq = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_ep_local(&d, qp, 0x555, &me);
	me.addr = (uintptr_t)ctr.p + 64;
	me.rkey = ctr.mr->rkey;
	t_sock_send(c.fd, &me, sizeof(me));
	t_sock_recv(c.fd, &peer, sizeof(peer));
	t_qp_connect(qp, me.psn, &peer, NULL);
	t_sock_sync(c.fd);

	hammer(p.a, p.cq_a, &res, (uintptr_t)ctr.p + 64, ctr.mr->rkey, all);
	t_sock_recv(c.fd, all + N, N * sizeof(*all));
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);

	T_EQ(*(volatile uint64_t *)(ctr.p + 64), 2 * N);
	qsort(all, 2 * N, sizeof(*all), cmp_u64);
	for (i = 0; i < 2 * N; i++)
		if (all[i] != (uint64_t)i)
			T_FAIL("old values returned are not 0..%d: position "
			       "%d holds %llu",
			       2 * N - 1, i, (unsigned long long)all[i]);

	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_pair_destroy(&p);
	t_buf_free(&ctr);
	t_buf_free(&res);
	t_dev_close(&d);
	free(all);
	t_pass();
}
