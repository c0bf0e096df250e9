/* SPDX-License-Identifier: MIT */
/*
 * softrdma's own definitions next to <infiniband/verbs.h>, as mlx5dv.h is
 * mlx5's: the resource types the library passes to the alloc/free
 * callbacks of a parent domain (ibv_parent_domain_init_attr), one per
 * kind of ring memory.  Like mlx5's, the upper 32 bits name the provider.
 */
#ifndef SOFTRDMA_INFINIBAND_SOFTRDMA_H
#define SOFTRDMA_INFINIBAND_SOFTRDMA_H

#include <stdint.h>

#define SOFTRDMA_RES_TYPE_PROVIDER ((uint64_t)0x5352 << 32) /* "SR" */
/* A QP's control page, send queue and receive queue (one buffer). */
#define SOFTRDMA_RES_TYPE_QP (SOFTRDMA_RES_TYPE_PROVIDER | 1)
/* An SRQ's control page and ring (one buffer). */
#define SOFTRDMA_RES_TYPE_SRQ (SOFTRDMA_RES_TYPE_PROVIDER | 4)
/* A CQ's control page and CQE ring (one buffer). */
#define SOFTRDMA_RES_TYPE_CQ (SOFTRDMA_RES_TYPE_PROVIDER | 5)

/*
 * IBTA 1.5 RDMA FLUSH, as rdma-core 47 spells it (rdma-core 44, whose API
 * <infiniband/verbs.h> keeps exactly, has ATOMIC WRITE only).  The values
 * are rdma-core's and the kernel's; struct ibv_qp_ex of rdma-core 47
 * continues with wr_flush right after wr_atomic_write, and softrdma's QPs
 * keep that pointer there, so programs built against either header find
 * it.  Defined only where the including header lacks them.
 */
#include <stddef.h>
#include <infiniband/verbs.h>

#ifndef IBV_QP_EX_WITH_FLUSH
#define IBV_ACCESS_FLUSH_GLOBAL (1 << 8)
#define IBV_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define IBV_QP_EX_WITH_FLUSH (1 << 11)
#define IBV_WR_FLUSH ((enum ibv_wr_opcode)14)
#define IBV_WC_FLUSH ((enum ibv_wc_opcode)8)

enum ibv_placement_type {
	IBV_FLUSH_GLOBAL = 1U << 0,
	IBV_FLUSH_PERSISTENT = 1U << 1,
};

enum ibv_selectivity_level {
	IBV_FLUSH_RANGE = 0,
	IBV_FLUSH_MR,
};

/* struct ibv_qp_ex as rdma-core 47 ends it. */
struct softrdma_qp_ex_flush {
	struct ibv_qp_ex qp_ex;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey,
			 uint64_t remote_addr, size_t len, uint8_t type,
			 uint8_t level);
};

static inline void ibv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
				uint64_t remote_addr, size_t len, uint8_t type,
				uint8_t level)
{
	((struct softrdma_qp_ex_flush *)qp)
		->wr_flush(qp, rkey, remote_addr, len, type, level);
}
#endif

/* device_cap_flags_ex bits (the kernel's IB_UVERBS_DEVICE_*) */
#ifndef IB_UVERBS_DEVICE_ATOMIC_WRITE
#define IB_UVERBS_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define IB_UVERBS_DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define IB_UVERBS_DEVICE_ATOMIC_WRITE (1ULL << 40)
#endif

#endif
