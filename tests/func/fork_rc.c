/* SPDX-License-Identifier: MIT */
/*
 * RC between two processes (each with its own context, QP and memory):
 * WRITE, READ, SEND both ways, WRITE_WITH_IMM and an atomic, byte for
 * byte, the QP numbers and keys exchanged over a socketpair.
 */
#include <stdio.h>

#include "t_util.h"

#define LEN (256 * 1024)

struct side {
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_buf buf; /* the peer reads and writes here */
	struct t_buf loc; /* local source/sink */
	struct t_ep peer;
};

static void side_up(struct side *s, int fd, uint32_t psn, bool first)
{
	struct ibv_qp_init_attr ia;
	struct t_ep me;

	t_dev_open(&s->d);
	s->cq = t_cq_create(&s->d, 128, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, s->cq, s->cq);
	s->qp = t_qp_create(&s->d, &ia);
	t_buf_alloc(&s->d, &s->buf, LEN, T_ACCESS_ALL);
	t_buf_alloc(&s->d, &s->loc, LEN, T_ACCESS_ALL);
	t_ep_local(&s->d, s->qp, psn, &me);
	me.addr = (uintptr_t)s->buf.p;
	me.rkey = s->buf.mr->rkey;
	me.len = LEN;
	if (first) {
		t_sock_send(fd, &me, sizeof(me));
		t_sock_recv(fd, &s->peer, sizeof(s->peer));
	} else {
		t_sock_recv(fd, &s->peer, sizeof(s->peer));
		t_sock_send(fd, &me, sizeof(me));
	}
	T_EQ(s->peer.len, LEN);
	t_qp_connect(s->qp, psn, &s->peer, NULL);
	t_sock_sync(fd);
}

static void side_down(struct side *s)
{
	T_OK(ibv_destroy_qp(s->qp));
	T_OK(ibv_destroy_cq(s->cq));
	t_buf_free(&s->buf);
	t_buf_free(&s->loc);
	t_dev_close(&s->d);
}

static int child(int fd, void *arg)
{
	struct side s;
	struct ibv_wc wc;

	side_up(&s, fd, 0x2222, false);

	/* 1: the parent writes into our buffer. */
	t_sock_sync(fd);
	T_CHECK_FILL(s.buf.p, LEN, 1);

	/* 2: the parent reads our buffer. */
	t_fill(s.buf.p, LEN, 2);
	t_sock_sync(fd);
	t_sock_sync(fd);

	/* 3: the parent sends to us. */
	t_post_recv(s.qp, 30, s.loc.mr, s.loc.p, LEN);
	t_sock_sync(fd);
	T_EXPECT_WC(s.cq, &wc, 30, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, LEN - 1);
	T_CHECK_FILL(s.loc.p, LEN - 1, 3);

	/* 4: we send to the parent. */
	t_sock_sync(fd);
	t_fill(s.loc.p, 5000, 4);
	t_post_send(s.qp, 40, IBV_WR_SEND, s.loc.mr, s.loc.p, 5000,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(s.cq, &wc, 40, IBV_WC_SUCCESS, IBV_WC_SEND);

	/* 5: WRITE_WITH_IMM into the parent's buffer. */
	t_sock_sync(fd);
	t_fill(s.loc.p, 12345, 5);
	t_post_send(s.qp, 50, IBV_WR_RDMA_WRITE_WITH_IMM, s.loc.mr, s.loc.p,
		    12345, IBV_SEND_SIGNALED, s.peer.addr + 100, s.peer.rkey);
	T_EXPECT_WC(s.cq, &wc, 50, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* 6: an atomic on the parent's counter. */
	t_sock_sync(fd);
	t_post_atomic(s.qp, 60, IBV_WR_ATOMIC_FETCH_AND_ADD, s.loc.mr, s.loc.p,
		      s.peer.addr, s.peer.rkey, 7, 0);
	T_EXPECT_WC(s.cq, &wc, 60, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	T_EQ(*(uint64_t *)s.loc.p, 1000);
	t_sock_sync(fd);

	side_down(&s);
	return 0;
}

int main(void)
{
	struct t_child c;
	struct side s;
	struct ibv_wc wc;

	t_init("fork_rc");
	t_fork(&c, child, NULL);
	side_up(&s, c.fd, 0x1111, true);

	/* 1 */
	t_fill(s.loc.p, LEN, 1);
	t_post_send(s.qp, 10, IBV_WR_RDMA_WRITE, s.loc.mr, s.loc.p, LEN,
		    IBV_SEND_SIGNALED, s.peer.addr, s.peer.rkey);
	T_EXPECT_WC(s.cq, &wc, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_sock_sync(c.fd);

	/* 2 */
	t_sock_sync(c.fd);
	memset(s.loc.p, 0, LEN);
	t_post_send(s.qp, 20, IBV_WR_RDMA_READ, s.loc.mr, s.loc.p, LEN,
		    IBV_SEND_SIGNALED, s.peer.addr, s.peer.rkey);
	T_EXPECT_WC(s.cq, &wc, 20, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(s.loc.p, LEN, 2);
	t_sock_sync(c.fd);

	/* 3 */
	t_sock_sync(c.fd);
	t_fill(s.loc.p, LEN - 1, 3);
	t_post_send(s.qp, 31, IBV_WR_SEND, s.loc.mr, s.loc.p, LEN - 1,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(s.cq, &wc, 31, IBV_WC_SUCCESS, IBV_WC_SEND);

	/* 4 */
	t_post_recv(s.qp, 41, s.loc.mr, s.loc.p, LEN);
	t_sock_sync(c.fd);
	T_EXPECT_WC(s.cq, &wc, 41, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 5000);
	T_CHECK_FILL(s.loc.p, 5000, 4);

	/* 5 */
	t_post_recv(s.qp, 51, s.loc.mr, s.loc.p, 16);
	t_sock_sync(c.fd);
	T_EXPECT_WC(s.cq, &wc, 51, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	T_EQ(be32toh(wc.imm_data), 50);
	T_EQ(wc.byte_len, 12345);
	T_CHECK_FILL(s.buf.p + 100, 12345, 5);

	/* 6 */
	*(uint64_t *)s.buf.p = 1000;
	t_sock_sync(c.fd);
	t_sock_sync(c.fd);
	T_EQ(*(volatile uint64_t *)s.buf.p, 1007);

	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	side_down(&s);
	t_pass();
}
