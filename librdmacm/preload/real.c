/* SPDX-License-Identifier: MIT */
/*
 * The C library's socket calls behind the ones this library defines, and
 * the environment knobs rdma-core's preload library reads.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "preload.h"

struct pl_real pl_real;
struct pl_config pl_config;
atomic_bool pl_ready;
__thread int pl_inside;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static int env_int(const char *name)
{
	const char *v = secure_getenv(name);

	return v ? (int)strtol(v, NULL, 0) : 0;
}

#define REAL(name) \
	(pl_real.name = (__typeof__(pl_real.name))dlsym(RTLD_NEXT, #name))

static void init_once(void)
{
	REAL(socket);
	REAL(bind);
	REAL(listen);
	REAL(accept);
	REAL(accept4);
	REAL(connect);
	REAL(recv);
	REAL(recvfrom);
	REAL(recvmsg);
	REAL(read);
	REAL(readv);
	REAL(send);
	REAL(sendto);
	REAL(sendmsg);
	REAL(write);
	REAL(writev);
	REAL(poll);
	REAL(select);
	REAL(shutdown);
	REAL(close);
	REAL(getpeername);
	REAL(getsockname);
	REAL(setsockopt);
	REAL(getsockopt);
	REAL(fcntl);
	REAL(fcntl64);
	REAL(dup);
	REAL(dup2);
	REAL(dup3);
	REAL(sendfile);
	REAL(sendfile64);
	REAL(fstat);
	REAL(fstat64);
	if (!pl_real.fcntl64)
		pl_real.fcntl64 = pl_real.fcntl;
	pl_config.sq_size = env_int("RS_SQ_SIZE");
	pl_config.rq_size = env_int("RS_RQ_SIZE");
	pl_config.inline_size = env_int("RS_INLINE");
	pl_config.fork_safe = env_int("RDMAV_FORK_SAFE") > 0;
	pl_config.no_dgram = env_int("RS_PRELOAD_NO_DGRAM") > 0;
	atomic_store_explicit(&pl_ready, true, memory_order_release);
}

void pl_init_slow(void)
{
	pthread_once(&once, init_once);
}

__attribute__((constructor)) static void pl_constructor(void)
{
	pl_init();
}
