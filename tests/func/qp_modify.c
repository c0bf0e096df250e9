/* SPDX-License-Identifier: MIT */
/*
 * The QP state machine with rdma-core's (the kernel's) attribute masks:
 * RC, UC and UD through RESET -> INIT -> RTR -> RTS; a missing required
 * attribute, one not allowed, or an illegal transition is EINVAL and
 * leaves the QP as it was; query_qp returns what was set.
 */
#include <stdio.h>

#include "t_util.h"

#define RC_INIT \
	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UD_INIT (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define UC_RTR                                                          \
	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
	 IBV_QP_RQ_PSN)
#define RC_RTR (UC_RTR | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define UC_RTS (IBV_QP_STATE | IBV_QP_SQ_PSN)
#define RC_RTS                                                           \
	(UC_RTS | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
	 IBV_QP_MAX_QP_RD_ATOMIC)

static struct t_dev d;
static struct ibv_cq *cq;

static void attrs(struct ibv_qp_attr *a, enum ibv_qp_state state, uint32_t dest)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	a->pkey_index = 0;
	a->port_num = T_PORT;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	a->qkey = 0x12345;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest;
	a->rq_psn = 0x123456;
	a->sq_psn = 0x654321;
	a->max_dest_rd_atomic = 4;
	a->max_rd_atomic = 2;
	a->min_rnr_timer = 12;
	a->timeout = 17;
	a->retry_cnt = 6;
	a->rnr_retry = 5;
	t_ah_attr_init(&a->ah_attr, &d.gid);
}

/* A refused modify: EINVAL and the state is unchanged. */
#define T_BAD_MODIFY(qp, attr, mask, why)                     \
	do {                                                  \
		enum ibv_qp_state t_before_ = (qp)->state;    \
		t_log("refused: %s", why);                    \
		T_RET(ibv_modify_qp(qp, attr, mask), EINVAL); \
		T_EQ((qp)->state, t_before_);                 \
		T_EQ(t_qp_state(qp), t_before_);              \
	} while (0)

static struct ibv_qp *make(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia;

	t_qp_init_attr(&ia, type, cq, cq);
	ia.cap.max_send_wr = 33;
	ia.cap.max_recv_wr = 17;
	ia.cap.max_send_sge = 3;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = 40;
	ia.sq_sig_all = 1;
	return t_qp_create(&d, &ia);
}

