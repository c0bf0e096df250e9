/* SPDX-License-Identifier: MIT */
/*
 * ibv_rc_pingpong and ibv_uc_pingpong: two processes bounce a SEND back and
 * forth over a connected (RC or UC) QP.  Flags, the TCP exchange and the
 * output are rdma-core's.  UC takes neither the RC-only attributes
 * (retries, RDMA read resources) nor -o/-t/-j/-N, as in rdma-core.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pingpong_common.h"

struct rc_ctx {
	const struct pp_opts *o;
	enum ibv_qp_type qpt;
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_dm *dm;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex; /* with -t */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx; /* with -N */
	char *buf;
	unsigned int size;
	unsigned int send_flags;
	unsigned int rx_depth;
	int routs;
	int pending;
	uint64_t ts_mask;
	struct ibv_port_attr portinfo;
	struct pp_dest my;
};

struct rc_ts {
	uint64_t max_delta;
	uint64_t min_delta;
	uint64_t total_delta;
	uint64_t prev;
	int last_with_ts;
	unsigned int samples;
};

static int rc_connect(void *arg, const struct pp_dest *rem)
{
	struct rc_ctx *ctx = arg;
	const struct pp_opts *o = ctx->o;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->mtu,
		.dest_qp_num = rem->qpn,
		.rq_psn = rem->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.dlid = rem->lid,
			.sl = o->sl,
			.port_num = o->ib_port,
		},
	};
	int mask;

	if (rem->gid.global.interface_id) {
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.hop_limit = 1;
		attr.ah_attr.grh.dgid = rem->gid;
		attr.ah_attr.grh.sgid_index = o->gidx;
	}
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (ctx->qpt == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (ibv_modify_qp(ctx->qp, &attr, mask)) {
		fprintf(stderr, "Failed to modify QP to RTR\n");
		return 1;
	}

	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = ctx->my.psn;
	attr.max_rd_atomic = 1;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (ctx->qpt == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	if (ibv_modify_qp(ctx->qp, &attr, mask)) {
		fprintf(stderr, "Failed to modify QP to RTS\n");
		return 1;
	}
	return 0;
}

/* -o, -t and -j need device features; say so when they are missing. */
static int rc_check_features(struct rc_ctx *ctx, int *access)
{
	const struct pp_opts *o = ctx->o;
	const uint32_t rc_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	struct ibv_device_attr_ex ax;

	if (!o->use_odp && !o->use_ts && !o->use_dm)
		return 0;
	memset(&ax, 0, sizeof(ax));
	if (ibv_query_device_ex(ctx->context, NULL, &ax)) {
		fprintf(stderr, "Couldn't query device for its features\n");
		return -1;
	}
	if (o->use_odp) {
		if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
		    (ax.odp_caps.per_transport_caps.rc_odp_caps & rc_caps) !=
			    rc_caps) {
			fprintf(stderr, "The device isn't ODP capable or does "
					"not "
					"support RC send and receive with "
					"ODP\n");
			return -1;
		}
		if (o->implicit_odp &&
		    !(ax.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT)) {
			fprintf(stderr, "The device doesn't support implicit "
					"ODP\n");
			return -1;
		}
		*access |= IBV_ACCESS_ON_DEMAND;
	}
	if (o->use_ts) {
		if (!ax.completion_timestamp_mask) {
			fprintf(stderr, "The device isn't completion timestamp "
					"capable\n");
			return -1;
		}
		ctx->ts_mask = ax.completion_timestamp_mask;
	}
	if (o->use_dm) {
		struct ibv_alloc_dm_attr dm_attr = { .length = ctx->size };

		if (!ax.max_dm_size) {
			fprintf(stderr, "Device doesn't support dm "
					"allocation\n");
			return -1;
		}
		if (ax.max_dm_size < ctx->size) {
			fprintf(stderr, "Device memory is insufficient\n");
			return -1;
		}
		ctx->dm = ibv_alloc_dm(ctx->context, &dm_attr);
		if (!ctx->dm) {
			fprintf(stderr, "Dev mem allocation failed\n");
			return -1;
		}
		*access |= IBV_ACCESS_ZERO_BASED;
	}
	return 0;
}

static int rc_create_cq(struct rc_ctx *ctx)
{
	if (ctx->o->use_ts) {
		struct ibv_cq_init_attr_ex ax = {
			.cqe = ctx->rx_depth + 1,
			.channel = ctx->channel,
			.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		};

		ctx->cq_ex = ibv_create_cq_ex(ctx->context, &ax);
		ctx->cq = ctx->cq_ex ? ibv_cq_ex_to_cq(ctx->cq_ex) : NULL;
	} else {
		ctx->cq = ibv_create_cq(ctx->context, ctx->rx_depth + 1, NULL,
					ctx->channel, 0);
	}
	if (!ctx->cq) {
		fprintf(stderr, "Couldn't create CQ\n");
		return -1;
	}
	return 0;
}

