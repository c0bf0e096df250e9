/* SPDX-License-Identifier: MIT */
/*
 * Four threads post to the same RC QP at once, each a chain of 1 to 4
 * WRs per ibv_post_send (SENDs and RDMA WRITEs mixed), with unique
 * wr_ids; a receiver thread keeps the peer's RQ full and one poller reaps
 * the send CQ.  A post is atomic and each poster's WRs keep their order:
 * the send completions of one poster come in the order it posted, the WRs
 * of one chain come back to back, and its SENDs arrive in order.  Every
 * payload is checked, and each WRITE slot ends with the last WRITE into
 * it.  Posters take send-queue credits, so a full SQ is a failure.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "t_util.h"

#define NPOSTERS 4
#define PER_POSTER 8000 /* WRs each */
#define MSG 256
#define SRC_SLOTS 64 /* per poster */
#define W_SLOTS 16   /* WRITE targets per poster */
#define SQ_DEPTH 128
#define RQ_DEPTH 128
#define HDR 8 /* poster and sequence number at the head of a SEND */

/* poster 8 bits | seq 32 bits | chain position 4 bits | chain length 4 */
#define WRID(t, s, pos, len)                                           \
	(((uint64_t)(t) << 40) | ((uint64_t)(s) << 8) | ((pos) << 4) | \
	 (uint64_t)(len))
#define WRID_T(w) ((unsigned int)((w) >> 40))
#define WRID_S(w) ((uint32_t)((w) >> 8))
#define WRID_POS(w) ((unsigned int)(((w) >> 4) & 0xf))
#define WRID_LEN(w) ((unsigned int)((w)&0xf))

struct poster {
	unsigned int id;
	pthread_t thread;
	_Atomic uint32_t done; /* WRs completed, in post order */
	int32_t last_write[W_SLOTS];
};

static struct t_dev dev;
static struct t_pair pair;
static struct t_buf src, dst, rbuf; /* src: per poster; dst: WRITE slots */
static struct poster posters[NPOSTERS];
static _Atomic int credits;
static uint32_t total_sends;

static bool is_send(unsigned int t, uint32_t s)
{
	return (s * 7u + t) % 3 == 0;
}

static uint32_t len_of(unsigned int t, uint32_t s)
{
	return HDR + (s * 13u + t * 5u) % (MSG - HDR + 1);
}

static uint32_t seed_of(unsigned int t, uint32_t s)
{
	return (t << 24) ^ s;
}

static uint8_t *src_slot(unsigned int t, uint32_t s)
{
	return src.p + ((size_t)t * SRC_SLOTS + s % SRC_SLOTS) * MSG;
}

static uint8_t *w_slot(unsigned int t, unsigned int slot)
{
	return dst.p + ((size_t)t * W_SLOTS + slot) * MSG;
}

