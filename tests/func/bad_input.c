/* SPDX-License-Identifier: MIT */
/*
 * Invalid arguments rdma-core reports as errors (not what would crash
 * rdma-core too): posting in states that don't allow it, too many SGEs,
 * a CQ of another context, a zero-length MR, bad port and P_Key index.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sges[64];
	struct ibv_context *ctx2;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp;
	struct t_buf b;
	struct t_ep self;
	struct t_dev d;
	int i;

	t_init("bad_input");
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);
	cq = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	qp = t_qp_create(&d, &ia);
	for (i = 0; i < 64; i++)
		sges[i] = (struct ibv_sge){ (uintptr_t)b.p, 8, b.mr->lkey };

	/* RESET: neither sends nor receives. */
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sges;
	wr.num_sge = 1;
	bad = NULL;
	T_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
	T_PTR_EQ(bad, &wr);
	rwr.wr_id = 2;
	rwr.sg_list = sges;
	rwr.num_sge = 1;
	rbad = NULL;
	T_RET(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	T_PTR_EQ(rbad, &rwr);

	/* INIT: receives yes, sends no. */
	t_qp_to_init(qp, NULL);
	T_OK(ibv_post_recv(qp, &rwr, &rbad));
	bad = NULL;
	T_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
	T_PTR_EQ(bad, &wr);
	/* RTR: still no sends. */
	t_ep_local(&d, qp, 5, &self);
	t_qp_to_rtr(qp, &self, NULL);
	bad = NULL;
	T_RET(ibv_post_send(qp, &wr, &bad), EINVAL);
	T_PTR_EQ(bad, &wr);
	t_qp_to_rts(qp, 5, NULL);

	/* Too many SGEs: EINVAL, bad_wr at the offender, earlier WRs of the
	 * list posted. */
	{
		struct ibv_send_wr w[3] = { 0 };
		struct ibv_recv_wr rw[2] = { 0 };
		struct ibv_wc wc;

		for (i = 0; i < 3; i++) {
			w[i].wr_id = 10 + i;
			w[i].opcode = IBV_WR_RDMA_WRITE;
			w[i].send_flags = IBV_SEND_SIGNALED;
			w[i].sg_list = sges;
			w[i].num_sge = 1;
			w[i].wr.rdma.remote_addr = (uintptr_t)b.p + 1024;
			w[i].wr.rdma.rkey = b.mr->rkey;
			w[i].next = i < 2 ? &w[i + 1] : NULL;
		}
		w[1].num_sge = (int)ia.cap.max_send_sge + 1;
		bad = NULL;
		T_RET(ibv_post_send(qp, &w[0], &bad), EINVAL);
		T_PTR_EQ(bad, &w[1]);
		T_EXPECT_WC(cq, &wc, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		T_EXPECT_NO_WC(cq, 20);

		rw[0].wr_id = 20;
		rw[0].sg_list = sges;
		rw[0].num_sge = (int)ia.cap.max_recv_sge + 1;
		rbad = NULL;
		T_RET(ibv_post_recv(qp, &rw[0], &rbad), EINVAL);
		T_PTR_EQ(rbad, &rw[0]);
	}

	/* A CQ of another context: the device checks that every handle in a
	 * command belongs to the connection that sends it. */
	ctx2 = T_NONNULL(ibv_open_device(d.ctx->device));
	cq2 = T_NONNULL(ibv_create_cq(ctx2, 16, NULL, NULL, 0));
	t_qp_init_attr(&ia, IBV_QPT_RC, cq2, cq2);
	T_NULL_ERRNO(ibv_create_qp(d.pd, &ia), EINVAL);
	T_OK(ibv_destroy_cq(cq2));
	T_OK(ibv_close_device(ctx2));

	/* A zero-length registration. */
	T_NULL_ERRNO(ibv_reg_mr(d.pd, b.p, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL);

	/* Bad modify values: port 0, a P_Key index past the table. */
	{
		struct ibv_qp *q2;
		struct ibv_qp_attr a = { 0 };

		t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
		q2 = t_qp_create(&d, &ia);
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 0;
		T_RET(ibv_modify_qp(q2, &a,
				    IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		      EINVAL);
		a.port_num = T_PORT;
		a.pkey_index = 5;
		T_RET(ibv_modify_qp(q2, &a,
				    IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		      EINVAL);
		T_OK(ibv_destroy_qp(q2));
	}

	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
