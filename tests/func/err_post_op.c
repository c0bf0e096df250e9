/* SPDX-License-Identifier: MIT */
/*
 * Operations a QP type does not have are refused when posted, with EINVAL
 * and bad_wr at the WR, as rdma-core's rxe provider does (so
 * IBV_WC_LOC_QP_OP_ERR is not reachable through them): RDMA READ and
 * atomics on UC, RDMA WRITE/READ and atomics on UD, an opcode that does
 * not exist.  Nothing completes and the QP stays usable.
 */
#include <stdio.h>

#include "t_util.h"

static void refused(struct ibv_qp *qp, struct ibv_cq *cq, const char *what,
		    enum ibv_wr_opcode op, struct t_buf *b, struct ibv_ah *ah)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sge = { (uintptr_t)b->p, 8, b->mr->lkey };

	t_log("refused: %s", what);
	wr.wr_id = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 1;
		wr.wr.ud.remote_qkey = T_QKEY;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)b->p;
		wr.wr.rdma.rkey = b->mr->rkey;
	}
	T_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
	T_PTR_EQ(bad, &wr);
	T_EXPECT_NO_WC(cq, 10);
}

int main(void)
{
	struct t_pair uc, ud, rc;
	struct ibv_wc wc;
	struct t_buf b;
	struct t_dev d;

	t_init("err_post_op");
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);

	t_pair_create(&d, &uc, IBV_QPT_UC, NULL, NULL);
	refused(uc.a, uc.cq_a, "UC RDMA READ", IBV_WR_RDMA_READ, &b, NULL);
	refused(uc.a, uc.cq_a, "UC compare-swap", IBV_WR_ATOMIC_CMP_AND_SWP, &b,
		NULL);
	refused(uc.a, uc.cq_a, "UC fetch-add", IBV_WR_ATOMIC_FETCH_AND_ADD, &b,
		NULL);
	/* Still in RTS and working. */
	T_EQ(t_qp_state(uc.a), IBV_QPS_RTS);
	t_post_send(uc.a, 2, IBV_WR_RDMA_WRITE, b.mr, b.p, 8, IBV_SEND_SIGNALED,
		    (uintptr_t)b.p + 64, b.mr->rkey);
	T_EXPECT_WC(uc.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_pair_destroy(&uc);

	t_pair_create(&d, &ud, IBV_QPT_UD, NULL, NULL);
	refused(ud.a, ud.cq_a, "UD RDMA WRITE", IBV_WR_RDMA_WRITE, &b, ud.ah_a);
	refused(ud.a, ud.cq_a, "UD RDMA WRITE_WITH_IMM",
		IBV_WR_RDMA_WRITE_WITH_IMM, &b, ud.ah_a);
	refused(ud.a, ud.cq_a, "UD RDMA READ", IBV_WR_RDMA_READ, &b, ud.ah_a);
	refused(ud.a, ud.cq_a, "UD fetch-add", IBV_WR_ATOMIC_FETCH_AND_ADD, &b,
		ud.ah_a);
	T_EQ(t_qp_state(ud.a), IBV_QPS_RTS);
	t_pair_destroy(&ud);

	t_pair_create(&d, &rc, IBV_QPT_RC, NULL, NULL);
	refused(rc.a, rc.cq_a, "RC opcode 0x55", (enum ibv_wr_opcode)0x55, &b,
		NULL);
	T_EQ(t_qp_state(rc.a), IBV_QPS_RTS);
	t_post_send(rc.a, 3, IBV_WR_RDMA_WRITE, b.mr, b.p, 8, IBV_SEND_SIGNALED,
		    (uintptr_t)b.p + 64, b.mr->rkey);
	T_EXPECT_WC(rc.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_pair_destroy(&rc);

	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
