/* SPDX-License-Identifier: MIT */
/*
 * The fast path makes no system call per work request or completion.
 *
 * The test runs itself again under `strace -f`: that copy sets up an RC
 * pair, warms up, then between two getppid() markers posts and polls
 * 20000 RDMA WRITEs (signaled every 16th) and 20000 SEND/RECV pairs (the
 * SENDs signaled every 16th), one WR per ibv_post_send/ibv_post_recv.  The
 * system calls the strace log shows between the markers must stay below
 * 5 % of the WQEs plus CQEs of that phase.
 *
 * It runs with SOFTRDMA_POLL_YIELD=0: on machines with fewer than 4 CPUs
 * the library yields the CPU (sched_yield) after a run of empty polls, so
 * that the device daemon gets to run; that is a deliberate system call
 * per empty poll run, not per WQE or CQE, and depends on the machine.  A
 * second run with the yield on only reports its count.  While each phase
 * runs, the daemon is traced too (strace -c -p) and its system calls per
 * WQE are reported: it checks its command sockets with epoll_wait(0) now
 * and then while it polls the rings, by design.
 *
 * Skipped (77) when strace is missing or may not trace.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define N_WRITE 20000
#define N_SEND 20000
#define N_WARMUP 2000
#define SIGNAL_EVERY 16
#define DEPTH 256
#define MSG 64
#define SLOTS 64
/* WQEs: every WRITE, SEND and RECV; CQEs: one per signaled WRITE and
 * SEND, one per RECV. */
#define WQES (N_WRITE + 2 * N_SEND)
#define CQES (N_WRITE / SIGNAL_EVERY + N_SEND / SIGNAL_EVERY + N_SEND)
#define MAX_PERCENT 5

#define ROLE_ENV "SRD_NOSYSCALL_ROLE"
#define FDS_ENV "SRD_NOSYSCALL_FDS"

/* ------------------------------------------------------------------ */
/* The measured program (runs under strace)                            */

struct rig {
	struct t_dev d;
	struct t_pair p;
	struct t_buf src, dst, rbuf;
	uint64_t wr_done, s_done, r_done;
};

static void marker(void)
{
	/* Nothing else here calls getppid(): it delimits the phase in the
	 * strace log. */
	syscall(SYS_getppid);
}

static void reap_send_cq(struct rig *g, enum ibv_wc_opcode op, uint64_t *done)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(g->p.cq_a, 16, wc);

	if (n < 0)
		T_FAIL("ibv_poll_cq: %d", n);
	for (int i = 0; i < n; i++) {
		T_WC_STATUS(&wc[i], IBV_WC_SUCCESS);
		T_EQ(wc[i].opcode, op);
		/* One CQE per SIGNAL_EVERY WQEs, in order. */
		T_EQ(wc[i].wr_id, *done + SIGNAL_EVERY - 1);
		*done = wc[i].wr_id + 1;
	}
}

static void run_writes(struct rig *g, uint64_t n)
{
	uint64_t posted = 0;

	g->wr_done = 0;
	while (g->wr_done < n) {
		while (posted < n && posted - g->wr_done < DEPTH - 1) {
			unsigned int slot = posted % SLOTS;
			unsigned int fl = posted % SIGNAL_EVERY ==
							  SIGNAL_EVERY - 1
						  ? IBV_SEND_SIGNALED
						  : 0;

			t_post_send(g->p.a, posted, IBV_WR_RDMA_WRITE,
				    g->src.mr, g->src.p + slot * MSG, MSG, fl,
				    (uintptr_t)g->dst.p + slot * MSG,
				    g->dst.mr->rkey);
			posted++;
		}
		reap_send_cq(g, IBV_WC_RDMA_WRITE, &g->wr_done);
	}
}

