/* SPDX-License-Identifier: MIT */
/*
 * An ODP MR follows the address space after registration, as a NIC
 * walking the page tables does.  Part of it unmapped: a peer's WRITE or
 * READ there completes with IBV_WC_REM_ACCESS_ERR, a local SGE there with
 * IBV_WC_LOC_PROT_ERR, the rest of the MR still works.  Mapped again
 * (other pages at the same address): reachable, no re-registration.
 * mprotect: PROT_READ refuses WRITEs and allows READs, PROT_NONE refuses
 * both (the daemon's /proc/PID/mem would reach such pages anyway: the
 * check is its own), PROT_READ|PROT_WRITE again allows both.
 */
#include <sys/mman.h>

#include "t_util.h"

#define PG 4096
#define LEN (8 * PG)
#define AT T_FIXED_ADDR(1)

struct odp_env {
	struct t_dev d;
	uint8_t *m; /* the ODP MR's memory */
	struct ibv_mr *mr;
	struct t_buf loc; /* an ordinary MR, the other end of transfers */
};

/* One operation from a fresh RC pair (an error ends a QP). */
static enum ibv_wc_status op(struct odp_env *e, enum ibv_wr_opcode opc,
			     struct ibv_mr *lmr, void *laddr, uint32_t len,
			     void *raddr, uint32_t rkey)
{
	struct t_pair p;
	struct ibv_wc wc;

	t_pair_create(&e->d, &p, IBV_QPT_RC, NULL, NULL);
	t_post_send(p.a, 1, opc, lmr, laddr, len, IBV_SEND_SIGNALED,
		    (uintptr_t)raddr, rkey);
	T_ASSERT(t_poll(p.cq_a, &wc, T_WAIT_MS) == 1);
	T_EQ(wc.wr_id, 1);
	t_pair_destroy(&p);
	return wc.status;
}

/* A peer WRITEs len bytes of seed at off of the ODP MR. */
static enum ibv_wc_status peer_write(struct odp_env *e, size_t off,
				     uint32_t len, uint32_t seed)
{
	t_fill(e->loc.p, len, seed);
	return op(e, IBV_WR_RDMA_WRITE, e->loc.mr, e->loc.p, len, e->m + off,
		  e->mr->rkey);
}

/* A peer READs len bytes at off of the ODP MR into loc. */
static enum ibv_wc_status peer_read(struct odp_env *e, size_t off, uint32_t len)
{
	memset(e->loc.p, 0, len);
	return op(e, IBV_WR_RDMA_READ, e->loc.mr, e->loc.p, len, e->m + off,
		  e->mr->rkey);
}

/* The ODP MR's bytes at off as the local source of a WRITE to loc. */
static enum ibv_wc_status local_src(struct odp_env *e, size_t off, uint32_t len)
{
	memset(e->loc.p, 0, len);
	return op(e, IBV_WR_RDMA_WRITE, e->mr, e->m + off, len, e->loc.p,
		  e->loc.mr->rkey);
}

/* The ODP MR's bytes at off as the local destination of a READ. */
static enum ibv_wc_status local_dst(struct odp_env *e, size_t off, uint32_t len,
				    uint32_t seed)
{
	t_fill(e->loc.p, len, seed);
	return op(e, IBV_WR_RDMA_READ, e->mr, e->m + off, len, e->loc.p,
		  e->loc.mr->rkey);
}

static void all_work(struct odp_env *e, size_t off, uint32_t seed)
{
	T_EQ(peer_write(e, off, PG, seed), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->m + off, PG, seed);
	T_EQ(peer_read(e, off, PG), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->loc.p, PG, seed);
	t_fill(e->m + off, PG, seed + 1);
	T_EQ(local_src(e, off, PG), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->loc.p, PG, seed + 1);
	T_EQ(local_dst(e, off, PG, seed + 2), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->m + off, PG, seed + 2);
}

static void unmapped(struct odp_env *e)
{
	uint8_t *hole = e->m + 2 * PG;

	all_work(e, 2 * PG, 10);
	T_OK(munmap(hole, 2 * PG));
	T_EQ(peer_write(e, 2 * PG, PG, 11), IBV_WC_REM_ACCESS_ERR);
	T_EQ(peer_read(e, 3 * PG, 16), IBV_WC_REM_ACCESS_ERR);
	/* Straddling the hole's edge is as bad. */
	T_EQ(peer_write(e, PG + PG / 2, PG, 12), IBV_WC_REM_ACCESS_ERR);
	T_EQ(local_src(e, 2 * PG, 64), IBV_WC_LOC_PROT_ERR);
	T_EQ(local_dst(e, 3 * PG, 64, 13), IBV_WC_LOC_PROT_ERR);
	/* The rest of the MR does not care. */
	all_work(e, 0, 20);
	all_work(e, 5 * PG, 30);

	/* New pages at the same address: the same MR reaches them. */
	T_ASSERT(mmap(hole, 2 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == hole);
	all_work(e, 2 * PG, 40);
	all_work(e, 3 * PG, 50);
}

static void protected(struct odp_env *e)
{
	uint8_t *pg = e->m + 6 * PG;

	t_fill(pg, PG, 60);
	T_OK(mprotect(pg, PG, PROT_READ));
	T_EQ(peer_write(e, 6 * PG, 8, 61), IBV_WC_REM_ACCESS_ERR);
	T_EQ(local_dst(e, 6 * PG, 8, 62), IBV_WC_LOC_PROT_ERR);
	T_CHECK_FILL(pg, PG, 60); /* nothing written */
	T_EQ(peer_read(e, 6 * PG, PG), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->loc.p, PG, 60);
	T_EQ(local_src(e, 6 * PG, PG), IBV_WC_SUCCESS);
	T_CHECK_FILL(e->loc.p, PG, 60);

	T_OK(mprotect(pg, PG, PROT_NONE));
	T_EQ(peer_read(e, 6 * PG, 8), IBV_WC_REM_ACCESS_ERR);
	T_EQ(peer_write(e, 6 * PG, 8, 63), IBV_WC_REM_ACCESS_ERR);
	T_EQ(local_src(e, 6 * PG, 8), IBV_WC_LOC_PROT_ERR);

	T_OK(mprotect(pg, PG, PROT_READ | PROT_WRITE));
	T_CHECK_FILL(pg, PG, 60);
	all_work(e, 6 * PG, 70);
}

int main(void)
{
	struct odp_env e;

	t_init("odp_unmapped");
	t_dev_open(&e.d);
	/* Far from where new mappings go: no ring of the QPs made below
	 * lands in the holes. */
	e.m = mmap(AT, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	T_ASSERT(e.m == AT);
	e.mr = T_NONNULL(ibv_reg_mr(e.d.pd, e.m, LEN,
				    T_ACCESS_ALL | IBV_ACCESS_ON_DEMAND));
	t_buf_alloc(&e.d, &e.loc, 2 * PG, T_ACCESS_ALL);

	unmapped(&e);
	protected(&e);

	/* Wholly unmapped: deregistration is still clean. */
	T_OK(munmap(e.m, LEN));
	T_EQ(peer_read(&e, 0, 8), IBV_WC_REM_ACCESS_ERR);
	T_OK(ibv_dereg_mr(e.mr));
	t_buf_free(&e.loc);
	t_dev_close(&e.d);
	return 0;
}
