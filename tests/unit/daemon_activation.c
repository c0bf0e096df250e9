/* SPDX-License-Identifier: MIT */
/*
 * Socket activation: sd_listen_fds semantics of srd_listen_fds(), the
 * checks of srd_activated_socket(), and softrdmad started as systemd
 * starts it (the listening socket as fd 3, LISTEN_PID, LISTEN_FDS=1)
 * serving that socket rather than binding --socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/activation.h"
#include "tests/unit/t_proto.h"

static int bind_abstract(int type, const char *name, bool do_listen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	T_ASSERT(fd >= 0);
	memcpy(sa.sun_path + 1, name, len);
	T_EQ(bind(fd, (struct sockaddr *)&sa,
		  offsetof(struct sockaddr_un, sun_path) + 1 + len),
	     0);
	if (do_listen)
		T_EQ(listen(fd, 16), 0);
	return fd;
}

static void set_env(const char *pid, const char *fds)
{
	if (pid)
		setenv("LISTEN_PID", pid, 1);
	else
		unsetenv("LISTEN_PID");
	if (fds)
		setenv("LISTEN_FDS", fds, 1);
	else
		unsetenv("LISTEN_FDS");
	setenv("LISTEN_FDNAMES", "softrdmad.socket", 1);
}

static bool env_clear(void)
{
	return !getenv("LISTEN_PID") && !getenv("LISTEN_FDS") &&
	       !getenv("LISTEN_FDNAMES");
}

/* Put fd at 3 (closing what is there) and return 3. */
static int at_fd3(int fd)
{
	if (fd != SRD_LISTEN_FDS_START) {
		T_ASSERT(dup2(fd, SRD_LISTEN_FDS_START) ==
			 SRD_LISTEN_FDS_START);
		close(fd);
	}
	return SRD_LISTEN_FDS_START;
}

static void check_listen_fds(const char *name)
{
	char me[32], other[32], got[108];
	int fd, flags;

	snprintf(me, sizeof(me), "%d", (int)getpid());
	snprintf(other, sizeof(other), "%d", (int)getpid() + 1);

	set_env(NULL, NULL);
	T_EQ(srd_listen_fds(), 0);

	/* Meant for another process: nothing passed, and nothing left for a
	 * child to misread. */
	set_env(other, "1");
	T_EQ(srd_listen_fds(), 0);
	T_ASSERT(env_clear());

	set_env(me, "many");
	T_EQ(srd_listen_fds(), -EINVAL);
	T_ASSERT(env_clear());
	set_env(me, "-1");
	T_EQ(srd_listen_fds(), -EINVAL);
	set_env("12x", "1");
	T_EQ(srd_listen_fds(), -EINVAL);

	fd = at_fd3(bind_abstract(SOCK_SEQPACKET, name, true));
	T_EQ(fcntl(fd, F_SETFD, 0), 0); /* systemd passes it inheritable */
	set_env(me, "1");
	T_EQ(srd_listen_fds(), 1);
	T_ASSERT(env_clear());
	T_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	T_EQ(srd_activated_socket(fd, got, sizeof(got)), 0);
	T_ASSERT(!strcmp(got, name));
	flags = fcntl(fd, F_GETFL);
	T_ASSERT(flags >= 0 && (flags & O_NONBLOCK));
	T_EQ(srd_activated_socket(fd, got, strlen(name)), -ENAMETOOLONG);
	close(fd);
}