static void run_sends(struct rig *g, uint64_t n)
{
	uint64_t s_posted = 0, r_posted = 0;
	struct ibv_wc wc[32];
	int got;

	g->s_done = g->r_done = 0;
	while (g->r_done < n || g->s_done < n) {
		while (r_posted < n && r_posted - g->r_done < DEPTH) {
			t_post_recv(g->p.b, r_posted, g->rbuf.mr,
				    g->rbuf.p + (r_posted % DEPTH) * MSG, MSG);
			r_posted++;
		}
		/* Never a SEND without its RECV posted: no RNR. */
		while (s_posted < r_posted &&
		       s_posted - g->s_done < DEPTH - 1) {
			unsigned int fl = s_posted % SIGNAL_EVERY ==
							  SIGNAL_EVERY - 1
						  ? IBV_SEND_SIGNALED
						  : 0;

			t_post_send(g->p.a, s_posted, IBV_WR_SEND, g->src.mr,
				    g->src.p + (s_posted % SLOTS) * MSG, MSG,
				    fl, 0, 0);
			s_posted++;
		}
		reap_send_cq(g, IBV_WC_SEND, &g->s_done);
		got = ibv_poll_cq(g->p.cq_b, 32, wc);

		if (got < 0)
			T_FAIL("ibv_poll_cq: %d", got);
		for (int i = 0; i < got; i++) {
			uint64_t k = g->r_done++;

			T_WC_STATUS(&wc[i], IBV_WC_SUCCESS);
			T_EQ(wc[i].opcode, IBV_WC_RECV);
			T_EQ(wc[i].wr_id, k);
			T_EQ(wc[i].byte_len, MSG);
			if (memcmp(g->rbuf.p + (k % DEPTH) * MSG,
				   g->src.p + (k % SLOTS) * MSG, MSG))
				T_FAIL("RECV %llu: payload differs from SEND",
				       (unsigned long long)k);
		}
	}
}

static int measure(void)
{
	struct ibv_qp_init_attr ia;
	int rfd = -1, wfd = -1;
	struct rig g;
	char c;

	t_init("nosyscall-measure");
	if (!getenv(FDS_ENV) ||
	    sscanf(getenv(FDS_ENV), "%d,%d", &rfd, &wfd) != 2)
		T_FAIL("%s not set", FDS_ENV);
	t_dev_open(&g.d);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_send_wr = DEPTH;
	ia.cap.max_recv_wr = DEPTH;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	t_pair_create(&g.d, &g.p, IBV_QPT_RC, &ia, NULL);
	t_buf_alloc(&g.d, &g.src, SLOTS * MSG, T_ACCESS_ALL);
	t_buf_alloc(&g.d, &g.dst, SLOTS * MSG, T_ACCESS_ALL);
	t_buf_alloc(&g.d, &g.rbuf, DEPTH * MSG, T_ACCESS_ALL);
	t_fill(g.src.p, SLOTS * MSG, 77);

	/* Warm up: first touches, first doorbells, the engine awake. */
	run_writes(&g, N_WARMUP);
	run_sends(&g, N_WARMUP);
	memset(g.dst.p, 0, SLOTS * MSG);

	T_EQ(write(wfd, "r", 1), 1);
	T_EQ(read(rfd, &c, 1), 1);
	marker();
	run_writes(&g, N_WRITE);
	run_sends(&g, N_SEND);
	marker();
	T_EQ(write(wfd, "d", 1), 1);

	T_MEMEQ(g.dst.p, g.src.p, SLOTS * MSG);
	t_buf_free(&g.rbuf);
	t_buf_free(&g.dst);
	t_buf_free(&g.src);
	t_pair_destroy(&g.p);
	t_dev_close(&g.d);
	t_pass();
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */

static bool find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	copy = strdup(path && *path ? path : "/usr/bin:/bin");
	if (!copy)
		T_FAIL("out of memory");
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", *dir ? dir : ".", name);
		found = access(out, X_OK) == 0;
	}
	free(copy);
	return found;
}

/* fork + exec argv, stdin from /dev/null and, when quiet, stdout too.
 * With a role, the child is a copy of this program to be traced: it goes
 * without LeakSanitizer in an ASan build (it cannot run under ptrace;
 * later options win), yield sets its SOFTRDMA_POLL_YIELD and sock, if
 * given, the daemon it uses. */
