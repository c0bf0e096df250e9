/* SPDX-License-Identifier: MIT */
/*
 * Transfers through the test's private daemon while it injects faults
 * (SOFTRDMA_FAULTS, set by the ctest registration; read by the daemon the
 * library starts).  One mode per run:
 *
 *   rc             64 MiB over RC: 32 x (1 MiB WRITE + 1 MiB SEND), four
 *                  in flight, then 16 MiB of READs, four outstanding, then
 *                  100 FETCH_ADDs; everything completes successfully, in
 *                  order, every byte arrives and every atomic is done
 *                  exactly once.  Retransmission has to recover from
 *                  whatever the rules do (drop, dup, reorder, delay,
 *                  corrupt).
 *   ud P | uc P    2048 messages, each either arriving intact and in order
 *                  or lost; with rules dropping packets with probability
 *                  P, the number lost stays near what P predicts (a
 *                  generous statistical window), and with P = 0 none is.
 *   retry T R      everything dropped: an RC WRITE with timeout T and
 *                  retry_cnt R fails with IBV_WC_RETRY_EXC_ERR after about
 *                  4.096 us * 2^T * (R + 1) (between half and three times
 *                  that).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_util.h"

#define MIB (1u << 20)
#define RC_MSGS 32
#define RC_WINDOW 4
#define RC_READS 16
#define RC_ATOMICS 100
#define DG_MSGS 2048
#define DG_BURST 32

static void rc_stream(struct t_dev *d)
{
	struct t_pair p;
	struct t_buf src, dst, rcv;
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;
	uint64_t t0 = t_now_ms();

	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	t_pair_create(d, &p, IBV_QPT_RC, &ia, NULL);
	/* Per slot in flight: a WRITE source and a SEND source; a receive
	 * buffer per slot; the WRITE target holds every message. */
	t_buf_alloc(d, &src, 2 * RC_WINDOW * MIB, T_ACCESS_ALL);
	t_buf_alloc(d, &rcv, RC_WINDOW * MIB, T_ACCESS_ALL);
	t_buf_alloc(d, &dst, RC_MSGS * MIB, T_ACCESS_ALL);

	for (uint32_t i = 0; i < RC_MSGS + RC_WINDOW; i++) {
		if (i >= RC_WINDOW) {
			uint32_t j = i - RC_WINDOW, k = j % RC_WINDOW;

			T_EXPECT_WC(p.cq_a, &wc, 2 * j, IBV_WC_SUCCESS,
				    IBV_WC_RDMA_WRITE);
			T_EXPECT_WC(p.cq_a, &wc, 2 * j + 1, IBV_WC_SUCCESS,
				    IBV_WC_SEND);
			T_EXPECT_WC(p.cq_b, &wc, j, IBV_WC_SUCCESS,
				    IBV_WC_RECV);
			T_EQ(wc.byte_len, MIB);
			T_CHECK_FILL(rcv.p + (size_t)k * MIB, MIB, 2 * j + 1);
			/* The SEND came after the WRITE: its data is there. */
			T_CHECK_FILL(dst.p + (size_t)j * MIB, MIB, 2 * j);
		}
		if (i < RC_MSGS) {
			uint32_t k = i % RC_WINDOW;
			uint8_t *ws = src.p + (size_t)2 * k * MIB;
			uint8_t *ss = ws + MIB;

			t_fill(ws, MIB, 2 * i);
			t_fill(ss, MIB, 2 * i + 1);
			t_post_recv(p.b, i, rcv.mr, rcv.p + (size_t)k * MIB,
				    MIB);
			t_post_send(p.a, 2 * i, IBV_WR_RDMA_WRITE, src.mr, ws,
				    MIB, IBV_SEND_SIGNALED,
				    (uint64_t)(uintptr_t)dst.p +
					    (uint64_t)i * MIB,
				    dst.mr->rkey);
			t_post_send(p.a, 2 * i + 1, IBV_WR_SEND, src.mr, ss,
				    MIB, IBV_SEND_SIGNALED, 0, 0);
		}
	}
	/* READs back, RC_WINDOW of them outstanding: a lost response is
	 * asked for again. */
	for (uint32_t i = 0; i < RC_READS + RC_WINDOW; i++) {
		if (i >= RC_WINDOW) {
			uint32_t j = i - RC_WINDOW;

			T_EXPECT_WC(p.cq_a, &wc, 1000 + j, IBV_WC_SUCCESS,
				    IBV_WC_RDMA_READ);
			T_CHECK_FILL(src.p + (size_t)(j % RC_WINDOW) * MIB, MIB,
				     2 * j);
		}
		if (i < RC_READS)
			t_post_send(p.a, 1000 + i, IBV_WR_RDMA_READ, src.mr,
				    src.p + (size_t)(i % RC_WINDOW) * MIB, MIB,
				    IBV_SEND_SIGNALED,
				    (uint64_t)(uintptr_t)dst.p +
					    (uint64_t)i * MIB,
				    dst.mr->rkey);
	}
	/* Atomics, each done exactly once whatever is lost or repeated. */
	memset(dst.p, 0, 8);
	for (uint32_t i = 0; i < RC_ATOMICS; i++) {
		uint64_t *old = (uint64_t *)(src.p + 8 * (i % 64));

		t_post_atomic(p.a, 2000 + i, IBV_WR_ATOMIC_FETCH_AND_ADD,
			      src.mr, old, (uint64_t)(uintptr_t)dst.p,
			      dst.mr->rkey, 1, 0);
		T_EXPECT_WC(p.cq_a, &wc, 2000 + i, IBV_WC_SUCCESS,
			    IBV_WC_FETCH_ADD);
		T_EQ(*old, i);
	}
	T_EQ(*(uint64_t *)dst.p, RC_ATOMICS);
	/* Nothing more, nothing twice. */
	T_EXPECT_NO_WC(p.cq_a, 50);
	T_EXPECT_NO_WC(p.cq_b, 50);
	t_log("rc: %u MiB written, sent and read, %u atomics, in %llu ms",
	      2 * RC_MSGS + RC_READS, RC_ATOMICS,
	      (unsigned long long)(t_now_ms() - t0));
	t_buf_free(&src);
	t_buf_free(&rcv);
	t_buf_free(&dst);
	t_pair_destroy(&p);
}

