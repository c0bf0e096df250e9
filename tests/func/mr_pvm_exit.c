/* SPDX-License-Identifier: MIT */
/*
 * A client whose memory is reached in place (no move guard) dies while a
 * peer streams 1 MiB WRITEs into its MR.  A child of the client keeps the
 * context's connection, so the MR lives on with its address space gone:
 * the first WRITE that does not complete successfully completes with
 * IBV_WC_REM_ACCESS_ERR (found by the copy itself when the client dies in
 * the middle of one), a READ of the MR afterwards too, and the child's
 * own copy of the memory (private since the fork) is never written.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define LEN (4u << 20)
#define MSG (1u << 20)
#define A_BYTE 0xaa

struct a_info {
	uint64_t addr;
	uint32_t rkey;
	pid_t holder;
	struct t_ep ep[2];
};

static int to_h[2], from_h[2];

/* The holder: reports whether its copy still holds A's bytes. */
static void holder_main(const uint8_t *p)
{
	char c;

	for (;;) {
		uint8_t ok = 1;

		if (read(to_h[0], &c, 1) != 1)
			_exit(0);
		for (size_t i = 0; i < LEN; i++)
			if (p[i] != A_BYTE)
				ok = 0;
		if (write(from_h[1], &ok, 1) != 1)
			_exit(1);
	}
}

static int client_a(int fd, void *arg)
{
	struct ibv_qp_init_attr ia;
	struct t_ep peer[2];
	struct a_info info;
	struct ibv_qp *qp[2];
	struct ibv_cq *cq;
	struct t_buf b;
	struct t_dev d;

	(void)arg;
	t_dev_open(&d);
	t_buf_alloc(&d, &b, LEN, T_ACCESS_ALL);
	memset(b.p, A_BYTE, LEN);
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	for (int i = 0; i < 2; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x100 + i, &info.ep[i]);
	}
	info.addr = (uintptr_t)b.p;
	info.rkey = b.mr->rkey;
	t_sock_send(fd, &info.ep, sizeof(info.ep));
	t_sock_recv(fd, peer, sizeof(peer));
	for (int i = 0; i < 2; i++)
		t_qp_connect(qp[i], 0x100 + i, &peer[i], NULL);
	info.holder = fork();
	T_ASSERT(info.holder >= 0);
	if (!info.holder)
		holder_main(b.p);
	t_sock_send(fd, &info, sizeof(info));
	for (;;)
		pause(); /* until the peer kills us */
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp[2];
	struct a_info info;
	struct t_ep me[2], aep[2];
	struct t_child a;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct t_buf loc;
	struct t_dev d;
	unsigned int ok_before = 0, ok_after = 0, posted = 0, done = 0;
	bool killed = false;
	uint64_t deadline;
	uint8_t ok;
	int st;

	setenv("SOFTRDMA_MOVE_GUARD", "none", 1);
	t_init("mr_pvm_exit");
	T_ASSERT(!pipe(to_h) && !pipe(from_h));
	t_dev_open(&d);
	cq = t_cq_create(&d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	t_buf_alloc(&d, &loc, LEN, T_ACCESS_ALL);
	memset(loc.p, 0x55, LEN);
	t_fork(&a, client_a, NULL);
	t_sock_recv(a.fd, aep, sizeof(aep));
	for (int i = 0; i < 2; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x200 + i, &me[i]);
		t_qp_connect(qp[i], 0x200 + i, &aep[i], NULL);
	}
	t_sock_send(a.fd, me, sizeof(me));
	t_sock_recv(a.fd, &info, sizeof(info));

	/* Four WRITEs in flight, each over a new MiB of A's MR; A is killed
	 * once a few have landed. */
	deadline = t_now_ms() + 20000;
	for (;;) {
		int n;

		while (posted - done < 4) {
			uint32_t off = (posted % (LEN / MSG)) * MSG;

			t_post_send(qp[0], posted, IBV_WR_RDMA_WRITE, loc.mr,
				    loc.p, MSG, IBV_SEND_SIGNALED,
				    info.addr + off, info.rkey);
			posted++;
		}
		n = t_poll(cq, &wc, T_WAIT_MS);
		T_EQ(n, 1);
		done++;
		if (wc.status != IBV_WC_SUCCESS)
			break;
		if (killed)
			ok_after++;
		else if (++ok_before == 8) {
			kill(a.pid, SIGKILL);
			killed = true;
		}
		T_ASSERT(t_now_ms() < deadline);
	}
	T_ASSERT(killed);
	T_WC_STATUS(&wc, IBV_WC_REM_ACCESS_ERR);
	t_log("%u WRITEs landed before the kill, %u after it, then %s",
	      ok_before, ok_after, ibv_wc_status_str(wc.status));
	T_EQ(waitpid(a.pid, &st, 0), a.pid);
	T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* Reading the MR fails too. */
	t_post_send(qp[1], 1000, IBV_WR_RDMA_READ, loc.mr, loc.p, MSG,
		    IBV_SEND_SIGNALED, info.addr, info.rkey);
	for (;;) {
		T_EQ(t_poll(cq, &wc, T_WAIT_MS), 1);
		if (wc.wr_id == 1000)
			break;
		T_WC_STATUS(&wc, IBV_WC_WR_FLUSH_ERR);
	}
	T_WC_STATUS(&wc, IBV_WC_REM_ACCESS_ERR);

	/* The holder's memory is its own. */
	T_EQ(write(to_h[1], "?", 1), 1);
	T_EQ(read(from_h[0], &ok, 1), 1);
	T_EQ(ok, 1);

	kill(info.holder, SIGKILL);
	for (int i = 0; i < 2; i++)
		T_OK(ibv_destroy_qp(qp[i]));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&loc);
	t_dev_close(&d);
	return T_EXIT_PASS;
}