static void take_credits(int n)
{
	uint64_t end = t_now_ms() + 2 * T_WAIT_MS;
	int c = atomic_load(&credits);

	for (;;) {
		if (c >= n && atomic_compare_exchange_weak(&credits, &c, c - n))
			return;
		if (c < n) {
			if (t_now_ms() > end)
				T_FAIL("no send credit for %d ms",
				       2 * T_WAIT_MS);
			sched_yield();
			c = atomic_load(&credits);
		}
	}
}

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4];
	unsigned int t = p->id;
	uint32_t s = 0;

	for (int i = 0; i < W_SLOTS; i++)
		p->last_write[i] = -1;
	while (s < PER_POSTER) {
		unsigned int n = 1 + (s / 3 + t) % 4;
		uint64_t end = t_now_ms() + 2 * T_WAIT_MS;

		if (n > PER_POSTER - s)
			n = PER_POSTER - s;
		/* The source slots must have been sent before refilling. */
		while (s + n -
			       atomic_load_explicit(&p->done,
						    memory_order_acquire) >
		       SRC_SLOTS) {
			if (t_now_ms() > end)
				T_FAIL("poster %u: WR %u never completed", t,
				       atomic_load(&p->done));
			sched_yield();
		}
		take_credits((int)n);
		for (unsigned int i = 0; i < n; i++) {
			uint32_t q = s + i, len = len_of(t, q);
			uint8_t *b = src_slot(t, q);

			memset(&wr[i], 0, sizeof(wr[i]));
			wr[i].wr_id = WRID(t, q, i, n);
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].send_flags = IBV_SEND_SIGNALED;
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
			sge[i] = (struct ibv_sge){ (uintptr_t)b, len,
						   src.mr->lkey };
			t_fill(b, len, seed_of(t, q));
			if (is_send(t, q)) {
				memcpy(b, &t, 4);
				memcpy(b + 4, &q, 4);
				wr[i].opcode = IBV_WR_SEND;
			} else {
				unsigned int slot = q % W_SLOTS;

				wr[i].opcode = IBV_WR_RDMA_WRITE;
				wr[i].wr.rdma.remote_addr =
					(uintptr_t)w_slot(t, slot);
				wr[i].wr.rdma.rkey = dst.mr->rkey;
				p->last_write[slot] = (int32_t)q;
			}
		}
		bad = NULL;
		T_OK(ibv_post_send(pair.a, wr, &bad));
		T_PTR_EQ(bad, NULL);
		s += n;
	}
	return NULL;
}

/* Keeps the RQ of b full and checks every SEND that lands. */
static void *receiver_main(void *arg)
{
	int64_t last_seq[NPOSTERS];
	uint32_t posted = 0, got = 0;
	uint64_t end = t_now_ms() + 4 * T_WAIT_MS;
	struct ibv_wc wc[8];

	(void)arg;
	for (int i = 0; i < NPOSTERS; i++)
		last_seq[i] = -1;
	while (got < total_sends) {
		int n;

		while (posted - got < RQ_DEPTH && posted < total_sends) {
			t_post_recv(pair.b, posted, rbuf.mr,
				    rbuf.p + (size_t)(posted % RQ_DEPTH) * MSG,
				    MSG);
			posted++;
		}
		n = ibv_poll_cq(pair.cq_b, 8, wc);
		T_GE(n, 0);
		if (!n) {
			if (t_now_ms() > end)
				T_FAIL("receiver: %u of %u SENDs arrived", got,
				       total_sends);
			sched_yield();
			continue;
		}
		end = t_now_ms() + 4 * T_WAIT_MS;
		for (int i = 0; i < n; i++) {
			const uint8_t *b;
			uint32_t t, q;

			T_WC_STATUS(&wc[i], IBV_WC_SUCCESS);
			T_EQ(wc[i].opcode, IBV_WC_RECV);
			/* Receives complete in the order they were posted. */
			T_EQ(wc[i].wr_id, got);
			b = rbuf.p + (size_t)(got % RQ_DEPTH) * MSG;
			memcpy(&t, b, 4);
			memcpy(&q, b + 4, 4);
			T_LT(t, NPOSTERS);
			T_ASSERT(is_send(t, q));
			T_GT((int64_t)q, last_seq[t]);
			last_seq[t] = q;
			T_EQ(wc[i].byte_len, len_of(t, q));
			for (uint32_t j = HDR; j < len_of(t, q); j++)
				if (b[j] != t_pattern(seed_of(t, q), j))
					T_FAIL("poster %u SEND %u: byte %u is "
					       "%#x, expected %#x",
					       t, q, j, b[j],
					       t_pattern(seed_of(t, q), j));
			got++;
		}
	}
	return NULL;
}

