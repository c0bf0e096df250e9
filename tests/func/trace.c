/* SPDX-License-Identifier: MIT */
/*
 * SOFTRDMA_TRACE=all: every WQE the library posts and every CQE the device
 * writes is dumped, decoded (queue, opcode name, wr_id, status) and in
 * hex, on the application's stderr.  Without the variable: nothing.
 * The traced program is this one, re-executed with "child".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

static int child(void)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	fprintf(stderr, "MARK qp_a 0x%x qp_b 0x%x\n", p.a->qp_num, p.b->qp_num);
	t_post_recv(p.b, 0x1234abcd, r.mr, r.p, 4096);
	t_post_send(p.a, 0x5eed5eed, IBV_WR_SEND, s.mr, s.p, 100,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 0x5eed5eed, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 0x1234abcd, IBV_WC_SUCCESS, IBV_WC_RECV);
	t_post_send(p.a, 0x77, IBV_WR_RDMA_WRITE, s.mr, s.p, 8,
		    IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 0x77, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	return 0;
}

/* Reads what is in the pipe until EOF, or until it stays quiet. */
static char *drain(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap + 1);
	ssize_t n;

	T_ASSERT(out != NULL);
	while (len < cap && t_fd_readable(fd, 500)) {
		n = read(fd, out + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = 0;
	return out;
}

/*
 * Runs the child with stderr into a pipe (as under a test runner or a
 * pager) or into a regular file opened without O_APPEND (as "2>file"
 * does); returns what it wrote.
 */
static char *run_child(const char *self, bool traced, bool to_file)
{
	int fd[2], status;
	char *out;
	pid_t pid;

	if (to_file) {
		fd[1] = memfd_create("trace-out", MFD_CLOEXEC);
		fd[0] = -1;
		T_ASSERT(fd[1] >= 0);
	} else {
		T_EQ(pipe2(fd, O_CLOEXEC), 0);
	}
	fflush(stdout);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], STDERR_FILENO);
		if (traced)
			setenv("SOFTRDMA_TRACE", "all", 1);
		else
			unsetenv("SOFTRDMA_TRACE");
		execl(self, self, "child", (char *)NULL);
		_exit(127);
	}
	if (to_file) {
		off_t len;

		T_EQ(waitpid(pid, &status, 0), pid);
		/* The daemon writes CQE lines on its own time. */
		t_sleep_ms(200);
		len = lseek(fd[1], 0, SEEK_END);
		T_ASSERT(len >= 0);
		out = calloc(1, (size_t)len + 1);
		T_ASSERT(out != NULL);
		T_EQ(pread(fd[1], out, (size_t)len, 0), len);
		close(fd[1]);
	} else {
		close(fd[1]);
		out = drain(fd[0]);
		T_EQ(waitpid(pid, &status, 0), pid);
		close(fd[0]);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s", out);
		T_FAIL("traced child failed (status %#x)", status);
	}
	return out;
}

/* Is there a line holding all of a, b and c? */
static bool has_line(const char *out, const char *a, const char *b,
		     const char *c)
{
	const char *line = out;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, line, n);
		buf[n] = 0;
		if (strstr(buf, a) && strstr(buf, b) && strstr(buf, c))
			return true;
		line += n + (nl ? 1 : 0);
		if (!nl)
			break;
	}
	return false;
}

#define T_HAS_LINE(out, a, b, c)                                               \
	do {                                                                   \
		if (!has_line(out, a, b, c)) {                                 \
			fprintf(stderr, "--- trace output ---\n%s---\n", out); \
			T_FAIL("no trace line with \"%s\", \"%s\" and "        \
			       "\"%s\"",                                       \
			       a, b, c);                                       \
		}                                                              \
	} while (0)

int main(int argc, char **argv)
{
	unsigned int qa, qb;
	char qpa[32], qpb[32];
	const char *mark;
	char *out;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		/* Same socket as the parent: t_init keeps SOFTRDMA_SOCKET. */
		t_init("trace-child");
		return child();
	}
	t_init("trace");

	for (int to_file = 0; to_file < 2; to_file++) {
		t_log("stderr to a %s", to_file ? "file" : "pipe");
		out = run_child("/proc/self/exe", true, to_file);
		mark = strstr(out, "MARK qp_a ");
		if (!mark ||
		    sscanf(mark, "MARK qp_a 0x%x qp_b 0x%x", &qa, &qb) != 2)
			T_FAIL("child printed no QP numbers:\n%s", out);
		snprintf(qpa, sizeof(qpa), "qp 0x%x", qa);
		snprintf(qpb, sizeof(qpb), "qp 0x%x", qb);

		/* WQEs, as posted: queue, index, opcode, wr_id. */
		T_HAS_LINE(out, qpb, "rq[", "] RECV wr_id 0x1234abcd");
		T_HAS_LINE(out, qpa, "sq[", "] SEND wr_id 0x5eed5eed");
		T_HAS_LINE(out, qpa, "sq[", "] RDMA_WRITE wr_id 0x77");
		/* CQEs, as written, with their status. */
		T_HAS_LINE(out, "cqe[", "SEND wr_id 0x5eed5eed",
			   "status SUCCESS");
		T_HAS_LINE(out, "cqe[", "RECV wr_id 0x1234abcd",
			   "byte_len 100");
		T_HAS_LINE(out, "cqe[", "RDMA_WRITE wr_id 0x77",
			   "status SUCCESS");
		/* And the bytes in hex. */
		T_HAS_LINE(out, "  0000: ", " ", " ");
		free(out);
	}

	/* Untraced: none of it. */
	out = run_child("/proc/self/exe", false, false);
	if (strstr(out, "wr_id 0x5eed5eed"))
		T_FAIL("trace output without SOFTRDMA_TRACE:\n%s", out);
	free(out);
	t_pass();
}
