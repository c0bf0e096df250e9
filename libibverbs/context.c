/* SPDX-License-Identifier: MIT */
/* Opening and closing a device: one command connection per context. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

void *srd_ctx_cmd_new(struct ibv_context *context, size_t size,
		      struct srd_cmd_args *a)
{
	void *obj = calloc(1, size);
	int ret;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	ret = srd_ctx_cmd(to_ctx(context), a);
	if (ret) {
		free(obj);
		errno = -ret;
		return NULL;
	}
	return obj;
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
	v->ibv_create_flow = srd_create_flow;
	v->ibv_destroy_flow = srd_destroy_flow;
}

/* Reply fds of OPEN_DEVICE. */
enum {
	FD_ASYNC,
	FD_DOORBELL,
	FD_DEV_PAGE,
	FD_COUNT
};

/*
 * Open a context on dev, or (dev NULL) import the one whose cmd_fd is
 * import_fd.  Either way the context gets a connection of its own: two
 * processes never read replies off one socket.  Returns 0 or -errno.
 */
static int ctx_open(struct srd_context *ctx, struct srd_udevice *dev,
		    int import_fd)
{
	struct srd_open_device_req req = { 0 };
	struct srd_open_device_rep rep;
	int fds[FD_COUNT], sfds[4] = { -1, -1, -1, -1 };
	int maps = -1, trace_fd = -1;
	struct srd_cmd_args a = {
		.op = SRD_CMD_OPEN_DEVICE,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
		.fds = sfds,
		.rfds = fds,
		.max_rfds = FD_COUNT,
	};
	int mem_fd, ret;
	void *page;

	ctx->trace = srd_trace_setup(&req.trace_flags);
	if (req.trace_flags) {
		trace_fd = srd_trace_fd_open();
		if (trace_fd < 0)
			req.trace_flags = 0;
		else
			sfds[a.nfds++] = trace_fd;
	}
	ret = srd_conn_open(&ctx->conn);
	if (ret) {
		if (trace_fd >= 0)
			close(trace_fd);
		return ret;
	}
	mem_fd = srd_mem_access_open(&req.mem_access);
	if (mem_fd >= 0)
		sfds[a.nfds++] = mem_fd;
	/* What ODP checks its accesses against, of the same address space
	 * as the mem file (both refer to it for good once open). */
	if (mem_fd >= 0) {
		maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		if (maps >= 0) {
			sfds[a.nfds++] = maps;
			req.flags |= SRD_OPEN_F_MAPS;
		}
	}
	if (dev) {
		/* Our own end of the connection: the daemon proves it is
		 * ours, and then knows the context by it (cmd_fd). */
		req.index = dev->index;
		req.flags |= SRD_OPEN_F_BIND;
		sfds[a.nfds++] = ctx->conn.fd;
	} else {
		req.flags |= SRD_OPEN_F_IMPORT;
		sfds[a.nfds++] = import_fd;
	}
	ret = srd_cmd(&ctx->conn, &a);
	/* The daemon holds its own copies of the memory access fds. */
	if (maps >= 0)
		close(maps);
	if (mem_fd >= 0)
		close(mem_fd);
	if (trace_fd >= 0)
		close(trace_fd);
	if (ret)
		goto err_conn;
	if (a.nrfds != FD_COUNT) {
		srd_close_fds(fds, a.nrfds);
		ret = -EPROTO;
		goto err_conn;
	}
	if (!dev) {
		dev = srd_device_by_index(rep.index);
		if (!dev) {
			srd_close_fds(fds, a.nrfds);
			ret = -ENODEV;
			goto err_conn;
		}
	} else {
		atomic_fetch_add(&dev->refcnt, 1);
	}
	page = mmap(NULL, SRD_PAGE_SIZE, PROT_READ, MAP_SHARED,
		    fds[FD_DEV_PAGE], 0);
	close(fds[FD_DEV_PAGE]);
	if (page == MAP_FAILED) {
		ret = -errno;
		close(fds[FD_ASYNC]);
		close(fds[FD_DOORBELL]);
		srd_device_put(dev);
		goto err_conn;
	}
	ctx->dev_page = page;
	ctx->doorbell_fd = fds[FD_DOORBELL];
	atomic_init(&ctx->next_id, 1);

	ctx->dev = dev;
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.context.device = &dev->ibdev;
	ctx->vctx.context.cmd_fd = import_fd >= 0 ? import_fd : ctx->conn.fd;
	ctx->vctx.context.async_fd = fds[FD_ASYNC];
	ctx->vctx.context.num_comp_vectors =
		rep.num_comp_vectors ? (int)rep.num_comp_vectors : 1;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	srd_ctx_set_ops(ctx);
	ctx->place_ok = req.mem_access == SRD_MEM_PROCMEM;
	return 0;

err_conn:
	srd_conn_close(&ctx->conn);
	return ret;
}

static struct ibv_context *ctx_new(struct srd_udevice *dev, int import_fd)
{
	struct srd_context *ctx = calloc(1, sizeof(*ctx));
	int ret;

	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->imported = import_fd >= 0;
	ret = srd_htab_init(&ctx->qpn_tab);
	if (ret)
		goto err_free;
	ret = srd_htab_init(&ctx->obj_tab);
	if (ret)
		goto err_qpn;
	ret = ctx_open(ctx, dev, import_fd);
	if (ret)
		goto err_obj;
	return &ctx->vctx.context;

err_obj:
	srd_htab_fini(&ctx->obj_tab);
err_qpn:
	srd_htab_fini(&ctx->qpn_tab);
err_free:
	free(ctx);
	errno = -ret;
	return NULL;
}

LIB_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	return ctx_new(to_dev(device), -1);
}

/*
 * cmd_fd is another context's (dup'ed, or passed by SCM_RIGHTS): the new
 * context shares its objects.  As rdma-core, the new context owns cmd_fd
 * (ibv_close_device closes it), and a descriptor that is no device's
 * command fd is EINVAL.  Holding it keeps the shared context alive.
 */
LIB_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct stat st;

	if (cmd_fd < 0 || fstat(cmd_fd, &st) || !S_ISSOCK(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	return ctx_new(NULL, cmd_fd);
}

LIB_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct srd_context *ctx = to_ctx(context);

	/* Closing the connection makes the daemon release every object the
	 * context still owns, as closing the uverbs file does. */
	srd_place_stop(ctx);
	srd_conn_close(&ctx->conn);
	if (ctx->imported)
		close(context->cmd_fd);
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