static pid_t spawn(char *const argv[], bool quiet, const char *role,
		   const char *yield, const char *sock)
{
	pid_t pid = fork();

	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		const char *old = getenv("ASAN_OPTIONS");
		char asan[1024];

		dup2(null, 0);
		if (quiet)
			dup2(null, 1);
		if (role) {
			snprintf(asan, sizeof(asan), "%s%sdetect_leaks=0",
				 old ? old : "", old ? ":" : "");
			setenv("ASAN_OPTIONS", asan, 1);
			setenv(ROLE_ENV, role, 1);
		}
		if (yield)
			setenv("SOFTRDMA_POLL_YIELD", yield, 1);
		if (sock)
			setenv("SOFTRDMA_SOCKET", sock, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		if (r < 0)
			T_FAIL("waitpid: %s", strerror(errno));
		if (t_now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		t_sleep_ms(5);
	}
}

static pid_t tracer_of(pid_t pid)
{
	char path[64], line[256];
	long tracer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return (pid_t)tracer;
}

/* System calls between the two marker lines of an strace -f log, and the
 * most frequent names among them (for the report). */
static long count_between_markers(const char *log, char *top, size_t toplen)
{
	struct {
		char name[32];
		long n;
	} names[64];
	int nnames = 0, markers = 0;
	long count = 0;
	char line[4096];
	FILE *f = fopen(log, "re");

	if (!f)
		T_FAIL("%s: %s", log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, name[32];
		int i;

		/* "PID  name(args) = ret", the PID only with several. */
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		/* Resumed halves, signals, exits: not new calls. */
		if (!strncmp(p, "<...", 4) || !strncmp(p, "---", 3) ||
		    !strncmp(p, "+++", 3))
			continue;
		if (sscanf(p, "%31[a-z0-9_](", name) != 1)
			continue;
		if (!strcmp(name, "getppid")) {
			markers++;
			continue;
		}
		if (markers != 1)
			continue;
		count++;
		for (i = 0; i < nnames && strcmp(names[i].name, name); i++)
			;
		if (i == nnames && nnames < 64) {
			snprintf(names[nnames].name, sizeof(names[0].name),
				 "%s", name);
			names[nnames++].n = 0;
		}
		if (i < nnames)
			names[i].n++;
	}
	fclose(f);
	if (markers != 2)
		T_FAIL("%s: %d getppid markers, expected 2", log, markers);
	top[0] = 0;
	for (int k = 0; k < 4; k++) {
		int best = -1;

		for (int i = 0; i < nnames; i++)
			if (names[i].n &&
			    (best < 0 || names[i].n > names[best].n))
				best = i;
		if (best < 0)
			break;
		snprintf(top + strlen(top), toplen - strlen(top), "%s%s %ld",
			 k ? ", " : "", names[best].name, names[best].n);
		names[best].n = 0;
	}
	return count;
}

/* An strace -c summary: the calls of its "total" line, and the three
 * system calls made most often (for the report). */
static long summary_calls(const char *log, char *top, size_t toplen)
{
	struct {
		char name[32];
		long n;
	} rows[128];
	int nrows = 0;
	char line[512];
	long calls = -1;
	FILE *f = fopen(log, "re");

	top[0] = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char c[6][32];
		int n = sscanf(line, "%31s %31s %31s %31s %31s %31s", c[0],
			       c[1], c[2], c[3], c[4], c[5]);
		/* "% time seconds usecs/call calls [errors] syscall" */
		const char *name = n == 5 ? c[4] : c[5];

		if (n < 5 || c[0][0] < '0' || c[0][0] > '9')
			continue;
		if (!strcmp(name, "total")) {
			calls = strtol(c[3], NULL, 10);
		} else if (nrows < 128) {
			snprintf(rows[nrows].name, sizeof(rows[0].name), "%s",
				 name);
			rows[nrows++].n = strtol(c[3], NULL, 10);
		}
	}
	fclose(f);
	for (int k = 0; k < 3; k++) {
		int best = -1;

		for (int i = 0; i < nrows; i++)
			if (rows[i].n && (best < 0 || rows[i].n > rows[best].n))
				best = i;
		if (best < 0)
			break;
		snprintf(top + strlen(top), toplen - strlen(top), "%s%s %ld",
			 k ? ", " : "", rows[best].name, rows[best].n);
		rows[best].n = 0;
	}
	return calls;
}

