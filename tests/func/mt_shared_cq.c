/* SPDX-License-Identifier: MIT */
/*
 * Four threads, each with its own RC QP pair, post SENDs (with their
 * RECVs) and RDMA WRITEs with a window of iterations in flight.  All
 * requesters share one CQ and all responders another, and every thread
 * polls both: a completion may be reaped by any thread.  Every wr_id must
 * be seen exactly once, with the right status, opcode, QP and length, and
 * the data of every message must arrive intact.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "t_util.h"

#define NTHREADS 4
#define ITERS 1500
#define WINDOW 8
#define MSG 512

enum {
	K_SEND,
	K_WRITE,
	K_RECV,
	K_NUM
};

/* thread 8 bits | iteration 24 bits | kind 8 bits */
#define WRID(t, it, k) \
	(((uint64_t)(t) << 32) | ((uint64_t)(it) << 8) | (uint64_t)(k))
#define WRID_T(w) ((unsigned int)((w) >> 32))
#define WRID_IT(w) ((unsigned int)(((w) >> 8) & 0xffffff))
#define WRID_K(w) ((unsigned int)((w)&0xff))

struct mark {
	_Atomic uint32_t seen;
	uint32_t byte_len;
};

struct worker {
	unsigned int id;
	struct ibv_qp *a, *b; /* a sends, b receives */
	struct t_buf src;     /* WINDOW send slots, then WINDOW write slots */
	struct t_buf dst;     /* WINDOW recv slots, then WINDOW write slots */
	pthread_t thread;
};

static struct t_dev dev;
static struct ibv_cq *cq_req, *cq_resp;
static struct worker workers[NTHREADS];
static struct mark marks[NTHREADS][ITERS][K_NUM];
static _Atomic uint64_t reaped;

static uint32_t msg_len(unsigned int t, unsigned int it, unsigned int k)
{
	return 1 + (it * 37u + t * 11u + k * 101u) % MSG;
}

static uint32_t seed_of(unsigned int t, unsigned int it, unsigned int k)
{
	return (t << 24) ^ (it << 2) ^ k;
}

static void connect_rc(struct ibv_qp *a, struct ibv_qp *b)
{
	struct t_ep ea, eb;

	t_ep_local(&dev, a, 0x100 + a->qp_num, &ea);
	t_ep_local(&dev, b, 0x200 + b->qp_num, &eb);
	t_qp_connect(a, ea.psn, &eb, NULL);
	t_qp_connect(b, eb.psn, &ea, NULL);
}

