/* SPDX-License-Identifier: MIT */
/*
 * softrdmad as a program: options, losing the bind race quietly,
 * detaching without holding the starter's pipes, the idle exit, signals,
 * and no CPU use when idle.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

/* Run softrdmad with args, stdout+stderr into a pipe; returns its pid and
 * the pipe's read end.  extra_fd (if >= 0) is left open in the child. */
static pid_t spawn(const char *const *args, int *out, int extra_fd)
{
	const char *argv[16] = { SOFTRDMAD_PATH };
	int p[2], n = 1;
	pid_t pid;

	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	T_ASSERT(!pipe2(p, O_CLOEXEC));
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (extra_fd >= 0)
			fcntl(extra_fd, F_SETFD, 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	int st;

	for (int i = 0; i < timeout_ms / 10; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		usleep(10000);
	}
	return -1;
}

/* Read until EOF (or fail after timeout_ms); returns bytes read. */
static ssize_t read_to_eof(int fd, char *buf, size_t sz, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	for (;;) {
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) != 1)
			return -1;
		n = read(fd, buf + got, sz - got - 1);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += n;
	}
	buf[got] = 0;
	return got;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0;
}

static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	T_ASSERT(f);
	T_ASSERT(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');
	T_ASSERT(p);
	/* Fields after the name: state(3) ... utime(14) stime(15). */
	T_ASSERT(sscanf(p + 2,
			"%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			&ut, &st) == 2);
	return ut + st;
}

int main(void)
{
	char name[64], buf[4096];
	const char *args[12];
	struct srd_hello_req hello = { SRD_PROTO_VERSION, getpid() };
	struct srd_hello_rep hrep;
	struct t_daemon td;
	struct t_client c;
	int out, fd, p[2];
	long t0, t1;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	snprintf(name, sizeof(name), "srdtest-cli-%d", (int)getpid());

	/* --help and bad options. */
	pid = spawn((const char *[]){ "--help", NULL }, &out, -1);
	T_ASSERT(read_to_eof(out, buf, sizeof(buf), 5000) > 0);
	T_ASSERT(strstr(buf, "--idle-exit") && strstr(buf, "--spin-us") &&
		 strstr(buf, "--spin-yield"));
	T_EQ(wait_exit(pid, 5000), 0);
	close(out);
	pid = spawn((const char *[]){ "--bogus", NULL }, &out, -1);
	T_EQ(wait_exit(pid, 5000), 2);
	close(out);
	pid = spawn((const char *[]){ "--spin-us", "12x", NULL }, &out, -1);
	T_EQ(wait_exit(pid, 5000), 2);
	close(out);
	pid = spawn((const char *[]){ "--spin-yield", "sometimes", NULL }, &out,
		    -1);
	T_EQ(wait_exit(pid, 5000), 2);
	T_ASSERT(read_to_eof(out, buf, sizeof(buf), 5000) > 0);
	T_ASSERT(strstr(buf, "--spin-yield"));
	close(out);

	/* Detached: the starter returns at once, the pipe it was given
	 * reaches EOF (the daemon keeps none of it), the daemon serves. */
	args[0] = "--socket";
	args[1] = name;
	args[2] = "--spin-yield";
	args[3] = "on";
	args[4] = NULL;
	pid = spawn(args, &out, -1);
	T_EQ(wait_exit(pid, 5000), 0);
	T_ASSERT(read_to_eof(out, buf, sizeof(buf), 5000) >= 0);
	close(out);
	fd = -1;
	for (int i = 0; i < 300 && fd < 0; i++) {
		fd = t_connect(name);
		if (fd < 0)
			usleep(10000);
	}
	T_ASSERT(fd >= 0);
	T_EQ(t_cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello), NULL, 0, &hrep,
		   sizeof(hrep), NULL, NULL, NULL),
	     0);
	pid = hrep.daemon_pid;
	T_ASSERT(pid != 0 && alive(pid));
	/* Losing the race for the name is not an error. */
	{
		pid_t second = spawn(args, &out, -1);

		T_EQ(wait_exit(second, 5000), 0);
		T_ASSERT(read_to_eof(out, buf, sizeof(buf), 5000) == 0);
		close(out);
	}
	close(fd);
	kill(pid, SIGTERM);
	for (int i = 0; i < 300 && alive(pid); i++)
		usleep(10000);
	T_ASSERT(!alive(pid));

	/* Fds the starter leaked into the daemon are closed at start. */
	T_ASSERT(!pipe(p)); /* not close-on-exec */
	args[2] = "--foreground";
	args[3] = NULL;
	pid = spawn(args, &out, p[1]);
	close(p[1]);
	T_EQ(read_to_eof(p[0], buf, sizeof(buf), 5000), 0);
	close(p[0]);
	/* SIGINT: a clean exit, with a client connected. */
	for (int i = 0; i < 300 && (fd = t_connect(name)) < 0; i++)
		usleep(10000);
	T_ASSERT(fd >= 0);
	T_EQ(t_hello(fd), 0);
	kill(pid, SIGINT);
	T_EQ(wait_exit(pid, 5000), 0);
	close(fd);
	close(out);

	/* --idle-exit: gone a second after the last client left. */
	args[3] = "--idle-exit";
	args[4] = "1";
	args[5] = NULL;
	pid = spawn(args, &out, -1);
	for (int i = 0; i < 300 && (fd = t_connect(name)) < 0; i++)
		usleep(10000);
	T_ASSERT(fd >= 0);
	usleep(1500000);
	T_ASSERT(alive(pid)); /* a client is connected */
	close(fd);
	T_EQ(wait_exit(pid, 4000), 0);
	close(out);

	/* Idle, with a context open: next to no CPU. */
	t_daemon_start(&td, NULL);
	t_client_open(&c, td.name);
	usleep(200000);
	t0 = cpu_ticks(td.pid);
	usleep(1000000);
	t1 = cpu_ticks(td.pid);
	fprintf(stderr, "idle cpu: %ld ticks in 1 s\n", t1 - t0);
	T_ASSERT(t1 - t0 <= 2); /* 20 ms at 100 Hz */
	t_client_close(&c);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
