/* SPDX-License-Identifier: MIT */
/*
 * mcast_peer: one end of a UD multicast exchange across hosts, on the
 * host's first RDMA device (tests/netns/mcast_verbs.sh runs it):
 *
 *   mcast_peer recv GROUP COUNT        attach to GROUP, print "ready",
 *                                      then expect COUNT messages
 *   mcast_peer send GID_INDEX GROUP COUNT   send COUNT messages to GROUP
 *                                      from the source GID GID_INDEX
 *
 * GROUP is an IPv4 (IPv4-mapped GID) or IPv6 multicast address.  Message
 * i has (i * 131) % 1025 bytes of the pattern of seed i; the receiver
 * checks each, its GRH (the IP header, addressed to the group) and that
 * nothing more arrives.  Exit status: 0 pass, 1 fail.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_util.h"

#define GRH 40
#define SLOT (GRH + 1024)
#define QKEY 0x5a5a5a5au
#define MCAST_QPN 0xffffffu

static uint32_t msg_len(uint32_t i)
{
	return (i * 131) % 1025;
}

/* The group's GID; true for an IPv4 group. */
static bool group_gid(const char *s, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (inet_pton(AF_INET, s, &g->raw[12]) == 1) {
		g->raw[10] = g->raw[11] = 0xff;
		return true;
	}
	if (inet_pton(AF_INET6, s, g->raw) != 1)
		T_FAIL("not an address: %s", s);
	return false;
}

static struct ibv_qp *ud_qp(struct t_dev *d, struct ibv_cq *cq, uint32_t n)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	ia.cap.max_recv_wr = n;
	ia.cap.max_send_wr = n;
	qp = t_qp_create(d, &ia);
	t_conn_opts_init(&o);
	o.qkey = QKEY;
	t_qp_connect(qp, 0, NULL, &o);
	return qp;
}

/* The GRH is the IP header: its destination must be the group. */
static void check_grh(const uint8_t *g, const union ibv_gid *grp, bool v4)
{
	if (v4) {
		T_EQ(g[20] >> 4, 4);
		T_EQ(g[20 + 9], 17);
		T_MEMEQ(g + 20 + 16, &grp->raw[12], 4);
	} else {
		T_EQ(g[0] >> 4, 6);
		T_EQ(g[6], 17);
		T_MEMEQ(g + 24, grp->raw, 16);
	}
}

static void do_recv(const char *group, uint32_t n)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid g;
	struct ibv_wc wc;
	struct t_buf r;
	struct t_dev d;
	bool v4 = group_gid(group, &g);

	t_dev_open(&d);
	cq = t_cq_create(&d, (int)n, NULL);
	qp = ud_qp(&d, cq, n);
	t_buf_alloc(&d, &r, (size_t)SLOT * n, T_ACCESS_ALL);
	for (uint32_t i = 0; i < n; i++)
		t_post_recv(qp, i, r.mr, r.p + (size_t)i * SLOT, SLOT);
	T_OK(ibv_attach_mcast(qp, &g, 0));
	printf("ready\n");
	fflush(stdout);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *buf = r.p + (size_t)i * SLOT;

		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, GRH + msg_len(i));
		T_ASSERT(wc.wc_flags & IBV_WC_GRH);
		check_grh(buf, &g, v4);
		T_CHECK_FILL(buf + GRH, msg_len(i), i);
	}
	T_EXPECT_NO_WC(cq, T_QUIET_MS);
	T_OK(ibv_detach_mcast(qp, &g, 0));
	T_OK(ibv_destroy_qp(qp));
	t_buf_free(&r);
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	printf("received %u\n", n);
}

static void do_send(uint8_t gid_index, const char *group, uint32_t n)
{
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid g;
	struct ibv_wc wc;
	struct t_buf s;
	struct t_dev d;

	group_gid(group, &g);
	t_dev_open(&d);
	cq = t_cq_create(&d, (int)n, NULL);
	qp = ud_qp(&d, cq, 16);
	t_buf_alloc(&d, &s, 1024, T_ACCESS_ALL);
	t_ah_attr_init(&aa, &g);
	aa.grh.sgid_index = gid_index;
	ah = T_NONNULL(ibv_create_ah(d.pd, &aa));
	for (uint32_t i = 0; i < n; i++) {
		t_fill(s.p, msg_len(i), i);
		t_post_ud(qp, i, ah, MCAST_QPN, QKEY, s.mr, s.p, msg_len(i),
			  IBV_SEND_SIGNALED);
		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	T_OK(ibv_destroy_ah(ah));
	T_OK(ibv_destroy_qp(qp));
	t_buf_free(&s);
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	printf("sent %u\n", n);
}

int main(int argc, char **argv)
{
	t_init("mcast_peer");
	if (argc == 4 && !strcmp(argv[1], "recv"))
		do_recv(argv[2], (uint32_t)strtoul(argv[3], NULL, 0));
	else if (argc == 5 && !strcmp(argv[1], "send"))
		do_send((uint8_t)strtoul(argv[2], NULL, 0), argv[3],
			(uint32_t)strtoul(argv[4], NULL, 0));
	else
		T_FAIL("usage: mcast_peer recv GROUP COUNT | "
		       "send GID_INDEX GROUP COUNT");
	t_pass();
}
