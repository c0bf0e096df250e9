/* SPDX-License-Identifier: MIT */
/*
 * ibv_reg_mr and ibv_dereg_mr from several threads at once while other
 * threads run SEND/WRITE traffic.  The library moves registered pages
 * onto shared memfds and keeps one list of these segments for the whole
 * process, refcounted by the MRs using them: here three threads register
 * random ranges of their own region and of one region they all share
 * (overlapping each other's MRs, holding up to three at a time), use every
 * new MR as the source of RDMA WRITEs from both its ends, and deregister
 * in random order.  The data sent from each MR, the traffic running
 * alongside, and the regions' content must all stay intact; at the end no
 * page of the regions may still be on a memfd (the last user moved it
 * back).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_util.h"

#define NREG 3 /* at most 3: see quarter() */
#define NXFER 2
#define REG_ITERS 400
#define HELD_MAX 3
#define SHARED_PAGES 24
#define PRIVATE_PAGES 12
#define PROBE 2048 /* bytes written from each end of a new MR */
#define XFER_MSG 4096
#define XFER_MIN 50
#define SEED_SHARED 0xab5u

struct reg_thread {
	unsigned int id;
	pthread_t thread;
	struct t_pair pair;
	struct t_buf dst;
	uint8_t *region; /* private, PRIVATE_PAGES */
	uint8_t *shadow; /* what the region should hold */
	unsigned int regs;
};

struct xfer_thread {
	unsigned int id;
	pthread_t thread;
	struct t_pair pair;
	struct t_buf src, dst;
	unsigned int iters;
};

static struct t_dev dev;
static size_t page;
static uint8_t *shared, *shared_shadow;
static struct reg_thread regs[NREG];
static struct xfer_thread xfers[NXFER];
static atomic_bool stop;

static size_t shared_len(void)
{
	return SHARED_PAGES * page;
}

static size_t private_len(void)
{
	return PRIVATE_PAGES * page;
}

/*
 * Who may write what.  A private region is its thread's alone.  Each page
 * of the shared region is cut in quarters: quarter t is written by reg
 * thread t only, the last quarter never; a thread checks its own quarters
 * and the last.  A thread writes only inside an MR it holds, whose pages
 * therefore stay where they are.
 */
static unsigned int quarter(size_t at)
{
	return (unsigned int)((at % page) / (page / 4));
}

static bool may_write(const struct reg_thread *r, bool in_shared, size_t at)
{
	return !in_shared || quarter(at) == r->id;
}

static bool may_check(const struct reg_thread *r, bool in_shared, size_t at)
{
	return !in_shared || quarter(at) == r->id || quarter(at) == 3;
}

/* Copy `len` bytes at `addr` of the MR to the thread's dst buffer with an
 * RDMA WRITE and check they arrived as the CPU last wrote them. */
static void probe(struct reg_thread *r, struct ibv_mr *mr, bool in_shared,
		  size_t off, uint32_t len, uint64_t wr_id)
{
	const uint8_t *shadow = in_shared ? shared_shadow : r->shadow;
	uint8_t *base = in_shared ? shared : r->region;
	struct ibv_wc wc;

	memset(r->dst.p, 0, len);
	t_post_send(r->pair.a, wr_id, IBV_WR_RDMA_WRITE, mr, base + off, len,
		    IBV_SEND_SIGNALED, (uintptr_t)r->dst.p, r->dst.mr->rkey);
	T_EXPECT_WC(r->pair.cq_a, &wc, wr_id, IBV_WC_SUCCESS,
		    IBV_WC_RDMA_WRITE);
	for (uint32_t i = 0; i < len; i++) {
		size_t at = off + i;

		if (may_check(r, in_shared, at) && r->dst.p[i] != shadow[at])
			T_FAIL("reg thread %u, MR %p+%zu: byte %zu of the %s "
			       "region arrived as %#x, the CPU wrote %#x",
			       r->id, mr->addr, mr->length, at,
			       in_shared ? "shared" : "private", r->dst.p[i],
			       shadow[at]);
	}
}

