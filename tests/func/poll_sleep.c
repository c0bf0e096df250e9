/* SPDX-License-Identifier: MIT */
/*
 * A thread polling a CQ for a send completion that takes long sleeps until
 * the daemon writes it (SOFTRDMA_POLL_YIELD=1, what machines with fewer
 * than 4 CPUs get by default; SOFTRDMA_POLL_SPIN_US=0: sleep as soon as
 * a poll finds nothing; SOFTRDMA_POLL_SLEEP_US: one sleep may last 5 s, so
 * only the daemon's wake-up can end it early):
 *  - a SEND held back by RNR (rnr_retry 7, no receive posted) for 400 ms
 *    costs the polling thread under a quarter of that time in CPU, and
 *    its completion is seen within 1 s of the receive being posted;
 *  - 2000 SENDs, each polled for from its send CQ, lose no wake-up: none
 *    takes a second (a lost one would take the whole 5 s sleep);
 *  - a receive CQ never sleeps: nothing says a message will come.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "t_util.h"

#define HOLD_MS 400
#define ROUNDS 2000

struct late_recv {
	struct t_pair *p;
	struct t_buf *r;
	uint64_t posted_ms;
};

static void *post_late(void *arg)
{
	struct late_recv *l = arg;

	t_sleep_ms(HOLD_MS);
	l->posted_ms = t_now_ms();
	t_post_recv(l->p->b, 2, l->r->mr, l->r->p, 4096);
	return NULL;
}

/* CPU time of the calling thread, in ms. */
static uint64_t thread_cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		T_FAIL("getrusage: %s", strerror(errno));
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/* Poll cq with ibv_poll_cq alone (no helper that sleeps by itself). */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, uint64_t limit_ms)
{
	uint64_t end = t_now_ms() + limit_ms;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc)))
		if (t_now_ms() > end)
			T_FAIL("no completion within %llu ms",
			       (unsigned long long)limit_ms);
	T_EQ(n, 1);
}

static void rnr_hold(struct t_dev *d)
{
	struct late_recv l = { 0 };
	uint64_t cpu0, t0, t1, cpu;
	struct t_conn_opts o;
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	pthread_t th;

	t_buf_alloc(d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(d, &r, 4096, T_ACCESS_ALL);
	t_conn_opts_init(&o);
	o.rnr_retry = 7;
	o.min_rnr_timer = 1;
	t_pair_create(d, &p, IBV_QPT_RC, NULL, &o);
	t_fill(s.p, 100, 7);
	l.p = &p;
	l.r = &r;
	t_post_send(p.a, 1, IBV_WR_SEND, s.mr, s.p, 100, IBV_SEND_SIGNALED, 0,
		    0);
	T_EQ(pthread_create(&th, NULL, post_late, &l), 0);
	t0 = t_now_ms();
	cpu0 = thread_cpu_ms();
	poll_one(p.cq_a, &wc, 10000);
	t1 = t_now_ms();
	cpu = thread_cpu_ms() - cpu0;
	T_EQ(pthread_join(th, NULL), 0);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_EQ(wc.wr_id, 1);
	t_log("held %llu ms, polling thread CPU %llu ms, completion seen "
	      "%llu ms after the receive",
	      (unsigned long long)(t1 - t0), (unsigned long long)cpu,
	      (unsigned long long)(t1 - l.posted_ms));
	T_GE(t1 - t0, HOLD_MS - 10);
	T_LT(cpu * 4, t1 - t0);
	T_LT(t1 - l.posted_ms, 1000);
	T_EXPECT_WC(p.cq_b, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(r.p, 100, 7);
	t_pair_destroy(&p);
	t_buf_free(&s);
	t_buf_free(&r);
}

static void many_wakes(struct t_dev *d)
{
	uint64_t worst = 0;
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;

	t_buf_alloc(d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(d, &r, 4096, T_ACCESS_ALL);
	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t len = 1 + (i * 37u) % 4096;
		uint64_t t0;

		t_post_recv(p.b, i, r.mr, r.p, 4096);
		t_fill(s.p, len, i);
		t0 = t_now_ms();
		t_post_send(p.a, i, IBV_WR_SEND, s.mr, s.p, len,
			    IBV_SEND_SIGNALED, 0, 0);
		poll_one(p.cq_a, &wc, 10000);
		if (t_now_ms() - t0 > worst)
			worst = t_now_ms() - t0;
		T_EQ(wc.status, IBV_WC_SUCCESS);
		T_EQ(wc.wr_id, i);
		poll_one(p.cq_b, &wc, 10000);
		T_EQ(wc.status, IBV_WC_SUCCESS);
		T_EQ(wc.byte_len, len);
		T_CHECK_FILL(r.p, len, i);
	}
	t_log("%u sends, the longest wait for a send completion %llu ms",
	      ROUNDS, (unsigned long long)worst);
	T_LT(worst, 1000);
	t_pair_destroy(&p);
	t_buf_free(&s);
	t_buf_free(&r);
}

/* Nothing is outstanding: 300 ms of empty polls on a receive CQ, and each
 * poll returns at once (a sleeping poll would take 5 s). */
static void recv_cq_awake(struct t_dev *d)
{
	uint64_t t0, longest = 0, polls = 0;
	struct ibv_wc wc;
	struct t_pair p;

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	t0 = t_now_ms();
	while (t_now_ms() - t0 < 300) {
		uint64_t a = t_now_ms();

		T_EQ(ibv_poll_cq(p.cq_b, 1, &wc), 0);
		if (t_now_ms() - a > longest)
			longest = t_now_ms() - a;
		polls++;
	}
	t_log("%llu empty polls of a receive CQ, the longest %llu ms",
	      (unsigned long long)polls, (unsigned long long)longest);
	T_LT(longest, 1000);
	t_pair_destroy(&p);
}

int main(void)
{
	struct t_dev d;

	setenv("SOFTRDMA_POLL_YIELD", "1", 1);
	setenv("SOFTRDMA_POLL_SPIN_US", "0", 1);
	setenv("SOFTRDMA_POLL_SLEEP_US", "5000000", 1);
	t_init("poll_sleep");
	t_dev_open(&d);
	rnr_hold(&d);
	many_wakes(&d);
	recv_cq_awake(&d);
	t_dev_close(&d);
	t_pass();
}
