/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD module for perftest clients run with -R against a slow
 * guest.  perftest -R makes two rdma_cm connections: after the first it
 * exchanges parameters, and then the server destroys its listener and
 * listens again on the same port while the client connects at once.
 * Nothing orders the two, so against a guest under emulation the second
 * REQ routinely arrives first and is rejected (reason 8, no such
 * service); perftest's own retry then uses freed CM nodes and crashes.
 * This module holds every rdma_connect() after the first back by
 * SRD_CONNECT_DELAY_MS (default 500) so the listener is up; the REQ and
 * everything after it are the library's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/rdma_cma.h>

typedef int (*connect_fn)(struct rdma_cm_id *, struct rdma_conn_param *);

static atomic_uint calls;

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static connect_fn next;
	const char *env;
	long ms = 500;

	if (!next)
		next = (connect_fn)dlsym(RTLD_NEXT, "rdma_connect");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (atomic_fetch_add(&calls, 1) > 0) {
		env = getenv("SRD_CONNECT_DELAY_MS");
		if (env)
			ms = strtol(env, NULL, 10);
		if (ms > 0)
			pause_ms(ms);
	}
	return next(id, param);
}
