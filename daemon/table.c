/* SPDX-License-Identifier: MIT */
/*
 * Index tables.  Indices are handed out round robin, preferring ones never
 * used before, so a freed handle, QPN or MR index is not reused at once
 * (stale packets and stale keys then miss).  Randomized tables (QPNs, MR
 * keys) draw indices and generation bytes at random instead: what a peer
 * sees of one object tells nothing of the next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "daemon/core.h"

int table_init(struct srd_table *t, uint32_t first, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->first = first;
	t->max = max;
	t->hint = first;
	return 0;
}

void table_randomize(struct srd_table *t, uint32_t span)
{
	t->random = true;
	t->span = span < t->max ? span : t->max;
}

/* A byte other than old. */
static uint8_t new_gen(const struct srd_table *t, uint8_t old)
{
	if (!t->random)
		return (uint8_t)(old + 1);
	return (uint8_t)(old + 1 + arc4random_uniform(255));
}

void table_fini(struct srd_table *t)
{
	free(t->slot);
	free(t->gen);
	memset(t, 0, sizeof(*t));
}

static int table_grow(struct srd_table *t)
{
	uint64_t limit = (uint64_t)t->first + t->max;
	uint64_t nsize = t->size ? (uint64_t)t->size * 2 : t->first + 64;
	void **slot;
	uint8_t *gen;

	if (t->random && nsize < (uint64_t)t->first + t->span)
		nsize = (uint64_t)t->first + t->span;
	if (nsize > limit)
		nsize = limit;
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
	if (t->random)
		arc4random_buf(gen + t->size, nsize - t->size);
	else
		memset(gen + t->size, 0, nsize - t->size);
	t->size = nsize;
	return 0;
}

static int64_t table_take(struct srd_table *t, uint32_t idx, void *obj)
{
	t->slot[idx] = obj;
	t->count++;
	t->hint = idx + 1;
	return idx;
}

/* A free slot at random; the table grows while at least half full. */
static int64_t table_alloc_random(struct srd_table *t, void *obj)
{
	uint32_t n, start;

	if (t->size <= t->first || (uint64_t)t->count * 2 >= t->size - t->first)
		table_grow(t); /* may fail at the limit: then probe what is */
	if (t->size <= t->first)
		return -ENOMEM;
	n = t->size - t->first;
	start = arc4random_uniform(n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t idx = t->first + (start + i) % n;

		if (!t->slot[idx])
			return table_take(t, idx, obj);
	}
	return -ENOMEM;
}

int64_t table_alloc(struct srd_table *t, void *obj)
{
	uint32_t old;

	if (!obj || t->count >= t->max)
		return -ENOMEM;
	if (t->random)
		return table_alloc_random(t, obj);
	for (uint32_t i = t->hint; i < t->size; i++)
		if (!t->slot[i])
			return table_take(t, i, obj);
	old = t->size;
	if (!table_grow(t))
		return table_take(t, old > t->first ? old : t->first, obj);
	for (uint32_t i = t->first; i < t->size; i++)
		if (!t->slot[i])
			return table_take(t, i, obj);
	return -ENOMEM;
}

void *table_get(const struct srd_table *t, uint32_t idx)
{
	if (idx < t->first || idx >= t->size)
		return NULL;
	return t->slot[idx];
}

void table_free(struct srd_table *t, uint32_t idx)
{
	if (idx < t->first || idx >= t->size || !t->slot[idx])
		return;
	t->slot[idx] = NULL;
	t->gen[idx] = new_gen(t, t->gen[idx]);
	t->count--;
}

uint8_t table_gen(const struct srd_table *t, uint32_t idx)
{
	if (idx >= t->size)
		return 0;
	return t->gen[idx];
}

void table_bump_gen(struct srd_table *t, uint32_t idx)
{
	if (idx < t->size)
		t->gen[idx] = new_gen(t, t->gen[idx]);
}
