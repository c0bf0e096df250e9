/* SPDX-License-Identifier: MIT */
/*
 * The daemon writes CQE traces (SOFTRDMA_TRACE=cqe) only to the
 * description the client handed over, never to one it opens itself with
 * its own rights.  User B holds an O_PATH descriptor of user A's FIFO
 * (mode 0600, which B cannot open for writing) as his stderr and runs
 * traced traffic: nothing may reach A's FIFO.  A control run with B's own
 * FIFO shows the trace does arrive where B may write.  Root only (a root
 * daemon, two real users); skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_util.h"

static uid_t uid_a, uid_b;
static char dir[64];

/* Traced traffic with stderr an O_PATH descriptor of path (or, with
 * writable, one opened for writing). */
static int traced(int sock, void *arg)
{
	const char *path = arg;
	bool writable = !strcmp(path + strlen(path) - 3, "_b");
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	int fd;

	(void)sock;
	t_become(uid_b);
	fd = open(path, writable ? O_WRONLY | O_NONBLOCK | O_CLOEXEC
				 : O_PATH | O_CLOEXEC);
	if (fd < 0)
		T_FAIL("open %s: %s", path, t_errname(errno));
	T_EQ(dup2(fd, 2), 2);
	close(fd);
	setenv("SOFTRDMA_TRACE", "cqe", 1);
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	t_post_recv(p.b, 1, r.mr, r.p, 4096);
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 100, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	return 0;
}

/* A FIFO of uid's, mode 0600, and a reader of root's on it; runs the
 * traced child and returns how many bytes the FIFO received. */
static size_t run(const char *name, uid_t owner)
{
	char path[96], buf[4096];
	struct t_child c;
	size_t got = 0;
	ssize_t n;
	int rd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	T_OK(mkfifo(path, 0600) ? errno : 0);
	T_OK(chown(path, owner, owner) ? errno : 0);
	rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	T_ASSERT(rd >= 0);
	t_fork(&c, traced, path);
	T_EQ(t_child_wait(&c, 30000), 0);
	while (t_fd_readable(rd, 300) && (n = read(rd, buf, sizeof(buf))) > 0)
		got += (size_t)n;
	close(rd);
	unlink(path);
	return got;
}

int main(void)
{
	size_t own, other;

	t_init("trace_rights");
	if (geteuid())
		t_skip("not root: needs a root daemon and two users");
	uid_a = t_user("srdtrace_a");
	uid_b = t_user("srdtrace_b");
	snprintf(dir, sizeof(dir), "/tmp/srd_trace.%d", (int)getpid());
	T_OK(mkdir(dir, 0755) ? errno : 0);
	{
		struct t_dev d;

		t_dev_open(&d); /* the daemon is root's */
		own = run("fifo_b", uid_b);
		other = run("fifo_a", uid_a);
		t_dev_close(&d);
	}
	rmdir(dir);
	t_log("B's own FIFO got %zu bytes of trace, A's %zu", own, other);
	T_GT(own, 0); /* the trace works where B may write */
	T_EQ(other, 0);
	return 0;
}
