/* SPDX-License-Identifier: MIT */
/*
 * Administration commands (common/proto_admin.h): the command table, and
 * the device commands: adding and deleting devices on interfaces, listing
 * devices and their GID tables.  Resources are in admin_res.c, counters
 * in counters.c, faults and capture in admin_net.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/admin/admin.h"
#include "daemon/device/link.h"

#define ADMIN(op) [(op)-SRD_CMD_ADMIN_BASE]

static const struct cmd_desc admin_cmds[SRD_ADMIN__END - SRD_CMD_ADMIN_BASE] = {
	ADMIN(SRD_ADMIN_LINK_ADD) = { cmd_admin_link_add,
				      sizeof(struct srd_admin_link_add_req),
				      F_NO_DEV },
	ADMIN(SRD_ADMIN_LINK_DEL) = { cmd_admin_link_del,
				      sizeof(struct srd_admin_link_del_req),
				      F_NO_DEV },
	ADMIN(SRD_ADMIN_DEV_LIST) = { cmd_admin_dev_list,
				      sizeof(struct srd_admin_list_req),
				      F_NO_DEV },
	ADMIN(SRD_ADMIN_DEV_GIDS) = { cmd_admin_dev_gids,
				      sizeof(struct srd_admin_dev_gids_req),
				      F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_PD) = { cmd_admin_res_pd,
				    sizeof(struct srd_admin_list_req),
				    F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_CQ) = { cmd_admin_res_cq,
				    sizeof(struct srd_admin_list_req),
				    F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_MR) = { cmd_admin_res_mr,
				    sizeof(struct srd_admin_list_req),
				    F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_QP) = { cmd_admin_res_qp,
				    sizeof(struct srd_admin_list_req),
				    F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_CM_ID) = { cmd_admin_res_cm_id,
				       sizeof(struct srd_admin_list_req),
				       F_NO_DEV },
	ADMIN(SRD_ADMIN_RES_USAGE) = { cmd_admin_res_usage,
				       sizeof(struct srd_admin_list_req),
				       F_NO_DEV },
	ADMIN(SRD_ADMIN_STAT_DEV) = { cmd_admin_stat_dev,
				      sizeof(struct srd_admin_stat_dev_req),
				      F_NO_DEV },
	ADMIN(SRD_ADMIN_STAT_QP) = { cmd_admin_stat_qp,
				     sizeof(struct srd_admin_stat_qp_req),
				     F_NO_DEV },
	ADMIN(SRD_ADMIN_FAULT_ADD) = { cmd_admin_fault_add,
				       sizeof(struct srd_admin_fault_add_req),
				       F_NO_DEV },
	ADMIN(SRD_ADMIN_FAULT_CLEAR) = { cmd_admin_fault_clear, 0, F_NO_DEV },
	ADMIN(SRD_ADMIN_FAULT_LIST) = { cmd_admin_fault_list,
					sizeof(struct srd_admin_list_req),
					F_NO_DEV },
	ADMIN(SRD_ADMIN_CAPTURE_START) = { cmd_admin_capture_start,
					   sizeof(struct srd_admin_capture_start_req),
					   F_NO_DEV },
	ADMIN(SRD_ADMIN_CAPTURE_STOP) = { cmd_admin_capture_stop, 0, F_NO_DEV },
	ADMIN(SRD_ADMIN_CAPTURE_SHOW) = { cmd_admin_capture_show, 0, F_NO_DEV },
};

const struct cmd_family admin_cmd_family = {
	.base = SRD_CMD_ADMIN_BASE,
	.count = SRD_ADMIN__END - SRD_CMD_ADMIN_BASE,
	.cmds = admin_cmds,
};

/* Devices, faults and captures are the daemon's (the capture writes files
 * with its rights): only its own user (or root) changes them, judged on
 * the process that sent the request, as it was when it sent it. */
int admin_may_change(const struct srd_client *c)
{
	const struct srd_msg_cred *s = &c->sender;

	return s->known && (s->uid == 0 || s->uid == geteuid()) ? 0 : -EPERM;
}

bool admin_terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

int cmd_admin_link_add(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_admin_link_add_req *req = rq->data;
	struct srd_device *dev;
	int err;

	err = admin_may_change(c);
	if (err)
		return err;
	if (!admin_terminated(req->name, sizeof(req->name)) ||
	    !admin_terminated(req->netdev, sizeof(req->netdev)))
		return -EINVAL;
	err = link_add(c->d, req->name, req->netdev, SRD_ADMIN_DEV_F_RUNTIME,
		       &dev);
	if (err)
		return err;
	/* Exiting when idle would silently take the device away. */
	idle_link_added(c->d);
	REP(rp, struct srd_admin_link_add_rep)->index = dev->index;
	return 0;
}

