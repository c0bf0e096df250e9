/* SPDX-License-Identifier: MIT */
/*
 * Polling a CQ: CQEs are valid by their owner bit, so no producer index
 * and no system call; an empty CQ yields the CPU or sleeps.
 */
#include <linux/futex.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

static void advance(_Atomic uint32_t *tail, uint32_t to)
{
	uint32_t cur = atomic_load_explicit(tail, memory_order_relaxed);

	/* Completions come in order; never move the tail backwards. */
	if ((int32_t)(to - cur) > 0)
		atomic_store_explicit(tail, to, memory_order_release);
}

/* The QP a CQE names; cq->lock held.  A CQ mostly serves one QP, or a
 * few in turn: the last one found is tried before the table. */
static struct srd_uqp *cqe_qp(struct srd_ucq *cq, uint32_t qp_num)
{
	struct srd_context *ctx = to_ctx(cq->cq.context);
	struct srd_hnode *n;

	if (cq->last_qp && cq->last_qp->qp.qp_num == qp_num)
		return cq->last_qp;
	pthread_mutex_lock(&ctx->qpn_tab.lock);
	n = srd_htab_find(&ctx->qpn_tab, qp_num);
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
	if (!n)
		return NULL;
	/* Still alive after the unlock: ibv_destroy_qp takes cq->lock,
	 * which we hold, before it frees a QP that completes here. */
	cq->last_qp = container_of(n, struct srd_uqp, qpn_node);
	return cq->last_qp;
}

/* A CQE is consumed: its WQE's ring slot is free again; cq->lock held. */
void srd_cqe_retire(struct srd_ucq *cq, const struct srd_cqe *cqe)
{
	struct srd_uqp *qp;

	if ((cqe->flags & (SRD_CQE_RECV | SRD_CQE_SRQ)) ==
	    (SRD_CQE_RECV | SRD_CQE_SRQ))
		return; /* the SRQ frees its slots when the daemon takes them */
	qp = cqe_qp(cq, cqe->qp_num);
	if (!qp)
		return;
	if (cqe->flags & SRD_CQE_RECV)
		advance(&qp->rq.tail, cqe->wqe_idx + 1);
	else
		advance(&qp->sq.tail, cqe->wqe_idx + 1);
}

/* qp is out of qpn_tab and about to be freed: no poller of cq keeps it. */
void srd_cq_forget_qp(struct srd_ucq *cq, struct srd_uqp *qp)
{
	pthread_spin_lock(&cq->lock);
	if (cq->last_qp == qp)
		cq->last_qp = NULL;
	pthread_spin_unlock(&cq->lock);
}

static void cqe_to_wc(const struct srd_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int srd_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct srd_ucq *cq = to_cq(ibcq);
	struct srd_context *ctx = to_ctx(ibcq->context);
	uint32_t mask, cons;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	mask = (1u << cq->log_entries) - 1;
	cons = cq->cons;
	for (; n < num_entries; n++, cons++) {
		const struct srd_cqe *cqe = &cq->ring[cons & mask];

		if (__atomic_load_n(&cqe->owner, __ATOMIC_ACQUIRE) !=
		    srd_cqe_owner_for(cons, cq->log_entries))
			break;
		cqe_to_wc(cqe, &wc[n]);
		srd_cqe_retire(cq, cqe);
	}
	if (n) {
		cq->cons = cons;
		/* Tell the daemon these slots are free again. */
		__atomic_store_n(&cq->ctl->cons, cons, __ATOMIC_RELEASE);
		cq->empty_polls = 0;
		cq->idle_since = 0;
	} else if (srd_ctx_dead(ctx)) {
		/* Every CQE the daemon wrote has been read: what is still
		 * queued completes in flush error (flush.c). */
		struct srd_cqe f;

		while (n < num_entries && srd_cq_flush_one(cq, &f))
			cqe_to_wc(&f, &wc[n++]);
	} else if (++cq->empty_polls >= SRD_EMPTY_POLLS_YIELD) {
		cq->empty_polls = 0;
		pthread_spin_unlock(&cq->lock);
		srd_place_help(ctx);
		srd_poll_idle(cq);
		return 0;
	}
	pthread_spin_unlock(&cq->lock);
	/* What we wait for may be our own placement jobs. */
	if (!n)
		srd_place_help(ctx);
	return n;
}

/*
 * The device is a process on the same CPUs.  When the machine has fewer
 * CPUs than an application's pollers plus the engine need, an application
 * spinning on an empty CQ must leave the engine room to run, or every
 * completion waits for the scheduler's time slice.  With 4 or more CPUs
 * an empty poll makes no system call.  SOFTRDMA_POLL_YIELD=0/1 overrides.
 */
