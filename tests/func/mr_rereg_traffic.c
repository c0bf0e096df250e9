/* SPDX-License-Identifier: MIT */
/*
 * ibv_rereg_mr with every combination of flags, each followed by traffic
 * on the MR through the keys it had before: a peer's RDMA WRITE and READ
 * with the rkey, a SEND into a receive posted with the lkey before the
 * change, and the MR as the local buffer of a WRITE and a SEND.  The keys
 * survive the change, as on rxe and ConnectX; misuse fails with the
 * kernel's errors.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN 8192

struct side {
	struct t_pair p;
	struct t_buf peer; /* a's buffer */
};

static void side_create(struct t_dev *d, struct ibv_pd *pd, struct side *s)
{
	struct ibv_pd *keep = d->pd;

	d->pd = pd;
	t_pair_create(d, &s->p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(d, &s->peer, LEN, T_ACCESS_ALL);
	d->pd = keep;
}

static void side_destroy(struct side *s)
{
	t_pair_destroy(&s->p);
	t_buf_free(&s->peer);
}

/* Traffic both ways on mr (b's, at buf) through the keys peers hold. */
static void traffic(struct side *s, struct ibv_mr *mr, uint8_t *buf,
		    uint32_t lkey, uint32_t rkey, uint32_t seed, bool posted)
{
	struct t_pair *p = &s->p;
	struct ibv_wc wc;

	/* SEND from a into b's receive (posted before the change or now). */
	if (!posted)
		t_post_recv(p->b, seed, mr, buf, LEN);
	t_fill(s->peer.p, LEN, seed);
	t_post_send(p->a, seed, IBV_WR_SEND, s->peer.mr, s->peer.p, LEN,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(p->cq_a, NULL, seed, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p->cq_b, &wc, seed, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, LEN);
	T_CHECK_FILL(buf, LEN, seed);

	/* WRITE and READ by the peer with the rkey it was given first. */
	t_fill(s->peer.p, LEN, seed + 1);
	t_post_send(p->a, seed + 1, IBV_WR_RDMA_WRITE, s->peer.mr, s->peer.p,
		    LEN, IBV_SEND_SIGNALED, (uintptr_t)buf, rkey);
	T_EXPECT_WC(p->cq_a, NULL, seed + 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(buf, LEN, seed + 1);
	t_fill(buf, LEN, seed + 2);
	t_post_send(p->a, seed + 2, IBV_WR_RDMA_READ, s->peer.mr, s->peer.p,
		    LEN, IBV_SEND_SIGNALED, (uintptr_t)buf, rkey);
	T_EXPECT_WC(p->cq_a, NULL, seed + 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(s->peer.p, LEN, seed + 2);

	/* The MR as b's local buffer, by its lkey: WRITE and SEND. */
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf,
				       .length = LEN,
				       .lkey = lkey };
		struct ibv_send_wr wr = { .wr_id = seed + 3,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		t_fill(buf, LEN, seed + 3);
		wr.wr.rdma.remote_addr = (uintptr_t)s->peer.p;
		wr.wr.rdma.rkey = s->peer.mr->rkey;
		T_OK(ibv_post_send(p->b, &wr, &bad));
		T_EXPECT_WC(p->cq_b, NULL, seed + 3, IBV_WC_SUCCESS,
			    IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(s->peer.p, LEN, seed + 3);

		t_post_recv(p->a, seed + 4, s->peer.mr, s->peer.p, LEN);
		t_fill(buf, LEN, seed + 4);
		wr.wr_id = seed + 4;
		wr.opcode = IBV_WR_SEND;
		T_OK(ibv_post_send(p->b, &wr, &bad));
		T_EXPECT_WC(p->cq_b, NULL, seed + 4, IBV_WC_SUCCESS,
			    IBV_WC_SEND);
		T_EXPECT_WC(p->cq_a, NULL, seed + 4, IBV_WC_SUCCESS,
			    IBV_WC_RECV);
		T_CHECK_FILL(s->peer.p, LEN, seed + 4);
	}
}

int main(void)
{
	struct side sd[2];
	struct ibv_pd *pds[2];
	uint8_t *bufs[2];
	struct ibv_mr *mr;
	struct t_dev d;
	int cur_pd = 0, cur_buf = 0;
	uint32_t lkey, rkey, seed = 10;

	t_init("mr_rereg_traffic");
	t_dev_open(&d);
	pds[0] = d.pd;
	pds[1] = T_NONNULL(ibv_alloc_pd(d.ctx));
	side_create(&d, pds[0], &sd[0]);
	side_create(&d, pds[1], &sd[1]);
	bufs[0] = t_zalloc(LEN);
	bufs[1] = t_zalloc(LEN);
	mr = T_NONNULL(ibv_reg_mr(pds[0], bufs[0], LEN, T_ACCESS_ALL));
	lkey = mr->lkey;
	rkey = mr->rkey;

	for (int round = 0; round < 2; round++) {
		for (int flags = 1; flags < 8; flags++, seed += 10) {
			bool pd_change = flags & IBV_REREG_MR_CHANGE_PD;
			bool tr = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
			int npd = pd_change ? !cur_pd : cur_pd;
			int nbuf = tr ? !cur_buf : cur_buf;

			/* A receive posted with the lkey before the change
			 * (its QP must stay in the MR's PD). */
			if (!pd_change)
				t_post_recv(sd[cur_pd].p.b, seed, mr,
					    bufs[nbuf], LEN);
			T_OK(ibv_rereg_mr(mr, flags, pds[npd], bufs[nbuf], LEN,
					  flags & IBV_REREG_MR_CHANGE_ACCESS
						  ? T_ACCESS_ALL
						  : 0));
			T_EQ(mr->lkey, lkey);
			T_EQ(mr->rkey, rkey);
			T_PTR_EQ(mr->pd, pds[npd]);
			T_PTR_EQ(mr->addr, bufs[nbuf]);
			cur_pd = npd;
			cur_buf = nbuf;
			traffic(&sd[cur_pd], mr, bufs[cur_buf], lkey, rkey,
				seed, !pd_change);
		}
	}

	/* Misuse, with the kernel's errno. */
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_REMOTE_ATOMIC),
	     IBV_REREG_MR_ERR_CMD);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND),
	     IBV_REREG_MR_ERR_CMD);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, bufs[0], 0, 0),
	     0);
	/* Access 0 with CHANGE_ACCESS: no rights left, not even local
	 * write, and the keys stay valid for what is left (nothing). */
	t_post_send(sd[cur_pd].p.a, 1, IBV_WR_RDMA_WRITE, sd[cur_pd].peer.mr,
		    sd[cur_pd].peer.p, 64, IBV_SEND_SIGNALED,
		    (uintptr_t)bufs[cur_buf], rkey);
	T_EXPECT_WC(sd[cur_pd].p.cq_a, NULL, 1, IBV_WC_REM_ACCESS_ERR,
		    IBV_WC_RDMA_WRITE);
	/* Failed changes leave the MR as it was. */
	T_PTR_EQ(mr->addr, bufs[cur_buf]);
	T_EQ(mr->lkey, lkey);

	T_OK(ibv_dereg_mr(mr));
	side_destroy(&sd[0]);
	side_destroy(&sd[1]);
	T_OK(ibv_dealloc_pd(pds[1]));
	t_free(bufs[0], LEN);
	t_free(bufs[1], LEN);
	t_dev_close(&d);
	t_pass();
}
