/* SPDX-License-Identifier: MIT */
/*
 * librspreload.so: LD_PRELOAD it and an unmodified program's TCP (and UDP)
 * sockets become rsockets.  The program sees descriptors of its own
 * ("app fds", each an open /dev/null holding the number); a table maps
 * them to the rsocket descriptors of librdmacm.so.1.  Descriptors not in
 * the table go to the C library untouched, which is also where every
 * descriptor librdmacm and libibverbs use themselves ends up.
 */
#ifndef SOFTRDMA_RSPRELOAD_H
#define SOFTRDMA_RSPRELOAD_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PL_EXPORT __attribute__((visibility("default")))

/* With _GNU_SOURCE the C library declares socket address arguments as
 * transparent unions. */
#define PL_SA(a) ((a).__sockaddr__)

/* The C library's calls, found with dlsym(RTLD_NEXT). */
struct pl_real {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*shutdown)(int, int);
	int (*close)(int);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	ssize_t (*sendfile64)(int, int, off64_t *, size_t);
	int (*fstat)(int, struct stat *);
	int (*fstat64)(int, struct stat64 *);
};

extern struct pl_real pl_real;

/* Knobs read once from the environment (real.c). */
struct pl_config {
	int sq_size;	 /* RS_SQ_SIZE */
	int rq_size;	 /* RS_RQ_SIZE */
	int inline_size; /* RS_INLINE */
	bool fork_safe;	 /* RDMAV_FORK_SAFE: connect first over TCP */
	bool no_dgram;	 /* RS_PRELOAD_NO_DGRAM: leave UDP to the kernel */
};

extern struct pl_config pl_config;

void pl_init_slow(void);
extern atomic_bool pl_ready;

static inline void pl_init(void)
{
	if (!atomic_load_explicit(&pl_ready, memory_order_acquire))
		pl_init_slow();
}

/* Set while this thread is inside librdmacm: its own sockets stay plain. */
extern __thread int pl_inside;

/* A socket the program holds, shared by the app fds dup'ed from it. */
enum pl_kind {
	PL_RSOCKET,	/* rfd is an rsocket */
	PL_FORK,	/* fork-safe mode: a kernel socket, not yet connected */
	PL_FORK_LISTEN, /* ... listening */
	PL_FORK_ACTIVE, /* ... connected by us: becomes an rsocket on use */
	PL_FORK_PASSIVE, /* ... accepted: becomes an rsocket on use */
};

struct pl_sock {
	atomic_int kind;
	int rfd; /* the rsocket; for the PL_FORK kinds the app fd itself */
	atomic_int refs;
	pthread_mutex_t lock; /* the fork-safe conversion */
	/* A non-blocking connect in progress: where to, should it be
	 * refused and have to go over TCP. */
	struct sockaddr_storage dst;
	socklen_t dst_len;
};

/* --- fdmap.c: app fd -> pl_sock, lock-free lookups --- */
struct pl_sock *pl_lookup(int fd);
int pl_set(int fd, struct pl_sock *s);
void pl_clear(int fd);
struct pl_sock *pl_sock_new(enum pl_kind kind, int rfd);
/* Drop one app fd's reference; the last one closes the rsocket. */
int pl_sock_put(struct pl_sock *s);

/* The rsocket behind fd, or -1 (errno untouched) for any other fd; a
 * fork-safe socket in use is made an rsocket first. */
int pl_rfd(int fd);

/* A new app fd number: an open /dev/null. */
int pl_reserve(bool cloexec);

/* --- fork.c --- */
void pl_fork_convert(int fd, struct pl_sock *s);

/* --- sock.c --- */
void pl_set_rsocket_options(int rfd);

#endif
