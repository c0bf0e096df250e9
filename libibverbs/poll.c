/* SPDX-License-Identifier: MIT */
/*
 * Polling a CQ: CQEs are valid by their owner bit, so no producer index
 * and no system call.  Also arming the CQ and ringing the doorbell.
 */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

static void advance(_Atomic uint32_t *tail, uint32_t to)
{
	uint32_t cur = atomic_load_explicit(tail, memory_order_relaxed);

	/* Completions come in order; never move the tail backwards. */
	if ((int32_t)(to - cur) > 0)
		atomic_store_explicit(tail, to, memory_order_release);
}

void srd_cqe_retire(struct srd_context *ctx, const struct srd_cqe *cqe)
{
	struct srd_hnode *n;

	if ((cqe->flags & (SRD_CQE_RECV | SRD_CQE_SRQ)) ==
	    (SRD_CQE_RECV | SRD_CQE_SRQ))
		return; /* the SRQ frees its slots when the daemon takes them */
	pthread_mutex_lock(&ctx->qpn_tab.lock);
	n = srd_htab_find(&ctx->qpn_tab, cqe->qp_num);
	if (n) {
		struct srd_qp *qp = container_of(n, struct srd_qp, qpn_node);

		if (cqe->flags & SRD_CQE_RECV)
			advance(&qp->rq.tail, cqe->wqe_idx + 1);
		else
			advance(&qp->sq.tail, cqe->wqe_idx + 1);
	}
	pthread_mutex_unlock(&ctx->qpn_tab.lock);
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
	struct srd_cq *cq = to_cq(ibcq);
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
		srd_cqe_retire(ctx, cqe);
	}
	if (n) {
		cq->cons = cons;
		/* Tell the daemon these slots are free again. */
		__atomic_store_n(&cq->ctl->cons, cons, __ATOMIC_RELEASE);
		cq->empty_polls = 0;
	} else if (++cq->empty_polls >= SRD_EMPTY_POLLS_YIELD) {
		cq->empty_polls = 0;
		pthread_spin_unlock(&cq->lock);
		srd_poll_yield();
		return 0;
	}
	pthread_spin_unlock(&cq->lock);
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
	env = getenv("SOFTRDMA_POLL_YIELD");
	if (env && (env[0] == '0' || env[0] == '1'))
		on = env[0] == '1';
	else
		on = sysconf(_SC_NPROCESSORS_ONLN) < 4;
	/* Pollers on several threads may all get here first: each stores
	 * the same answer. */
	__atomic_store_n(&enabled, on, __ATOMIC_RELAXED);
	return on;
}

void srd_poll_yield(void)
{
	if (poll_yield_enabled())
		sched_yield();
}

int srd_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct srd_cq *cq = to_cq(ibcq);

	__atomic_fetch_or(&cq->ctl->arm,
			  solicited_only ? SRD_CQ_ARM_SOLICITED
					 : SRD_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}

void srd_ring_doorbell(struct srd_context *ctx)
{
	static const uint64_t one = 1;

	/* Pairs with the engine's fence between setting engine_sleeping and
	 * its last look at the rings: one of us sees the other. */
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&ctx->dev_page->engine_sleeping,
			    __ATOMIC_RELAXED)) {
		ssize_t r = write(ctx->doorbell_fd, &one, sizeof(one));

		(void)r;
	}
}
