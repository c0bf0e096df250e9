/* SPDX-License-Identifier: MIT */
/*
 * The daemon is killed (SIGKILL) under two clients.  A polling one: every
 * WR still queued on its send and receive queues and its SRQ completes
 * with IBV_WC_WR_FLUSH_ERR within 2 s, in order; later posts fail with
 * EIO, commands with EIO, destroys succeed; IBV_EVENT_DEVICE_FATAL comes.
 * An event-driven one (a child blocked in ibv_get_cq_event and, on a
 * thread, in ibv_get_async_event): both calls return within 2 s.  Then
 * the next open of the device gets a new daemon that works.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "t_util.h"

#define NRECV 4
#define NSRQ 3
#define LOSS_MS 2000

static bool gone(pid_t pid)
{
	char path[64], st[512];
	FILE *f;
	bool zombie = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(st, sizeof(st), f)) {
		const char *p = strrchr(st, ')');

		zombie = p && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return zombie;
}

static void kill_daemon(pid_t pid)
{
	uint64_t t0 = t_now_ms();

	T_OK(kill(pid, SIGKILL) ? errno : 0);
	while (!gone(pid)) {
		if (t_now_ms() - t0 > T_WAIT_MS)
			T_FAIL("daemon %d still there after SIGKILL", (int)pid);
		t_sleep_ms(1);
	}
}

/* Poll cq until n completions came or LOSS_MS passed since t0. */
static int collect(struct ibv_cq *cq, struct ibv_wc *wc, int n, uint64_t t0)
{
	int got = 0;

	while (got < n && t_now_ms() - t0 < LOSS_MS) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		T_GE(r, 0);
		got += r;
	}
	return got;
}

static void expect_flush(const struct ibv_wc *wc, uint64_t wr_id, uint32_t qpn)
{
	T_EQ(wc->wr_id, wr_id);
	T_WC_STATUS(wc, IBV_WC_WR_FLUSH_ERR);
	T_EQ(wc->qp_num, qpn);
}

/* --- the event-driven client ---------------------------------------- */

struct async_wait {
	struct ibv_context *ctx;
	int ret;
	enum ibv_event_type type;
	uint64_t at;
};