int cmd_admin_link_del(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_admin_link_del_req *req = rq->data;
	int err;

	err = admin_may_change(c);
	if (err)
		return err;
	if (!admin_terminated(req->name, sizeof(req->name)))
		return -EINVAL;
	return link_del(c->d, req->name);
}

static void dev_info(struct srd_daemon *d, struct srd_device *dev,
		     struct srd_admin_dev_info *di)
{
	const struct srd_link *l = link_of(dev);

	memset(di, 0, sizeof(*di));
	snprintf(di->name, sizeof(di->name), "%s", dev->name);
	snprintf(di->netdev, sizeof(di->netdev), "%s", dev->netdev);
	di->node_guid = dev->node_guid;
	di->sys_image_guid = dev->attr.sys_image_guid;
	di->index = dev->index;
	di->netdev_index = l->ifindex;
	di->port_state = dev->port.state;
	di->phys_state = device_phys_state(dev, l->admin_up && !l->removed);
	di->max_mtu = dev->port.max_mtu;
	di->active_mtu = dev->port.active_mtu;
	di->netdev_mtu = dev->port.netdev_mtu;
	di->gid_count = dev->port.gid_count;
	di->contexts = device_contexts(d, dev);
	di->qps = device_qps(d, dev);
	di->flags = l->flags | (l->removed ? SRD_ADMIN_DEV_F_REMOVED : 0);
	di->link_downed = l->link_downed > UINT32_MAX ? UINT32_MAX
						      : l->link_downed;
	snprintf(di->fw_ver, sizeof(di->fw_ver), "%.*s",
		 (int)sizeof(di->fw_ver) - 1, dev->attr.fw_ver);
	if (l->has_mac)
		memcpy(di->mac, l->mac, 6);
}

/* The device with the smallest index >= start, removed ones included. */
static struct srd_device *dev_from(struct srd_daemon *d, uint32_t start)
{
	struct srd_device *best = NULL;

	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (dev->index >= start && (!best || dev->index < best->index))
			best = dev;
	}
	list_for_each (device_removed_list(), it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (link_of(dev)->d == d && dev->index >= start &&
		    (!best || dev->index < best->index))
			best = dev;
	}
	return best;
}

int cmd_admin_dev_list(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_admin_list_req *req = rq->data;
	const uint32_t max =
		(sizeof(rp->data) - sizeof(struct srd_admin_list_rep)) /
		sizeof(struct srd_admin_dev_info);
	struct srd_admin_list_rep *rep;
	struct srd_admin_dev_info *di;
	struct srd_device *dev;
	uint32_t n = 0, at = req->start;

	device_reap(c->d);
	rep = rep_payload(rp, sizeof(*rep));
	di = (struct srd_admin_dev_info *)(rep + 1);
	rep->next = SRD_ADMIN_END;
	while (at != SRD_ADMIN_END && (dev = dev_from(c->d, at))) {
		if (n == max) {
			rep->next = dev->index;
			break;
		}
		at = dev->index == SRD_ADMIN_END - 1 ? SRD_ADMIN_END
						     : dev->index + 1;
		if (req->dev_index != SRD_ADMIN_ALL &&
		    req->dev_index != dev->index)
			continue;
		dev_info(c->d, dev, &di[n++]);
	}
	rep->count = n;
	rp->len = sizeof(*rep) + n * sizeof(*di);
	return 0;
}

int cmd_admin_dev_gids(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_admin_dev_gids_req *req = rq->data;
	struct srd_device *dev = device_by_index_any(c->d, req->dev_index);
	struct srd_admin_dev_gids_rep *rep;

	if (!dev)
		return -ENODEV;
	rep = rep_payload(rp,
			  sizeof(*rep) + SRD_MAX_GIDS * sizeof(rep->gid[0]));
	rep->count = SRD_MAX_GIDS;
	for (uint32_t i = 0; i < SRD_MAX_GIDS; i++) {
		struct srd_admin_gid *g = &rep->gid[i];

		g->index = i;
		g->gid_type = 1; /* RoCE v2, the only kind we make */
		if (!device_gid_valid(dev, i))
			continue;
		memcpy(g->raw, dev->port.gid[i].raw, 16);
		g->valid = 1;
	}
	return 0;
}