static int rc_create_qp(struct rc_ctx *ctx)
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
		.qp_type = ctx->qpt,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = ctx->o->ib_port,
		.qp_access_flags = 0,
	};

	if (ctx->o->new_send) {
		struct ibv_qp_init_attr_ex ix = {
			.send_cq = ctx->cq,
			.recv_cq = ctx->cq,
			.cap = init.cap,
			.qp_type = ctx->qpt,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = ctx->pd,
			.send_ops_flags = IBV_QP_EX_WITH_SEND,
		};

		ctx->qp = ibv_create_qp_ex(ctx->context, &ix);
	} else {
		ctx->qp = ibv_create_qp(ctx->pd, &init);
	}
	if (!ctx->qp) {
		fprintf(stderr, "Couldn't create QP\n");
		return -1;
	}
	if (ctx->o->new_send) {
		ctx->qpx = ibv_qp_to_qp_ex(ctx->qp);
		if (!ctx->qpx) {
			fprintf(stderr, "Couldn't create QP\n");
			return -1;
		}
	}

	memset(&init, 0, sizeof(init));
	if (!ibv_query_qp(ctx->qp, &(struct ibv_qp_attr){}, IBV_QP_CAP,
			  &init) &&
	    init.cap.max_inline_data >= ctx->size && !ctx->o->use_dm)
		ctx->send_flags |= IBV_SEND_INLINE;

	if (ibv_modify_qp(ctx->qp, &attr,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "Failed to modify QP to INIT\n");
		return -1;
	}
	return 0;
}

static int rc_destroy(struct rc_ctx *ctx)
{
	if (ctx->qp && ibv_destroy_qp(ctx->qp)) {
		fprintf(stderr, "Couldn't destroy QP\n");
		return 1;
	}
	if (pp_destroy_cq_mr(ctx->cq, ctx->mr))
		return 1;
	if (ctx->dm && ibv_free_dm(ctx->dm)) {
		fprintf(stderr, "Couldn't free DM\n");
		return 1;
	}
	if (pp_close_device(ctx->pd, ctx->channel, ctx->context))
		return 1;
	free(ctx->buf);
	free(ctx);
	return 0;
}

static struct rc_ctx *rc_init(struct ibv_device *dev, const struct pp_opts *o,
			      enum ibv_qp_type qpt)
{
	int access = IBV_ACCESS_LOCAL_WRITE;
	long page = sysconf(_SC_PAGESIZE);
	struct rc_ctx *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->o = o;
	ctx->qpt = qpt;
	ctx->size = o->size;
	ctx->send_flags = IBV_SEND_SIGNALED;
	ctx->rx_depth = o->rx_depth;

	if (posix_memalign((void **)&ctx->buf, page, ctx->size)) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		goto err;
	}
	memset(ctx->buf, 0x7b, ctx->size);

	ctx->context = ibv_open_device(dev);
	if (!ctx->context) {
		fprintf(stderr, "Couldn't get context for %s\n",
			ibv_get_device_name(dev));
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
	if (rc_check_features(ctx, &access))
		goto err;

	if (o->implicit_odp)
		ctx->mr = ibv_reg_mr(ctx->pd, NULL, SIZE_MAX, access);
	else if (ctx->dm)
		ctx->mr = ibv_reg_dm_mr(ctx->pd, ctx->dm, 0, ctx->size, access);
	else
		ctx->mr = ibv_reg_mr(ctx->pd, ctx->buf, ctx->size, access);
	if (!ctx->mr) {
		fprintf(stderr, "Couldn't register MR\n");
		goto err;
	}
	if (o->prefetch) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)ctx->buf,
			.length = ctx->size,
			.lkey = ctx->mr->lkey,
		};
		int ret = ibv_advise_mr(ctx->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					IB_UVERBS_ADVISE_MR_FLAG_FLUSH, &sge,
					1);

		if (ret)
			fprintf(stderr,
				"Couldn't prefetch MR(%d). Continue anyway\n",
				ret);
	}
	if (rc_create_cq(ctx) || rc_create_qp(ctx))
		goto err;
	return ctx;

err:
	rc_destroy(ctx); /* best effort: it stops at the first failure */
	return NULL;
}

static uint64_t rc_addr(struct rc_ctx *ctx)
{
	return ctx->dm ? 0 : (uintptr_t)ctx->buf;
}

