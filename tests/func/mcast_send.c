/* SPDX-License-Identifier: MIT */
/*
 * UD multicast on one device: a sender and three receivers, each in its
 * own process.  Every receiver gets every message intact, behind a GRH
 * whose IPv4 header is addressed to the group; a message with another
 * Q_Key reaches nobody; after a receiver detaches, nothing more reaches
 * it; the sender's own QP, once attached, receives its own messages (as
 * rxe loops them back).
 */
#include <arpa/inet.h>
#include <unistd.h>

#include "t_util.h"

#define GRH 40
#define NRECV 3
#define NMSG 20
#define GROUP "239.10.0.1"
#define MCAST_QPN 0xffffffu

static uint32_t msg_len(uint32_t i, uint32_t mtu)
{
	return i == 0 ? 0 : (i * 277) % (mtu + 1);
}

static void group_gid(union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	T_EQ(inet_pton(AF_INET, GROUP, &g->raw[12]), 1);
}

static struct ibv_qp *ud_qp(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	qp = t_qp_create(d, &ia);
	t_conn_opts_init(&o);
	t_qp_connect(qp, 0, NULL, &o);
	return qp;
}

/* The GRH of a RoCE v2 IPv4 packet: 20 zero bytes, then the IP header
 * from us to the group. */
static void check_grh(const uint8_t *g)
{
	static const uint8_t lo[4] = { 127, 0, 0, 1 };
	uint8_t grp[4];

	T_EQ(inet_pton(AF_INET, GROUP, grp), 1);
	for (int i = 0; i < 20; i++)
		if (g[i])
			T_FAIL("GRH byte %d is %#x, expected 0", i, g[i]);
	T_EQ(g[20], 0x45);
	T_EQ(g[20 + 9], 17);
	T_MEMEQ(g + 20 + 12, lo, 4);
	T_MEMEQ(g + 20 + 16, grp, 4);
}

struct rx_arg {
	uint32_t mtu;
};

