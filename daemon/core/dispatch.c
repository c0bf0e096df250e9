/* SPDX-License-Identifier: MIT */
/*
 * The command table: what ib_uverbs' method table is to the kernel.  Every
 * op names its handler, the exact payload size of a fixed-size request (or
 * the minimum of a variable one, which the handler then checks), and when
 * it may be used.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "common/place.h"
#include "daemon/core/mcast.h"

static const struct cmd_desc verbs_cmds[SRD_CMD__MAX] = {
	[SRD_CMD_HELLO] = { cmd_hello, sizeof(struct srd_hello_req),
			    F_NO_HELLO | F_NO_DEV },
	[SRD_CMD_LIST_DEVICES] = { cmd_list_devices, 0, F_NO_DEV },
	[SRD_CMD_OPEN_DEVICE] = { cmd_open_device,
				  sizeof(struct srd_open_device_req),
				  F_NO_DEV | F_FDS },
	[SRD_CMD_QUERY_DEVICE] = { cmd_query_device, 0, 0 },
	[SRD_CMD_QUERY_PORT] = { cmd_query_port,
				 sizeof(struct srd_query_port_req), 0 },
	[SRD_CMD_QUERY_GID] = { cmd_query_gid, sizeof(struct srd_query_gid_req),
				0 },
	[SRD_CMD_QUERY_PKEY] = { cmd_query_pkey,
				 sizeof(struct srd_query_pkey_req), 0 },
	[SRD_CMD_ALLOC_PD] = { cmd_alloc_pd, 0, 0 },
	[SRD_CMD_DEALLOC_PD] = { cmd_dealloc_pd, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_REG_MR] = { cmd_reg_mr, sizeof(struct srd_reg_mr_req),
			     F_VAR | F_FDS },
	[SRD_CMD_REREG_MR] = { cmd_rereg_mr, sizeof(struct srd_rereg_mr_req),
			       F_VAR | F_FDS },
	[SRD_CMD_DEREG_MR] = { cmd_dereg_mr, sizeof(struct srd_handle_req), 0 },
	[SRD_CMD_ALLOC_MW] = { cmd_alloc_mw, sizeof(struct srd_alloc_mw_req),
			       0 },
	[SRD_CMD_DEALLOC_MW] = { cmd_dealloc_mw, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_CREATE_COMP_CHANNEL] = { cmd_create_comp_channel, 0, 0 },
	[SRD_CMD_DESTROY_COMP_CHANNEL] = { cmd_destroy_comp_channel,
					   sizeof(struct srd_handle_req), 0 },
	[SRD_CMD_CREATE_CQ] = { cmd_create_cq, sizeof(struct srd_create_cq_req),
				0 },
	[SRD_CMD_RESIZE_CQ] = { cmd_resize_cq, sizeof(struct srd_resize_cq_req),
				0 },
	[SRD_CMD_DESTROY_CQ] = { cmd_destroy_cq, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_CREATE_QP] = { cmd_create_qp, sizeof(struct srd_create_qp_req),
				F_FDS },
	[SRD_CMD_MODIFY_QP] = { cmd_modify_qp, sizeof(struct srd_modify_qp_req),
				0 },
	[SRD_CMD_QUERY_QP] = { cmd_query_qp, sizeof(struct srd_query_qp_req),
			       0 },
	[SRD_CMD_DESTROY_QP] = { cmd_destroy_qp, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_CREATE_SRQ] = { cmd_create_srq,
				 sizeof(struct srd_create_srq_req), 0 },
	[SRD_CMD_MODIFY_SRQ] = { cmd_modify_srq,
				 sizeof(struct srd_modify_srq_req), 0 },
	[SRD_CMD_QUERY_SRQ] = { cmd_query_srq, sizeof(struct srd_handle_req),
				0 },
	[SRD_CMD_DESTROY_SRQ] = { cmd_destroy_srq,
				  sizeof(struct srd_handle_req), 0 },
	[SRD_CMD_CREATE_AH] = { cmd_create_ah, sizeof(struct srd_create_ah_req),
				0 },
	[SRD_CMD_DESTROY_AH] = { cmd_destroy_ah, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_ATTACH_MCAST] = { cmd_attach_mcast,
				   sizeof(struct srd_mcast_req), 0 },
	[SRD_CMD_DETACH_MCAST] = { cmd_detach_mcast,
				   sizeof(struct srd_mcast_req), 0 },
	[SRD_CMD_MODIFY_CQ] = { cmd_modify_cq, sizeof(struct srd_modify_cq_req),
				0 },
	[SRD_CMD_ALLOC_DM] = { cmd_alloc_dm, sizeof(struct srd_alloc_dm_req),
			       0 },
	[SRD_CMD_FREE_DM] = { cmd_free_dm, sizeof(struct srd_handle_req), 0 },
	[SRD_CMD_REG_DM_MR] = { cmd_reg_dm_mr, sizeof(struct srd_reg_dm_mr_req),
				0 },
	[SRD_CMD_OPEN_XRCD] = { cmd_open_xrcd, sizeof(struct srd_open_xrcd_req),
				F_FDS },
	[SRD_CMD_CLOSE_XRCD] = { cmd_close_xrcd, sizeof(struct srd_handle_req),
				 0 },
	[SRD_CMD_OPEN_QP] = { cmd_open_qp, sizeof(struct srd_open_qp_req), 0 },
	[SRD_CMD_ADVISE_MR] = { cmd_advise_mr, sizeof(struct srd_advise_mr_req),
				F_VAR },
	[SRD_CMD_IMPORT_PD] = { cmd_import_pd, sizeof(struct srd_handle_req),
				0 },
	[SRD_CMD_IMPORT_MR] = { cmd_import_mr, sizeof(struct srd_import_mr_req),
				0 },
	[SRD_CMD_IMPORT_DM] = { cmd_import_dm, sizeof(struct srd_handle_req),
				0 },
	[SRD_CMD_CREATE_FLOW] = { cmd_create_flow,
				  sizeof(struct srd_create_flow_req),
				  F_VAR | F_FDS },
	[SRD_CMD_DESTROY_FLOW] = { cmd_destroy_flow,
				   sizeof(struct srd_handle_req), 0 },
	[SRD_CMD_PLACE_SETUP] = { cmd_place_setup,
				  sizeof(struct srd_place_setup_req), 0 },
};

void *rep_payload(struct srd_rep *rp, size_t len)
{
	rp->len = len;
	memset(rp->data, 0, len);
	return rp->data;
}

void rep_add_fd(struct srd_rep *rp, int fd, bool keep)
{
	if (rp->nfds >= SRD_REP_MAX_FDS) {
		/* A handler bug, not a client's: never leak the fd. */
		if (!keep)
			close(fd);
		return;
	}
	if (keep)
		rp->keep_mask |= 1u << rp->nfds;
	rp->fds[rp->nfds++] = fd;
}

