/* SPDX-License-Identifier: MIT */
/*
 * QPs come and go on CQs that live on, while another thread polls them.
 * The poller remembers the QP of the last completion it retired so it
 * need not look QPs up per completion; a destroyed QP must drop out of
 * that memory before it is freed, or the next completion for a new QP
 * reads freed memory (AddressSanitizer's stage reports it; TSan the
 * race with ibv_destroy_qp).  Every completion must name the live QP,
 * with the right opcode, and the data must arrive.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "t_util.h"

#define ROUNDS 150
#define PER_ROUND 6 /* WRITEs, then SENDs with their RECVs */
#define LEN 256

static struct ibv_cq *cq_a, *cq_b;
static _Atomic uint32_t live_a, live_b; /* qp_num of the current pair */
static _Atomic unsigned int reaped_a, reaped_b;
static _Atomic bool stop;

static void reap(struct ibv_cq *cq, _Atomic uint32_t *live,
		 _Atomic unsigned int *reaped)
{
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(cq, 4, wc);

	T_GE(n, 0);
	for (int i = 0; i < n; i++) {
		T_WC_STATUS(&wc[i], IBV_WC_SUCCESS);
		T_EQ(wc[i].qp_num, atomic_load(live));
		atomic_fetch_add(reaped, 1);
	}
}

static void *poller(void *arg)
{
	while (!atomic_load(&stop)) {
		reap(cq_a, &live_a, &reaped_a);
		reap(cq_b, &live_b, &reaped_b);
		sched_yield();
	}
	return NULL;
}

static void wait_reaped(_Atomic unsigned int *reaped, unsigned int want)
{
	uint64_t end = t_now_ms() + T_WAIT_MS;

	while (atomic_load(reaped) < want) {
		if (t_now_ms() > end)
			T_FAIL("%u of %u completions reaped",
			       atomic_load(reaped), want);
		sched_yield();
	}
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_buf s, t;
	struct t_ep ea, eb;
	pthread_t th;
	struct t_dev d;
	unsigned int want_a = 0, want_b = 0;

	t_init("cq_qp_churn");
	t_dev_open(&d);
	cq_a = t_cq_create(&d, 64, NULL);
	cq_b = t_cq_create(&d, 64, NULL);
	t_buf_alloc(&d, &s, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &t, PER_ROUND * LEN, T_ACCESS_ALL);
	T_OK(pthread_create(&th, NULL, poller, NULL));

	for (unsigned int r = 0; r < ROUNDS; r++) {
		struct ibv_qp *a, *b;

		t_qp_init_attr(&ia, IBV_QPT_RC, cq_a, cq_a);
		a = t_qp_create(&d, &ia);
		t_qp_init_attr(&ia, IBV_QPT_RC, cq_b, cq_b);
		b = t_qp_create(&d, &ia);
		atomic_store(&live_a, a->qp_num);
		atomic_store(&live_b, b->qp_num);
		t_ep_local(&d, a, r * 16 + 1, &ea);
		t_ep_local(&d, b, r * 16 + 2, &eb);
		t_qp_connect(a, ea.psn, &eb, NULL);
		t_qp_connect(b, eb.psn, &ea, NULL);

		memset(t.p, 0, t.len);
		t_fill(s.p, LEN, r);
		for (unsigned int i = 0; i < PER_ROUND; i++) {
			if (i % 2) {
				t_post_recv(b, i, t.mr, t.p + i * LEN, LEN);
				t_post_send(a, i, IBV_WR_SEND, s.mr, s.p, LEN,
					    IBV_SEND_SIGNALED, 0, 0);
				want_b++;
			} else {
				t_post_send(a, i, IBV_WR_RDMA_WRITE, s.mr, s.p,
					    LEN, IBV_SEND_SIGNALED,
					    (uintptr_t)t.p + i * LEN,
					    t.mr->rkey);
			}
			want_a++;
		}
		wait_reaped(&reaped_a, want_a);
		wait_reaped(&reaped_b, want_b);
		for (unsigned int i = 0; i < PER_ROUND; i++)
			T_CHECK_FILL(t.p + i * LEN, LEN, r);
		/* The poller goes on polling both CQs meanwhile. */
		T_OK(ibv_destroy_qp(a));
		T_OK(ibv_destroy_qp(b));
	}
	atomic_store(&stop, true);
	T_OK(pthread_join(th, NULL));
	T_OK(ibv_destroy_cq(cq_a));
	T_OK(ibv_destroy_cq(cq_b));
	t_buf_free(&s);
	t_buf_free(&t);
	t_dev_close(&d);
	return 0;
}
