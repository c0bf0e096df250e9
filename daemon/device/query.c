/* SPDX-License-Identifier: MIT */
/* Device, port, GID and P_Key queries. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/core/core.h"
#include "daemon/device/link.h"

/* enum ibv_gid_type_sysfs (rdma-core driver.h): IB_ROCE_V1 0, ROCE_V2 1. */
#define GID_TYPE_SYSFS_ROCE_V2 1

int cmd_query_device(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	struct srd_query_device_rep *rep = REP(rp, struct srd_query_device_rep);

	rep->attr = c->dev->attr;
	rep->ex = c->dev->caps_ex;
	/* ODP reaches pages in place: not without the means to. */
	if (req_conn(c, rq)->mem->kind == SRD_MEM_NONE) {
		rep->ex.odp_general = 0;
		rep->ex.odp_rc = rep->ex.odp_uc = rep->ex.odp_ud = 0;
		rep->ex.odp_xrc = 0;
	}
	return 0;
}

int cmd_query_port(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_query_port_req *req = rq->data;
	const struct srd_port *p = &c->dev->port;
	struct ibv_port_attr *a;

	if (req->port_num != 1)
		return -EINVAL;
	a = &REP(rp, struct srd_query_port_rep)->attr;
	a->state = p->state;
	a->max_mtu = p->max_mtu;
	a->active_mtu = p->active_mtu;
	a->gid_tbl_len = SRD_MAX_GIDS;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = 0x80000000; /* SRD_MAX_MSG_SZ, what the engine takes */
	/* Packets dropped for their P_Key (wire_deliver): the port's
	 * IBV_DEVICE_BAD_PKEY_CNTR. */
	a->bad_pkey_cntr = p->bad_pkey;
	/* UD datagrams dropped for their Q_Key (responder.c), as rxe
	 * counts them: IBV_DEVICE_BAD_QKEY_CNTR. */
	a->qkey_viol_cntr = p->qkey_viol;
	a->pkey_tbl_len = 1;
	a->lid = 0;
	a->sm_lid = 0;
	a->lmc = 0;
	a->max_vl_num = 1; /* IBV_VL_0 */
	a->sm_sl = 0;
	a->subnet_timeout = 0;
	a->init_type_reply = 0;
	/* 4X EDR, "100.0 Gbps" in ibv_devinfo: a memory copy is at least
	 * that fast, and the value only has to look sensible. */
	a->active_width = 2;  /* IB_WIDTH_4X */
	a->active_speed = 32; /* IB_SPEED_EDR */
	a->phys_state = device_phys_state(
		c->dev, link_of_const(c->dev)->admin_up &&
				!link_of_const(c->dev)->removed);
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->flags = 0;
	a->port_cap_flags2 = 0;
	return 0;
}

int cmd_query_gid(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_query_gid_req *req = rq->data;
	struct srd_query_gid_rep *rep;

	if (req->port_num != 1 || req->index >= SRD_MAX_GIDS)
		return -EINVAL;
	rep = REP(rp, struct srd_query_gid_rep);
	rep->gid_type = GID_TYPE_SYSFS_ROCE_V2;
	if (device_gid_valid(c->dev, req->index)) {
		rep->gid = c->dev->port.gid[req->index];
		rep->valid = 1;
		snprintf(rep->netdev, sizeof(rep->netdev), "%s",
			 c->dev->netdev);
	}
	return 0;
}

int cmd_query_pkey(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_query_pkey_req *req = rq->data;

	if (req->port_num != 1 || req->index >= 1)
		return -EINVAL;
	REP(rp, struct srd_query_pkey_rep)->pkey = htobe16(0xffff);
	return 0;
}