static struct ibv_mr *reg_one(struct reg_thread *r, unsigned int *rs)
{
	static const int access[] = { IBV_ACCESS_LOCAL_WRITE, T_ACCESS_ALL, 0 };
	bool in_shared = rand_r(rs) % 2;
	uint8_t *base = in_shared ? shared : r->region;
	uint8_t *shadow = in_shared ? shared_shadow : r->shadow;
	size_t rlen = in_shared ? shared_len() : private_len();
	size_t off = (size_t)rand_r(rs) % (rlen - 1);
	size_t max = rlen - off < 3 * page + 100 ? rlen - off : 3 * page + 100;
	size_t len = 1 + (size_t)rand_r(rs) % max;
	uint32_t n = len < PROBE ? (uint32_t)len : PROBE;
	uint32_t seed = (r->id << 24) ^ r->regs;
	struct ibv_mr *mr;

	mr = ibv_reg_mr(dev.pd, base + off, len, access[rand_r(rs) % 3]);
	if (!mr)
		T_FAIL("reg thread %u: ibv_reg_mr(%s+%zu, %zu): %s", r->id,
		       in_shared ? "shared" : "private", off, len,
		       strerror(errno));
	T_PTR_EQ(mr->addr, base + off);
	T_EQ(mr->length, len);
	/* New content through the CPU: the device must see it, not what
	 * the pages held when some MR first moved them. */
	for (size_t at = off; at < off + len; at++)
		if (may_write(r, in_shared, at))
			base[at] = shadow[at] = t_pattern(seed, at);
	/* Both ends of the MR reach the device. */
	probe(r, mr, in_shared, off, n, 2 * r->regs);
	probe(r, mr, in_shared, off + len - n, n, 2 * r->regs + 1);
	r->regs++;
	return mr;
}

static void *reg_main(void *arg)
{
	struct reg_thread *r = arg;
	struct ibv_mr *held[HELD_MAX];
	unsigned int rs = 0x1234u + r->id, nheld = 0;

	for (unsigned int i = 0; i < REG_ITERS; i++) {
		if (nheld < HELD_MAX && (!nheld || rand_r(&rs) % 2)) {
			held[nheld++] = reg_one(r, &rs);
		} else {
			unsigned int k = (unsigned int)rand_r(&rs) % nheld;

			T_OK(ibv_dereg_mr(held[k]));
			held[k] = held[--nheld];
		}
	}
	while (nheld)
		T_OK(ibv_dereg_mr(held[--nheld]));
	return NULL;
}

