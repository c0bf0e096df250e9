/* SPDX-License-Identifier: MIT */
/*
 * Thread domains and parent domains: ibv_alloc_td / ibv_dealloc_td,
 * ibv_alloc_parent_domain with alloc/free callbacks, CQs
 * (ibv_create_cq_ex's parent_domain) and QPs (ibv_create_qp_ex's pd) on
 * it with their rings in the memory the callback gave, traffic through
 * them, an SRQ's ring too, IBV_ALLOCATOR_USE_DEFAULT, and the misuse errors mlx5 returns:
 * EINVAL for bad attributes, EBUSY for a TD, PD or parent domain still
 * in use, ENOMEM when the allocator has nothing.
 *
 * Built with SOFTRDMA_NO_INLINE_VERBS: the verbs <infiniband/verbs.h>
 * defines inline are called through the library's exported copies.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/softrdma.h>

#include "t_util.h"

#define MAX_BUFS 8

enum mode {
	GIVE,
	DEFAULT,
	NOTHING
};

struct pool {
	enum mode mode;
	int allocs, frees;
	struct {
		void *p;
		size_t size;
		uint64_t type;
		bool freed;
	} buf[MAX_BUFS];
	void *last_pd;
};

static void *pool_alloc(struct ibv_pd *pd, void *ctx, size_t size, size_t align,
			uint64_t type)
{
	struct pool *pl = ctx;
	void *p = NULL;

	pl->allocs++;
	pl->last_pd = pd;
	if (pl->mode == DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (pl->mode == NOTHING || pl->allocs > MAX_BUFS)
		return NULL;
	/* Whole pages, or the ring's last page would cover heap memory
	 * beyond the buffer. */
	T_EQ(align, 4096);
	T_EQ(size % 4096, 0);
	if (posix_memalign(&p, align, size))
		return NULL;
	memset(p, 0xa5, size);
	pl->buf[pl->allocs - 1].p = p;
	pl->buf[pl->allocs - 1].size = size;
	pl->buf[pl->allocs - 1].type = type;
	return p;
}

static void pool_free(struct ibv_pd *pd, void *ctx, void *p, uint64_t type)
{
	struct pool *pl = ctx;

	pl->frees++;
	for (int i = 0; i < MAX_BUFS; i++) {
		if (pl->buf[i].p == p && !pl->buf[i].freed) {
			T_EQ(pl->buf[i].type, type);
			pl->buf[i].freed = true;
			free(p);
			return;
		}
	}
	T_FAIL("free of %p, which the allocator did not give", p);
}

/* The 8 bytes of v lie somewhere in [p, p + n). */
static bool holds(const void *p, size_t n, uint64_t v)
{
	for (size_t i = 0; i + 8 <= n; i += 8)
		if (!memcmp((const uint8_t *)p + i, &v, 8))
			return true;
	return false;
}

static void errors(struct t_dev *d)
{
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_pd *pdom;

	T_NULL_ERRNO(ibv_alloc_td(d->ctx, &ta), EINVAL);
	T_NULL_ERRNO(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL);
	pa.pd = d->pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT << 1;
	T_NULL_ERRNO(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL);
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	T_NULL_ERRNO(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL);
	/* A parent domain is not a PD to build one on. */
	pa.comp_mask = 0;
	pdom = T_NONNULL(ibv_alloc_parent_domain(d->ctx, &pa));
	pa.pd = pdom;
	T_NULL_ERRNO(ibv_alloc_parent_domain(d->ctx, &pa), EINVAL);
	T_OK(ibv_dealloc_pd(pdom));
}

static struct ibv_cq_ex *cq_on(struct t_dev *d, struct ibv_pd *pdom)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = pdom,
	};

	return ibv_create_cq_ex(d->ctx, &a);
}

static struct ibv_qp *qp_on(struct t_dev *d, struct ibv_pd *pd,
			    struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return ibv_create_qp_ex(d->ctx, &a);
}

