/* SPDX-License-Identifier: MIT */
/*
 * What the device reports is what the daemon does (docs/caps.md): each
 * limit of ibv_query_device and ibv_query_port is accepted and one past
 * it refused, and the flags hold: BAD_PKEY_CNTR (unit.engine_pkey),
 * BAD_QKEY_CNTR (UD datagrams with a
 * wrong Q_Key count in the port's qkey_viol_cntr), UD_AV_PORT_ENFORCE
 * (an AH for another port is EINVAL), no SRQ_RESIZE (IBV_SRQ_MAX_WR is
 * EINVAL).
 */
#include <arpa/inet.h>
#include <unistd.h>

#include "t_util.h"

#define BAD_QKEYS 3

static struct t_dev d;

static uint32_t qkey_viol(void)
{
	struct ibv_port_attr pa;

	T_OK(ibv_query_port(d.ctx, T_PORT, &pa));
	return pa.qkey_viol_cntr;
}

static void qkey_counter(void)
{
	struct t_pair p;
	struct t_buf s, r;
	struct ibv_wc wc;
	uint32_t before;
	uint64_t end;

	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_BAD_QKEY_CNTR);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_BAD_PKEY_CNTR);
	t_pair_create(&d, &p, IBV_QPT_UD, NULL, NULL);
	t_buf_alloc(&d, &s, 64, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 64 + 40, T_ACCESS_ALL);
	before = qkey_viol();
	t_post_recv(p.b, 1, r.mr, r.p, 64 + 40);
	for (int i = 0; i < BAD_QKEYS; i++) {
		t_post_ud(p.a, 10 + (uint64_t)i, p.ah_a, p.b->qp_num,
			  p.qkey ^ 0x100, s.mr, s.p, 32, IBV_SEND_SIGNALED);
		T_EXPECT_WC(p.cq_a, &wc, 10 + (uint64_t)i, IBV_WC_SUCCESS,
			    IBV_WC_SEND);
	}
	/* The right Q_Key gets through: the bad ones were judged by then. */
	t_post_ud(p.a, 20, p.ah_a, p.b->qp_num, p.qkey, s.mr, s.p, 32,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 20, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	end = t_now_ms() + 2000;
	while (qkey_viol() < before + BAD_QKEYS && t_now_ms() < end)
		usleep(10000);
	T_EQ(qkey_viol(), before + BAD_QKEYS);
	/* The QPs go; the port's count stays. */
	t_pair_destroy(&p);
	T_EQ(qkey_viol(), before + BAD_QKEYS);
	t_buf_free(&s);
	t_buf_free(&r);
}

static void ah_port(void)
{
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;

	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_UD_AV_PORT_ENFORCE);
	t_ah_attr_init(&aa, &d.gid);
	ah = T_NONNULL(ibv_create_ah(d.pd, &aa));
	T_OK(ibv_destroy_ah(ah));
	aa.port_num = d.attr.phys_port_cnt + 1;
	T_NULL_ERRNO(ibv_create_ah(d.pd, &aa), EINVAL);
}

static void srq_limits(void)
{
	struct ibv_srq_init_attr sa = { 0 };
	struct ibv_srq_attr ma = { 0 };
	struct ibv_srq *srq;

	T_ASSERT(!(d.attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE));
	sa.attr.max_wr = (uint32_t)d.attr.max_srq_wr;
	sa.attr.max_sge = (uint32_t)d.attr.max_srq_sge;
	srq = T_NONNULL(ibv_create_srq(d.pd, &sa));
	T_GE(sa.attr.max_wr, (uint32_t)d.attr.max_srq_wr);
	T_GE(sa.attr.max_sge, (uint32_t)d.attr.max_srq_sge);
	ma.max_wr = 16;
	T_RET(ibv_modify_srq(srq, &ma, IBV_SRQ_MAX_WR), EINVAL);
	T_OK(ibv_destroy_srq(srq));
	sa.attr.max_wr = (uint32_t)d.attr.max_srq_wr + 1;
	sa.attr.max_sge = 1;
	T_NULL_ERRNO(ibv_create_srq(d.pd, &sa), EINVAL);
	sa.attr.max_wr = 1;
	sa.attr.max_sge = (uint32_t)d.attr.max_srq_sge + 1;
	T_NULL_ERRNO(ibv_create_srq(d.pd, &sa), EINVAL);
}

/* RTR with max_dest_rd_atomic n, RTS with max_rd_atomic n. */
static void rd_atomic(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	struct t_ep ep;
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		  IBV_QP_MIN_RNR_TIMER;
	int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_qp_to_init(qp, NULL);
	t_ep_local(&d, qp, 0, &ep);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = ep.qpn;
	t_ah_attr_init(&a.ah_attr, &ep.gid);
	a.min_rnr_timer = 1;
	a.max_dest_rd_atomic = (uint8_t)(d.attr.max_qp_rd_atom + 1);
	T_RET(ibv_modify_qp(qp, &a, rtr), EINVAL);
	a.max_dest_rd_atomic = (uint8_t)d.attr.max_qp_rd_atom;
	T_OK(ibv_modify_qp(qp, &a, rtr));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = (uint8_t)(d.attr.max_qp_init_rd_atom + 1);
	T_RET(ibv_modify_qp(qp, &a, rts), EINVAL);
	a.max_rd_atomic = (uint8_t)d.attr.max_qp_init_rd_atom;
	T_OK(ibv_modify_qp(qp, &a, rts));
	T_OK(ibv_destroy_qp(qp));
}

static void tables(void)
{
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__be16 pkey;

	T_OK(ibv_query_port(d.ctx, T_PORT, &pa));
	T_OK(ibv_query_gid(d.ctx, T_PORT, pa.gid_tbl_len - 1, &gid));
	T_ASSERT(ibv_query_gid(d.ctx, T_PORT, pa.gid_tbl_len, &gid) != 0);
	T_EQ(pa.pkey_tbl_len, (uint16_t)d.attr.max_pkeys);
	T_OK(ibv_query_pkey(d.ctx, T_PORT, pa.pkey_tbl_len - 1, &pkey));
	T_EQ(pkey, htons(0xffff));
	T_ASSERT(ibv_query_pkey(d.ctx, T_PORT, pa.pkey_tbl_len, &pkey) != 0);
	T_ASSERT(ibv_query_port(d.ctx, (uint8_t)(d.attr.phys_port_cnt + 1),
				&pa) != 0);
}

int main(void)
{
	struct ibv_cq *cq;

	t_init("caps_enforced");
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	qkey_counter();
	ah_port();
	srq_limits();
	rd_atomic(cq);
	tables();
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
