/* SPDX-License-Identifier: MIT */
/*
 * ibv_attach_mcast / ibv_detach_mcast as the kernel answers them: only UD
 * QPs and multicast GIDs (0xff.. or IPv4-mapped 224/4), attaching twice is
 * fine, detaching what is not attached is EINVAL, a QP with attachments
 * cannot be destroyed (EBUSY), the device's limits are reported and
 * enforced with ENOMEM, and a process that dies leaves its groups.
 */
#include <arpa/inet.h>
#include <unistd.h>

#include "t_util.h"

#define PER_GROUP 56
#define GROUPS 8192

static struct ibv_qp *ud_qp(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
	qp = t_qp_create(d, &ia);
	t_conn_opts_init(&o);
	t_qp_connect(qp, 0, NULL, &o);
	return qp;
}

static void v4_gid(union ibv_gid *g, const char *ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	T_EQ(inet_pton(AF_INET, ip, &g->raw[12]), 1);
}

static void v6_gid(union ibv_gid *g, const char *ip)
{
	T_EQ(inet_pton(AF_INET6, ip, g->raw), 1);
}

/* Group n of the limit test: ff0e::<n>. */
static void nth_gid(union ibv_gid *g, uint32_t n)
{
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xff;
	g->raw[1] = 0x0e;
	g->raw[12] = n >> 24;
	g->raw[13] = n >> 16;
	g->raw[14] = n >> 8;
	g->raw[15] = n;
}

/* The child: one attachment to ff0e::77, held until told to exit. */
static int child_attach(int fd, void *arg)
{
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid g;
	char c = 0;

	t_dev_open(&d);
	cq = t_cq_create(&d, 4, NULL);
	qp = ud_qp(&d, cq);
	nth_gid(&g, 0x77);
	T_OK(ibv_attach_mcast(qp, &g, 0));
	t_sock_send(fd, &c, 1);
	t_sock_recv(fd, &c, 1);
	_exit(0); /* no detach, no destroy: the daemon cleans up */
}