/* Datagrams (UD) or unreliable messages (UC): each arrives whole and in
 * order, or not at all. */
static void datagrams(struct t_dev *d, enum ibv_qp_type type, double prob)
{
	uint32_t len = type == IBV_QPT_UD ? 1024 : 3 * 4096 - 100;
	uint32_t slot = type == IBV_QPT_UD ? len + 40 : len;
	uint32_t pkts = type == IBV_QPT_UD ? 1 : 3, got = 0, next = 0;
	struct ibv_qp_init_attr ia;
	struct t_buf sb, rb;
	struct t_pair p;
	struct ibv_wc wc;
	double pm, lost;
	int posted = 0;

	t_qp_init_attr(&ia, type, NULL, NULL);
	ia.cap.max_recv_wr = 2 * DG_BURST;
	t_pair_create(d, &p, type, &ia, NULL);
	if (type == IBV_QPT_UC && p.d->port.active_mtu < IBV_MTU_4096)
		t_skip("UC messages are sized for a 4096-byte MTU");
	t_buf_alloc(d, &sb, DG_BURST * len, T_ACCESS_ALL);
	t_buf_alloc(d, &rb, 2 * DG_BURST * slot, T_ACCESS_ALL);
	for (int i = 0; i < 2 * DG_BURST; i++, posted++)
		t_post_recv(p.b, posted, rb.mr,
			    rb.p + (size_t)(posted % (2 * DG_BURST)) * slot,
			    slot);
	for (uint32_t base = 0; base < DG_MSGS; base += DG_BURST) {
		for (uint32_t i = 0; i < DG_BURST; i++) {
			uint8_t *m = sb.p + (size_t)i * len;
			uint32_t seq = base + i;

			t_fill(m, len, seq);
			memcpy(m, &seq, sizeof(seq));
			if (type == IBV_QPT_UD)
				t_post_ud(p.a, seq, p.ah_a, p.b->qp_num, p.qkey,
					  sb.mr, m, len, IBV_SEND_SIGNALED);
			else
				t_post_send(p.a, seq, IBV_WR_SEND, sb.mr, m,
					    len, IBV_SEND_SIGNALED, 0, 0);
		}
		for (uint32_t i = 0; i < DG_BURST; i++)
			T_EXPECT_WC(p.cq_a, &wc, base + i, IBV_WC_SUCCESS,
				    IBV_WC_SEND);
		/* What arrives, until the wire has been quiet a while. */
		while (t_poll(p.cq_b, &wc, 30) == 1) {
			uint8_t *m = rb.p + (wc.wr_id % (2 * DG_BURST)) * slot;
			uint32_t seq;

			T_WC_STATUS(&wc, IBV_WC_SUCCESS);
			if (type == IBV_QPT_UD)
				m += 40;
			T_EQ(wc.byte_len, type == IBV_QPT_UD ? len + 40 : len);
			memcpy(&seq, m, sizeof(seq));
			T_GE(seq, next); /* in order, never twice */
			T_LT(seq, base + DG_BURST);
			t_fill(m, 4, seq); /* the pattern under the number */
			T_CHECK_FILL(m, len, seq);
			next = seq + 1;
			got++;
			t_post_recv(p.b, posted, rb.mr,
				    rb.p + (size_t)(posted % (2 * DG_BURST)) *
						    slot,
				    slot);
			posted++;
		}
	}
	pm = 1 - pow(1 - prob, pkts);
	lost = DG_MSGS - got;
	t_log("%s: %u of %u arrived; %.0f lost, %.1f expected",
	      type == IBV_QPT_UD ? "ud" : "uc", got, DG_MSGS, lost,
	      DG_MSGS * pm);
	if (prob == 0)
		T_EQ(got, DG_MSGS);
	else if (lost < DG_MSGS * pm * 0.4 || lost > DG_MSGS * pm * 2 + 10)
		T_FAIL("%.0f messages lost, %.1f expected", lost, DG_MSGS * pm);
	t_buf_free(&sb);
	t_buf_free(&rb);
	t_pair_destroy(&p);
}

