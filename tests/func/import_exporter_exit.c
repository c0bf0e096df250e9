/* SPDX-License-Identifier: MIT */
/*
 * The exporter of a context goes first.  As in the kernel, where the
 * uverbs file lives while any descriptor of it is open, the context lives
 * while the importer holds the cmd_fd: its PD, its MRs and the handles in
 * it stay, whether the exporter closed its context before it exited or
 * simply died.  A forked child (the exporter) registers an MR and an ODP
 * MR, hands its cmd_fd over (SCM_RIGHTS) and exits; then the parent:
 *   - imports the PD and the MRs again by handle (the context answers),
 *     allocates a PD and an MR of its own on the imported PD;
 *   - moves data through the exporter's ordinary MR.  Moved onto a memfd
 *     (the default for root, forced here), its pages outlive the
 *     exporter's address space as pinned pages outlive an exited process:
 *     the bytes the exporter left are read back, and a WRITE into it and
 *     a READ of it round-trip.  Reached in place (SOFTRDMA_MOVE_GUARD=none,
 *     func.import_exporter_exit_inplace), it went with its address space:
 *     a WRITE from it completes with IBV_WC_LOC_PROT_ERR;
 *   - the ODP MR asks the exporter's page tables, which are gone:
 *     IBV_WC_LOC_PROT_ERR in every mode, as a failed page fault;
 *   - after the failures, QPs and MRs of its own still work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_util.h"

#define LEN 65536
#define HALF (LEN / 2)
#define SEED_EXPORTER 7
#define SEED_IMPORTER 9

struct msg {
	uint32_t pd_handle, mr_handle, odp_handle;
	uint32_t lkey, rkey, odp_lkey;
	uint64_t addr, odp_addr;
};

static int exporter(int sock, void *arg)
{
	bool close_first = *(bool *)arg;
	struct ibv_mr *odp;
	struct t_buf b;
	struct t_dev d;
	struct msg m;
	uint8_t *op;

	t_dev_open(&d);
	t_buf_alloc(&d, &b, LEN, T_ACCESS_ALL);
	t_fill(b.p, HALF, SEED_EXPORTER);
	memset(b.p + HALF, 0, HALF);
	op = t_zalloc(LEN);
	t_fill(op, LEN, SEED_EXPORTER);
	odp = T_NONNULL(
		ibv_reg_mr(d.pd, op, LEN, T_ACCESS_ALL | IBV_ACCESS_ON_DEMAND));
	m.pd_handle = d.pd->handle;
	m.mr_handle = b.mr->handle;
	m.odp_handle = odp->handle;
	m.lkey = b.mr->lkey;
	m.rkey = b.mr->rkey;
	m.odp_lkey = odp->lkey;
	m.addr = (uintptr_t)b.p;
	m.odp_addr = (uintptr_t)op;
	t_sock_send_fd(sock, d.ctx->cmd_fd, &m, sizeof(m));
	t_sock_sync(sock);
	/* Nothing destroyed: the objects are the context's. */
	if (close_first)
		T_OK(ibv_close_device(d.ctx));
	_exit(0);
}

/* A WRITE of len bytes from (mr, addr) into (raddr, rkey) on a fresh
 * pair; the status of its completion. */
static enum ibv_wc_status one_op(struct t_dev *d, enum ibv_wr_opcode op,
				 struct ibv_mr *mr, uint64_t addr, uint32_t len,
				 uint64_t raddr, uint32_t rkey)
{
	struct t_pair p;
	struct ibv_wc wc;

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	t_post_send(p.a, 1, op, mr, (void *)(uintptr_t)addr, len,
		    IBV_SEND_SIGNALED, raddr, rkey);
	T_EQ(t_poll(p.cq_a, &wc, T_WAIT_MS), 1);
	T_EQ(wc.wr_id, 1);
	t_pair_destroy(&p);
	return wc.status;
}

