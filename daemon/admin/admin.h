/* SPDX-License-Identifier: MIT */
/*
 * The administration commands (common/proto_admin.h) and what other parts
 * of the daemon contribute to them: the rdma_cm identifiers (the CM).  The
 * wire's per-device counters are read through daemon/net/net.h.
 */
#ifndef SOFTRDMA_DAEMON_ADMIN_H
#define SOFTRDMA_DAEMON_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/proto_admin.h"
#include "daemon/core/core.h"

srd_cmd_fn cmd_admin_link_add, cmd_admin_link_del;
srd_cmd_fn cmd_admin_dev_list, cmd_admin_dev_gids;
srd_cmd_fn cmd_admin_res_pd, cmd_admin_res_cq, cmd_admin_res_mr;
srd_cmd_fn cmd_admin_res_qp, cmd_admin_res_cm_id, cmd_admin_res_usage;
srd_cmd_fn cmd_admin_stat_dev, cmd_admin_stat_qp;
srd_cmd_fn cmd_admin_fault_add, cmd_admin_fault_clear, cmd_admin_fault_list;
srd_cmd_fn cmd_admin_capture_start, cmd_admin_capture_stop;
srd_cmd_fn cmd_admin_capture_show;

/* 0 if client c may change the daemon's devices and wires, else -EPERM. */
int admin_may_change(const struct srd_client *c);
/* Does s[0..size) hold a NUL (a request's string is terminated)? */
bool admin_terminated(const char *s, size_t size);

/* counters.c: a QP about to be destroyed leaves its counts to its device. */
void counters_qp_retire(struct srd_qp *qp);

/* --- rdma_cm identifiers (daemon/cm/cm.c defines it) ---------------------- */

/*
 * Fill out[0..max) with the CM identifiers from cursor start on (those of
 * device dev_index only, unless it is SRD_ADMIN_ALL) that who's pid
 * namespace sees; *next is the cursor of the first one left out,
 * SRD_ADMIN_END if none.  Returns how many.
 */
uint32_t cm_admin_list_ids(const struct srd_client *who, uint32_t start,
			   uint32_t dev_index, struct srd_admin_cm_id_info *out,
			   uint32_t max, uint32_t *next);

#endif
