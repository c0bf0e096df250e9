/* SPDX-License-Identifier: MIT */
/*
 * Registration loses no write.  Four threads increment their own word in
 * every 64-byte slot of a 1 MiB heap buffer, and a fifth read(2)s from a
 * pipe into another part of it (the kernel's copy_to_user), while the main
 * thread registers and deregisters the whole buffer 1000 times (and
 * re-registers it now and then), with an RDMA WRITE and READ through the
 * MR every few cycles.  Whatever the library does to make the pages
 * reachable by the device (move them onto a memfd under a write-protect
 * guard, or leave them in place), no increment and no byte read may be
 * lost.  ctest runs it once per memory access mode (SOFTRDMA_MEM_ACCESS,
 * SOFTRDMA_MOVE_GUARD).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_util.h"

#define BUF_LEN (1024 * 1024)
#define SLOT 64
#define NWRITERS 4
#define READ_LEN (64 * 1024) /* where read(2) lands: the buffer's end */
#define RDMA_LEN 4096	     /* where RDMA WRITE lands: just before it */
#define COUNT_LEN (BUF_LEN - READ_LEN - RDMA_LEN)
#define NSLOTS (COUNT_LEN / SLOT)
#define CHUNK 4096
#define CYCLES 1000
#define REREG_EVERY 7
#define RDMA_EVERY 25

static uint8_t *buf;
static atomic_bool stop;
static uint64_t passes[NWRITERS];
static int pipefd[2];
static atomic_uint read_bad, chunks_read;

static void *writer(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg;
	uint64_t n = 0;

	/* A whole pass at a time, so every word counts the same passes. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (size_t s = 0; s < NSLOTS; s++) {
			volatile uint64_t *w =
				(volatile uint64_t *)(buf + s * SLOT) + t;

			*w = *w + 1;
		}
		n++;
		/* Leave the registering thread room on small machines. */
		sched_yield();
	}
	passes[t] = n;
	return NULL;
}

/* Feeds the pipe: chunk k holds the pattern of seed k. */
static void *feeder(void *arg)
{
	static uint8_t chunk[CHUNK];

	(void)arg;
	for (uint32_t k = 1;; k++) {
		size_t off = 0;

		t_fill(chunk, CHUNK, k);
		while (off < CHUNK) {
			ssize_t n = write(pipefd[1], chunk + off, CHUNK - off);

			if (n <= 0)
				return NULL; /* the reader is gone */
			off += (size_t)n;
		}
	}
}

/* read(2) straight into the buffer, then check what arrived there. */
static void *reader(void *arg)
{
	uint8_t *area = buf + BUF_LEN - READ_LEN;

	(void)arg;
	for (uint32_t k = 1; !atomic_load_explicit(&stop, memory_order_relaxed);
	     k++) {
		uint8_t *dst = area + (k % (READ_LEN / CHUNK)) * CHUNK;
		size_t off = 0;

		while (off < CHUNK) {
			ssize_t n = read(pipefd[0], dst + off, CHUNK - off);

			if (n <= 0) {
				atomic_fetch_add(&read_bad, 1);
				return NULL;
			}
			off += (size_t)n;
		}
		for (size_t i = 0; i < CHUNK; i++) {
			if (dst[i] != t_pattern(k, i)) {
				atomic_fetch_add(&read_bad, 1);
				break;
			}
		}
		atomic_fetch_add(&chunks_read, 1);
	}
	return NULL;
}

/* An RDMA WRITE into the MR and a READ back, through the device. */
static void rdma_check(struct t_pair *p, struct t_buf *src, struct t_buf *dst,
		       struct ibv_mr *mr, uint32_t seed)
{
	uint8_t *area = buf + COUNT_LEN;

	t_fill(src->p, RDMA_LEN, seed);
	t_post_send(p->a, seed, IBV_WR_RDMA_WRITE, src->mr, src->p, RDMA_LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)area, mr->rkey);
	T_EXPECT_WC(p->cq_a, NULL, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(area, RDMA_LEN, seed);
	memset(dst->p, 0, RDMA_LEN);
	t_post_send(p->a, seed + 1, IBV_WR_RDMA_READ, dst->mr, dst->p, RDMA_LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)area, mr->rkey);
	T_EXPECT_WC(p->cq_a, NULL, seed + 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(dst->p, RDMA_LEN, seed);
}

int main(void)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	pthread_t w[NWRITERS], rd, fd_thr;
	struct t_buf src, dst;
	struct t_pair p;
	struct t_dev d;
	uint64_t lost = 0;

	t_init("mr_reg_race");
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &src, RDMA_LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, RDMA_LEN, T_ACCESS_ALL);
	/* A heap buffer, as applications have them: not page aligned. */
	buf = T_NONNULL(calloc(1, BUF_LEN));
	T_ASSERT(!pipe(pipefd));
	signal(SIGPIPE, SIG_IGN); /* the feeder learns the reader left */

	for (unsigned int t = 0; t < NWRITERS; t++)
		T_EQ(pthread_create(&w[t], NULL, writer, (void *)(uintptr_t)t),
		     0);
	T_EQ(pthread_create(&fd_thr, NULL, feeder, NULL), 0);
	T_EQ(pthread_create(&rd, NULL, reader, NULL), 0);

	for (unsigned int i = 0; i < CYCLES; i++) {
		struct ibv_mr *mr =
			T_NONNULL(ibv_reg_mr(d.pd, buf, BUF_LEN, access));

		if (i % REREG_EVERY == 0) {
			/* Half the buffer, then all of it again. */
			T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					  NULL, buf + BUF_LEN / 2, BUF_LEN / 2,
					  0),
			     0);
			T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					  NULL, buf, BUF_LEN, 0),
			     0);
		}
		if (i % RDMA_EVERY == 0)
			rdma_check(&p, &src, &dst, mr, 1000 + 2 * i);
		T_EQ(ibv_dereg_mr(mr), 0);
	}

	atomic_store(&stop, true);
	for (unsigned int t = 0; t < NWRITERS; t++)
		T_EQ(pthread_join(w[t], NULL), 0);
	T_EQ(pthread_join(rd, NULL), 0);
	close(pipefd[0]);
	T_EQ(pthread_join(fd_thr, NULL), 0);
	close(pipefd[1]);

	for (size_t s = 0; s < NSLOTS; s++)
		for (unsigned int t = 0; t < NWRITERS; t++) {
			uint64_t v = ((uint64_t *)(buf + s * SLOT))[t];

			lost += passes[t] > v ? passes[t] - v : 0;
			T_ASSERT(v <= passes[t]);
		}
	t_log("passes %llu %llu %llu %llu, chunks read %u",
	      (unsigned long long)passes[0], (unsigned long long)passes[1],
	      (unsigned long long)passes[2], (unsigned long long)passes[3],
	      atomic_load(&chunks_read));
	T_EQ(lost, 0);
	T_EQ(atomic_load(&read_bad), 0);
	T_ASSERT(atomic_load(&chunks_read) > 0);

	free(buf);
	t_buf_free(&src);
	t_buf_free(&dst);
	t_pair_destroy(&p);
	t_dev_close(&d);
	return T_EXIT_PASS;
}
