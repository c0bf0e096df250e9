/* SPDX-License-Identifier: MIT */
/*
 * One thread sleeps in ibv_get_cq_event on a completion channel while two
 * others post SENDs on their own RC QPs, whose receive side shares the
 * channel's CQ.  The event thread reaps receives only after an event
 * (ack, re-arm, then drain), so a lost event stalls the test.  Between
 * bursts it is seen blocked in read() on the channel with nothing pending,
 * hence each burst must wake it: at least one event per burst.  Every
 * message arrives once, intact.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "t_util.h"

#define NPOSTERS 2
#define NBURSTS 20
#define BURST 40
#define PER_POSTER (NBURSTS * BURST)
#define TOTAL (NPOSTERS * PER_POSTER)
#define MSG 300
#define RSLOTS 64 /* >= BURST: a burst never reuses a receive buffer */

struct poster {
	unsigned int id;
	pthread_t thread;
	struct ibv_cq *scq;
	struct ibv_qp *a, *b;
	struct t_buf src, rbuf;
	_Atomic uint32_t received;
	uint8_t seen[PER_POSTER];
};

static struct t_dev dev;
static struct ibv_comp_channel *ch;
static struct ibv_cq *cq_ev;
static struct poster posters[NPOSTERS];
static pthread_barrier_t barrier;
static _Atomic pid_t ev_tid;
static _Atomic uint32_t events;
static int cq_cookie;

static uint32_t len_of(unsigned int t, uint32_t s)
{
	return 1 + (s * 29u + t * 7u) % MSG;
}

static uint32_t seed_of(unsigned int t, uint32_t s)
{
	return 0x5000000u ^ (t << 20) ^ s;
}

static void reap(const struct ibv_wc *wc)
{
	unsigned int t = (unsigned int)(wc->wr_id >> 32);
	uint32_t s = (uint32_t)wc->wr_id;
	struct poster *p;

	if (t >= NPOSTERS || s >= PER_POSTER)
		T_FAIL("unknown wr_id %#llx", (unsigned long long)wc->wr_id);
	p = &posters[t];
	T_WC_STATUS(wc, IBV_WC_SUCCESS);
	T_EQ(wc->opcode, IBV_WC_RECV);
	T_EQ(wc->qp_num, p->b->qp_num);
	T_EQ(wc->byte_len, len_of(t, s));
	if (p->seen[s]++)
		T_FAIL("poster %u message %u received twice", t, s);
	T_CHECK_FILL(p->rbuf.p + (size_t)(s % RSLOTS) * MSG, len_of(t, s),
		     seed_of(t, s));
	atomic_fetch_add_explicit(&p->received, 1, memory_order_release);
}

