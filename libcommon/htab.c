/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "libcommon/htab.h"

#define SRD_HTAB_MIN 64

static uint32_t hash(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

int srd_htab_init(struct srd_htab *t)
{
	t->bucket = calloc(SRD_HTAB_MIN, sizeof(*t->bucket));
	if (!t->bucket)
		return -ENOMEM;
	t->mask = SRD_HTAB_MIN - 1;
	t->count = 0;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void srd_htab_fini(struct srd_htab *t)
{
	free(t->bucket);
	t->bucket = NULL;
	pthread_mutex_destroy(&t->lock);
}

/* Double the bucket array; on allocation failure keep the old one. */
static void grow(struct srd_htab *t)
{
	uint32_t nmask = t->mask * 2 + 1;
	struct srd_hnode **nb = calloc(nmask + 1, sizeof(*nb));

	if (!nb)
		return;
	for (uint32_t i = 0; i <= t->mask; i++) {
		struct srd_hnode *n = t->bucket[i], *next;

		for (; n; n = next) {
			uint32_t h = hash(n->key, nmask);

			next = n->next;
			n->next = nb[h];
			nb[h] = n;
		}
	}
	free(t->bucket);
	t->bucket = nb;
	t->mask = nmask;
}

int srd_htab_add(struct srd_htab *t, struct srd_hnode *n)
{
	uint32_t h;

	if (t->count >= (t->mask + 1) * 2)
		grow(t);
	h = hash(n->key, t->mask);
	n->next = t->bucket[h];
	t->bucket[h] = n;
	t->count++;
	return 0;
}

struct srd_hnode *srd_htab_find(const struct srd_htab *t, uint64_t key)
{
	struct srd_hnode *n = t->bucket[hash(key, t->mask)];

	while (n && n->key != key)
		n = n->next;
	return n;
}

void srd_htab_del(struct srd_htab *t, struct srd_hnode *n)
{
	struct srd_hnode **pp = &t->bucket[hash(n->key, t->mask)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return;
		}
	}
}
