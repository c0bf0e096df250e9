/* SPDX-License-Identifier: MIT */
/*
 * A ring of hosts: node k has an RC connection to node k + 1 and one from
 * node k - 1 (the last node closes the ring to node 1).  Node 1 injects
 * messages; every node checks what it receives, byte for byte, and passes
 * it on from the same buffer; node 1 checks what comes back around.
 * Messages alternate WRITE_WITH_IMM and SEND_WITH_IMM, 1 byte to 4 MiB.
 * Then node 1 sends UD messages to node 2 and to node n over two AHs.
 *
 * Connections are made in a chain (node 1 first connects onwards, every
 * other node first takes the connection from behind) so nobody waits for
 * a node that waits for it.
 */
#include <stdio.h>
#include <unistd.h>

#include "xhost.h"

#define W 30000
#define UD_MSGS 200

static const uint32_t sizes[] = { 1,	  4096,		  65536 + 17,
				  XH_MIB, 3 * XH_MIB + 5, 4 * XH_MIB,
				  1000,	  12345 };
#define ROUNDS (sizeof(sizes) / sizeof(sizes[0]))

static void ring_send(struct xh_qp *out, struct t_buf *src, uint32_t r,
		      uint32_t len)
{
	uint32_t sge[1][2] = { { 0, len } };

	/* The immediate carries the round (wr_id's low 32 bits). */
	xh_post_sges(out, r,
		     r % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM,
		     src, sge, 1, IBV_SEND_SIGNALED, out->remote.addr,
		     out->remote.rkey);
}

static void ring_take(struct xh *x, struct xh_qp *in, uint32_t r)
{
	struct ibv_wc wc;

	XH_EXPECT(in->rcq, &wc, r, IBV_WC_SUCCESS,
		  r % 2 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM, W);
	T_EQ(be32toh(wc.imm_data), r);
	T_EQ(wc.byte_len, sizes[r]);
	T_CHECK_FILL(x->b.p, sizes[r], 0x7000 + r);
}

static void ring_data(struct xh *x, struct xh_qp *in, struct xh_qp *out)
{
	struct ibv_wc wc;
	double t0 = xh_now();

	for (uint32_t r = 0; r < ROUNDS; r++) {
		if (x->ring_index == 1) {
			t_fill(x->a.p, sizes[r], 0x7000 + r);
			memset(x->b.p, 0, sizes[r] + 1);
			ring_send(out, &x->a, r, sizes[r]);
			XH_EXPECT(out->scq, &wc, r, IBV_WC_SUCCESS,
				  T_ANY_OPCODE, W);
			ring_take(x, in, r);
			T_EQ(x->b.p[sizes[r]], 0);
		} else {
			ring_take(x, in, r);
			ring_send(out, &x->b, r, sizes[r]);
			XH_EXPECT(out->scq, &wc, r, IBV_WC_SUCCESS,
				  T_ANY_OPCODE, W);
		}
	}
	if (x->ring_index == 1)
		t_log("ring: %zu messages around %u nodes in %.0f ms, checked "
		      "at every hop",
		      ROUNDS, x->ring_nodes, (xh_now() - t0) * 1e3);
}

/* Node 1 tells node 2 and node n about the one UD QP it sends from. */
static void ud_meet(struct xh *x, int fd, struct xh_qp *q, struct xh_ep *r,
		    struct ibv_ah **ah)
{
	struct xh_ep me = { .qpn = q->qp->qp_num };

	memcpy(me.gid, x->gid.raw, 16);
	xh_send(fd, &me, sizeof(me));
	xh_recv(fd, r, sizeof(*r), W);
	*ah = xh_ah_create(x, r);
	xh_sync_fd(fd, 0xc0ec7, W);
}

