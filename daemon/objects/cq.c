/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: a ring of CQEs in a memfd that only the daemon
 * writes.  The owner bit of each CQE flips every lap, so the library polls
 * with no producer index and no system call.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/dev_clock.h"
#include "common/dump.h"
#include "daemon/core/core.h"

static size_t cq_map_len(uint32_t entries)
{
	return SRD_RING_CTL_BYTES + (size_t)entries * sizeof(struct srd_cqe);
}

static uint32_t log2_u32(uint32_t v)
{
	uint32_t n = 0;

	while ((1u << n) < v)
		n++;
	return n;
}

/* A new ring for cqe entries: memfd, daemon mapping, geometry. */
static int cq_ring_new(struct srd_cq *cq, uint32_t cqe)
{
	uint32_t entries = srd_pow2_roundup(cqe + 1);
	void *map;
	int fd;

	fd = shm_create("softrdma-cq", cq_map_len(entries), 0, &map);
	if (fd < 0)
		return fd;
	cq->map = map;
	cq->map_len = cq_map_len(entries);
	cq->ctl = map;
	cq->ring = (struct srd_cqe *)((uint8_t *)map + SRD_RING_CTL_BYTES);
	cq->entries = entries;
	cq->log_entries = log2_u32(entries);
	/* The ring holds entries CQEs; one fewer is what rdma-core's
	 * providers report for a ring of 2^n. */
	cq->cqe = entries - 1;
	cq->prod = 0;
	return fd;
}

struct srd_cq *cq_get(struct srd_client *c, uint32_t handle)
{
	struct srd_cq *cq = table_get(&c->d->cqs, handle);

	return cq && cq->owner == c ? cq : NULL;
}

int cq_create(struct srd_client *c, uint32_t cqe, struct srd_comp_channel *ch,
	      uint64_t user_handle, struct srd_cq **out, int *memfd)
{
	struct srd_cq *cq;
	int64_t h;
	int fd;

	if (cqe < 1 || cqe > (uint32_t)c->dev->attr.max_cqe)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	h = res_alloc(c, SRD_RES_CQ, cq);
	if (h < 0) {
		free(cq);
		return h;
	}
	fd = cq_ring_new(cq, cqe);
	if (fd < 0) {
		res_free(c->d, c, SRD_RES_CQ, h);
		free(cq);
		return fd;
	}
	cq->handle = h;
	cq->owner = c;
	cq->user_handle = user_handle;
	cq->channel = ch;
	if (ch)
		ch->refcnt++;
	*out = cq;
	*memfd = fd;
	return 0;
}

static void cq_fill_rep(const struct srd_cq *cq, struct srd_rep *rp)
{
	struct srd_create_cq_rep *rep = REP(rp, struct srd_create_cq_rep);

	rep->handle = cq->handle;
	rep->cqe = cq->cqe;
	rep->log_entries = cq->log_entries;
	rep->ring_offset = SRD_RING_CTL_BYTES;
	rep->map_len = cq->map_len;
}

int cmd_create_cq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_create_cq_req *req = rq->data;
	struct srd_comp_channel *ch = NULL;
	struct srd_cq *cq;
	int err, fd;

	if (req->channel_handle != SRD_NO_HANDLE) {
		ch = channel_get(c, req->channel_handle);
		if (!ch)
			return -EINVAL;
	}
	if (req->comp_vector >= 1)
		return -EINVAL;
	if (req->flags & ~(uint32_t)SRD_CQ_F_TIMESTAMP)
		return -EINVAL;
	err = cq_create(c, req->cqe, ch, req->user_handle, &cq, &fd);
	if (err)
		return err;
	cq->stamp = req->flags & SRD_CQ_F_TIMESTAMP;
	cq_fill_rep(cq, rp);
	rep_add_fd(rp, fd, false);
	return 0;
}

int cmd_resize_cq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_resize_cq_req *req = rq->data;
	struct srd_cq *cq = cq_get(c, req->handle);
	struct srd_cq old;
	uint32_t pending;
	int fd;

	if (!cq || req->cqe < 1 || req->cqe > (uint32_t)c->dev->attr.max_cqe)
		return -EINVAL;
	/* cons comes from the client: it must name a CQE the ring holds. */
	pending = cq->prod - req->cons;
	if (pending > cq->entries || req->cqe < pending)
		return -EINVAL;
	old = *cq;
	fd = cq_ring_new(cq, req->cqe);
	if (fd < 0) {
		*cq = old;
		return fd;
	}
	/* Carry the unpolled CQEs over; their owner bits are those of their
	 * new places, the first lap of the new ring. */
	for (uint32_t i = 0; i < pending; i++) {
		const struct srd_cqe *src =
			&old.ring[(req->cons + i) & (old.entries - 1)];
		struct srd_cqe *dst = &cq->ring[i];

		memcpy(dst, src, offsetof(struct srd_cqe, owner));
		atomic_store_explicit((_Atomic uint8_t *)&dst->owner,
				      srd_cqe_owner_for(i, cq->log_entries),
				      memory_order_release);
	}
	cq->prod = pending;
	cq->ctl->cons = 0;
	cq->ctl->arm = atomic_load_explicit((_Atomic uint32_t *)&old.ctl->arm,
					    memory_order_relaxed);
	munmap(old.map, old.map_len);
	cq_fill_rep(cq, rp);
	rep_add_fd(rp, fd, false);
	return 0;
}

