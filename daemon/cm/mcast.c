/* SPDX-License-Identifier: MIT */
/*
 * rdma_join_multicast on a RoCE v2 port, as the kernel's rdma_cm does it
 * (cma_iboe_join_multicast): no SA to ask, so the join succeeds at once
 * with a MULTICAST_JOIN event that describes the group: the MGID is the
 * IPv4 address IPv4-mapped (::ffff:a.b.c.d), the destination QPN
 * 0xFFFFFF, the Q_Key RDMA_UDP_QKEY, hop limit 64.  IPv6 groups are not
 * joined on RoCE v2, as in the kernel.  Attaching the QP is the library's
 * part (ibv_attach_mcast when the event arrives); the IP group is joined
 * by the device while a QP is attached (daemon/transport/wire_mcast.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/cm/cm.h"
#include "daemon/core/mcast.h"

#define MC_HOP_LIMIT 64 /* IPV6_DEFAULT_HOPLIMIT, for IPv4 on RoCE v2 */

static int mc_check(const struct cma_id *id,
		    const struct srd_cm_join_mcast_req *req)
{
	const struct sockaddr_in *sin = (const void *)&req->addr;

	if (!id->port ||
	    (id->state != CMA_ADDR_BOUND && id->state != CMA_ADDR_RESOLVED))
		return -EINVAL;
	if (id->qp_type != IBV_QPT_UD)
		return -EINVAL;
	if (req->join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	    req->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return -EINVAL;
	if (req->addr.ss_family == AF_INET6)
		return -EOPNOTSUPP;
	if (req->addr.ss_family != AF_INET ||
	    !IN_MULTICAST(ntohl(sin->sin_addr.s_addr)))
		return -EINVAL;
	return 0;
}

int cma_join_mcast(struct cma_id *id, const struct srd_cm_join_mcast_req *req)
{
	const struct sockaddr_in *sin = (const void *)&req->addr;
	struct srd_cm_event_rep rec = {
		.uid = id->uid,
		.handle = id->handle,
		.listen_handle = SRD_NO_HANDLE,
		.event = RDMA_CM_EVENT_MULTICAST_JOIN,
		.mc_uid = req->uid,
	};
	struct ibv_ah_attr *ah = &rec.ah_attr;
	int err = mc_check(id, req);

	if (err)
		return err;
	ah->is_global = 1;
	ah->port_num = 1;
	srd_gid_from_v4(ah->grh.dgid.raw, &sin->sin_addr);
	ah->grh.sgid_index = id->sgid_index;
	ah->grh.hop_limit = MC_HOP_LIMIT;
	ah->grh.traffic_class = id->tos;
	rec.ud_qp_num = SRD_MCAST_QPN;
	rec.ud_qkey = id->qkey ? id->qkey : CM_UDP_QKEY;
	cma_event_queue(id, &rec);
	return 0;
}

int cma_leave_mcast(struct cma_id *id, uint64_t uid)
{
	/* Nothing is held here: the QP's attachment was the library's. */
	return 0;
}
