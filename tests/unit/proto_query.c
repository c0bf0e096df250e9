/* SPDX-License-Identifier: MIT */
/* QUERY_DEVICE, QUERY_PORT, QUERY_GID, QUERY_PKEY. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

int main(void)
{
	static const uint8_t lo4[16] = {
		[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1
	};
	struct t_daemon td;
	struct t_client c;
	struct srd_query_device_rep dev;
	struct srd_query_port_rep port;
	struct srd_query_port_req preq = { .port_num = 1 };
	struct srd_query_gid_req greq = { .port_num = 1 };
	struct srd_query_gid_rep grep;
	struct srd_query_pkey_req kreq = { .port_num = 1 };
	struct srd_query_pkey_rep krep;
	uint32_t len;

	t_daemon_start(&td, NULL);
	t_client_open(&c, td.name);

	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_DEVICE, NULL, 0, NULL, 0, &dev,
		   sizeof(dev), &len, NULL, NULL),
	     0);
	T_EQ(len, sizeof(dev));
	T_ASSERT(!strcmp(dev.attr.fw_ver, "0.1.0"));
	T_ASSERT(dev.attr.node_guid != 0);
	T_EQ(dev.attr.sys_image_guid, dev.attr.node_guid);
	T_EQ(dev.attr.max_qp, 16384);
	T_EQ(dev.attr.max_qp_wr, 16384);
	T_EQ(dev.attr.max_sge, 32);
	T_EQ(dev.attr.max_cqe, 32767);
	T_EQ(dev.attr.max_mr, 65536);
	T_EQ(dev.attr.max_srq_sge, 27);
	T_EQ(dev.attr.phys_port_cnt, 1);
	T_EQ(dev.attr.atomic_cap, IBV_ATOMIC_HCA);
	T_EQ(dev.attr.max_mr_size, UINT64_MAX);
	T_EQ(dev.attr.max_pkeys, 1);
	T_ASSERT(dev.attr.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN);
	T_ASSERT(!(dev.attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE));
	T_ASSERT(!(dev.attr.device_cap_flags & IBV_DEVICE_AUTO_PATH_MIG));
	/* Locally administered, unicast: derived from the name on lo. */
	T_EQ(((uint8_t *)&dev.attr.node_guid)[0] & 3, 2);
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_DEVICE, &len, 4, NULL, 0, NULL, 0, NULL,
		   NULL, NULL),
	     -EINVAL);

	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PORT, &preq, sizeof(preq), NULL, 0,
		   &port, sizeof(port), NULL, NULL, NULL),
	     0);
	T_EQ(port.attr.state, IBV_PORT_ACTIVE);
	T_EQ(port.attr.max_mtu, IBV_MTU_4096);
	T_EQ(port.attr.active_mtu, IBV_MTU_4096); /* lo: 65536 */
	T_EQ(port.attr.gid_tbl_len, SRD_MAX_GIDS);
	T_EQ(port.attr.pkey_tbl_len, 1);
	T_EQ(port.attr.link_layer, IBV_LINK_LAYER_ETHERNET);
	T_EQ(port.attr.phys_state, 5);
	T_EQ(port.attr.max_msg_sz, 0x80000000u);
	T_ASSERT(port.attr.port_cap_flags & IBV_PORT_CM_SUP);
	preq.port_num = 2;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PORT, &preq, sizeof(preq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	preq.port_num = 0;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PORT, &preq, sizeof(preq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);

	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_GID, &greq, sizeof(greq), NULL, 0, &grep,
		   sizeof(grep), NULL, NULL, NULL),
	     0);
	T_EQ(grep.valid, 1);
	T_ASSERT(!memcmp(grep.gid.raw, lo4, 16));
	T_EQ(grep.gid_type, 1); /* IBV_GID_TYPE_SYSFS_ROCE_V2 */
	T_ASSERT(!strcmp(grep.netdev, "lo"));
	greq.index = SRD_MAX_GIDS - 1; /* lo has fewer addresses */
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_GID, &greq, sizeof(greq), NULL, 0, &grep,
		   sizeof(grep), NULL, NULL, NULL),
	     0);
	T_EQ(grep.valid, 0);
	for (int i = 0; i < 16; i++)
		T_EQ(grep.gid.raw[i], 0);
	greq.index = SRD_MAX_GIDS;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_GID, &greq, sizeof(greq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	greq.index = 0;
	greq.port_num = 2;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_GID, &greq, sizeof(greq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);

	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PKEY, &kreq, sizeof(kreq), NULL, 0,
		   &krep, sizeof(krep), NULL, NULL, NULL),
	     0);
	T_EQ(krep.pkey, htons(0xffff));
	kreq.index = 1;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PKEY, &kreq, sizeof(kreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	kreq.index = 0;
	kreq.port_num = 3;
	T_EQ(t_cmd(c.fd, SRD_CMD_QUERY_PKEY, &kreq, sizeof(kreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);

	t_client_close(&c);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
