/* SPDX-License-Identifier: MIT */
/*
 * Resource listings, as `rdma resource show` gives them: PDs, CQs, MRs and
 * QPs with their owners, keys, sizes and states.  Each listing walks the
 * object's table from the request's cursor and stops when the reply is
 * full, handing back where to go on.
 */
#include <errno.h>
#include <string.h>

#include "daemon/admin/admin.h"

/* Fill one entry from obj for the client who asked; false when it does
 * not belong to dev_index (SRD_ADMIN_ALL: everything belongs). */
typedef bool res_fill_fn(const struct srd_client *who, void *obj,
			 uint32_t dev_index, void *out);

static uint32_t dev_of(const struct srd_device *dev)
{
	return dev ? dev->index : SRD_ADMIN_END;
}

static bool dev_match(uint32_t want, const struct srd_device *dev)
{
	return want == SRD_ADMIN_ALL || want == dev_of(dev);
}

/* The owner's pid as the caller sees it.  As the kernel lists objects
 * only to a caller whose pid namespace sees their process, an object of
 * a process the caller's namespace does not see is not listed (false). */
static bool owner_seen(const struct srd_client *who,
		       const struct srd_client *owner, uint32_t *pid)
{
	*pid = owner ? (uint32_t)client_pid_seen_by(owner, who) : 0;
	return !owner || *pid;
}

/* Keys (lkey, rkey, Q_Key) and addresses (addr, iova) go to the daemon's
 * own user and root only, as the kernel gives keys to CAP_NET_ADMIN only
 * (and addresses to nobody), the owner included: another user of a shared
 * daemon who learnt an rkey and an address could reach the memory behind
 * it, and the owner knows its own. */
static bool may_see_keys(const struct srd_client *who)
{
	return admin_may_change(who) == 0;
}

static int list_table(struct srd_client *c, struct srd_req *rq,
		      struct srd_rep *rp, const struct srd_table *t,
		      size_t entry_size, res_fill_fn *fill)
{
	client_view(c);
	const struct srd_admin_list_req *req = rq->data;
	const uint32_t max =
		(sizeof(rp->data) - sizeof(struct srd_admin_list_rep)) /
		entry_size;
	struct srd_admin_list_rep *rep;
	uint8_t *out;
	uint32_t n = 0;

	rep = rep_payload(rp, sizeof(*rep));
	out = (uint8_t *)(rep + 1);
	rep->next = SRD_ADMIN_END;
	for (uint32_t i = req->start > t->first ? req->start : t->first;
	     i < table_end(t); i++) {
		void *obj = table_get(t, i);

		if (!obj)
			continue;
		if (n == max) {
			rep->next = i;
			break;
		}
		memset(out + n * entry_size, 0, entry_size);
		if (fill(c, obj, req->dev_index, out + n * entry_size))
			n++;
	}
	rep->count = n;
	rp->len = sizeof(*rep) + n * entry_size;
	return 0;
}

static bool fill_pd(const struct srd_client *who, void *obj, uint32_t dev_index,
		    void *out)
{
	const struct srd_pd *pd = obj;
	struct srd_admin_pd_info *e = out;
	const struct srd_device *dev = pd->owner ? pd->owner->dev : NULL;

	if (!dev_match(dev_index, dev) || !owner_seen(who, pd->owner, &e->pid))
		return false;
	e->pdn = pd->handle;
	e->dev_index = dev_of(dev);
	e->users = pd->refcnt;
	e->uid = pd->owner ? pd->owner->uid : 0;
	return true;
}

static bool fill_cq(const struct srd_client *who, void *obj, uint32_t dev_index,
		    void *out)
{
	const struct srd_cq *cq = obj;
	struct srd_admin_cq_info *e = out;
	const struct srd_device *dev = cq->owner ? cq->owner->dev : NULL;

	if (!dev_match(dev_index, dev) || !owner_seen(who, cq->owner, &e->pid))
		return false;
	e->cqn = cq->handle;
	e->dev_index = dev_of(dev);
	e->cqe = cq->cqe;
	e->entries = cq->entries;
	e->users = cq->refcnt;
	e->channel = cq->channel ? cq->channel->handle : SRD_ADMIN_END;
	e->in_error = cq->in_error;
	return true;
}

static bool fill_mr(const struct srd_client *who, void *obj, uint32_t dev_index,
		    void *out)
{
	const struct srd_mr *mr = obj;
	struct srd_admin_mr_info *e = out;

	if (!dev_match(dev_index, mr->dev) ||
	    !owner_seen(who, mr->owner, &e->pid))
		return false;
	e->mrn = mr->handle;
	e->dev_index = dev_of(mr->dev);
	e->pdn = mr->pd ? mr->pd->handle : SRD_ADMIN_END;
	e->access = (uint32_t)mr->access;
	e->flags = mr->pvm ? SRD_ADMIN_MR_F_PVM : 0;
	e->length = mr->length;
	if (!may_see_keys(who)) {
		e->flags |= SRD_ADMIN_MR_F_NOKEYS;
		return true;
	}
	e->lkey = mr->lkey;
	e->rkey = mr->rkey;
	e->addr = mr->addr;
	e->iova = mr->iova;
	return true;
}

