/* SPDX-License-Identifier: MIT */
/*
 * Which app fds are ours, read without a lock on every intercepted call
 * (most of which are for other descriptors; librdmacm/fd_table.h), and the
 * shared state behind each.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "librdmacm/fd_table.h"
#include "preload.h"

static struct srd_fd_table table = SRD_FD_TABLE_INIT;

struct pl_sock *pl_lookup(int fd)
{
	return srd_fd_get(&table, fd);
}

int pl_set(int fd, struct pl_sock *s)
{
	return srd_fd_set(&table, fd, s);
}

void pl_clear(int fd)
{
	srd_fd_clear(&table, fd, NULL);
}

struct pl_sock *pl_sock_new(enum pl_kind kind, int rfd)
{
	struct pl_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->kind, kind);
	s->rfd = rfd;
	atomic_init(&s->refs, 1);
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

int pl_sock_put(struct pl_sock *s)
{
	int ret = 0;

	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return 0;
	if (atomic_load(&s->kind) == PL_RSOCKET) {
		pl_inside++;
		ret = rclose(s->rfd);
		pl_inside--;
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
	return ret;
}

int pl_reserve(bool cloexec)
{
	return open("/dev/null", O_RDONLY | (cloexec ? O_CLOEXEC : 0));
}

int pl_rfd(int fd)
{
	struct pl_sock *s = pl_lookup(fd);
	int kind;

	if (!s)
		return -1;
	kind = atomic_load_explicit(&s->kind, memory_order_acquire);
	if (kind == PL_FORK_ACTIVE || kind == PL_FORK_PASSIVE) {
		pl_fork_convert(fd, s);
		kind = atomic_load(&s->kind);
	}
	return kind == PL_RSOCKET ? s->rfd : -1;
}
