/* SPDX-License-Identifier: MIT */
/*
 * The engine distrusts the rings: producer indices beyond the ring or
 * going backwards put the QP (or SRQ) in error without a flood of CQEs;
 * slots full of random bytes, also rewritten while the engine reads them,
 * complete in error and never make it touch memory outside a valid MR;
 * a malformed receive WQE fails alone; MRs deregistered in the middle of
 * a transfer end it with the right error instead of a stale access.
 * Meant to be run under AddressSanitizer as well (SOFTRDMA_ASAN).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "tests/unit/engine_harness.h"

#define ALL_ACCESS                                          \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define MRLEN (1u << 20)

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb;

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void pair(struct eh_qp *a, struct eh_qp *b, const struct eh_conn *c)
{
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, b);
	eh_connect_pair(&h, a, b, c);
}

static unsigned int statuses[256];

static void poll_all(struct eh_cq *cq)
{
	struct srd_cqe e;

	while (eh_poll(cq, &e))
		statuses[e.status]++;
}

static void test_bad_prod(void)
{
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;
	int n = 0;

	/* More posted than the ring holds. */
	pair(&a, &b, NULL);
	a.qp->sq.ctl->prod = a.qp->sq.entries + 5;
	eh_run(&h, 3);
	T_EQ(eh_state(&a), IBV_QPS_ERR);
	eh_expect_event(&h, IBV_EVENT_QP_FATAL, (uintptr_t)&a);
	while (eh_poll(&scq, &e))
		n++;
	T_EQ(n, 0); /* nothing was fetched, nothing sane to flush */
	a.qp->sq.ctl->prod = 0xfffffff0;
	eh_run(&h, 3);
	eh_none(&scq);

	/* The producer index going backwards. */
	pair(&a, &b, NULL);
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_RDMA_WRITE;
	w.flags = SRD_WQE_SIGNALED;
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	for (int i = 0; i < 3; i++)
		eh_post_send(&a, &w, NULL, NULL);
	eh_run(&h, 1);
	poll_all(&scq);
	a.qp->sq.ctl->prod = 1;
	eh_run(&h, 2);
	T_EQ(eh_state(&a), IBV_QPS_ERR);
	eh_expect_event(&h, IBV_EVENT_QP_FATAL, (uintptr_t)&a);

	/* A bogus RQ producer, seen when a SEND needs a WQE. */
	pair(&a, &b, NULL);
	b.qp->rq.ctl->prod = 0x80000000u;
	w.opcode = IBV_WR_SEND;
	eh_post_send(&a, &w, NULL, NULL);
	eh_run(&h, 2);
	T_EQ(eh_state(&b), IBV_QPS_ERR);
	eh_expect_event(&h, IBV_EVENT_QP_FATAL, (uintptr_t)&b);
	poll_all(&scq);
	poll_all(&rcq);
}

static void test_bad_srq(void)
{
	struct eh_srq s;
	struct eh_qp a, b;
	struct srd_send_wqe w;

	eh_srq(&h, h.pd, 8, 1, &s);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_RC, &scq, &rcq, &s, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	s.srq->ctl->rq.prod = 1000;
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_SEND;
	eh_post_send(&a, &w, NULL, NULL);
	eh_run(&h, 3);
	T_ASSERT(s.srq->in_error);
	eh_expect_event(&h, IBV_EVENT_SRQ_ERR, (uintptr_t)&s);
	T_EQ(s.srq->cons, 0);
	/* The QP that met it fails; the SRQ stays untouched. */
	T_EQ(eh_state(&b), IBV_QPS_ERR);
	eh_expect_event(&h, IBV_EVENT_QP_FATAL, (uintptr_t)&b);
	T_EQ(s.srq->ctl->rq.cons, 0);
}