static int poll_yield_enabled(void)
{
	static int enabled = -1;
	const char *env;
	int on = __atomic_load_n(&enabled, __ATOMIC_RELAXED);

	if (on >= 0)
		return on;
	env = secure_getenv("SOFTRDMA_POLL_YIELD");
	if (env && (env[0] == '0' || env[0] == '1'))
		on = env[0] == '1';
	else
		on = sysconf(_SC_NPROCESSORS_ONLN) < 4;
	/* Pollers on several threads may all get here first: each stores
	 * the same answer. */
	__atomic_store_n(&enabled, on, __ATOMIC_RELAXED);
	return on;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* SOFTRDMA_POLL_SPIN_US / SOFTRDMA_POLL_SLEEP_US, in ns, once. */
uint64_t srd_env_ns(const char *name, uint64_t dflt, _Atomic uint64_t *cache)
{
	uint64_t v = atomic_load_explicit(cache, memory_order_relaxed);
	const char *env;
	char *end;

	if (v)
		return v - 1;
	v = dflt;
	env = secure_getenv(name);
	if (env && *env) {
		unsigned long long us = strtoull(env, &end, 10);

		if (!*end && us <= 10000000)
			v = (uint64_t)us * 1000;
	}
	atomic_store_explicit(cache, v + 1, memory_order_relaxed);
	return v;
}

static uint64_t poll_spin_ns(void)
{
	static _Atomic uint64_t cache;

	return srd_env_ns("SOFTRDMA_POLL_SPIN_US", SRD_POLL_SPIN_NS, &cache);
}

static uint64_t poll_sleep_ns(void)
{
	static _Atomic uint64_t cache;

	return srd_env_ns("SOFTRDMA_POLL_SLEEP_US", SRD_POLL_SLEEP_NS, &cache);
}

/* A signaled send WQE whose completion goes to cq is still outstanding:
 * a CQE will come, and the daemon wakes a sleeping poller for it.  A
 * receive CQ may wait for a peer forever, so nobody sleeps on it. */
static bool cq_expects_completion(struct srd_ucq *cq)
{
	struct srd_context *ctx = to_ctx(cq->cq.context);
	bool found = false;

	pthread_mutex_lock(&ctx->qpn_tab.lock);
	list_for_each (&cq->send_qps, it) {
		struct srd_uqp *qp =
			list_entry(it, struct srd_uqp, send_cq_node);
		uint32_t sig = atomic_load_explicit(&qp->sq.sig_head,
						    memory_order_relaxed);
		uint32_t tail = atomic_load_explicit(&qp->sq.tail,
						     memory_order_relaxed);

		if ((int32_t)(sig - tail) > 0) {
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
	return found;
}

/* Block until the daemon writes the CQE at cons, or poll_sleep_ns(). */
static void cq_sleep(struct srd_ucq *cq, uint32_t cons)
{
	_Atomic uint32_t *word = (_Atomic uint32_t *)&cq->ctl->sleep;
	const struct srd_cqe *cqe =
		&cq->ring[cons & ((1u << cq->log_entries) - 1)];
	uint64_t ns = poll_sleep_ns();
	const struct timespec limit = { (time_t)(ns / 1000000000u),
					(long)(ns % 1000000000u) };

	atomic_store_explicit(word, 1, memory_order_relaxed);
	/* Pairs with the daemon's fence between writing a CQE and reading
	 * the word: either we see the CQE or it sees the 1 and wakes us. */
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&cqe->owner, __ATOMIC_ACQUIRE) ==
	    srd_cqe_owner_for(cons, cq->log_entries))
		return;
	/* Not FUTEX_PRIVATE: the word is in memory shared with the daemon. */
	syscall(SYS_futex, word, FUTEX_WAIT, 1, &limit, NULL, 0);
}

/*
 * Empty polls in a row: yield the CPU; once cq has been empty for
 * poll_spin_ns() while a completion is expected (a sender waiting for
 * its send queue to drain), sleep until the daemon writes the CQE.  On
 * two CPUs a spinning sender otherwise takes much of the CPU time the
 * engine needs to move its data.
 */
void srd_poll_idle(struct srd_ucq *cq)
{
	uint64_t now, since;
	uint32_t cons;

	if (!poll_yield_enabled())
		return;
	now = mono_ns();
	pthread_spin_lock(&cq->lock);
	since = cq->idle_since;
	if (!since)
		cq->idle_since = now;
	cons = cq->cons;
	pthread_spin_unlock(&cq->lock);
	if (since && now - since >= poll_spin_ns() && cq_expects_completion(cq))
		cq_sleep(cq, cons);
	else
		sched_yield();
}
