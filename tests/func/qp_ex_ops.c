/* SPDX-License-Identifier: MIT */
/*
 * send_ops_flags: every bit a RoCE device sets for a QP type is accepted
 * and its ibv_wr_* builder is there (and only those: a bit the type cannot
 * carry, TSO included, is EOPNOTSUPP, as rxe answers), and one batch of
 * every RC data operation, ATOMIC WRITE and FLUSH too, completes in order
 * with the right opcodes and data.
 */
#include <endian.h>
#include <stdio.h>

#include <infiniband/softrdma.h>

#include "t_util.h"

static struct t_dev d;

static const uint64_t rc_ops =
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
	IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |
	IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE;
static const uint64_t uc_ops =
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
static const uint64_t ud_ops = IBV_QP_EX_WITH_SEND |
			       IBV_QP_EX_WITH_SEND_WITH_IMM;

/* Each builder present exactly when its bit was asked for. */
static void check_builders(struct ibv_qp_ex *x, uint64_t ops)
{
	const struct {
		uint64_t bit;
		const void *fn;
	} t[] = {
		{ IBV_QP_EX_WITH_RDMA_WRITE, (const void *)x->wr_rdma_write },
		{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		  (const void *)x->wr_rdma_write_imm },
		{ IBV_QP_EX_WITH_SEND, (const void *)x->wr_send },
		{ IBV_QP_EX_WITH_SEND_WITH_IMM, (const void *)x->wr_send_imm },
		{ IBV_QP_EX_WITH_RDMA_READ, (const void *)x->wr_rdma_read },
		{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		  (const void *)x->wr_atomic_cmp_swp },
		{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		  (const void *)x->wr_atomic_fetch_add },
		{ IBV_QP_EX_WITH_LOCAL_INV, (const void *)x->wr_local_inv },
		{ IBV_QP_EX_WITH_BIND_MW, (const void *)x->wr_bind_mw },
		{ IBV_QP_EX_WITH_SEND_WITH_INV, (const void *)x->wr_send_inv },
		{ IBV_QP_EX_WITH_ATOMIC_WRITE,
		  (const void *)x->wr_atomic_write },
		{ IBV_QP_EX_WITH_FLUSH,
		  (const void *)((struct softrdma_qp_ex_flush *)x)->wr_flush },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!!(ops & t[i].bit) != !!t[i].fn)
			T_FAIL("send_ops_flags bit %#llx: builder %s",
			       (unsigned long long)t[i].bit,
			       t[i].fn ? "present" : "missing");
	T_ASSERT(x->wr_start && x->wr_complete && x->wr_abort &&
		 x->wr_set_sge && x->wr_set_sge_list && x->wr_set_inline_data &&
		 x->wr_set_inline_data_list);
}

static void check_type(struct ibv_cq *cq, enum ibv_qp_type type, uint64_t ok)
{
	struct ibv_qp *qp;

	qp = T_NONNULL(t_qp_ex_create(&d, cq, type, ok));
	check_builders(T_NONNULL(ibv_qp_to_qp_ex(qp)), ok);
	T_OK(ibv_destroy_qp(qp));
	/* Each bit alone, and every other bit of the enum refused. */
	for (int b = 0; b <= 12; b++) {
		uint64_t bit = 1ull << b;

		errno = 0;
		qp = t_qp_ex_create(&d, cq, type, bit);
		if (ok & bit) {
			T_NONNULL(qp);
			check_builders(ibv_qp_to_qp_ex(qp), bit);
			T_OK(ibv_destroy_qp(qp));
		} else if (qp) {
			T_FAIL("type %d took send_ops_flags bit %#llx", type,
			       (unsigned long long)bit);
		} else {
			T_EQ(errno, EOPNOTSUPP);
		}
	}
}