/* A receive WQE claiming more SGEs than the queue allows. */
static void test_malformed_recv(void)
{
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;

	pair(&a, &b, NULL);
	eh_post_recv(&b, 0x42, NULL, 200);
	memset(&w, 0, sizeof(w));
	w.wr_id = 7;
	w.opcode = IBV_WR_SEND;
	w.flags = SRD_WQE_SIGNALED;
	eh_post_send(&a, &w, NULL, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_REM_OP_ERR, IBV_WC_SEND, 7);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RECV, 0x42);
}

/* Random slots: every one completes, none in success unless it was a
 * well-formed WQE by chance, and no memory outside the MRs changes. */
static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = rnd();

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static void test_random_slots(void)
{
	uint8_t *guard = malloc(MRLEN);

	T_ASSERT(guard);
	memset(guard, 0x5a, MRLEN);
	for (int round = 0; round < 200; round++) {
		struct eh_qp a, b;
		struct srd_wq *wq;
		uint32_t n = 1 + rnd() % 16;

		pair(&a, &b,
		     &(struct eh_conn){
			     .timeout = 1, .retry_cnt = 1, .rnr_retry = 1 });
		wq = &a.qp->sq;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *slot =
				wq->ring +
				(size_t)(i & (wq->entries - 1)) * wq->slot_size;
			struct srd_send_wqe *sw = (void *)slot;

			fill_random(slot, wq->slot_size);
			/* Steer some fields toward the interesting. */
			if (rnd() & 1)
				sw->opcode = rnd() % 8;
			if (rnd() & 1)
				sw->num_sge = rnd() % 6;
			if (rnd() & 1)
				sw->flags &= ~SRD_WQE_INLINE;
			/* These QPs have no staging area: a staged WQE
			 * fails its check, so only some are. */
			if (rnd() & 7)
				sw->flags &= ~SRD_WQE_STAGED;
			if (rnd() & 3)
				sw->flags |= SRD_WQE_SIGNALED;
			if (rnd() & 1)
				sw->inline_len = rnd() % 100;
			if (rnd() & 3) {
				struct srd_sge *sg = (void *)(sw + 1);

				for (int j = 0; j < 3; j++) {
					sg[j].lkey = (rnd() & 1) ? ma.lkey
								 : mb.lkey;
					sg[j].addr =
						(uintptr_t)ma.p +
						rnd() % (MRLEN + MRLEN / 8);
					sg[j].length = rnd() % 70000;
				}
			}
			if (rnd() & 1) {
				sw->rkey = mb.lkey;
				sw->remote_addr = (uintptr_t)mb.p +
						  rnd() % (2 * MRLEN) -
						  MRLEN / 2;
			}
		}
		for (int i = 0; i < 4; i++)
			eh_post_recv(&b, i,
				     (struct srd_sge[]){ eh_sge(&mb,
								rnd() % MRLEN,
								rnd() % 5000) },
				     1);
		__atomic_store_n(&wq->ctl->prod, n, __ATOMIC_RELEASE);
		for (int i = 0; i < 3000 && eh_run(&h, 1); i++)
			;
		eh_run(&h, 200);
		poll_all(&scq);
		poll_all(&rcq);
	}
	for (size_t i = 0; i < MRLEN; i++)
		T_EQ(guard[i], 0x5a);
	free(guard);
	/* The garbage reached the checks and the transfers both. */
	for (int i = 0; i < 32; i++)
		if (statuses[i])
			fprintf(stderr, "# status %d: %u\n", i, statuses[i]);
	T_ASSERT(statuses[IBV_WC_SUCCESS] > 10);
	T_ASSERT(statuses[IBV_WC_LOC_QP_OP_ERR] > 10);
	T_ASSERT(statuses[IBV_WC_LOC_PROT_ERR] > 0);
	T_ASSERT(statuses[IBV_WC_LOC_LEN_ERR] > 0);
	T_ASSERT(statuses[IBV_WC_WR_FLUSH_ERR] > 50);
	T_ASSERT(statuses[IBV_WC_REM_ACCESS_ERR] +
			 statuses[IBV_WC_REM_INV_REQ_ERR] >
		 0);
}