void cq_destroy(struct srd_cq *cq)
{
	if (cq->place_cqes)
		engine_place_cq_gone(cq->owner->d, cq);
	cq_mod_reset(cq);
	if (cq->channel)
		cq->channel->refcnt--;
	munmap(cq->map, cq->map_len);
	res_free(cq->owner->d, cq->owner, SRD_RES_CQ, cq->handle);
	free(cq);
}

int cmd_destroy_cq(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_cq *cq = cq_get(c, req->handle);

	if (!cq)
		return -EINVAL;
	if (cq->refcnt)
		return -EBUSY;
	cq_destroy(cq);
	return 0;
}

/* One decoded CQE on the client's stderr, in one write so lines from
 * several writers do not interleave.  The write never blocks (see
 * trace_fd_open): what does not fit is dropped and counted. */
static void cq_trace(struct srd_cq *cq, uint32_t idx, const struct srd_cqe *e)
{
	char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	ssize_t w;
	long n;

	if (!f)
		return;
	srd_dump_cqe(f, cq->handle, idx, e);
	fflush(f);
	n = ftell(f);
	fclose(f);
	if (n <= 0)
		return;
	if (cq->owner->trace_sock)
		w = send(cq->owner->trace_fd, buf, n,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		w = write(cq->owner->trace_fd, buf, n);
	if (w != n)
		cq->owner->trace_dropped++;
}

void cq_raise_event(struct srd_cq *cq)
{
	_Atomic uint32_t *arm = (_Atomic uint32_t *)&cq->ctl->arm;
	struct srd_comp_event ev = { .cq_user_handle = cq->user_handle };

	cq_mod_reset(cq);
	if (!atomic_exchange_explicit(arm, 0, memory_order_acq_rel))
		return;
	if (cq->channel && write(cq->channel->wfd, &ev, sizeof(ev)) < 0)
		return; /* full: the reader has events to read already */
}

static void cq_notify(struct srd_cq *cq, const struct srd_cqe *e)
{
	_Atomic uint32_t *arm = (_Atomic uint32_t *)&cq->ctl->arm;
	_Atomic uint32_t *sleeper = (_Atomic uint32_t *)&cq->ctl->sleep;
	uint32_t a;

	/* Pairs with the library's fences between arming (or announcing a
	 * sleeper) and its last poll: either it sees this CQE or the daemon
	 * sees the arm bit (the sleep word). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(sleeper, memory_order_relaxed) &&
	    atomic_exchange_explicit(sleeper, 0, memory_order_relaxed))
		syscall(SYS_futex, sleeper, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	a = atomic_load_explicit(arm, memory_order_relaxed);
	if (!(a & SRD_CQ_ARM_NEXT) &&
	    !((a & SRD_CQ_ARM_SOLICITED) &&
	      ((e->flags & SRD_CQE_SOLICITED) || e->status != IBV_WC_SUCCESS)))
		return;
	if (cq_mod_hold(cq))
		return;
	cq_raise_event(cq);
}

int cq_push(struct srd_cq *cq, const struct srd_cqe *cqe)
{
	uint32_t cons, idx;
	struct srd_cqe *dst;

	if (cq->in_error)
		return -ENOSPC;
	cons = atomic_load_explicit((_Atomic uint32_t *)&cq->ctl->cons,
				    memory_order_acquire);
	if (cq->prod - cons >= cq->entries) {
		cq->in_error = true;
		client_async_event(cq->owner, IBV_EVENT_CQ_ERR,
				   cq->user_handle);
		return -ENOSPC;
	}
	idx = cq->prod;
	dst = &cq->ring[idx & (cq->entries - 1)];
	memcpy(dst, cqe, offsetof(struct srd_cqe, owner));
	if (cq->stamp)
		dst->timestamp = srd_dev_clock_ns();
	atomic_store_explicit((_Atomic uint8_t *)&dst->owner,
			      srd_cqe_owner_for(idx, cq->log_entries),
			      memory_order_release);
	cq->prod = idx + 1;
	if (cq->owner->trace_fd >= 0 &&
	    (cq->owner->trace_flags & SRD_TRACE_CQE))
		cq_trace(cq, idx, dst);
	cq_notify(cq, cqe);
	return 0;
}
