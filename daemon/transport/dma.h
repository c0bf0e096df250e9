/* SPDX-License-Identifier: MIT */
/*
 * The device's view of a buffer: a gather/scatter list of key-addressed
 * pieces, one key-addressed range, or daemon memory, with a cursor.
 * Keys are looked up and checked piece by piece at the moment bytes move,
 * so nothing here holds an MR across a return to the main loop.
 */
#ifndef SOFTRDMA_TRANSPORT_DMA_H
#define SOFTRDMA_TRANSPORT_DMA_H

#include <stdint.h>
#include <sys/uio.h>

#include "common/ring.h"
#include "daemon/core/objects.h"

enum srd_dma_kind {
	SRD_DMA_NONE = 0,
	SRD_DMA_SGL,   /* list of srd_sge (lkey, iova, length) */
	SRD_DMA_RANGE, /* one key, iova and length (rkeys) */
	SRD_DMA_BUF,   /* daemon memory */
};

struct srd_dma {
	uint8_t kind;
	int access;   /* IBV_ACCESS_* every MR must grant */
	uint32_t qpn; /* RANGE: the QP it arrived on (type 2 windows) */
	const struct srd_pd *pd; /* MR must be in pd or pd_alt; NULL: any */
	const struct srd_pd *pd_alt;
	union {
		struct {
			const struct srd_sge *sge;
			uint32_t num;
		} sgl;
		struct {
			uint64_t va;
			uint64_t len;
			uint32_t key;
		} range;
		struct {
			uint8_t *p;
			uint64_t len;
		} buf;
	};
	/* cursor: piece index and offset within it */
	uint32_t idx;
	uint64_t off;
};

void dma_init_sgl(struct srd_dma *m, const struct srd_sge *sge, uint32_t num,
		  const struct srd_pd *pd, const struct srd_pd *pd_alt,
		  int access);
/* An rkey range (an MR's or a memory window's) that arrived on QP qpn. */
void dma_init_range(struct srd_dma *m, uint32_t key, uint64_t va, uint64_t len,
		    const struct srd_pd *pd, uint32_t qpn, int access);
void dma_init_buf(struct srd_dma *m, void *p, uint64_t len);

/* Move the cursor to byte offset off from the start. */
void dma_seek(struct srd_dma *m, uint64_t off);
/* Move the cursor n bytes on. */
void dma_advance(struct srd_dma *m, uint64_t n);

/*
 * Copy len bytes from src to dst at their cursors and advance both.
 * Returns 0, or:
 *   -ENOSPC  dst ended before len bytes,
 *   -EACCES  a dst piece failed its key, PD, bounds or access check,
 *            or its owner's address space is gone,
 *   -EFAULT  the source ended or failed its check, or its owner's
 *            address space is gone,
 *   -EIO     a page of the memory itself could not be reached.
 */
int dma_copy(struct srd_daemon *d, struct srd_dma *dst, struct srd_dma *src,
	     uint64_t len);

/*
 * Point iov at the next len bytes of m, in place in the daemon's MR
 * mappings (no copy), and advance m.  Returns the number of pieces, or
 * -EFAULT (a piece failed its check or the buffer ended), -ENOTSUP (a
 * piece is daemon memory or an MR the daemon does not map), -E2BIG (more
 * than max pieces).  On an error m's cursor is left anywhere.
 */
int dma_map_iov(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		struct iovec *iov, int max);

/*
 * Like dma_map_iov, in the addresses of the process whose memory it is:
 * every piece must be an MR reached in place through one process's mem
 * file (*mem, set on success; *odp: some of it is an MR on demand).
 * -ENOTSUP where one is not.
 */
struct srd_place_iov;
int dma_client_iov(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		   struct srd_place_iov *iov, int max,
		   struct srd_client_mem **mem, bool *odp);

/* Check every non-empty piece of an SGL without moving bytes: 0 or
 * -EACCES (key, PD, bounds or access). */
int dma_check_sgl(struct srd_daemon *d, const struct srd_sge *sge, uint32_t num,
		  const struct srd_pd *pd, int access);

#endif
