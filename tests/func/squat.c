/* SPDX-License-Identifier: MIT */
/*
 * Another user holding the default socket names denies nobody the device.
 * As two real users (made here; root only, else skipped), in a network
 * namespace of the test's own, where the abstract names are the test's
 * alone: B listens on @softrdma, on A's per-user name @softrdma.<A> and on
 * a decoy of the private form @softrdma.<A>.<16 hex>.  A's program (with
 * no SOFTRDMA_SOCKET) still gets a device from a daemon of A's own on a
 * private name, moves data through an RC pair, and says so in one line of
 * stderr naming B's uid; A's second program finds the same daemon.  B's
 * listeners are sent nothing.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define NFAKE 3

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

/* B's listeners on names: each connection is accepted and read to its end;
 * any byte or descriptor sent writes 'F' to report.  Killed by the
 * parent. */
static pid_t squatter(uid_t uid, char names[NFAKE][64], int report)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	T_OK(pipe(ready) ? errno : 0);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		struct pollfd pfd[NFAKE];

		t_become(uid);
		c = 'y';
		for (int i = 0; i < NFAKE; i++) {
			pfd[i].fd = bind_abstract(names[i]);
			pfd[i].events = POLLIN;
			if (pfd[i].fd < 0)
				c = 'n';
		}
		if (write(ready[1], &c, 1) != 1 || c != 'y')
			_exit(0);
		for (;;) {
			if (poll(pfd, NFAKE, -1) < 0)
				continue;
			for (int i = 0; i < NFAKE; i++) {
				char buf[4096];
				ssize_t n;
				int cfd;

				if (!(pfd[i].revents & POLLIN))
					continue;
				cfd = accept(pfd[i].fd, NULL, NULL);
				if (cfd < 0)
					continue;
				while ((n = recv(cfd, buf, sizeof(buf), 0)) > 0)
					if (write(report, "F", 1) != 1)
						_exit(1);
				close(cfd);
			}
		}
	}
	close(ready[1]);
	T_EQ(read(ready[0], &c, 1), 1);
	close(ready[0]);
	if (c != 'y')
		T_FAIL("user %u could not bind the default names",
		       (unsigned int)uid);
	return pid;
}

/* A's program: the default daemon, an RC pair, one SEND checked. */
static int a_program(void)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	unsetenv("SOFTRDMA_SOCKET");
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 8192, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 8192, T_ACCESS_ALL);
	t_fill(s.p, 8192, 41);
	t_post_recv(p.b, 1, r.mr, r.p, 8192);
	t_post_send(p.a, 2, IBV_WR_SEND, s.mr, s.p, 8192, IBV_SEND_SIGNALED, 0,
		    0);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 8192);
	T_CHECK_FILL(r.p, 8192, 41);
	t_pair_destroy(&p);
	t_buf_free(&s);
	t_buf_free(&r);
	t_dev_close(&d);
	return 0;
}

