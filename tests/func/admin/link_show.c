/* SPDX-License-Identifier: MIT */
/*
 * `softrdma link` and `softrdma dev` show the default device as rdma(8)
 * would: softrdma0 on lo, port 1 ACTIVE and LINK_UP, its GIDs and node
 * GUID agreeing with what the verbs API reports.
 */
#include <arpa/inet.h>
#include <endian.h>

#include "t_admin.h"

int main(void)
{
	static struct t_run r;
	struct t_dev d;
	union ibv_gid gid;
	char want[256], gidtxt[64];
	uint64_t guid;

	t_init("admin_link_show");
	t_cli_path();
	t_dev_open(&d);
	T_STR_EQ(ibv_get_device_name(d.list[0]), "softrdma0");

	t_cli(&r, "link", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "link softrdma0/1 state ACTIVE physical_state "
			   "LINK_UP netdev lo\n");
	/* "show" and an abbreviation say the same. */
	t_cli(&r, "l", "sh", "softrdma0/1", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "link softrdma0/1 state ACTIVE");

	/* Details: MTUs and the GID table, as the verbs API has them. */
	t_cli(&r, "-d", "link", "show", "softrdma0", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, " active_mtu 4096");
	T_OK(ibv_query_gid(d.ctx, 1, 0, &gid));
	T_ASSERT(inet_ntop(AF_INET6, gid.raw, gidtxt, sizeof(gidtxt)));
	T_STR_EQ(gidtxt, "::ffff:127.0.0.1");
	snprintf(want, sizeof(want), "gid 0 %s RoCEv2", gidtxt);
	T_EXPECT_IN(r.out, want);

	/* JSON, with the keys rdma -j uses. */
	t_cli(&r, "-j", "link", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "[{\"ifindex\":0,\"ifname\":\"softrdma0\","
			   "\"port\":1,\"state\":\"ACTIVE\","
			   "\"physical_state\":\"LINK_UP\",\"netdev\":\"lo\"");
	T_ASSERT(r.out[strlen(r.out) - 2] == ']');
	t_cli(&r, "-j", "-d", "link", NULL);
	T_EXPECT_IN(r.out, "\"gids\":[{\"index\":0,\"gid\":\"::ffff:127.0.0."
			   "1\","
			   "\"type\":\"RoCEv2\"}");

	/* dev: node GUID as ibv_get_device_guid has it. */
	guid = be64toh(ibv_get_device_guid(d.list[0]));
	snprintf(want, sizeof(want),
		 "0: softrdma0: node_type ca fw %s node_guid "
		 "%04x:%04x:%04x:%04x",
		 d.attr.fw_ver, (unsigned int)(guid >> 48),
		 (unsigned int)(guid >> 32) & 0xffff,
		 (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
	t_cli(&r, "dev", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, want);
	t_cli(&r, "-d", "dev", "show", "softrdma0", NULL);
	T_EXPECT_IN(r.out, " netdev lo contexts 1 ");
	t_cli(&r, "-p", "dev", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "\"node_type\": \"ca\"");

	t_dev_close(&d);
	t_pass();
}
