/* SPDX-License-Identifier: MIT */
/*
 * Large messages: 1 MiB (and 8 MiB) SEND, WRITE and READ at the smallest
 * path MTU (256 bytes: thousands of packets each), byte for byte.
 */
#include <stdio.h>

#include "t_util.h"

#define BIG (8u << 20)

static void run(struct t_dev *d, enum ibv_mtu mtu, uint32_t len,
		struct t_buf *s, struct t_buf *r)
{
	struct t_conn_opts o;
	struct ibv_wc wc;
	struct t_pair p;

	t_log("%u bytes at path MTU %u", len, 128u << mtu);
	t_conn_opts_init(&o);
	o.mtu = mtu;
	t_pair_create(d, &p, IBV_QPT_RC, NULL, &o);

	t_fill(s->p, len, len + 1);
	memset(r->p, 0, len + 1);
	t_post_recv(p.b, 1, r->mr, r->p, len + 1);
	t_post_send(p.a, 2, IBV_WR_SEND, s->mr, s->p, len, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(r->p, len, len + 1);

	t_fill(s->p, len, len + 2);
	t_post_send(p.a, 3, IBV_WR_RDMA_WRITE, s->mr, s->p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)r->p, r->mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(r->p, len, len + 2);

	t_fill(r->p, len, len + 3);
	t_post_send(p.a, 4, IBV_WR_RDMA_READ, s->mr, s->p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)r->p, r->mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(s->p, len, len + 3);
	t_pair_destroy(&p);
}

int main(void)
{
	struct t_buf s, r;
	struct t_dev d;

	t_init("rc_large");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, BIG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, BIG + 4096, T_ACCESS_ALL);
	run(&d, IBV_MTU_256, 1u << 20, &s, &r);
	run(&d, IBV_MTU_1024, (1u << 20) + 3, &s, &r);
	run(&d, d.port.active_mtu, BIG, &s, &r);
	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	t_pass();
}
