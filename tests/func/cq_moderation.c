/* SPDX-License-Identifier: MIT */
/*
 * CQ moderation (ibv_modify_cq, IBV_CQ_ATTR_MODERATE): with cq_count N
 * an armed CQ raises its completion event at the N-th CQE, not before;
 * with cq_period P it raises it P µs after the first CQE; without
 * moderation at the first CQE.  The CQEs themselves are never held.
 * Misuse: no attribute or an unknown one, a period beyond cq_mod_caps:
 * EINVAL.  The caps are ConnectX's: 65535 CQEs, 4095 µs.
 *
 * Built with SOFTRDMA_NO_INLINE_VERBS: the verbs <infiniband/verbs.h>
 * defines inline are called through the library's exported copies.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <stdio.h>

#include "t_util.h"

static struct t_dev d;
static struct t_buf src, dst;

static void write_one(struct ibv_qp *qp, uint64_t id)
{
	t_post_send(qp, id, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
		    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
}

static void take_event(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	T_OK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	T_PTR_EQ(ev_cq, cq);
	ibv_ack_cq_events(cq, 1);
}

static int moderate(struct ibv_cq *cq, uint32_t mask, uint16_t count,
		    uint16_t period)
{
	struct ibv_modify_cq_attr a = { .attr_mask = mask,
					.moderate = { count, period } };

	return ibv_modify_cq(cq, &a);
}

int main(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_comp_channel *ch;
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_cq *cq, *cqb;
	struct ibv_qp *a, *b;
	struct t_ep ea, eb;
	struct ibv_wc wc;
	uint64_t t0, t1;
	int i;

	t_init("cq_moderation");
	t_dev_open(&d);
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_EQ(ax.cq_mod_caps.max_cq_count, 65535);
	T_EQ(ax.cq_mod_caps.max_cq_period, 4095);

	ch = T_NONNULL(ibv_create_comp_channel(d.ctx));
	cq = t_cq_create(&d, 64, ch);
	cqb = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	a = t_qp_create(&d, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, cqb, cqb);
	b = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	t_ep_local(&d, a, 0x10, &ea);
	t_ep_local(&d, b, 0x20, &eb);
	t_qp_connect(a, ea.psn, &eb, &o);
	t_qp_connect(b, eb.psn, &ea, &o);
	t_buf_alloc(&d, &src, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, 4096, T_ACCESS_ALL);

	/* Misuse. */
	T_RET(moderate(cq, 0, 1, 0), EINVAL);
	T_RET(moderate(cq, IBV_CQ_ATTR_RESERVED, 1, 0), EINVAL);
	T_RET(moderate(cq, IBV_CQ_ATTR_MODERATE, 1, 4096), EINVAL);
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 65535, 4095));

	/* No moderation: the first CQE raises the event. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 0, 0));
	T_OK(ibv_req_notify_cq(cq, 0));
	write_one(a, 1);
	T_ASSERT(t_fd_readable(ch->fd, T_WAIT_MS));
	take_event(ch, cq);
	T_EXPECT_WC(cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* cq_count 4: three CQEs are there at once, the event waits for
	 * the fourth. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 4, 0));
	T_OK(ibv_req_notify_cq(cq, 0));
	for (i = 0; i < 3; i++) {
		write_one(a, 10 + i);
		T_EXPECT_WC(cq, &wc, 10 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	T_ASSERT(!t_fd_readable(ch->fd, T_QUIET_MS));
	write_one(a, 13);
	T_ASSERT(t_fd_readable(ch->fd, T_WAIT_MS));
	take_event(ch, cq);
	T_EXPECT_WC(cq, &wc, 13, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* cq_period 4000 µs with a count never reached: the event comes
	 * that long after the CQE, not at once. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 1000, 4000));
	T_OK(ibv_req_notify_cq(cq, 0));
	t0 = t_now_ms();
	write_one(a, 20);
	T_EXPECT_WC(cq, &wc, 20, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_ASSERT(t_fd_readable(ch->fd, T_WAIT_MS));
	t1 = t_now_ms();
	take_event(ch, cq);
	T_GE(t1 - t0, 3); /* ms, t_now_ms's granularity below 4 */
	T_LT(t1 - t0, 1000);

	/* Unarmed, nothing is counted: arming later starts afresh. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 2, 0));
	write_one(a, 30);
	T_EXPECT_WC(cq, &wc, 30, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* The daemon reads the arm word just after writing a CQE, so an arm
	 * set in that instant counts the CQE already polled.  A command is
	 * served only after that write is over: arm after one. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 2, 0));
	T_OK(ibv_req_notify_cq(cq, 0));
	write_one(a, 31);
	T_EXPECT_WC(cq, &wc, 31, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_ASSERT(!t_fd_readable(ch->fd, T_QUIET_MS));
	/* Turning moderation off raises what was held. */
	T_OK(moderate(cq, IBV_CQ_ATTR_MODERATE, 0, 0));
	T_ASSERT(t_fd_readable(ch->fd, T_WAIT_MS));
	take_event(ch, cq);

	t_buf_free(&src);
	t_buf_free(&dst);
	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(cq));
	T_OK(ibv_destroy_cq(cqb));
	T_OK(ibv_destroy_comp_channel(ch));
	t_dev_close(&d);
	t_pass();
}
