/* SPDX-License-Identifier: MIT */
/*
 * A set-uid program's environment is its caller's: the library ignores it.
 * This test's own binary, copied set-uid root into a directory made here,
 * is run by an ordinary user (made here; root only, else skipped) with
 * SOFTRDMAD naming a script that records its euid and SOFTRDMA_SOCKET
 * naming a socket: once with nobody on that name, once with a listener of
 * root's there.  The script must never run, the listener must never be
 * reached, and the program gets its device from root's daemon on the
 * default name.  All in a network namespace of the test's own, so that
 * the default name is the test's daemon's alone.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define AS_SETUID "as-setuid"
#define NOT_SETUID 5

/* Run set-uid: how many devices the library finds. */
static int setuid_main(void)
{
	struct ibv_device **list;
	int n = 0;

	if (geteuid() != 0 || getuid() == 0 || !getauxval(AT_SECURE))
		return NOT_SETUID;
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	return n > 0 ? 0 : 2;
}

static int abstract_addr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, n);
	return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int listen_on(const char *name)
{
	struct sockaddr_un sa;
	int len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	T_GE(fd, 0);
	T_OK(bind(fd, (struct sockaddr *)&sa, (socklen_t)len) ? errno : 0);
	T_OK(listen(fd, 16) ? errno : 0);
	return fd;
}

static bool answers(const char *name)
{
	struct sockaddr_un sa;
	int len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	T_GE(fd, 0);
	ok = !connect(fd, (struct sockaddr *)&sa, (socklen_t)len);
	close(fd);
	return ok;
}

/* Root's daemon on the default name of this namespace. */
static pid_t start_root_daemon(void)
{
	const char *bin = getenv("SOFTRDMAD");
	pid_t pid;

	if (!bin || !*bin)
		t_skip("SOFTRDMAD does not name the daemon to test");
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, 0);
		dup2(null, 1);
		execl(bin, bin, "--foreground", "--socket", "softrdma",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300 && !answers("softrdma"); i++)
		t_sleep_ms(10);
	T_ASSERT(answers("softrdma"));
	return pid;
}

/* The copy of this program, run as uid with the hostile environment:
 * SOFTRDMAD, SOFTRDMA_SOCKET, and a PATH where "softrdmad" is the script
 * too. */
static int run_setuid(const char *prog, uid_t uid, const char *evil,
		      const char *sock, const char *path)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		t_become(uid);
		setenv("SOFTRDMAD", evil, 1);
		setenv("SOFTRDMA_SOCKET", sock, 1);
		setenv("PATH", path, 1);
		execl(prog, prog, AS_SETUID, (char *)NULL);
		_exit(127);
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	T_ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Root's listener on name, in a child: each connection is accepted,
 * reported with a byte on report and closed. */
static pid_t root_listener(const char *name, int report)
{
	int lfd = listen_on(name);
	pid_t pid = fork();

	T_GE(pid, 0);
	if (!pid) {
		for (;;) {
			int cfd = accept(lfd, NULL, NULL);

			if (cfd < 0)
				continue;
			if (write(report, "C", 1) != 1)
				_exit(1);
			close(cfd);
		}
	}
	close(lfd);
	return pid;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t len = strlen(text);

	T_GE(fd, 0);
	T_EQ(write(fd, text, len), (ssize_t)len);
	T_OK(fchmod(fd, mode) ? errno : 0);
	T_OK(close(fd) ? errno : 0);
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	char buf[65536];
	ssize_t n;

	T_GE(in, 0);
	T_GE(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		T_EQ(write(out, buf, (size_t)n), n);
	T_EQ(n, 0);
	close(in);
	T_OK(close(out) ? errno : 0);
}

static char dir[64];

static void cleanup(void)
{
	char cmd[128];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			t_log("could not remove %s", dir);
	}
}

