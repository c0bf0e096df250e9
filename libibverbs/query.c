/* SPDX-License-Identifier: MIT */
/* Device, port, GID and P_Key queries. */
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <string.h>

#include "common/dev_clock.h"
#include "libibverbs/ibverbs.h"

static int query_device_rep(struct ibv_context *context,
			    struct srd_query_device_rep *rep)
{
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_DEVICE,
		.rep = rep,
		.rep_len = sizeof(*rep),
	};

	return srd_ctx_cmd(to_ctx(context), &a);
}

LIB_EXPORT int ibv_query_device(struct ibv_context *context,
				struct ibv_device_attr *device_attr)
{
	struct srd_query_device_rep rep;
	int ret = query_device_rep(context, &rep);

	if (ret)
		return srd_ret_errno(ret);
	*device_attr = rep.attr;
	return 0;
}

int srd_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct srd_query_device_rep rep;
	struct ibv_device_attr_ex ex;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&ex, 0, sizeof(ex));
	ret = query_device_rep(context, &rep);
	if (ret)
		return srd_ret_errno(ret);
	ex.orig_attr = rep.attr;
	ex.completion_timestamp_mask = rep.ex.completion_timestamp_mask;
	ex.hca_core_clock = rep.ex.hca_core_clock;
	ex.cq_mod_caps.max_cq_count = rep.ex.max_cq_count;
	ex.cq_mod_caps.max_cq_period = rep.ex.max_cq_period;
	ex.max_dm_size = rep.ex.max_dm_size;
	ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags |
				 rep.ex.cap_flags_hi;
	ex.odp_caps.general_caps = rep.ex.odp_general;
	ex.odp_caps.per_transport_caps.rc_odp_caps = rep.ex.odp_rc;
	ex.odp_caps.per_transport_caps.uc_odp_caps = rep.ex.odp_uc;
	ex.odp_caps.per_transport_caps.ud_odp_caps = rep.ex.odp_ud;
	ex.xrc_odp_caps = rep.ex.odp_xrc;
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	ex.max_wq_type_rq = 0;
	ex.raw_packet_caps = rep.ex.raw_packet_caps;
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

/* As mlx5: the raw clock is a count of device clock ticks, in tv_nsec
 * (tv_sec 0), on the time line of the CQE timestamps. */
int srd_query_rt_values(struct ibv_context *context,
			struct ibv_values_ex *values)
{
	uint32_t mask;

	if (!values ||
	    (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK))
		return EINVAL;
	mask = values->comp_mask;
	if (mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)srd_dev_clock_ns();
	}
	values->comp_mask = mask;
	return 0;
}

int srd_query_port(struct ibv_context *context, uint8_t port_num,
		   struct ibv_port_attr *attr, size_t attr_len)
{
	struct srd_query_port_req req = { .port_num = port_num };
	struct srd_query_port_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_PORT,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret = srd_ctx_cmd(to_ctx(context), &a);

	/* Only a negative errno fails: then the result is a positive one,
	 * which tells the compiler attr is written whenever 0 comes back. */
	if (ret < 0)
		return srd_ret_errno(ret);
	memcpy(attr, &rep.attr,
	       attr_len < sizeof(rep.attr) ? attr_len : sizeof(rep.attr));
	return 0;
}

/* The rdma-core 1.1 entry point: the port attributes as they were before
 * port_cap_flags2 was added. */
#undef ibv_query_port
LIB_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			      struct _compat_ibv_port_attr *port_attr)
{
	return srd_query_port(context, port_num,
			      (struct ibv_port_attr *)port_attr,
			      offsetof(struct ibv_port_attr, port_cap_flags2));
}

int srd_query_gid_raw(struct srd_context *ctx, uint32_t port, uint32_t index,
		      struct srd_query_gid_rep *rep)
{
	struct srd_query_gid_req req = { .port_num = port, .index = index };
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_GID,
		.req = &req,
		.req_len = sizeof(req),
		.rep = rep,
		.rep_len = sizeof(*rep),
	};

	return srd_ctx_cmd(ctx, &a);
}

