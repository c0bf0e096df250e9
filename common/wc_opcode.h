/* SPDX-License-Identifier: MIT */
/*
 * The completion opcode of a send-queue WQE, one table for the daemon's
 * completions and the library's flush on device loss.
 */
#ifndef SOFTRDMA_COMMON_WC_OPCODE_H
#define SOFTRDMA_COMMON_WC_OPCODE_H

#include <stdint.h>

#include <infiniband/softrdma.h>
#include <infiniband/verbs.h>

static inline uint8_t srd_send_wc_opcode(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_FLUSH:
		return IBV_WC_FLUSH;
	default:
		return IBV_WC_SEND;
	}
}

#endif
