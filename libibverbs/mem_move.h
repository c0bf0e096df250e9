/* SPDX-License-Identifier: MIT */
/* Swapping the memory behind an address range, keeping its content. */
#ifndef SOFTRDMA_LIBIBVERBS_MEM_MOVE_H
#define SOFTRDMA_LIBIBVERBS_MEM_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How moves keep the writes made during them (mem_move.c). */
enum srd_move_guard {
	SRD_GUARD_NONE, /* no guard: nothing is moved */
	SRD_GUARD_UFFD, /* a userfaultfd write-protects the range */
};

/* The guard this process has: a userfaultfd with write-protect faults on
 * anonymous memory, shmem and unpopulated pages, unless
 * SOFTRDMA_MOVE_GUARD=none.  Decided once. */
enum srd_move_guard srd_move_guard(void);

/*
 * Put [start, start + len) (page aligned, one private mapping with
 * protection prot) on a new memfd mapped MAP_SHARED at the same address.
 * Returns the memfd (sealed against shrinking) or -errno; *ino is its
 * inode number.
 */
int srd_move_to_memfd(uintptr_t start, size_t len, int prot, uint64_t *ino);

/* Put [start, start + len) (one mapping, protection prot) on fd at offset
 * off, mapped MAP_SHARED, with its content. */
int srd_move_into_fd(uintptr_t start, size_t len, int prot, int fd,
		     uint64_t off);

/* pread until done.  0 or -errno. */
int srd_read_fd(int fd, void *buf, size_t len, uint64_t off);

/* Does [start, start + len) hold (or lie near) the caller's live stack? */
bool srd_near_stack(uintptr_t start, size_t len);

/*
 * Put [start, start + len), which maps fd at offset off, back on private
 * anonymous memory with the same content and protection prot.
 */
int srd_move_to_private(uintptr_t start, size_t len, int prot, int fd,
			uint64_t off);

#endif
