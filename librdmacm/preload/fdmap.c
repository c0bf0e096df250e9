// SPDX-License-Identifier: MIT
/*
 * Which app fds are ours: a table indexed by fd, read without a lock on
 * every intercepted call (most of which are for other descriptors).
 * Slots change under the lock; the table only grows and keeps its old
 * arrays, which a reader may still be looking at.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "preload.h"

#define PL_TABLE_MIN 1024

struct pl_table {
	struct pl_table *prev;
	int size;
	_Atomic(struct pl_sock *) slot[];
};

static _Atomic(struct pl_table *) table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct pl_sock *pl_lookup(int fd)
{
	struct pl_table *t = atomic_load_explicit(&table, memory_order_acquire);

	if (!t || fd < 0 || fd >= t->size)
		return NULL;
	return atomic_load_explicit(&t->slot[fd], memory_order_acquire);
}

static int grow(int fd)
{
	struct pl_table *old = atomic_load(&table), *t;
	int size = old ? old->size : PL_TABLE_MIN;

	while (size <= fd)
		size *= 2;
	t = calloc(1, sizeof(*t) + (size_t)size * sizeof(t->slot[0]));
	if (!t)
		return -ENOMEM;
	t->size = size;
	t->prev = old;
	for (int i = 0; old && i < old->size; i++)
		atomic_store(&t->slot[i], atomic_load(&old->slot[i]));
	atomic_store_explicit(&table, t, memory_order_release);
	return 0;
}

int pl_set(int fd, struct pl_sock *s)
{
	struct pl_table *t;
	int ret = 0;

	pthread_mutex_lock(&table_lock);
	t = atomic_load(&table);
	if (!t || fd >= t->size)
		ret = grow(fd);
	if (!ret) {
		t = atomic_load(&table);
		atomic_store_explicit(&t->slot[fd], s, memory_order_release);
	}
	pthread_mutex_unlock(&table_lock);
	return ret;
}

void pl_clear(int fd)
{
	struct pl_table *t;

	pthread_mutex_lock(&table_lock);
	t = atomic_load(&table);
	if (t && fd >= 0 && fd < t->size)
		atomic_store(&t->slot[fd], NULL);
	pthread_mutex_unlock(&table_lock);
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
