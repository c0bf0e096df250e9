/* SPDX-License-Identifier: MIT */
/*
 * Extended CQs: every wc_flags field rdma-core defines is accepted and
 * its accessor works after ibv_start_poll/ibv_next_poll; the CQE carries
 * the device clock, monotonic and between the raw clock values
 * ibv_query_rt_values_ex reads before posting and after polling; the
 * wall-clock timestamp is near CLOCK_REALTIME.  Misuse fails as mlx5
 * fails: EINVAL for masks, flags and domains, EOPNOTSUPP for unknown
 * completion fields.  The caps: hca_core_clock and the timestamp mask.
 */
#include <stdio.h>
#include <time.h>

#include "t_util.h"

#define ALL_WC_FLAGS                                                   \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_FLOW_TAG |              \
	 IBV_WC_EX_WITH_TM_INFO |                                      \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static struct ibv_cq_ex *cq_ex(struct t_dev *d, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 64, .wc_flags = wc_flags };

	return T_NONNULL(ibv_create_cq_ex(d->ctx, &a));
}

static uint64_t raw_clock(struct t_dev *d)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	T_OK(ibv_query_rt_values_ex(d->ctx, &v));
	T_EQ(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	T_EQ(v.raw_clock.tv_sec, 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

/* start_poll until a CQE is there (the CQ lock is then held). */
static void start(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr pa = { 0 };
	uint64_t end = t_now_ms() + T_WAIT_MS;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT) {
		if (t_now_ms() > end)
			T_FAIL("no completion within %d ms", T_WAIT_MS);
	}
	T_OK(ret);
}

static void next(struct ibv_cq_ex *cq)
{
	uint64_t end = t_now_ms() + T_WAIT_MS;
	int ret;

	while ((ret = ibv_next_poll(cq)) == ENOENT) {
		if (t_now_ms() > end)
			T_FAIL("no completion within %d ms", T_WAIT_MS);
	}
	T_OK(ret);
}

static void errors(struct t_dev *d)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 8 };
	struct ibv_device_attr_ex ax;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RESERVED };

	a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK << 1;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EOPNOTSUPP);
	a.wc_flags = 0;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD << 1;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EINVAL);
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN << 1;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EINVAL);
	/* A parent domain is needed; a plain PD or none is EINVAL. */
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	a.flags = 0;
	a.parent_domain = d->pd;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EINVAL);
	a.parent_domain = NULL;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EINVAL);
	a.comp_mask = 0;
	a.cqe = 0;
	T_NULL_ERRNO(ibv_create_cq_ex(d->ctx, &a), EINVAL);
	T_RET(ibv_query_rt_values_ex(d->ctx, &v), EINVAL);

	T_OK(ibv_query_device_ex(d->ctx, NULL, &ax));
	T_EQ(ax.hca_core_clock, 1000000); /* kHz: 1 GHz, one tick a ns */
	T_EQ(ax.completion_timestamp_mask, 0x7fffffffffffffffull);
}

