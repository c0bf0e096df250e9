/* SPDX-License-Identifier: MIT */
/* The process's own mappings, as /proc/self/maps lists them. */
#ifndef SOFTRDMA_LIBIBVERBS_MAPS_H
#define SOFTRDMA_LIBIBVERBS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/proto.h" /* SRD_MEMFD_NAME */

enum srd_vma_kind {
	SRD_VMA_ANON,	 /* anonymous: heap, stacks, [anon:...] */
	SRD_VMA_FILE,	 /* backed by a file */
	SRD_VMA_OURS,	 /* one of our own memfd segments */
	SRD_VMA_SPECIAL, /* [vdso], [vvar], ... */
};

struct srd_vma {
	uintptr_t start;
	uintptr_t end;
	uint64_t offset;
	uint64_t ino;
	int prot; /* PROT_* */
	bool shared;
	enum srd_vma_kind kind;
};

struct srd_vmas {
	struct srd_vma *v;
	size_t n;
};

/* Read the mappings that intersect [lo, hi).  0 or -errno. */
int srd_maps_read(struct srd_vmas *m, uintptr_t lo, uintptr_t hi);
void srd_maps_free(struct srd_vmas *m);
/* The mapping that contains addr, or NULL. */
const struct srd_vma *srd_maps_find(const struct srd_vmas *m, uintptr_t addr);

#endif
