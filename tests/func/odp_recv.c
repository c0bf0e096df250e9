/* SPDX-License-Identifier: MIT */
/*
 * UC and UD into memory on demand (docs/trust.md): a receive completes
 * only once its data is there (UC: written by the owner's thread; UD:
 * still by the daemon, after the maps check).
 *   - UC: a 100 B SEND, a 64 KiB SEND (16 packets) and a 32 KiB WRITE
 *     with immediate land intact, each visible when its CQE is polled,
 *     in order;
 *   - UD: SENDs of 100 B and 2000 B land intact behind their GRH, each
 *     visible when its CQE is polled;
 *   - into a write-protected receive buffer, a SEND completes the receive
 *     with LOC_PROT_ERR, changes no byte, and the QP goes to the error
 *     state (as a copy the daemon refused would).
 */
#include <string.h>
#include <sys/mman.h>

#include "t_util.h"

#define LEN (256u * 1024)
#define SEED 11

struct bufs {
	struct t_dev *d;
	uint8_t *src, *dst, *want;
	struct ibv_mr *smr, *rmr;
};

static void bufs_open(struct bufs *b, struct t_dev *d)
{
	b->d = d;
	b->src = t_zalloc(LEN);
	b->want = t_zalloc(LEN);
	b->dst = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(b->dst != MAP_FAILED);
	t_fill(b->src, LEN, SEED);
	b->smr = ibv_reg_mr(d->pd, b->src, LEN, IBV_ACCESS_LOCAL_WRITE);
	T_NONNULL(b->smr);
	b->rmr = ibv_reg_mr(d->pd, b->dst, LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_ON_DEMAND);
	T_NONNULL(b->rmr);
}

static void bufs_close(struct bufs *b)
{
	T_OK(ibv_dereg_mr(b->rmr));
	T_OK(ibv_dereg_mr(b->smr));
	T_OK(munmap(b->dst, LEN));
	t_free(b->src, LEN);
	t_free(b->want, LEN);
}

/* Write-protected: the receive is refused, nothing changed, the QP stops;
 * send() posts one SEND of 100 B from src + 200000. */
static void refused(struct bufs *b, struct t_pair *p,
		    void (*send)(struct bufs *, struct t_pair *))
{
	struct ibv_wc wc;

	memcpy(b->want, b->dst, LEN);
	T_OK(mprotect(b->dst, LEN, PROT_READ));
	t_post_recv(p->b, 4, b->rmr, b->dst + 8192, 4096);
	send(b, p);
	T_EXPECT_WC(p->cq_a, &wc, 14, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p->cq_b, &wc, 4, IBV_WC_LOC_PROT_ERR, T_ANY_OPCODE);
	T_MEMEQ(b->dst, b->want, LEN);
	T_EQ(t_qp_state(p->b), IBV_QPS_ERR);
	T_OK(mprotect(b->dst, LEN, PROT_READ | PROT_WRITE));
}

static void uc_send(struct bufs *b, struct t_pair *p)
{
	t_post_send(p->a, 14, IBV_WR_SEND, b->smr, b->src + 200000, 100,
		    IBV_SEND_SIGNALED, 0, 0);
}

/* A pair of type, the buffers, and receives 1 (at 0) and 2 (at 64 KiB). */
static void start(struct t_dev *d, struct t_pair *p, struct bufs *b,
		  enum ibv_qp_type type)
{
	t_pair_create(d, p, type, NULL, NULL);
	bufs_open(b, d);
	t_post_recv(p->b, 1, b->rmr, b->dst, 4096);
	t_post_recv(p->b, 2, b->rmr, b->dst + 65536,
		    type == IBV_QPT_UC ? 65536 : 4096);
}

static void uc(struct t_dev *d)
{
	struct ibv_wc wc;
	struct t_pair p;
	struct bufs b;

	start(d, &p, &b, IBV_QPT_UC);
	t_post_recv(p.b, 3, b.rmr, b.dst + 131072, 4096);
	t_post_send(p.a, 11, IBV_WR_SEND, b.smr, b.src, 100, IBV_SEND_SIGNALED,
		    0, 0);
	t_post_send(p.a, 12, IBV_WR_SEND, b.smr, b.src + 4096, 65536,
		    IBV_SEND_SIGNALED, 0, 0);
	t_post_send(p.a, 13, IBV_WR_RDMA_WRITE_WITH_IMM, b.smr, b.src + 100000,
		    32768, IBV_SEND_SIGNALED, (uintptr_t)b.dst + 163840,
		    b.rmr->rkey);
	for (uint64_t id = 11; id <= 13; id++)
		T_EXPECT_WC(p.cq_a, &wc, id, IBV_WC_SUCCESS, T_ANY_OPCODE);

	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 100);
	T_MEMEQ(b.dst, b.src, 100);
	T_EXPECT_WC(p.cq_b, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 65536);
	T_MEMEQ(b.dst + 65536, b.src + 4096, 65536);
	T_EXPECT_WC(p.cq_b, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	T_EQ(wc.byte_len, 32768);
	T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
	T_MEMEQ(b.dst + 163840, b.src + 100000, 32768);
	refused(&b, &p, uc_send);
	bufs_close(&b);
	t_pair_destroy(&p);
}

static void ud_send(struct bufs *b, struct t_pair *p)
{
	t_post_ud(p->a, 14, p->ah_a, p->b->qp_num, p->qkey, b->smr,
		  b->src + 200000, 100, IBV_SEND_SIGNALED);
}

static void ud(struct t_dev *d)
{
	struct ibv_wc wc;
	struct t_pair p;
	struct bufs b;

	start(d, &p, &b, IBV_QPT_UD);
	t_post_ud(p.a, 11, p.ah_a, p.b->qp_num, p.qkey, b.smr, b.src, 100,
		  IBV_SEND_SIGNALED);
	t_post_ud(p.a, 12, p.ah_a, p.b->qp_num, p.qkey, b.smr, b.src + 4096,
		  2000, IBV_SEND_SIGNALED);
	for (uint64_t id = 11; id <= 12; id++)
		T_EXPECT_WC(p.cq_a, &wc, id, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p.cq_b, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 100 + 40);
	T_MEMEQ(b.dst + 40, b.src, 100);
	T_EXPECT_WC(p.cq_b, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 2000 + 40);
	T_MEMEQ(b.dst + 65536 + 40, b.src + 4096, 2000);
	refused(&b, &p, ud_send);
	bufs_close(&b);
	t_pair_destroy(&p);
}

int main(void)
{
	struct t_dev d;

	t_init("odp_recv");
	t_dev_open(&d);
	uc(&d);
	ud(&d);
	t_dev_close(&d);
	t_pass();
}
