/* SPDX-License-Identifier: MIT */
/* Segments, shared by the registration (mem.c) and fork (mem_fork.c) code. */
#ifndef SOFTRDMA_LIBIBVERBS_MEM_SEG_H
#define SOFTRDMA_LIBIBVERBS_MEM_SEG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/list.h"

/* What fork() does with a segment, decided before it (mem_fork.c). */
enum srd_seg_fork {
	SRD_SEG_FORK_COPY,     /* the child copies the memfd (fallback) */
	SRD_SEG_FORK_SNAPSHOT, /* the child gets the snapshot taken */
	SRD_SEG_FORK_PRIVATE,  /* private across fork(), shared again after */
};

/* A range of our address space moved onto a memfd for the device. */
struct srd_seg {
	struct list_node node; /* in srd_segs while in_list */
	uintptr_t start;
	uintptr_t end;
	int fd;
	uint64_t ino;
	uint32_t refcnt; /* MRs using it */
	bool in_list;	 /* still describes our mappings */
	enum srd_seg_fork fork;
	void *snap; /* SRD_SEG_FORK_SNAPSHOT: the content at fork time */
};

/* The sorted list of live segments and the lock over all of them. */
extern pthread_mutex_t srd_seg_lock;
extern struct list_head srd_segs;
/* The daemon allowed to trace us (PR_SET_PTRACER), 0 if none. */

void srd_seg_unlist(struct srd_seg *g);
/* Put every part of g still mapping its memfd back on private memory. */
void srd_seg_move_back(struct srd_seg *g);
/* Install the fork handlers (once). */
void srd_mem_fork_setup(void);

#endif
