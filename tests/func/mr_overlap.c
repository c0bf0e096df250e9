/* SPDX-License-Identifier: MIT */
/*
 * Several MRs over the same pages: overlapping ranges, one inside another,
 * two on one page.  Deregistering one leaves the others working, and the
 * application's memory keeps its content and stays writable throughout.
 */
#include <stdio.h>

#include "t_util.h"

#define PG 4096

static void write_into(struct t_pair *pp, struct t_buf *src, uint8_t *dst,
		       uint32_t len, struct ibv_mr *mr, uint32_t seed)
{
	t_fill(src->p, len, seed);
	t_post_send(pp->a, seed, IBV_WR_RDMA_WRITE, src->mr, src->p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)dst, mr->rkey);
	T_EXPECT_WC(pp->cq_a, NULL, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(dst, len, seed);
}

/* The device reads [p, p+len) through mr's lkey: it sees what the
 * application last wrote there. */
static void read_out(struct t_pair *pp, struct t_buf *dst, uint8_t *p,
		     uint32_t len, struct ibv_mr *mr, uint32_t seed)
{
	t_fill(p, len, seed);
	memset(dst->p, 0, len);
	t_post_send(pp->b, seed, IBV_WR_RDMA_WRITE, mr, p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)dst->p, dst->mr->rkey);
	T_EXPECT_WC(pp->cq_b, NULL, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(dst->p, len, seed);
}

int main(void)
{
	struct ibv_mr *m1, *m2, *m3, *m4, *m5;
	struct t_buf peer;
	struct t_pair pp;
	struct t_dev d;
	uint8_t *buf;

	t_init("mr_overlap");
	t_dev_open(&d);
	t_pair_create(&d, &pp, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &peer, 16 * PG, T_ACCESS_ALL);
	buf = t_zalloc(16 * PG);
	t_fill(buf, 16 * PG, 1);

	/* m1 [0, 8 pages), m2 [4 pages + 100, 12 pages): partial overlap;
	 * m3 inside m1; m4 and m5 share page 13 without overlapping. */
	m1 = T_NONNULL(ibv_reg_mr(d.pd, buf, 8 * PG, T_ACCESS_ALL));
	m2 = T_NONNULL(ibv_reg_mr(d.pd, buf + 4 * PG + 100, 8 * PG - 100,
				  T_ACCESS_ALL));
	m3 = T_NONNULL(ibv_reg_mr(d.pd, buf + PG + 7, 2 * PG, T_ACCESS_ALL));
	m4 = T_NONNULL(ibv_reg_mr(d.pd, buf + 13 * PG, 1000, T_ACCESS_ALL));
	m5 = T_NONNULL(
		ibv_reg_mr(d.pd, buf + 13 * PG + 2000, 1000, T_ACCESS_ALL));
	T_CHECK_FILL(buf, 16 * PG, 1);
	T_NE(m1->rkey, m2->rkey);
	T_NE(m4->rkey, m5->rkey);

	write_into(&pp, &peer, buf + 5 * PG, 2 * PG, m1, 2);
	write_into(&pp, &peer, buf + 5 * PG + 10, 2 * PG, m2, 3);
	write_into(&pp, &peer, buf + 2 * PG, PG, m3, 4);
	write_into(&pp, &peer, buf + 13 * PG, 1000, m4, 5);
	write_into(&pp, &peer, buf + 13 * PG + 2000, 1000, m5, 6);
	T_CHECK_FILL(buf + 13 * PG, 1000, 5);

	/* Drop m1: m2 and m3 keep working on the shared pages. */
	T_OK(ibv_dereg_mr(m1));
	T_CHECK_FILL(buf + 2 * PG, PG, 4);
	write_into(&pp, &peer, buf + 4 * PG + 100, 4 * PG, m2, 7);
	read_out(&pp, &peer, buf + 6 * PG, 3 * PG, m2, 8);
	write_into(&pp, &peer, buf + PG + 7, 2 * PG, m3, 9);
	read_out(&pp, &peer, buf + PG + 7, 2 * PG, m3, 10);

	/* The page m1 alone covered is ordinary memory again. */
	buf[100] = 0xab;
	T_EQ(buf[100], 0xab);

	/* Drop m4: m5 on the same page still works. */
	T_OK(ibv_dereg_mr(m4));
	write_into(&pp, &peer, buf + 13 * PG + 2000, 1000, m5, 11);
	read_out(&pp, &peer, buf + 13 * PG + 2000, 1000, m5, 12);

	/* Register the whole range again over what remains. */
	m1 = T_NONNULL(ibv_reg_mr(d.pd, buf, 16 * PG, T_ACCESS_ALL));
	T_CHECK_FILL(buf + PG + 7, 2 * PG, 10);
	write_into(&pp, &peer, buf + 3 * PG, 10 * PG, m1, 13);
	read_out(&pp, &peer, buf, 16 * PG, m1, 14);

	T_OK(ibv_dereg_mr(m2));
	T_OK(ibv_dereg_mr(m3));
	T_OK(ibv_dereg_mr(m5));
	read_out(&pp, &peer, buf + 8 * PG, 8 * PG, m1, 15);
	T_OK(ibv_dereg_mr(m1));

	/* Everything deregistered: the memory holds the last content. */
	T_CHECK_FILL(buf + 8 * PG, 8 * PG, 15);
	t_fill(buf, 16 * PG, 16);
	T_CHECK_FILL(buf, 16 * PG, 16);

	t_free(buf, 16 * PG);
	t_buf_free(&peer);
	t_pair_destroy(&pp);
	t_dev_close(&d);
	t_pass();
}
