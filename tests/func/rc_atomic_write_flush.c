/* SPDX-License-Identifier: MIT */
/*
 * IBTA 1.5 ATOMIC WRITE and FLUSH through ibv_wr_atomic_write() and
 * ibv_wr_flush(): the device capabilities, the MR and QP access flags,
 * the 8 bytes placed whole (a reader never sees half of two values),
 * IBV_WC_ATOMIC_WRITE / IBV_WC_FLUSH completions, and the errors: no
 * remote write or flush right -> IBV_WC_REM_ACCESS_ERR (a QP without
 * remote write: IBV_WC_REM_INV_REQ_ERR), a misaligned
 * address -> IBV_WC_REM_INV_REQ_ERR, bad arguments and QP types ->
 * EINVAL / EOPNOTSUPP as rdma-core's providers answer.  FLUSH's names
 * come from <infiniband/softrdma.h> (rdma-core 47's, beyond 44's API).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <infiniband/softrdma.h>

#include "t_util.h"

#define ACC_FLUSH (T_ACCESS_ALL | IBV_ACCESS_FLUSH_GLOBAL)

static struct t_dev d;

struct xpair {
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *xa;
};

/* access: the responder's qp_access_flags. */
static void xpair_create(struct xpair *x, unsigned int access)
{
	const uint64_t ops = IBV_QP_EX_WITH_ATOMIC_WRITE |
			     IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_RDMA_WRITE;
	struct t_conn_opts o;
	struct t_ep ea, eb;

	t_conn_opts_init(&o);
	o.access = access;
	x->cq_a = t_cq_create(&d, 256, NULL);
	x->cq_b = t_cq_create(&d, 256, NULL);
	x->a = T_NONNULL(t_qp_ex_create(&d, x->cq_a, IBV_QPT_RC, ops));
	x->b = T_NONNULL(t_qp_ex_create(&d, x->cq_b, IBV_QPT_RC, ops));
	x->xa = T_NONNULL(ibv_qp_to_qp_ex(x->a));
	T_ASSERT(x->xa->wr_atomic_write &&
		 ((struct softrdma_qp_ex_flush *)x->xa)->wr_flush);
	t_ep_local(&d, x->a, 100, &ea);
	t_ep_local(&d, x->b, 200, &eb);
	t_qp_connect(x->a, 100, &eb, &o);
	t_qp_connect(x->b, 200, &ea, &o);
}

static void xpair_destroy(struct xpair *x)
{
	T_OK(ibv_destroy_qp(x->a));
	T_OK(ibv_destroy_qp(x->b));
	T_OK(ibv_destroy_cq(x->cq_a));
	T_OK(ibv_destroy_cq(x->cq_b));
}

static int post_aw(struct xpair *x, uint64_t id, uint32_t rkey, void *dst,
		   uint64_t v)
{
	ibv_wr_start(x->xa);
	x->xa->wr_id = id;
	x->xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x->xa, rkey, (uintptr_t)dst, &v);
	return ibv_wr_complete(x->xa);
}

static int post_flush(struct xpair *x, uint64_t id, uint32_t rkey, void *dst,
		      size_t len, uint8_t type, uint8_t level)
{
	ibv_wr_start(x->xa);
	x->xa->wr_id = id;
	x->xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x->xa, rkey, (uintptr_t)dst, len, type, level);
	return ibv_wr_complete(x->xa);
}

static void check_caps(void)
{
	struct ibv_device_attr_ex ax;

	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_ASSERT(ax.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE);
	T_ASSERT(ax.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL);
	T_ASSERT(ax.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_PERSISTENT);
	/* The low word still repeats device_cap_flags. */
	T_EQ((uint32_t)ax.device_cap_flags_ex, ax.orig_attr.device_cap_flags);
}

