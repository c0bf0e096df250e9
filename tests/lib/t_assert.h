/* SPDX-License-Identifier: MIT */
/*
 * The tests' one assertion vocabulary, for every label: exit codes,
 * reporting, and checks that print file:line with what was expected and
 * what came, then exit.  Needs nothing but libc.
 */
#ifndef SOFTRDMA_TESTS_T_ASSERT_H
#define SOFTRDMA_TESTS_T_ASSERT_H

#include <errno.h>
#include <string.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Names the test in reports (else the program's name) and marks this
 * process as the one children's reports are told apart from. */
void t_assert_init(const char *name);
__attribute__((noreturn)) void t_pass(void);
__attribute__((noreturn, format(printf, 3, 4))) void
t_fail_at(const char *file, int line, const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void t_skip(const char *fmt,
							    ...);
__attribute__((format(printf, 1, 2))) void t_log(const char *fmt, ...);
/* "EINVAL" for EINVAL (or -EINVAL), "0" for 0. */
const char *t_errname(int err);

#define T_FAIL(...) t_fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define T_ASSERT(cond)                                         \
	do {                                                   \
		if (!(cond))                                   \
			T_FAIL("assertion failed: %s", #cond); \
	} while (0)

/* Integer comparisons, done as signed 64-bit (so a returned -1 reads as
 * -1): order u64 values above INT64_MAX only with T_EQ and T_NE. */
#define T_CMP_(a, op, b)                                                   \
	do {                                                               \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);    \
		if (!(t_a_ op t_b_))                                       \
			T_FAIL("%s %s %s: %s is %lld (%#llx), %s is %lld " \
			       "(%#llx)",                                  \
			       #a, #op, #b, #a, t_a_,                      \
			       (unsigned long long)t_a_, #b, t_b_,         \
			       (unsigned long long)t_b_);                  \
	} while (0)
#define T_EQ(a, b) T_CMP_(a, ==, b)
#define T_NE(a, b) T_CMP_(a, !=, b)
#define T_GE(a, b) T_CMP_(a, >=, b)
#define T_GT(a, b) T_CMP_(a, >, b)
#define T_LE(a, b) T_CMP_(a, <=, b)
#define T_LT(a, b) T_CMP_(a, <, b)

#define T_PTR_EQ(a, b)                                                        \
	do {                                                                  \
		const void *t_a_ = (a), *t_b_ = (b);                          \
		if (t_a_ != t_b_)                                             \
			T_FAIL("%s == %s: got %p, expected %p", #a, #b, t_a_, \
			       t_b_);                                         \
	} while (0)

#define T_STR_EQ(a, b)                                                \
	do {                                                          \
		const char *t_a_ = (a), *t_b_ = (b);                  \
		if (!t_a_ || strcmp(t_a_, t_b_))                      \
			T_FAIL("%s: got \"%s\", expected \"%s\"", #a, \
			       t_a_ ? t_a_ : "(null)", t_b_);         \
	} while (0)

/* An int verb that returns 0 or a positive errno value. */
#define T_RET(expr, err)                                                 \
	do {                                                             \
		int t_r_ = (expr), t_x_ = (err);                         \
		if (t_r_ != t_x_)                                        \
			T_FAIL("%s: returned %d (%s), expected %d (%s)", \
			       #expr, t_r_, t_errname(t_r_), t_x_,       \
			       t_errname(t_x_));                         \
	} while (0)
#define T_OK(expr) T_RET(expr, 0)

/* A verb that returns -1 (or any negative value) and sets errno. */
#define T_NEG_ERRNO(expr, err)                                          \
	do {                                                            \
		errno = 0;                                              \
		long long t_r_ = (long long)(expr);                     \
		int t_e_ = errno, t_x_ = (err);                         \
		if (t_r_ >= 0)                                          \
			T_FAIL("%s: returned %lld, expected a failure " \
			       "with errno %s",                         \
			       #expr, t_r_, t_errname(t_x_));           \
		if (t_e_ != t_x_)                                       \
			T_FAIL("%s: errno %s, expected %s", #expr,      \
			       t_errname(t_e_), t_errname(t_x_));       \
	} while (0)

/* A pointer verb that must succeed: evaluates to the pointer. */
#define T_NONNULL(expr)                                                   \
	({                                                                \
		errno = 0;                                                \
		__typeof__(expr) t_p_ = (expr);                           \
		if (!t_p_)                                                \
			T_FAIL("%s: returned NULL, errno %s (%s)", #expr, \
			       t_errname(errno), strerror(errno));        \
		t_p_;                                                     \
	})

/* A pointer verb that must fail with NULL and errno == err. */
#define T_NULL_ERRNO(expr, err)                                              \
	do {                                                                 \
		errno = 0;                                                   \
		const void *t_p_ = (expr);                                   \
		int t_e_ = errno, t_x_ = (err);                              \
		if (t_p_)                                                    \
			T_FAIL("%s: succeeded (%p), expected NULL with "     \
			       "errno %s",                                   \
			       #expr, t_p_, t_errname(t_x_));                \
		if (t_e_ != t_x_)                                            \
			T_FAIL("%s: NULL with errno %s, expected %s", #expr, \
			       t_errname(t_e_), t_errname(t_x_));            \
	} while (0)

#endif