int main(void)
{
	struct ibv_qp *qps[PER_GROUP + 1], *rc, *ud;
	struct ibv_qp_init_attr ia;
	union ibv_gid g, g2;
	struct t_child child;
	struct ibv_cq *cq;
	struct t_dev d;
	uint64_t until;
	int ret;
	char c = 0;

	t_init("mcast_errors");
	t_dev_open(&d);
	T_EQ(d.attr.max_mcast_grp, GROUPS);
	T_EQ(d.attr.max_mcast_qp_attach, PER_GROUP);
	T_EQ(d.attr.max_total_mcast_qp_attach, 0x70000);
	cq = t_cq_create(&d, 16, NULL);

	/* Only UD QPs. */
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	rc = t_qp_create(&d, &ia);
	v4_gid(&g, "239.1.2.3");
	T_RET(ibv_attach_mcast(rc, &g, 0), EINVAL);
	T_EQ(errno, EINVAL);
	T_RET(ibv_detach_mcast(rc, &g, 0), EINVAL);
	T_OK(ibv_destroy_qp(rc));

	/* Only multicast GIDs. */
	ud = ud_qp(&d, cq);
	T_RET(ibv_attach_mcast(ud, &d.gid, 0), EINVAL);
	v4_gid(&g2, "10.1.2.3");
	T_RET(ibv_attach_mcast(ud, &g2, 0), EINVAL);
	v4_gid(&g2, "240.0.0.1"); /* class E, not multicast */
	T_RET(ibv_attach_mcast(ud, &g2, 0), EINVAL);
	v6_gid(&g2, "fe80::1");
	T_RET(ibv_attach_mcast(ud, &g2, 0), EINVAL);

	/* IPv4-mapped and IPv6 groups; twice is no error; the LID is
	 * ignored on RoCE. */
	T_OK(ibv_attach_mcast(ud, &g, 0));
	T_OK(ibv_attach_mcast(ud, &g, 0xc001));
	v6_gid(&g2, "ff0e::1234");
	T_OK(ibv_attach_mcast(ud, &g2, 0));

	/* Detaching what is not attached. */
	v6_gid(&g2, "ff0e::4321");
	T_RET(ibv_detach_mcast(ud, &g2, 0), EINVAL);
	v6_gid(&g2, "ff0e::1234");

	/* Attached: the QP cannot go, as uverbs refuses it. */
	T_RET(ibv_destroy_qp(ud), EBUSY);
	T_OK(ibv_detach_mcast(ud, &g2, 0));
	T_RET(ibv_detach_mcast(ud, &g2, 0), EINVAL);
	T_OK(ibv_detach_mcast(ud, &g, 0));
	T_RET(ibv_detach_mcast(ud, &g, 0), EINVAL);
	T_OK(ibv_destroy_qp(ud));

	/* QPs per group. */
	for (int i = 0; i <= PER_GROUP; i++)
		qps[i] = ud_qp(&d, cq);
	nth_gid(&g, 1);
	for (int i = 0; i < PER_GROUP; i++)
		T_OK(ibv_attach_mcast(qps[i], &g, 0));
	T_RET(ibv_attach_mcast(qps[PER_GROUP], &g, 0), ENOMEM);
	T_OK(ibv_detach_mcast(qps[0], &g, 0));
	T_OK(ibv_attach_mcast(qps[PER_GROUP], &g, 0));
	for (int i = 1; i <= PER_GROUP; i++)
		T_OK(ibv_detach_mcast(qps[i], &g, 0));

	/* Groups per device. */
	for (uint32_t n = 0; n < GROUPS; n++) {
		nth_gid(&g, n + 1);
		ret = ibv_attach_mcast(qps[0], &g, 0);
		if (ret)
			T_FAIL("group %u of %u: %s", n, GROUPS, t_errname(ret));
	}
	nth_gid(&g, GROUPS + 1);
	T_RET(ibv_attach_mcast(qps[1], &g, 0), ENOMEM);
	nth_gid(&g, 5); /* an existing group takes more QPs */
	T_OK(ibv_attach_mcast(qps[1], &g, 0));
	T_OK(ibv_detach_mcast(qps[1], &g, 0));
	for (uint32_t n = 0; n < GROUPS; n++) {
		nth_gid(&g, n + 1);
		T_OK(ibv_detach_mcast(qps[0], &g, 0));
	}
	nth_gid(&g, GROUPS + 1);
	T_OK(ibv_attach_mcast(qps[1], &g, 0));
	T_OK(ibv_detach_mcast(qps[1], &g, 0));

	/* A process that dies leaves its groups: with its QP in the group,
	 * one place is left; once it is gone, two. */
	nth_gid(&g, 0x77);
	for (int i = 0; i < PER_GROUP - 2; i++)
		T_OK(ibv_attach_mcast(qps[i], &g, 0));
	t_fork(&child, child_attach, NULL);
	t_sock_recv(child.fd, &c, 1);
	T_OK(ibv_attach_mcast(qps[PER_GROUP - 2], &g, 0));
	T_RET(ibv_attach_mcast(qps[PER_GROUP - 1], &g, 0), ENOMEM);
	t_sock_send(child.fd, &c, 1);
	T_EQ(t_child_wait(&child, T_WAIT_MS), 0);
	until = t_now_ms() + T_WAIT_MS;
	while ((ret = ibv_attach_mcast(qps[PER_GROUP - 1], &g, 0)) == ENOMEM &&
	       t_now_ms() < until)
		t_sleep_ms(10);
	T_RET(ret, 0);
	for (int i = 0; i < PER_GROUP; i++)
		T_OK(ibv_detach_mcast(qps[i], &g, 0));

	for (int i = 0; i <= PER_GROUP; i++)
		T_OK(ibv_destroy_qp(qps[i]));
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	t_pass();
}