static int receiver(int fd, void *varg)
{
	struct rx_arg *a = varg;
	uint32_t slot = GRH + a->mtu, src_qpn;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid g;
	struct ibv_wc wc;
	struct t_buf r;
	struct t_dev d;
	char c = 'r';

	t_dev_open(&d);
	cq = t_cq_create(&d, 2 * NMSG, NULL);
	qp = ud_qp(&d, cq);
	t_buf_alloc(&d, &r, (size_t)slot * (NMSG + 1), T_ACCESS_ALL);
	memset(r.p, 0xcc, r.len);
	for (uint32_t i = 0; i <= NMSG; i++)
		t_post_recv(qp, i, r.mr, r.p + i * slot, slot);
	group_gid(&g);
	T_OK(ibv_attach_mcast(qp, &g, 0));
	t_sock_send(fd, &c, 1);
	t_sock_recv(fd, &src_qpn, sizeof(src_qpn));

	for (uint32_t i = 0; i < NMSG; i++) {
		uint32_t len = msg_len(i, a->mtu);
		uint8_t *buf = r.p + i * slot;

		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, GRH + len);
		T_EQ(wc.src_qp, src_qpn);
		T_EQ(wc.qp_num, qp->qp_num);
		T_ASSERT(wc.wc_flags & IBV_WC_GRH);
		check_grh(buf);
		T_CHECK_FILL(buf + GRH, len, 100 + i);
		T_EQ(buf[GRH + len], 0xcc);
	}
	/* The message with another Q_Key never came. */
	T_EXPECT_NO_WC(cq, T_QUIET_MS);
	t_sock_send(fd, &c, 1);

	/* Detached: nothing more arrives. */
	T_OK(ibv_detach_mcast(qp, &g, 0));
	t_sock_send(fd, &c, 1);
	t_sock_recv(fd, &c, 1);
	T_EXPECT_NO_WC(cq, T_QUIET_MS);

	T_OK(ibv_destroy_qp(qp));
	t_buf_free(&r);
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_child kid[NRECV];
	struct ibv_ah_attr aa;
	struct rx_arg arg;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	union ibv_gid g;
	struct t_buf s, r;
	struct t_dev d;
	uint32_t mtu;
	char c;

	t_init("mcast_send");
	t_dev_open(&d);
	mtu = 128u << d.port.active_mtu;
	arg.mtu = mtu;
	cq = t_cq_create(&d, 4 * NMSG, NULL);
	qp = ud_qp(&d, cq);
	t_buf_alloc(&d, &s, mtu, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, GRH + mtu, T_ACCESS_ALL);
	group_gid(&g);
	t_ah_attr_init(&aa, &g);
	ah = T_NONNULL(ibv_create_ah(d.pd, &aa));

	for (int k = 0; k < NRECV; k++)
		t_fork(&kid[k], receiver, &arg);
	for (int k = 0; k < NRECV; k++) {
		t_sock_recv(kid[k].fd, &c, 1);
		t_sock_send(kid[k].fd, &qp->qp_num, sizeof(qp->qp_num));
	}

	/* Another Q_Key first: dropped by every receiver. */
	t_post_ud(qp, 999, ah, MCAST_QPN, T_QKEY ^ 1, s.mr, s.p, 8,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(cq, &wc, 999, IBV_WC_SUCCESS, IBV_WC_SEND);
	for (uint32_t i = 0; i < NMSG; i++) {
		uint32_t len = msg_len(i, mtu);

		t_fill(s.p, len, 100 + i);
		t_post_ud(qp, i, ah, MCAST_QPN, T_QKEY, s.mr, s.p, len,
			  IBV_SEND_SIGNALED);
		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	for (int k = 0; k < NRECV; k++)
		t_sock_recv(kid[k].fd, &c, 1);

	/* Everyone detached: one more message reaches nobody. */
	for (int k = 0; k < NRECV; k++)
		t_sock_recv(kid[k].fd, &c, 1);
	t_fill(s.p, 64, 7);
	t_post_ud(qp, 1000, ah, MCAST_QPN, T_QKEY, s.mr, s.p, 64,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(cq, &wc, 1000, IBV_WC_SUCCESS, IBV_WC_SEND);
	for (int k = 0; k < NRECV; k++)
		t_sock_send(kid[k].fd, &c, 1);
	for (int k = 0; k < NRECV; k++)
		T_EQ(t_child_wait(&kid[k], 3 * T_WAIT_MS), 0);

	/* The sender attached receives its own message. */
	T_OK(ibv_attach_mcast(qp, &g, 0));
	t_post_recv(qp, 2000, r.mr, r.p, GRH + mtu);
	t_fill(s.p, 100, 8);
	t_post_ud(qp, 2001, ah, MCAST_QPN, T_QKEY, s.mr, s.p, 100,
		  IBV_SEND_SIGNALED);
	/* Both complete, the receive possibly first. */
	for (int n = 0; n < 2; n++) {
		struct ibv_wc w;

		T_EQ(t_poll(cq, &w, T_WAIT_MS), 1);
		T_WC_STATUS(&w, IBV_WC_SUCCESS);
		if (w.wr_id == 2000)
			wc = w;
		else
			T_EQ(w.wr_id, 2001);
	}
	T_EQ(wc.wr_id, 2000);
	T_EQ(wc.opcode, IBV_WC_RECV);
	T_EQ(wc.byte_len, GRH + 100);
	T_EQ(wc.src_qp, qp->qp_num);
	check_grh(r.p);
	T_CHECK_FILL(r.p + GRH, 100, 8);
	T_OK(ibv_detach_mcast(qp, &g, 0));

	T_OK(ibv_destroy_ah(ah));
	T_OK(ibv_destroy_qp(qp));
	t_buf_free(&s);
	t_buf_free(&r);
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