static void check_create_errors(void)
{
	struct ibv_cq *cq = t_cq_create(&d, 16, NULL);
	static uint8_t buf[4096];

	/* Only RC carries them (rxe's and rdma-core's tables). */
	errno = 0;
	T_ASSERT(!t_qp_ex_create(&d, cq, IBV_QPT_UC,
				 IBV_QP_EX_WITH_ATOMIC_WRITE));
	T_EQ(errno, EOPNOTSUPP);
	errno = 0;
	T_ASSERT(!t_qp_ex_create(&d, cq, IBV_QPT_UD, IBV_QP_EX_WITH_FLUSH));
	T_EQ(errno, EOPNOTSUPP);
	/* No persistent memory to grant a persistent flush on. */
	T_NULL_ERRNO(ibv_reg_mr(d.pd, buf, sizeof(buf),
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_FLUSH_PERSISTENT),
		     EINVAL);
	T_OK(ibv_destroy_cq(cq));
}

static _Atomic int stop;
static volatile uint64_t *watched;
static uint64_t torn;

/* Reads the word as a CPU would while the device writes it. */
static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t v = __atomic_load_n(watched, __ATOMIC_ACQUIRE);

		if (v != 0 && v != 0x0123456789abcdefull &&
		    v != 0xfedcba9876543210ull)
			torn = v;
	}
	return NULL;
}

