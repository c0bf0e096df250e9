/* SPDX-License-Identifier: MIT */
/*
 * Deleting a device that has an open context, as rxe's removal: that
 * context gets IBV_EVENT_DEVICE_FATAL, its QPs go to the error state (the
 * posted receive is flushed), its port is DOWN; contexts on other devices
 * hear nothing.  Once the context is closed, the device is forgotten.
 */
#include "t_admin.h"

static struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	T_ASSERT(list);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = T_NONNULL(ibv_open_device(list[i]));
	ibv_free_device_list(list);
	if (!ctx)
		T_FAIL("no device %s", name);
	return ctx;
}

/* A QP in INIT with one receive posted. */
static struct ibv_qp *qp_init(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_mr *mr)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_qp *qp;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	qp = T_NONNULL(ibv_create_qp(pd, &ia));
	t_conn_opts_init(&o);
	t_qp_to_init(qp, &o);
	t_post_recv(qp, 42, mr, mr->addr, 64);
	return qp;
}

int main(void)
{
	static struct t_run r;
	struct ibv_context *ctx2, *ctx0;
	struct ibv_pd *pd2, *pd0;
	struct ibv_cq *cq2, *cq0;
	struct ibv_qp *qp2, *qp0;
	struct ibv_mr *mr2, *mr0;
	struct ibv_port_attr port;
	struct ibv_wc wc;
	static uint8_t buf2[4096], buf0[4096];

	t_init("admin_link_delete_fatal");
	t_cli_path();
	T_ASSERT(t_have_device("softrdma0"));
	t_cli(&r, "link", "add", "doomed", "netdev", "lo", NULL);
	T_EQ(r.status, 0);

	ctx2 = open_named("doomed");
	ctx0 = open_named("softrdma0");
	pd2 = T_NONNULL(ibv_alloc_pd(ctx2));
	pd0 = T_NONNULL(ibv_alloc_pd(ctx0));
	cq2 = T_NONNULL(ibv_create_cq(ctx2, 16, NULL, NULL, 0));
	cq0 = T_NONNULL(ibv_create_cq(ctx0, 16, NULL, NULL, 0));
	mr2 = T_NONNULL(ibv_reg_mr(pd2, buf2, sizeof(buf2), T_ACCESS_ALL));
	mr0 = T_NONNULL(ibv_reg_mr(pd0, buf0, sizeof(buf0), T_ACCESS_ALL));
	qp2 = qp_init(pd2, cq2, mr2);
	qp0 = qp_init(pd0, cq0, mr0);
	T_EXPECT_NO_ASYNC(ctx2, 50);

	t_cli(&r, "-d", "dev", "show", "doomed", NULL);
	T_EXPECT_IN(r.out, " contexts 1 qps 1 ");
	t_cli(&r, "link", "delete", "doomed", NULL);
	T_EQ(r.status, 0);

	T_EXPECT_ASYNC(ctx2, IBV_EVENT_DEVICE_FATAL, NULL);
	T_EXPECT_WC(cq2, &wc, 42, IBV_WC_WR_FLUSH_ERR, T_ANY_OPCODE);
	T_EQ(t_qp_state(qp2), IBV_QPS_ERR);
	T_OK(ibv_query_port(ctx2, 1, &port));
	T_EQ(port.state, IBV_PORT_DOWN);
	T_ASSERT(!t_have_device("doomed"));

	/* The other device goes on as it was. */
	T_EXPECT_NO_ASYNC(ctx0, T_QUIET_MS);
	T_EXPECT_NO_WC(cq0, 50);
	T_EQ(t_qp_state(qp0), IBV_QPS_INIT);

	/* Listed as removed while the context holds it... */
	t_cli(&r, "link", NULL);
	T_EXPECT_NOT_IN(r.out, "doomed");
	t_cli(&r, "-d", "link", NULL);
	T_EXPECT_IN(r.out, "link doomed/1 state DOWN physical_state DISABLED");
	T_EXPECT_IN(r.out, " removed");
	/* ...and its name is free. */
	t_cli(&r, "link", "add", "doomed", "netdev", "lo", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "link", "delete", "doomed", NULL);
	T_EQ(r.status, 0);

	T_OK(ibv_destroy_qp(qp2));
	T_OK(ibv_dereg_mr(mr2));
	T_OK(ibv_destroy_cq(cq2));
	T_OK(ibv_dealloc_pd(pd2));
	T_OK(ibv_close_device(ctx2));
	t_cli(&r, "-d", "link", NULL);
	T_EXPECT_NOT_IN(r.out, "doomed");

	T_OK(ibv_destroy_qp(qp0));
	T_OK(ibv_dereg_mr(mr0));
	T_OK(ibv_destroy_cq(cq0));
	T_OK(ibv_dealloc_pd(pd0));
	T_OK(ibv_close_device(ctx0));
	t_pass();
}
