/* SPDX-License-Identifier: MIT */
/*
 * Transfers over a path that loses, duplicates, reorders or corrupts
 * packets.
 *
 * stream: RC moves many MiB in 1 MiB messages (WRITE_WITH_IMM and
 * SEND_WITH_IMM in turn) through four slots of the server's buffer; every
 * message must arrive whole, correct and in order; the server returns a
 * credit over TCP once it checked a slot.  Then 4 MiB of READs and 200
 * FETCH_ADDs (a replayed atomic must not run twice).
 *
 * lossy: UC and UD messages are counted: some may be lost (none must be
 * when the path is clean), each one delivered is whole and correct, UC
 * keeps their order, and nothing hangs.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "xhost.h"

#define SLOTS 4
#define CHUNK XH_MIB
#define LONG_MS 20000

static uint32_t seed_of(uint32_t k)
{
	return 0x10000 + k;
}

static void stream_server(struct xh *x, struct xh_qp *q, uint32_t n)
{
	struct ibv_wc wc;

	for (uint32_t k = 0; k < SLOTS && k < n; k++)
		t_post_recv(q->qp, k, x->b.mr, x->b.p + (k % SLOTS) * CHUNK,
			    CHUNK);
	xh_sync(x);
	for (uint32_t k = 0; k < n; k++) {
		uint8_t *slot = x->b.p + (k % SLOTS) * CHUNK;

		if (!t_poll(q->rcq, &wc, LONG_MS))
			T_FAIL("message %u of %u: nothing within %d ms (QP %s)",
			       k, n, LONG_MS,
			       t_qp_state(q->qp) == IBV_QPS_RTS ? "in RTS"
								: "not in RTS");
		if (wc.status != IBV_WC_SUCCESS)
			T_FAIL("message %u: \"%s\"", k,
			       ibv_wc_status_str(wc.status));
		/* Receives complete in order, so wr_id k is message k. */
		T_EQ(wc.wr_id, k);
		T_EQ(wc.opcode,
		     k % 2 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		if (be32toh(wc.imm_data) != k)
			T_FAIL("message %u carries immediate %u: out of order",
			       k, be32toh(wc.imm_data));
		T_EQ(wc.byte_len, CHUNK);
		T_CHECK_FILL(slot, CHUNK, seed_of(k));
		memset(slot, 0, CHUNK);
		if (k + SLOTS < n)
			t_post_recv(q->qp, k + SLOTS, x->b.mr, slot, CHUNK);
		xh_send(x->fd, &k, sizeof(k));
	}
}

/*
 * Waits until want messages are both complete here (ACKed) and checked
 * by the server (credited), watching both at once: a QP that failed shows
 * up as its completion status, not as a silent server.
 */
static void stream_wait(struct xh *x, struct xh_qp *q, uint32_t *credit,
			uint32_t *done, uint32_t want)
{
	double deadline = xh_now() + LONG_MS / 1e3;
	struct ibv_wc wc;

	while (*credit < want || *done < want) {
		int n = ibv_poll_cq(q->scq, 1, &wc);

		if (n < 0)
			T_FAIL("ibv_poll_cq: %d", n);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != *done)
				T_FAIL("message %u: completion wr_id %llu "
				       "\"%s\" (vendor_err %#x)",
				       *done, (unsigned long long)wc.wr_id,
				       ibv_wc_status_str(wc.status),
				       wc.vendor_err);
			(*done)++;
			continue;
		}
		if (*credit < want && t_fd_readable(x->fd, 1)) {
			uint32_t c;

			xh_recv(x->fd, &c, sizeof(c), LONG_MS);
			T_EQ(c, *credit);
			(*credit)++;
			continue;
		}
		if (xh_now() > deadline)
			T_FAIL("stalled for %d ms: %u messages ACKed, %u "
			       "checked "
			       "by the server, waiting for %u",
			       LONG_MS, *done, *credit, want);
		if (*credit >= want)
			sched_yield();
	}
}

