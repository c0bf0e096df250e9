/* SPDX-License-Identifier: MIT */
/*
 * A placement job reads the source's address space it was posted for,
 * never the image a later exec puts under the same pid.  Root starts the
 * daemon; a writer W and a target T run as one ordinary user.  W maps its
 * buffer at 0x400000 and registers it in place; T registers memory on
 * demand (its jobs are never taken back).  With T stopped, W's 64 KiB
 * WRITE arrives and becomes a job on T's ring that reads W directly, and
 * W execs a set-uid-root program whose own image is at 0x400000
 * (helpers/pause_fixed.c).  T then runs: its thread may not read the new
 * image (the kernel refuses), the daemon's copy through W's mem file
 * finds the old image gone, and not one byte of root's image lands in T
 * (only W's own, had any been copied before the exec).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_admin.h"

#define FIXED_ADDR 0x400000UL
#define LEN (64u * 1024)
#define PSN 0x5678
#define SEED 31

enum step {
	S_EP,	  /* T -> W: its QP and MR */
	S_WRITER, /* W -> T: its QP */
	S_READY,  /* T -> root: connected (root then stops it) */
	S_GO,	  /* root -> W: T is stopped, write */
	S_POSTED, /* W -> root: posted (root checks it arrived) */
	S_EXEC,	  /* root -> W: exec the set-uid program */
	S_AGAIN,  /* root -> T: running again: look */
};

static uid_t ua;
static char suid_prog[128];

static int target(int sock, void *arg)
{
	struct t_side s;

	(void)arg;
	t_become(ua);
	t_side_open(&s, LEN, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	memset(s.buf, 0, LEN);
	t_side_serve(&s, sock, S_EP, S_WRITER, PSN);
	t_step_send(sock, S_READY, NULL);
	t_step_recv(sock, S_AGAIN);
	/* Our thread has had the job; whatever it did, it is done once
	 * the daemon answers a deregistration. */
	T_OK(ibv_dereg_mr(s.mr));
	/* Nothing, or what W wrote before its exec: never root's bytes. */
	for (uint32_t i = 0; i < LEN; i++)
		if (s.buf[i] && s.buf[i] != t_pattern(SEED, i))
			T_FAIL("byte %u is %#x: from no WRITE of W's", i,
			       s.buf[i]);
	s.mr = ibv_reg_mr(s.d.pd, s.buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	T_NONNULL(s.mr);
	t_side_close(&s);
	return 0;
}

static int writer(int sock, void *arg)
{
	struct t_dev d;
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct t_ep t, ep;
	uint8_t *p;

	(void)arg;
	t_become(ua);
	setenv("SOFTRDMA_MOVE_GUARD", "none", 1);
	p = mmap((void *)FIXED_ADDR, LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)FIXED_ADDR)
		T_FAIL("mmap at %#lx: %s", FIXED_ADDR, t_errname(errno));
	t_fill(p, LEN, SEED);
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = t_qp_create(&d, &ia);
	mr = T_NONNULL(ibv_reg_mr(d.pd, p, LEN, IBV_ACCESS_LOCAL_WRITE));
	t = t_step_recv(sock, S_EP);
	t_qp_connect(qp, PSN, &t, NULL);
	t_ep_local(&d, qp, PSN, &ep);
	t_step_send(sock, S_WRITER, &ep);
	t_step_recv(sock, S_GO);
	t_post_send(qp, 1, IBV_WR_RDMA_WRITE, mr, p, LEN, IBV_SEND_SIGNALED,
		    t.addr, t.rkey);
	t_step_send(sock, S_POSTED, NULL);
	t_step_recv(sock, S_EXEC);
	execl(suid_prog, "pause_fixed", (char *)NULL);
	T_FAIL("exec %s: %s", suid_prog, t_errname(errno));
	return 1;
}

static unsigned long long rx_packets(void)
{
	struct t_run r;

	t_cli(&r, "statistic", "show", "link", "softrdma0/1", NULL);
	T_EQ(r.status, 0);
	return T_FIELD(r.out, "rx_packets");
}

int main(void)
{
	unsigned long long before;
	struct t_child t, w;
	struct t_dev d;
	uint64_t until;

	t_init("place_exec_source");
	if (geteuid())
		t_skip("not root: needs a set-uid copy and another user");
	t_cli_path();
	ua = t_user("srdplacea");
	t_suid_copy(PAUSE_FIXED, "pause_fixed", suid_prog, sizeof(suid_prog));
	t_dev_open(&d); /* a root daemon, as the system's */
	t_fork(&t, target, NULL);
	t_fork(&w, writer, NULL);
	t_step_relay(t.fd, w.fd, S_EP);
	t_step_relay(w.fd, t.fd, S_WRITER);
	t_step_recv(t.fd, S_READY);
	t_stop(t.pid);
	before = rx_packets();
	t_step_send(w.fd, S_GO, NULL);
	t_step_recv(w.fd, S_POSTED);
	/* The WRITE reached T's QP: its job waits on T's ring. */
	until = t_now_ms() + 5000;
	while (rx_packets() == before) {
		T_ASSERT(t_now_ms() < until);
		t_sleep_ms(5);
	}
	t_step_send(w.fd, S_EXEC, NULL);
	T_ASSERT(t_wait_euid(w.pid, 0));
	T_OK(kill(t.pid, SIGCONT));
	t_step_send(t.fd, S_AGAIN, NULL);
	T_EQ(t_child_wait(&t, 30000), 0);
	kill(w.pid, SIGKILL);
	waitpid(w.pid, NULL, 0);
	t_suid_remove(suid_prog);
	t_dev_close(&d);
	t_pass();
}
