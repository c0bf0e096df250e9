/* SPDX-License-Identifier: MIT */
/*
 * `softrdma link add NAME netdev lo` makes a second device on loopback:
 * it shows in ibv_get_device_list, opens, has lo's GIDs and an active
 * port; a second add of the name is refused; delete takes it away.
 */
#include <arpa/inet.h>

#include "t_admin.h"

int main(void)
{
	static struct t_run r;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr port;
	union ibv_gid gid;
	char txt[64];
	int n;

	t_init("admin_link_add_lo");
	t_cli_path();
	T_ASSERT(t_have_device("softrdma0")); /* starts the daemon */
	T_ASSERT(!t_have_device("lo2"));

	t_cli(&r, "link", "add", "lo2", "type", "softrdma", "netdev", "lo",
	      NULL);
	T_EQ(r.status, 0);
	T_EQ(strlen(r.out), 0);
	T_ASSERT(t_have_device("lo2"));

	list = ibv_get_device_list(&n);
	T_ASSERT(list);
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "lo2"))
			ctx = T_NONNULL(ibv_open_device(list[i]));
	ibv_free_device_list(list);
	T_ASSERT(ctx);
	T_OK(ibv_query_port(ctx, 1, &port));
	T_EQ(port.state, IBV_PORT_ACTIVE);
	T_EQ(port.active_mtu, IBV_MTU_4096);
	T_OK(ibv_query_gid(ctx, 1, 0, &gid));
	T_ASSERT(inet_ntop(AF_INET6, gid.raw, txt, sizeof(txt)));
	T_STR_EQ(txt, "::ffff:127.0.0.1");
	T_OK(ibv_close_device(ctx));

	t_cli(&r, "link", "show", "lo2", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "link lo2/1 state ACTIVE physical_state LINK_UP "
			   "netdev lo\n");
	t_cli(&r, "-d", "dev", NULL);
	T_EXPECT_IN(r.out, "1: lo2: node_type ca ");
	T_EXPECT_IN(r.out, " origin runtime");

	/* The name is taken. */
	t_cli(&r, "link", "add", "lo2", "netdev", "lo", NULL);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "device \"lo2\" already exists");
	t_cli(&r, "link", "add", "softrdma0", "netdev", "lo", NULL);
	T_EQ(r.status, 1);

	t_cli(&r, "link", "delete", "lo2", NULL);
	T_EQ(r.status, 0);
	T_ASSERT(!t_have_device("lo2"));
	T_ASSERT(t_have_device("softrdma0"));
	t_cli(&r, "link", NULL);
	T_EXPECT_NOT_IN(r.out, "lo2");

	/* The name is free again; the new device gets a new index. */
	t_cli(&r, "link", "add", "lo2", "netdev", "lo", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "dev", "show", "lo2", NULL);
	T_EXPECT_IN(r.out, "2: lo2: ");
	t_pass();
}
