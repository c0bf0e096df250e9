/* SPDX-License-Identifier: MIT */
/*
 * ibv_ud_pingpong: SEND ping-pong over UD QPs.  Every receive starts with
 * the 40-byte GRH, so the buffer is size + 40 bytes: receives land at its
 * start, sends go out from byte 40.  Flags and output are rdma-core's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pingpong_common.h"

#define UD_GRH 40
#define UD_QKEY 0x11111111

struct ud_ctx {
	const struct pp_opts *o;
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	char *buf;
	unsigned int size;
	unsigned int send_flags;
	unsigned int rx_depth;
	int routs;
	int pending;
	uint32_t rem_qpn;
	struct ibv_port_attr portinfo;
	struct pp_dest my;
};

static int ud_connect(void *arg, const struct pp_dest *rem)
{
	struct ud_ctx *ctx = arg;
	const struct pp_opts *o = ctx->o;
	struct ibv_ah_attr ah = {
		.dlid = rem->lid,
		.sl = o->sl,
		.port_num = o->ib_port,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };

	if (ibv_modify_qp(ctx->qp, &attr, IBV_QP_STATE)) {
		fprintf(stderr, "Failed to modify QP to RTR\n");
		return 1;
	}
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = ctx->my.psn;
	if (ibv_modify_qp(ctx->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		fprintf(stderr, "Failed to modify QP to RTS\n");
		return 1;
	}

	if (rem->gid.global.interface_id) {
		ah.is_global = 1;
		ah.grh.hop_limit = 1;
		ah.grh.dgid = rem->gid;
		ah.grh.sgid_index = o->gidx;
	}
	ctx->ah = ibv_create_ah(ctx->pd, &ah);
	if (!ctx->ah) {
		fprintf(stderr, "Failed to create AH\n");
		return 1;
	}
	ctx->rem_qpn = rem->qpn;
	return 0;
}

static int ud_destroy(struct ud_ctx *ctx)
{
	if (ctx->qp && ibv_destroy_qp(ctx->qp)) {
		fprintf(stderr, "Couldn't destroy QP\n");
		return 1;
	}
	if (pp_destroy_cq_mr(ctx->cq, ctx->mr))
		return 1;
	if (ctx->ah && ibv_destroy_ah(ctx->ah)) {
		fprintf(stderr, "Couldn't destroy AH\n");
		return 1;
	}
	if (pp_close_device(ctx->pd, ctx->channel, ctx->context))
		return 1;
	free(ctx->buf);
	free(ctx);
	return 0;
}

static int ud_create_qp(struct ud_ctx *ctx)
{
	struct ibv_qp_init_attr init = {
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = ctx->rx_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = ctx->o->ib_port,
		.qkey = UD_QKEY,
	};

	ctx->qp = ibv_create_qp(ctx->pd, &init);
	if (!ctx->qp) {
		fprintf(stderr, "Couldn't create QP\n");
		return -1;
	}
	memset(&init, 0, sizeof(init));
	if (!ibv_query_qp(ctx->qp, &(struct ibv_qp_attr){}, IBV_QP_CAP,
			  &init) &&
	    init.cap.max_inline_data >= ctx->size)
		ctx->send_flags |= IBV_SEND_INLINE;

	if (ibv_modify_qp(ctx->qp, &attr,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY)) {
		fprintf(stderr, "Failed to modify QP to INIT\n");
		return -1;
	}
	return 0;
}

static struct ud_ctx *ud_init(struct ibv_device *dev, const struct pp_opts *o)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ibv_port_attr pa;
	struct ud_ctx *ctx;
	int mtu;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->o = o;
	ctx->size = o->size;
	ctx->send_flags = IBV_SEND_SIGNALED;
	ctx->rx_depth = o->rx_depth;

	if (posix_memalign((void **)&ctx->buf, page, ctx->size + UD_GRH)) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		goto err;
	}
	memset(ctx->buf, 0x7b, ctx->size + UD_GRH);

	ctx->context = ibv_open_device(dev);
	if (!ctx->context) {
		fprintf(stderr, "Couldn't get context for %s\n",
			ibv_get_device_name(dev));
		goto err;
	}
	if (ibv_query_port(ctx->context, o->ib_port, &pa)) {
		fprintf(stderr, "Unable to query port info for port %d\n",
			o->ib_port);
		goto err;
	}
	/* A UD message is one packet. */
	mtu = 1 << (pa.active_mtu + 7);
	if ((int)ctx->size > mtu) {
		fprintf(stderr, "Requested size larger than port MTU (%d)\n",
			mtu);
		goto err;
	}
	if (o->use_event) {
		ctx->channel = ibv_create_comp_channel(ctx->context);
		if (!ctx->channel) {
			fprintf(stderr, "Couldn't create completion channel\n");
			goto err;
		}
	}
	ctx->pd = ibv_alloc_pd(ctx->context);
	if (!ctx->pd) {
		fprintf(stderr, "Couldn't allocate PD\n");
		goto err;
	}
	ctx->mr = ibv_reg_mr(ctx->pd, ctx->buf, ctx->size + UD_GRH,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!ctx->mr) {
		fprintf(stderr, "Couldn't register MR\n");
		goto err;
	}
	ctx->cq = ibv_create_cq(ctx->context, ctx->rx_depth + 1, NULL,
				ctx->channel, 0);
	if (!ctx->cq) {
		fprintf(stderr, "Couldn't create CQ\n");
		goto err;
	}
	if (ud_create_qp(ctx))
		goto err;
	return ctx;