const struct cmd_family verbs_cmd_family = {
	.base = 0,
	.count = SRD_CMD__MAX,
	.cmds = verbs_cmds,
};

/* Command families by op range: verbs, administration, connection
 * management.  Each family's table lives with its handlers. */
static const struct cmd_family *const families[] = {
	&verbs_cmd_family,
	&admin_cmd_family,
	&cm_cmd_family,
};

static const struct cmd_desc *cmd_find(uint32_t op)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct cmd_family *f = families[i];

		if (op >= f->base && op - f->base < f->count &&
		    f->cmds[op - f->base].fn)
			return &f->cmds[op - f->base];
	}
	return NULL;
}

int dispatch(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct cmd_desc *cd;

	if (rq->op == 0 || !(cd = cmd_find(rq->op)))
		return -EOPNOTSUPP;
	if (!c->hello && !(cd->flags & F_NO_HELLO))
		return -EPROTO;
	if (!c->dev && !(cd->flags & F_NO_DEV))
		return -EPROTO;
	if ((cd->flags & F_VAR) ? rq->len < cd->len : rq->len != cd->len)
		return -EINVAL;
	if (rq->nfds && !(cd->flags & F_FDS))
		return -EINVAL;
	/* An importer's verbs commands act on the context it imported
	 * (rq->conn stays the importer); the others are its own. */
	if (c->ctx && rq->op < SRD_CMD__MAX && !(cd->flags & F_NO_DEV))
		return cd->fn(c->ctx, rq, rp);
	return cd->fn(c, rq, rp);
}
