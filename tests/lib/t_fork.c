/* SPDX-License-Identifier: MIT */
/*
 * Two-process tests: fork with a socketpair, exchange fixed-size messages,
 * and reap the child with a deadline.
 */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

void t_fork(struct t_child *c, int (*fn)(int fd, void *arg), void *arg)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		T_FAIL("socketpair: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (c->pid == 0) {
		int ret;

		close(sv[0]);
		/* A pending alarm does not survive fork. */
		alarm(T_WATCHDOG_S);
		ret = fn(sv[1], arg);
		fflush(stdout);
		exit(ret);
	}
	close(sv[1]);
	c->fd = sv[0];
}

int t_child_wait(struct t_child *c, int timeout_ms)
{
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid)
			break;
		if (r < 0 && errno != EINTR)
			T_FAIL("waitpid(%d): %s", (int)c->pid, strerror(errno));
		if (t_now_ms() >= end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			T_FAIL("child %d did not exit within %d ms",
			       (int)c->pid, timeout_ms);
		}
		t_sleep_ms(2);
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (WIFSIGNALED(status))
		T_FAIL("child %d killed by signal %d (%s)", (int)c->pid,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
	return WEXITSTATUS(status);
}

void t_sock_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			T_FAIL("send to peer: %s",
			       n < 0 ? strerror(errno) : "closed");
		p += n;
		len -= (size_t)n;
	}
}

void t_sock_recv(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;

		if (!t_fd_readable(fd, 2 * T_WAIT_MS))
			T_FAIL("peer sent nothing within %d ms", 2 * T_WAIT_MS);
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			T_FAIL("recv from peer: %s", strerror(errno));
		if (n == 0)
			T_FAIL("peer closed the socket (it failed or exited)");
		p += n;
		len -= (size_t)n;
	}
}

void t_sock_sync(int fd)
{
	uint8_t b = 0x5a;

	t_sock_send(fd, &b, 1);
	t_sock_recv(fd, &b, 1);
	if (b != 0x5a)
		T_FAIL("sync byte %#x from peer, expected 0x5a", b);
}

void t_sock_send_fd(int sock, int fd, const void *buf, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)len)
		T_FAIL("sendmsg with a descriptor: %s", strerror(errno));
}

int t_sock_recv_fd(int sock, void *buf, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (!t_fd_readable(sock, 2 * T_WAIT_MS))
		T_FAIL("peer sent nothing within %d ms", 2 * T_WAIT_MS);
	if (recvmsg(sock, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC) != (ssize_t)len)
		T_FAIL("recvmsg with a descriptor: %s", strerror(errno));
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		T_FAIL("the peer's message carried no descriptor");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* SIGSTOP, and wait until every thread of pid is stopped. */
void t_stop(pid_t pid)
{
	uint64_t until = t_now_ms() + 5000;
	char path[64];

	T_OK(kill(pid, SIGSTOP));
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (;;) {
		DIR *dir = opendir(path);
		struct dirent *e;
		bool all = true;

		T_NONNULL(dir);
		while ((e = readdir(dir))) {
			char stat[400], buf[512], *p;
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(stat, sizeof(stat), "%s/%s/stat", path,
				 e->d_name);
			f = fopen(stat, "re");
			if (!f)
				continue;
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')')
						       : NULL;
			fclose(f);
			if (p && p[1] == ' ' && p[2] != 'T' && p[2] != 't')
				all = false;
		}
		closedir(dir);
		if (all)
			return;
		T_ASSERT(t_now_ms() < until);
		t_sleep_ms(1);
	}
}

struct t_step_msg {
	uint32_t step;
	struct t_ep ep;
};

void t_step_send(int sock, uint32_t step, const struct t_ep *ep)
{
	struct t_step_msg m = { .step = step };

	if (ep)
		m.ep = *ep;
	t_sock_send(sock, &m, sizeof(m));
}

struct t_ep t_step_recv(int sock, uint32_t step)
{
	struct t_step_msg m;

	t_sock_recv(sock, &m, sizeof(m));
	T_EQ(m.step, step);
	return m.ep;
}

void t_step_relay(int from, int to, uint32_t step)
{
	struct t_step_msg m;

	t_sock_recv(from, &m, sizeof(m));
	T_EQ(m.step, step);
	t_sock_send(to, &m, sizeof(m));
}
