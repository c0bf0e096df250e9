/* SPDX-License-Identifier: MIT */
/* Opening and closing a device: one command connection per context. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/msg.h"
#include "libibverbs/ibverbs.h"

int srd_ctx_cmd(struct srd_context *ctx, struct srd_cmd_args *a)
{
	return srd_cmd(&ctx->conn, a);
}

int srd_ctx_cmd_fd(struct srd_context *ctx, uint32_t op, const void *req,
		   size_t req_len, void *rep, size_t rep_len, int *fd)
{
	struct srd_cmd_args a = {
		.op = op,
		.req = req,
		.req_len = req_len,
		.rep = rep,
		.rep_len = rep_len,
		.rfds = fd,
		.max_rfds = 1,
	};
	int ret = srd_ctx_cmd(ctx, &a);

	if (!ret && a.nrfds != 1)
		ret = -EPROTO;
	return ret;
}

uint64_t srd_ctx_new_id(struct srd_context *ctx)
{
	return atomic_fetch_add(&ctx->next_id, 1);
}

void srd_ctx_set_ops(struct srd_context *ctx)
{
	struct verbs_context *v = &ctx->vctx;
	struct ibv_context_ops *o = &v->context.ops;

	o->_compat_query_device = ibv_query_device;
	o->_compat_query_port = ibv_query_port;
	o->poll_cq = srd_poll_cq;
	o->req_notify_cq = srd_req_notify_cq;
	o->post_srq_recv = srd_post_srq_recv;
	o->post_send = srd_post_send;
	o->post_recv = srd_post_recv;
	o->alloc_mw = srd_alloc_mw;
	o->dealloc_mw = srd_dealloc_mw;
	o->bind_mw = srd_bind_mw;

	v->query_port = srd_query_port;
	v->query_device_ex = srd_query_device_ex;
	v->create_cq_ex = srd_create_cq_ex;
	v->create_qp_ex = srd_create_qp_ex;
	v->create_srq_ex = srd_create_srq_ex;
	v->query_rt_values = srd_query_rt_values;
	v->modify_cq = srd_modify_cq;
	v->alloc_td = srd_alloc_td;
	v->dealloc_td = srd_dealloc_td;
	v->alloc_parent_domain = srd_alloc_parent_domain;
	v->alloc_dm = srd_alloc_dm;
	v->free_dm = srd_free_dm;
	v->reg_dm_mr = srd_reg_dm_mr;
	v->open_xrcd = srd_open_xrcd;
	v->close_xrcd = srd_close_xrcd;
	v->open_qp = srd_open_qp;
	v->get_srq_num = srd_get_srq_num;
	v->advise_mr = srd_advise_mr;
}

/* Reply fds of OPEN_DEVICE. */
enum {
	FD_ASYNC,
	FD_DOORBELL,
	FD_DEV_PAGE,
	FD_COUNT
};

LIB_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct srd_udevice *dev = to_dev(device);
	struct srd_open_device_req req = { .index = dev->index };
	struct srd_open_device_rep rep;
	int fds[FD_COUNT], sfds[3] = { STDERR_FILENO, -1, -1 };
	int maps = -1;
	struct srd_cmd_args a = {
		.op = SRD_CMD_OPEN_DEVICE,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
		.rfds = fds,
		.max_rfds = FD_COUNT,
	};
	struct srd_context *ctx;
	void *page;
	int ret;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->trace = srd_trace_setup(&req.trace_flags);
	a.fds = sfds;
	if (req.trace_flags)
		a.nfds = 1;
	ret = srd_htab_init(&ctx->qpn_tab);
	if (ret)
		goto err_free;
	ret = srd_htab_init(&ctx->obj_tab);
	if (ret)
		goto err_qpn;
	ret = srd_conn_open(&ctx->conn);
	if (ret)
		goto err_obj;
	sfds[a.nfds] = srd_mem_access_open(&req.mem_access);
	if (sfds[a.nfds] >= 0)
		a.nfds++;
	/* What ODP checks its accesses against, of the same address space
	 * as the mem file (both refer to it for good once open). */
	if (req.mem_access != SRD_MEM_NONE) {
		maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		if (maps >= 0) {
			sfds[a.nfds++] = maps;
			req.flags |= SRD_OPEN_F_MAPS;
		}
	}
	ret = srd_cmd(&ctx->conn, &a);
	/* The daemon holds its own copies of the memory access fds. */
	if (maps >= 0)
		close(sfds[--a.nfds]);
	if (req.mem_access != SRD_MEM_NONE)
		close(sfds[a.nfds - 1]);
	if (ret)
		goto err_conn;
	if (a.nrfds != FD_COUNT) {
		srd_close_fds(fds, a.nrfds);
		ret = -EPROTO;
		goto err_conn;
	}
	page = mmap(NULL, SRD_PAGE_SIZE, PROT_READ, MAP_SHARED,
		    fds[FD_DEV_PAGE], 0);
	close(fds[FD_DEV_PAGE]);
	if (page == MAP_FAILED) {
		ret = -errno;
		close(fds[FD_ASYNC]);
		close(fds[FD_DOORBELL]);
		goto err_conn;
	}
	ctx->dev_page = page;
	ctx->doorbell_fd = fds[FD_DOORBELL];
	atomic_init(&ctx->next_id, 1);

	atomic_fetch_add(&dev->refcnt, 1);
	ctx->dev = dev;
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.context.device = device;
	ctx->vctx.context.cmd_fd = ctx->conn.fd;
	ctx->vctx.context.async_fd = fds[FD_ASYNC];
	ctx->vctx.context.num_comp_vectors =
		rep.num_comp_vectors ? (int)rep.num_comp_vectors : 1;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	srd_ctx_set_ops(ctx);
	return &ctx->vctx.context;

err_conn:
	srd_conn_close(&ctx->conn);
err_obj:
	srd_htab_fini(&ctx->obj_tab);
err_qpn:
	srd_htab_fini(&ctx->qpn_tab);
err_free:
	free(ctx);
	errno = -ret;
	return NULL;
}

LIB_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct srd_context *ctx = to_ctx(context);

	/* Closing the connection makes the daemon release every object the
	 * context still owns, as closing the uverbs file does. */
	srd_conn_close(&ctx->conn);
	close(context->async_fd);
	close(ctx->doorbell_fd);
	munmap((void *)ctx->dev_page, SRD_PAGE_SIZE);
	pthread_mutex_destroy(&context->mutex);
	srd_htab_fini(&ctx->obj_tab);
	srd_htab_fini(&ctx->qpn_tab);
	srd_device_put(ctx->dev);
	free(ctx);
	return 0;
}
