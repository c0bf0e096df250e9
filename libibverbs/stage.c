/* SPDX-License-Identifier: MIT */
/*
 * Staging: without moved memory the daemon reaches an MR through our
 * /proc/self/mem or process_vm_*, a system call and a page walk for every
 * copy, its one thread doing both ends of an in-host transfer.  So the
 * payload of a SEND or WRITE from such an MR is copied here, at post time,
 * into a staging area the daemon maps (after the rings in the QP's memfd);
 * the WQE carries where (SRD_WQE_STAGED, srd_send_wqe.stage) and keeps its
 * SGEs, which the daemon checks as ever.  The daemon then has one copy to
 * make instead of two, and ours runs on the application's CPU.
 *
 * The copy is process_vm_readv on ourselves: a page that is gone or
 * protected fails the call instead of faulting, and the WQE then goes
 * unstaged, to fail in the daemon as it always has.  The area is a byte
 * ring given out in SQ order; a WQE's bytes come back when the SQ tail
 * passes it (its completion, or its flush).  When it is full, or the
 * payload is large, the WQE goes unstaged: never a wait, never a failure.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

/* Staged payloads start on a cache line. */
#define STAGE_ALIGN 64u
/* More SGEs than this go unstaged (one iovec each). */
#define STAGE_MAX_SGE 32

/* SOFTRDMA_STAGING: 0 none, a size (K, M) for every QP, 1 or unset the
 * default: room for as many of the largest staged payloads as the SQ
 * holds WRs, between SRD_STAGE_DEFAULT_BYTES / 16 and SRD_STAGE_MAX_BYTES.
 * Pages cost nothing until a payload is written there. */
uint32_t srd_stage_wanted(uint32_t max_send_wr)
{
	static int cached = -1;
	static uint32_t bytes;
	const char *env;
	char *end;
	unsigned long long v;

	if (__atomic_load_n(&cached, __ATOMIC_ACQUIRE) < 0) {
		v = 1;
		env = getenv("SOFTRDMA_STAGING");
		if (env && *env) {
			v = strtoull(env, &end, 0);
			if (*end == 'k' || *end == 'K')
				v <<= 10;
			else if (*end == 'm' || *end == 'M')
				v <<= 20;
			if (end == env)
				v = !strcmp(env, "on");
			if (v > SRD_STAGE_MAX_BYTES)
				v = SRD_STAGE_MAX_BYTES;
		}
		__atomic_store_n(&bytes, (uint32_t)v, __ATOMIC_RELAXED);
		__atomic_store_n(&cached, 1, __ATOMIC_RELEASE);
	}
	v = __atomic_load_n(&bytes, __ATOMIC_RELAXED);
	if (v != 1)
		return (uint32_t)v;
	v = (unsigned long long)max_send_wr * SRD_STAGE_MAX_MSG;
	if (v < SRD_STAGE_DEFAULT_BYTES / 16)
		v = SRD_STAGE_DEFAULT_BYTES / 16;
	return v > SRD_STAGE_MAX_BYTES ? SRD_STAGE_MAX_BYTES : (uint32_t)v;
}

void srd_stage_init(struct srd_uqp *qp, void *map,
		    const struct srd_create_qp_rep *rep)
{
	struct srd_ustage *st = &qp->stage;

	memset(st, 0, sizeof(*st));
	if (!rep->stage_len || rep->stage_offset < sizeof(struct srd_qp_ctl) ||
	    rep->stage_offset > rep->map_len ||
	    rep->stage_len > rep->map_len - rep->stage_offset)
		return;
	st->end = calloc(rep->sq_entries, sizeof(*st->end));
	if (!st->end)
		return; /* staging is an optimisation: go without */
	st->base = (uint8_t *)map + rep->stage_offset;
	st->len = rep->stage_len;
	st->max_msg = st->len < SRD_STAGE_MAX_MSG ? (uint32_t)st->len
						  : SRD_STAGE_MAX_MSG;
}

void srd_stage_fini(struct srd_uqp *qp)
{
	free(qp->stage.end);
	qp->stage.end = NULL;
	qp->stage.base = NULL;
}

/* Give back what completed WQEs held: everything up to the SQ tail. */
static void reclaim(struct srd_uqp *qp)
{
	struct srd_ustage *st = &qp->stage;
	uint32_t tail =
		atomic_load_explicit(&qp->sq.tail, memory_order_acquire);
	uint32_t mask = qp->sq.entries - 1;

	while (st->done != tail) {
		st->tail = st->end[st->done & mask];
		st->done++;
	}
}

