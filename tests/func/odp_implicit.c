/* SPDX-License-Identifier: MIT */
/*
 * Implicit ODP: ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND | ...)
 * is one MR over the whole address space, at iova == address.  The
 * kernel's rules (mlx5's): without ON_DEMAND, or with another iova, it is
 * EINVAL.  Its keys reach the heap, the stack, and memory mapped after the
 * registration; an address where nothing is mapped gives the peer
 * IBV_WC_REM_ACCESS_ERR and a local SGE IBV_WC_LOC_PROT_ERR; and memory
 * another process has at an address we do not is never reached through
 * it (the same address in a forked child holds other bytes: not those).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_util.h"

#define PG 4096
#define ODP (T_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)
#define AT T_FIXED_ADDR(2)

static struct t_dev d;
static struct ibv_mr *imr;
static struct t_buf peer;

static enum ibv_wc_status op(enum ibv_wr_opcode opc, struct ibv_mr *lmr,
			     void *laddr, uint32_t len, const void *raddr,
			     uint32_t rkey)
{
	struct ibv_wc wc;
	struct t_pair p;

	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_post_send(p.a, 1, opc, lmr, laddr, len, IBV_SEND_SIGNALED,
		    (uintptr_t)raddr, rkey);
	T_ASSERT(t_poll(p.cq_a, &wc, T_WAIT_MS) == 1);
	t_pair_destroy(&p);
	return wc.status;
}

/* A peer WRITE and READ back through the implicit rkey at buf. */
static void reachable(uint8_t *buf, uint32_t len, uint32_t seed)
{
	t_fill(peer.p, len, seed);
	T_EQ(op(IBV_WR_RDMA_WRITE, peer.mr, peer.p, len, buf, imr->rkey),
	     IBV_WC_SUCCESS);
	T_CHECK_FILL(buf, len, seed);
	memset(peer.p, 0, len);
	T_EQ(op(IBV_WR_RDMA_READ, peer.mr, peer.p, len, buf, imr->rkey),
	     IBV_WC_SUCCESS);
	T_CHECK_FILL(peer.p, len, seed);
	/* And as the local side, through the implicit lkey. */
	t_fill(buf, len, seed + 1);
	T_EQ(op(IBV_WR_RDMA_WRITE, imr, buf, len, peer.p, peer.mr->rkey),
	     IBV_WC_SUCCESS);
	T_CHECK_FILL(peer.p, len, seed + 1);
}

static void rules(void)
{
	T_NULL_ERRNO(ibv_reg_mr(d.pd, NULL, SIZE_MAX, T_ACCESS_ALL), EINVAL);
	T_NULL_ERRNO(ibv_reg_mr_iova(d.pd, NULL, SIZE_MAX, 0x1000, ODP),
		     EINVAL);
	T_NULL_ERRNO(ibv_reg_mr(d.pd, NULL, SIZE_MAX,
				IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_WRITE),
		     EINVAL);
	/* An ODP MR may not wrap around the address space either. */
	T_NULL_ERRNO(ibv_reg_mr(d.pd, (void *)PG, SIZE_MAX, ODP), EINVAL);
}

/* A child maps AT (we do not) and holds its bytes there while the peer
 * tries them through our implicit rkey. */
static int child_maps(int fd, void *arg)
{
	uint8_t *p = mmap(AT, PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
			  0);

	(void)arg;
	T_ASSERT(p == AT);
	memset(p, 0xc5, PG);
	t_sock_sync(fd);
	t_sock_sync(fd);
	for (size_t i = 0; i < PG; i++)
		T_EQ(p[i], 0xc5);
	return 0;
}

static void other_process(void)
{
	struct t_child c;
	uint8_t *h;

	t_fork(&c, child_maps, NULL);
	t_sock_sync(c.fd);
	memset(peer.p, 0, PG);
	T_EQ(op(IBV_WR_RDMA_READ, peer.mr, peer.p, PG, AT, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	for (size_t i = 0; i < PG; i++)
		T_EQ(peer.p[i], 0);
	t_fill(peer.p, PG, 90);
	T_EQ(op(IBV_WR_RDMA_WRITE, peer.mr, peer.p, PG, AT, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);

	/* Inherited pages: the child's copy after fork() is its own. */
	h = t_zalloc(PG);
	memset(h, 0x33, PG);
	t_fork(&c, child_maps, NULL);
	t_sock_sync(c.fd);
	reachable(h, PG, 91);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	t_free(h, PG);
}

int main(void)
{
	uint8_t stack[3000], *heap, *later;

	t_init("odp_implicit");
	t_dev_open(&d);
	t_buf_alloc(&d, &peer, 4 * PG, T_ACCESS_ALL);
	rules();
	imr = T_NONNULL(ibv_reg_mr(d.pd, NULL, SIZE_MAX, ODP));
	T_EQ(imr->addr, NULL);
	T_EQ(imr->length, SIZE_MAX);

	heap = malloc(10000);
	T_ASSERT(heap);
	reachable(heap + 3, 9000, 10);
	reachable(stack, sizeof(stack), 20);
	/* Mapped after registration (far from where the kernel puts new
	 * mappings, so none of the rings made below lands there). */
	later = mmap(AT + (1ull << 34), 3 * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	T_ASSERT(later == AT + (1ull << 34));
	reachable(later + PG - 10, PG + 20, 30);
	/* Unmapped again. */
	T_OK(munmap(later, 3 * PG));
	T_EQ(op(IBV_WR_RDMA_READ, peer.mr, peer.p, 8, later + PG, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	T_EQ(op(IBV_WR_RDMA_WRITE, peer.mr, peer.p, 8, later, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	T_EQ(op(IBV_WR_RDMA_WRITE, imr, later, 8, peer.p, peer.mr->rkey),
	     IBV_WC_LOC_PROT_ERR);
	/* Page 0 is never mapped. */
	T_EQ(op(IBV_WR_RDMA_READ, peer.mr, peer.p, 8, (void *)16, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	other_process();

	/* Access and PD may change; a translation needs a range. */
	T_OK(ibv_rereg_mr(imr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND |
				  IBV_ACCESS_REMOTE_READ));
	T_EQ(op(IBV_WR_RDMA_WRITE, peer.mr, peer.p, 8, heap, imr->rkey),
	     IBV_WC_REM_ACCESS_ERR);
	T_EQ(ibv_rereg_mr(imr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  T_ACCESS_ALL),
	     IBV_REREG_MR_ERR_CMD);
	T_EQ(errno, EINVAL);
	free(heap);
	T_OK(ibv_dereg_mr(imr));
	t_buf_free(&peer);
	t_dev_close(&d);
	return 0;
}