static void retry_exceeded(struct t_dev *d, int timeout, int retry)
{
	struct t_conn_opts o;
	struct ibv_qp_init_attr ia;
	struct t_pair p;
	struct t_buf b;
	struct ibv_wc wc;
	double predicted = 4.096e-3 * (1u << timeout) * (retry + 1);
	uint64_t t0, ms;

	t_conn_opts_init(&o);
	o.timeout = timeout;
	o.retry_cnt = retry;
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	t_pair_create(d, &p, IBV_QPT_RC, &ia, &o);
	t_buf_alloc(d, &b, 8192, T_ACCESS_ALL);
	t0 = t_now_ms();
	t_post_send(p.a, 7, IBV_WR_RDMA_WRITE, b.mr, b.p, 4096,
		    IBV_SEND_SIGNALED, (uint64_t)(uintptr_t)(b.p + 4096),
		    b.mr->rkey);
	if (t_poll(p.cq_a, &wc, (int)(predicted * 4) + 2000) != 1)
		T_FAIL("no completion within %.0f ms", predicted * 4 + 2000);
	ms = t_now_ms() - t0;
	T_EQ(wc.wr_id, 7);
	T_WC_STATUS(&wc, IBV_WC_RETRY_EXC_ERR);
	t_log("retry: failed after %llu ms, %.1f ms predicted",
	      (unsigned long long)ms, predicted);
	if (ms < predicted * 0.5 || ms > predicted * 3)
		T_FAIL("failed after %llu ms, %.1f ms predicted",
		       (unsigned long long)ms, predicted);
	t_buf_free(&b);
	t_pair_destroy(&p);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rc";
	struct t_dev d;

	t_init("fault_xfer");
	t_log("mode %s, faults \"%s\", wire %s", mode,
	      getenv("SOFTRDMA_FAULTS") ? getenv("SOFTRDMA_FAULTS") : "",
	      getenv("SOFTRDMA_WIRE") ? getenv("SOFTRDMA_WIRE") : "auto");
	t_dev_open(&d);
	if (!strcmp(mode, "rc"))
		rc_stream(&d);
	else if (!strcmp(mode, "ud") && argc > 2)
		datagrams(&d, IBV_QPT_UD, strtod(argv[2], NULL));
	else if (!strcmp(mode, "uc") && argc > 2)
		datagrams(&d, IBV_QPT_UC, strtod(argv[2], NULL));
	else if (!strcmp(mode, "retry") && argc > 3)
		retry_exceeded(&d, (int)strtol(argv[2], NULL, 0),
			       (int)strtol(argv[3], NULL, 0));
	else
		T_FAIL("usage: func_fault_xfer rc | ud P | uc P | retry T R");
	t_dev_close(&d);
	t_pass();
}