static void *xfer_main(void *arg)
{
	struct xfer_thread *x = arg;
	struct t_pair *p = &x->pair;
	struct ibv_wc wc;

	while (!atomic_load(&stop) || x->iters < XFER_MIN) {
		uint32_t it = x->iters++, len = 1 + (it * 97u) % XFER_MSG;
		uint32_t seed = (x->id << 24) ^ (it << 1);

		memset(x->dst.p, 0, 2 * XFER_MSG);
		t_fill(x->src.p, len, seed);
		t_fill(x->src.p + XFER_MSG, len, seed + 1);
		t_post_recv(p->b, it, x->dst.mr, x->dst.p, XFER_MSG);
		t_post_send(p->a, 2 * it, IBV_WR_SEND, x->src.mr, x->src.p, len,
			    IBV_SEND_SIGNALED, 0, 0);
		t_post_send(p->a, 2 * it + 1, IBV_WR_RDMA_WRITE, x->src.mr,
			    x->src.p + XFER_MSG, len, IBV_SEND_SIGNALED,
			    (uintptr_t)x->dst.p + XFER_MSG, x->dst.mr->rkey);
		T_EXPECT_WC(p->cq_a, &wc, 2 * it, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p->cq_a, &wc, 2 * it + 1, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		T_EXPECT_WC(p->cq_b, &wc, it, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
		T_CHECK_FILL(x->dst.p, len, seed);
		T_CHECK_FILL(x->dst.p + XFER_MSG, len, seed + 1);
	}
	return NULL;
}

/* Does any mapping of our memfds remain in [p, p + len)? */
static bool memfd_left(const uint8_t *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		T_FAIL("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo &&
		    strstr(line, "/memfd:softrdma")) {
			t_log("still on a memfd: %s", line);
			found = true;
		}
	}
	fclose(f);
	return found;
}

int main(void)
{
	unsigned int total = 0;

	t_init("mt_reg_mr");
	page = (size_t)sysconf(_SC_PAGESIZE);
	t_dev_open(&dev);
	shared = t_zalloc(shared_len());
	t_fill(shared, shared_len(), SEED_SHARED);
	shared_shadow = T_NONNULL(malloc(shared_len()));
	memcpy(shared_shadow, shared, shared_len());
	for (unsigned int i = 0; i < NREG; i++) {
		struct reg_thread *r = &regs[i];

		r->id = i;
		t_pair_create(&dev, &r->pair, IBV_QPT_RC, NULL, NULL);
		t_buf_alloc(&dev, &r->dst, PROBE, T_ACCESS_ALL);
		r->region = t_zalloc(private_len());
		t_fill(r->region, private_len(), r->id + 1);
		r->shadow = T_NONNULL(malloc(private_len()));
		memcpy(r->shadow, r->region, private_len());
	}
	for (unsigned int i = 0; i < NXFER; i++) {
		struct xfer_thread *x = &xfers[i];

		x->id = i;
		t_pair_create(&dev, &x->pair, IBV_QPT_RC, NULL, NULL);
		t_buf_alloc(&dev, &x->src, 2 * XFER_MSG, T_ACCESS_ALL);
		t_buf_alloc(&dev, &x->dst, 2 * XFER_MSG, T_ACCESS_ALL);
	}

	for (unsigned int i = 0; i < NXFER; i++)
		T_OK(pthread_create(&xfers[i].thread, NULL, xfer_main,
				    &xfers[i]));
	for (unsigned int i = 0; i < NREG; i++)
		T_OK(pthread_create(&regs[i].thread, NULL, reg_main, &regs[i]));
	for (unsigned int i = 0; i < NREG; i++)
		T_OK(pthread_join(regs[i].thread, NULL));
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < NXFER; i++)
		T_OK(pthread_join(xfers[i].thread, NULL));

	T_MEMEQ(shared, shared_shadow, shared_len());
	if (memfd_left(shared, shared_len()))
		T_FAIL("shared region: pages left on a memfd after the last "
		       "MR over them went");
	for (unsigned int i = 0; i < NREG; i++) {
		struct reg_thread *r = &regs[i];

		T_MEMEQ(r->region, r->shadow, private_len());
		if (memfd_left(r->region, private_len()))
			T_FAIL("region of reg thread %u: pages left on a "
			       "memfd",
			       i);
		T_EXPECT_NO_WC(r->pair.cq_a, 0);
		total += r->regs;
	}
	t_log("%u registrations by %d threads, %u + %u transfers alongside",
	      total, NREG, xfers[0].iters, xfers[1].iters);

	for (unsigned int i = 0; i < NXFER; i++) {
		t_buf_free(&xfers[i].src);
		t_buf_free(&xfers[i].dst);
		t_pair_destroy(&xfers[i].pair);
	}
	for (unsigned int i = 0; i < NREG; i++) {
		t_buf_free(&regs[i].dst);
		t_pair_destroy(&regs[i].pair);
		t_free(regs[i].region, private_len());
		free(regs[i].shadow);
	}
	t_free(shared, shared_len());
	free(shared_shadow);
	t_dev_close(&dev);
	t_pass();
}