static void stream_client(struct xh *x, struct xh_qp *q, uint32_t n)
{
	uint32_t credit = 0, done = 0;
	double t0, t;

	xh_sync(x);
	t0 = xh_now();
	for (uint32_t k = 0; k < n; k++) {
		uint8_t *src = x->a.p + (k % SLOTS) * CHUNK;
		struct ibv_sge sge = { (uintptr_t)src, CHUNK, x->a.mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		/* Slot k % SLOTS is free once message k - SLOTS was checked
		 * by the server and acknowledged to us (no retransmission
		 * reads it any more). */
		if (k >= SLOTS)
			stream_wait(x, q, &credit, &done, k - SLOTS + 1);
		t_fill(src, CHUNK, seed_of(k));
		wr.wr_id = k;
		wr.opcode = k % 2 ? IBV_WR_SEND_WITH_IMM
				  : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.imm_data = htobe32(k);
		wr.wr.rdma.remote_addr = q->remote.addr + (k % SLOTS) * CHUNK;
		wr.wr.rdma.rkey = q->remote.rkey;
		T_OK(ibv_post_send(q->qp, &wr, &bad));
	}
	stream_wait(x, q, &credit, &done, n);
	t = xh_now() - t0;
	t_log("RC stream: %u MiB in %.2f s, %.1f MB/s, every byte checked", n,
	      t, (double)n * CHUNK / t / 1e6);
}

static void stream_read_atomic(struct xh *x, struct xh_qp *q)
{
	uint64_t *ctr = (uint64_t *)(x->b.p + 4 * CHUNK);
	uint64_t *got = (uint64_t *)(x->a.p + 4 * CHUNK);
	const int nat = 200;
	struct ibv_wc wc;

	if (x->server) {
		for (uint32_t k = 0; k < SLOTS; k++)
			t_fill(x->b.p + k * CHUNK, CHUNK, seed_of(500 + k));
		*ctr = 0;
		xh_sync(x);
		xh_sync(x);
		T_EQ(*ctr, nat);
		return;
	}
	memset(x->a.p, 0, SLOTS * CHUNK);
	xh_sync(x);
	for (uint32_t k = 0; k < SLOTS; k++)
		t_post_send(q->qp, 100 + k, IBV_WR_RDMA_READ, x->a.mr,
			    x->a.p + k * CHUNK, CHUNK, IBV_SEND_SIGNALED,
			    q->remote.addr + k * CHUNK, q->remote.rkey);
	for (uint32_t k = 0; k < SLOTS; k++) {
		XH_EXPECT(q->scq, &wc, 100 + k, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_READ, LONG_MS);
		T_CHECK_FILL(x->a.p + k * CHUNK, CHUNK, seed_of(500 + k));
	}
	t_log("RC READ: 4 MiB checked");
	/* At most 16 atomics in flight (max_rd_atomic). */
	for (int i = 0; i < nat; i += 16) {
		for (int j = i; j < i + 16 && j < nat; j++)
			t_post_atomic(q->qp, 1000 + j,
				      IBV_WR_ATOMIC_FETCH_AND_ADD, x->a.mr,
				      got + j, q->remote.addr + 4 * CHUNK,
				      q->remote.rkey, 1, 0);
		for (int j = i; j < i + 16 && j < nat; j++) {
			XH_EXPECT(q->scq, &wc, 1000 + j, IBV_WC_SUCCESS,
				  IBV_WC_FETCH_ADD, LONG_MS);
			/* Each add saw exactly the ones before it. */
			T_EQ(got[j], j);
		}
	}
	t_log("RC FETCH_ADD: %d, each once", nat);
	xh_sync(x);
}

void xh_run_stream(struct xh *x)
{
	uint32_t n = (uint32_t)(x->bytes / CHUNK);
	struct xh_conn c;
	struct xh_qp q;

	T_GE(n, 1);
	/* timeout 14 (67 ms) and retry_cnt 7, what perftest and most
	 * applications use. */
	xh_conn_init(&c, IBV_QPT_RC);
	xh_qp_connect(x, &q, &c);
	if (x->server)
		stream_server(x, &q, n);
	else
		stream_client(x, &q, n);
	xh_sync(x);
	stream_read_atomic(x, &q);
	T_EQ(t_qp_state(q.qp), IBV_QPS_RTS);
	xh_sync(x);
	xh_qp_destroy(&q);
}

/* ------------------------------------------------------------------ */

#define BATCH 100
#define RXQ 256

struct lossy {
	uint32_t size;	    /* bytes per message */
	uint32_t slot;	    /* receive buffer stride */
	uint32_t posted;    /* receives posted so far */
	uint32_t received;  /* messages delivered */
	uint32_t dups;	    /* UD: delivered again */
	int64_t last;	    /* highest immediate seen */
	uint32_t reordered; /* UD: arrived below the highest */
	uint8_t *seen;
};

static void lossy_post(struct xh *x, struct xh_qp *q, struct lossy *l,
		       uint32_t upto)
{
	while (l->posted < upto) {
		uint32_t s = l->posted % RXQ;

		t_post_recv(q->qp, l->posted, x->b.mr, x->b.p + s * l->slot,
			    l->slot);
		l->posted++;
	}
}

static void lossy_take(struct xh *x, struct xh_qp *q, struct lossy *l,
		       const struct ibv_wc *wc, bool ud)
{
	uint8_t *p = x->b.p + (wc->wr_id % RXQ) * l->slot;
	uint32_t imm, hdr = ud ? XH_GRH : 0;

	if (wc->status != IBV_WC_SUCCESS)
		T_FAIL("%s receive wr_id %llu: \"%s\"", ud ? "UD" : "UC",
		       (unsigned long long)wc->wr_id,
		       ibv_wc_status_str(wc->status));
	T_EQ(wc->opcode, IBV_WC_RECV);
	T_ASSERT(wc->wc_flags & IBV_WC_WITH_IMM);
	imm = be32toh(wc->imm_data);
	if (imm >= x->count)
		T_FAIL("immediate %u: no such message", imm);
	T_EQ(wc->byte_len, hdr + l->size);
	if (ud)
		T_EQ(wc->src_qp, q->remote.qpn);
	T_CHECK_FILL(p + hdr, l->size, seed_of(imm));
	if (l->seen[imm]) {
		if (!ud || !x->faults)
			T_FAIL("message %u delivered twice", imm);
		l->dups++;
		return;
	}
	l->seen[imm] = 1;
	if ((int64_t)imm <= l->last) {
		if (!ud || !x->faults)
			T_FAIL("message %u after message %lld: out of order",
			       imm, (long long)l->last);
		l->reordered++;
	} else {
		l->last = imm;
	}
	l->received++;
}

static void lossy_run(struct xh *x, enum ibv_qp_type type, uint32_t size)
{
	bool ud = type == IBV_QPT_UD;
	const char *name = ud ? "UD" : "UC";
	struct lossy l = { .size = size, .last = -1 };
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;
	uint32_t total, done = 0;

	l.slot = size + XH_GRH;
	T_LE((uint64_t)l.slot * RXQ, XH_BUF_LEN);
	T_LE((uint64_t)size * 64, XH_BUF_LEN);
	l.seen = calloc(x->count, 1);
	T_ASSERT(l.seen);
	xh_conn_init(&c, type);
	c.max_recv_wr = RXQ;
	xh_qp_connect(x, &q, &c);
	for (uint32_t i0 = 0; i0 < x->count; i0 += BATCH) {
		uint32_t n = x->count - i0 < BATCH ? x->count - i0 : BATCH;

		if (x->server) {
			/* Every receive slot in use again: room for a whole
			 * batch, whatever got lost before. */
			lossy_post(x, &q, &l, l.received + l.dups + RXQ);
			xh_sync(x);
			xh_sync(x); /* the batch is sent */
			/* Stragglers (delay faults): wait until quiet. */
			while (t_poll(q.rcq, &wc, 300))
				lossy_take(x, &q, &l, &wc, ud);
			continue;
		}
		xh_sync(x);
		for (uint32_t i = i0; i < i0 + n; i++) {
			uint32_t sge[1][2] = { { (i % 64) * size, size } };

			t_fill(x->a.p + (i % 64) * size, size, seed_of(i));
			xh_post_sges(&q, i, IBV_WR_SEND_WITH_IMM, &x->a, sge, 1,
				     IBV_SEND_SIGNALED, 0, 0);
			/* UC and UD complete once sent; a source slot is
			 * reused only after its send completed. */
			if (i + 1 - done < 64 && i != i0 + n - 1)
				continue;
			for (; done <= i; done++)
				XH_EXPECT(q.scq, &wc, done, IBV_WC_SUCCESS,
					  IBV_WC_SEND, LONG_MS);
		}
		xh_sync(x);
	}
	T_EQ(t_qp_state(q.qp), IBV_QPS_RTS);
	total = (uint32_t)xh_swap_val(x, x->server ? l.received : 0);
	if (x->server) {
		total = l.received;
		t_log("%s: %u of %u messages of %u bytes delivered "
		      "(%u duplicated, %u reordered)",
		      name, total, x->count, size, l.dups, l.reordered);
	} else {
		t_log("%s: the server got %u of %u messages", name, total,
		      x->count);
	}
	if (x->loss) {
		/* Some, not all and not none: one loss must not stop the
		 * QP from taking the messages after it. */
		if (total >= x->count)
			T_FAIL("%s: all %u messages arrived over a lossy path",
			       name, total);
		if (total < x->count / 4)
			T_FAIL("%s: only %u of %u messages arrived", name,
			       total, x->count);
	} else if (total != x->count) {
		T_FAIL("%s: %u of %u messages arrived over a clean path", name,
		       total, x->count);
	}
	xh_sync(x);
	free(l.seen);
	xh_qp_destroy(&q);
}

void xh_run_lossy(struct xh *x)
{
	/* UC: several packets per message; UD: one, the size of the MTU. */
	lossy_run(x, IBV_QPT_UC, 8192);
	lossy_run(x, IBV_QPT_UD, x->mtu_bytes);
}
