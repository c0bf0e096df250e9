/* SPDX-License-Identifier: MIT */
/*
 * ibv_import_* errors, as rdma-core and uverbs give them: a descriptor
 * that is no cmd_fd (closed, a pipe, a socket of our own) is EINVAL; a
 * handle the context does not hold is ENOENT, one of another type EINVAL;
 * an MR imported into another PD is EINVAL.  A dup'ed cmd_fd in the same
 * process gives a second context on the same objects.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t_util.h"

int main(void)
{
	struct t_dev d;
	struct t_buf b;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2, *other, *ipd;
	struct ibv_mr *imr;
	struct ibv_cq *cq;
	int p[2], sv[2], fd;

	t_init("import_errors");
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	cq = t_cq_create(&d, 16, NULL);

	/* Not a cmd_fd. */
	T_NULL_ERRNO(ibv_import_device(-1), EINVAL);
	T_ASSERT(!pipe(p));
	T_NULL_ERRNO(ibv_import_device(p[0]), EINVAL);
	close(p[1]);
	T_NULL_ERRNO(ibv_import_device(p[1]), EINVAL); /* closed */
	close(p[0]);
	T_ASSERT(!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	T_NULL_ERRNO(ibv_import_device(sv[0]), EINVAL);
	close(sv[0]);
	close(sv[1]);

	/* A dup in the same process: the same context. */
	fd = dup(d.ctx->cmd_fd);
	T_ASSERT(fd >= 0);
	ctx2 = T_NONNULL(ibv_import_device(fd));
	T_EQ(ctx2->cmd_fd, fd);
	ipd = T_NONNULL(ibv_import_pd(ctx2, d.pd->handle));
	T_EQ(ipd->handle, d.pd->handle);
	imr = T_NONNULL(ibv_import_mr(ipd, b.mr->handle));
	T_EQ(imr->lkey, b.mr->lkey);
	T_EQ(imr->rkey, b.mr->rkey);
	T_EQ((uintptr_t)imr->addr, (uintptr_t)b.p);
	T_EQ(imr->length, b.len);
	ibv_unimport_mr(imr);

	/* Handles: free, of another type, of the wrong PD. */
	T_NULL_ERRNO(ibv_import_pd(ctx2, 0xfffff0), ENOENT);
	T_NULL_ERRNO(ibv_import_mr(ipd, 0xfffff0), ENOENT);
	T_NULL_ERRNO(ibv_import_dm(ctx2, 0xfff), ENOENT);
	/* MR handles are drawn at random, far above the first PDs'. */
	T_ASSERT(b.mr->handle != d.pd->handle);
	T_NULL_ERRNO(ibv_import_pd(ctx2, b.mr->handle), EINVAL);
	other = T_NONNULL(ibv_alloc_pd(ctx2)); /* seen by both contexts */
	pd2 = T_NONNULL(ibv_import_pd(d.ctx, other->handle));
	T_NULL_ERRNO(ibv_import_mr(other, b.mr->handle), EINVAL);
	ibv_unimport_pd(pd2);
	T_OK(ibv_dealloc_pd(other));
	T_NULL_ERRNO(ibv_import_pd(d.ctx, 0xfffff2), ENOENT);
	ibv_unimport_pd(ipd);
	T_OK(ibv_close_device(ctx2));

	/* The first context's objects are intact, and its handles are no
	 * other context's: a context of its own cannot import them. */
	{
		struct ibv_context *own = T_NONNULL(ibv_open_device(d.list[0]));

		T_NULL_ERRNO(ibv_import_pd(own, d.pd->handle), ENOENT);
		T_OK(ibv_close_device(own));
	}
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