static void rc_or_uc(enum ibv_qp_type type)
{
	int init = RC_INIT, rtr = type == IBV_QPT_RC ? RC_RTR : UC_RTR;
	int rts = type == IBV_QPT_RC ? RC_RTS : UC_RTS;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a, q;
	struct ibv_qp *qp = make(type), *peer = make(type);

	t_log("--- %s", type == IBV_QPT_RC ? "RC" : "UC");
	attrs(&a, IBV_QPS_RTR, peer->qp_num);
	T_BAD_MODIFY(qp, &a, rtr, "RESET -> RTR");
	attrs(&a, IBV_QPS_RTS, peer->qp_num);
	T_BAD_MODIFY(qp, &a, rts, "RESET -> RTS");

	attrs(&a, IBV_QPS_INIT, 0);
	T_BAD_MODIFY(qp, &a, init & ~IBV_QP_ACCESS_FLAGS,
		     "RESET -> INIT without ACCESS_FLAGS");
	T_BAD_MODIFY(qp, &a, init & ~IBV_QP_PORT, "RESET -> INIT without PORT");
	T_BAD_MODIFY(qp, &a, init | IBV_QP_QKEY, "RESET -> INIT with QKEY");
	T_BAD_MODIFY(qp, &a, init | IBV_QP_SQ_PSN, "RESET -> INIT with SQ_PSN");
	a.port_num = 2;
	T_BAD_MODIFY(qp, &a, init, "RESET -> INIT on port 2");
	a.port_num = T_PORT;
	T_OK(ibv_modify_qp(qp, &a, init));
	T_EQ(qp->state, IBV_QPS_INIT);
	/* INIT -> INIT may change the access flags. */
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	T_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));

	attrs(&a, IBV_QPS_RTR, peer->qp_num);
	T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_DEST_QPN,
		     "INIT -> RTR without DEST_QPN");
	T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_AV, "INIT -> RTR without AV");
	T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_RQ_PSN,
		     "INIT -> RTR without RQ_PSN");
	T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_PATH_MTU,
		     "INIT -> RTR without PATH_MTU");
	if (type == IBV_QPT_RC) {
		T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_MIN_RNR_TIMER,
			     "RC INIT -> RTR without MIN_RNR_TIMER");
		T_BAD_MODIFY(qp, &a, rtr & ~IBV_QP_MAX_DEST_RD_ATOMIC,
			     "RC INIT -> RTR without MAX_DEST_RD_ATOMIC");
	} else {
		T_BAD_MODIFY(qp, &a, rtr | IBV_QP_MIN_RNR_TIMER,
			     "UC INIT -> RTR with MIN_RNR_TIMER");
	}
	T_BAD_MODIFY(qp, &a, rtr | IBV_QP_QKEY, "INIT -> RTR with QKEY");
	T_BAD_MODIFY(qp, &a, rts, "INIT -> RTS");
	/* RoCE needs the GRH in the address vector. */
	a.ah_attr.is_global = 0;
	T_BAD_MODIFY(qp, &a, rtr, "INIT -> RTR with a non-global AV");
	attrs(&a, IBV_QPS_RTR, peer->qp_num);
	a.ah_attr.grh.sgid_index = 200;
	T_BAD_MODIFY(qp, &a, rtr, "INIT -> RTR with sgid_index 200");
	attrs(&a, IBV_QPS_RTR, peer->qp_num);
	/* Any flow label goes, as with the kernel, which uses its low 20
	 * bits (UCX passes 0xffffffff). */
	a.ah_attr.grh.flow_label = 0xffffffffu;
	T_OK(ibv_modify_qp(qp, &a, rtr));
	T_EQ(qp->state, IBV_QPS_RTR);

	attrs(&a, IBV_QPS_RTS, peer->qp_num);
	T_BAD_MODIFY(qp, &a, rts & ~IBV_QP_SQ_PSN, "RTR -> RTS without SQ_PSN");
	if (type == IBV_QPT_RC) {
		T_BAD_MODIFY(qp, &a, rts & ~IBV_QP_TIMEOUT,
			     "RC RTR -> RTS without TIMEOUT");
		T_BAD_MODIFY(qp, &a, rts & ~IBV_QP_RETRY_CNT,
			     "RC RTR -> RTS without RETRY_CNT");
		T_BAD_MODIFY(qp, &a, rts & ~IBV_QP_RNR_RETRY,
			     "RC RTR -> RTS without RNR_RETRY");
		T_BAD_MODIFY(qp, &a, rts & ~IBV_QP_MAX_QP_RD_ATOMIC,
			     "RC RTR -> RTS without MAX_QP_RD_ATOMIC");
	} else {
		T_BAD_MODIFY(qp, &a, rts | IBV_QP_TIMEOUT,
			     "UC RTR -> RTS with TIMEOUT");
	}
	T_BAD_MODIFY(qp, &a, rts | IBV_QP_DEST_QPN, "RTR -> RTS with DEST_QPN");
	T_OK(ibv_modify_qp(qp, &a, rts));
	T_EQ(qp->state, IBV_QPS_RTS);

	/* Query returns what was set. */
	memset(&q, 0xee, sizeof(q));
	memset(&ia, 0xee, sizeof(ia));
	T_OK(ibv_query_qp(
		qp, &q,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_QP_RD_ATOMIC |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ACCESS_FLAGS |
			IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_CAP,
		&ia));
	T_EQ(q.qp_state, IBV_QPS_RTS);
	T_EQ(q.path_mtu, IBV_MTU_1024);
	T_EQ(q.dest_qp_num, peer->qp_num);
	T_EQ(q.rq_psn, 0x123456);
	T_EQ(q.sq_psn, 0x654321);
	T_EQ(q.qp_access_flags,
	     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	T_EQ(q.pkey_index, 0);
	T_EQ(q.port_num, T_PORT);
	T_EQ(q.ah_attr.is_global, 1);
	T_MEMEQ(q.ah_attr.grh.dgid.raw, d.gid.raw, 16);
	T_EQ(q.ah_attr.grh.sgid_index, T_GID_INDEX);
	T_EQ(q.ah_attr.grh.hop_limit, 64);
	T_EQ(q.ah_attr.port_num, T_PORT);
	if (type == IBV_QPT_RC) {
		T_EQ(q.timeout, 17);
		T_EQ(q.retry_cnt, 6);
		T_EQ(q.rnr_retry, 5);
		T_EQ(q.min_rnr_timer, 12);
		T_EQ(q.max_rd_atomic, 2);
		T_EQ(q.max_dest_rd_atomic, 4);
	}
	T_GE(q.cap.max_send_wr, 33);
	T_GE(q.cap.max_recv_wr, 17);
	T_GE(q.cap.max_send_sge, 3);
	T_GE(q.cap.max_recv_sge, 2);
	T_GE(q.cap.max_inline_data, 40);
	T_EQ(ia.qp_type, type);
	T_EQ(ia.sq_sig_all, 1);
	T_PTR_EQ(ia.send_cq, cq);
	T_PTR_EQ(ia.recv_cq, cq);
	T_PTR_EQ(ia.srq, NULL);
	T_GE(ia.cap.max_send_wr, 33);

	/* RTS -> RTS may change the access flags and (RC) min_rnr_timer,
	 * but not the timeout or the path MTU. */
	attrs(&a, IBV_QPS_RTS, 0);
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	T_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));
	T_OK(ibv_query_qp(qp, &q, IBV_QP_ACCESS_FLAGS, &ia));
	T_EQ(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	if (type == IBV_QPT_RC) {
		a.min_rnr_timer = 3;
		T_OK(ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
		T_OK(ibv_query_qp(qp, &q, IBV_QP_MIN_RNR_TIMER, &ia));
		T_EQ(q.min_rnr_timer, 3);
	} else {
		T_BAD_MODIFY(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER,
			     "UC RTS -> RTS with MIN_RNR_TIMER");
	}
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT,
		     "RTS -> RTS with TIMEOUT");
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU,
		     "RTS -> RTS with PATH_MTU");
	attrs(&a, IBV_QPS_INIT, 0);
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE, "RTS -> INIT");
	attrs(&a, IBV_QPS_RTR, 0);
	T_BAD_MODIFY(qp, &a, rtr, "RTS -> RTR");

	/* Any state -> ERR, ERR -> RESET, RESET -> INIT again. */
	t_qp_set_state(qp, IBV_QPS_ERR);
	T_EQ(t_qp_state(qp), IBV_QPS_ERR);
	attrs(&a, IBV_QPS_RTS, 0);
	T_BAD_MODIFY(qp, &a, rts, "ERR -> RTS");
	t_qp_set_state(qp, IBV_QPS_RESET);
	attrs(&a, IBV_QPS_INIT, 0);
	T_OK(ibv_modify_qp(qp, &a, init));
	t_qp_set_state(qp, IBV_QPS_RESET);
	T_EQ(t_qp_state(qp), IBV_QPS_RESET);

	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_qp(peer));
}

