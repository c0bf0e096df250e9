/* SPDX-License-Identifier: MIT */
/*
 * Registered memory, made reachable by the device: the pages of an MR are
 * moved onto memfds mapped MAP_SHARED at the same addresses (content and
 * protection kept) so the daemon can map them too.  Moved ranges
 * ("segments") are shared and refcounted by the MRs that use them, moved
 * back to private memory when the last one goes, and made private in a
 * forked child.  Memory that cannot be moved, or is not because no guard
 * keeps the writes made during a move, is reached by the daemon through
 * our /proc/self/mem or a pidfd (docs/trust.md).
 */
#ifndef SOFTRDMA_LIBIBVERBS_MEM_H
#define SOFTRDMA_LIBIBVERBS_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/proto.h"

struct srd_seg;

/* The segments one MR holds. */
struct srd_mem_ref {
	struct srd_seg **seg;
	uint32_t nseg;
};

/* What REG_MR needs to describe a span; the fds belong to the segments
 * and stay valid while the reference is held. */
struct srd_mem_desc {
	uint64_t span_start;
	uint64_t span_len;
	uint32_t num_pieces;
	struct srd_mr_piece piece[SRD_MR_MAX_PIECES];
	int fds[SRD_MR_MAX_PIECES];
	int nfds;
};

/*
 * Make [addr, addr + len) reachable by the daemon.
 * need_write: the MR grants a write access (the pages must be writable).
 * Returns 0, -EFAULT (unmapped or inaccessible memory), -ENOMEM.
 */
int srd_mem_acquire(const void *addr, size_t len, bool need_write,
		    struct srd_mem_desc *d, struct srd_mem_ref *ref);
/* Drop the references; the last user of a segment moves it back. */
void srd_mem_release(struct srd_mem_ref *ref);

/*
 * Open what lets the daemon reach our memory where it is (the
 * SRD_MEM_* of common/proto.h): our /proc/self/mem, or where that cannot
 * be opened a pidfd of ourselves.  SOFTRDMA_MEM_ACCESS=procmem|pidfd
 * allows only that one.  Sets *kind; returns the fd, or -1 (SRD_MEM_NONE).
 */
int srd_mem_access_open(uint32_t *kind);

#endif
