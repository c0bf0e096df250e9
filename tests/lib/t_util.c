/* SPDX-License-Identifier: MIT */
/*
 * Test life cycle: a private daemon per test, a watchdog, reporting, and
 * memory patterns.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "t_util.h"

static pid_t t_main_pid;
static bool t_own_daemon;
static char t_sock[108];
/* Cached for the signal handlers, which must not scan /proc. */
static volatile pid_t t_daemon_cached;

const char *t_socket_name(void)
{
	return t_sock;
}

uint64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void t_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Does the NUL-separated command line name our socket? */
static bool cmdline_is_ours(const char *buf, size_t len)
{
	const char *arg = buf, *end = buf + len, *prev = NULL;
	const char *base = strrchr(buf, '/');

	base = base ? base + 1 : buf;
	if (!strstr(base, "softrdmad"))
		return false;
	while (arg < end) {
		if (prev && !strcmp(prev, "--socket") && !strcmp(arg, t_sock))
			return true;
		if (!strncmp(arg, "--socket=", 9) && !strcmp(arg + 9, t_sock))
			return true;
		prev = arg;
		arg += strlen(arg) + 1;
	}
	return false;
}

pid_t t_daemon_pid(void)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char path[300], buf[4096];
		ssize_t len;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (cmdline_is_ours(buf, (size_t)len)) {
			found = (pid_t)strtol(de->d_name, NULL, 10);
			break;
		}
	}
	closedir(dir);
	if (found)
		t_daemon_cached = found;
	return found;
}

static void stop_daemon(void)
{
	pid_t pid;

	if (!t_own_daemon || getpid() != t_main_pid)
		return;
	pid = t_daemon_pid();
	if (pid > 0)
		kill(pid, SIGTERM);
}

static void on_fatal_signal(int sig)
{
	static const char msg[] = "FAIL: watchdog expired (test hung)\n";

	if (sig == SIGALRM) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(T_EXIT_FAIL);
	}
	if (t_own_daemon && getpid() == t_main_pid && t_daemon_cached > 0)
		kill(t_daemon_cached, SIGTERM);
	if (sig == SIGALRM)
		_exit(T_EXIT_FAIL);
	signal(sig, SIG_DFL);
	raise(sig);
}

void t_init(const char *name)
{
	const char *env = getenv("SOFTRDMA_SOCKET");

	t_assert_init(name);
	t_main_pid = getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (env && *env) {
		snprintf(t_sock, sizeof(t_sock), "%s", env);
	} else {
		/* A daemon of our own: no stale daemon from an older build
		 * and no other user's daemon is ever tested by mistake. */
		snprintf(t_sock, sizeof(t_sock), "srdtest.%s.%d", name,
			 (int)t_main_pid);
		setenv("SOFTRDMA_SOCKET", t_sock, 1);
		t_own_daemon = true;
		atexit(stop_daemon);
	}
	signal(SIGALRM, on_fatal_signal);
	signal(SIGSEGV, on_fatal_signal);
	signal(SIGBUS, on_fatal_signal);
	signal(SIGABRT, on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);
	alarm(t_watchdog_s());
	t_log("%s: socket %s, daemon %s", name, t_sock,
	      getenv("SOFTRDMAD") ? getenv("SOFTRDMAD") : "(library default)");
}

/* T_WATCHDOG_S, or SRD_TEST_WATCHDOG_S for a test whose ctest timeout is
 * longer (long transfers under the sanitizers). */
unsigned int t_watchdog_s(void)
{
	const char *env = getenv("SRD_TEST_WATCHDOG_S");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return T_WATCHDOG_S;
	v = strtoul(env, &end, 10);
	return (*end || !v || v > 3600) ? T_WATCHDOG_S : (unsigned int)v;
}

const char *t_wc_opcode_name(int opcode)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return "SEND";
	case IBV_WC_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "RDMA_READ";
	case IBV_WC_COMP_SWAP:
		return "COMP_SWAP";
	case IBV_WC_FETCH_ADD:
		return "FETCH_ADD";
	case IBV_WC_BIND_MW:
		return "BIND_MW";
	case IBV_WC_LOCAL_INV:
		return "LOCAL_INV";
	case IBV_WC_TSO:
		return "TSO";
	case IBV_WC_RECV:
		return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "RECV_RDMA_WITH_IMM";
	default:
		return "?";
	}
}

void *t_zalloc(size_t len)
{
	void *p;

	if (!len)
		len = 1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		T_FAIL("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

void t_free(void *p, size_t len)
{
	if (p)
		munmap(p, len ? len : 1);
}

uint8_t t_pattern(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u +
		     (uint32_t)(i >> 12) * 97u;

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

void t_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = t_pattern(seed, i);
}

bool t_wait_fill(const volatile void *buf, size_t len, uint32_t seed,
		 int timeout_ms)
{
	const volatile uint8_t *p = buf;

	for (int waited = 0;; waited++) {
		size_t i = 0;

		while (i < len && p[i] == t_pattern(seed, i))
			i++;
		if (i == len)
			return true;
		if (waited >= timeout_ms)
			return false;
		usleep(1000);
	}
}

void t_check_fill_at(const char *file, int line, const void *buf, size_t len,
		     uint32_t seed, const char *what)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != t_pattern(seed, i))
			t_fail_at(file, line,
				  "%s: byte %zu of %zu is %#04x, expected "
				  "%#04x (pattern %u)",
				  what, i, len, p[i], t_pattern(seed, i), seed);
	}
}

void t_memeq_at(const char *file, int line, const void *got,
		const void *expected, size_t len, const char *what)
{
	const uint8_t *g = got, *e = expected;

	for (size_t i = 0; i < len; i++) {
		if (g[i] != e[i])
			t_fail_at(file, line,
				  "%s: byte %zu of %zu is %#04x, expected "
				  "%#04x",
				  what, i, len, g[i], e[i]);
	}
}

static char *config_path;

static void config_unlink(void)
{
	if (config_path)
		unlink(config_path);
}

void t_config(const char *text)
{
	static char path[] = "/tmp/srd-config-XXXXXX";
	size_t len = strlen(text);
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	T_EQ(write(fd, text, len), (ssize_t)len);
	close(fd);
	/* The daemon reads it when it starts, which the test's first
	 * connection does; then it can go. */
	setenv("SOFTRDMA_CONFIG", path, 1);
	config_path = path;
	atexit(config_unlink);
}

int t_counter_steps(const uint32_t *v, int n, uint32_t mask, int shift)
{
	int s = 0;

	for (int i = 1; i < n; i++) {
		uint32_t a = (v[i - 1] >> shift) & mask;
		uint32_t b = (v[i] >> shift) & mask;

		if (b == a || b == ((a + 1) & mask))
			s++;
	}
	return s;
}
