/* SPDX-License-Identifier: MIT */
/* Running the CLI and reading its output (t_admin.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_admin.h"

#define RUN_TIMEOUT_MS 20000

const char *t_cli_path(void)
{
	const char *p = getenv("SOFTRDMA_CLI");

	if (!p || !*p)
		t_skip("SOFTRDMA_CLI does not name the softrdma tool");
	return p;
}

/* Append what fd has to buf (of size, with len used); false at EOF. */
static bool drain(int fd, char *buf, size_t size, size_t *len)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0)
		return n < 0 && errno == EINTR;
	if (*len + (size_t)n >= size)
		n = (ssize_t)(size - 1 - *len);
	memcpy(buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	buf[*len] = '\0';
	return true;
}

void t_run_argv(struct t_run *r, const char *const *argv)
{
	int po[2], pe[2], st;
	size_t lo = 0, le = 0;
	bool open_o = true, open_e = true;
	uint64_t deadline = t_now_ms() + RUN_TIMEOUT_MS;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		T_FAIL("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while (open_o || open_e) {
		struct pollfd p[2] = {
			{ .fd = open_o ? po[0] : -1, .events = POLLIN },
			{ .fd = open_e ? pe[0] : -1, .events = POLLIN }
		};
		uint64_t now = t_now_ms();

		if (now >= deadline) {
			kill(pid, SIGKILL);
			T_FAIL("%s %s: no exit within %d ms", argv[0],
			       argv[1] ? argv[1] : "", RUN_TIMEOUT_MS);
		}
		if (poll(p, 2, (int)(deadline - now)) < 0 && errno != EINTR)
			T_FAIL("poll: %s", strerror(errno));
		if (p[0].revents)
			open_o = drain(po[0], r->out, sizeof(r->out), &lo);
		if (p[1].revents)
			open_e = drain(pe[0], r->err, sizeof(r->err), &le);
	}
	close(po[0]);
	close(pe[0]);
	if (waitpid(pid, &st, 0) != pid)
		T_FAIL("waitpid: %s", strerror(errno));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	t_log("%s: exit %d", argv[0], r->status);
}

void t_cli(struct t_run *r, ...)
{
	const char *argv[32] = { t_cli_path() };
	const char *a;
	int n = 1;
	va_list ap;

	va_start(ap, r);
	while ((a = va_arg(ap, const char *)) && n < 31)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	{
		char line[512];
		int len = 0;

		for (int i = 1; i < n && len < (int)sizeof(line) - 1; i++)
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					" %s", argv[i]);
		t_log("softrdma%s", line);
	}
	t_run_argv(r, argv);
}

bool t_line_with(const char *text, const char *needle, char *line, size_t size)
{
	const char *at = strstr(text, needle), *start, *end;
	size_t n;

	if (!at)
		return false;
	for (start = at; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(at, '\n');
	n = end ? (size_t)(end - start) : strlen(start);
	if (n >= size)
		n = size - 1;
	memcpy(line, start, n);
	line[n] = '\0';
	return true;
}

void t_expect_in_at(const char *file, int line, const char *text,
		    const char *needle, const char *what)
{
	if (!strstr(text, needle))
		t_fail_at(file, line, "%s does not contain \"%s\"; it is:\n%s",
			  what, needle, text);
}

void t_expect_not_in_at(const char *file, int line, const char *text,
			const char *needle, const char *what)
{
	if (strstr(text, needle))
		t_fail_at(file, line, "%s contains \"%s\"; it is:\n%s", what,
			  needle, text);
}

void t_refused_at(const char *file, int line, const struct t_run *r, int status,
		  const char *msg)
{
	if (r->status != status)
		t_fail_at(file, line, "exit %d, expected %d; stderr:\n%s",
			  r->status, status, r->err);
	if (!strstr(r->err, msg))
		t_fail_at(file, line, "stderr lacks \"%s\":\n%s", msg, r->err);
	if (r->out[0])
		t_fail_at(file, line, "output on stdout:\n%s", r->out);
}

unsigned long long t_field_at(const char *file, int line, const char *text,
			      const char *key)
{
	char pat[128];
	const char *at;
	char *end;
	unsigned long long v;

	/* " key " inside a line, or "key " at its start. */
	snprintf(pat, sizeof(pat), " %s ", key);
	at = strstr(text, pat);
	if (at) {
		at += strlen(pat);
	} else if (!strncmp(text, pat + 1, strlen(pat + 1))) {
		at = text + strlen(pat + 1);
	} else {
		t_fail_at(file, line, "no \"%s\" in: %s", key, text);
	}
	v = strtoull(at, &end, 0);
	if (end == at)
		t_fail_at(file, line,
			  "\"%s\" is not followed by a number in: %s", key,
			  text);
	return v;
}

bool t_have_device(const char *name)
{
	struct ibv_device **list;
	bool found = false;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		T_FAIL("ibv_get_device_list: %s", t_errname(errno));
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			found = true;
	ibv_free_device_list(list);
	return found;
}