static void *async_waiter(void *arg)
{
	struct async_wait *w = arg;
	struct ibv_async_event ev;

	w->ret = ibv_get_async_event(w->ctx, &ev);
	w->at = t_now_ms();
	if (!w->ret) {
		w->type = ev.event_type;
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

static int event_client(int fd, void *arg)
{
	struct t_dev d;
	struct ibv_comp_channel *ch;
	struct ibv_qp_init_attr ia;
	struct async_wait w = { 0 };
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp *qp;
	struct t_buf b;
	struct ibv_wc wc;
	pthread_t th;
	void *ev_ctx;
	uint64_t killed_at, back_at;
	int ret, err;

	(void)arg;
	t_dev_open(&d);
	ch = T_NONNULL(ibv_create_comp_channel(d.ctx));
	cq = t_cq_create(&d, 16, ch);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_qp_to_init(qp, NULL);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	t_post_recv(qp, 0xe0, b.mr, b.p, 64);
	T_OK(ibv_req_notify_cq(cq, 0));
	w.ctx = d.ctx;
	T_OK(pthread_create(&th, NULL, async_waiter, &w));
	t_sock_sync(fd);
	/* Blocks until the device goes. */
	ret = ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	err = errno;
	back_at = t_now_ms();
	t_sock_recv(fd, &killed_at, sizeof(killed_at));
	T_EQ(ret, -1);
	T_EQ(err, EIO);
	T_LT(back_at - killed_at, LOSS_MS);
	T_OK(pthread_join(th, NULL));
	T_EQ(w.ret, 0);
	T_EQ(w.type, IBV_EVENT_DEVICE_FATAL);
	T_LT(w.at - killed_at, LOSS_MS);
	/* The receive it waited for is flushed. */
	T_EQ(collect(cq, &wc, 1, back_at), 1);
	expect_flush(&wc, 0xe0, qp->qp_num);
	T_RET(t_post_recv_ret(qp, 0xe1, b.mr, b.p, 64), EIO);
	/* What is left of a lost device is freed as usual. */
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	T_OK(ibv_destroy_comp_channel(ch));
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

/* --- the polling client --------------------------------------------- */

int main(void)
{
	struct ibv_wc wc[32];
	struct ibv_srq_init_attr si;
	struct ibv_qp_init_attr ia;
	struct ibv_async_event ev;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge sge;
	struct ibv_srq *srq;
	struct ibv_qp *c;
	struct t_child child;
	struct t_pair p;
	struct t_buf buf;
	struct t_dev d, d2;
	uint64_t t0;
	pid_t daemon;
	int i, n;

	t_init("device_loss");
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &buf, 65536, T_ACCESS_ALL);
	for (i = 0; i < NRECV; i++) {
		t_post_recv(p.a, 0xa00 + i, buf.mr, buf.p, 64);
		t_post_recv(p.b, 0xb00 + i, buf.mr, buf.p + 64, 64);
	}
	memset(&si, 0, sizeof(si));
	si.attr.max_wr = 16;
	si.attr.max_sge = 1;
	srq = T_NONNULL(ibv_create_srq(d.pd, &si));
	t_qp_init_attr(&ia, IBV_QPT_RC, p.cq_a, p.cq_a);
	ia.srq = srq;
	c = t_qp_create(&d, &ia);
	for (i = 0; i < NSRQ; i++)
		t_post_srq_recv(srq, 0x5000 + i, buf.mr, buf.p + 128, 64);

	t_fork(&child, event_client, NULL);
	t_sock_sync(child.fd);
	t_sleep_ms(50); /* the child blocks in ibv_get_cq_event */

	/* Sends the stopped daemon never takes: one unsignaled. */
	daemon = t_daemon_pid();
	T_GT(daemon, 0);
	T_OK(kill(daemon, SIGSTOP) ? errno : 0);
	t_post_send(p.a, 0xa10, IBV_WR_RDMA_WRITE, buf.mr, buf.p, 8, 0,
		    (uintptr_t)buf.p + 4096, buf.mr->rkey);
	t_post_send(p.a, 0xa11, IBV_WR_RDMA_WRITE, buf.mr, buf.p, 8,
		    IBV_SEND_SIGNALED, (uintptr_t)buf.p + 4096, buf.mr->rkey);
	t_post_send(p.a, 0xa12, IBV_WR_SEND, buf.mr, buf.p, 8,
		    IBV_SEND_SIGNALED, 0, 0);
	kill_daemon(daemon);
	t0 = t_now_ms();
	t_sock_send(child.fd, &t0, sizeof(t0));

	/* cq_a: a's three sends, a's receives, then the SRQ's, each queue
	 * in order. */
	n = collect(p.cq_a, wc, 3 + NRECV + NSRQ, t0);
	T_EQ(n, 3 + NRECV + NSRQ);
	for (i = 0; i < 3; i++)
		expect_flush(&wc[i], 0xa10 + i, p.a->qp_num);
	for (i = 0; i < NRECV; i++)
		expect_flush(&wc[3 + i], 0xa00 + i, p.a->qp_num);
	for (i = 0; i < NSRQ; i++)
		expect_flush(&wc[3 + NRECV + i], 0x5000 + i, c->qp_num);
	n = collect(p.cq_b, wc, NRECV, t0);
	T_EQ(n, NRECV);
	for (i = 0; i < NRECV; i++)
		expect_flush(&wc[i], 0xb00 + i, p.b->qp_num);
	T_EQ(ibv_poll_cq(p.cq_a, 32, wc), 0);
	T_EQ(ibv_poll_cq(p.cq_b, 32, wc), 0);
	t_log("flushed within %llu ms", (unsigned long long)(t_now_ms() - t0));

	/* Posts fail with EIO and name the first WR. */
	sge = (struct ibv_sge){ (uintptr_t)buf.p, 8, buf.mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	bad_s = NULL;
	T_RET(ibv_post_send(p.a, &swr, &bad_s), EIO);
	T_PTR_EQ(bad_s, &swr);
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	bad_r = NULL;
	T_RET(ibv_post_recv(p.b, &rwr, &bad_r), EIO);
	T_PTR_EQ(bad_r, &rwr);
	bad_r = NULL;
	T_RET(ibv_post_srq_recv(srq, &rwr, &bad_r), EIO);
	T_PTR_EQ(bad_r, &rwr);
	T_EQ(ibv_poll_cq(p.cq_a, 32, wc), 0);

	/* The pipe's writer is gone: this returns at once. */
	T_OK(ibv_get_async_event(d.ctx, &ev));
	T_EQ(ev.event_type, IBV_EVENT_DEVICE_FATAL);
	ibv_ack_async_event(&ev);
	T_NULL_ERRNO(ibv_alloc_pd(d.ctx), EIO);
	T_EQ(t_child_wait(&child, T_WAIT_MS), 0);

	/* Everything is torn down as on a disassociated device. */
	T_OK(ibv_destroy_qp(c));
	T_OK(ibv_destroy_srq(srq));
	t_buf_free(&buf);
	t_pair_destroy(&p);
	t_dev_close(&d);

	/* The next user gets a new daemon. */
	t_dev_open(&d2);
	T_NE(t_daemon_pid(), daemon);
	t_pair_create(&d2, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d2, &buf, 4096, T_ACCESS_ALL);
	t_post_recv(p.b, 1, buf.mr, buf.p + 1024, 64);
	t_fill(buf.p, 64, 7);
	t_post_send(p.a, 2, IBV_WR_SEND, buf.mr, buf.p, 64, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(p.cq_a, wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_CHECK_FILL(buf.p + 1024, 64, 7);
	t_buf_free(&buf);
	t_pair_destroy(&p);
	t_dev_close(&d2);
	t_pass();
}
