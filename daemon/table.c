/* SPDX-License-Identifier: MIT */
/*
 * Index tables.  Indices are handed out round robin, preferring ones never
 * used before, so a freed handle, QPN or MR index is not reused at once
 * (stale packets and stale keys then miss).  Slots are stored from the
 * first index on, so a table whose indices start high (memory windows)
 * costs nothing below them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/core.h"

int table_init(struct srd_table *t, uint32_t first, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->first = first;
	t->max = max;
	t->hint = first;
	return 0;
}

void table_fini(struct srd_table *t)
{
	free(t->slot);
	free(t->gen);
	memset(t, 0, sizeof(*t));
}

/* t->size counts slots, the first of which is index t->first. */
static int table_grow(struct srd_table *t)
{
	uint64_t nsize = t->size ? (uint64_t)t->size * 2 : 64;
	void **slot;
	uint8_t *gen;

	if (nsize > t->max)
		nsize = t->max;
	if (nsize <= t->size)
		return -ENOMEM;
	slot = realloc(t->slot, nsize * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	t->slot = slot;
	gen = realloc(t->gen, nsize);
	if (!gen)
		return -ENOMEM;
	t->gen = gen;
	memset(slot + t->size, 0, (nsize - t->size) * sizeof(*slot));
	memset(gen + t->size, 0, nsize - t->size);
	t->size = nsize;
	return 0;
}

static int64_t table_take(struct srd_table *t, uint32_t i, void *obj)
{
	t->slot[i] = obj;
	t->count++;
	t->hint = t->first + i + 1;
	return (int64_t)t->first + i;
}

int64_t table_alloc(struct srd_table *t, void *obj)
{
	uint32_t old;

	if (!obj || t->count >= t->max)
		return -ENOMEM;
	for (uint32_t i = t->hint - t->first; i < t->size; i++)
		if (!t->slot[i])
			return table_take(t, i, obj);
	old = t->size;
	if (!table_grow(t))
		return table_take(t, old, obj);
	for (uint32_t i = 0; i < t->size; i++)
		if (!t->slot[i])
			return table_take(t, i, obj);
	return -ENOMEM;
}

void *table_get(const struct srd_table *t, uint32_t idx)
{
	if (idx < t->first || idx - t->first >= t->size)
		return NULL;
	return t->slot[idx - t->first];
}

void table_free(struct srd_table *t, uint32_t idx)
{
	if (idx < t->first || idx - t->first >= t->size ||
	    !t->slot[idx - t->first])
		return;
	t->slot[idx - t->first] = NULL;
	t->gen[idx - t->first]++;
	t->count--;
}

uint8_t table_gen(const struct srd_table *t, uint32_t idx)
{
	if (idx < t->first || idx - t->first >= t->size)
		return 0;
	return t->gen[idx - t->first];
}

void table_bump_gen(struct srd_table *t, uint32_t idx)
{
	if (idx >= t->first && idx - t->first < t->size)
		t->gen[idx - t->first]++;
}
