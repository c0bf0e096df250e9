/* SPDX-License-Identifier: MIT */
/*
 * Device memory of a shared context.  The parent allocates a DM, fills its
 * first 4 KiB, registers a zero-based MR over it and hands its cmd_fd to a
 * forked child (SCM_RIGHTS), which imports the device, the PD, the DM
 * (ibv_import_dm) and the DM MR, and:
 *   - reads the parent's bytes with ibv_memcpy_from_dm and writes its own
 *     with ibv_memcpy_to_dm: one memory, both processes see both;
 *   - registers an MR of its own over the imported DM, on the imported
 *     PD, and moves data with it on QPs of its own: an RDMA WRITE into it,
 *     an RDMA READ out of it, and a SEND whose local SGE is the parent's
 *     imported DM MR (zero based: the SGE address is the offset);
 *   - unimports the DM: the memory stays the context's; the parent then
 *     reads what the child's copies and WRITE left, and frees it (EBUSY
 *     while its own MR is on it).
 */
#include <string.h>

#include "t_util.h"

#define DM_LEN 8192
#define LEN 4096
#define ACC                                               \
	(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
	 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* Where each side's bytes go in the DM. */
#define OFF_PARENT 0   /* LEN bytes of seed 1, by the parent */
#define OFF_COPY 4096  /* 1024 bytes of seed 2, ibv_memcpy_to_dm */
#define OFF_WRITE 6144 /* 2048 bytes of seed 3, an RDMA WRITE */
#define SEED_PARENT 1
#define SEED_COPY 2
#define SEED_WRITE 3

struct msg {
	uint32_t pd_handle, dm_handle, dm_mr_handle, dm_mr_lkey;
};

static int child(int sock, void *arg)
{
	struct ibv_mr *own_dm_mr, *pdm_mr;
	struct ibv_context *ctx;
	struct ibv_dm *dm;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	struct t_buf src, dst;
	struct t_pair p;
	struct t_dev d;
	struct msg m;
	uint8_t *host;
	int fd;

	(void)arg;
	fd = t_sock_recv_fd(sock, &m, sizeof(m));
	ctx = T_NONNULL(ibv_import_device(fd));
	pd = T_NONNULL(ibv_import_pd(ctx, m.pd_handle));
	dm = T_NONNULL(ibv_import_dm(ctx, m.dm_handle));
	T_EQ(dm->handle, m.dm_handle);
	pdm_mr = T_NONNULL(ibv_import_mr(pd, m.dm_mr_handle));
	T_EQ(pdm_mr->lkey, m.dm_mr_lkey);
	T_EQ(pdm_mr->length, DM_LEN);

	/* Copies: the parent's bytes are here, ours go there. */
	host = t_zalloc(DM_LEN);
	T_OK(ibv_memcpy_from_dm(host, dm, OFF_PARENT, LEN));
	T_CHECK_FILL(host, LEN, SEED_PARENT);
	t_fill(host, 1024, SEED_COPY);
	T_OK(ibv_memcpy_to_dm(dm, OFF_COPY, host, 1024));

	/* An MR of our own over the imported DM, on the imported PD. */
	memset(&d, 0, sizeof(d));
	d.ctx = ctx;
	d.pd = pd;
	T_OK(ibv_query_device(ctx, &d.attr));
	T_OK(ibv_query_port(ctx, T_PORT, &d.port));
	T_OK(ibv_query_gid(ctx, T_PORT, T_GID_INDEX, &d.gid));
	own_dm_mr = T_NONNULL(ibv_reg_dm_mr(pd, dm, 0, DM_LEN, ACC));
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, LEN, T_ACCESS_ALL);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);

	/* RDMA WRITE into the DM, zero-based remote address. */
	t_fill(src.p, 2048, SEED_WRITE);
	t_post_send(p.a, 1, IBV_WR_RDMA_WRITE, src.mr, src.p, 2048,
		    IBV_SEND_SIGNALED, OFF_WRITE, own_dm_mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	memset(host, 0, DM_LEN);
	T_OK(ibv_memcpy_from_dm(host, dm, OFF_WRITE, 2048));
	T_CHECK_FILL(host, 2048, SEED_WRITE);

	/* RDMA READ of the parent's bytes out of it. */
	t_post_send(p.a, 2, IBV_WR_RDMA_READ, dst.mr, dst.p, LEN,
		    IBV_SEND_SIGNALED, OFF_PARENT, own_dm_mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(dst.p, LEN, SEED_PARENT);

	/* A SEND from the parent's DM MR, imported: our copy's bytes. */
	memset(dst.p, 0, LEN);
	t_post_recv(p.b, 3, dst.mr, dst.p, LEN);
	t_post_send(p.a, 4, IBV_WR_SEND, pdm_mr, (void *)(uintptr_t)OFF_COPY,
		    1024, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 1024);
	T_CHECK_FILL(dst.p, 1024, SEED_COPY);

	t_pair_destroy(&p);
	t_buf_free(&src);
	t_buf_free(&dst);
	T_OK(ibv_dereg_mr(own_dm_mr));
	ibv_unimport_mr(pdm_mr);
	/* Only our mapping goes; the DM is the context's. */
	ibv_unimport_dm(dm);
	ibv_unimport_pd(pd);
	T_OK(ibv_close_device(ctx));
	t_free(host, DM_LEN);
	t_sock_sync(sock);
	return 0;
}

int main(void)
{
	struct ibv_alloc_dm_attr a = { .length = DM_LEN };
	struct ibv_mr *dm_mr;
	struct ibv_dm *dm;
	struct t_child c;
	struct t_dev d;
	struct msg m;
	uint8_t *host;

	t_init("import_dm");
	t_dev_open(&d);
	dm = T_NONNULL(ibv_alloc_dm(d.ctx, &a));
	host = t_zalloc(DM_LEN);
	t_fill(host, LEN, SEED_PARENT);
	T_OK(ibv_memcpy_to_dm(dm, OFF_PARENT, host, LEN));
	dm_mr = T_NONNULL(ibv_reg_dm_mr(d.pd, dm, 0, DM_LEN, ACC));

	t_fork(&c, child, NULL);
	m.pd_handle = d.pd->handle;
	m.dm_handle = dm->handle;
	m.dm_mr_handle = dm_mr->handle;
	m.dm_mr_lkey = dm_mr->lkey;
	t_sock_send_fd(c.fd, d.ctx->cmd_fd, &m, sizeof(m));
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, 10000), 0);

	/* What the child's copy and WRITE left, through our own mapping. */
	memset(host, 0, DM_LEN);
	T_OK(ibv_memcpy_from_dm(host, dm, 0, DM_LEN));
	T_CHECK_FILL(host + OFF_PARENT, LEN, SEED_PARENT);
	T_CHECK_FILL(host + OFF_COPY, 1024, SEED_COPY);
	T_CHECK_FILL(host + OFF_WRITE, 2048, SEED_WRITE);
	/* The child's MR on it is gone (it deregistered it): only ours is
	 * left, and with it the DM is busy. */
	T_RET(ibv_free_dm(dm), EBUSY);
	T_OK(ibv_dereg_mr(dm_mr));
	T_OK(ibv_free_dm(dm));
	t_free(host, DM_LEN);
	t_dev_close(&d);
	t_pass();
}
