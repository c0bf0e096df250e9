/* SPDX-License-Identifier: MIT */
/*
 * softrdmad's configuration file: `link add` lines (comments, the
 * optional type, blank lines) make devices at start, an interface that is
 * missing is skipped with a warning, --no-default-device leaves softrdma0
 * out, SOFTRDMA_CONFIG names the file when --config does not, and a
 * syntax error stops the daemon with the file and line.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_admin.h"

static char dir[] = "/tmp/srdcfg.XXXXXX";
static char conf[300], bad[300], logpath[300];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_ASSERT(f);
	fputs(text, f);
	T_EQ(fclose(f), 0);
}

static void cleanup(void)
{
	unlink(conf);
	unlink(bad);
	unlink(logpath);
	rmdir(dir);
}

/* Start softrdmad in the foreground with extra arguments; waits until it
 * serves its socket.  Returns its pid. */
static pid_t start(const char *a1, const char *a2, const char *a3)
{
	const char *argv[12] = { getenv("SOFTRDMAD"),
				 "--foreground",
				 "--socket",
				 t_socket_name(),
				 a1,
				 a2,
				 a3,
				 NULL };
	static struct t_run r;
	pid_t pid;
	int fd;

	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		t_cli(&r, "--no-start", "link", NULL);
		if (r.status == 0)
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			T_FAIL("softrdmad exited at start");
		t_sleep_ms(20);
	}
	T_FAIL("softrdmad does not answer");
}

static void stop(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	T_EQ(waitpid(pid, &st, 0), pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void read_log(char *buf, size_t size)
{
	FILE *f = fopen(logpath, "r");
	size_t n;

	T_ASSERT(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

int main(void)
{
	static struct t_run r;
	static char log[T_OUT_MAX];
	const char *argv[8];
	pid_t pid;

	t_init("admin_daemon_config");
	t_cli_path();
	if (!getenv("SOFTRDMAD"))
		t_skip("SOFTRDMAD does not name the daemon");
	T_ASSERT(mkdtemp(dir));
	atexit(cleanup);
	snprintf(conf, sizeof(conf), "%s/softrdma.conf", dir);
	snprintf(bad, sizeof(bad), "%s/bad.conf", dir);
	snprintf(logpath, sizeof(logpath), "%s/daemon.log", dir);
	write_file(conf, "# devices of this test\n"
			 "\n"
			 "link add cfg0 netdev lo   # the first\n"
			 "   link add cfg1 type softrdma netdev lo\n"
			 "link add cfg2 netdev nosuchif0\n");
	write_file(bad, "link add ok0 netdev lo\n"
			"link add\n");

	/* The file, without softrdma0. */
	pid = start("--config", conf, "--no-default-device");
	t_cli(&r, "--no-start", "link", NULL);
	T_EQ(r.status, 0);
	T_STR_EQ(r.out, "link cfg0/1 state ACTIVE physical_state LINK_UP "
			"netdev lo\n"
			"link cfg1/1 state ACTIVE physical_state LINK_UP "
			"netdev lo\n");
	t_cli(&r, "--no-start", "-d", "dev", "show", "cfg1", NULL);
	T_EXPECT_IN(r.out, " origin config");
	T_ASSERT(t_have_device("cfg0"));
	T_ASSERT(!t_have_device("softrdma0"));
	stop(pid);
	read_log(log, sizeof(log));
	T_EXPECT_IN(log, ":5: link add cfg2 netdev nosuchif0: No such device");

	/* SOFTRDMA_CONFIG when there is no --config; softrdma0 first. */
	setenv("SOFTRDMA_CONFIG", conf, 1);
	pid = start(NULL, NULL, NULL);
	t_cli(&r, "--no-start", "dev", NULL);
	T_EXPECT_IN(r.out, "0: softrdma0: ");
	T_EXPECT_IN(r.out, "1: cfg0: ");
	T_EXPECT_IN(r.out, "2: cfg1: ");
	stop(pid);

	/* An empty SOFTRDMA_CONFIG: no file at all. */
	setenv("SOFTRDMA_CONFIG", "", 1);
	pid = start(NULL, NULL, NULL);
	t_cli(&r, "--no-start", "dev", NULL);
	T_STR_EQ(strchr(r.out, '\n') + 1, "");
	stop(pid);
	unsetenv("SOFTRDMA_CONFIG");

	/* A syntax error: the daemon says where and does not start. */
	argv[0] = getenv("SOFTRDMAD");
	argv[1] = "--foreground";
	argv[2] = "--socket";
	argv[3] = t_socket_name();
	argv[4] = "--config";
	argv[5] = bad;
	argv[6] = NULL;
	t_run_argv(&r, argv);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "bad.conf:2: link add: missing device name");
	argv[5] = "/nonexistent/softrdma.conf";
	t_run_argv(&r, argv);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "/nonexistent/softrdma.conf: No such file");
	t_pass();
}