int main(void)
{
	struct ibv_cq_ex *ca, *cb, *plain;
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct t_ep ea, eb;
	struct t_buf src, dst;
	struct ibv_qp *a, *b;
	struct ibv_wc_tm_info tm;
	struct timespec rt;
	uint64_t t0, t1, prev, ts, wall, now_wall;
	struct t_dev d;
	int i;

	t_init("cq_ex_timestamp");
	t_dev_open(&d);
	errors(&d);

	/* Every field at once is accepted. */
	ca = cq_ex(&d, ALL_WC_FLAGS);
	cb = cq_ex(&d, IBV_WC_STANDARD_FLAGS);
	t_qp_init_attr(&ia, IBV_QPT_RC, ibv_cq_ex_to_cq(ca),
		       ibv_cq_ex_to_cq(ca));
	a = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, ibv_cq_ex_to_cq(cb),
		       ibv_cq_ex_to_cq(cb));
	b = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	t_ep_local(&d, a, 0x100, &ea);
	t_ep_local(&d, b, 0x200, &eb);
	t_qp_connect(a, ea.psn, &eb, &o);
	t_qp_connect(b, eb.psn, &ea, &o);
	t_buf_alloc(&d, &src, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, 4096, T_ACCESS_ALL);

	/* A SEND with immediate from b lands on a: the receive CQE. */
	t_fill(src.p, 100, 7);
	t_post_recv(a, 11, dst.mr, dst.p, 4096);
	t0 = raw_clock(&d);
	t_post_send(b, 12, IBV_WR_SEND_WITH_IMM, src.mr, src.p, 100,
		    IBV_SEND_SIGNALED, 0, 0);
	start(ca);
	t1 = raw_clock(&d);
	clock_gettime(CLOCK_REALTIME, &rt);
	now_wall = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	T_EQ(ca->wr_id, 11);
	T_EQ(ca->status, IBV_WC_SUCCESS);
	T_EQ(ibv_wc_read_opcode(ca), IBV_WC_RECV);
	T_EQ(ibv_wc_read_byte_len(ca), 100);
	T_EQ(ibv_wc_read_imm_data(ca), htobe32(12));
	T_EQ(ibv_wc_read_qp_num(ca), a->qp_num);
	T_EQ(ibv_wc_read_src_qp(ca), b->qp_num);
	T_ASSERT(ibv_wc_read_wc_flags(ca) & IBV_WC_WITH_IMM);
	T_EQ(ibv_wc_read_slid(ca), 0);
	T_EQ(ibv_wc_read_sl(ca), 0);
	T_EQ(ibv_wc_read_dlid_path_bits(ca), 0);
	T_EQ(ibv_wc_read_cvlan(ca), 0);
	T_EQ(ibv_wc_read_flow_tag(ca), 0);
	memset(&tm, 0xff, sizeof(tm));
	ibv_wc_read_tm_info(ca, &tm);
	T_EQ(tm.tag, 0);
	T_EQ(tm.priv, 0);
	ts = ibv_wc_read_completion_ts(ca);
	T_GE(ts, t0);
	T_LE(ts, t1);
	wall = ibv_wc_read_completion_wallclock_ns(ca);
	T_LE(wall, now_wall + 1000000);	      /* not in the future */
	T_GE(wall + 1000000000ull, now_wall); /* nor a second old */
	ibv_end_poll(ca);
	T_CHECK_FILL(dst.p, 100, 7);
	T_EXPECT_WC(ibv_cq_ex_to_cq(cb), &(struct ibv_wc){ 0 }, 12,
		    IBV_WC_SUCCESS, IBV_WC_SEND);

	/* A burst of WRITEs: next_poll walks them, timestamps in order. */
	t0 = raw_clock(&d);
	for (i = 0; i < 16; i++)
		t_post_send(a, 100 + i, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
			    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	start(ca);
	prev = t0;
	for (i = 0; i < 16; i++) {
		if (i)
			next(ca);
		T_EQ(ca->wr_id, 100 + i);
		T_EQ(ca->status, IBV_WC_SUCCESS);
		T_EQ(ibv_wc_read_opcode(ca), IBV_WC_RDMA_WRITE);
		T_EQ(ibv_wc_read_qp_num(ca), a->qp_num);
		ts = ibv_wc_read_completion_ts(ca);
		T_GE(ts, prev);
		prev = ts;
	}
	T_EQ(ibv_next_poll(ca), ENOENT);
	ibv_end_poll(ca);
	T_LE(prev, raw_clock(&d));

	/* ibv_poll_cq works on an extended CQ too. */
	t_post_send(a, 200, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
		    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	T_EXPECT_WC(ibv_cq_ex_to_cq(ca), &(struct ibv_wc){ 0 }, 200,
		    IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* An empty extended CQ: ENOENT, and the lock is not held. */
	plain = cq_ex(&d, 0);
	for (i = 0; i < 100; i++)
		T_RET(ibv_start_poll(plain, &(struct ibv_poll_cq_attr){ 0 }),
		      ENOENT);
	T_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(plain)));

	t_buf_free(&src);
	t_buf_free(&dst);
	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(ca)));
	T_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cb)));
	t_dev_close(&d);
	t_pass();
}
