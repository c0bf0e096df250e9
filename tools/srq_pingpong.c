/* SPDX-License-Identifier: MIT */
/*
 * ibv_srq_pingpong: SEND ping-pong over several RC QPs whose receives all
 * come from one shared receive queue.  Flags, the TCP exchange (always
 * 256 addresses, whatever -q says) and output are rdma-core's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pingpong_common.h"

struct srq_ctx {
	const struct pp_opts *o;
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[PP_MAX_QP];
	int pending[PP_MAX_QP];
	char *buf;
	unsigned int size;
	unsigned int send_flags;
	unsigned int num_qp;
	unsigned int rx_depth;
	int routs;
	struct ibv_port_attr portinfo;
	struct pp_dest my[PP_MAX_QP];
};

static int srq_connect(void *arg, const struct pp_dest *rem)
{
	struct srq_ctx *ctx = arg;
	const struct pp_opts *o = ctx->o;
	unsigned int i;

	for (i = 0; i < ctx->num_qp; i++) {
		struct ibv_qp_attr attr = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = o->mtu,
			.dest_qp_num = rem[i].qpn,
			.rq_psn = rem[i].psn,
			.max_dest_rd_atomic = 1,
			.min_rnr_timer = 12,
			.ah_attr = {
				.dlid = rem[i].lid,
				.sl = o->sl,
				.port_num = o->ib_port,
			},
		};

		if (rem[i].gid.global.interface_id) {
			attr.ah_attr.is_global = 1;
			attr.ah_attr.grh.hop_limit = 1;
			attr.ah_attr.grh.dgid = rem[i].gid;
			attr.ah_attr.grh.sgid_index = o->gidx;
		}
		if (ibv_modify_qp(ctx->qp[i], &attr,
				  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER)) {
			fprintf(stderr, "Failed to modify QP[%u] to RTR\n", i);
			return 1;
		}

		attr.qp_state = IBV_QPS_RTS;
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.sq_psn = ctx->my[i].psn;
		attr.max_rd_atomic = 1;
		if (ibv_modify_qp(ctx->qp[i], &attr,
				  IBV_QP_STATE | IBV_QP_TIMEOUT |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_SQ_PSN |
					  IBV_QP_MAX_QP_RD_ATOMIC)) {
			fprintf(stderr, "Failed to modify QP[%u] to RTS\n", i);
			return 1;
		}
	}
	return 0;
}

static int srq_destroy(struct srq_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->num_qp; i++) {
		if (ctx->qp[i] && ibv_destroy_qp(ctx->qp[i])) {
			fprintf(stderr, "Couldn't destroy QP[%u]\n", i);
			return 1;
		}
	}
	if (ctx->srq && ibv_destroy_srq(ctx->srq)) {
		fprintf(stderr, "Couldn't destroy SRQ\n");
		return 1;
	}
	if (pp_destroy_cq_mr(ctx->cq, ctx->mr))
		return 1;
	if (pp_close_device(ctx->pd, ctx->channel, ctx->context))
		return 1;
	free(ctx->buf);
	free(ctx);
	return 0;
}

static int srq_create_qps(struct srq_ctx *ctx)
{
	struct ibv_qp_attr attr;
	unsigned int i;

	for (i = 0; i < ctx->num_qp; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = ctx->cq,
			.recv_cq = ctx->cq,
			.srq = ctx->srq,
			.cap = {
				.max_send_wr = 1,
				.max_send_sge = 1,
			},
			.qp_type = IBV_QPT_RC,
		};

		ctx->qp[i] = ibv_create_qp(ctx->pd, &init);
		if (!ctx->qp[i]) {
			fprintf(stderr, "Couldn't create QP[%u]\n", i);
			return -1;
		}
		memset(&init, 0, sizeof(init));
		if (!ibv_query_qp(ctx->qp[i], &attr, IBV_QP_CAP, &init) &&
		    init.cap.max_inline_data >= ctx->size)
			ctx->send_flags |= IBV_SEND_INLINE;
	}
	for (i = 0; i < ctx->num_qp; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_INIT;
		attr.pkey_index = 0;
		attr.port_num = ctx->o->ib_port;
		attr.qp_access_flags = 0;
		if (ibv_modify_qp(ctx->qp[i], &attr,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
			fprintf(stderr, "Failed to modify QP[%u] to INIT\n", i);
			return -1;
		}
	}
	return 0;
}

static struct srq_ctx *srq_init(struct ibv_device *dev, const struct pp_opts *o)
{
	const uint32_t odp_caps = IBV_ODP_SUPPORT_SEND |
				  IBV_ODP_SUPPORT_SRQ_RECV;
	int access = IBV_ACCESS_LOCAL_WRITE;
	long page = sysconf(_SC_PAGESIZE);
	struct srq_ctx *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->o = o;
	ctx->size = o->size;
	ctx->send_flags = IBV_SEND_SIGNALED;
	ctx->num_qp = o->num_qp;
	ctx->rx_depth = o->rx_depth;

	if (posix_memalign((void **)&ctx->buf, page, ctx->size)) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		goto err;
	}
	/* Not the pattern's values, so -c sees a message that never came. */
	memset(ctx->buf, 0x7b, ctx->size);

	ctx->context = ibv_open_device(dev);
	if (!ctx->context) {
		fprintf(stderr, "Couldn't get context for %s\n",
			ibv_get_device_name(dev));
		goto err;
	}
	if (o->use_odp) {
		struct ibv_device_attr_ex ax;

		memset(&ax, 0, sizeof(ax));
		if (ibv_query_device_ex(ctx->context, NULL, &ax)) {
			fprintf(stderr, "Couldn't query device for its "
					"features\n");
			goto err;
		}
		if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
		    (ax.odp_caps.per_transport_caps.rc_odp_caps & odp_caps) !=
			    odp_caps) {
			fprintf(stderr, "The device isn't ODP capable or does "
					"not "
					"support RC send, receive and srq with "
					"ODP\n");
			goto err;
		}
		access |= IBV_ACCESS_ON_DEMAND;
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
	ctx->mr = ibv_reg_mr(ctx->pd, ctx->buf, ctx->size, access);
	if (!ctx->mr) {
		fprintf(stderr, "Couldn't register MR\n");
		goto err;
	}
	ctx->cq = ibv_create_cq(ctx->context, ctx->rx_depth + ctx->num_qp, NULL,
				ctx->channel, 0);
	if (!ctx->cq) {
		fprintf(stderr, "Couldn't create CQ\n");
		goto err;
	}
	{
		struct ibv_srq_init_attr sa = {
			.attr = {
				.max_wr = ctx->rx_depth,
				.max_sge = 1,
			},
		};

		ctx->srq = ibv_create_srq(ctx->pd, &sa);
		if (!ctx->srq) {
			fprintf(stderr, "Couldn't create SRQ\n");
			goto err;
		}
	}
	if (srq_create_qps(ctx))
		goto err;
	return ctx;