static bool fill_qp(const struct srd_client *who, void *obj, uint32_t dev_index,
		    void *out)
{
	struct srd_qp *qp = obj;
	struct srd_admin_qp_info *e = out;
	struct ibv_qp_attr attr = qp->attr;

	if (!dev_match(dev_index, qp->dev) ||
	    !owner_seen(who, qp->owner, &e->pid))
		return false;
	e->qpn = qp->qpn;
	e->dev_index = dev_of(qp->dev);
	e->type = qp->type;
	e->state = attr.qp_state;
	e->sq_psn = attr.sq_psn;
	e->rq_psn = attr.rq_psn;
	e->dest_qpn = attr.dest_qp_num;
	e->pdn = qp->pd ? qp->pd->handle : SRD_ADMIN_END;
	e->send_cqn = qp->send_cq ? qp->send_cq->handle : SRD_ADMIN_END;
	e->recv_cqn = qp->recv_cq ? qp->recv_cq->handle : SRD_ADMIN_END;
	e->srqn = qp->srq ? qp->srq->handle : SRD_ADMIN_END;
	e->path_mtu = attr.path_mtu;
	e->port = attr.port_num ? attr.port_num : 1;
	e->max_send_wr = qp->cap.max_send_wr;
	e->max_recv_wr = qp->cap.max_recv_wr;
	e->max_send_sge = qp->cap.max_send_sge;
	e->max_recv_sge = qp->cap.max_recv_sge;
	e->max_inline_data = qp->cap.max_inline_data;
	if (may_see_keys(who))
		e->qkey = attr.qkey;
	else
		e->flags |= SRD_ADMIN_QP_F_NOKEYS;
	return true;
}

int cmd_admin_res_pd(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	return list_table(c, rq, rp, &c->d->pds,
			  sizeof(struct srd_admin_pd_info), fill_pd);
}

int cmd_admin_res_cq(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	return list_table(c, rq, rp, &c->d->cqs,
			  sizeof(struct srd_admin_cq_info), fill_cq);
}

int cmd_admin_res_mr(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	return list_table(c, rq, rp, &c->d->mrs,
			  sizeof(struct srd_admin_mr_info), fill_mr);
}

int cmd_admin_res_qp(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	return list_table(c, rq, rp, &c->d->qps_by_num,
			  sizeof(struct srd_admin_qp_info), fill_qp);
}

int cmd_admin_res_cm_id(struct srd_client *c, struct srd_req *rq,
			struct srd_rep *rp)
{
	const struct srd_admin_list_req *req = rq->data;
	const uint32_t max =
		(sizeof(rp->data) - sizeof(struct srd_admin_list_rep)) /
		sizeof(struct srd_admin_cm_id_info);
	struct srd_admin_list_rep *rep;
	uint32_t n;

	rep = rep_payload(
		rp, sizeof(*rep) + max * sizeof(struct srd_admin_cm_id_info));
	rep->next = SRD_ADMIN_END;
	client_view(c);
	n = cm_admin_list_ids(c, req->start, req->dev_index,
			      (struct srd_admin_cm_id_info *)(rep + 1), max,
			      &rep->next);
	if (n > max)
		return -EIO;
	rep->count = n;
	rp->len = sizeof(*rep) + n * sizeof(struct srd_admin_cm_id_info);
	return 0;
}

/* A user's usage is its own business: root and the daemon's own user
 * see every row, anyone else its own uid's. */
static bool usage_shown(const struct srd_client *who, uid_t uid)
{
	return admin_may_change(who) == 0 ||
	       (who->sender.known && who->sender.uid == uid);
}

/* Clients then users, row by row from the cursor. */
int cmd_admin_res_usage(struct srd_client *c, struct srd_req *rq,
			struct srd_rep *rp)
{
	const struct srd_admin_list_req *req = rq->data;
	const uint32_t max =
		(sizeof(rp->data) - sizeof(struct srd_admin_list_rep)) /
		sizeof(struct srd_admin_usage_info);
	const struct srd_limits *l = &c->d->limits;
	struct srd_admin_usage_info *e;
	struct srd_admin_list_rep *rep;
	uint32_t row = 0, n = 0;

	rep = rep_payload(rp, sizeof(*rep));
	e = (struct srd_admin_usage_info *)(rep + 1);
	rep->next = SRD_ADMIN_END;
	client_view(c);
	list_for_each (&c->d->clients, it) {
		const struct srd_client *o =
			list_entry(it, struct srd_client, node);

		uint32_t pid;

		if (!o->user || !usage_shown(c, o->uid) ||
		    !owner_seen(c, o, &pid) || row++ < req->start)
			continue;
		if (n == max) {
			rep->next = row - 1;
			goto out;
		}
		memset(&e[n], 0, sizeof(e[n]));
		e[n].kind = SRD_ADMIN_USAGE_CLIENT;
		e[n].pid = pid;
		e[n].uid = (uint32_t)o->uid;
		memcpy(e[n].comm, o->comm, sizeof(e[n].comm));
		memcpy(e[n].n, o->usage.n, sizeof(e[n].n));
		memcpy(e[n].limit, l->client, sizeof(e[n].limit));
		n++;
	}
	list_for_each (&c->d->users, it) {
		const struct srd_user *u =
			list_entry(it, struct srd_user, node);

		if (!usage_shown(c, u->uid) || row++ < req->start)
			continue;
		if (n == max) {
			rep->next = row - 1;
			goto out;
		}
		memset(&e[n], 0, sizeof(e[n]));
		e[n].kind = SRD_ADMIN_USAGE_USER;
		e[n].uid = (uint32_t)u->uid;
		e[n].clients = u->clients;
		memcpy(e[n].n, u->usage.n, sizeof(e[n].n));
		memcpy(e[n].limit, l->user, sizeof(e[n].limit));
		n++;
	}
out:
	rep->count = n;
	rp->len = sizeof(*rep) + n * sizeof(*e);
	return 0;
}
