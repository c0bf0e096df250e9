/* SPDX-License-Identifier: MIT */
/*
 * Explicit ODP MRs (IBV_ACCESS_ON_DEMAND).  Registering 1 GiB of untouched
 * memory touches nothing: the resident set does not grow, the mapping is
 * still our own anonymous one (not moved onto a memfd), and a WRITE into
 * the middle makes only the pages it lands on resident.  The MR works
 * wherever an MR works, data checked byte for byte: local SGEs of SEND,
 * WRITE, READ and atomics, remote targets of WRITE, READ and atomics, RC
 * and SRQ receives, UD, a type 1 window bound on it, ibv_rereg_mr (to an
 * ordinary MR and back, to another range), fork() (the parent's MR keeps
 * reaching the parent's pages, the child's copy is its own).  The kernel's
 * access rules still hold (REMOTE_WRITE without LOCAL_WRITE: EINVAL).
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define PG 4096
#define BIG (1ull << 30)
#define LEN (64 * 1024)
#define ODP (T_ACCESS_ALL | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_MW_BIND)

static size_t rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	T_ASSERT(f);
	T_EQ(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return res * (size_t)sysconf(_SC_PAGESIZE);
}

/* Is addr still in a private anonymous mapping of ours (no memfd)? */
static bool anon_at(const void *addr)
{
	char line[512];
	bool anon = false;
	FILE *f = fopen("/proc/self/maps", "r");

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, ino;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %n", &s, &e,
			   perms, &ino, &n) < 4)
			continue;
		if ((uintptr_t)addr >= s && (uintptr_t)addr < e)
			anon = ino == 0 && perms[3] == 'p';
	}
	fclose(f);
	return anon;
}

