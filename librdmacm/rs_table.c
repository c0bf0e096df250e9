/* SPDX-License-Identifier: MIT */
/*
 * Which descriptors are rsockets: a table indexed by fd.  Lookups happen
 * on every r* call, also for ordinary descriptors, so they take no lock:
 * slots are written under the lock and read with acquire loads, and the
 * table only grows (old arrays are kept, as a reader may still hold one).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "librdmacm/rs.h"

#define RS_TABLE_MIN 1024

struct rs_table {
	struct rs_table *prev; /* kept: lock-free readers may hold it */
	int size;
	_Atomic(struct rsocket *) slot[];
};

static _Atomic(struct rs_table *) table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct rsocket *rs_lookup(int fd)
{
	struct rs_table *t = atomic_load_explicit(&table, memory_order_acquire);

	if (!t || fd < 0 || fd >= t->size)
		return NULL;
	return atomic_load_explicit(&t->slot[fd], memory_order_acquire);
}

static int grow(int fd)
{
	struct rs_table *old = atomic_load(&table), *t;
	int size = old ? old->size : RS_TABLE_MIN;

	while (size <= fd)
		size *= 2;
	t = calloc(1, sizeof(*t) + (size_t)size * sizeof(t->slot[0]));
	if (!t)
		return -1;
	t->size = size;
	t->prev = old;
	for (int i = 0; old && i < old->size; i++)
		atomic_store(&t->slot[i], atomic_load(&old->slot[i]));
	atomic_store_explicit(&table, t, memory_order_release);
	return 0;
}

int rs_insert(struct rsocket *rs, int fd)
{
	struct rs_table *t;
	int ret = 0;

	pthread_mutex_lock(&table_lock);
	t = atomic_load(&table);
	if (!t || fd >= t->size)
		ret = grow(fd);
	if (!ret) {
		t = atomic_load(&table);
		atomic_store_explicit(&t->slot[fd], rs, memory_order_release);
		rs->index = fd;
	}
	pthread_mutex_unlock(&table_lock);
	return ret;
}

void rs_remove(struct rsocket *rs)
{
	struct rs_table *t;

	if (rs->index < 0)
		return;
	pthread_mutex_lock(&table_lock);
	t = atomic_load(&table);
	if (t && rs->index < t->size && atomic_load(&t->slot[rs->index]) == rs)
		atomic_store(&t->slot[rs->index], NULL);
	pthread_mutex_unlock(&table_lock);
	rs->index = -1;
}