static void rc_batch(void)
{
	struct ibv_cq *ca = t_cq_create(&d, 64, NULL);
	struct ibv_cq *cb = t_cq_create(&d, 64, NULL);
	struct ibv_qp *a =
		T_NONNULL(t_qp_ex_create(&d, ca, IBV_QPT_RC, rc_ops));
	struct ibv_qp *b =
		T_NONNULL(t_qp_ex_create(&d, cb, IBV_QPT_RC, rc_ops));
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a);
	struct t_conn_opts o;
	struct t_ep ea, eb;
	struct t_buf lb, rb;
	struct ibv_wc wc;
	uint64_t *rw, *lw, aw = 0x0102030405060708ull;
	static const struct {
		int opcode;
	} want[] = { { IBV_WC_SEND },	    { IBV_WC_SEND },
		     { IBV_WC_RDMA_WRITE }, { IBV_WC_RDMA_WRITE },
		     { IBV_WC_RDMA_READ },  { IBV_WC_COMP_SWAP },
		     { IBV_WC_FETCH_ADD },  { IBV_WC_ATOMIC_WRITE },
		     { IBV_WC_FLUSH } };

	t_conn_opts_init(&o);
	o.access |= IBV_ACCESS_FLUSH_GLOBAL;
	t_buf_alloc(&d, &lb, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &rb, 4096, T_ACCESS_ALL | IBV_ACCESS_FLUSH_GLOBAL);
	lw = (uint64_t *)lb.p;
	rw = (uint64_t *)rb.p;
	memset(lb.p, 0, 4096);
	memset(rb.p, 0, 4096);
	memcpy(lb.p, "hello, device", 14);
	rw[100] = 0x77;
	rw[101] = 40;
	rw[200] = 0xabcdef;
	t_ep_local(&d, a, 10, &ea);
	t_ep_local(&d, b, 20, &eb);
	t_qp_connect(a, 10, &eb, &o);
	t_qp_connect(b, 20, &ea, &o);
	t_post_recv(b, 1, rb.mr, rb.p + 1024, 64);
	t_post_recv(b, 2, rb.mr, rb.p + 1088, 64);
	t_post_recv(b, 3, rb.mr, rb.p + 1152, 64);

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 0;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)lb.p, 14);
	x->wr_id = 1;
	ibv_wr_send_imm(x, htobe32(0x1234));
	ibv_wr_set_inline_data(x, "inline", 6);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, rb.mr->rkey, (uintptr_t)(rb.p + 2048));
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)lb.p, 14);
	x->wr_id = 3;
	ibv_wr_rdma_write_imm(x, rb.mr->rkey, (uintptr_t)(rb.p + 2100),
			      htobe32(0x5678));
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)lb.p, 5);
	x->wr_id = 4;
	ibv_wr_rdma_read(x, rb.mr->rkey, (uintptr_t)(rw + 200));
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)(lw + 50), 8);
	x->wr_id = 5;
	ibv_wr_atomic_cmp_swp(x, rb.mr->rkey, (uintptr_t)(rw + 100), 0x77,
			      0x88);
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)(lw + 51), 8);
	x->wr_id = 6;
	ibv_wr_atomic_fetch_add(x, rb.mr->rkey, (uintptr_t)(rw + 101), 2);
	ibv_wr_set_sge(x, lb.mr->lkey, (uintptr_t)(lw + 52), 8);
	x->wr_id = 7;
	ibv_wr_atomic_write(x, rb.mr->rkey, (uintptr_t)(rw + 102), &aw);
	x->wr_id = 8;
	ibv_wr_flush(x, rb.mr->rkey, (uintptr_t)rb.p, 4096, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	T_OK(ibv_wr_complete(x));

	for (uint64_t i = 0; i < 9; i++)
		T_EXPECT_WC(ca, &wc, i, IBV_WC_SUCCESS, want[i].opcode);
	T_EXPECT_WC(cb, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 14);
	T_EXPECT_WC(cb, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 6);
	T_EQ(be32toh(wc.imm_data), 0x1234);
	T_EXPECT_WC(cb, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 0x5678);
	T_MEMEQ(rb.p + 1024, "hello, device", 14);
	T_MEMEQ(rb.p + 1088, "inline", 6);
	T_MEMEQ(rb.p + 2048, "hello, device", 14);
	T_MEMEQ(rb.p + 2100, "hello", 5);
	T_EQ(lw[50], 0xabcdef);
	T_EQ(lw[51], 0x77);
	T_EQ(rw[100], 0x88);
	T_EQ(lw[52], 40);
	T_EQ(rw[101], 42);
	T_EQ(rw[102], aw);

	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(ca));
	T_OK(ibv_destroy_cq(cb));
	t_buf_free(&lb);
	t_buf_free(&rb);
}

int main(void)
{
	struct ibv_cq *cq;

	t_init("qp_ex_ops");
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	check_type(cq, IBV_QPT_RC, rc_ops);
	check_type(cq, IBV_QPT_UC, uc_ops);
	check_type(cq, IBV_QPT_UD, ud_ops);
	T_OK(ibv_destroy_cq(cq));
	rc_batch();
	t_dev_close(&d);
	t_pass();
}
