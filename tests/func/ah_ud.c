/* SPDX-License-Identifier: MIT */
/*
 * Address handles: create/destroy (RoCE needs a global AH with a valid
 * GID index); a UD request, then a reply addressed with
 * ibv_init_ah_from_wc / ibv_create_ah_from_wc from the received GRH.
 */
#include <stdio.h>

#include "t_util.h"

#define GRH 40
#define LEN 100

int main(void)
{
	struct ibv_ah_attr aa, from;
	struct t_buf sa, ra, sb, rb;
	struct ibv_ah *ah, *reply;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	int i;

	t_init("ah_ud");
	t_dev_open(&d);

	t_ah_attr_init(&aa, &d.gid);
	ah = T_NONNULL(ibv_create_ah(d.pd, &aa));
	T_PTR_EQ(ah->pd, d.pd);
	T_PTR_EQ(ah->context, d.ctx);
	T_OK(ibv_destroy_ah(ah));
	aa.grh.sgid_index = 200;
	T_NULL_ERRNO(ibv_create_ah(d.pd, &aa), EINVAL);
	t_ah_attr_init(&aa, &d.gid);
	aa.is_global = 0;
	T_NULL_ERRNO(ibv_create_ah(d.pd, &aa), EINVAL);
	t_ah_attr_init(&aa, &d.gid);
	aa.port_num = 2;
	T_NULL_ERRNO(ibv_create_ah(d.pd, &aa), EINVAL);

	t_pair_create(&d, &p, IBV_QPT_UD, NULL, NULL);
	t_buf_alloc(&d, &sa, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &ra, GRH + LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &sb, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &rb, GRH + LEN, T_ACCESS_ALL);

	for (i = 0; i < 3; i++) {
		/* a -> b */
		t_post_recv(p.b, 10 + i, rb.mr, rb.p, GRH + LEN);
		t_post_recv(p.a, 20 + i, ra.mr, ra.p, GRH + LEN);
		t_fill(sa.p, LEN, 30 + i);
		t_post_ud(p.a, 30 + i, p.ah_a, p.b->qp_num, p.qkey, sa.mr, sa.p,
			  LEN, IBV_SEND_SIGNALED);
		T_EXPECT_WC(p.cq_a, &wc, 30 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, 10 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.src_qp, p.a->qp_num);
		T_ASSERT(wc.wc_flags & IBV_WC_GRH);
		T_CHECK_FILL(rb.p + GRH, LEN, 30 + i);

		/* b answers the sender the GRH names. */
		memset(&from, 0xee, sizeof(from));
		T_EQ(ibv_init_ah_from_wc(d.ctx, T_PORT, &wc,
					 (struct ibv_grh *)rb.p, &from),
		     0);
		T_EQ(from.is_global, 1);
		T_MEMEQ(from.grh.dgid.raw, d.gid.raw, 16);
		T_EQ(from.grh.sgid_index, T_GID_INDEX);
		T_EQ(from.port_num, T_PORT);
		reply = T_NONNULL(ibv_create_ah_from_wc(
			d.pd, &wc, (struct ibv_grh *)rb.p, T_PORT));
		t_fill(sb.p, LEN, 40 + i);
		t_post_ud(p.b, 40 + i, reply, wc.src_qp, p.qkey, sb.mr, sb.p,
			  LEN, IBV_SEND_SIGNALED);
		T_EXPECT_WC(p.cq_b, &wc, 40 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_a, &wc, 20 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.src_qp, p.b->qp_num);
		T_EQ(wc.byte_len, GRH + LEN);
		T_CHECK_FILL(ra.p + GRH, LEN, 40 + i);
		T_OK(ibv_destroy_ah(reply));
	}

	t_buf_free(&sa);
	t_buf_free(&ra);
	t_buf_free(&sb);
	t_buf_free(&rb);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
