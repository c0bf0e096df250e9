/* SPDX-License-Identifier: MIT */
/*
 * Two devices on one interface (softrdma0 and `link add lo2 netdev lo`)
 * hold the same GIDs; a packet for one of them goes to the device whose
 * QP it names.  RC SEND, WRITE and READ between a QP of each device, both
 * ways, and a UD SEND from one to the other, all arrive intact.
 */
#include "t_admin.h"

#define LEN 10000 /* three packets at an MTU of 4096 */

/* A t_dev for the device called name. */
static void dev_open_named(struct t_dev *d, const char *name)
{
	struct ibv_device **list;
	int n;

	memset(d, 0, sizeof(*d));
	list = T_NONNULL(ibv_get_device_list(&n));
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = T_NONNULL(ibv_open_device(list[i]));
	ibv_free_device_list(list);
	if (!d->ctx)
		T_FAIL("no device %s", name);
	d->pd = T_NONNULL(ibv_alloc_pd(d->ctx));
	T_OK(ibv_query_device(d->ctx, &d->attr));
	T_OK(ibv_query_port(d->ctx, T_PORT, &d->port));
	T_OK(ibv_query_gid(d->ctx, T_PORT, T_GID_INDEX, &d->gid));
}

static void dev_close_named(struct t_dev *d)
{
	T_OK(ibv_dealloc_pd(d->pd));
	T_OK(ibv_close_device(d->ctx));
}

struct side {
	struct t_dev *d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_buf b;
	struct t_ep ep;
};

static void side_init(struct side *s, struct t_dev *d, enum ibv_qp_type type,
		      uint32_t psn)
{
	struct ibv_qp_init_attr ia;

	s->d = d;
	s->cq = t_cq_create(d, 128, NULL);
	t_qp_init_attr(&ia, type, s->cq, s->cq);
	s->qp = t_qp_create(d, &ia);
	t_buf_alloc(d, &s->b, 2 * LEN, T_ACCESS_ALL);
	t_ep_local(d, s->qp, psn, &s->ep);
	s->ep.addr = (uintptr_t)s->b.p;
	s->ep.rkey = s->b.mr->rkey;
	s->ep.len = 2 * LEN;
}

static void side_fini(struct side *s)
{
	T_OK(ibv_destroy_qp(s->qp));
	t_buf_free(&s->b);
	T_OK(ibv_destroy_cq(s->cq));
}

/* SEND, WRITE and READ from a to b. */
static void rc_ops(struct side *a, struct side *b, uint32_t seed)
{
	struct ibv_wc wc;

	t_post_recv(b->qp, seed, b->b.mr, b->b.p, LEN);
	t_fill(a->b.p, LEN, seed);
	t_post_send(a->qp, seed, IBV_WR_SEND, a->b.mr, a->b.p, LEN,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(a->cq, &wc, seed, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(b->cq, &wc, seed, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, LEN);
	T_CHECK_FILL(b->b.p, LEN, seed);

	t_fill(a->b.p, LEN, seed + 1);
	t_post_send(a->qp, seed + 1, IBV_WR_RDMA_WRITE, a->b.mr, a->b.p, LEN,
		    IBV_SEND_SIGNALED, b->ep.addr + LEN, b->ep.rkey);
	T_EXPECT_WC(a->cq, &wc, seed + 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(b->b.p + LEN, LEN, seed + 1);

	t_fill(b->b.p, LEN, seed + 2);
	t_post_send(a->qp, seed + 2, IBV_WR_RDMA_READ, a->b.mr, a->b.p + LEN,
		    LEN, IBV_SEND_SIGNALED, b->ep.addr, b->ep.rkey);
	T_EXPECT_WC(a->cq, &wc, seed + 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(a->b.p + LEN, LEN, seed + 2);
}

static void rc_across(struct t_dev *d0, struct t_dev *d1)
{
	struct side a, b;
	struct t_conn_opts o;

	t_conn_opts_init(&o);
	side_init(&a, d0, IBV_QPT_RC, 0x100);
	side_init(&b, d1, IBV_QPT_RC, 0x200);
	T_MEMEQ(a.ep.gid.raw, b.ep.gid.raw, 16); /* one interface */
	t_qp_connect(a.qp, a.ep.psn, &b.ep, &o);
	t_qp_connect(b.qp, b.ep.psn, &a.ep, &o);
	rc_ops(&a, &b, 10);
	rc_ops(&b, &a, 20);
	side_fini(&a);
	side_fini(&b);
}

static void ud_across(struct t_dev *d0, struct t_dev *d1)
{
	struct ibv_ah_attr aa;
	struct t_conn_opts o;
	struct side a, b;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	t_conn_opts_init(&o);
	side_init(&a, d0, IBV_QPT_UD, 0);
	side_init(&b, d1, IBV_QPT_UD, 0);
	t_qp_connect(a.qp, 0, NULL, &o);
	t_qp_connect(b.qp, 0, NULL, &o);
	t_ah_attr_init(&aa, &b.ep.gid);
	ah = T_NONNULL(ibv_create_ah(d0->pd, &aa));
	t_post_recv(b.qp, 1, b.b.mr, b.b.p, 40 + 1000);
	t_fill(a.b.p, 1000, 31);
	t_post_ud(a.qp, 2, ah, b.qp->qp_num, o.qkey, a.b.mr, a.b.p, 1000,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(a.cq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(b.cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, 40 + 1000);
	T_EQ(wc.src_qp, a.qp->qp_num);
	T_CHECK_FILL(b.b.p + 40, 1000, 31);
	T_OK(ibv_destroy_ah(ah));
	side_fini(&a);
	side_fini(&b);
}

int main(void)
{
	static struct t_run r;
	struct t_dev d0, d1;

	t_init("admin_link_shared_netdev");
	t_cli_path();
	T_ASSERT(t_have_device("softrdma0")); /* starts the daemon */
	t_cli(&r, "link", "add", "lo2", "netdev", "lo", NULL);
	T_EQ(r.status, 0);
	dev_open_named(&d0, "softrdma0");
	dev_open_named(&d1, "lo2");
	rc_across(&d0, &d1);
	ud_across(&d0, &d1);
	ud_across(&d1, &d0);
	dev_close_named(&d0);
	dev_close_named(&d1);
	t_pass();
}
