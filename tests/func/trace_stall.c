/* SPDX-License-Identifier: MIT */
/*
 * A client traced with SOFTRDMA_TRACE=cqe whose stderr is a socket nobody
 * reads must not stall the device: its CQE lines arrive there (through a
 * pipe the library relays, as the daemon takes no unix socket), and once
 * the socket is full they are dropped, and another client's RC transfers still complete, data
 * intact, in time.  The noisy client is this program re-executed with
 * "noisy".
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define ROUNDS 200
#define MSG 4096

/* RC writes with a CQE each until killed; a slow completion is no error
 * here, the other client judges. */
static int noisy(void)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 64, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 64, T_ACCESS_ALL);
	/* Tell the parent we are set up: one byte on stdout. */
	if (write(STDOUT_FILENO, "R", 1) != 1)
		return 1;
	for (uint64_t i = 0;; i++) {
		t_post_send(p.a, i, IBV_WR_RDMA_WRITE, s.mr, s.p, 8,
			    IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
		while (!t_poll(p.cq_a, &wc, 1000))
			;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	int sv[2], rd[2], status;
	uint64_t t0;
	pid_t pid;
	char c;

	if (argc > 1 && !strcmp(argv[1], "noisy"))
		return noisy();
	t_init("trace_stall");
	/* A stalled device hangs the next command: fail well before the
	 * ctest timeout. */
	alarm(30);
	T_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	T_EQ(pipe2(rd, O_CLOEXEC), 0);
	fflush(stdout);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		/* A failing parent leaves no writer behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(sv[1], STDERR_FILENO);
		dup2(rd[1], STDOUT_FILENO);
		setenv("SOFTRDMA_TRACE", "cqe", 1);
		execl("/proc/self/exe", argv[0], "noisy", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	close(rd[1]);
	T_ASSERT(t_fd_readable(rd[0], 10000));
	T_EQ(read(rd[0], &c, 1), 1);
	/* Long enough for the unread socket to fill many times over. */
	t_sleep_ms(1000);

	t0 = t_now_ms();
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, MSG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, MSG, T_ACCESS_ALL);
	for (uint32_t i = 0; i < ROUNDS; i++) {
		t_fill(s.p, MSG, i);
		memset(r.p, 0, MSG);
		t_post_recv(p.b, i, r.mr, r.p, MSG);
		t_post_send(p.a, i, IBV_WR_SEND, s.mr, s.p, MSG,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p.cq_b, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, MSG);
		T_CHECK_FILL(r.p, MSG, i);
	}
	t_log("%u verified sends in %llu ms beside the traced client", ROUNDS,
	      (unsigned long long)(t_now_ms() - t0));
	/* The noisy client kept running all along, and its CQE lines came
	 * through the unix socket (the library relays them: the daemon
	 * takes no unix socket). */
	T_EQ(waitpid(pid, &status, WNOHANG), 0);
	{
		char out[4096];
		ssize_t n = recv(sv[0], out, sizeof(out) - 1, MSG_DONTWAIT);

		T_ASSERT(n > 0);
		out[n] = '\0';
		if (!strstr(out, "cqe["))
			T_FAIL("no CQE line on the socket: %.200s", out);
	}
	kill(pid, SIGKILL);
	T_EQ(waitpid(pid, &status, 0), pid);
	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	close(sv[0]);
	t_pass();
}
