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

#endif
