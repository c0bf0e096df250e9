/* SPDX-License-Identifier: MIT */
/*
 * Administration of the wires at run time: fault injection rules and
 * packet capture (common/proto_admin.h, FAULT_* and CAPTURE_*).  The work
 * itself is daemon/net's (net.h); this is the command side: rights,
 * request checks, listings.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/admin/admin.h"
#include "daemon/fault/fault.h"
#include "daemon/net/capture.h"
#include "daemon/net/net.h"
#include "daemon/transport/wire_ctl.h"

int cmd_admin_fault_add(struct srd_client *c, struct srd_req *rq,
			struct srd_rep *rp)
{
	const struct srd_admin_fault_add_req *req = rq->data;
	const struct srd_faults *f = srd_net_faults(c->d);
	struct srd_admin_fault_add_rep *rep;
	struct srd_admin_error *e;
	unsigned int before;
	int err;

	err = admin_may_change(c);
	if (err)
		return err;
	if (!admin_terminated(req->rules, sizeof(req->rules)))
		return -EINVAL;
	if (!f)
		return -ENODEV;
	before = f->n;
	e = rep_payload(rp, sizeof(*e));
	err = srd_net_fault_add(c->d, req->rules, e->reason, sizeof(e->reason));
	if (err) {
		rp->err_payload = true;
		return err;
	}
	srd_log(SRD_LOG_INFO, "fault rules added by pid %d: %s", (int)c->pid,
		req->rules);
	rep = REP(rp, struct srd_admin_fault_add_rep);
	rep->first = before;
	rep->count = f->n;
	return 0;
}

int cmd_admin_fault_clear(struct srd_client *c, struct srd_req *rq,
			  struct srd_rep *rp)
{
	int err = admin_may_change(c);

	if (err)
		return err;
	if (!srd_net_faults(c->d))
		return -ENODEV;
	srd_net_fault_clear(c->d);
	srd_log(SRD_LOG_INFO, "fault rules cleared by pid %d", (int)c->pid);
	return 0;
}

int cmd_admin_fault_list(struct srd_client *c, struct srd_req *rq,
			 struct srd_rep *rp)
{
	const struct srd_admin_list_req *req = rq->data;
	const uint32_t max =
		(sizeof(rp->data) - sizeof(struct srd_admin_list_rep)) /
		sizeof(struct srd_admin_fault_info);
	const struct srd_faults *f = srd_net_faults(c->d);
	struct srd_admin_list_rep *rep;
	struct srd_admin_fault_info *fi;
	uint32_t n = 0, i;

	rep = rep_payload(rp, sizeof(*rep));
	fi = (struct srd_admin_fault_info *)(rep + 1);
	rep->next = SRD_ADMIN_END;
	for (i = req->start; f && i < f->n; i++) {
		const struct srd_fault_rule *r = &f->rule[i];

		if (n == max) {
			rep->next = i;
			break;
		}
		memset(&fi[n], 0, sizeof(fi[n]));
		fi[n].index = i;
		fi[n].fixed = i < f->nfixed;
		fi[n].matched = r->matched;
		fi[n].injected = r->injected;
		snprintf(fi[n].text, sizeof(fi[n].text), "%s", r->text);
		n++;
	}
	rep->count = n;
	rp->len = sizeof(*rep) + n * sizeof(*fi);
	return 0;
}

int cmd_admin_capture_start(struct srd_client *c, struct srd_req *rq,
			    struct srd_rep *rp)
{
	const struct srd_admin_capture_start_req *req = rq->data;
	int err = admin_may_change(c);

	if (err)
		return err;
	/* Relative paths would land in the daemon's working directory:
	 * the CLI sends absolute ones. */
	if (!admin_terminated(req->path, sizeof(req->path)) ||
	    req->path[0] != '/')
		return -EINVAL;
	return srd_net_capture_start(c->d, req->path);
}

int cmd_admin_capture_stop(struct srd_client *c, struct srd_req *rq,
			   struct srd_rep *rp)
{
	int err = admin_may_change(c);

	if (err)
		return err;
	return srd_net_capture_stop(c->d);
}

int cmd_admin_capture_show(struct srd_client *c, struct srd_req *rq,
			   struct srd_rep *rp)
{
	const struct srd_capture *cap = srd_net_capture(c->d);
	struct srd_admin_capture_show_rep *rep;

	rep = REP(rp, struct srd_admin_capture_show_rep);
	if (!cap)
		return 0;
	rep->active = 1;
	rep->packets = cap->packets;
	snprintf(rep->path, sizeof(rep->path), "%.*s",
		 (int)sizeof(rep->path) - 1, cap->path);
	return 0;
}