static void *event_main(void *arg)
{
	uint32_t got = 0;
	struct ibv_wc wc[16];

	(void)arg;
	atomic_store(&ev_tid, (pid_t)syscall(SYS_gettid));
	while (got < TOTAL) {
		struct ibv_cq *cq = NULL;
		void *ctx = NULL;
		int n;

		/* Blocks: no deadline here, the main thread keeps one. */
		T_EQ(ibv_get_cq_event(ch, &cq, &ctx), 0);
		T_PTR_EQ(cq, cq_ev);
		T_PTR_EQ(ctx, &cq_cookie);
		atomic_fetch_add(&events, 1);
		ibv_ack_cq_events(cq, 1);
		/* Re-arm before draining: what lands after the drain raises
		 * the next event. */
		T_OK(ibv_req_notify_cq(cq, 0));
		while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
			for (int i = 0; i < n; i++)
				reap(&wc[i]);
			got += (uint32_t)n;
		}
		T_EQ(n, 0);
	}
	return NULL;
}

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	unsigned int t = p->id;
	struct ibv_wc wc;

	for (uint32_t b = 0; b < NBURSTS; b++) {
		uint64_t end;

		for (uint32_t j = 0; j < BURST; j++) {
			uint32_t s = b * BURST + j;
			uint8_t *sb = p->src.p + (size_t)j * MSG;

			t_fill(sb, len_of(t, s), seed_of(t, s));
			t_post_recv(p->b, ((uint64_t)t << 32) | s, p->rbuf.mr,
				    p->rbuf.p + (size_t)(s % RSLOTS) * MSG,
				    MSG);
			t_post_send(p->a, s, IBV_WR_SEND, p->src.mr, sb,
				    len_of(t, s), IBV_SEND_SIGNALED, 0, 0);
			/* Vary the pace so the CQ sometimes runs dry. */
			if (j % 8 == 7)
				sched_yield();
		}
		for (uint32_t j = 0; j < BURST; j++)
			T_EXPECT_WC(p->scq, &wc, b * BURST + j, IBV_WC_SUCCESS,
				    IBV_WC_SEND);
		end = t_now_ms() + 2 * T_WAIT_MS;
		while (atomic_load_explicit(&p->received,
					    memory_order_acquire) <
		       (b + 1) * BURST) {
			if (t_now_ms() > end)
				T_FAIL("poster %u burst %u: %u of %u "
				       "messages reaped (events lost)",
				       t, b, atomic_load(&p->received),
				       (b + 1) * BURST);
			t_sleep_ms(1);
		}
		/* The main thread checks the event thread sleeps. */
		pthread_barrier_wait(&barrier);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

/* Is thread tid blocked in read() on fd?  /proc/<tid>/syscall names the
 * system call and its arguments; without it, the thread's state must at
 * least be S (sleeping). */
static bool blocked_in_read(pid_t tid, int fd)
{
	char path[96], buf[256];
	long nr = -1;
	unsigned long a0 = 0;
	ssize_t len;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f >= 0) {
		len = read(f, buf, sizeof(buf) - 1);
		close(f);
		if (len > 0) {
			buf[len] = 0;
			if (sscanf(buf, "%ld %lx", &nr, &a0) == 2)
				return nr == SYS_read &&
				       a0 == (unsigned long)fd;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	len = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (len <= 0)
		return false;
	buf[len] = 0;
	/* "tid (comm) S ...": the state follows the last ')'. */
	return strrchr(buf, ')') && strrchr(buf, ')')[1] == ' ' &&
	       strrchr(buf, ')')[2] == 'S';
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_ep ea, eb;
	pthread_t ethread;

	t_init("mt_cq_event");
	t_dev_open(&dev);
	ch = T_NONNULL(ibv_create_comp_channel(dev.ctx));
	cq_ev = T_NONNULL(
		ibv_create_cq(dev.ctx, 4 * RSLOTS, &cq_cookie, ch, 0));
	for (unsigned int t = 0; t < NPOSTERS; t++) {
		struct poster *p = &posters[t];

		p->id = t;
		p->scq = t_cq_create(&dev, 2 * BURST, NULL);
		t_qp_init_attr(&ia, IBV_QPT_RC, p->scq, p->scq);
		p->a = t_qp_create(&dev, &ia);
		t_qp_init_attr(&ia, IBV_QPT_RC, cq_ev, cq_ev);
		ia.cap.max_recv_wr = RSLOTS;
		p->b = t_qp_create(&dev, &ia);
		t_ep_local(&dev, p->a, 0x300 + t, &ea);
		t_ep_local(&dev, p->b, 0x400 + t, &eb);
		t_qp_connect(p->a, ea.psn, &eb, NULL);
		t_qp_connect(p->b, eb.psn, &ea, NULL);
		t_buf_alloc(&dev, &p->src, (size_t)BURST * MSG, T_ACCESS_ALL);
		t_buf_alloc(&dev, &p->rbuf, (size_t)RSLOTS * MSG, T_ACCESS_ALL);
	}
	T_OK(pthread_barrier_init(&barrier, NULL, NPOSTERS + 1));
	T_OK(ibv_req_notify_cq(cq_ev, 0));
	T_OK(pthread_create(&ethread, NULL, event_main, NULL));
	for (unsigned int t = 0; t < NPOSTERS; t++)
		T_OK(pthread_create(&posters[t].thread, NULL, poster_main,
				    &posters[t]));

	for (unsigned int b = 0; b < NBURSTS; b++) {
		uint64_t end;

		pthread_barrier_wait(&barrier);
		/* Everything so far is reaped: the event thread must go back
		 * to sleep in the channel, not spin (after the last burst it
		 * has returned). */
		end = t_now_ms() + T_WAIT_MS;
		while (b + 1 < NBURSTS &&
		       (!atomic_load(&ev_tid) ||
			!blocked_in_read(atomic_load(&ev_tid), ch->fd))) {
			if (t_now_ms() > end)
				T_FAIL("after burst %u the event thread is "
				       "not blocked reading the channel",
				       b);
			t_sleep_ms(1);
		}
		pthread_barrier_wait(&barrier);
	}
	for (unsigned int t = 0; t < NPOSTERS; t++)
		T_OK(pthread_join(posters[t].thread, NULL));
	T_OK(pthread_join(ethread, NULL));

	for (unsigned int t = 0; t < NPOSTERS; t++)
		for (uint32_t s = 0; s < PER_POSTER; s++)
			T_EQ(posters[t].seen[s], 1);
	/* Each burst found the thread asleep with the CQ armed. */
	T_GE(atomic_load(&events), NBURSTS);
	T_LE(atomic_load(&events), TOTAL);
	T_EXPECT_NO_WC(cq_ev, T_QUIET_MS);
	t_log("%d messages, %u events", TOTAL, atomic_load(&events));

	for (unsigned int t = 0; t < NPOSTERS; t++) {
		struct poster *p = &posters[t];

		T_OK(ibv_destroy_qp(p->a));
		T_OK(ibv_destroy_qp(p->b));
		T_OK(ibv_destroy_cq(p->scq));
		t_buf_free(&p->src);
		t_buf_free(&p->rbuf);
	}
	T_OK(ibv_destroy_cq(cq_ev));
	T_OK(ibv_destroy_comp_channel(ch));
	pthread_barrier_destroy(&barrier);
	t_dev_close(&dev);
	t_pass();
}
