/* SPDX-License-Identifier: MIT */
/*
 * Per-client and per-user limits on what one party may take of the
 * daemon: objects of each type, the daemon's memory mappings (its
 * vm.max_map_count is shared by everybody), registered bytes, device
 * memory bytes, connections and the descriptors the daemon holds for
 * them.  Over a limit a verb fails with ENOMEM, as the kernel's do; over
 * a descriptor or connection limit with EMFILE (the user's share) or
 * ENFILE (the daemon's), as opening a uverbs file would.
 */
#ifndef SOFTRDMA_DAEMON_LIMITS_H
#define SOFTRDMA_DAEMON_LIMITS_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum srd_res {
	SRD_RES_PD,
	SRD_RES_MR,
	SRD_RES_CQ,
	SRD_RES_QP,
	SRD_RES_SRQ,
	SRD_RES_AH,
	SRD_RES_MW,
	SRD_RES_DM,
	SRD_RES_CHANNEL,
	SRD_RES_MAPS,	  /* daemon memory mappings */
	SRD_RES_BYTES,	  /* registered bytes */
	SRD_RES_XRCD,	  /* XRC domain handles */
	SRD_RES_DM_BYTES, /* device memory, in 64-byte granules' bytes */
	SRD_RES_CLIENTS,  /* connections (a client's own is 1) */
	SRD_RES_FDS,	  /* descriptors the daemon holds for them */
	SRD_RES_NUM
};

/* What one client or one user holds. */
struct srd_usage {
	uint64_t n[SRD_RES_NUM];
};

struct srd_limits {
	uint64_t client[SRD_RES_NUM];
	uint64_t user[SRD_RES_NUM];
	/* Descriptors: the daemon's RLIMIT_NOFILE, and what ordinary users'
	 * clients leave of it (limits.c says who may use it). */
	uint64_t fd_budget;
	uint64_t fd_reserve;
	uint64_t fds_held; /* charged to every client together */
};

/* Config keyword of a resource ("qp", "mr_bytes", ...); -1 if unknown. */
int limits_res_by_name(const char *name);

static_assert(SRD_RES_NUM == 15, "SRD_ADMIN_USAGE_NRES");

#endif
