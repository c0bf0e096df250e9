/* SPDX-License-Identifier: MIT */
/*
 * A table of pointers indexed by file descriptor, for libraries that must
 * tell their own descriptors from the application's on every call (the
 * rsockets of librdmacm, the sockets of librspreload).  Lookups take no
 * lock: slots are written under the table's lock and read with acquire
 * loads, and the array only grows, keeping the old arrays, which a reader
 * may still be looking at.
 */
#ifndef SOFTRDMA_COMMON_FD_TABLE_H
#define SOFTRDMA_COMMON_FD_TABLE_H

#include <pthread.h>
#include <stdatomic.h>

struct srd_fd_array {
	struct srd_fd_array *prev; /* kept: lock-free readers may hold it */
	int size;
	_Atomic(void *) slot[];
};

struct srd_fd_table {
	_Atomic(struct srd_fd_array *) arr;
	pthread_mutex_t lock;
};

#define SRD_FD_TABLE_INIT                       \
	{                                       \
		NULL, PTHREAD_MUTEX_INITIALIZER \
	}

/* What fd maps to, NULL if nothing. */
static inline void *srd_fd_get(struct srd_fd_table *t, int fd)
{
	struct srd_fd_array *a =
		atomic_load_explicit(&t->arr, memory_order_acquire);

	if (!a || fd < 0 || fd >= a->size)
		return NULL;
	return atomic_load_explicit(&a->slot[fd], memory_order_acquire);
}

/* Map fd to p (growing the table); 0, -EBADF or -ENOMEM. */
int srd_fd_set(struct srd_fd_table *t, int fd, void *p);
/* Unmap fd, only if it maps to expect (any value if expect is NULL). */
void srd_fd_clear(struct srd_fd_table *t, int fd, const void *expect);

#endif