void srd_stage_skip(struct srd_uqp *qp, uint32_t idx, enum ibv_wr_opcode op)
{
	struct srd_ustage *st = &qp->stage;

	if (!st->base)
		return;
	reclaim(qp);
	st->end[idx & (qp->sq.entries - 1)] = st->head;
	if (op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		st->rd_last = idx;
		st->rd_any = true;
	}
}

/* A READ or atomic before idx has not completed: its result may be what
 * a later WQE sends, so that one is read when it goes, not now. */
static bool rd_pending(struct srd_uqp *qp)
{
	struct srd_ustage *st = &qp->stage;
	uint32_t tail =
		atomic_load_explicit(&qp->sq.tail, memory_order_relaxed);

	return st->rd_any && (int32_t)(st->rd_last - tail) >= 0;
}

/* Where in our memory SGE sg lies, if in an MR the daemon reaches in
 * place; 0 otherwise. */
static uintptr_t sge_source(struct srd_context *ctx, const struct ibv_sge *sg)
{
	struct srd_hnode *n;
	uintptr_t va = 0;

	pthread_mutex_lock(&ctx->mr_tab.lock);
	n = srd_htab_find(&ctx->mr_tab, sg->lkey);
	if (n) {
		struct srd_umr *mr = container_of(n, struct srd_umr, lnode);
		uint64_t off = sg->addr - mr->iova;

		if (mr->in_place && sg->addr >= mr->iova &&
		    off <= mr->mr.length && sg->length <= mr->mr.length - off)
			va = (uintptr_t)mr->mr.addr + (uintptr_t)off;
	}
	pthread_mutex_unlock(&ctx->mr_tab.lock);
	return va;
}

bool srd_stage_wqe(struct srd_context *ctx, struct srd_uqp *qp,
		   const struct ibv_send_wr *wr, uint32_t idx,
		   struct srd_wqe_stage *out)
{
	struct srd_ustage *st = &qp->stage;
	struct iovec local, remote[STAGE_MAX_SGE];
	uint64_t total = 0, need, pos, off, head;
	int n = 0;

	if (!st->base)
		return false;
	srd_stage_skip(qp, idx, wr->opcode);
	head = st->head;
	if ((wr->send_flags & IBV_SEND_FENCE) || wr->num_sge <= 0 ||
	    wr->num_sge > STAGE_MAX_SGE || rd_pending(qp))
		return false;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sg = &wr->sg_list[i];

		if (!sg->length)
			continue;
		total += sg->length;
		if (total > st->max_msg)
			return false;
		remote[n].iov_base = (void *)sge_source(ctx, sg);
		if (!remote[n].iov_base)
			return false;
		remote[n++].iov_len = sg->length;
	}
	if (!total)
		return false;
	/* Room at the ring's end, or else from its start. */
	need = (total + STAGE_ALIGN - 1) & ~(uint64_t)(STAGE_ALIGN - 1);
	pos = head % st->len;
	off = pos;
	if (pos + need > st->len) {
		need += st->len - pos;
		off = 0;
	}
	if (head - st->tail + need > st->len)
		return false;
	local.iov_base = st->base + off;
	local.iov_len = total;
	if (process_vm_readv(getpid(), &local, 1, remote, (unsigned long)n,
			     0) != (ssize_t)total)
		return false;
	st->head = head + need;
	st->end[idx & (qp->sq.entries - 1)] = st->head;
	out->offset = off;
	out->length = (uint32_t)total;
	out->rsvd = 0;
	return true;
}

void srd_mr_list(struct srd_context *ctx, struct srd_umr *mr, bool in_place)
{
	pthread_mutex_lock(&ctx->mr_tab.lock);
	if (mr->listed)
		srd_htab_del(&ctx->mr_tab, &mr->lnode);
	mr->lnode.key = mr->mr.lkey;
	mr->in_place = in_place;
	mr->listed = !srd_htab_add(&ctx->mr_tab, &mr->lnode);
	pthread_mutex_unlock(&ctx->mr_tab.lock);
}

void srd_mr_unlist(struct srd_context *ctx, struct srd_umr *mr)
{
	pthread_mutex_lock(&ctx->mr_tab.lock);
	if (mr->listed)
		srd_htab_del(&ctx->mr_tab, &mr->lnode);
	mr->listed = false;
	pthread_mutex_unlock(&ctx->mr_tab.lock);
}
