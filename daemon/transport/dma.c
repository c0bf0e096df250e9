/* SPDX-License-Identifier: MIT */
/* Moving payload between buffers, one memcpy per contiguous piece pair. */
#include <errno.h>
#include <string.h>

#include "common/place.h"
#include "daemon/transport/dma.h"

void dma_init_sgl(struct srd_dma *m, const struct srd_sge *sge, uint32_t num,
		  const struct srd_pd *pd, const struct srd_pd *pd_alt,
		  int access)
{
	memset(m, 0, sizeof(*m));
	m->kind = SRD_DMA_SGL;
	m->sgl.sge = sge;
	m->sgl.num = num;
	m->pd = pd;
	m->pd_alt = pd_alt;
	m->access = access;
}

void dma_init_range(struct srd_dma *m, uint32_t key, uint64_t va, uint64_t len,
		    const struct srd_pd *pd, uint32_t qpn, int access)
{
	memset(m, 0, sizeof(*m));
	m->kind = SRD_DMA_RANGE;
	m->range.key = key;
	m->range.va = va;
	m->range.len = len;
	m->pd = pd;
	m->qpn = qpn;
	m->access = access;
}

void dma_init_buf(struct srd_dma *m, void *p, uint64_t len)
{
	memset(m, 0, sizeof(*m));
	m->kind = SRD_DMA_BUF;
	m->buf.p = p;
	m->buf.len = len;
}

/* A contiguous piece at the cursor. */
struct piece {
	uint32_t key;
	uint64_t va;
	uint64_t len; /* bytes left in the piece */
	uint8_t *p;   /* SRD_DMA_BUF */
};

static uint64_t piece_len(const struct srd_dma *m, uint32_t idx)
{
	switch (m->kind) {
	case SRD_DMA_SGL:
		return m->sgl.sge[idx].length;
	case SRD_DMA_RANGE:
		return m->range.len;
	case SRD_DMA_BUF:
		return m->buf.len;
	default:
		return 0;
	}
}

static uint32_t piece_count(const struct srd_dma *m)
{
	switch (m->kind) {
	case SRD_DMA_SGL:
		return m->sgl.num;
	case SRD_DMA_RANGE:
	case SRD_DMA_BUF:
		return 1;
	default:
		return 0;
	}
}

/* Skip exhausted and empty pieces; false at the end of the buffer. */
static bool cur_piece(struct srd_dma *m, struct piece *pc)
{
	uint32_t n = piece_count(m);

	while (m->idx < n && m->off >= piece_len(m, m->idx)) {
		m->idx++;
		m->off = 0;
	}
	if (m->idx >= n)
		return false;
	pc->len = piece_len(m, m->idx) - m->off;
	pc->key = 0;
	pc->va = 0;
	pc->p = NULL;
	switch (m->kind) {
	case SRD_DMA_SGL:
		pc->key = m->sgl.sge[m->idx].lkey;
		pc->va = m->sgl.sge[m->idx].addr + m->off;
		break;
	case SRD_DMA_RANGE:
		pc->key = m->range.key;
		pc->va = m->range.va + m->off;
		break;
	default:
		pc->p = m->buf.p + m->off;
		break;
	}
	return true;
}

void dma_seek(struct srd_dma *m, uint64_t off)
{
	uint32_t n = piece_count(m);

	m->idx = 0;
	m->off = 0;
	while (m->idx < n) {
		uint64_t l = piece_len(m, m->idx);

		if (off < l)
			break;
		off -= l;
		m->idx++;
	}
	m->off = off;
}

void dma_advance(struct srd_dma *m, uint64_t n)
{
	uint32_t count = piece_count(m);

	while (m->idx < count) {
		uint64_t left = piece_len(m, m->idx) - m->off;

		if (n < left) {
			m->off += n;
			return;
		}
		n -= left;
		m->idx++;
		m->off = 0;
	}
}

/* Resolve the MR of a piece for n bytes, remembering the last lookup. */
static struct srd_mr *piece_mr(struct srd_daemon *d, const struct srd_dma *m,
			       struct piece *pc, uint64_t n,
			       struct srd_mr **cache, uint32_t *cache_key)
{
	struct srd_mr *mr;

	/* An rkey may name a window: checked and moved into its MR's iova
	 * space for every piece, so an invalidation stops the next one. */
	if (m->kind == SRD_DMA_RANGE)
		return rkey_lookup_copy(d, pc->key, m->pd, m->qpn, &pc->va, n,
					m->access);

	if (*cache && *cache_key == pc->key) {
		mr = *cache;
	} else {
		mr = mr_lookup_key(d, pc->key);
		if (!mr)
			return NULL;
		*cache = mr;
		*cache_key = pc->key;
	}
	if (m->pd && mr->pd != m->pd && mr->pd != m->pd_alt)
		return NULL;
	/* Whether a pvm MR's owner is still there the copy finds out. */
	if (mr_check_copy(mr, NULL, pc->va, n, m->access))
		return NULL;
	return mr;
}

/* A failed copy's errno for dma_copy: an owner whose address space is gone
 * counts as a failed check of that side, as mr_check would have said. */
