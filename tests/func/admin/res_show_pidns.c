/* SPDX-License-Identifier: MIT */
/*
 * What `softrdma resource show` shows a client in a pid namespace below
 * the daemon's, as `rdma resource` shows a container's tasks: its own
 * objects, with the pids of its namespace, and nothing of the host's.
 * The daemon learns a client's namespace from the pidfd the kernel
 * recorded at connect (SO_PEERPIDFD, Linux 6.5), else from /proc.
 * Root (to make the namespace); skipped otherwise.
 *
 *   - G, pid 1 of a new pid namespace, registers an MR and lists MRs:
 *     its MR with pid 1, not the host's MR;
 *   - the host's listing shows both, G's with G's pid on the host.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_admin.h"

struct g_info {
	uint32_t mrn;
};

/* pid 1 of the new namespace; go says its parent has spoken first. */
static int in_ns(int fd, int go, uint32_t host_mrn)
{
	static struct t_run r;
	char pat[64], line[1024];
	struct g_info info;
	struct t_dev d;
	struct t_buf b;

	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	T_EQ(getpid(), 1);
	t_cli(&r, "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	printf("in the namespace: resource show mr:\n%s", r.out);
	snprintf(pat, sizeof(pat), "mrn %u ", b.mr->handle);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EQ(T_FIELD(line, "pid"), 1);
	snprintf(pat, sizeof(pat), "mrn %u ", host_mrn);
	T_EXPECT_NOT_IN(r.out, pat);
	info.mrn = b.mr->handle;
	T_EQ(read(go, pat, 1), 1);
	t_sock_send(fd, &info, sizeof(info));
	t_sock_sync(fd); /* the host has looked */
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

static int child(int fd, void *arg)
{
	uint32_t host_mrn = *(uint32_t *)arg;
	int st, go[2];
	pid_t g;

	if (unshare(CLONE_NEWPID))
		T_FAIL("unshare(CLONE_NEWPID): %s", t_errname(errno));
	T_OK(pipe(go));
	g = fork();
	T_ASSERT(g >= 0);
	if (!g)
		_exit(in_ns(fd, go[0], host_mrn));
	/* G's host pid, before anything G says. */
	t_sock_send(fd, &g, sizeof(g));
	T_EQ(write(go[1], "g", 1), 1);
	T_EQ(waitpid(g, &st, 0), g);
	/* _exit: a leak checker's helper process would be born into the
	 * namespace, whose first process is gone. */
	fflush(NULL);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

int main(void)
{
	static struct t_run r;
	char pat[64], line[1024];
	struct g_info info;
	struct t_child c;
	struct t_dev d;
	struct t_buf b;
	uint32_t host_mrn;
	pid_t g;

	t_init("admin_res_show_pidns");
	t_cli_path();
	if (geteuid() != 0)
		t_skip("needs root for a pid namespace");
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	host_mrn = b.mr->handle;
	t_fork(&c, child, &host_mrn);
	t_sock_recv(c.fd, &g, sizeof(g));
	t_sock_recv(c.fd, &info, sizeof(info));
	t_cli(&r, "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	printf("host: resource show mr:\n%s", r.out);
	snprintf(pat, sizeof(pat), "mrn %u ", info.mrn);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EQ(T_FIELD(line, "pid"), g);
	snprintf(pat, sizeof(pat), "mrn %u ", host_mrn);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EQ(T_FIELD(line, "pid"), getpid());
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	t_buf_free(&b);
	t_dev_close(&d);
	t_pass();
}
