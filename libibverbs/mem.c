/* SPDX-License-Identifier: MIT */
/*
 * Segments: ranges of our address space we moved onto memfds for the
 * device.  A sorted list, refcounted by the MRs using them, guarded by
 * one mutex (registration is not a fast path).  Without a move guard
 * (mem_move.c) nothing is moved: the daemon reaches the pages in place,
 * through the access srd_mem_access_open() gave it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/list.h"
#include "libibverbs/maps.h"
#include "libibverbs/mem.h"
#include "libibverbs/mem_move.h"
#include "libibverbs/mem_seg.h"

pthread_mutex_t srd_seg_lock = PTHREAD_MUTEX_INITIALIZER;
struct list_head srd_segs = { { &srd_segs.n, &srd_segs.n } };
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static int open_procmem(void)
{
	return open("/proc/self/mem", O_RDWR | O_CLOEXEC);
}

/*
 * What the daemon reaches in-place memory through: our own
 * /proc/self/mem, opened with our rights, which refers to this address
 * space and no other.  Without it (no /proc) only moved memory can be
 * registered; SOFTRDMA_MEM_ACCESS=none asks for that.
 */
int srd_mem_access_open(uint32_t *kind)
{
	const char *env = secure_getenv("SOFTRDMA_MEM_ACCESS");
	int fd = -1;

	*kind = SRD_MEM_NONE;
	if (!env || strcmp(env, "none")) {
		fd = open_procmem();
		if (fd >= 0)
			*kind = SRD_MEM_PROCMEM;
	}
	return fd;
}

static uintptr_t page_size(void)
{
	static uintptr_t ps;
	uintptr_t v = __atomic_load_n(&ps, __ATOMIC_RELAXED);

	/* Threads registering at once may all look it up: same answer. */
	if (!v) {
		v = (uintptr_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&ps, v, __ATOMIC_RELAXED);
	}
	return v;
}

void srd_seg_unlist(struct srd_seg *g)
{
	if (g->in_list) {
		list_del(&g->node);
		g->in_list = false;
	}
}

static void seg_insert(struct srd_seg *g)
{
	struct list_node *pos = &srd_segs.n;

	list_for_each (&srd_segs, it) {
		if (list_entry(it, struct srd_seg, node)->start > g->start) {
			pos = it;
			break;
		}
	}
	/* Insert before pos. */
	g->node.next = pos;
	g->node.prev = pos->prev;
	pos->prev->next = &g->node;
	pos->prev = &g->node;
	g->in_list = true;
}

/* Does the maps listing still show g wherever it lies inside [lo, hi)? */
static bool seg_intact(const struct srd_seg *g, const struct srd_vmas *m,
		       uintptr_t lo, uintptr_t hi)
{
	uintptr_t a = g->start > lo ? g->start : lo;
	uintptr_t b = g->end < hi ? g->end : hi;

	while (a < b) {
		const struct srd_vma *v = srd_maps_find(m, a);

		if (!v || v->kind != SRD_VMA_OURS || v->ino != g->ino ||
		    v->offset + (a - v->start) != a - g->start)
			return false;
		a = v->end;
	}
	return true;
}

static struct srd_seg *seg_find(uintptr_t addr)
{
	list_for_each (&srd_segs, it) {
		struct srd_seg *g = list_entry(it, struct srd_seg, node);

		if (addr >= g->start && addr < g->end)
			return g;
		if (g->start > addr)
			break;
	}
	return NULL;
}

/* Move every part of g that still maps its memfd back to private memory. */
void srd_seg_move_back(struct srd_seg *g)
{
	struct srd_vmas m;

	if (srd_maps_read(&m, g->start, g->end))
		return;
	for (size_t i = 0; i < m.n; i++) {
		const struct srd_vma *v = &m.v[i];
		uintptr_t a = v->start > g->start ? v->start : g->start;
		uintptr_t b = v->end < g->end ? v->end : g->end;

		if (v->kind != SRD_VMA_OURS || v->ino != g->ino)
			continue;
		srd_move_to_private(a, b - a, v->prot, g->fd,
				    v->offset + (a - v->start));
	}
	srd_maps_free(&m);
}

static void seg_put(struct srd_seg *g)
{
	if (--g->refcnt)
		return;
	if (g->in_list) {
		srd_seg_move_back(g);
		srd_seg_unlist(g);
	}
	if (g->fd >= 0)
		close(g->fd);
	free(g);
}

