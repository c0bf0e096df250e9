/* SPDX-License-Identifier: MIT */
/*
 * An owner that never places what is written into its memory on demand
 * cannot hold another user's QP forever.  Root starts the daemon; a
 * target T (one user) registers an ODP MR, a writer W (another user)
 * connects an RC QP to it with a short retry budget, and root stops T
 * (SIGSTOP, every thread) before W writes.  W's WRITE waits for T's
 * thread while it may (SRD_PLACE_PEER_WAIT_NS, 5 s), then its retries
 * count: it completes with RETRY_EXC_ERR.  A second QP of W, to a
 * process of W's own user, still works meanwhile, and once T runs again
 * the daemon is still there for it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_util.h"

#define LEN (64u * 1024)
#define PSN 0x3456

enum step {
	S_EP,	  /* T or P -> W: its QP and MR */
	S_WRITER, /* W -> T, P: its QP */
	S_READY,  /* T -> root: connected (root then stops it) */
	S_GO,	  /* root -> W: T is stopped */
	S_FAILED, /* W -> root: the WRITE into T failed as it should */
	S_AGAIN,  /* root -> T: running again, go on */
};

static uid_t ua, ub;

/* T (odp) or P: offer the MR, connect to W; T then waits to be stopped
 * and started again. */
static int target(int sock, void *arg)
{
	bool odp = arg != NULL;
	struct t_side s;

	t_become(odp ? ua : ub);
	t_side_open(&s, LEN,
		    IBV_ACCESS_REMOTE_WRITE | (odp ? IBV_ACCESS_ON_DEMAND : 0));
	t_side_serve(&s, sock, S_EP, S_WRITER, PSN);
	t_step_send(sock, S_READY, NULL);
	t_step_recv(sock, S_AGAIN);
	t_side_close(&s);
	return 0;
}

static int writer(int sock, void *arg)
{
	struct t_conn_opts o;
	struct t_side st, sp;
	struct t_ep t, p, ep;
	struct ibv_wc wc;
	uint64_t t0;

	(void)arg;
	t_become(ub);
	t_side_open(&st, LEN, 0);
	t_side_open(&sp, LEN, 0);
	t_fill(st.buf, LEN, 5);
	t_fill(sp.buf, LEN, 6);
	t = t_step_recv(sock, S_EP);
	p = t_step_recv(sock, S_EP);
	/* About 4 ms per try, two retries: the wait is the placement's. */
	t_conn_opts_init(&o);
	o.timeout = 10;
	o.retry_cnt = 2;
	t_qp_connect(st.qp, PSN, &t, &o);
	t_qp_connect(sp.qp, PSN, &p, NULL);
	t_ep_local(&st.d, st.qp, PSN, &ep);
	t_step_send(sock, S_WRITER, &ep);
	t_ep_local(&sp.d, sp.qp, PSN, &ep);
	t_step_send(sock, S_WRITER, &ep);
	t_step_recv(sock, S_GO);

	t0 = t_now_ms();
	t_post_send(st.qp, 1, IBV_WR_RDMA_WRITE, st.mr, st.buf, LEN,
		    IBV_SEND_SIGNALED, t.addr, t.rkey);
	/* Meanwhile our own peer is served. */
	t_post_send(sp.qp, 2, IBV_WR_RDMA_WRITE, sp.mr, sp.buf, LEN,
		    IBV_SEND_SIGNALED, p.addr, p.rkey);
	T_EXPECT_WC(sp.cq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_EQ(t_poll(st.cq, &wc, 30000), 1);
	T_EQ(wc.wr_id, 1);
	T_WC_STATUS(&wc, IBV_WC_RETRY_EXC_ERR);
	t_log("WRITE into the stopped owner failed after %llu ms",
	      (unsigned long long)(t_now_ms() - t0));
	T_GE(t_now_ms() - t0, 4000);
	t_step_send(sock, S_FAILED, NULL);
	t_side_close(&sp);
	t_side_close(&st);
	return 0;
}

int main(void)
{
	struct t_child t, p, w;
	struct t_dev d;

	t_init("place_stalled_owner");
	if (geteuid())
		t_skip("not root: runs as two users");
	ua = t_user("srdplacea");
	ub = t_user("srdplaceb");
	t_dev_open(&d); /* a root daemon, as the system's */
	t_fork(&t, target, (void *)1);
	t_fork(&p, target, NULL);
	t_fork(&w, writer, NULL);
	t_step_relay(t.fd, w.fd, S_EP);
	t_step_relay(p.fd, w.fd, S_EP);
	t_step_relay(w.fd, t.fd, S_WRITER);
	t_step_relay(w.fd, p.fd, S_WRITER);
	t_step_recv(t.fd, S_READY);
	t_step_recv(p.fd, S_READY);
	t_stop(t.pid);
	t_step_send(w.fd, S_GO, NULL);
	t_step_recv(w.fd, S_FAILED);
	T_OK(kill(t.pid, SIGCONT));
	t_step_send(t.fd, S_AGAIN, NULL);
	t_step_send(p.fd, S_AGAIN, NULL);
	T_EQ(t_child_wait(&w, 30000), 0);
	T_EQ(t_child_wait(&t, 30000), 0);
	T_EQ(t_child_wait(&p, 30000), 0);
	t_dev_close(&d);
	t_pass();
}