/* Run A's program as uid; its stderr into err.  Its exit status. */
static int run_a(uid_t uid, char *err, size_t len)
{
	ssize_t got, total = 0;
	int p[2], status;
	pid_t pid;

	T_OK(pipe(p) ? errno : 0);
	fflush(stdout);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		close(p[0]);
		dup2(p[1], 2);
		t_become(uid);
		/* Changing uid made the child non-dumpable (its /proc files
		 * root's) until it execs: A's programs, exec'd as A, are
		 * dumpable. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(a_program());
	}
	close(p[1]);
	while (total < (ssize_t)len - 1 &&
	       (got = read(p[0], err + total, len - 1 - (size_t)total)) > 0)
		total += got;
	err[total] = 0;
	close(p[0]);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static bool same_netns(const char *pid)
{
	char path[300], mine[64] = "", theirs[64] = "";

	snprintf(path, sizeof(path), "/proc/%s/ns/net", pid);
	if (readlink("/proc/self/ns/net", mine, sizeof(mine) - 1) <= 0 ||
	    readlink(path, theirs, sizeof(theirs) - 1) <= 0)
		return false;
	return !strcmp(mine, theirs);
}

/* The daemons of this namespace: their pids and socket names. */
static int daemons_here(pid_t *pids, char names[][64], int max)
{
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int n = 0;

	T_NONNULL(dir);
	while ((de = readdir(dir)) && n < max) {
		char path[300], buf[4096];
		const char *arg, *prev = NULL;
		ssize_t len;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    !same_netns(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (!strstr(buf, "softrdmad"))
			continue;
		for (arg = buf; arg < buf + len; arg += strlen(arg) + 1) {
			if (prev && !strcmp(prev, "--socket")) {
				pids[n] = (pid_t)strtol(de->d_name, NULL, 10);
				snprintf(names[n], 64, "%.63s", arg);
				n++;
				break;
			}
			prev = arg;
		}
	}
	closedir(dir);
	return n;
}

static pid_t main_pid, squatter_pid;

/* No daemon of this namespace, nor B's listeners, outlive the test,
 * passed or failed. */
static void stop_daemons(void)
{
	char dnames[8][64];
	pid_t dpids[8];
	int n;

	if (getpid() != main_pid)
		return;
	if (squatter_pid > 0) {
		kill(squatter_pid, SIGKILL);
		waitpid(squatter_pid, NULL, 0);
	}
	n = daemons_here(dpids, dnames, 8);
	for (int i = 0; i < n; i++)
		kill(dpids[i], SIGTERM);
}

/* A's stderr: exactly one line of the library's, naming B's uid, both
 * names it passed over and the name of A's daemon. */
static void check_warning(const char *err, uid_t b, char names[NFAKE][64],
			  const char *served)
{
	char want[160];
	const char *line = NULL, *at = err;
	int lines = 0;

	while ((at = strstr(at, "softrdma: "))) {
		if (at == err || at[-1] == '\n') {
			line = at;
			lines++;
		}
		at++;
	}
	if (lines != 1)
		T_FAIL("%d lines of the library's on A's stderr, one expected:"
		       "\n%s",
		       lines, err);
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "@%s (held by uid %u)", names[i],
			 (unsigned int)b);
		if (!strstr(line, want))
			T_FAIL("A's warning does not say \"%s\": %s", want,
			       line);
	}
	snprintf(want, sizeof(want), "daemon on @%s\n", served);
	if (!strstr(line, want))
		T_FAIL("A's warning does not say \"%s\": %s", want, line);
}

int main(void)
{
	char names[NFAKE][64], err[4096], dnames[8][64], c;
	pid_t spid, dpids[8];
	int rep[2], status, n;
	uid_t a, b;

	t_init("squat");
	if (geteuid() != 0)
		t_skip("needs root to make two users");
	a = t_user("srdtest_a");
	b = t_user("srdtest_b");
	t_own_netns();
	main_pid = getpid();
	atexit(stop_daemons);

	snprintf(names[0], sizeof(names[0]), "softrdma");
	snprintf(names[1], sizeof(names[1]), "softrdma.%u", (unsigned int)a);
	snprintf(names[2], sizeof(names[2]), "softrdma.%u.0123456789abcdef",
		 (unsigned int)a);
	T_OK(pipe(rep) ? errno : 0);
	spid = squatter(b, names, rep[1]);
	squatter_pid = spid;

	/* A is served, by a daemon of A's on a private name. */
	status = run_a(a, err, sizeof(err));
	if (status)
		T_FAIL("A's program exited with %d; its stderr:\n%s", status,
		       err);
	n = daemons_here(dpids, dnames, 8);
	T_EQ(n, 1);
	t_log("A's daemon: pid %d on @%s", (int)dpids[0], dnames[0]);
	T_ASSERT(!strncmp(dnames[0], names[1], strlen(names[1])));
	T_EQ(strlen(dnames[0]), strlen(names[2]));
	T_ASSERT(strcmp(dnames[0], names[2]));
	check_warning(err, b, names, dnames[0]);

	/* A's next program finds that daemon: no second one. */
	status = run_a(a, err, sizeof(err));
	if (status)
		T_FAIL("A's second program exited with %d; its stderr:\n%s",
		       status, err);
	check_warning(err, b, names, dnames[0]);
	T_EQ(daemons_here(dpids, dnames, 8), 1);

	kill(spid, SIGKILL);
	waitpid(spid, NULL, 0);
	squatter_pid = 0;
	close(rep[1]);
	if (read(rep[0], &c, 1) == 1)
		T_FAIL("B's listeners were sent something");
	t_pass();
}