/* Someone rewrites the ring and its producer index all the time. */
static atomic_bool stop;

static void *scribbler(void *arg)
{
	struct srd_qp *qp = arg;
	uint64_t s = 12345;

	while (!atomic_load(&stop)) {
		size_t off;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		off = s % ((size_t)qp->sq.entries * qp->sq.slot_size);
		qp->sq.ring[off] = (uint8_t)(s >> 32);
		if (!(s & 0xff))
			__atomic_store_n(&qp->sq.ctl->prod,
					 (uint32_t)(s >> 40) % 200,
					 __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_scribbler(void)
{
	struct eh_qp a, b;
	pthread_t t;

	pair(&a, &b, &(struct eh_conn){ .timeout = 1, .retry_cnt = 1 });
	atomic_store(&stop, false);
	T_EQ(pthread_create(&t, NULL, scribbler, a.qp), 0);
	for (int i = 0; i < 20000; i++) {
		eh_run(&h, 1);
		poll_all(&scq);
		poll_all(&rcq);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
}

/* MRs deregistered under a transfer. */
static void test_dereg(void)
{
	struct eh_conn c = { .timeout = 1, .retry_cnt = 1 };
	struct eh_mr src, dst;
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;

	/* The destination of a WRITE goes: remote access error. */
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &dst);
	pair(&a, &b, &c);
	memset(&w, 0, sizeof(w));
	w.wr_id = 1;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.flags = SRD_WQE_SIGNALED;
	w.num_sge = 1;
	w.remote_addr = (uintptr_t)dst.p;
	w.rkey = dst.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, MRLEN) }, NULL);
	eh_run(&h, 1);
	eh_none(&scq);
	T_EQ(eh_dereg(&h, &dst), 0);
	e = eh_wait(&h, &scq, 50);
	EH_CQE(e, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 1);
	T_EQ(eh_state(&b), IBV_QPS_ERR);

	/* The source goes: the data never arrives, retries run out. */
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &src);
	pair(&a, &b, &c);
	w.wr_id = 2;
	w.remote_addr = (uintptr_t)mb.p;
	w.rkey = mb.lkey;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&src, 0, MRLEN) },
		     NULL);
	eh_run(&h, 1);
	T_EQ(eh_dereg(&h, &src), 0);
	e = eh_wait(&h, &scq, 500);
	EH_CQE(e, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE, 2);

	/* The local buffer of a READ goes: local protection error. */
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &dst);
	pair(&a, &b, &c);
	w.wr_id = 3;
	w.opcode = IBV_WR_RDMA_READ;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&dst, 0, MRLEN) },
		     NULL);
	eh_run(&h, 1);
	T_EQ(eh_dereg(&h, &dst), 0);
	e = eh_wait(&h, &scq, 50);
	EH_CQE(e, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_READ, 3);

	/* The receive buffer of a SEND goes. */
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &dst);
	pair(&a, &b, &c);
	eh_post_recv(&b, 0x44, (struct srd_sge[]){ eh_sge(&dst, 0, MRLEN) }, 1);
	w.wr_id = 4;
	w.opcode = IBV_WR_SEND;
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, MRLEN) }, NULL);
	eh_run(&h, 1);
	T_EQ(eh_dereg(&h, &dst), 0);
	e = eh_wait(&h, &scq, 50);
	EH_CQE(e, IBV_WC_REM_OP_ERR, IBV_WC_SEND, 4);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0x44);
}

int main(void)
{
	eh_init(&h);
	eh_cq(&h, 32767, &scq);
	eh_cq(&h, 32767, &rcq);
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &ma);
	eh_mr(&h, h.pd, MRLEN, ALL_ACCESS, &mb);
	test_bad_prod();
	test_bad_srq();
	test_malformed_recv();
	test_dereg();
	memset(statuses, 0, sizeof(statuses));
	test_random_slots();
	test_scribbler();
	eh_fini(&h);
	return T_EXIT_PASS;
}