struct result {
	long app;
	long daemon;
	char app_top[256];
	char daemon_top[256];
};

/* Run the measured program under strace -f with the given poll yield
 * setting, against the daemon dpid serving sock; with trace_daemon, trace
 * that daemon through the phase too. */
static void run_traced(const char *strace, const char *self, const char *sock,
		       pid_t dpid, const char *yield, bool trace_daemon,
		       struct result *res)
{
	char log[256], dlog[280], fds[32], dpid_s[16];
	char *targv[7], *dargv[9];
	int to_child[2], from_child[2], st;
	pid_t child, dtracer = 0;
	uint64_t end;
	char c;

	snprintf(log, sizeof(log), "%s/srd-nosyscall.%d.%s.log",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(),
		 yield);
	snprintf(dlog, sizeof(dlog), "%s.daemon", log);
	if (pipe(to_child) || pipe(from_child))
		T_FAIL("pipe: %s", strerror(errno));
	snprintf(fds, sizeof(fds), "%d,%d", to_child[0], from_child[1]);
	setenv(FDS_ENV, fds, 1);
	targv[0] = (char *)strace;
	targv[1] = "-f";
	targv[2] = "-o";
	targv[3] = log;
	targv[4] = "--";
	targv[5] = (char *)self;
	targv[6] = NULL;
	child = spawn(targv, false, "measure", yield, sock);
	close(to_child[0]);
	close(from_child[1]);
	if (!t_fd_readable(from_child[0], 20000) ||
	    read(from_child[0], &c, 1) != 1 || c != 'r')
		T_FAIL("the traced program did not get ready (exit %d)",
		       wait_exit(child, 1000));

	if (trace_daemon) {
		snprintf(dpid_s, sizeof(dpid_s), "%d", (int)dpid);
		dargv[0] = (char *)strace;
		dargv[1] = "-q";
		dargv[2] = "-c";
		dargv[3] = "-f";
		dargv[4] = "-p";
		dargv[5] = dpid_s;
		dargv[6] = "-o";
		dargv[7] = dlog;
		dargv[8] = NULL;
		dtracer = spawn(dargv, true, NULL, NULL, NULL);
		end = t_now_ms() + 3000;
		while (tracer_of(dpid) != dtracer && t_now_ms() < end)
			t_sleep_ms(2);
		if (tracer_of(dpid) != dtracer) {
			t_log("could not attach strace to the daemon %d",
			      (int)dpid);
			kill(dtracer, SIGKILL);
			wait_exit(dtracer, 2000);
			dtracer = 0;
		}
	}

	T_EQ(write(to_child[1], "g", 1), 1);
	if (!t_fd_readable(from_child[0], 40000) ||
	    read(from_child[0], &c, 1) != 1 || c != 'd')
		T_FAIL("the traced program did not finish its phase");
	if (dtracer) {
		kill(dtracer, SIGINT);
		wait_exit(dtracer, 5000);
	}
	st = wait_exit(child, 20000);
	if (st != 0)
		T_FAIL("the traced program exited with %d", st);
	close(to_child[1]);
	close(from_child[0]);

	res->app =
		count_between_markers(log, res->app_top, sizeof(res->app_top));
	res->daemon = dtracer ? summary_calls(dlog, res->daemon_top,
					      sizeof(res->daemon_top))
			      : -1;
	unlink(log);
	unlink(dlog);
}

static void report(const char *what, const struct result *r)
{
	t_log("%s: %ld system calls for %d WQEs + %d CQEs (%.3f per WQE)%s%s%s",
	      what, r->app, WQES, CQES, (double)r->app / WQES,
	      r->app_top[0] ? " [" : "", r->app_top, r->app_top[0] ? "]" : "");
	if (r->daemon >= 0)
		t_log("%s: the daemon made %ld system calls in the phase (%.3f "
		      "per WQE) [%s]",
		      what, r->daemon, (double)r->daemon / WQES, r->daemon_top);
}

