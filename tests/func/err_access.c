/* SPDX-License-Identifier: MIT */
/*
 * Remote access errors: a wrong rkey, an MR without the right, a range past
 * the MR's end.  The requester's WR completes with IBV_WC_REM_ACCESS_ERR,
 * the target memory is untouched, and the responder's QP raises
 * IBV_EVENT_QP_ACCESS_ERR.  A QP that doesn't allow the operation answers
 * it as rxe does, with an Invalid Request NAK: IBV_WC_REM_INV_REQ_ERR and
 * IBV_EVENT_QP_REQ_ERR.
 */
#include <stdio.h>

#include "t_util.h"

static struct t_dev d;
static struct t_buf s;

static void expect_refused(const char *what, enum ibv_wr_opcode op,
			   struct t_buf *tgt, uint64_t raddr, uint32_t rkey,
			   uint32_t len, unsigned int qp_access,
			   enum ibv_wc_status st, enum ibv_event_type ev)
{
	struct t_conn_opts o;
	struct ibv_wc wc;
	struct t_pair p;

	t_log("%s", what);
	t_conn_opts_init(&o);
	o.access = qp_access;
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, &o);
	memset(tgt->p, 0xcc, tgt->len);
	t_fill(s.p, len, 9);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		t_post_atomic(p.a, 1, op, s.mr, s.p, raddr, rkey, 1, 0);
	else
		t_post_send(p.a, 1, op, s.mr, s.p, len, IBV_SEND_SIGNALED,
			    raddr, rkey);
	T_EXPECT_WC(p.cq_a, &wc, 1, st, T_ANY_OPCODE);
	T_EQ(t_qp_state(p.a), IBV_QPS_ERR);
	T_EXPECT_ASYNC(d.ctx, ev, p.b);
	T_EXPECT_NO_WC(p.cq_b, 20);
	for (size_t i = 0; i < tgt->len; i++)
		if (tgt->p[i] != 0xcc)
			T_FAIL("target byte %zu changed to %#x", i, tgt->p[i]);
	t_pair_destroy(&p);
}

static void expect_rem_access(const char *what, enum ibv_wr_opcode op,
			      struct t_buf *tgt, uint64_t raddr, uint32_t rkey,
			      uint32_t len, unsigned int qp_access)
{
	expect_refused(what, op, tgt, raddr, rkey, len, qp_access,
		       IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
}

static void expect_inv_req(const char *what, enum ibv_wr_opcode op,
			   struct t_buf *tgt, uint32_t len,
			   unsigned int qp_access)
{
	expect_refused(what, op, tgt, (uintptr_t)tgt->p, tgt->mr->rkey, len,
		       qp_access, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
}

int main(void)
{
	unsigned int all = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC;
	struct t_buf full, nowrite, noread, noatomic;

	t_init("err_access");
	t_dev_open(&d);
	t_buf_alloc(&d, &s, 8192, T_ACCESS_ALL);
	t_buf_alloc(&d, &full, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &nowrite, 4096,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	t_buf_alloc(&d, &noread, 4096,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	t_buf_alloc(&d, &noatomic, 4096,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ);

	expect_rem_access("WRITE with a wrong rkey", IBV_WR_RDMA_WRITE, &full,
			  (uintptr_t)full.p, full.mr->rkey ^ 0x80, 64, all);
	expect_rem_access("WRITE with an rkey nobody has", IBV_WR_RDMA_WRITE,
			  &full, (uintptr_t)full.p, 0xfffff0ff, 64, all);
	expect_rem_access("WRITE to an MR without REMOTE_WRITE",
			  IBV_WR_RDMA_WRITE, &nowrite, (uintptr_t)nowrite.p,
			  nowrite.mr->rkey, 64, all);
	expect_rem_access("READ from an MR without REMOTE_READ",
			  IBV_WR_RDMA_READ, &noread, (uintptr_t)noread.p,
			  noread.mr->rkey, 64, all);
	expect_rem_access("atomic on an MR without REMOTE_ATOMIC",
			  IBV_WR_ATOMIC_FETCH_AND_ADD, &noatomic,
			  (uintptr_t)noatomic.p, noatomic.mr->rkey, 8, all);
	expect_rem_access("WRITE past the end of the MR", IBV_WR_RDMA_WRITE,
			  &full, (uintptr_t)full.p + 4096 - 32, full.mr->rkey,
			  64, all);
	expect_rem_access("WRITE before the start of the MR", IBV_WR_RDMA_WRITE,
			  &full, (uintptr_t)full.p - 8, full.mr->rkey, 16, all);
	expect_inv_req("WRITE to a QP without REMOTE_WRITE", IBV_WR_RDMA_WRITE,
		       &full, 64, IBV_ACCESS_REMOTE_READ);
	expect_inv_req("READ from a QP without REMOTE_READ", IBV_WR_RDMA_READ,
		       &full, 64, IBV_ACCESS_REMOTE_WRITE);
	expect_inv_req("atomic on a QP without REMOTE_ATOMIC",
		       IBV_WR_ATOMIC_FETCH_AND_ADD, &full, 8,
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);

	t_buf_free(&s);
	t_buf_free(&full);
	t_buf_free(&nowrite);
	t_buf_free(&noread);
	t_buf_free(&noatomic);
	t_dev_close(&d);
	t_pass();
}
