/* SPDX-License-Identifier: MIT */
/*
 * Reporting for every test: PASS, FAIL at file:line, SKIP, and log lines,
 * a forked child's marked as such.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_assert.h"

static const char *t_name;
static pid_t t_main_pid;

void t_assert_init(const char *name)
{
	t_name = name;
	t_main_pid = getpid();
}

static const char *name(void)
{
	return t_name ? t_name : program_invocation_short_name;
}

static const char *who(void)
{
	return !t_main_pid || getpid() == t_main_pid ? "" : "[child] ";
}

void t_pass(void)
{
	printf("PASS %s\n", name());
	exit(T_EXIT_PASS);
}

void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%sFAIL %s at %s:%d: ", who(), name(), file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(T_EXIT_FAIL);
}

void t_skip(const char *fmt, ...)
{
	va_list ap;

	printf("%sSKIP %s: ", who(), name());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(T_EXIT_SKIP);
}

void t_log(const char *fmt, ...)
{
	va_list ap;

	printf("# %s", who());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

const char *t_errname(int err)
{
	static __thread char buf[32];
	const char *s;

	if (err == 0)
		return "0";
	if (err < 0)
		err = -err;
	s = strerrorname_np(err);
	if (s)
		return s;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}
