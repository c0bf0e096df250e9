/* SPDX-License-Identifier: MIT */
/*
 * softrdma-bench-poll: what a completion costs the poller, with and
 * without completion timestamps.  One process, two RC QPs on the default
 * device.  Each round posts a batch of signaled 8-byte inline WRITEs,
 * lets the device complete them all, then times one pass of
 * ibv_start_poll/ibv_next_poll/ibv_end_poll over the batch reading every
 * standard field (plus the timestamp or the wall-clock time when the CQ
 * has it), and ibv_poll_cq for comparison.  It also times the whole
 * batch, post to last CQE, which includes the device's cost of stamping,
 * and last what an ibv_poll_cq that finds nothing costs.  Prints the
 * median over the rounds.  A command, not a test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BATCH 256
#define ROUNDS 200
#define EMPTY_POLLS 10000

enum kind {
	K_POLL_CQ,
	K_STANDARD,
	K_TS,
	K_WALL,
	K_COUNT
};
static const char *const kind_name[K_COUNT] = {
	"ibv_poll_cq (no timestamp)",
	"cq_ex standard fields",
	"cq_ex + completion_ts",
	"cq_ex + wallclock_ns",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *what)
{
	fprintf(stderr, "softrdma-bench-poll: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint64_t *buf;
	struct ibv_cq_ex *cq;
	struct ibv_cq *peer_cq;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
};

static void qp_up(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *gid)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void rig_up(struct rig *r, struct ibv_context *ctx, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 2 * BATCH,
					  .wc_flags = wc_flags };
	struct ibv_qp_init_attr ia = { 0 };

	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->pd = ibv_alloc_pd(ctx);
	r->buf = calloc(1, 4096);
	if (!r->pd || !r->buf)
		die("pd");
	r->mr = ibv_reg_mr(r->pd, r->buf, 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	r->cq = ibv_create_cq_ex(ctx, &ca);
	r->peer_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!r->mr || !r->cq || !r->peer_cq ||
	    ibv_query_gid(ctx, 1, 0, &r->gid))
		die("resources");
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = BATCH;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 64;
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(r->cq);
	r->a = ibv_create_qp(r->pd, &ia);
	ia.send_cq = ia.recv_cq = r->peer_cq;
	r->b = ibv_create_qp(r->pd, &ia);
	if (!r->a || !r->b)
		die("qp");
	qp_up(r->a, r->b->qp_num, &r->gid);
	qp_up(r->b, r->a->qp_num, &r->gid);
}

static void rig_down(struct rig *r)
{
	ibv_destroy_qp(r->a);
	ibv_destroy_qp(r->b);
	ibv_destroy_cq(ibv_cq_ex_to_cq(r->cq));
	ibv_destroy_cq(r->peer_cq);
	ibv_dereg_mr(r->mr);
	ibv_dealloc_pd(r->pd);
	free(r->buf);
}

static void post_batch(struct rig *r)
{
	static uint64_t v = 1;
	struct ibv_sge sge = { (uintptr_t)&v, 8, r->mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad;

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)r->buf;
	wr.wr.rdma.rkey = r->mr->rkey;
	for (int i = 0; i < BATCH; i++) {
		wr.wr_id = (uint64_t)i;
		if (ibv_post_send(r->a, &wr, &bad))
			die("post");
	}
}

static volatile uint64_t sink;

/* One timed pass over what is there; returns the CQEs it took. */
static int poll_pass(struct rig *r, enum kind k, uint64_t *ns)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc[32];
	uint64_t t0 = now_ns(), acc = 0;
	int n = 0, got;

	if (k == K_POLL_CQ) {
		while ((got = ibv_poll_cq(ibv_cq_ex_to_cq(r->cq), 32, wc)) > 0)
			for (int i = 0; i < got; i++, n++)
				acc += wc[i].wr_id + wc[i].byte_len +
				       wc[i].qp_num + wc[i].status;
	} else if (!ibv_start_poll(r->cq, &pa)) {
		do {
			acc += r->cq->wr_id + r->cq->status +
			       ibv_wc_read_opcode(r->cq) +
			       ibv_wc_read_byte_len(r->cq) +
			       ibv_wc_read_qp_num(r->cq) +
			       ibv_wc_read_wc_flags(r->cq);
			if (k == K_TS)
				acc += ibv_wc_read_completion_ts(r->cq);
			else if (k == K_WALL)
				acc += ibv_wc_read_completion_wallclock_ns(
					r->cq);
			n++;
		} while (!ibv_next_poll(r->cq));
		ibv_end_poll(r->cq);
	}
	*ns = now_ns() - t0;
	sink += acc;
	return n;
}

/* Poll until the batch is complete; returns when its last CQE came. */
static uint64_t drain(struct rig *r, int have)
{
	uint64_t ns;

	while (have < BATCH)
		have += poll_pass(r, K_POLL_CQ, &ns);
	return now_ns();
}

/* ns per ibv_poll_cq on an empty CQ: the median of ROUNDS rounds. */
static double empty_poll_ns(struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	uint64_t per[ROUNDS];
	struct ibv_wc wc;

	if (!cq)
		die("cq");
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t0 = now_ns();

		for (int k = 0; k < EMPTY_POLLS; k++)
			if (ibv_poll_cq(cq, 1, &wc))
				die("a completion on an idle CQ");
		per[i] = now_ns() - t0;
	}
	ibv_destroy_cq(cq);
	qsort(per, ROUNDS, sizeof(per[0]), cmp_u64);
	return (double)per[ROUNDS / 2] / EMPTY_POLLS;
}

int main(void)
{
	static const uint64_t flags[K_COUNT] = {
		IBV_WC_STANDARD_FLAGS,
		IBV_WC_STANDARD_FLAGS,
		IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		IBV_WC_STANDARD_FLAGS |
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_device **list;
	struct ibv_context *ctx;
	int num;

	list = ibv_get_device_list(&num);
	if (!list || !num)
		die("no device");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		die("open");
	printf("%-28s %14s %16s\n", "CQ", "poll ns/CQE", "batch ns/CQE");
	for (int k = 0; k < K_COUNT; k++) {
		uint64_t per[ROUNDS], batch[ROUNDS];
		int rounds = 0;
		struct rig r;

		rig_up(&r, ctx, flags[k]);
		for (int i = 0; i < ROUNDS + ROUNDS / 10; i++) {
			uint64_t ns;
			int n;

			/* The device completes the batch meanwhile: the pass
			 * then costs the poller alone. */
			post_batch(&r);
			usleep(3000);
			n = poll_pass(&r, (enum kind)k, &ns);
			drain(&r, n);
			if (i < ROUNDS / 10 || !n)
				continue; /* warm-up */
			per[rounds++] = ns / (uint64_t)n;
		}
		/* Batch cost, device included: post, then poll to the end. */
		for (int i = 0; i < rounds; i++) {
			uint64_t t0 = now_ns();

			post_batch(&r);
			batch[i] = (drain(&r, 0) - t0) / BATCH;
		}
		qsort(per, (size_t)rounds, sizeof(per[0]), cmp_u64);
		qsort(batch, (size_t)rounds, sizeof(batch[0]), cmp_u64);
		printf("%-28s %14" PRIu64 " %16" PRIu64 "\n", kind_name[k],
		       rounds ? per[rounds / 2] : 0,
		       rounds ? batch[rounds / 2] : 0);
		rig_down(&r);
	}
	printf("ibv_poll_cq on an empty CQ: %.1f ns\n", empty_poll_ns(ctx));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
