/* SPDX-License-Identifier: MIT */
/*
 * A forked child gets the parent's cmd_fd over a UNIX socket
 * (SCM_RIGHTS), imports the device, the PD and the MR, makes two QPs of
 * its own on the imported PD and WRITEs from the first half of the
 * parent's MR into its second half: the lkey and the rkey are the
 * parent's, the addresses the parent's (ibv_mr.addr), the pages the
 * parent's.  The parent checks the bytes.  A PD the child allocates is
 * the parent's to import, and stays after the child exits.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "t_util.h"

#define LEN 65536

struct msg {
	uint32_t pd_handle, mr_handle, lkey, new_pd;
	uint64_t addr;
};

static int child(int sock, void *arg)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct t_ep ea, eb;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *mine;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	struct t_dev d = { 0 };
	struct msg m;
	int fd = t_sock_recv_fd(sock, &m, sizeof(m));

	(void)arg;
	ctx = T_NONNULL(ibv_import_device(fd));
	pd = T_NONNULL(ibv_import_pd(ctx, m.pd_handle));
	mr = T_NONNULL(ibv_import_mr(pd, m.mr_handle));
	T_EQ(mr->lkey, m.lkey);
	T_EQ((uint64_t)(uintptr_t)mr->addr, m.addr);
	T_EQ(mr->length, LEN);
	d.ctx = ctx;
	d.pd = pd;
	T_OK(ibv_query_port(ctx, 1, &d.port));
	T_OK(ibv_query_gid(ctx, 1, T_GID_INDEX, &d.gid));
	cq = T_NONNULL(ibv_create_cq(ctx, 16, NULL, NULL, 0));
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	a = t_qp_create(&d, &ia);
	b = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	t_ep_local(&d, a, 100, &ea);
	t_ep_local(&d, b, 200, &eb);
	t_qp_connect(a, 100, &eb, &o);
	t_qp_connect(b, 200, &ea, &o);
	t_post_send(a, 1, IBV_WR_RDMA_WRITE, mr, mr->addr, LEN / 2,
		    IBV_SEND_SIGNALED, m.addr + LEN / 2, mr->rkey);
	T_EXPECT_WC(cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	mine = T_NONNULL(ibv_alloc_pd(ctx));
	m.new_pd = mine->handle;
	t_sock_send(sock, &m, sizeof(m));
	t_sock_sync(sock);
	T_OK(ibv_destroy_qp(a));
	T_OK(ibv_destroy_qp(b));
	T_OK(ibv_destroy_cq(cq));
	ibv_unimport_mr(mr);
	ibv_unimport_pd(pd);
	/* mine is left to the context, which outlives this process: only
	 * our own struct goes. */
	ibv_unimport_pd(mine);
	T_OK(ibv_close_device(ctx));
	return 0;
}

int main(void)
{
	struct t_child c;
	struct t_buf b;
	struct t_dev d;
	struct ibv_pd *pd;
	struct msg m;
	int fd;

	t_init("import_device");
	t_dev_open(&d);
	t_buf_alloc(&d, &b, LEN,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	t_fill(b.p, LEN / 2, 7);
	memset(b.p + LEN / 2, 0, LEN / 2);
	t_fork(&c, child, NULL);
	m.pd_handle = d.pd->handle;
	m.mr_handle = b.mr->handle;
	m.lkey = b.mr->lkey;
	m.addr = (uintptr_t)b.p;
	fd = dup(d.ctx->cmd_fd);
	T_ASSERT(fd >= 0);
	t_sock_send_fd(c.fd, fd, &m, sizeof(m));
	close(fd);
	t_sock_recv(c.fd, &m, sizeof(m));
	/* The child's WRITE went through our MR into our memory. */
	T_CHECK_FILL(b.p + LEN / 2, LEN / 2, 7);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, 10000), 0);
	/* What the importer made is the context's: it is still here. */
	pd = T_NONNULL(ibv_import_pd(d.ctx, m.new_pd));
	T_OK(ibv_dealloc_pd(pd));
	T_NULL_ERRNO(ibv_import_pd(d.ctx, m.new_pd), ENOENT);
	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
