/* SPDX-License-Identifier: MIT */
/*
 * The library hands its memory only to a daemon it can trust: root's, or
 * its own user's.  As two real users (made here; root only, else skipped):
 * B squats a socket name with a fake daemon that records every descriptor
 * it is sent; A's program, told that name by SOFTRDMA_SOCKET, refuses it,
 * naming the socket and B's uid, and sends it nothing.  A's own daemon and
 * root's daemon both serve A.  (B holding the default names instead:
 * func.squat.)
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

static int bind_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path + 1, name, n);
	if (fd < 0 ||
	    bind(fd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) ||
	    listen(fd, 16))
		return -1;
	return fd;
}

/* B's fake daemon: accepts, reads whatever comes, writes one byte per
 * descriptor received to report.  Killed by the parent. */
static pid_t fake_daemon(uid_t uid, const char *name, int report, bool *ok)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	T_OK(pipe(ready) ? errno : 0);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		int lfd;

		t_become(uid);
		lfd = bind_abstract(name);
		c = lfd >= 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || lfd < 0)
			_exit(0);
		for (;;) {
			int cfd = accept(lfd, NULL, NULL);
			char buf[4096], cbuf[CMSG_SPACE(sizeof(int) * 8)];
			struct iovec iov = { buf, sizeof(buf) };
			struct msghdr m = { .msg_iov = &iov,
					    .msg_iovlen = 1,
					    .msg_control = cbuf,
					    .msg_controllen = sizeof(cbuf) };

			if (cfd < 0)
				continue;
			while (recvmsg(cfd, &m, 0) > 0) {
				if (m.msg_controllen &&
				    write(report, "F", 1) != 1)
					_exit(1);
				m.msg_controllen = sizeof(cbuf);
			}
			close(cfd);
		}
	}
	close(ready[1]);
	T_EQ(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*ok = c == 'y';
	return pid;
}

/* Run A's program: open the device on name (NULL: the defaults), make a
 * PD and an MR.  Returns its exit status (0 worked, 2 refused); its
 * stderr goes to errbuf. */
static int run_a(uid_t uid, const char *name, char *errbuf, size_t len)
{
	int p[2], status;
	ssize_t got, total = 0;
	pid_t pid;

	T_OK(pipe(p) ? errno : 0);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		struct ibv_device **list;
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *mr;
		int n = 0;
		static char buf[4096];

		dup2(p[1], 2);
		t_become(uid);
		if (name)
			setenv("SOFTRDMA_SOCKET", name, 1);
		else
			unsetenv("SOFTRDMA_SOCKET");
		list = ibv_get_device_list(&n);
		if (!list || !n)
			_exit(errno == EACCES ? 2 : 4);
		ctx = ibv_open_device(list[0]);
		if (!ctx)
			_exit(errno == EACCES ? 2 : 5);
		pd = ibv_alloc_pd(ctx);
		mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
				     IBV_ACCESS_LOCAL_WRITE)
			: NULL;
		_exit(mr ? 0 : 6);
	}
	close(p[1]);
	while (total < (ssize_t)len - 1 &&
	       (got = read(p[0], errbuf + total, len - 1 - (size_t)total)) > 0)
		total += got;
	errbuf[total] = 0;
	close(p[0]);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The daemon serving @name, started by the library (0: none). */
static pid_t daemon_on(const char *name)
{
	char cmd[200], out[32] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "pgrep -f -x '.*softrdmad --socket %s .*'",
		 name);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (!fgets(out, sizeof(out), f))
		out[0] = 0;
	pclose(f);
	return (pid_t)strtol(out, NULL, 10);
}

static void expect_refused(uid_t a, uid_t b, const char *name)
{
	char err[2048], want[160];

	T_EQ(run_a(a, name, err, sizeof(err)), 2);
	snprintf(want, sizeof(want), "socket @%s: it runs as uid %u", name,
		 (unsigned int)b);
	if (!strstr(err, want))
		T_FAIL("stderr \"%s\" does not say \"%s\"", err, want);
}

int main(void)
{
	char fake[96], own[96], err[2048], c;
	struct t_dev d;
	uid_t a, b;
	pid_t fpid, dpid;
	int rep[2], fl;
	bool ok;

	t_init("peer_cred");
	if (geteuid() != 0)
		t_skip("needs root to make two users");
	a = t_user("srdtest_a");
	b = t_user("srdtest_b");
	t_dev_open(&d); /* root's daemon on this test's name */

	T_OK(pipe(rep) ? errno : 0);
	snprintf(fake, sizeof(fake), "%s.fake", t_socket_name());
	fpid = fake_daemon(b, fake, rep[1], &ok);
	T_ASSERT(ok);
	expect_refused(a, b, fake);
	kill(fpid, SIGKILL);
	waitpid(fpid, NULL, 0);
	close(rep[1]);
	fl = fcntl(rep[0], F_GETFL);
	fcntl(rep[0], F_SETFL, fl | O_NONBLOCK);
	if (read(rep[0], &c, 1) == 1)
		T_FAIL("the fake daemon was sent a descriptor");

	/* Root's daemon serves A. */
	T_EQ(run_a(a, t_socket_name(), err, sizeof(err)), 0);
	/* A's own daemon serves A. */
	snprintf(own, sizeof(own), "%s.own", t_socket_name());
	T_EQ(run_a(a, own, err, sizeof(err)), 0);
	dpid = daemon_on(own);
	T_GT(dpid, 0);
	kill(dpid, SIGTERM);
	t_dev_close(&d);
	t_pass();
}