static void check_wc(const struct ibv_wc *wc, bool requester)
{
	unsigned int t = WRID_T(wc->wr_id), it = WRID_IT(wc->wr_id);
	unsigned int k = WRID_K(wc->wr_id);
	struct worker *w;

	if (t >= NTHREADS || it >= ITERS || k >= K_NUM)
		T_FAIL("unknown wr_id %#llx", (unsigned long long)wc->wr_id);
	w = &workers[t];
	T_WC_STATUS(wc, IBV_WC_SUCCESS);
	if (requester) {
		T_NE(k, K_RECV);
		T_EQ(wc->qp_num, w->a->qp_num);
		T_EQ(wc->opcode, k == K_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	} else {
		T_EQ(k, K_RECV);
		T_EQ(wc->qp_num, w->b->qp_num);
		T_EQ(wc->opcode, IBV_WC_RECV);
		/* Read by the owner after it sees the mark below. */
		marks[t][it][k].byte_len = wc->byte_len;
	}
	if (atomic_fetch_add_explicit(&marks[t][it][k].seen, 1,
				      memory_order_acq_rel))
		T_FAIL("wr_id %#llx completed twice",
		       (unsigned long long)wc->wr_id);
	atomic_fetch_add_explicit(&reaped, 1, memory_order_relaxed);
}

/* Reap from both shared CQs, whoever the completions belong to. */
static void reap(unsigned int *turn)
{
	struct ibv_wc wc[4];
	/* 1 to 4 entries: vary how the pollers' batches interleave. */
	int want = 1 + (int)((*turn)++ % 4), n;

	n = ibv_poll_cq(cq_req, want, wc);
	T_GE(n, 0);
	for (int i = 0; i < n; i++)
		check_wc(&wc[i], true);
	n = ibv_poll_cq(cq_resp, want, wc);
	T_GE(n, 0);
	for (int i = 0; i < n; i++)
		check_wc(&wc[i], false);
	if (!n)
		sched_yield();
}

static bool iteration_done(unsigned int t, unsigned int it)
{
	for (int k = 0; k < K_NUM; k++)
		if (!atomic_load_explicit(&marks[t][it][k].seen,
					  memory_order_acquire))
			return false;
	return true;
}

static void verify(struct worker *w, unsigned int it, unsigned int *turn)
{
	unsigned int t = w->id, slot = it % WINDOW;
	uint64_t end = t_now_ms() + 2 * T_WAIT_MS;
	uint8_t *rslot = w->dst.p + slot * MSG;
	uint8_t *wslot = w->dst.p + (WINDOW + slot) * MSG;

	while (!iteration_done(t, it)) {
		if (t_now_ms() > end)
			T_FAIL("thread %u iteration %u: completions lost "
			       "(send %u write %u recv %u)",
			       t, it, marks[t][it][K_SEND].seen,
			       marks[t][it][K_WRITE].seen,
			       marks[t][it][K_RECV].seen);
		reap(turn);
	}
	T_EQ(marks[t][it][K_RECV].byte_len, msg_len(t, it, K_SEND));
	T_CHECK_FILL(rslot, msg_len(t, it, K_SEND), seed_of(t, it, K_SEND));
	T_CHECK_FILL(wslot, msg_len(t, it, K_WRITE), seed_of(t, it, K_WRITE));
}

static void post(struct worker *w, unsigned int it)
{
	unsigned int t = w->id, slot = it % WINDOW;
	uint8_t *s_send = w->src.p + slot * MSG;
	uint8_t *s_write = w->src.p + (WINDOW + slot) * MSG;
	uint8_t *rslot = w->dst.p + slot * MSG;
	uint8_t *wslot = w->dst.p + (WINDOW + slot) * MSG;

	memset(rslot, 0, MSG);
	memset(wslot, 0, MSG);
	t_fill(s_send, msg_len(t, it, K_SEND), seed_of(t, it, K_SEND));
	t_fill(s_write, msg_len(t, it, K_WRITE), seed_of(t, it, K_WRITE));
	t_post_recv(w->b, WRID(t, it, K_RECV), w->dst.mr, rslot, MSG);
	t_post_send(w->a, WRID(t, it, K_SEND), IBV_WR_SEND, w->src.mr, s_send,
		    msg_len(t, it, K_SEND), IBV_SEND_SIGNALED, 0, 0);
	t_post_send(w->a, WRID(t, it, K_WRITE), IBV_WR_RDMA_WRITE, w->src.mr,
		    s_write, msg_len(t, it, K_WRITE), IBV_SEND_SIGNALED,
		    (uintptr_t)wslot, w->dst.mr->rkey);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int turn = w->id;

	for (unsigned int it = 0; it < ITERS + WINDOW; it++) {
		if (it >= WINDOW)
			verify(w, it - WINDOW, &turn);
		if (it < ITERS)
			post(w, it);
	}
	return NULL;
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;

	t_init("mt_shared_cq");
	t_dev_open(&dev);
	cq_req = t_cq_create(&dev, 256, NULL);
	cq_resp = t_cq_create(&dev, 256, NULL);
	for (unsigned int t = 0; t < NTHREADS; t++) {
		struct worker *w = &workers[t];

		w->id = t;
		t_qp_init_attr(&ia, IBV_QPT_RC, cq_req, cq_req);
		w->a = t_qp_create(&dev, &ia);
		t_qp_init_attr(&ia, IBV_QPT_RC, cq_resp, cq_resp);
		w->b = t_qp_create(&dev, &ia);
		connect_rc(w->a, w->b);
		t_buf_alloc(&dev, &w->src, 2 * WINDOW * MSG, T_ACCESS_ALL);
		t_buf_alloc(&dev, &w->dst, 2 * WINDOW * MSG, T_ACCESS_ALL);
	}
	for (unsigned int t = 0; t < NTHREADS; t++)
		T_OK(pthread_create(&workers[t].thread, NULL, worker_main,
				    &workers[t]));
	for (unsigned int t = 0; t < NTHREADS; t++)
		T_OK(pthread_join(workers[t].thread, NULL));

	/* Exactly once each: none lost (checked while waiting), none twice
	 * (checked when reaped), and nothing left over. */
	for (unsigned int t = 0; t < NTHREADS; t++)
		for (unsigned int it = 0; it < ITERS; it++)
			for (int k = 0; k < K_NUM; k++)
				T_EQ(marks[t][it][k].seen, 1);
	T_EQ(reaped, (uint64_t)NTHREADS * ITERS * K_NUM);
	if (t_poll(cq_req, &wc, T_QUIET_MS) || t_poll(cq_resp, &wc, 0))
		T_FAIL("extra completion, wr_id %#llx",
		       (unsigned long long)wc.wr_id);
	t_log("%llu completions reaped by %d threads sharing 2 CQs",
	      (unsigned long long)reaped, NTHREADS);

	for (unsigned int t = 0; t < NTHREADS; t++) {
		struct worker *w = &workers[t];

		T_OK(ibv_destroy_qp(w->a));
		T_OK(ibv_destroy_qp(w->b));
		t_buf_free(&w->src);
		t_buf_free(&w->dst);
	}
	T_OK(ibv_destroy_cq(cq_req));
	T_OK(ibv_destroy_cq(cq_resp));
	t_dev_close(&dev);
	t_pass();
}