/* A daemon of our own that busy-polls for 2 s after the last work. */
static pid_t spin_daemon;

static void stop_spin_daemon(void)
{
	if (spin_daemon > 0) {
		kill(spin_daemon, SIGTERM);
		wait_exit(spin_daemon, 5000);
		spin_daemon = 0;
	}
}

static bool can_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd, ret;

	if (n + 1 > sizeof(sa.sun_path))
		T_FAIL("socket name too long: %s", name);
	memcpy(sa.sun_path + 1, name, n);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		T_FAIL("socket: %s", strerror(errno));
	ret = connect(
		fd, (struct sockaddr *)&sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
	close(fd);
	return ret == 0;
}

static void start_spin_daemon(const char *name)
{
	const char *path = getenv("SOFTRDMAD");
	char *argv[9];
	uint64_t end;

	if (!path || !*path)
		t_skip("SOFTRDMAD is not set");
	argv[0] = (char *)path;
	argv[1] = "--socket";
	argv[2] = (char *)name;
	argv[3] = "--foreground";
	argv[4] = "--spin-us";
	argv[5] = "2000000";
	argv[6] = "--idle-exit";
	argv[7] = "30";
	argv[8] = NULL;
	spin_daemon = spawn(argv, true, NULL, NULL, NULL);
	atexit(stop_spin_daemon);
	end = t_now_ms() + 5000;
	while (!can_connect(name)) {
		if (t_now_ms() > end)
			T_FAIL("daemon %s did not come up", name);
		t_sleep_ms(5);
	}
}

int main(void)
{
	char strace[4096], self[4096], *argv[6];
	struct result r;
	char spin_sock[128];
	struct t_dev d;
	ssize_t n;
	pid_t dpid;
	int st;

	if (getenv(ROLE_ENV) && !strcmp(getenv(ROLE_ENV), "measure"))
		return measure();
	if (getenv(ROLE_ENV) && !strcmp(getenv(ROLE_ENV), "probe"))
		return 0;

	t_init("nosyscall");
	if (!find_in_path("strace", strace, sizeof(strace)))
		t_skip("strace not found");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		T_FAIL("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	/* May we trace at all (containers may refuse ptrace)? */
	argv[0] = strace;
	argv[1] = "-o";
	argv[2] = "/dev/null";
	argv[3] = "--";
	argv[4] = self;
	argv[5] = NULL;
	st = wait_exit(spawn(argv, true, "probe", NULL, NULL), 10000);
	if (st != 0)
		t_skip("strace cannot trace here (exit %d)", st);

	/* Start the daemons here, untraced; the traced program joins one. */
	snprintf(spin_sock, sizeof(spin_sock), "%s.spin", t_socket_name());
	start_spin_daemon(spin_sock);
	t_dev_open(&d);
	dpid = t_daemon_pid();
	T_GT(dpid, 0);

	/*
	 * Asserted: the library's fast path, against a daemon that stays
	 * awake through the phase.  With the default daemon, an application
	 * kept off the CPU longer than the engine's spin time (50 us) by
	 * other load finds the engine asleep and rings the doorbell, a system
	 * call by design: on a busy host such doorbells reach thousands.
	 */
	run_traced(strace, self, spin_sock, spin_daemon, "0", false, &r);
	report("poll yield off, engine awake", &r);
	if (r.app * 100 >= (long)(WQES + CQES) * MAX_PERCENT)
		T_FAIL("%ld system calls for %d WQEs + %d CQEs: the fast path "
		       "is not free of system calls (limit %d %%)",
		       r.app, WQES, CQES, MAX_PERCENT);
	stop_spin_daemon();

	/* Reported only: the default daemon, traced, with and without the
	 * yield of small hosts. */
	run_traced(strace, self, t_socket_name(), dpid, "0", true, &r);
	report("poll yield off, default daemon", &r);
	run_traced(strace, self, t_socket_name(), dpid, "1", true, &r);
	report("poll yield on, default daemon", &r);
	t_dev_close(&d);
	t_pass();
}
