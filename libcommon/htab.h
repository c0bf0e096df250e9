/* SPDX-License-Identifier: MIT */
/* A small chained hash table of intrusive nodes keyed by 64-bit values. */
#ifndef SOFTRDMA_LIBIBVERBS_HTAB_H
#define SOFTRDMA_LIBIBVERBS_HTAB_H

#include <pthread.h>
#include <stdint.h>

struct srd_hnode {
	uint64_t key;
	struct srd_hnode *next;
};

struct srd_htab {
	pthread_mutex_t lock; /* taken by the callers around every call */
	struct srd_hnode **bucket;
	uint32_t mask;
	uint32_t count;
};

int srd_htab_init(struct srd_htab *t);
void srd_htab_fini(struct srd_htab *t);
/* 0 or -ENOMEM; the key must not be present yet. */
int srd_htab_add(struct srd_htab *t, struct srd_hnode *n);
struct srd_hnode *srd_htab_find(const struct srd_htab *t, uint64_t key);
void srd_htab_del(struct srd_htab *t, struct srd_hnode *n);

#endif
