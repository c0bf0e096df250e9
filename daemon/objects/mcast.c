/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups (mcast.h): ATTACH_MCAST / DETACH_MCAST with the
 * kernel's rules (ib_attach_mcast, ib_uverbs, rxe), and the group table
 * the transport delivers from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/core/mcast.h"
#include "daemon/transport/wire_mcast.h"

bool mcast_gid_is_mc(const uint8_t gid[16])
{
	if (gid[0] == 0xff)
		return true;
	/* IPv4-mapped 224.0.0.0/4. */
	return srd_gid_is_v4mapped(gid) && (gid[12] & 0xf0) == 0xe0;
}

static int group_index(const struct srd_mcast *m, const uint8_t gid[16])
{
	for (uint32_t i = 0; m && i < m->ngroups; i++)
		if (!memcmp(m->group[i]->gid.raw, gid, 16))
			return (int)i;
	return -1;
}

struct srd_mcast_group *mcast_find(const struct srd_device *dev,
				   const uint8_t gid[16])
{
	int i = group_index(dev->mcast, gid);

	return i < 0 ? NULL : dev->mcast->group[i];
}

static struct srd_mcast_group *group_new(struct srd_daemon *d,
					 struct srd_device *dev,
					 const union ibv_gid *gid)
{
	struct srd_mcast *m = dev->mcast;
	struct srd_mcast_group *g;

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		dev->mcast = m;
	}
	if (m->ngroups >= SRD_MCAST_MAX_GRP)
		return NULL;
	if (m->ngroups == m->room) {
		uint32_t room = m->room ? 2 * m->room : 8;
		void *p = realloc(m->group, room * sizeof(*m->group));

		if (!p)
			return NULL;
		m->group = p;
		m->room = room;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->gid = *gid;
	m->group[m->ngroups++] = g;
	/* The IP group is joined on the device's interface for as long as
	 * the group exists; a failure there leaves the local group working. */
	srd_net_mcast_join(d, dev, gid->raw, true);
	return g;
}

static void group_del(struct srd_daemon *d, struct srd_device *dev, int i)
{
	struct srd_mcast *m = dev->mcast;
	struct srd_mcast_group *g = m->group[i];

	srd_net_mcast_join(d, dev, g->gid.raw, false);
	m->group[i] = m->group[--m->ngroups];
	free(g);
	if (!m->ngroups) {
		free(m->group);
		free(m);
		dev->mcast = NULL;
	}
}

static int qp_slot(const struct srd_mcast_group *g, const struct srd_qp *qp)
{
	for (uint32_t i = 0; i < g->nqps; i++)
		if (g->qp[i] == qp)
			return (int)i;
	return -1;
}

/* Drop one attachment (slot k of group i). */
static void detach_one(struct srd_daemon *d, struct srd_device *dev, int i,
		       int k)
{
	struct srd_mcast_group *g = dev->mcast->group[i];

	g->qp[k]->mcast_attached--;
	/* Order does not matter: delivery visits every member. */
	g->qp[k] = g->qp[--g->nqps];
	dev->mcast->total--;
	if (!g->nqps)
		group_del(d, dev, i);
}

/* The checks ib_attach_mcast and ib_uverbs make, in their order. */
static int mcast_args(struct srd_client *c, const struct srd_mcast_req *req,
		      struct srd_qp **qp)
{
	*qp = qp_get(c, req->qp_handle);
	if (!*qp)
		return -EINVAL;
	if ((*qp)->type != IBV_QPT_UD || !mcast_gid_is_mc(req->gid.raw))
		return -EINVAL;
	return 0;
}

int cmd_attach_mcast(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	const struct srd_mcast_req *req = rq->data;
	struct srd_device *dev;
	struct srd_mcast_group *g;
	struct srd_qp *qp;
	int err = mcast_args(c, req, &qp);

	if (err)
		return err;
	dev = qp->dev;
	g = mcast_find(dev, req->gid.raw);
	/* Attached already: nothing to do, as uverbs answers. */
	if (g && qp_slot(g, qp) >= 0)
		return 0;
	if (dev->mcast && dev->mcast->total >= SRD_MCAST_MAX_TOTAL_ATTACH)
		return -ENOMEM;
	if (g && g->nqps >= SRD_MCAST_MAX_QP_ATTACH)
		return -ENOMEM;
	if (!g) {
		g = group_new(c->d, dev, &req->gid);
		if (!g)
			return -ENOMEM;
	}
	g->qp[g->nqps++] = qp;
	dev->mcast->total++;
	qp->mcast_attached++;
	return 0;
}

int cmd_detach_mcast(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	const struct srd_mcast_req *req = rq->data;
	struct srd_qp *qp;
	int err = mcast_args(c, req, &qp);
	int i, k;

	if (err)
		return err;
	i = group_index(qp->dev->mcast, req->gid.raw);
	k = i < 0 ? -1 : qp_slot(qp->dev->mcast->group[i], qp);
	/* Not attached: uverbs finds nothing to detach. */
	if (k < 0)
		return -EINVAL;
	detach_one(c->d, qp->dev, i, k);
	return 0;
}

void mcast_qp_gone(struct srd_qp *qp)
{
	struct srd_device *dev = qp->dev;
	struct srd_daemon *d;

	if (!qp->mcast_attached)
		return;
	d = qp->owner->d;
	for (int i = 0; qp->mcast_attached && dev->mcast &&
			i < (int)dev->mcast->ngroups;) {
		int k = qp_slot(dev->mcast->group[i], qp);
		uint32_t n = dev->mcast->ngroups;

		if (k >= 0)
			detach_one(d, dev, i, k);
		/* A deleted group's slot now holds the last one: look
		 * at the same index again. */
		if (!dev->mcast || dev->mcast->ngroups == n)
			i++;
	}
}
