/* SPDX-License-Identifier: MIT */
/*
 * Debug dumps of WQEs and CQEs, in hex and decoded, shared by the library
 * (which logs what it posts) and the daemon (which logs what it writes).
 * Enabled with SOFTRDMA_TRACE=wqe,cqe (or "all").
 */
#ifndef SOFTRDMA_COMMON_DUMP_H
#define SOFTRDMA_COMMON_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "common/ring.h"

#define SRD_TRACE_ENV "SOFTRDMA_TRACE"
enum {
	SRD_TRACE_F_WQE = 1 << 0,
	SRD_TRACE_F_CQE = 1 << 1,
};

/* Parse SOFTRDMA_TRACE; returns SRD_TRACE_F_* bits. */
unsigned int srd_trace_flags_from_env(void);

/* One decoded line plus hex lines.  qpn identifies the queue. */
void srd_dump_send_wqe(FILE *f, uint32_t qpn, uint32_t idx, const void *slot,
		       uint32_t slot_size);
void srd_dump_recv_wqe(FILE *f, uint32_t qpn, uint32_t idx, const void *slot,
		       uint32_t slot_size, int is_srq);
void srd_dump_cqe(FILE *f, uint32_t cqn, uint32_t idx,
		  const struct srd_cqe *cqe);

/* An enum ibv_wc_status by its enumerator name without the prefix
 * ("REM_ACCESS_ERR"), "UNKNOWN" past the last. */
const char *srd_wc_status_name(unsigned int st);

#endif