LIB_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			     int index, union ibv_gid *gid)
{
	struct srd_query_gid_rep rep;
	int ret;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = srd_query_gid_raw(to_ctx(context), port_num, (uint32_t)index,
				&rep);
	if (ret) {
		errno = -ret;
		return -1;
	}
	/* An empty slot reads as the zero GID, as the sysfs file does. */
	if (rep.valid)
		*gid = rep.gid;
	else
		memset(gid, 0, sizeof(*gid));
	return 0;
}

static uint32_t gid_type_of(const struct srd_query_gid_rep *rep)
{
	return rep->gid_type == SRD_GID_TYPE_SYSFS_ROCE_V2
		       ? IBV_GID_TYPE_ROCE_V2
		       : IBV_GID_TYPE_ROCE_V1;
}

static int fill_gid_entry(struct srd_context *ctx, uint32_t port,
			  uint32_t index, struct ibv_gid_entry *e)
{
	struct srd_query_gid_rep rep;
	char name[SRD_DEV_NAME_MAX + 1];
	int ret;

	ret = srd_query_gid_raw(ctx, port, index, &rep);
	if (ret)
		return -ret;
	if (!rep.valid)
		return ENODATA;
	memset(e, 0, sizeof(*e));
	e->gid = rep.gid;
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = gid_type_of(&rep);
	memcpy(name, rep.netdev, SRD_DEV_NAME_MAX);
	name[SRD_DEV_NAME_MAX] = '\0';
	e->ndev_ifindex = name[0] ? if_nametoindex(name) : 0;
	return 0;
}

LIB_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				 uint32_t gid_index,
				 struct ibv_gid_entry *entry, uint32_t flags,
				 size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = fill_gid_entry(to_ctx(context), port_num, gid_index, &e);
	if (ret)
		return ret;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

LIB_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					struct ibv_gid_entry *entries,
					size_t max_entries, uint32_t flags,
					size_t entry_size)
{
	struct ibv_device_attr dattr;
	size_t n = 0;
	int ret;

	if (flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	ret = ibv_query_device(context, &dattr);
	if (ret)
		return -ret;
	for (uint32_t port = 1; port <= dattr.phys_port_cnt; port++) {
		struct ibv_port_attr pattr;

		ret = srd_query_port(context, (uint8_t)port, &pattr,
				     sizeof(pattr));
		if (ret)
			return -ret;
		for (int i = 0; i < pattr.gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			ret = fill_gid_entry(to_ctx(context), port, (uint32_t)i,
					     &e);
			if (ret == ENODATA)
				continue;
			if (ret)
				return -ret;
			if (n == max_entries)
				return -EINVAL;
			memcpy((char *)entries + n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return (ssize_t)n;
}

LIB_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				  unsigned int index,
				  enum srd_gid_type_sysfs *type)
{
	struct srd_query_gid_rep rep;
	int ret;

	ret = srd_query_gid_raw(to_ctx(context), port_num, index, &rep);
	if (ret) {
		errno = -ret;
		return -1;
	}
	/* Every slot of a RoCE v2 table has that type, filled or not. */
	*type = rep.valid ? (enum srd_gid_type_sysfs)rep.gid_type
			  : SRD_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

LIB_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			      int index, __be16 *pkey)
{
	struct srd_query_pkey_req req = { .port_num = port_num,
					  .index = (uint32_t)index };
	struct srd_query_pkey_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_QUERY_PKEY,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = srd_ctx_cmd(to_ctx(context), &a);
	if (ret) {
		errno = -ret;
		return -1;
	}
	*pkey = rep.pkey;
	return 0;
}

LIB_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
				  __be16 pkey)
{
	struct ibv_port_attr pattr;
	__be16 pkey_i;

	if (srd_query_port(context, port_num, &pattr, sizeof(pattr)))
		return -1;
	for (int i = 0; i < pattr.pkey_tbl_len; i++) {
		if (ibv_query_pkey(context, port_num, i, &pkey_i))
			return -1;
		if (pkey_i == pkey)
			return i;
	}
	errno = ENOENT;
	return -1;
}
