/* SPDX-License-Identifier: MIT */
/*
 * Index tables.  Indices are handed out round robin, preferring ones never
 * used before, so a freed handle, QPN or MR index is not reused at once
 * (stale packets and stale keys then miss).  Randomized tables (QPNs, MR
 * keys) draw indices and generation bytes at random instead: what a peer
 * sees of one object tells nothing of the next.  Slots are stored from the
 * first index on, so a table whose indices start high (memory windows)
 * costs nothing below them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "daemon/core/core.h"

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

/* t->size counts slots, the first of which is index t->first. */
static int table_grow(struct srd_table *t)
{
	uint64_t nsize = t->size ? (uint64_t)t->size * 2 : 64;
	void **slot;
	uint8_t *gen;

	if (t->random && nsize < t->span)
		nsize = t->span;
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
	if (t->random)
		arc4random_buf(gen + t->size, nsize - t->size);
	else
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

/* A free slot at random; the table grows while at least half full. */
static int64_t table_alloc_random(struct srd_table *t, void *obj)
{
	uint32_t start;

	if ((uint64_t)t->count * 2 >= t->size)
		table_grow(t); /* may fail at the limit: then probe what is */
	if (!t->size)
		return -ENOMEM;
	start = arc4random_uniform(t->size);
	for (uint32_t n = 0; n < t->size; n++) {
		uint32_t i = (start + n) % t->size;

		if (!t->slot[i])
			return table_take(t, i, obj);
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
	uint32_t i = idx - t->first;

	if (idx < t->first || i >= t->size || !t->slot[i])
		return;
	t->slot[i] = NULL;
	t->gen[i] = new_gen(t, t->gen[i]);
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
		t->gen[idx - t->first] = new_gen(t, t->gen[idx - t->first]);
}