/* Did the script run?  What it recorded, into out. */
static bool ran(const char *marker, char *out, size_t size)
{
	int fd = open(marker, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	out[0] = 0;
	if (fd < 0)
		return false;
	n = read(fd, out, size - 1);
	out[n > 0 ? n : 0] = 0;
	if (n > 0 && out[n - 1] == '\n')
		out[n - 1] = 0;
	close(fd);
	return true;
}

static bool failed;

/* After a run: the script must not have run, nor the listener have been
 * reached, and (want_dev) root's daemon gave the device. */
static void check_run(const char *what, int st, bool want_dev,
		      const char *marker, int report)
{
	char got[64], c;

	if (st == NOT_SETUID)
		t_skip("the set-uid bit had no effect (no_new_privs?)");
	if (ran(marker, got, sizeof(got))) {
		t_log("FAIL (%s): the script ran (%s)", what, got);
		failed = true;
		unlink(marker);
	}
	if (read(report, &c, 1) == 1) {
		t_log("FAIL (%s): the program reached SOFTRDMA_SOCKET's name",
		      what);
		failed = true;
	}
	if (want_dev && st != 0) {
		t_log("FAIL (%s): no device from root's daemon (exit %d)", what,
		      st);
		failed = true;
	}
}

int main(int argc, char **argv)
{
	char prog[96], evil[96], path_evil[96], outdir[96], marker[128];
	char script[256], sock[96];
	struct statvfs vfs;
	int rep[2];
	pid_t dpid, lpid;
	uid_t a;

	if (argc == 2 && !strcmp(argv[1], AS_SETUID))
		return setuid_main();
	t_init("setuid_env");
	if (geteuid() != 0)
		t_skip("needs root to make a set-uid program and a user");
	a = t_user("srdtest_a");
	t_own_netns();

	snprintf(dir, sizeof(dir), "/tmp/srd-setuid-XXXXXX");
	T_NONNULL(mkdtemp(dir));
	atexit(cleanup);
	T_OK(chmod(dir, 0755) ? errno : 0);
	T_OK(statvfs(dir, &vfs) ? errno : 0);
	if (vfs.f_flag & ST_NOSUID)
		t_skip("%s is on a nosuid file system", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(evil, sizeof(evil), "%s/evil", dir);
	snprintf(path_evil, sizeof(path_evil), "%s/softrdmad", dir);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	snprintf(marker, sizeof(marker), "%s/ran", outdir);
	copy_file("/proc/self/exe", prog);
	T_OK(chown(prog, 0, 0) ? errno : 0);
	T_OK(chmod(prog, 04755) ? errno : 0);
	T_OK(mkdir(outdir, 0777) ? errno : 0);
	T_OK(chmod(outdir, 0777) ? errno : 0);
	/* -p: the shell keeps the euid it was started with, and says it. */
	snprintf(script, sizeof(script),
		 "#!/bin/sh -p\necho \"euid $(/usr/bin/id -u)\" >>%s\n",
		 marker);
	write_file(evil, script, 0755);
	write_file(path_evil, script, 0755);
	snprintf(sock, sizeof(sock), "%s.chosen", t_socket_name());
	T_OK(pipe2(rep, O_NONBLOCK | O_CLOEXEC) ? errno : 0);

	/* Root's daemon serves the default name; nobody the chosen one,
	 * which the library would start SOFTRDMAD on. */
	dpid = start_root_daemon();
	check_run("nobody on the chosen name",
		  run_setuid(prog, a, evil, sock, dir), true, marker, rep[0]);

	/* Root's listener on the chosen name: never reached. */
	lpid = root_listener(sock, rep[1]);
	check_run("root's listener on the chosen name",
		  run_setuid(prog, a, evil, sock, dir), true, marker, rep[0]);
	kill(lpid, SIGKILL);
	waitpid(lpid, NULL, 0);

	/* No daemon at all: the library may start the installed one, never
	 * SOFTRDMAD's nor PATH's. */
	kill(dpid, SIGTERM);
	waitpid(dpid, NULL, 0);
	check_run("no daemon", run_setuid(prog, a, evil, sock, dir), false,
		  marker, rep[0]);

	if (failed)
		T_FAIL("the set-uid program obeyed its caller's environment");
	t_pass();
}