err:
	ud_destroy(ctx);
	return NULL;
}

static int ud_post_recv(struct ud_ctx *ctx, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ctx->buf,
		.length = ctx->size + UD_GRH,
		.lkey = ctx->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = PP_RECV_WRID,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	int i;

	for (i = 0; i < n; i++)
		if (ibv_post_recv(ctx->qp, &wr, &bad))
			break;
	return i;
}

static int ud_post_send(struct ud_ctx *ctx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ctx->buf + UD_GRH,
		.length = ctx->size,
		.lkey = ctx->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = PP_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = ctx->send_flags,
		.wr.ud = {
			.ah = ctx->ah,
			.remote_qpn = ctx->rem_qpn,
			.remote_qkey = UD_QKEY,
		},
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(ctx->qp, &wr, &bad);
}

static int ud_one_wc(struct ud_ctx *ctx, const struct ibv_wc *wc,
		     unsigned int *scnt, unsigned int *rcnt)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			ibv_wc_status_str(wc->status), wc->status,
			(int)wc->wr_id);
		return 1;
	}
	switch ((int)wc->wr_id) {
	case PP_SEND_WRID:
		++*scnt;
		break;
	case PP_RECV_WRID:
		if (--ctx->routs <= 1) {
			ctx->routs +=
				ud_post_recv(ctx, ctx->rx_depth - ctx->routs);
			if (ctx->routs < (int)ctx->rx_depth) {
				fprintf(stderr, "Couldn't post receive (%d)\n",
					ctx->routs);
				return 1;
			}
		}
		++*rcnt;
		break;
	default:
		fprintf(stderr, "Completion for unknown wr_id %d\n",
			(int)wc->wr_id);
		return 1;
	}
	ctx->pending &= ~(int)wc->wr_id;
	if (*scnt < ctx->o->iters && !ctx->pending) {
		if (ud_post_send(ctx)) {
			fprintf(stderr, "Couldn't post send\n");
			return 1;
		}
		ctx->pending = PP_RECV_WRID | PP_SEND_WRID;
	}
	return 0;
}

static int ud_run(struct ud_ctx *ctx, const struct pp_dest *rem)
{
	const struct pp_opts *o = ctx->o;
	unsigned int scnt = 0, rcnt = 0, num_events = 0;
	struct timeval start, end;
	struct ibv_wc wc[2];
	int ne, i, ret = 0;

	if (o->servername && ud_connect(ctx, rem))
		return 1;

	ctx->pending = PP_RECV_WRID;
	if (o->servername) {
		if (o->validate)
			pp_fill_pattern(ctx->buf + UD_GRH, ctx->size);
		if (ud_post_send(ctx)) {
			fprintf(stderr, "Couldn't post send\n");
			return 1;
		}
		ctx->pending |= PP_SEND_WRID;
	}

	if (gettimeofday(&start, NULL)) {
		perror("gettimeofday");
		return 1;
	}
	while (rcnt < o->iters || scnt < o->iters) {
		if (o->use_event &&
		    pp_wait_cq_event(ctx->channel, ctx->cq, &num_events))
			return 1;
		do {
			ne = ibv_poll_cq(ctx->cq, 2, wc);
			if (ne < 0) {
				fprintf(stderr, "poll CQ failed %d\n", ne);
				return 1;
			}
		} while (!o->use_event && ne < 1);
		for (i = 0; i < ne; i++)
			if (ud_one_wc(ctx, &wc[i], &scnt, &rcnt))
				return 1;
	}
	if (gettimeofday(&end, NULL)) {
		perror("gettimeofday");
		return 1;
	}

	pp_report(ctx->size, o->iters, &start, &end);
	if (!o->servername && o->validate &&
	    pp_check_pattern(ctx->buf + UD_GRH, ctx->size))
		ret = 1;
	ibv_ack_cq_events(ctx->cq, num_events);
	return ret;
}

int main(int argc, char *argv[])
{
	static const struct pp_defaults def = {
		.size = 1024,
		.size_help = "size of message to exchange",
	};
	struct ibv_device **list;
	struct ibv_device *dev;
	struct pp_dest *rem;
	struct ud_ctx *ctx;
	struct pp_opts o;
	int ret;

	srand48(getpid() * time(NULL));
	if (pp_parse(argc, argv, &def, &o, &ret))
		return ret;
	dev = pp_find_device(&o, &list);
	if (!dev)
		return 1;
	ctx = ud_init(dev, &o);
	if (!ctx)
		return 1;

	ctx->routs = ud_post_recv(ctx, ctx->rx_depth);
	if (ctx->routs < (int)ctx->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", ctx->routs);
		return 1;
	}
	if (pp_arm_and_query_port(ctx->context, ctx->cq, &o, &ctx->portinfo))
		return 1;
	if (pp_local_dest(ctx->context, &o, &ctx->portinfo, ctx->qp->qp_num, 0,
			  &ctx->my))
		return 1;
	/* rdma-core's UD example prints a colon before GID here. */
	pp_print_dest("local address: ", &ctx->my, ':');

	if (o.servername)
		rem = pp_client_exch(o.servername, o.port, &ctx->my, 1);
	else
		rem = pp_server_exch(o.port, &ctx->my, 1, ud_connect, ctx);
	if (!rem)
		return 1;
	pp_print_dest("remote address:", rem, ',');

	ret = ud_run(ctx, rem);
	free(rem);
	if (ud_destroy(ctx))
		return 1;
	ibv_free_device_list(list);
	return ret;
}
