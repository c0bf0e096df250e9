/* SPDX-License-Identifier: MIT */
/*
 * ibv_advise_mr, through the library's exported functions
 * (SOFTRDMA_NO_INLINE_VERBS: ibv_advise_mr and ibv_query_device_ex are
 * symbols, not the header's inline bodies).  PREFETCH_WRITE and PREFETCH
 * fault the pages in (mincore: resident afterwards), NO_FAULT faults
 * nothing; FLUSH returns once done.  Errors as mlx5 gives them: an unknown
 * advice EOPNOTSUPP, an unknown flag, no SGE or too many EINVAL; an lkey
 * that is no ODP MR of the PD (an ordinary MR, another PD's, a stale one,
 * a read-only MR for PREFETCH_WRITE) EINVAL, or ENOENT with FLUSH; a range
 * outside the MR or not mapped: EFAULT with FLUSH, nothing reported
 * without it.  Prefetched memory then works for traffic as ever.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_util.h"

#define PG 4096
#define NPG 64
#define LEN (NPG * PG)
#define ODP (T_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)
#define PF IBV_ADVISE_MR_ADVICE_PREFETCH
#define PFW IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE
#define PFN IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT
#define FLUSH IBV_ADVISE_MR_FLAG_FLUSH

static unsigned int resident(const uint8_t *p, size_t npg)
{
	unsigned char v[NPG];
	unsigned int n = 0;

	T_OK(mincore((void *)p, npg * PG, v));
	for (size_t i = 0; i < npg; i++)
		n += v[i] & 1;
	return n;
}

static uint8_t *fresh(void)
{
	uint8_t *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED);
	T_EQ(resident(p, NPG), 0);
	return p;
}

static int advise1(struct ibv_pd *pd, int advice, uint32_t flags, uint32_t lkey,
		   const void *addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };

	return ibv_advise_mr(pd, (enum ibv_advise_mr_advice)advice, flags, &sge,
			     1);
}

static void prefetches(struct t_dev *d)
{
	uint8_t *m = fresh();
	struct ibv_mr *mr = T_NONNULL(ibv_reg_mr(d->pd, m, LEN, ODP));
	struct ibv_sge sg[3];

	T_EQ(resident(m, NPG), 0); /* registering touched nothing */
	T_OK(advise1(d->pd, PFN, FLUSH, mr->lkey, m, LEN));
	T_EQ(resident(m, NPG), 0);
	T_OK(advise1(d->pd, PFW, FLUSH, mr->lkey, m + 2 * PG, 3 * PG));
	T_EQ(resident(m, NPG), 3);
	T_EQ(resident(m + 2 * PG, 3), 3);
	/* Without FLUSH: done all the same (before the return, here). */
	T_OK(advise1(d->pd, PFW, 0, mr->lkey, m + 10 * PG + 1, PG));
	T_EQ(resident(m + 10 * PG, 2), 2);
	/* Several SGEs at once. */
	for (int i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(m + (20 + 4 * i) * PG),
					  PG, mr->lkey };
	T_OK(ibv_advise_mr(d->pd, PFW, FLUSH, sg, 3));
	T_EQ(resident(m, NPG), 8);
	/* A read prefetch needs no write right. */
	T_OK(advise1(d->pd, PF, FLUSH, mr->lkey, m + 40 * PG, PG));
	T_OK(ibv_dereg_mr(mr));
	T_OK(munmap(m, LEN));
}