static int rc_post_recv(struct rc_ctx *ctx, int n)
{
	struct ibv_sge sge = {
		.addr = rc_addr(ctx),
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
		if (ibv_post_recv(ctx->qp, &wr, &bad))
			break;
	return i;
}

static int rc_post_send(struct rc_ctx *ctx)
{
	struct ibv_sge sge = {
		.addr = rc_addr(ctx),
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

	if (ctx->qpx) {
		ibv_wr_start(ctx->qpx);
		ctx->qpx->wr_id = PP_SEND_WRID;
		ctx->qpx->wr_flags = ctx->send_flags;
		ibv_wr_send(ctx->qpx);
		ibv_wr_set_sge(ctx->qpx, sge.lkey, sge.addr, sge.length);
		return ibv_wr_complete(ctx->qpx);
	}
	return ibv_post_send(ctx->qp, &wr, &bad);
}

static void rc_ts_sample(struct rc_ctx *ctx, struct rc_ts *ts, uint64_t t)
{
	uint64_t delta;

	if (ts->last_with_ts) {
		/* The clock may have wrapped at ts_mask. */
		if (t >= ts->prev)
			delta = t - ts->prev;
		else
			delta = ctx->ts_mask - ts->prev + t + 1;
		if (delta > ts->max_delta)
			ts->max_delta = delta;
		if (delta < ts->min_delta)
			ts->min_delta = delta;
		ts->total_delta += delta;
		ts->samples++;
	}
	ts->prev = t;
	ts->last_with_ts = 1;
}

/* Accounts one completion and posts the next send once both the previous
 * send and the peer's answer are in. 0 or 1 after printing why. */
static int rc_one_wc(struct rc_ctx *ctx, unsigned int *scnt, unsigned int *rcnt,
		     uint64_t wr_id, enum ibv_wc_status status, uint64_t t,
		     struct rc_ts *ts)
{
	if (status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			ibv_wc_status_str(status), status, (int)wr_id);
		return 1;
	}
	switch ((int)wr_id) {
	case PP_SEND_WRID:
		++*scnt;
		break;
	case PP_RECV_WRID:
		if (--ctx->routs <= 1) {
			ctx->routs +=
				rc_post_recv(ctx, ctx->rx_depth - ctx->routs);
			if (ctx->routs < (int)ctx->rx_depth) {
				fprintf(stderr, "Couldn't post receive (%d)\n",
					ctx->routs);
				return 1;
			}
		}
		++*rcnt;
		if (ctx->o->use_ts)
			rc_ts_sample(ctx, ts, t);
		break;
	default:
		fprintf(stderr, "Completion for unknown wr_id %d\n",
			(int)wr_id);
		return 1;
	}

	ctx->pending &= ~(int)wr_id;
	if (*scnt < ctx->o->iters && !ctx->pending) {
		if (rc_post_send(ctx)) {
			fprintf(stderr, "Couldn't post send\n");
			return 1;
		}
		ctx->pending = PP_RECV_WRID | PP_SEND_WRID;
	}
	return 0;
}

static int rc_poll_ex(struct rc_ctx *ctx, unsigned int *scnt,
		      unsigned int *rcnt, struct rc_ts *ts)
{
	struct ibv_poll_cq_attr attr = {};
	struct ibv_cq_ex *cq = ctx->cq_ex;
	int ret, n = 0;

	do {
		ret = ibv_start_poll(cq, &attr);
	} while (!ctx->o->use_event && ret == ENOENT);
	if (ret == ENOENT)
		return 0;
	if (ret) {
		fprintf(stderr, "poll CQ failed %d\n", ret);
		return 1;
	}
	/* Two at most per round, as with ibv_poll_cq below. */
	do {
		if (rc_one_wc(ctx, scnt, rcnt, cq->wr_id, cq->status,
			      ibv_wc_read_completion_ts(cq), ts)) {
			ibv_end_poll(cq);
			return 1;
		}
		if (++n == 2)
			break;
		ret = ibv_next_poll(cq);
	} while (!ret);
	ibv_end_poll(cq);
	if (ret && ret != ENOENT) {
		fprintf(stderr, "poll CQ failed %d\n", ret);
		return 1;
	}
	return 0;
}

static int rc_poll(struct rc_ctx *ctx, unsigned int *scnt, unsigned int *rcnt,
		   struct rc_ts *ts)
{
	struct ibv_wc wc[2];
	int ne, i;

	do {
		ne = ibv_poll_cq(ctx->cq, 2, wc);
		if (ne < 0) {
			fprintf(stderr, "poll CQ failed %d\n", ne);
			return 1;
		}
	} while (!ctx->o->use_event && ne < 1);

	for (i = 0; i < ne; i++) {
		if (rc_one_wc(ctx, scnt, rcnt, wc[i].wr_id, wc[i].status, 0,
			      ts)) {
			fprintf(stderr, "parse WC failed %d\n", ne);
			return 1;
		}
	}
	return 0;
}

static int rc_run(struct rc_ctx *ctx, const struct pp_dest *rem)
{
	const struct pp_opts *o = ctx->o;
	struct rc_ts ts = { .min_delta = 0xffffffff };
	unsigned int scnt = 0, rcnt = 0, num_events = 0;
	struct timeval start, end;
	int ret = 0;

	if (o->servername && rc_connect(ctx, rem))
		return 1;

	ctx->pending = PP_RECV_WRID;
	if (o->servername) {
		if (o->validate)
			pp_fill_pattern(ctx->buf, ctx->size);
		if (ctx->dm &&
		    ibv_memcpy_to_dm(ctx->dm, 0, ctx->buf, ctx->size)) {
			fprintf(stderr, "Copy to dm buffer failed\n");
			return 1;
		}
		if (rc_post_send(ctx)) {
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
		if (ctx->cq_ex)
			ret = rc_poll_ex(ctx, &scnt, &rcnt, &ts);
		else
			ret = rc_poll(ctx, &scnt, &rcnt, &ts);
		if (ret)
			return 1;
	}
	if (gettimeofday(&end, NULL)) {
		perror("gettimeofday");
		return 1;
	}

	pp_report(ctx->size, o->iters, &start, &end);
	if (o->use_ts && ts.samples) {
		printf("Max receive completion clock cycles = %" PRIu64 "\n",
		       ts.max_delta);
		printf("Min receive completion clock cycles = %" PRIu64 "\n",
		       ts.min_delta);
		printf("Average receive completion clock cycles = %f\n",
		       (double)ts.total_delta / ts.samples);
	}
	if (!o->servername && o->validate) {
		if (ctx->dm &&
		    ibv_memcpy_from_dm(ctx->buf, ctx->dm, 0, ctx->size)) {
			fprintf(stderr, "Copy from DM buffer failed\n");
			return 1;
		}
		if (pp_check_pattern(ctx->buf, ctx->size))
			ret = 1;
	}
	ibv_ack_cq_events(ctx->cq, num_events);
	return ret;
}

int pp_conn_main(int argc, char *argv[], enum ibv_qp_type qpt)
{
	struct pp_defaults def = {
		.size = 4096,
		.extra = PP_OPT_MTU,
		.size_help = "size of message to exchange",
	};
	struct ibv_device **list;
	struct ibv_device *dev;
	struct pp_dest *rem;
	struct rc_ctx *ctx;
	struct pp_opts o;
	int ret;

	if (qpt == IBV_QPT_RC)
		def.extra |= PP_OPT_ODP | PP_OPT_IODP | PP_OPT_TS | PP_OPT_DM |
			     PP_OPT_NEW_SEND;
	srand48(getpid() * time(NULL));
	if (pp_parse(argc, argv, &def, &o, &ret))
		return ret;
	if (o.use_odp && o.use_dm) {
		fprintf(stderr, "DM memory region can't be on demand\n");
		return 1;
	}
	if (!o.use_odp && o.prefetch) {
		fprintf(stderr, "prefetch is valid only with on-demand memory "
				"region\n");
		return 1;
	}

	dev = pp_find_device(&o, &list);
	if (!dev)
		return 1;
	ctx = rc_init(dev, &o, qpt);
	if (!ctx)
		return 1;

	ctx->routs = rc_post_recv(ctx, ctx->rx_depth);
	if (ctx->routs < (int)ctx->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", ctx->routs);
		return 1;
	}
	if (pp_arm_and_query_port(ctx->context, ctx->cq, &o, &ctx->portinfo))
		return 1;
	if (pp_local_dest(ctx->context, &o, &ctx->portinfo, ctx->qp->qp_num, 1,
			  &ctx->my))
		return 1;
	pp_print_dest("local address: ", &ctx->my, ',');

	if (o.servername)
		rem = pp_client_exch(o.servername, o.port, &ctx->my, 1);
	else
		rem = pp_server_exch(o.port, &ctx->my, 1, rc_connect, ctx);
	if (!rem)
		return 1;
	pp_print_dest("remote address:", rem, ',');

	ret = rc_run(ctx, rem);
	free(rem);
	if (rc_destroy(ctx))
		return 1;
	ibv_free_device_list(list);
	return ret;
}
