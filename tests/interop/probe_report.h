/* SPDX-License-Identifier: MIT */
/*
 * What verbs_probe and cm_probe print, a line per case and side:
 *   probe CASE ROLE ok|FAIL WHAT
 * and how they stop at the first failure.  Both also run in the interop
 * guest on rdma-core's libraries, so they share this header rather than
 * tests/lib.
 */
#ifndef SRD_INTEROP_PROBE_REPORT_H
#define SRD_INTEROP_PROBE_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The case running now ("-" between cases) and this side's role. */
static const char *probe_case = "-";
static bool probe_server;

static inline const char *probe_role(void)
{
	return probe_server ? "server" : "client";
}

static inline void probe_vline(const char *status, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* One line: case, role, status, then what the caller says. */
static inline void probe_vline(const char *status, const char *fmt, va_list ap)
{
	printf("probe %-10s %-6s %-4s ", probe_case, probe_role(), status);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline void probe_ok(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* The case's line when it passed, with what it saw. */
static inline void probe_ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	probe_vline("ok", fmt, ap);
	va_end(ap);
}

static void probe_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* The FAIL line; the peer sees the connection close and fails too. */
static void probe_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	probe_vline("FAIL", fmt, ap);
	va_end(ap);
	exit(1);
}

#define CHECK(cond, ...)                         \
	do {                                     \
		if (!(cond))                     \
			probe_fail(__VA_ARGS__); \
	} while (0)

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