static int copy_err(int err, const struct srd_mr *failed,
		    const struct srd_mr *dmr)
{
	if (err != -ESRCH)
		return -EIO;
	return failed == dmr ? -EACCES : -EFAULT;
}

int dma_copy(struct srd_daemon *d, struct srd_dma *dst, struct srd_dma *src,
	     uint64_t len)
{
	struct srd_mr *dcache = NULL, *scache = NULL;
	uint32_t dkey = 0, skey = 0;

	while (len) {
		struct piece dp, sp;
		struct srd_mr *dmr = NULL, *smr = NULL;
		uint64_t n;
		int err = 0;

		if (!cur_piece(dst, &dp))
			return -ENOSPC;
		if (!cur_piece(src, &sp))
			return -EFAULT;
		n = len;
		if (dp.len < n)
			n = dp.len;
		if (sp.len < n)
			n = sp.len;
		if (!dp.p) {
			dmr = piece_mr(d, dst, &dp, n, &dcache, &dkey);
			if (!dmr)
				return -EACCES;
		}
		if (!sp.p) {
			smr = piece_mr(d, src, &sp, n, &scache, &skey);
			if (!smr)
				return -EFAULT;
		}
		if (dmr && smr) {
			struct srd_mr *failed = NULL;

			err = mr_copy(dmr, dp.va, smr, sp.va, n, &failed);
			if (err)
				return copy_err(err, failed, dmr);
		} else if (dmr) {
			err = mr_write(dmr, dp.va, sp.p, n);
			if (err)
				return copy_err(err, dmr, dmr);
		} else if (smr) {
			err = mr_read(smr, sp.va, dp.p, n);
			if (err)
				return copy_err(err, smr, NULL);
		} else {
			memmove(dp.p, sp.p, n);
		}
		dst->off += n;
		src->off += n;
		len -= n;
	}
	return 0;
}

/* Runs dma_map_iov() gives at most (more: -E2BIG, the caller copies). */
#define DMA_MAP_MAX 64

/* The next run of m, up to len bytes, checked: its MR, iova and length. */
static int next_run(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		    struct srd_mr **cache, uint32_t *key, struct srd_mr **mr,
		    uint64_t *va, uint64_t *k)
{
	struct piece pc;

	if (!cur_piece(m, &pc))
		return -EFAULT;
	*k = pc.len < len ? pc.len : len;
	*mr = piece_mr(d, m, &pc, *k, cache, key);
	if (!*mr)
		return -EFAULT;
	*va = pc.va;
	m->off += *k;
	return 0;
}

/* Runs of m for len bytes, joined where they touch: in the daemon's own
 * mappings, or (client) in the address space of the one process whose
 * mem file reaches every piece in place (*mem). */
static int dma_runs(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		    bool client, struct srd_place_iov *run, int max,
		    struct srd_client_mem **mem, bool *odp)
{
	struct srd_mr *cache = NULL, *mr;
	uint32_t key = 0;
	uint64_t va, k;
	int n = 0;

	*mem = NULL;
	*odp = false;
	if (m->kind == SRD_DMA_BUF)
		return -ENOTSUP;
	for (; len; len -= k) {
		uint64_t a;

		if (next_run(d, m, len, &cache, &key, &mr, &va, &k))
			return -EFAULT;
		if (client) {
			/* What that process's own thread can reach. */
			if (mr->base || !mr->pvm || !mr->mem ||
			    (*mem && mr->mem != *mem))
				return -ENOTSUP;
			*mem = mr->mem;
			*odp |= mr->odp;
			a = mr->addr + (va - mr->iova);
		} else {
			uint8_t *p = mr_ptr(mr, va);

			if (!p)
				return -ENOTSUP;
			a = (uintptr_t)p;
		}
		if (n && run[n - 1].addr + run[n - 1].len == a) {
			run[n - 1].len += k;
			continue;
		}
		if (n == max)
			return -E2BIG;
		run[n].addr = a;
		run[n++].len = k;
	}
	return n;
}

int dma_map_iov(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		struct iovec *iov, int max)
{
	struct srd_place_iov run[DMA_MAP_MAX];
	struct srd_client_mem *mem;
	bool odp;
	int n = dma_runs(d, m, len, false, run,
			 max < DMA_MAP_MAX ? max : DMA_MAP_MAX, &mem, &odp);

	for (int i = 0; i < n; i++) {
		iov[i].iov_base = (void *)(uintptr_t)run[i].addr;
		iov[i].iov_len = run[i].len;
	}
	return n;
}

int dma_client_iov(struct srd_daemon *d, struct srd_dma *m, uint64_t len,
		   struct srd_place_iov *iov, int max,
		   struct srd_client_mem **mem, bool *odp)
{
	return dma_runs(d, m, len, true, iov, max, mem, odp);
}

int dma_check_sgl(struct srd_daemon *d, const struct srd_sge *sge, uint32_t num,
		  const struct srd_pd *pd, int access)
{
	for (uint32_t i = 0; i < num; i++) {
		struct srd_mr *mr;

		if (!sge[i].length)
			continue;
		mr = mr_lookup_key(d, sge[i].lkey);
		if (!mr || mr_check(mr, pd, sge[i].addr, sge[i].length, access))
			return -EACCES;
	}
	return 0;
}
