/* SPDX-License-Identifier: MIT */
/*
 * Device, port, GID and P_Key queries: sane limits, the loopback port's
 * state and addresses, and errors for a bad port or index.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdio.h>

#include "t_util.h"

/* ibv_query_gid_type is exported (IBVERBS_PRIVATE) but not declared in
 * verbs.h; 1 is IBV_GID_TYPE_SYSFS_ROCE_V2. */
typedef int (*query_gid_type_fn)(struct ibv_context *, uint8_t, unsigned int,
				 int *);
#define T_GID_TYPE_SYSFS_ROCE_V2 1

static void check_device_attr(struct ibv_context *ctx,
			      const struct ibv_device_attr *a)
{
	t_log("fw %s max_qp %d max_qp_wr %d max_sge %d max_cqe %d atomic %d",
	      a->fw_ver, a->max_qp, a->max_qp_wr, a->max_sge, a->max_cqe,
	      a->atomic_cap);
	T_NE(a->fw_ver[0], 0);
	T_EQ(a->node_guid, ibv_get_device_guid(ctx->device));
	T_NE(a->max_mr_size, 0); /* u64: UINT64_MAX is fine */
	T_GT(a->max_qp, 0);
	T_GT(a->max_qp_wr, 0);
	T_GT(a->max_sge, 0);
	T_GT(a->max_sge_rd, 0);
	T_GT(a->max_cq, 0);
	T_GT(a->max_cqe, 0);
	T_GT(a->max_mr, 0);
	T_GT(a->max_pd, 0);
	T_GT(a->max_qp_rd_atom, 0);
	T_GT(a->max_qp_init_rd_atom, 0);
	T_GT(a->max_srq, 0);
	T_GT(a->max_srq_wr, 0);
	T_GT(a->max_srq_sge, 0);
	T_GT(a->max_ah, 0);
	T_GE(a->max_pkeys, 1);
	T_GE(a->phys_port_cnt, 1);
	T_NE(a->atomic_cap, IBV_ATOMIC_NONE);
}

static void check_port_attr(const struct ibv_port_attr *p)
{
	t_log("port state %d mtu %d/%d gids %d pkeys %d link %d", p->state,
	      p->active_mtu, p->max_mtu, p->gid_tbl_len, p->pkey_tbl_len,
	      p->link_layer);
	T_EQ(p->state, IBV_PORT_ACTIVE);
	T_EQ(p->link_layer, IBV_LINK_LAYER_ETHERNET);
	T_GE(p->active_mtu, IBV_MTU_256);
	T_LE(p->active_mtu, IBV_MTU_4096);
	T_LE(p->active_mtu, p->max_mtu);
	T_GE(p->gid_tbl_len, 1);
	T_GE(p->pkey_tbl_len, 1);
	T_GT(p->max_msg_sz, 0);
	T_EQ(p->phys_state, 5); /* LinkUp */
}

int main(void)
{
	static const uint8_t lo_gid[16] = { 0, 0, 0,	0,    0,   0, 0, 0,
					    0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	struct ibv_gid_entry entry;
	query_gid_type_fn query_gid_type;
	union ibv_gid gid;
	struct t_dev d;
	__be16 pkey;
	int gid_type, i;

	t_init("device_query");
	t_dev_open(&d);

	T_OK(ibv_query_device(d.ctx, &attr));
	check_device_attr(d.ctx, &attr);
	memset(&ex, 0, sizeof(ex));
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ex));
	T_EQ(ex.orig_attr.max_qp_wr, attr.max_qp_wr);
	T_EQ(ex.orig_attr.max_cqe, attr.max_cqe);

	memset(&port, 0xa5, sizeof(port));
	T_OK(ibv_query_port(d.ctx, T_PORT, &port));
	check_port_attr(&port);

	/* GID 0 is the IPv4-mapped loopback address, RoCE v2. */
	T_EQ(ibv_query_gid(d.ctx, T_PORT, 0, &gid), 0);
	T_MEMEQ(gid.raw, lo_gid, 16);
	memset(&entry, 0, sizeof(entry));
	T_OK(ibv_query_gid_ex(d.ctx, T_PORT, 0, &entry, 0));
	T_MEMEQ(entry.gid.raw, lo_gid, 16);
	T_EQ(entry.gid_index, 0);
	T_EQ(entry.port_num, T_PORT);
	T_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
	query_gid_type = (query_gid_type_fn)dlsym(RTLD_DEFAULT, "ibv_query_gid_"
								"type");
	if (!query_gid_type)
		T_FAIL("ibv_query_gid_type is not exported");
	gid_type = -1;
	T_EQ(query_gid_type(d.ctx, T_PORT, 0, &gid_type), 0);
	T_EQ(gid_type, T_GID_TYPE_SYSFS_ROCE_V2);

	/* Empty slots read as zero through ibv_query_gid, ENODATA through
	 * ibv_query_gid_ex (rdma-core's behaviour). */
	for (i = 1; i < port.gid_tbl_len; i++) {
		static const uint8_t zero[16];

		T_EQ(ibv_query_gid(d.ctx, T_PORT, i, &gid), 0);
		if (memcmp(gid.raw, zero, 16))
			continue;
		T_RET(ibv_query_gid_ex(d.ctx, T_PORT, i, &entry, 0), ENODATA);
		break;
	}
	/* Out of the table or on a port that doesn't exist: errors. */
	T_EQ(ibv_query_gid(d.ctx, T_PORT, port.gid_tbl_len, &gid), -1);
	T_RET(ibv_query_gid_ex(d.ctx, T_PORT, port.gid_tbl_len, &entry, 0),
	      EINVAL);
	T_EQ(ibv_query_gid(d.ctx, 2, 0, &gid), -1);

	/* One P_Key, the default full-membership 0xffff. */
	T_EQ(ibv_query_pkey(d.ctx, T_PORT, 0, &pkey), 0);
	T_EQ(be16toh(pkey), 0xffff);
	T_EQ(ibv_get_pkey_index(d.ctx, T_PORT, htobe16(0xffff)), 0);
	T_LT(ibv_get_pkey_index(d.ctx, T_PORT, htobe16(0x1234)), 0);
	T_EQ(ibv_query_pkey(d.ctx, T_PORT, port.pkey_tbl_len, &pkey), -1);

	/* A port that doesn't exist: query_port returns the errno. */
	T_RET(ibv_query_port(d.ctx, 2, &port), EINVAL);
	T_RET(ibv_query_port(d.ctx, 0, &port), EINVAL);
	T_RET(ibv_query_port(d.ctx, 255, &port), EINVAL);

	t_dev_close(&d);
	t_pass();
}
