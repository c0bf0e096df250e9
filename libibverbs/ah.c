/* SPDX-License-Identifier: MIT */
/* Address handles, and building them from a received UD completion. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet.h"
#include "libibverbs/ibverbs.h"

LIB_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
					struct ibv_ah_attr *attr)
{
	struct srd_create_ah_req req = { 0 };
	struct srd_handle_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_CREATE_AH,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct ibv_ah *ah;
	int ret;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	req.pd_handle = pd->handle;
	req.attr = *attr;
	ret = srd_ctx_cmd(to_ctx(pd->context), &a);
	if (ret) {
		free(ah);
		errno = -ret;
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = rep.handle;
	return ah;
}

LIB_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	int ret =
		srd_destroy_handle(ah->context, SRD_CMD_DESTROY_AH, ah->handle);

	if (ret)
		return srd_ret_errno(ret);
	free(ah);
	return 0;
}

/* The index of our GID equal to gid, or -1 with errno set. */
static int find_gid_index(struct ibv_context *context, uint8_t port_num,
			  const union ibv_gid *gid)
{
	struct ibv_port_attr pattr;

	if (srd_query_port(context, port_num, &pattr, sizeof(pattr)))
		return -1;
	for (int i = 0; i < pattr.gid_tbl_len; i++) {
		struct srd_query_gid_rep rep;

		if (srd_query_gid_raw(to_ctx(context), port_num, (uint32_t)i,
				      &rep))
			continue;
		if (rep.valid && !memcmp(&rep.gid, gid, sizeof(*gid)))
			return i;
	}
	errno = ENOENT;
	return -1;
}

/*
 * RoCE v2 puts the IP header of a UD message in the 40-byte GRH buffer:
 * IPv6 as is, IPv4 in its last 20 bytes.  An IPv4 header with a good
 * checksum is taken for IPv4.  Returns 4, 6, or -1.
 */
static int grh_ip_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	uint8_t v6 = (uint8_t)(be32toh(grh->version_tclass_flow) >> 28);
	struct iphdr h;

	memcpy(&h, ip4, sizeof(h));
	if (v6 != 6)
		return h.version == 4 ? 4 : -1;
	if (h.version != 4 || h.ihl != 5)
		return 6;
	return srd_inet_csum_fold(srd_inet_csum_add(0, &h, sizeof(h))) == 0 ? 4
									    : 6;
}

LIB_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				   uint8_t port_num, struct ibv_wc *wc,
				   struct ibv_grh *grh,
				   struct ibv_ah_attr *ah_attr)
{
	union ibv_gid ours;
	int idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;

	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;
	switch (grh_ip_version(grh)) {
	case 4: {
		struct iphdr h;

		memcpy(&h, (const uint8_t *)grh + 20, sizeof(h));
		if ((ntohl(h.daddr) >> 28) == 0xe) {
			/* Multicast: no GID of ours to answer from. */
			errno = EINVAL;
			return -1;
		}
		srd_gid_from_v4(ours.raw, &h.daddr);
		srd_gid_from_v4(ah_attr->grh.dgid.raw, &h.saddr);
		ah_attr->grh.traffic_class = h.tos;
		break;
	}
	case 6: {
		uint32_t vtf = be32toh(grh->version_tclass_flow);

		ours = grh->dgid;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.flow_label = srd_ipv6_flow_label(vtf);
		ah_attr->grh.traffic_class = srd_ipv6_tclass(vtf);
		break;
	}
	default:
		errno = EPROTONOSUPPORT;
		return -1;
	}
	idx = find_gid_index(context, port_num, &ours);
	if (idx < 0)
		return -1;
	ah_attr->grh.sgid_index = (uint8_t)idx;
	return 0;
}

LIB_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						struct ibv_wc *wc,
						struct ibv_grh *grh,
						uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