static void errors(struct t_dev *d)
{
	uint8_t *m = fresh(), *o = t_zalloc(PG);
	struct ibv_pd *pd2 = T_NONNULL(ibv_alloc_pd(d->ctx));
	struct ibv_mr *mr = T_NONNULL(ibv_reg_mr(d->pd, m, LEN, ODP));
	struct ibv_mr *plain =
		T_NONNULL(ibv_reg_mr(d->pd, o, PG, T_ACCESS_ALL));
	struct ibv_mr *ro = T_NONNULL(ibv_reg_mr(
		d->pd, m, LEN, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_READ));
	struct ibv_mr *other = T_NONNULL(ibv_reg_mr(pd2, m, LEN, ODP));
	struct ibv_mr *gone = T_NONNULL(ibv_reg_mr(d->pd, m, LEN, ODP));
	struct ibv_sge many[257];
	uint32_t stale = gone->lkey;

	T_OK(ibv_dereg_mr(gone));
	T_EQ(advise1(d->pd, 3, FLUSH, mr->lkey, m, PG), EOPNOTSUPP);
	T_EQ(advise1(d->pd, 99, 0, mr->lkey, m, PG), EOPNOTSUPP);
	T_EQ(advise1(d->pd, PF, 2, mr->lkey, m, PG), EINVAL);
	T_EQ(ibv_advise_mr(d->pd, PF, FLUSH, many, 0), EINVAL);
	for (int i = 0; i < 257; i++)
		many[i] = (struct ibv_sge){ (uintptr_t)m, 8, mr->lkey };
	T_EQ(ibv_advise_mr(d->pd, PF, FLUSH, many, 257), EINVAL);
	T_OK(ibv_advise_mr(d->pd, PF, FLUSH, many, 256));
	/* Not an ODP MR of this PD. */
	T_EQ(advise1(d->pd, PF, FLUSH, plain->lkey, o, 8), ENOENT);
	T_EQ(advise1(d->pd, PF, 0, plain->lkey, o, 8), EINVAL);
	T_EQ(advise1(d->pd, PF, FLUSH, other->lkey, m, 8), ENOENT);
	T_EQ(advise1(d->pd, PF, 0, other->lkey, m, 8), EINVAL);
	T_EQ(advise1(d->pd, PF, FLUSH, stale, m, 8), ENOENT);
	T_EQ(advise1(d->pd, PF, FLUSH, mr->lkey ^ 0x80, m, 8), ENOENT);
	T_EQ(advise1(d->pd, PFW, FLUSH, ro->lkey, m, 8), ENOENT);
	T_OK(advise1(d->pd, PF, FLUSH, ro->lkey, m, 8));
	T_OK(advise1(pd2, PF, FLUSH, other->lkey, m, 8));
	/* One bad SGE spoils the lot. */
	many[1].lkey = plain->lkey;
	T_EQ(ibv_advise_mr(d->pd, PF, FLUSH, many, 3), ENOENT);
	/* Out of range. */
	T_EQ(advise1(d->pd, PF, FLUSH, mr->lkey, m + LEN - 4, 8), EFAULT);
	T_EQ(advise1(d->pd, PF, FLUSH, mr->lkey, m - 1, 8), EFAULT);
	T_OK(advise1(d->pd, PF, 0, mr->lkey, m + LEN - 4, 8));
	/* Not mapped (or not writable) any more. */
	T_OK(mprotect(m + PG, PG, PROT_READ));
	T_EQ(advise1(d->pd, PFW, FLUSH, mr->lkey, m + PG, 8), EFAULT);
	T_OK(advise1(d->pd, PF, FLUSH, mr->lkey, m + PG, 8));
	T_OK(munmap(m + 2 * PG, PG));
	T_EQ(advise1(d->pd, PF, FLUSH, mr->lkey, m + 2 * PG, 8), EFAULT);
	T_OK(advise1(d->pd, PF, 0, mr->lkey, m + 2 * PG, 8));
	T_OK(advise1(d->pd, PFN, FLUSH, mr->lkey, m + 2 * PG, 8));

	T_OK(ibv_dereg_mr(mr));
	T_OK(ibv_dereg_mr(ro));
	T_OK(ibv_dereg_mr(other));
	T_OK(ibv_dereg_mr(plain));
	T_OK(ibv_dealloc_pd(pd2));
	t_free(o, PG);
	T_OK(munmap(m, LEN));
}

/* Prefetched (and not) memory as the target of a peer. */
static void traffic(struct t_dev *d)
{
	uint8_t *m = fresh();
	struct ibv_mr *mr = T_NONNULL(ibv_reg_mr(d->pd, m, LEN, ODP));
	struct t_buf src;
	struct t_pair p;

	t_buf_alloc(d, &src, 2 * PG, T_ACCESS_ALL);
	T_OK(advise1(d->pd, PFW, FLUSH, mr->lkey, m, 2 * PG));
	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	for (int i = 0; i < 2; i++) {
		uint8_t *at = m + i * 30 * PG + 5;

		t_fill(src.p, 2 * PG, (uint32_t)i);
		t_post_send(p.a, (uint64_t)i, IBV_WR_RDMA_WRITE, src.mr, src.p,
			    2 * PG, IBV_SEND_SIGNALED, (uintptr_t)at, mr->rkey);
		T_EXPECT_WC(p.cq_a, NULL, (uint64_t)i, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(at, 2 * PG, (uint32_t)i);
	}
	t_pair_destroy(&p);
	t_buf_free(&src);
	T_OK(ibv_dereg_mr(mr));
	T_OK(munmap(m, LEN));
}

int main(void)
{
	struct ibv_device_attr_ex ax;
	struct t_dev d;

	t_init("odp_advise");
	/* The exported symbols are what this program calls. */
	T_ASSERT(dlsym(RTLD_DEFAULT, "ibv_advise_mr"));
	T_ASSERT(dlsym(RTLD_DEFAULT, "ibv_query_device_ex"));
	t_dev_open(&d);
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_ASSERT(ax.odp_caps.general_caps & IBV_ODP_SUPPORT);
	prefetches(&d);
	errors(&d);
	traffic(&d);
	t_dev_close(&d);
	return 0;
}
