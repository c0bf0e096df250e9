/* SPDX-License-Identifier: MIT */
/*
 * What the administration tests share: running the softrdma CLI (from
 * SOFTRDMA_CLI) and other programs with a deadline, and looking at what
 * they printed.  The CLI talks to the test's private daemon: t_init() has
 * set SOFTRDMA_SOCKET, which it inherits.
 */
#ifndef SOFTRDMA_TESTS_T_ADMIN_H
#define SOFTRDMA_TESTS_T_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "t_util.h"

#define T_OUT_MAX 65536

struct t_run {
	int status; /* exit code; 128 + signal when killed */
	char out[T_OUT_MAX];
	char err[T_OUT_MAX];
};

/* The CLI's path; skips the test when SOFTRDMA_CLI is not set. */
const char *t_cli_path(void);
/* Run argv (NULL terminated) with a 20 s deadline, collecting output. */
void t_run_argv(struct t_run *r, const char *const *argv);
/* Run the CLI with the arguments given (NULL terminated). */
void t_cli(struct t_run *r, ...) __attribute__((sentinel));
/* The line of text that contains needle (copied into line), or false. */
bool t_line_with(const char *text, const char *needle, char *line, size_t size);
/* Fail unless text contains needle. */
void t_expect_in_at(const char *file, int line, const char *text,
		    const char *needle, const char *what);
#define T_EXPECT_IN(text, needle) \
	t_expect_in_at(__FILE__, __LINE__, text, needle, #text)
void t_expect_not_in_at(const char *file, int line, const char *text,
			const char *needle, const char *what);
#define T_EXPECT_NOT_IN(text, needle) \
	t_expect_not_in_at(__FILE__, __LINE__, text, needle, #text)
/* The value after "key " in a text line, as a number; fails if absent. */
unsigned long long t_field_at(const char *file, int line, const char *text,
			      const char *key);
#define T_FIELD(text, key) t_field_at(__FILE__, __LINE__, text, key)
/* Fail unless the run exited with status, said msg on stderr and printed
 * nothing on stdout: how the CLI refuses a command. */
void t_refused_at(const char *file, int line, const struct t_run *r, int status,
		  const char *msg);
#define T_REFUSED(r, status, msg) \
	t_refused_at(__FILE__, __LINE__, r, status, msg)
/* Is a device of that name in ibv_get_device_list? */
bool t_have_device(const char *name);

#endif