static void run(bool close_first, bool moved)
{
	struct ibv_mr *imr, *iodp, *again;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *ipd2, *own_pd;
	struct t_child c;
	struct t_buf mine;
	struct t_dev d;
	struct msg m;
	int fd;

	t_fork(&c, exporter, &close_first);
	fd = t_sock_recv_fd(c.fd, &m, sizeof(m));
	ctx = T_NONNULL(ibv_import_device(fd));
	pd = T_NONNULL(ibv_import_pd(ctx, m.pd_handle));
	imr = T_NONNULL(ibv_import_mr(pd, m.mr_handle));
	iodp = T_NONNULL(ibv_import_mr(pd, m.odp_handle));
	T_EQ(imr->lkey, m.lkey);
	T_EQ(iodp->lkey, m.odp_lkey);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, 10000), 0);

	/* The context is still there, with what the exporter made. */
	ipd2 = T_NONNULL(ibv_import_pd(ctx, m.pd_handle));
	again = T_NONNULL(ibv_import_mr(ipd2, m.mr_handle));
	T_EQ(again->rkey, m.rkey);
	T_EQ((uint64_t)(uintptr_t)again->addr, m.addr);
	T_EQ(again->length, LEN);
	ibv_unimport_mr(again);
	ibv_unimport_pd(ipd2);
	own_pd = T_NONNULL(ibv_alloc_pd(ctx));

	t_dev_of(&d, ctx, pd);
	t_buf_alloc(&d, &mine, LEN, T_ACCESS_ALL);
	if (moved) {
		/* The exporter's bytes, read by a WRITE from its MR. */
		T_EQ(one_op(&d, IBV_WR_RDMA_WRITE, imr, m.addr, HALF,
			    (uintptr_t)mine.p, mine.mr->rkey),
		     IBV_WC_SUCCESS);
		T_CHECK_FILL(mine.p, HALF, SEED_EXPORTER);
		/* Into its second half and back. */
		t_fill(mine.p + HALF, HALF, SEED_IMPORTER);
		T_EQ(one_op(&d, IBV_WR_RDMA_WRITE, mine.mr,
			    (uintptr_t)mine.p + HALF, HALF, m.addr + HALF,
			    m.rkey),
		     IBV_WC_SUCCESS);
		memset(mine.p, 0, HALF);
		T_EQ(one_op(&d, IBV_WR_RDMA_READ, mine.mr, (uintptr_t)mine.p,
			    HALF, m.addr + HALF, m.rkey),
		     IBV_WC_SUCCESS);
		T_CHECK_FILL(mine.p, HALF, SEED_IMPORTER);
	} else {
		T_EQ(one_op(&d, IBV_WR_RDMA_WRITE, imr, m.addr, HALF,
			    (uintptr_t)mine.p, mine.mr->rkey),
		     IBV_WC_LOC_PROT_ERR);
	}
	T_EQ(one_op(&d, IBV_WR_RDMA_WRITE, iodp, m.odp_addr, HALF,
		    (uintptr_t)mine.p, mine.mr->rkey),
	     IBV_WC_LOC_PROT_ERR);

	/* What is the importer's own works after those failures. */
	t_fill(mine.p, HALF, SEED_IMPORTER + 1);
	memset(mine.p + HALF, 0, HALF);
	T_EQ(one_op(&d, IBV_WR_RDMA_WRITE, mine.mr, (uintptr_t)mine.p, HALF,
		    (uintptr_t)mine.p + HALF, mine.mr->rkey),
	     IBV_WC_SUCCESS);
	T_CHECK_FILL(mine.p + HALF, HALF, SEED_IMPORTER + 1);

	t_buf_free(&mine);
	T_OK(ibv_dealloc_pd(own_pd));
	/* The last holder destroys what the exporter left. */
	T_OK(ibv_dereg_mr(iodp));
	T_OK(ibv_dereg_mr(imr));
	T_OK(ibv_dealloc_pd(pd));
	T_OK(ibv_close_device(ctx));
}

int main(void)
{
	const char *guard = getenv("SOFTRDMA_MOVE_GUARD");
	bool moved = !guard || strcmp(guard, "none");

	t_init("import_exporter_exit");
	if (moved)
		setenv("SOFTRDMA_MOVE_GUARD", "uffd", 1);
	run(false, moved); /* the exporter dies with its context open */
	run(true, moved);  /* it closes it first */
	t_pass();
}