int main(void)
{
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_srq *srq;
	const uint64_t magic = 0x5eedf00dcafe1234ull;
	struct ibv_qp *qa, *qb;
	struct ibv_cq *cqb;
	struct ibv_cq_ex *cqa;
	struct ibv_pd *pdom, *pdom2;
	struct t_buf src, dst;
	struct t_conn_opts o;
	struct t_ep ea, eb;
	struct ibv_wc wc;
	struct ibv_td *td;
	struct pool pl = { .mode = GIVE }, pl2 = { .mode = DEFAULT };
	struct t_dev d;
	int i;

	t_init("parent_domain");
	t_dev_open(&d);
	errors(&d);

	td = T_NONNULL(ibv_alloc_td(d.ctx, &ta));
	T_PTR_EQ(td->context, d.ctx);
	pa.pd = d.pd;
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = pool_alloc;
	pa.free = pool_free;
	pa.pd_context = &pl;
	pdom = T_NONNULL(ibv_alloc_parent_domain(d.ctx, &pa));
	T_PTR_EQ(pdom->context, d.ctx);
	T_EQ(pdom->handle, d.pd->handle);
	/* The TD and the PD are held by the parent domain. */
	T_RET(ibv_dealloc_td(td), EBUSY);
	T_RET(ibv_dealloc_pd(d.pd), EBUSY);

	/* A CQ and a QP on it: their rings come from the allocator. */
	cqa = T_NONNULL(cq_on(&d, pdom));
	T_EQ(pl.allocs, 1);
	T_EQ(pl.buf[0].type, SOFTRDMA_RES_TYPE_CQ);
	T_PTR_EQ(pl.last_pd, pdom);
	qa = T_NONNULL(qp_on(&d, pdom, ibv_cq_ex_to_cq(cqa)));
	T_EQ(pl.allocs, 2);
	T_EQ(pl.buf[1].type, SOFTRDMA_RES_TYPE_QP);
	T_PTR_EQ(qa->pd, pdom);
	/* A plain QP to talk to. */
	cqb = t_cq_create(&d, 64, NULL);
	qb = T_NONNULL(qp_on(&d, d.pd, cqb));
	t_conn_opts_init(&o);
	t_ep_local(&d, qa, 0x11, &ea);
	t_ep_local(&d, qb, 0x22, &eb);
	t_qp_connect(qa, ea.psn, &eb, &o);
	t_qp_connect(qb, eb.psn, &ea, &o);
	/* An MR may name the parent domain too (its PD's handle). */
	t_buf_alloc(&d, &src, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, 4096, T_ACCESS_ALL);

	/* Traffic both ways; the WQE and the CQE are in the given memory. */
	t_fill(src.p, 512, 3);
	t_post_send(qa, magic, IBV_WR_RDMA_WRITE, src.mr, src.p, 512,
		    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	T_EXPECT_WC(ibv_cq_ex_to_cq(cqa), &wc, magic, IBV_WC_SUCCESS,
		    IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(dst.p, 512, 3);
	T_ASSERT(holds(pl.buf[0].p, pl.buf[0].size, magic));
	T_ASSERT(holds(pl.buf[1].p, pl.buf[1].size, magic));
	for (i = 0; i < 40; i++) {
		t_fill(dst.p, 256, 100 + i);
		t_post_recv(qa, 1000 + i, src.mr, src.p, 4096);
		t_post_send(qb, 2000 + i, IBV_WR_SEND, dst.mr, dst.p, 256,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(ibv_cq_ex_to_cq(cqa), &wc, 1000 + i, IBV_WC_SUCCESS,
			    IBV_WC_RECV);
		T_EQ(wc.byte_len, 256);
		T_CHECK_FILL(src.p, 256, 100 + i);
		T_EXPECT_WC(cqb, &wc, 2000 + i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}

	/* Resizing takes a new ring from the allocator, frees the old. */
	T_OK(ibv_resize_cq(ibv_cq_ex_to_cq(cqa), 300));
	T_EQ(pl.allocs, 3);
	T_EQ(pl.buf[2].type, SOFTRDMA_RES_TYPE_CQ);
	T_EQ(pl.frees, 1);
	T_ASSERT(pl.buf[0].freed);
	t_post_send(qa, magic + 1, IBV_WR_RDMA_WRITE, src.mr, src.p, 64,
		    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	T_EXPECT_WC(ibv_cq_ex_to_cq(cqa), &wc, magic + 1, IBV_WC_SUCCESS,
		    IBV_WC_RDMA_WRITE);
	T_ASSERT(holds(pl.buf[2].p, pl.buf[2].size, magic + 1));

	/* An SRQ on it: its ring too; it holds the parent domain. */
	srq = T_NONNULL(ibv_create_srq(pdom, &sa));
	T_EQ(pl.allocs, 4);
	T_EQ(pl.buf[3].type, SOFTRDMA_RES_TYPE_SRQ);
	t_post_srq_recv(srq, magic + 2, dst.mr, dst.p, 64);
	T_ASSERT(holds(pl.buf[3].p, pl.buf[3].size, magic + 2));
	T_OK(ibv_destroy_qp(qa));
	T_EQ(pl.frees, 2);
	T_ASSERT(pl.buf[1].freed);
	T_RET(ibv_dealloc_pd(pdom), EBUSY);
	T_OK(ibv_destroy_srq(srq));
	T_EQ(pl.frees, 3);
	T_ASSERT(pl.buf[3].freed);

	/* In use by the CQ: EBUSY. */
	T_RET(ibv_dealloc_pd(pdom), EBUSY);
	T_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)));
	T_EQ(pl.frees, 4);
	T_ASSERT(pl.buf[2].freed);

	/* An allocator with nothing to give: ENOMEM. */
	pl.mode = NOTHING;
	T_NULL_ERRNO(cq_on(&d, pdom), ENOMEM);
	T_EQ(pl.frees, 4);
	T_OK(ibv_dealloc_pd(pdom));
	T_OK(ibv_dealloc_td(td));

	/* IBV_ALLOCATOR_USE_DEFAULT: asked, then the library's memory. */
	pa.td = NULL;
	pa.pd_context = &pl2;
	pdom2 = T_NONNULL(ibv_alloc_parent_domain(d.ctx, &pa));
	cqa = T_NONNULL(cq_on(&d, pdom2));
	qa = T_NONNULL(qp_on(&d, pdom2, ibv_cq_ex_to_cq(cqa)));
	T_EQ(pl2.allocs, 2);
	T_OK(ibv_destroy_qp(qb));
	qb = T_NONNULL(qp_on(&d, d.pd, cqb));
	t_ep_local(&d, qa, 0x33, &ea);
	t_ep_local(&d, qb, 0x44, &eb);
	t_qp_connect(qa, ea.psn, &eb, &o);
	t_qp_connect(qb, eb.psn, &ea, &o);
	t_fill(src.p, 100, 9);
	t_post_send(qa, 7, IBV_WR_RDMA_WRITE, src.mr, src.p, 100,
		    IBV_SEND_SIGNALED, (uintptr_t)dst.p, dst.mr->rkey);
	T_EXPECT_WC(ibv_cq_ex_to_cq(cqa), &wc, 7, IBV_WC_SUCCESS,
		    IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(dst.p, 100, 9);
	T_OK(ibv_destroy_qp(qa));
	T_OK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)));
	T_EQ(pl2.frees, 0);
	T_OK(ibv_dealloc_pd(pdom2));

	t_buf_free(&src);
	t_buf_free(&dst);
	T_OK(ibv_destroy_qp(qb));
	T_OK(ibv_destroy_cq(cqb));
	t_dev_close(&d);
	t_pass();
}