static void check_socket_kinds(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char got[108], path[64];
	int fd;

	/* ListenStream=: the clients' SOCK_SEQPACKET could not connect. */
	fd = bind_abstract(SOCK_STREAM, name, true);
	T_EQ(srd_activated_socket(fd, got, sizeof(got)), -ESOCKTNOSUPPORT);
	close(fd);
	fd = bind_abstract(SOCK_SEQPACKET, name, false);
	T_EQ(srd_activated_socket(fd, got, sizeof(got)), -EINVAL);
	close(fd);
	/* A file system name is not where clients look. */
	snprintf(path, sizeof(path), "/tmp/srdact.%d", (int)getpid());
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	T_ASSERT(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	T_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	T_EQ(listen(fd, 1), 0);
	T_EQ(srd_activated_socket(fd, got, sizeof(got)), -EINVAL);
	close(fd);
	unlink(path);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	T_ASSERT(fd >= 0);
	T_EQ(srd_activated_socket(fd, got, sizeof(got)), -EAFNOSUPPORT);
	close(fd);
}

enum pid_kind {
	PID_CHILD,
	PID_PARENT
};

/* A failed check exits: the daemon must not outlive the test (it holds
 * the test runner's output pipes). */
static pid_t running;

static void kill_running(void)
{
	if (running > 0)
		kill(running, SIGKILL);
}

/* softrdmad as a socket unit starts it, listening socket in hand. */
static pid_t start_activated(int type, const char *name, const char *other,
			     enum pid_kind kind)
{
	int sock = bind_abstract(type, name, true);
	pid_t parent = getpid();
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		char buf[32];

		/* dup2 onto itself would keep SOCK_CLOEXEC. */
		if (sock == SRD_LISTEN_FDS_START)
			fcntl(sock, F_SETFD, 0);
		else
			dup2(sock, SRD_LISTEN_FDS_START);
		snprintf(buf, sizeof(buf), "%d",
			 kind == PID_CHILD ? (int)getpid() : (int)parent);
		setenv("LISTEN_PID", buf, 1);
		setenv("LISTEN_FDS", "1", 1);
		execl(SOFTRDMAD_PATH, "softrdmad", "--foreground", "--no-udp",
		      "--config", "", "--socket", other, (char *)NULL);
		_exit(127);
	}
	running = pid;
	/* The daemon holds the only copy now, as systemd would not. */
	close(sock);
	return pid;
}

static int wait_connect(const char *name, pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		int fd = t_connect(name);

		if (fd >= 0) {
			/* Queued on a socket nobody accepts: fail, not hang. */
			struct timeval tv = { .tv_sec = 5 };

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				   sizeof(tv));
			return fd;
		}
		T_EQ(waitpid(pid, NULL, WNOHANG), 0);
		usleep(10000);
	}
	T_FAIL("activated daemon did not answer on @%s", name);
}

static int stop(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	T_ASSERT(waitpid(pid, &st, 0) == pid);
	running = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void check_daemon(const char *name, const char *other)
{
	pid_t pid;
	int fd, st;

	/* Serves the socket passed, binds nothing of its own. */
	pid = start_activated(SOCK_SEQPACKET, name, other, PID_CHILD);
	fd = wait_connect(name, pid);
	T_EQ(t_hello(fd), 0);
	T_EQ(t_connect(other), -ECONNREFUSED);
	close(fd);
	T_EQ(stop(pid), 0);

	/* LISTEN_PID of another process: fd 3 is not its to serve (it is
	 * closed with the rest), the daemon binds --socket. */
	pid = start_activated(SOCK_SEQPACKET, name, other, PID_PARENT);
	fd = wait_connect(other, pid);
	T_EQ(t_hello(fd), 0);
	close(fd);
	T_EQ(t_connect(name), -ECONNREFUSED);
	T_EQ(stop(pid), 0);

	/* A stream socket: refused at start, exit 1. */
	pid = start_activated(SOCK_STREAM, name, other, PID_CHILD);
	T_ASSERT(waitpid(pid, &st, 0) == pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	T_EQ(t_connect(other), -ECONNREFUSED);
}

int main(void)
{
	char name[64], other[80];

	snprintf(name, sizeof(name), "srdact-%d-%ld", (int)getpid(),
		 (long)time(NULL));
	snprintf(other, sizeof(other), "%s-other", name);
	atexit(kill_running);
	check_listen_fds(name);
	check_socket_kinds(name);
	check_daemon(name, other);
	printf("daemon_activation: ok\n");
	return T_EXIT_PASS;
}