static void check_success(void)
{
	struct xpair x;
	struct t_buf tgt;
	uint64_t *w;
	struct ibv_wc wc;
	pthread_t th;
	int i;

	t_buf_alloc(&d, &tgt, 8192, ACC_FLUSH);
	w = (uint64_t *)tgt.p;
	for (i = 0; i < 16; i++)
		w[i] = 0x5555555555555555ull;
	xpair_create(&x, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC |
				 IBV_ACCESS_FLUSH_GLOBAL);

	/* The bytes land as given; the neighbours stay. */
	T_OK(post_aw(&x, 1, tgt.mr->rkey, w + 3, 0x1122334455667788ull));
	T_EXPECT_WC(x.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
	T_EQ(wc.byte_len, 8);
	T_EQ(w[3], 0x1122334455667788ull);
	T_EQ(w[2], 0x5555555555555555ull);
	T_EQ(w[4], 0x5555555555555555ull);

	/* FLUSH of a range and of the whole MR, behind a WRITE. */
	memset(tgt.p + 4096, 0, 64);
	ibv_wr_start(x.xa);
	x.xa->wr_id = 2;
	x.xa->wr_flags = 0;
	ibv_wr_rdma_write(x.xa, tgt.mr->rkey, (uintptr_t)(tgt.p + 4096));
	ibv_wr_set_inline_data(x.xa, "persist me", 10);
	x.xa->wr_id = 3;
	x.xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x.xa, tgt.mr->rkey, (uintptr_t)(tgt.p + 4096), 10,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	T_OK(ibv_wr_complete(x.xa));
	T_EXPECT_WC(x.cq_a, &wc, 3, IBV_WC_SUCCESS, IBV_WC_FLUSH);
	T_MEMEQ(tgt.p + 4096, "persist me", 10);
	T_OK(post_flush(&x, 4, tgt.mr->rkey, NULL, 0, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_MR));
	T_EXPECT_WC(x.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_FLUSH);
	/* A zero-length range flush is a valid no-op. */
	T_OK(post_flush(&x, 5, tgt.mr->rkey, tgt.p, 0, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_RANGE));
	T_EXPECT_WC(x.cq_a, &wc, 5, IBV_WC_SUCCESS, IBV_WC_FLUSH);

	/* Whole 8 bytes only, while another thread reads the word. */
	watched = w + 8;
	*watched = 0;
	T_OK(pthread_create(&th, NULL, reader, NULL));
	for (i = 0; i < 2000; i++) {
		uint64_t v = (i & 1) ? 0xfedcba9876543210ull
				     : 0x0123456789abcdefull;

		T_OK(post_aw(&x, 100 + (uint64_t)i, tgt.mr->rkey, w + 8, v));
		T_EXPECT_WC(x.cq_a, &wc, 100 + (uint64_t)i, IBV_WC_SUCCESS,
			    IBV_WC_ATOMIC_WRITE);
		T_EQ(*watched, v);
	}
	atomic_store(&stop, 1);
	T_OK(pthread_join(th, NULL));
	T_EQ(torn, 0);

	/* Many in flight: credits of max_rd_atomic, completions in order. */
	ibv_wr_start(x.xa);
	for (i = 0; i < 48; i++) {
		uint64_t v = 0xa000 + (uint64_t)i;

		x.xa->wr_id = 1000 + (uint64_t)i;
		x.xa->wr_flags = IBV_SEND_SIGNALED;
		if (i % 3 == 2)
			ibv_wr_flush(x.xa, tgt.mr->rkey, (uintptr_t)tgt.p, 64,
				     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
		else
			ibv_wr_atomic_write(x.xa, tgt.mr->rkey,
					    (uintptr_t)(w + 16 + i), &v);
	}
	T_OK(ibv_wr_complete(x.xa));
	for (i = 0; i < 48; i++)
		T_EXPECT_WC(x.cq_a, &wc, 1000 + (uint64_t)i, IBV_WC_SUCCESS,
			    i % 3 == 2 ? IBV_WC_FLUSH : IBV_WC_ATOMIC_WRITE);
	for (i = 0; i < 48; i++)
		if (i % 3 != 2)
			T_EQ(w[16 + i], 0xa000 + (uint64_t)i);

	/* Bad arguments fail the batch, nothing is posted. */
	T_RET(post_flush(&x, 6, tgt.mr->rkey, tgt.p, 8, 0, IBV_FLUSH_RANGE),
	      EINVAL);
	T_RET(post_flush(&x, 7, tgt.mr->rkey, tgt.p, 8, 0x4, IBV_FLUSH_RANGE),
	      EINVAL);
	T_RET(post_flush(&x, 8, tgt.mr->rkey, tgt.p, 8, IBV_FLUSH_GLOBAL, 2),
	      EINVAL);
	ibv_wr_start(x.xa);
	ibv_wr_atomic_write(x.xa, tgt.mr->rkey, (uintptr_t)tgt.p, NULL);
	T_RET(ibv_wr_complete(x.xa), EINVAL);
	T_EXPECT_NO_WC(x.cq_a, T_QUIET_MS);

	xpair_destroy(&x);
	t_buf_free(&tgt);
}

/* One failing request on a fresh pair: the status, then the QP is in
 * error.  what: 0 atomic write, 1 flush. */
static void expect_error(unsigned int qp_access, int mr_access, int what,
			 size_t off, enum ibv_wc_status st)
{
	struct xpair x;
	struct t_buf tgt;
	struct ibv_wc wc;

	t_buf_alloc(&d, &tgt, 4096, mr_access);
	memset(tgt.p, 0x77, 64);
	xpair_create(&x, qp_access);
	if (what == 0)
		T_OK(post_aw(&x, 9, tgt.mr->rkey, tgt.p + off, 0));
	else
		T_OK(post_flush(&x, 9, tgt.mr->rkey, tgt.p + off, 64,
				IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE));
	T_EXPECT_WC(x.cq_a, &wc, 9, st, T_ANY_OPCODE);
	T_EQ(t_qp_state(x.a), IBV_QPS_ERR);
	/* Nothing was written. */
	for (int i = 0; i < 64; i++)
		T_EQ(tgt.p[i], 0x77);
	xpair_destroy(&x);
	t_buf_free(&tgt);
}

int main(void)
{
	const unsigned int qp_all = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_FLUSH_GLOBAL;

	t_init("rc_atomic_write_flush");
	t_dev_open(&d);
	check_caps();
	check_create_errors();
	check_success();

	/* The MR grants no remote write / no flush. */
	expect_error(qp_all, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0,
		     0, IBV_WC_REM_ACCESS_ERR);
	expect_error(qp_all, T_ACCESS_ALL, 1, 0, IBV_WC_REM_ACCESS_ERR);
	/* The QP grants no remote write (an operation it is not enabled
	 * for: Invalid Request, as rxe) / no flush. */
	expect_error(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_FLUSH_GLOBAL,
		     ACC_FLUSH, 0, 0, IBV_WC_REM_INV_REQ_ERR);
	expect_error(IBV_ACCESS_REMOTE_WRITE, ACC_FLUSH, 1, 0,
		     IBV_WC_REM_ACCESS_ERR);
	/* Not naturally aligned. */
	expect_error(qp_all, ACC_FLUSH, 0, 4, IBV_WC_REM_INV_REQ_ERR);
	/* Past the MR's end. */
	expect_error(qp_all, ACC_FLUSH, 0, 4096, IBV_WC_REM_ACCESS_ERR);

	t_dev_close(&d);
	t_pass();
}