static void big_untouched(struct t_dev *d, struct t_buf *peer)
{
	uint8_t *m = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t before, after, mid = BIG / 2 + 3 * PG;
	struct ibv_mr *mr;
	struct t_pair p;

	T_ASSERT(m != MAP_FAILED);
	before = rss_bytes();
	mr = T_NONNULL(ibv_reg_mr(d->pd, m, BIG, ODP));
	after = rss_bytes();
	printf("# 1 GiB ODP registration: RSS %zu -> %zu KiB\n", before >> 10,
	       after >> 10);
	/* A pinning registration would fault in 262144 pages. */
	T_ASSERT(after < before + 2 * 1024 * 1024);
	T_ASSERT(anon_at(m) && anon_at(m + mid));
	T_EQ(mr->addr, m);
	T_EQ(mr->length, BIG);

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	t_fill(peer->p, 2 * PG, 1);
	t_post_send(p.a, 1, IBV_WR_RDMA_WRITE, peer->mr, peer->p, 2 * PG,
		    IBV_SEND_SIGNALED, (uintptr_t)(m + mid), mr->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(m + mid, 2 * PG, 1);
	T_EQ(m[mid - 1], 0);
	T_EQ(m[mid + 2 * PG], 0);
	T_ASSERT(rss_bytes() < before + 4 * 1024 * 1024);
	/* The last byte of the range is reachable too. */
	t_post_send(p.a, 2, IBV_WR_RDMA_READ, peer->mr, peer->p, 1,
		    IBV_SEND_SIGNALED, (uintptr_t)(m + BIG - 1), mr->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_EQ(peer->p[0], 0);
	t_post_send(p.a, 3, IBV_WR_RDMA_READ, peer->mr, peer->p, 2,
		    IBV_SEND_SIGNALED, (uintptr_t)(m + BIG - 1), mr->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 3, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	t_pair_destroy(&p);
	T_OK(ibv_dereg_mr(mr));
	T_OK(munmap(m, BIG));
}

/* Every operation with ODP memory on both sides. */
static void rc_ops(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	uint8_t *pa = a->addr, *pb = b->addr;
	struct t_pair p;
	struct ibv_wc wc;

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	/* SEND -> RECV */
	memset(pb, 0, LEN);
	t_fill(pa, LEN, 10);
	t_post_recv(p.b, 10, b, pb, LEN);
	t_post_send(p.a, 11, IBV_WR_SEND, a, pa, LEN, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 11, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 10, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, LEN);
	T_CHECK_FILL(pb, LEN, 10);
	/* WRITE */
	t_fill(pa, LEN, 12);
	t_post_send(p.a, 12, IBV_WR_RDMA_WRITE, a, pa, LEN - 5,
		    IBV_SEND_SIGNALED, (uintptr_t)pb + 5, b->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 12, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(pb + 5, LEN - 5, 12);
	/* READ */
	t_fill(pb, LEN, 13);
	memset(pa, 0, LEN);
	t_post_send(p.a, 13, IBV_WR_RDMA_READ, a, pa, LEN, IBV_SEND_SIGNALED,
		    (uintptr_t)pb, b->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 13, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(pa, LEN, 13);
	/* atomics: the old value into ODP memory, the target ODP memory */
	*(uint64_t *)(pb + 64) = 1000;
	t_post_atomic(p.a, 14, IBV_WR_ATOMIC_FETCH_AND_ADD, a, pa + 8,
		      (uintptr_t)pb + 64, b->rkey, 7, 0);
	T_EXPECT_WC(p.cq_a, &wc, 14, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	T_EQ(*(uint64_t *)(pa + 8), 1000);
	T_EQ(*(uint64_t *)(pb + 64), 1007);
	t_post_atomic(p.a, 15, IBV_WR_ATOMIC_CMP_AND_SWP, a, pa + 16,
		      (uintptr_t)pb + 64, b->rkey, 1007, 42);
	T_EXPECT_WC(p.cq_a, &wc, 15, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	T_EQ(*(uint64_t *)(pa + 16), 1007);
	T_EQ(*(uint64_t *)(pb + 64), 42);
	t_pair_destroy(&p);
}

static void srq_recv(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr ia;
	uint8_t *pa = a->addr, *pb = b->addr;
	struct ibv_srq *srq = T_NONNULL(ibv_create_srq(d->pd, &si));
	struct ibv_wc wc;
	struct t_pair p;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_RC;
	ia.srq = srq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	t_pair_create(d, &p, IBV_QPT_RC, &ia, NULL);
	memset(pb, 0, LEN);
	t_post_srq_recv(srq, 20, b, pb + 100, 5000);
	t_fill(pa, 5000, 20);
	t_post_send(p.a, 21, IBV_WR_SEND, a, pa, 5000, IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p.cq_a, &wc, 21, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 20, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 5000);
	T_CHECK_FILL(pb + 100, 5000, 20);
	T_EQ(pb[99], 0);
	T_EQ(pb[5100], 0);
	t_pair_destroy(&p);
	T_OK(ibv_destroy_srq(srq));
}

static void ud(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	uint8_t *pa = a->addr, *pb = b->addr;
	struct ibv_wc wc;
	struct t_pair p;

	t_pair_create(d, &p, IBV_QPT_UD, NULL, NULL);
	memset(pb, 0, LEN);
	t_post_recv(p.b, 30, b, pb, 40 + 1000);
	t_fill(pa, 1000, 30);
	t_post_ud(p.a, 31, p.ah_a, p.b->qp_num, p.qkey, a, pa, 1000,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(p.cq_a, &wc, 31, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 30, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 40 + 1000);
	T_CHECK_FILL(pb + 40, 1000, 30);
	t_pair_destroy(&p);
}

static void window(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	struct ibv_mw *mw = T_NONNULL(ibv_alloc_mw(d->pd, IBV_MW_TYPE_1));
	struct ibv_mw_bind bind = { 0 };
	uint8_t *pa = a->addr, *pb = b->addr;
	struct t_pair p;

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	bind.wr_id = 40;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = b;
	bind.bind_info.addr = (uintptr_t)pb + PG;
	bind.bind_info.length = PG;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	T_OK(ibv_bind_mw(p.b, mw, &bind));
	T_EXPECT_WC(p.cq_b, NULL, 40, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	memset(pb, 0, LEN);
	t_fill(pa, PG, 41);
	t_post_send(p.a, 41, IBV_WR_RDMA_WRITE, a, pa, PG, IBV_SEND_SIGNALED,
		    (uintptr_t)pb + PG, mw->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 41, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(pb + PG, PG, 41);
	/* Outside the window: refused, even though inside the MR. */
	t_post_send(p.a, 42, IBV_WR_RDMA_WRITE, a, pa, 8, IBV_SEND_SIGNALED,
		    (uintptr_t)pb, mw->rkey);
	T_EXPECT_WC(p.cq_a, NULL, 42, IBV_WC_REM_ACCESS_ERR, T_ANY_OPCODE);
	t_pair_destroy(&p);
	/* A bound MR cannot go, as with any MR. */
	T_EQ(ibv_dereg_mr(b), EINVAL);
	T_OK(ibv_dealloc_mw(mw));
}

static void write_to(struct t_dev *d, struct ibv_mr *src, struct ibv_mr *dst,
		     void *at, uint32_t len, uint32_t seed)
{
	struct t_pair p;

	t_pair_create(d, &p, IBV_QPT_RC, NULL, NULL);
	t_fill(src->addr, len, seed);
	t_post_send(p.a, seed, IBV_WR_RDMA_WRITE, src, src->addr, len,
		    IBV_SEND_SIGNALED, (uintptr_t)at, dst->rkey);
	T_EXPECT_WC(p.cq_a, NULL, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(at, len, seed);
	t_pair_destroy(&p);
}

static void rereg(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	uint8_t *other = t_zalloc(2 * PG);
	uint8_t *pb = b->addr;
	uint32_t key = b->rkey;

	/* ODP -> ordinary -> ODP over the same range, keys kept. */
	T_OK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  T_ACCESS_ALL));
	T_EQ(b->rkey, key);
	write_to(d, a, b, pb + 10, 3000, 50);
	T_OK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, ODP));
	write_to(d, a, b, pb + 20, 3000, 51);
	/* Another range. */
	T_OK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other,
			  2 * PG, 0));
	T_EQ(b->addr, other);
	write_to(d, a, b, other + 1, 2 * PG - 1, 52);
	/* Rules still apply on the way. */
	T_EQ(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_WRITE),
	     IBV_REREG_MR_ERR_CMD);
	T_OK(ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, pb, LEN,
			  0));
	write_to(d, a, b, pb, LEN, 53);
	t_free(other, 2 * PG);
}

/* After fork() the parent's ODP MR reaches the parent's pages only. */
static void forked(struct t_dev *d, struct ibv_mr *a, struct ibv_mr *b)
{
	uint8_t *pb = b->addr;
	int st, sync[2];
	pid_t pid;
	char c;

	memset(pb, 0x11, LEN);
	T_OK(pipe(sync));
	pid = fork();
	T_ASSERT(pid >= 0);
	if (!pid) {
		/* The child's copy: what the parent had, then its own. */
		for (size_t i = 0; i < LEN; i++)
			if (pb[i] != 0x11)
				_exit(1);
		memset(pb, 0x22, LEN);
		if (read(sync[0], &c, 1) != 1)
			_exit(2);
		for (size_t i = 0; i < LEN; i++)
			if (pb[i] != 0x22)
				_exit(3);
		_exit(0);
	}
	write_to(d, a, b, pb, LEN, 60);
	T_EQ(write(sync[1], "x", 1), 1);
	T_EQ(waitpid(pid, &st, 0), pid);
	T_ASSERT(WIFEXITED(st));
	T_EQ(WEXITSTATUS(st), 0);
	write_to(d, a, b, pb + 7, 100, 61);
	close(sync[0]);
	close(sync[1]);
}

int main(void)
{
	struct ibv_mr *a, *b;
	struct t_buf peer;
	uint8_t *pa, *pb;
	struct t_dev d;

	t_init("odp_explicit");
	t_dev_open(&d);
	t_buf_alloc(&d, &peer, 4 * PG, T_ACCESS_ALL);
	big_untouched(&d, &peer);

	pa = t_zalloc(LEN);
	pb = t_zalloc(LEN);
	T_NULL_ERRNO(ibv_reg_mr(d.pd, pa, LEN,
				IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_WRITE),
		     EINVAL);
	a = T_NONNULL(ibv_reg_mr(d.pd, pa, LEN, ODP));
	b = T_NONNULL(ibv_reg_mr(d.pd, pb, LEN, ODP));
	rc_ops(&d, a, b);
	srq_recv(&d, a, b);
	ud(&d, a, b);
	window(&d, a, b);
	rereg(&d, a, b);
	forked(&d, a, b);
	T_OK(ibv_dereg_mr(a));
	T_OK(ibv_dereg_mr(b));
	t_free(pa, LEN);
	t_free(pb, LEN);
	t_buf_free(&peer);
	t_dev_close(&d);
	return 0;
}