int main(void)
{
	struct ibv_qp_init_attr ia;
	uint32_t next[NPOSTERS] = { 0 };
	uint64_t prev = UINT64_MAX, reaped = 0;
	uint64_t total = (uint64_t)NPOSTERS * PER_POSTER;
	uint64_t end;
	pthread_t rthread;
	struct ibv_wc wc[16];

	t_init("mt_same_qp");
	t_dev_open(&dev);
	t_qp_init_attr(&ia, IBV_QPT_RC, NULL, NULL);
	ia.cap.max_send_wr = SQ_DEPTH;
	ia.cap.max_recv_wr = RQ_DEPTH;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	t_pair_create(&dev, &pair, IBV_QPT_RC, &ia, NULL);
	t_buf_alloc(&dev, &src, (size_t)NPOSTERS * SRC_SLOTS * MSG,
		    T_ACCESS_ALL);
	t_buf_alloc(&dev, &dst, (size_t)NPOSTERS * W_SLOTS * MSG, T_ACCESS_ALL);
	t_buf_alloc(&dev, &rbuf, (size_t)RQ_DEPTH * MSG, T_ACCESS_ALL);
	for (unsigned int t = 0; t < NPOSTERS; t++)
		for (uint32_t s = 0; s < PER_POSTER; s++)
			total_sends += is_send(t, s);
	atomic_store(&credits, SQ_DEPTH);

	T_OK(pthread_create(&rthread, NULL, receiver_main, NULL));
	for (unsigned int t = 0; t < NPOSTERS; t++) {
		posters[t].id = t;
		T_OK(pthread_create(&posters[t].thread, NULL, poster_main,
				    &posters[t]));
	}

	end = t_now_ms() + 4 * T_WAIT_MS;
	while (reaped < total) {
		int n = ibv_poll_cq(pair.cq_a, 16, wc);

		T_GE(n, 0);
		if (!n) {
			if (t_now_ms() > end)
				T_FAIL("%llu of %llu send completions",
				       (unsigned long long)reaped,
				       (unsigned long long)total);
			sched_yield();
			continue;
		}
		end = t_now_ms() + 4 * T_WAIT_MS;
		for (int i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;
			unsigned int t = WRID_T(id);
			uint32_t s = WRID_S(id);

			if (t >= NPOSTERS)
				T_FAIL("unknown wr_id %#llx",
				       (unsigned long long)id);
			T_WC_STATUS(&wc[i], IBV_WC_SUCCESS);
			T_EQ(wc[i].qp_num, pair.a->qp_num);
			T_EQ(wc[i].opcode,
			     is_send(t, s) ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
			/* In post order per poster: none lost, none twice. */
			T_EQ(s, next[t]);
			/* A chain is one post: nothing in between. */
			if (WRID_POS(id)) {
				T_EQ(WRID_T(prev), t);
				T_EQ(WRID_S(prev), s - 1);
				T_EQ(WRID_POS(prev), WRID_POS(id) - 1);
				T_EQ(WRID_LEN(prev), WRID_LEN(id));
			}
			next[t] = s + 1;
			prev = id;
			atomic_store_explicit(&posters[t].done, s + 1,
					      memory_order_release);
			atomic_fetch_add(&credits, 1);
			reaped++;
		}
	}
	for (unsigned int t = 0; t < NPOSTERS; t++)
		T_OK(pthread_join(posters[t].thread, NULL));
	T_OK(pthread_join(rthread, NULL));
	T_EXPECT_NO_WC(pair.cq_a, T_QUIET_MS);
	T_EXPECT_NO_WC(pair.cq_b, 0);

	for (unsigned int t = 0; t < NPOSTERS; t++) {
		T_EQ(next[t], PER_POSTER);
		for (unsigned int slot = 0; slot < W_SLOTS; slot++) {
			int32_t q = posters[t].last_write[slot];

			T_GE(q, 0);
			T_CHECK_FILL(w_slot(t, slot), len_of(t, (uint32_t)q),
				     seed_of(t, (uint32_t)q));
		}
	}
	t_log("%llu WRs from %d threads on one QP, %u SENDs",
	      (unsigned long long)total, NPOSTERS, total_sends);

	t_buf_free(&rbuf);
	t_buf_free(&dst);
	t_buf_free(&src);
	t_pair_destroy(&pair);
	t_dev_close(&dev);
	t_pass();
}