static void ud(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a, q;
	struct ibv_qp *qp = make(IBV_QPT_UD);

	t_log("--- UD");
	attrs(&a, IBV_QPS_INIT, 0);
	T_BAD_MODIFY(qp, &a, UD_INIT & ~IBV_QP_QKEY,
		     "UD RESET -> INIT without QKEY");
	T_BAD_MODIFY(qp, &a, UD_INIT | IBV_QP_ACCESS_FLAGS,
		     "UD RESET -> INIT with ACCESS_FLAGS");
	T_OK(ibv_modify_qp(qp, &a, UD_INIT));
	attrs(&a, IBV_QPS_RTR, 0);
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN,
		     "UD INIT -> RTR with DEST_QPN");
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE | IBV_QP_AV,
		     "UD INIT -> RTR with AV");
	T_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	attrs(&a, IBV_QPS_RTS, 0);
	T_BAD_MODIFY(qp, &a, IBV_QP_STATE, "UD RTR -> RTS without SQ_PSN");
	T_BAD_MODIFY(qp, &a, UC_RTS | IBV_QP_TIMEOUT,
		     "UD RTR -> RTS with TIMEOUT");
	T_OK(ibv_modify_qp(qp, &a, UC_RTS));
	T_EQ(qp->state, IBV_QPS_RTS);
	T_OK(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_SQ_PSN,
			  &ia));
	T_EQ(q.qp_state, IBV_QPS_RTS);
	T_EQ(q.qkey, 0x12345);
	T_EQ(q.sq_psn, 0x654321);
	T_EQ(ia.qp_type, IBV_QPT_UD);
	/* The Q_Key may change in RTS. */
	a.qkey = 0x777;
	T_OK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY));
	T_OK(ibv_query_qp(qp, &q, IBV_QP_QKEY, &ia));
	T_EQ(q.qkey, 0x777);
	T_OK(ibv_destroy_qp(qp));
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	t_init("qp_modify");
	t_dev_open(&d);
	cq = t_cq_create(&d, 256, NULL);

	rc_or_uc(IBV_QPT_RC);
	rc_or_uc(IBV_QPT_UC);
	ud();

	/* A QP type the device does not have. */
	t_qp_init_attr(&ia, IBV_QPT_DRIVER, cq, cq);
	errno = 0;
	qp = ibv_create_qp(d.pd, &ia);
	if (qp)
		T_FAIL("create_qp(DRIVER) succeeded");
	T_ASSERT(errno == EINVAL || errno == EOPNOTSUPP);

	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
