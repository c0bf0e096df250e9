/* SPDX-License-Identifier: MIT */
/* Pointers by file descriptor, lock-free to read (see fd_table.h). */
#include <errno.h>
#include <stdlib.h>

#include "librdmacm/fd_table.h"

#define FD_TABLE_MIN 1024

/* Called with the lock held. */
static int grow(struct srd_fd_table *t, int fd)
{
	struct srd_fd_array *old = atomic_load(&t->arr), *a;
	int size = old ? old->size : FD_TABLE_MIN;

	while (size <= fd)
		size *= 2;
	a = calloc(1, sizeof(*a) + (size_t)size * sizeof(a->slot[0]));
	if (!a)
		return -ENOMEM;
	a->size = size;
	a->prev = old;
	for (int i = 0; old && i < old->size; i++)
		atomic_store(&a->slot[i], atomic_load(&old->slot[i]));
	atomic_store_explicit(&t->arr, a, memory_order_release);
	return 0;
}

int srd_fd_set(struct srd_fd_table *t, int fd, void *p)
{
	struct srd_fd_array *a;
	int ret = 0;

	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&t->lock);
	a = atomic_load(&t->arr);
	if (!a || fd >= a->size)
		ret = grow(t, fd);
	if (!ret) {
		a = atomic_load(&t->arr);
		atomic_store_explicit(&a->slot[fd], p, memory_order_release);
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void srd_fd_clear(struct srd_fd_table *t, int fd, const void *expect)
{
	struct srd_fd_array *a;

	pthread_mutex_lock(&t->lock);
	a = atomic_load(&t->arr);
	if (a && fd >= 0 && fd < a->size &&
	    (!expect || atomic_load(&a->slot[fd]) == expect))
		atomic_store(&a->slot[fd], NULL);
	pthread_mutex_unlock(&t->lock);
}
