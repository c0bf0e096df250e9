/* SPDX-License-Identifier: MIT */
/*
 * Clients that die holding everything: 200 times, a child opens the
 * device, allocates a PD, registers memory, creates a channel, CQs, an SRQ,
 * QPs and an AH, then is killed with SIGKILL (or just exits).  The
 * daemon's fd count and RSS must stay flat.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

#define CYCLES 200
#define WARMUP 20
#define RSS_SLACK_PAGES 256 /* 1 MiB */

static void child(const char *name, int ready_fd, bool kill_self)
{
	struct srd_create_srq_req srq = { .max_wr = 64, .max_sge = 2 };
	struct srd_create_ah_req ah = { 0 };
	struct srd_handle_rep rep;
	struct t_client c;
	int64_t pd, cq, qp;
	int chfd, n;

	t_client_open(&c, name);
	pd = t_alloc_pd(c.fd);
	T_ASSERT(pd > 0);
	T_ASSERT(t_reg_mr(c.fd, pd, 64 * 1024, IBV_ACCESS_LOCAL_WRITE, NULL,
			  NULL) > 0);
	T_EQ(t_cmd(c.fd, SRD_CMD_CREATE_COMP_CHANNEL, NULL, 0, NULL, 0, &rep,
		   sizeof(rep), NULL, &chfd, &n),
	     0);
	cq = t_create_cq(c.fd, 256, rep.handle, NULL, NULL);
	T_ASSERT(cq > 0);
	qp = t_create_qp(c.fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_RC, NULL, NULL,
			 NULL);
	T_ASSERT(qp > 0);
	srq.pd_handle = pd;
	T_EQ(t_cmd(c.fd, SRD_CMD_CREATE_SRQ, &srq, sizeof(srq), NULL, 0, &rep,
		   sizeof(rep), NULL, NULL, NULL),
	     0);
	T_ASSERT(t_create_qp(c.fd, pd, cq, rep.handle, IBV_QPT_UD, NULL, NULL,
			     NULL) > 0);
	ah.pd_handle = pd;
	ah.attr.is_global = 1;
	ah.attr.port_num = 1;
	T_EQ(t_cmd(c.fd, SRD_CMD_CREATE_AH, &ah, sizeof(ah), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     0);
	if (kill_self)
		T_EQ(write(ready_fd, "r", 1), 1);
	else
		_exit(0); /* no cleanup: the connection just closes */
	pause();
	_exit(1);
}

/* Fork a client; kill it once it holds its objects, or let it exit. */
static void cycle(const char *name, int i)
{
	int p[2], st;
	char ch;
	pid_t pid;

	T_ASSERT(!pipe(p));
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child(name, p[1], i % 2 == 0);
	}
	close(p[1]);
	if (i % 2 == 0) {
		T_EQ(read(p[0], &ch, 1), 1);
		kill(pid, SIGKILL);
	}
	close(p[0]);
	T_EQ(waitpid(pid, &st, 0), pid);
	if (i % 2 == 0)
		T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	else
		T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	struct t_daemon td;
	long rss0, rss1;
	int fds0, maps0, maps1;

	t_daemon_start(&td, NULL);
	fds0 = t_fd_count_settled(td.pid);
	for (int i = 0; i < WARMUP; i++)
		cycle(td.name, i);
	t_expect_fds(td.pid, fds0);
	rss0 = t_rss_pages(td.pid);
	maps0 = t_map_count(td.pid);
	for (int i = 0; i < CYCLES; i++)
		cycle(td.name, i);
	t_expect_fds(td.pid, fds0);
	rss1 = t_rss_pages(td.pid);
	maps1 = t_map_count(td.pid);
	fprintf(stderr, "fds %d, rss %ld -> %ld pages, maps %d -> %d\n", fds0,
		rss0, rss1, maps0, maps1);
	T_ASSERT(rss0 > 0 && rss1 > 0);
#ifndef __SANITIZE_ADDRESS__
	/* (ASan's quarantine keeps freed memory; its leak check at the
	 * daemon's exit stands in.) */
	T_ASSERT(maps1 <= maps0 + 2); /* malloc may add an arena piece */
	T_ASSERT(rss1 - rss0 <= RSS_SLACK_PAGES);
#endif
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
