/* SPDX-License-Identifier: MIT */
/*
 * Counters, as `rdma statistic` shows them: per QP what the transport
 * engine counts; per device the sum over its QPs, what the device counts
 * itself, and the wire's packet and byte counts (daemon/net, when built
 * in), and its raw packet side (transport/raw.c).  Names follow rxe's hw
 * counters where the meaning is the same.
 *
 * The per-device sum covers the QPs that exist now plus what destroyed
 * ones had counted (kept with the device), so a port's counters only grow.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/admin/admin.h"
#include "daemon/device/link.h"
#include "daemon/transport/engine.h"
#if __has_include("daemon/net/net.h")
#include "daemon/net/net.h"
#define HAVE_NET_COUNTERS 1
#endif

/* A reply being filled with counters. */
struct stat_out {
	struct srd_admin_stat_rep *rep;
	uint32_t max;
};

#ifdef HAVE_NET_COUNTERS
static bool emitted(const struct stat_out *o, const char *name)
{
	for (uint32_t i = 0; i < o->rep->count; i++)
		if (!strncmp(o->rep->c[i].name, name, SRD_COUNTER_NAME_MAX))
			return true;
	return false;
}
#endif

static void emit(struct stat_out *o, const char *name, uint64_t value)
{
	struct srd_admin_counter *c;

	if (o->rep->count >= o->max)
		return;
	c = &o->rep->c[o->rep->count++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->value = value;
}

static void add(struct srd_tp_counters *sum, const struct srd_tp_counters *c)
{
	sum->tx_pkts += c->tx_pkts;
	sum->rx_pkts += c->rx_pkts;
	sum->retransmits += c->retransmits;
	sum->timeouts += c->timeouts;
	sum->rnr_naks_sent += c->rnr_naks_sent;
	sum->rnr_naks_rcvd += c->rnr_naks_rcvd;
	sum->seq_naks_sent += c->seq_naks_sent;
	sum->seq_naks_rcvd += c->seq_naks_rcvd;
	sum->dup_requests += c->dup_requests;
	sum->qkey_drops += c->qkey_drops;
	sum->no_rwqe_drops += c->no_rwqe_drops;
	sum->uc_drops += c->uc_drops;
	sum->rx_drops += c->rx_drops;
	sum->delay_backoffs += c->delay_backoffs;
	sum->xrc_srqn_errs += c->xrc_srqn_errs;
	sum->place_jobs += c->place_jobs;
	sum->place_copied += c->place_copied;
	sum->place_waits += c->place_waits;
	sum->place_staged += c->place_staged;
}

static void emit_tp(struct stat_out *o, const struct srd_tp_counters *c)
{
	emit(o, "sent_pkts", c->tx_pkts);
	emit(o, "rcvd_pkts", c->rx_pkts);
	emit(o, "retransmits", c->retransmits);
	emit(o, "timeouts", c->timeouts);
	emit(o, "send_rnr_err", c->rnr_naks_sent);
	emit(o, "rcvd_rnr_err", c->rnr_naks_rcvd);
	emit(o, "out_of_seq_request", c->seq_naks_sent);
	emit(o, "rcvd_seq_err", c->seq_naks_rcvd);
	emit(o, "duplicate_request", c->dup_requests);
	emit(o, "qkey_drops", c->qkey_drops);
	emit(o, "no_rwqe_drops", c->no_rwqe_drops);
	emit(o, "uc_drops", c->uc_drops);
	emit(o, "qp_rx_drops", c->rx_drops);
	emit(o, "delay_backoffs", c->delay_backoffs);
	emit(o, "xrc_srqn_errs", c->xrc_srqn_errs);
	emit(o, "owner_placed", c->place_jobs);
	emit(o, "owner_place_fallback", c->place_copied);
	emit(o, "owner_place_waits", c->place_waits);
	emit(o, "owner_place_staged", c->place_staged);
}

/*
 * The raw packet side of the device: what its packet socket read and
 * sent, and what the flow rules made of it, over every raw QP it had.
 * Names as iproute2's rdma shows hw counters; a frame steered to a QP
 * with no receive posted is mlx5's out_of_buffer.
 */
static void emit_raw(const struct srd_device *dev, struct stat_out *o)
{
	struct srd_raw_counters rc = link_of_const(dev)->raw_retired;

	if (dev->raw)
		raw_counters_add(&rc, &dev->raw->cnt);
	emit(o, "raw_rcvd_pkts", rc.rx_frames);
	emit(o, "raw_rcvd_unsteered", rc.rx_unsteered);
	emit(o, "raw_rcvd_roce", rc.rx_roce);
	emit(o, "raw_out_of_buffer", rc.rx_no_rwqe);
	emit(o, "raw_rcvd_bad", rc.rx_bad);
	emit(o, "raw_sent_pkts", rc.tx_frames);
	emit(o, "raw_sent_drops", rc.tx_drops);
}

/* The wire's own counters of the device, every one by its name. */
static void emit_wire(struct srd_daemon *d, const struct srd_device *dev,
		      struct stat_out *o)
{
#ifdef HAVE_NET_COUNTERS
	struct srd_net_counters nc;

	srd_net_counters_read(d, dev, &nc);
	for (const struct srd_net_counter_desc *k = srd_net_counter_descs;
	     k->name; k++) {
		uint64_t v;

		char name[SRD_COUNTER_NAME_MAX];

		memcpy(&v, (const uint8_t *)&nc + k->offset, sizeof(v));
		/* A name the engine's counters already use gets a prefix:
		 * every name in a listing is unique. */
		snprintf(name, sizeof(name), "%s%s",
			 emitted(o, k->name) ? "wire_" : "", k->name);
		emit(o, name, v);
	}
#endif
}

static struct srd_admin_stat_rep *stat_rep(struct srd_rep *rp, uint32_t *max)
{
	struct srd_admin_stat_rep *rep;

	*max = (sizeof(rp->data) - sizeof(*rep)) / sizeof(rep->c[0]);
	rep = rep_payload(rp, sizeof(*rep) + *max * sizeof(rep->c[0]));
	rep->qpn = SRD_ADMIN_END;
	return rep;
}

void counters_qp_retire(struct srd_qp *qp)
{
	const struct srd_tp_counters *qc = engine_qp_counters(qp);

	if (qc && qp->dev)
		add(&link_of(qp->dev)->retired, qc);
}

int cmd_admin_stat_dev(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp)
{
	const struct srd_admin_stat_dev_req *req = rq->data;
	struct srd_device *dev = device_by_index_any(c->d, req->dev_index);
	struct srd_tp_counters sum;
	struct stat_out o;

	if (!dev)
		return -ENODEV;
	sum = link_of(dev)->retired;
	o.rep = stat_rep(rp, &o.max);
	o.rep->dev_index = dev->index;
	list_for_each (&c->d->qps, it) {
		struct srd_qp *qp = list_entry(it, struct srd_qp, node);
		const struct srd_tp_counters *qc;

		if (qp->dev != dev)
			continue;
		qc = engine_qp_counters(qp);
		if (qc)
			add(&sum, qc);
	}
	emit_tp(&o, &sum);
	emit(&o, "link_downed", link_of(dev)->link_downed);
	emit_raw(dev, &o);
	emit_wire(c->d, dev, &o);
	rp->len = sizeof(*o.rep) + o.rep->count * sizeof(o.rep->c[0]);
	return 0;
}

int cmd_admin_stat_qp(struct srd_client *c, struct srd_req *rq,
		      struct srd_rep *rp)
{
	const struct srd_admin_stat_qp_req *req = rq->data;
	struct srd_qp *qp = qp_lookup_num(c->d, req->qpn);
	const struct srd_tp_counters *qc;
	struct srd_tp_counters none = { 0 };
	struct stat_out o;

	if (!qp)
		return -ENOENT;
	o.rep = stat_rep(rp, &o.max);
	o.rep->dev_index = qp->dev ? qp->dev->index : SRD_ADMIN_END;
	o.rep->qpn = qp->qpn;
	o.rep->pid = qp->owner ? (uint32_t)qp->owner->pid : 0;
	qc = engine_qp_counters(qp);
	emit_tp(&o, qc ? qc : &none);
	rp->len = sizeof(*o.rep) + o.rep->count * sizeof(o.rep->c[0]);
	return 0;
}