static void ud_sender(struct xh *x, const struct xh_conn *c)
{
	uint32_t sge[1][2] = { { 0, x->mtu_bytes } };
	struct xh_ep r2;
	struct ibv_ah *ah2;
	struct ibv_wc wc;
	struct xh_qp q, via;

	/* Node 2 (behind fd) gets a whole connect; node n the same QP. */
	xh_qp_connect_fd(x, x->fd, &q, c);
	ud_meet(x, x->fd_prev, &q, &r2, &ah2);
	via = q;
	via.ah = ah2;
	via.remote = r2;
	t_fill(x->a.p, x->mtu_bytes, 0x7100);
	for (uint32_t i = 0; i < UD_MSGS; i++) {
		xh_post_sges(&q, i, IBV_WR_SEND_WITH_IMM, &x->a, sge, 1,
			     IBV_SEND_SIGNALED, 0, 0);
		xh_post_sges(&via, (1ull << 32) | i, IBV_WR_SEND_WITH_IMM,
			     &x->a, sge, 1, IBV_SEND_SIGNALED, 0, 0);
		XH_EXPECT(q.scq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND, W);
		XH_EXPECT(q.scq, &wc, (1ull << 32) | i, IBV_WC_SUCCESS,
			  IBV_WC_SEND, W);
	}
	t_log("UD: %u messages of %u bytes from one QP to node 2 and node %u",
	      UD_MSGS, x->mtu_bytes, x->ring_nodes);
	xh_sync_fd(x->fd, 0xdd, W);
	xh_sync_fd(x->fd_prev, 0xdd, W);
	T_OK(ibv_destroy_ah(ah2));
	xh_qp_destroy(&q);
}

static void ud_receiver(struct xh *x, int fd, const struct xh_conn *c)
{
	uint32_t size = x->mtu_bytes, slot = size + XH_GRH, got = 0;
	struct ibv_wc wc;
	struct xh_qp q;

	xh_qp_connect_fd(x, fd, &q, c);
	while (got < UD_MSGS) {
		uint8_t *p;

		if (!t_poll(q.rcq, &wc, W))
			T_FAIL("UD: %u of %u messages from node 1", got,
			       UD_MSGS);
		if (wc.status != IBV_WC_SUCCESS)
			T_FAIL("UD receive %llu: \"%s\"",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
		T_EQ(wc.wr_id, got);
		p = x->b.p + wc.wr_id * slot;
		T_EQ(wc.byte_len, XH_GRH + size);
		T_EQ(wc.src_qp, q.remote.qpn);
		T_EQ(be32toh(wc.imm_data), got);
		/* The GRH names node 1 as the source. */
		if (x->family == AF_INET)
			T_MEMEQ(p + 32, q.remote.gid + 12, 4);
		else
			T_MEMEQ(p + 8, q.remote.gid, 16);
		T_CHECK_FILL(p + XH_GRH, size, 0x7100);
		got++;
	}
	t_log("UD: %u of %u messages from node 1", got, UD_MSGS);
	xh_sync_fd(fd, 0xdd, W);
	xh_qp_destroy(&q);
}

/* Node 1 sends; node 2 (behind its fd_prev) and node n (behind its fd)
 * receive.  The receivers post every receive before node 1 may send. */
static void ring_ud(struct xh *x)
{
	struct xh_conn c;

	xh_conn_init(&c, IBV_QPT_UD);
	c.max_send_wr = 2 * UD_MSGS;
	c.max_recv_wr = UD_MSGS;
	if (x->ring_index == 1) {
		ud_sender(x, &c);
		return;
	}
	c.prepost = UD_MSGS;
	c.prepost_len = x->mtu_bytes + XH_GRH;
	c.prepost_stride = c.prepost_len;
	T_LE((uint64_t)UD_MSGS * c.prepost_stride, XH_BUF_LEN);
	if (x->ring_index == 2)
		ud_receiver(x, x->fd_prev, &c);
	if (x->ring_index == x->ring_nodes)
		ud_receiver(x, x->fd, &c);
}

void xh_run_ring(struct xh *x)
{
	struct xh_conn c;
	struct xh_qp in, out;
	int lfd;

	T_GE(x->ring_nodes, 3);
	T_ASSERT(x->ring_index >= 1 && x->ring_index <= x->ring_nodes);
	lfd = xh_listen(x->port);
	x->fd = xh_connect(x->host, x->port, W);
	x->fd_prev = xh_accept(lfd, W);
	close(lfd);

	/* A connection from behind has every round's receive posted before
	 * the node behind may send. */
	xh_conn_init(&c, IBV_QPT_RC);
	if (x->ring_index == 1) {
		xh_qp_connect_fd(x, x->fd, &out, &c);
		c.prepost = ROUNDS;
		c.prepost_len = XH_BUF_LEN;
		xh_qp_connect_fd(x, x->fd_prev, &in, &c);
	} else {
		c.prepost = ROUNDS;
		c.prepost_len = XH_BUF_LEN;
		xh_qp_connect_fd(x, x->fd_prev, &in, &c);
		c.prepost = 0;
		xh_qp_connect_fd(x, x->fd, &out, &c);
	}
	ring_data(x, &in, &out);
	xh_qp_destroy(&in);
	xh_qp_destroy(&out);
	ring_ud(x);
}