err:
	srq_destroy(ctx);
	return NULL;
}

static int srq_post_recv(struct srq_ctx *ctx, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ctx->buf,
		.length = ctx->size,
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
		if (ibv_post_srq_recv(ctx->srq, &wr, &bad))
			break;
	return i;
}

static int srq_post_send(struct srq_ctx *ctx, int qp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ctx->buf,
		.length = ctx->size,
		.lkey = ctx->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = PP_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = ctx->send_flags,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(ctx->qp[qp], &wr, &bad);
}

static int srq_find_qp(struct srq_ctx *ctx, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < ctx->num_qp; i++)
		if (ctx->qp[i]->qp_num == qpn)
			return i;
	return -1;
}

static int srq_one_wc(struct srq_ctx *ctx, const struct ibv_wc *wc,
		      unsigned int *scnt, unsigned int *rcnt)
{
	int qp;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			ibv_wc_status_str(wc->status), wc->status,
			(int)wc->wr_id);
		return 1;
	}
	qp = srq_find_qp(ctx, wc->qp_num);
	if (qp < 0) {
		fprintf(stderr, "Couldn't find QPN %06x\n", wc->qp_num);
		return 1;
	}
	switch ((int)wc->wr_id) {
	case PP_SEND_WRID:
		++*scnt;
		break;
	case PP_RECV_WRID:
		if (--ctx->routs <= (int)ctx->num_qp) {
			ctx->routs +=
				srq_post_recv(ctx, ctx->rx_depth - ctx->routs);
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
	ctx->pending[qp] &= ~(int)wc->wr_id;
	if (*scnt < ctx->o->iters && !ctx->pending[qp]) {
		if (srq_post_send(ctx, qp)) {
			fprintf(stderr, "Couldn't post send\n");
			return 1;
		}
		ctx->pending[qp] = PP_RECV_WRID | PP_SEND_WRID;
	}
	return 0;
}

static int srq_run(struct srq_ctx *ctx, const struct pp_dest *rem)
{
	const struct pp_opts *o = ctx->o;
	unsigned int scnt = 0, rcnt = 0, num_events = 0, i;
	int num_wc = ctx->num_qp + ctx->rx_depth;
	struct timeval start, end;
	struct ibv_wc *wc;
	int ne, j, ret = 1;

	wc = calloc(num_wc, sizeof(*wc));
	if (!wc)
		return 1;
	if (o->servername && srq_connect(ctx, rem))
		goto out;

	if (o->servername) {
		if (o->validate)
			pp_fill_pattern(ctx->buf, ctx->size);
		for (i = 0; i < ctx->num_qp; i++) {
			if (srq_post_send(ctx, i)) {
				fprintf(stderr, "Couldn't post send\n");
				goto out;
			}
			ctx->pending[i] = PP_SEND_WRID | PP_RECV_WRID;
		}
	} else {
		for (i = 0; i < ctx->num_qp; i++)
			ctx->pending[i] = PP_RECV_WRID;
	}

	if (gettimeofday(&start, NULL)) {
		perror("gettimeofday");
		goto out;
	}
	while (rcnt < o->iters || scnt < o->iters) {
		if (o->use_event &&
		    pp_wait_cq_event(ctx->channel, ctx->cq, &num_events))
			goto out;
		do {
			ne = ibv_poll_cq(ctx->cq, num_wc, wc);
			if (ne < 0) {
				fprintf(stderr, "poll CQ failed %d\n", ne);
				goto out;
			}
		} while (!o->use_event && ne < 1);
		for (j = 0; j < ne; j++)
			if (srq_one_wc(ctx, &wc[j], &scnt, &rcnt))
				goto out;
	}
	if (gettimeofday(&end, NULL)) {
		perror("gettimeofday");
		goto out;
	}

	pp_report(ctx->size, o->iters, &start, &end);
	ret = 0;
	if (!o->servername && o->validate &&
	    pp_check_pattern(ctx->buf, ctx->size))
		ret = 1;
	ibv_ack_cq_events(ctx->cq, num_events);
out:
	free(wc);
	return ret;
}

int main(int argc, char *argv[])
{
	static const struct pp_defaults def = {
		.size = 4096,
		.num_qp = 16,
		.extra = PP_OPT_MTU | PP_OPT_NUM_QP | PP_OPT_ODP,
		.size_help = "size of message to exchange",
	};
	struct ibv_device **list;
	struct ibv_device *dev;
	struct srq_ctx *ctx;
	struct pp_dest *rem;
	struct pp_opts o;
	unsigned int i;
	int ret;

	srand48(getpid() * time(NULL));
	if (pp_parse(argc, argv, &def, &o, &ret))
		return ret;
	if (o.num_qp > o.rx_depth) {
		fprintf(stderr,
			"rx_depth %u is too small for %u QPs -- must have at "
			"least one receive per QP.\n",
			o.rx_depth, o.num_qp);
		return 1;
	}

	dev = pp_find_device(&o, &list);
	if (!dev)
		return 1;
	ctx = srq_init(dev, &o);
	if (!ctx)
		return 1;

	ctx->routs = srq_post_recv(ctx, ctx->rx_depth);
	if (ctx->routs < (int)ctx->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", ctx->routs);
		return 1;
	}
	if (pp_arm_and_query_port(ctx->context, ctx->cq, &o, &ctx->portinfo))
		return 1;
	/* Unused entries up to PP_MAX_QP travel as zeros. */
	for (i = 0; i < ctx->num_qp; i++) {
		if (pp_local_dest(ctx->context, &o, &ctx->portinfo,
				  ctx->qp[i]->qp_num, 1, &ctx->my[i]))
			return 1;
		pp_print_dest("local address: ", &ctx->my[i], ',');
	}

	if (o.servername)
		rem = pp_client_exch(o.servername, o.port, ctx->my, PP_MAX_QP);
	else
		rem = pp_server_exch(o.port, ctx->my, PP_MAX_QP, srq_connect,
				     ctx);
	if (!rem)
		return 1;
	for (i = 0; i < ctx->num_qp; i++)
		pp_print_dest("remote address:", &rem[i], ',');

	ret = srq_run(ctx, rem);
	free(rem);
	if (srq_destroy(ctx))
		return 1;
	ibv_free_device_list(list);
	return ret;
}
