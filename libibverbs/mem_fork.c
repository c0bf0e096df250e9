/* SPDX-License-Identifier: MIT */
/*
 * fork() with registered memory.  The segments are MAP_SHARED, so a child
 * would share them with its parent.  It gets private memory instead, with
 * the content of the moment of fork(), as for any other private memory:
 * before fork() each segment is copied to a private snapshot, which the
 * child puts in place of the shared mapping (no copy in the child, no
 * window in which the parent's later writes could reach it).
 *
 * A segment holding the forking thread's own live stack cannot use a
 * snapshot (the frames change until fork() returns): it is made private
 * across the fork() and shared again afterwards in the parent.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "libibverbs/maps.h"
#include "libibverbs/mem_move.h"
#include "libibverbs/mem_seg.h"

static size_t seg_len(const struct srd_seg *g)
{
	return g->end - g->start;
}

static void prepare_one(struct srd_seg *g)
{
	void *snap;

	g->fork = SRD_SEG_FORK_COPY;
	g->snap = NULL;
	if (srd_near_stack(g->start, seg_len(g))) {
		srd_seg_move_back(g);
		g->fork = SRD_SEG_FORK_PRIVATE;
		return;
	}
	snap = mmap(NULL, seg_len(g), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (snap == MAP_FAILED)
		return;
	if (srd_read_fd(g->fd, snap, seg_len(g), 0)) {
		munmap(snap, seg_len(g));
		return;
	}
	g->snap = snap;
	g->fork = SRD_SEG_FORK_SNAPSHOT;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&srd_seg_lock);
	list_for_each (&srd_segs, it)
		prepare_one(list_entry(it, struct srd_seg, node));
}

/* Share again what prepare_one() made private: the whole range, as the
 * mappings there are now. */
static void reshare(struct srd_seg *g)
{
	struct srd_vmas m;

	if (srd_maps_read(&m, g->start, g->end))
		return;
	for (size_t i = 0; i < m.n; i++) {
		const struct srd_vma *v = &m.v[i];
		uintptr_t a = v->start > g->start ? v->start : g->start;
		uintptr_t b = v->end < g->end ? v->end : g->end;

		if (v->kind == SRD_VMA_ANON && !v->shared)
			srd_move_into_fd(a, b - a, v->prot, g->fd,
					 a - g->start);
	}
	srd_maps_free(&m);
}

static void atfork_parent(void)
{
	list_for_each (&srd_segs, it) {
		struct srd_seg *g = list_entry(it, struct srd_seg, node);

		if (g->fork == SRD_SEG_FORK_SNAPSHOT)
			munmap(g->snap, seg_len(g));
		else if (g->fork == SRD_SEG_FORK_PRIVATE)
			reshare(g);
		g->snap = NULL;
		g->fork = SRD_SEG_FORK_COPY;
	}
	pthread_mutex_unlock(&srd_seg_lock);
}

/* Put the snapshot where the segment still maps its memfd. */
static void install_snapshot(struct srd_seg *g)
{
	struct srd_vmas m;

	if (srd_maps_read(&m, g->start, g->end)) {
		srd_seg_move_back(g);
		return;
	}
	for (size_t i = 0; i < m.n; i++) {
		const struct srd_vma *v = &m.v[i];
		uintptr_t a = v->start > g->start ? v->start : g->start;
		uintptr_t b = v->end < g->end ? v->end : g->end;
		uint8_t *src = (uint8_t *)g->snap + (a - g->start);

		if (v->kind != SRD_VMA_OURS || v->ino != g->ino)
			continue;
		if (v->prot != (PROT_READ | PROT_WRITE))
			mprotect(src, b - a, v->prot);
		if (mremap(src, b - a, b - a, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)a) == MAP_FAILED)
			srd_move_to_private(a, b - a, v->prot, g->fd,
					    a - g->start);
	}
	srd_maps_free(&m);
	/* What was not moved out of the snapshot is not needed. */
	munmap(g->snap, seg_len(g));
}

static void atfork_child(void)
{
	list_for_each (&srd_segs, it) {
		struct srd_seg *g = list_entry(it, struct srd_seg, node);

		if (g->fork == SRD_SEG_FORK_SNAPSHOT)
			install_snapshot(g);
		else if (g->fork == SRD_SEG_FORK_COPY)
			srd_seg_move_back(g);
		g->snap = NULL;
		g->fork = SRD_SEG_FORK_COPY;
		srd_seg_unlist(g);
		close(g->fd);
		g->fd = -1;
	}
	/* The child's MRs are not usable (as with rdma-core): its segments
	 * are gone. */
	pthread_mutex_unlock(&srd_seg_lock);
}

void srd_mem_fork_setup(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
