/* SPDX-License-Identifier: MIT */
/*
 * The memory of a client that died never becomes the memory of the
 * process that gets its pid.  In a pid namespace of its own (root: the
 * test picks the next pid through ns_last_pid), the namespace's first
 * process starts the daemon and is the peer.  Client A registers memory
 * the library cannot move (a shared mapping, reached by the daemon through
 * A's address space), connects two RC QPs to the peer, forks a child that
 * keeps A's context open, and exits.  B is then made with A's pid and
 * private memory at the same address, holding other bytes.  The peer's
 * RDMA READ of A's MR must fail (IBV_WC_REM_ACCESS_ERR) without B's bytes,
 * and its RDMA WRITE must fail without touching B.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

/* odp_stale_pid.c builds this test again for ODP MRs. */
#ifndef STALE_ACCESS
#define STALE_ACCESS 0
#define STALE_NAME "mr_stale_pid"
#endif

#define LEN 8192
#define A_BYTE 0xaa
#define B_BYTE 0xbb
#define W_BYTE 0xcc
/* Where A's and B's memory lie: the same address in both. */
#define AT T_FIXED_ADDR(0)

struct a_info {
	pid_t pid;
	uint32_t rkey;
	struct t_ep ep[2];
};

static void *map_at(int flags)
{
	void *p = mmap(AT, LEN, PROT_READ | PROT_WRITE,
		       flags | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	T_ASSERT(p == AT);
	return p;
}

/* Client A: its MR over shared memory, two QPs towards the peer. */
static int client_a(int fd, void *arg)
{
	struct ibv_qp_init_attr ia;
	struct t_ep peer[2];
	struct a_info info;
	struct ibv_qp *qp[2];
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct t_dev d;
	uint8_t *p;
	pid_t holder;

	(void)arg;
	t_dev_open(&d);
	p = map_at(MAP_SHARED);
	memset(p, A_BYTE, LEN);
	mr = T_NONNULL(ibv_reg_mr(d.pd, p, LEN, T_ACCESS_ALL | STALE_ACCESS));
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	info.pid = getpid();
	info.rkey = mr->rkey;
	for (int i = 0; i < 2; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x100 + i, &info.ep[i]);
	}
	t_sock_send(fd, &info, sizeof(info));
	t_sock_recv(fd, peer, sizeof(peer));
	for (int i = 0; i < 2; i++)
		t_qp_connect(qp[i], 0x100 + i, &peer[i], NULL);
	/* The holder keeps the context's connection (so its MR and QPs)
	 * open after A is gone. */
	holder = fork();
	T_ASSERT(holder >= 0);
	if (!holder) {
		for (;;)
			pause();
	}
	t_sock_send(fd, &holder, sizeof(holder));
	t_sock_sync(fd); /* the peer has read our memory */
	_exit(0);
}

/* B, with A's pid: other bytes at A's address; reports what it holds
 * whenever asked. */
static void client_b(int rfd, int wfd)
{
	uint8_t *p = map_at(MAP_PRIVATE);
	char c;

	memset(p, B_BYTE, LEN);
	for (;;) {
		uint8_t ok = 1;

		if (write(wfd, &ok, 1) != 1 || read(rfd, &c, 1) != 1)
			_exit(0);
		for (size_t i = 0; i < LEN; i++)
			if (p[i] != B_BYTE)
				ok = 0;
		if (!ok)
			_exit(1);
	}
}