static int ref_add(struct srd_mem_ref *ref, struct srd_seg *g)
{
	struct srd_seg **n;

	if (ref->nseg % 8 == 0) {
		n = realloc(ref->seg, (ref->nseg + 8) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ref->seg = n;
	}
	ref->seg[ref->nseg++] = g;
	g->refcnt++;
	return 0;
}

static int add_piece(struct srd_mem_desc *d, enum srd_piece_kind kind,
		     uint64_t len, uint64_t fd_offset, int fd)
{
	struct srd_mr_piece *prev = d->num_pieces ? &d->piece[d->num_pieces - 1]
						  : NULL;

	if (kind == SRD_PIECE_PVM && prev && prev->kind == SRD_PIECE_PVM) {
		prev->len += len;
		return 0;
	}
	if (d->num_pieces == SRD_MR_MAX_PIECES)
		return -ENOMEM;
	d->piece[d->num_pieces++] = (struct srd_mr_piece){
		.len = len, .fd_offset = fd_offset, .kind = kind
	};
	if (kind == SRD_PIECE_FD)
		d->fds[d->nfds++] = fd;
	return 0;
}

/* Describe (and move when needed) [pos, end), all inside mapping v. */
static int map_one(const struct srd_vma *v, uintptr_t pos, uintptr_t end,
		   struct srd_mem_desc *d, struct srd_mem_ref *ref)
{
	struct srd_seg *g;
	int fd, ret;

	if (v->kind == SRD_VMA_OURS) {
		g = seg_find(pos);
		if (g && g->ino == v->ino) {
			if (end > g->end)
				end = g->end;
			ret = add_piece(d, SRD_PIECE_FD, end - pos,
					pos - g->start, g->fd);
			return ret ? ret : ref_add(ref, g) ? -ENOMEM : 0;
		}
	}
	/* Only private, non-executable memory is ours to move: shared
	 * mappings must stay shared, code stays where it runs. */
	if (v->shared || v->kind == SRD_VMA_SPECIAL ||
	    v->kind == SRD_VMA_OURS || (v->prot & PROT_EXEC))
		return add_piece(d, SRD_PIECE_PVM, end - pos, 0, -1);
	/* A move without a guard could lose what is written meanwhile: the
	 * daemon reaches the memory where it is instead. */
	if (srd_move_guard() == SRD_GUARD_NONE)
		return add_piece(d, SRD_PIECE_PVM, end - pos, 0, -1);

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	fd = srd_move_to_memfd(pos, end - pos, v->prot, &g->ino);
	if (fd < 0) {
		/* Not movable after all (device memory, ...). */
		free(g);
		return add_piece(d, SRD_PIECE_PVM, end - pos, 0, -1);
	}
	g->fd = fd;
	g->start = pos;
	g->end = end;
	seg_insert(g);
	ret = add_piece(d, SRD_PIECE_FD, end - pos, 0, fd);
	if (!ret)
		ret = ref_add(ref, g);
	if (ret) {
		g->refcnt++;
		seg_put(g); /* moves it back */
	}
	return ret;
}

int srd_mem_acquire(const void *addr, size_t len, bool need_write,
		    struct srd_mem_desc *d, struct srd_mem_ref *ref)
{
	uintptr_t ps = page_size();
	uintptr_t s = (uintptr_t)addr & ~(ps - 1);
	uintptr_t e = ((uintptr_t)addr + len + ps - 1) & ~(ps - 1);
	struct srd_vmas m;
	uintptr_t pos;
	int ret;

	memset(d, 0, offsetof(struct srd_mem_desc, piece));
	d->nfds = 0;
	ref->seg = NULL;
	ref->nseg = 0;
	if (!len || (uintptr_t)addr + len < (uintptr_t)addr || e < s)
		return -EINVAL;
	d->span_start = s;
	d->span_len = e - s;

	pthread_once(&atfork_once, srd_mem_fork_setup);
	pthread_mutex_lock(&srd_seg_lock);
	ret = srd_maps_read(&m, s, e);
	if (ret)
		goto out_unlock;

	/* Forget segments the application has unmapped or replaced. */
	list_for_each (&srd_segs, it) {
		struct srd_seg *g = list_entry(it, struct srd_seg, node);

		if (g->end > s && g->start < e && !seg_intact(g, &m, s, e))
			srd_seg_unlist(g);
	}

	for (pos = s; pos < e;) {
		const struct srd_vma *v = srd_maps_find(&m, pos);
		uintptr_t end;

		if (!v || !(v->prot & PROT_READ) ||
		    (need_write && !(v->prot & PROT_WRITE))) {
			ret = -EFAULT;
			break;
		}
		end = v->end < e ? v->end : e;
		if (v->kind == SRD_VMA_OURS) {
			struct srd_seg *g = seg_find(pos);

			if (g && g->end < end)
				end = g->end;
		}
		ret = map_one(v, pos, end, d, ref);
		if (ret)
			break;
		pos = end;
	}
	srd_maps_free(&m);
out_unlock:
	if (ret) {
		for (uint32_t i = 0; i < ref->nseg; i++)
			seg_put(ref->seg[i]);
		free(ref->seg);
		ref->seg = NULL;
		ref->nseg = 0;
	}
	pthread_mutex_unlock(&srd_seg_lock);
	return ret;
}

void srd_mem_release(struct srd_mem_ref *ref)
{
	pthread_mutex_lock(&srd_seg_lock);
	for (uint32_t i = 0; i < ref->nseg; i++)
		seg_put(ref->seg[i]);
	pthread_mutex_unlock(&srd_seg_lock);
	free(ref->seg);
	ref->seg = NULL;
	ref->nseg = 0;
}
