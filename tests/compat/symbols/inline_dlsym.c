/* SPDX-License-Identifier: MIT */
/*
 * Every verb that <infiniband/verbs.h> defines inline is also a symbol of
 * libibverbs.so.1, and the exported functions work.
 *
 *   inline_dlsym LIBIBVERBS SOFTRDMAD
 *
 * Not linked with the library: it is dlopen()ed, so bindings that cannot
 * use C inline functions are what this program stands for.  Each name of
 * SOFTRDMA_INLINE_VERBS() must resolve; then a few are called through
 * their pointers on a device served by a private daemon (SOFTRDMAD and a
 * unique SOFTRDMA_SOCKET), which is stopped at the end.
 * Exit 0 pass, 1 fail, 77 when the library is not built.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/softrdma_inline_list.h>
#include <infiniband/verbs.h>

#include "t_assert.h"

#define LIST_NAME(n) #n,
static const char *const inline_names[] = { SOFTRDMA_INLINE_VERBS(LIST_NAME) };

/* True when /proc/<pid>/cmdline has "--socket" followed by exactly @name. */
static int runs_socket(const char *pid, const char *name)
{
	char path[64], buf[4096];
	size_t len, off;
	FILE *fp;
	int prev = 0;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[len] = '\0';
	for (off = 0; off < len; off += strlen(buf + off) + 1) {
		if (prev && !strcmp(buf + off, name))
			return 1;
		prev = !strcmp(buf + off, "--socket");
	}
	return 0;
}

/* Stop the daemon that serves @name; returns how many were signalled. */
static int stop_daemon(const char *name)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct dirent *de;
	int n = 0, i;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char path[64];
		pid_t pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (!runs_socket(de->d_name, name))
			continue;
		pid = (pid_t)strtol(de->d_name, NULL, 10);
		kill(pid, SIGTERM);
		n++;
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		for (i = 0; i < 150 && !access(path, F_OK); i++)
			nanosleep(&ts, NULL);
		if (!access(path, F_OK) && runs_socket(de->d_name, name))
			kill(pid, SIGKILL);
	}
	closedir(dir);
	return n;
}

#define SYM(h, name) ((__typeof__(name) *)sym(h, #name))

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		T_FAIL("dlsym(%s): %s", name, dlerror());
	return p;
}

static void exercise(void *h)
{
	__typeof__(ibv_get_device_list) *get_list;
	__typeof__(ibv_free_device_list) *free_list;
	__typeof__(ibv_get_device_name) *dev_name;
	__typeof__(ibv_open_device) *open_dev;
	__typeof__(ibv_close_device) *close_dev;
	__typeof__(ibv_alloc_pd) *alloc_pd;
	__typeof__(ibv_dealloc_pd) *dealloc_pd;
	__typeof__(ibv_create_cq) *create_cq;
	__typeof__(ibv_destroy_cq) *destroy_cq;
	__typeof__(ibv_poll_cq) *poll_cq;
	__typeof__(ibv_req_notify_cq) *req_notify;
	__typeof__(___ibv_query_port) *query_port;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	int num = 0, ret;

	get_list = SYM(h, ibv_get_device_list);
	free_list = SYM(h, ibv_free_device_list);
	dev_name = SYM(h, ibv_get_device_name);
	open_dev = SYM(h, ibv_open_device);
	close_dev = SYM(h, ibv_close_device);
	alloc_pd = SYM(h, ibv_alloc_pd);
	dealloc_pd = SYM(h, ibv_dealloc_pd);
	create_cq = SYM(h, ibv_create_cq);
	destroy_cq = SYM(h, ibv_destroy_cq);
	poll_cq = SYM(h, ibv_poll_cq);
	req_notify = SYM(h, ibv_req_notify_cq);
	query_port = SYM(h, ___ibv_query_port);

	list = get_list(&num);
	if (!list || num <= 0)
		T_FAIL("ibv_get_device_list: %d devices (%s)", num,
		       list ? "no device" : strerror(errno));
	printf("inline_dlsym: device %s\n", dev_name(list[0]));
	ctx = open_dev(list[0]);
	if (!ctx)
		T_FAIL("ibv_open_device: %s", strerror(errno));

	memset(&attr, 0xa5, sizeof(attr));
	ret = query_port(ctx, 1, &attr);
	if (ret)
		T_FAIL("ibv_query_port: %d", ret);
	if (attr.state != IBV_PORT_ACTIVE)
		T_FAIL("ibv_query_port: state %d, expected ACTIVE",
		       (int)attr.state);

	pd = alloc_pd(ctx);
	if (!pd)
		T_FAIL("ibv_alloc_pd: %s", strerror(errno));
	cq = create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		T_FAIL("ibv_create_cq: %s", strerror(errno));
	ret = poll_cq(cq, 4, wc);
	if (ret)
		T_FAIL("ibv_poll_cq on an empty CQ: %d", ret);
	ret = req_notify(cq, 0);
	if (ret)
		T_FAIL("ibv_req_notify_cq: %d", ret);
	ret = poll_cq(cq, 4, wc);
	if (ret)
		T_FAIL("ibv_poll_cq after notify: %d", ret);
	if (destroy_cq(cq))
		T_FAIL("ibv_destroy_cq");
	if (dealloc_pd(pd))
		T_FAIL("ibv_dealloc_pd");
	if (close_dev(ctx))
		T_FAIL("ibv_close_device");
	free_list(list);
}

static char sockname[64];

/* At exit, failed or not: the daemon the library started. */
static void stop_at_exit(void)
{
	printf("inline_dlsym: stopped %d daemon(s) on %s\n",
	       stop_daemon(sockname), sockname);
}

int main(int argc, char **argv)
{
	size_t i, n = sizeof(inline_names) / sizeof(inline_names[0]);
	void *h;

	if (argc != 3)
		T_FAIL("usage: %s LIBIBVERBS SOFTRDMAD", argv[0]);
	if (access(argv[1], F_OK) || access(argv[2], X_OK))
		t_skip("%s or %s missing", argv[1], argv[2]);
	if (n != SOFTRDMA_INLINE_VERBS_COUNT)
		T_FAIL("list has %zu names, count %d", n,
		       SOFTRDMA_INLINE_VERBS_COUNT);

	snprintf(sockname, sizeof(sockname), "softrdma-inline-dlsym-%d",
		 (int)getpid());
	setenv("SOFTRDMAD", argv[2], 1);
	setenv("SOFTRDMA_SOCKET", sockname, 1);
	atexit(stop_at_exit);

	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		T_FAIL("dlopen(%s): %s", argv[1], dlerror());
	for (i = 0; i < n; i++)
		if (!dlsym(h, inline_names[i]))
			T_FAIL("%s not exported: %s", inline_names[i],
			       dlerror());
	printf("inline_dlsym: %zu inline verbs looked up\n", n);

	exercise(h);
	t_pass();
}