static void set_last_pid(pid_t pid)
{
	char s[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	int n = snprintf(s, sizeof(s), "%d", (int)pid);

	T_ASSERT(fd >= 0);
	T_EQ(write(fd, s, (size_t)n), n);
	close(fd);
}

/* The peer: the namespace's first process. */
static int ns_main(void)
{
	struct ibv_qp_init_attr ia;
	struct t_ep me[2];
	struct a_info info;
	struct t_child a;
	struct ibv_qp *qp[2];
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct t_buf loc;
	struct t_dev d;
	int to_b[2], from_b[2];
	pid_t holder, b;
	uint8_t ok;

	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	t_buf_alloc(&d, &loc, LEN, T_ACCESS_ALL);
	t_fork(&a, client_a, NULL);
	t_sock_recv(a.fd, &info, sizeof(info));
	for (int i = 0; i < 2; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x200 + i, &me[i]);
		t_qp_connect(qp[i], 0x200 + i, &info.ep[i], NULL);
	}
	t_sock_send(a.fd, me, sizeof(me));
	t_sock_recv(a.fd, &holder, sizeof(holder));

	/* While A lives, its MR reads as A's memory. */
	t_post_send(qp[0], 0, IBV_WR_RDMA_READ, loc.mr, loc.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)AT, info.rkey);
	T_EXPECT_WC(cq, &wc, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	for (size_t i = 0; i < LEN; i++)
		T_EQ(loc.p[i], A_BYTE);
	t_sock_sync(a.fd);
	T_EQ(t_child_wait(&a, T_WAIT_MS), 0);

	/* B gets A's pid.  A task started meanwhile in the namespace may
	 * take it first: try again while it may be short-lived. */
	for (int tries = 0;; tries++) {
		T_ASSERT(!pipe(to_b) && !pipe(from_b));
		set_last_pid(info.pid - 1);
		b = fork();
		T_ASSERT(b >= 0);
		if (!b) {
			close(to_b[1]);
			close(from_b[0]);
			client_b(to_b[0], from_b[1]);
		}
		close(to_b[0]);
		close(from_b[1]);
		if (b == info.pid)
			break;
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
		close(to_b[1]);
		close(from_b[0]);
		if (tries == 50)
			T_FAIL("pid %d stays taken", (int)info.pid);
		t_sleep_ms(20);
	}
	T_EQ(read(from_b[0], &ok, 1), 1);

	/* READ of the dead client's MR: an access error, not B's bytes. */
	memset(loc.p, 0, LEN);
	t_post_send(qp[0], 1, IBV_WR_RDMA_READ, loc.mr, loc.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)AT, info.rkey);
	T_EXPECT_WC(cq, &wc, 1, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	for (size_t i = 0; i < LEN; i++)
		if (loc.p[i] == B_BYTE)
			T_FAIL("READ returned the new process's bytes");

	/* WRITE into it: an access error, and B untouched. */
	memset(loc.p, W_BYTE, LEN);
	t_post_send(qp[1], 2, IBV_WR_RDMA_WRITE, loc.mr, loc.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)AT, info.rkey);
	T_EXPECT_WC(cq, &wc, 2, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	T_EQ(write(to_b[1], "?", 1), 1);
	T_EQ(read(from_b[0], &ok, 1), 1); /* B exits 1 if it was written */
	t_log("pid %d reused: READ and WRITE of its old MR failed, B intact",
	      (int)b);

	kill(holder, SIGKILL);
	kill(b, SIGKILL);
	for (int i = 0; i < 2; i++)
		T_OK(ibv_destroy_qp(qp[i]));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&loc);
	t_dev_close(&d);
	return T_EXIT_PASS;
}

int main(void)
{
	char sock[64];
	pid_t init;
	int st;

	if (geteuid() != 0) {
		printf("# needs root (ns_last_pid): skipped\n");
		return T_EXIT_SKIP;
	}
	if (unshare(CLONE_NEWPID)) {
		printf("# no pid namespace (%s): skipped\n", strerror(errno));
		return T_EXIT_SKIP;
	}
	/* A socket name of its own: inside, every test's pid is 1. */
	if (!getenv("SOFTRDMA_SOCKET")) {
		snprintf(sock, sizeof(sock), "srdtest.mr_stale_pid.%d",
			 (int)getpid());
		setenv("SOFTRDMA_SOCKET", sock, 1);
	}
	init = fork();
	if (init < 0)
		return T_EXIT_FAIL;
	if (!init) {
		t_init(STALE_NAME);
		exit(ns_main());
	}
	/* Everything in the namespace dies with its first process.  This
	 * side ends with _exit: a leak checker's helper process would be
	 * born into the namespace, where it cannot see its parent. */
	if (waitpid(init, &st, 0) != init)
		_exit(T_EXIT_FAIL);
	fflush(stdout);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : T_EXIT_FAIL);
}
