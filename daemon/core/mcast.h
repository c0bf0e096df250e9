/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups of a device: what rxe's mcg/mca tables are.  A group
 * is a multicast GID (0xff.. or IPv4-mapped 224.0.0.0/4) and the UD QPs
 * attached to it; it exists while one QP is attached.  The transport
 * delivers a packet sent to the group's GID with destination QPN 0xFFFFFF
 * to every attached QP (daemon/transport/wire_mcast.c), the sender's own included
 * when it is attached, as rxe does.
 *
 * Limits are rxe's and appear in ibv_query_device; going over them fails
 * with ENOMEM.  The multicast LID is ignored, as the RoCE annex says.
 */
#ifndef SOFTRDMA_DAEMON_MCAST_H
#define SOFTRDMA_DAEMON_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/core/core.h"

#define SRD_MCAST_MAX_GRP 8192
#define SRD_MCAST_MAX_QP_ATTACH 56
#define SRD_MCAST_MAX_TOTAL_ATTACH 0x70000
/* The destination QPN of every multicast packet. */
#define SRD_MCAST_QPN 0xffffffu

struct srd_mcast_group {
	union ibv_gid gid;
	uint32_t nqps;
	struct srd_qp *qp[SRD_MCAST_MAX_QP_ATTACH];
};

/* A device's groups (dev->mcast, NULL while it has none). */
struct srd_mcast {
	uint32_t ngroups;
	uint32_t room;
	uint32_t total; /* attachments over all groups */
	struct srd_mcast_group **group;
};

/* Whether a GID is a multicast address (as rdma_is_multicast_addr). */
bool mcast_gid_is_mc(const uint8_t gid[16]);
/* The group of gid on dev; NULL if no QP is attached to it. */
struct srd_mcast_group *mcast_find(const struct srd_device *dev,
				   const uint8_t gid[16]);
/* A QP goes away without detaching (its client died): it leaves all. */
void mcast_qp_gone(struct srd_qp *qp);

int cmd_attach_mcast(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp);
int cmd_detach_mcast(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp);

#endif
