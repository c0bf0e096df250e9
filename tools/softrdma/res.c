/* SPDX-License-Identifier: MIT */
/*
 * `softrdma resource`: the objects of every device with their owners, as
 * `rdma resource show` lists them.  Without an object type, a count of
 * each per device.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

#define MAX_PAGES 100000

static void res_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma resource [show]\n"
		   "       softrdma resource show qp [link DEV[/PORT]] [lqpn "
		   "QPN]\n"
		   "       softrdma resource show {cq|mr|pd} [dev DEV]\n"
		   "       softrdma resource show cm_id [link DEV[/PORT]]\n"
		   "       softrdma resource show usage\n");
}

/* Every entry of one listing, for one device or all. */
static int fetch(uint32_t op, uint32_t dev_index, size_t esize, void **out,
		 unsigned int *count)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_admin_list_req req = { .start = 0, .dev_index = dev_index };
	const struct srd_admin_list_rep *rep = (const void *)buf;
	uint8_t *all = NULL;
	unsigned int n = 0;
	size_t got;
	int err;

	for (int page = 0; page < MAX_PAGES && req.start != SRD_ADMIN_END;
	     page++) {
		uint8_t *grown;

		err = conn_cmd(op, &req, sizeof(req), buf, sizeof(buf), &got);
		if (err) {
			free(all);
			return err;
		}
		if (got < sizeof(*rep) ||
		    rep->count > (got - sizeof(*rep)) / esize) {
			free(all);
			return -EPROTO;
		}
		grown = realloc(all, (n + rep->count) * esize + 1);
		if (!grown) {
			free(all);
			return -ENOMEM;
		}
		all = grown;
		memcpy(all + n * esize, rep + 1, rep->count * esize);
		n += rep->count;
		req.start = rep->next;
	}
	*out = all;
	*count = n;
	return 0;
}

static void out_dev(const struct dev_list *l, uint32_t dev_index)
{
	out_uint("ifindex", NULL, dev_index);
	out_str("ifname", "dev %s ", devs_name(l, dev_index));
}

static void out_link(const struct dev_list *l, uint32_t dev_index,
		     uint32_t port)
{
	char name[SRD_DEV_NAME_MAX + 16];

	snprintf(name, sizeof(name), "%s/%u", devs_name(l, dev_index), port);
	out_uint("ifindex", NULL, dev_index);
	out_str("ifname", NULL, devs_name(l, dev_index));
	out_str(NULL, "link %s ", name);
	out_uint("port", NULL, port);
}

static void show_qp(const struct dev_list *l, const struct srd_admin_qp_info *q)
{
	out_obj_open();
	out_link(l, q->dev_index, q->port);
	out_uint("lqpn", "lqpn %s ", q->qpn);
	if (q->type == IBV_QPT_RC || q->type == IBV_QPT_UC)
		out_uint("rqpn", "rqpn %s ", q->dest_qpn);
	out_str("type", "type %s ", qp_type_name(q->type));
	out_str("state", "state %s ", qp_state_name(q->state));
	if (q->type == IBV_QPT_RC || q->type == IBV_QPT_UC) {
		out_uint("rq-psn", "rq-psn %s ", q->rq_psn);
		out_uint("sq-psn", "sq-psn %s ", q->sq_psn);
		if (mtu_bytes(q->path_mtu))
			out_uint("path-mtu", "path-mtu %s ",
				 mtu_bytes(q->path_mtu));
	} else {
		out_uint("sq-psn", "sq-psn %s ", q->sq_psn);
		if (!(q->flags & SRD_ADMIN_QP_F_NOKEYS))
			out_hex("qkey", "qkey %s ", q->qkey);
	}
	out_uint("pdn", "pdn %s ", q->pdn);
	if (opt.details) {
		out_uint("send-cqn", "send-cqn %s ", q->send_cqn);
		out_uint("recv-cqn", "recv-cqn %s ", q->recv_cqn);
		if (q->srqn != SRD_ADMIN_END)
			out_uint("srqn", "srqn %s ", q->srqn);
		out_uint("max-send-wr", "max-send-wr %s ", q->max_send_wr);
		out_uint("max-recv-wr", "max-recv-wr %s ", q->max_recv_wr);
		out_uint("max-send-sge", "max-send-sge %s ", q->max_send_sge);
		out_uint("max-recv-sge", "max-recv-sge %s ", q->max_recv_sge);
		out_uint("max-inline-data", "max-inline-data %s ",
			 q->max_inline_data);
	}
	out_owner(q->pid);
	out_obj_close();
}

static void show_cq(const struct dev_list *l, const struct srd_admin_cq_info *c)
{
	out_obj_open();
	out_dev(l, c->dev_index);
	out_uint("cqn", "cqn %s ", c->cqn);
	out_uint("cqe", "cqe %s ", c->cqe);
	out_uint("users", "users %s ", c->users);
	if (opt.details) {
		out_uint("entries", "entries %s ", c->entries);
		if (c->channel != SRD_ADMIN_END)
			out_uint("channel", "channel %s ", c->channel);
		out_bool("error", "error %s ", c->in_error);
	}
	out_owner(c->pid);
	out_obj_close();
}

static void show_mr(const struct dev_list *l, const struct srd_admin_mr_info *m)
{
	out_obj_open();
	out_dev(l, m->dev_index);
	out_uint("mrn", "mrn %s ", m->mrn);
	/* Keys are shown to root and the daemon's user only (as rdma-tool
	 * shows them only with CAP_NET_ADMIN). */
	if (!(m->flags & SRD_ADMIN_MR_F_NOKEYS)) {
		out_hex("rkey", "rkey %s ", m->rkey);
		out_hex("lkey", "lkey %s ", m->lkey);
	}
	out_uint("mrlen", "mrlen %s ", m->length);
	out_uint("pdn", "pdn %s ", m->pdn);
	if (opt.details) {
		if (!(m->flags & SRD_ADMIN_MR_F_NOKEYS)) {
			out_hex("iova", "iova %s ", m->iova);
			out_hex("addr", "addr %s ", m->addr);
		}
		out_hex("access", "access %s ", m->access);
		if (m->flags & SRD_ADMIN_MR_F_PVM)
			out_bool("process-vm", "process-vm %s ", true);
	}
	out_owner(m->pid);
	out_obj_close();
}

static void show_pd(const struct dev_list *l, const struct srd_admin_pd_info *p)
{
	out_obj_open();
	out_dev(l, p->dev_index);
	out_uint("pdn", "pdn %s ", p->pdn);
	out_uint("users", "users %s ", p->users);
	out_owner(p->pid);
	out_obj_close();
}

static void show_cm_id(const struct dev_list *l,
		       const struct srd_admin_cm_id_info *c)
{
	char src[80], dst[80];

	sockaddr_str(&c->src, src, sizeof(src));
	sockaddr_str(&c->dst, dst, sizeof(dst));
	out_obj_open();
	if (c->dev_index != SRD_ADMIN_END)
		out_link(l, c->dev_index, c->port ? c->port : 1);
	out_uint("cm-idn", "cm-idn %s ", c->id);
	if (c->qpn)
		out_uint("lqpn", "lqpn %s ", c->qpn);
	if (c->qpn)
		out_str("qp-type", "qp-type %s ", qp_type_name(c->qp_type));
	out_str("state", "state %s ", cm_state_name(c->state));
	out_str("ps", "ps %s ", cm_ps_name(c->ps));
	out_owner(c->pid);
	if (c->src.family)
		out_str("src-addr", "src-addr %s ", src);
	if (c->dst.family)
		out_str("dst-addr", "dst-addr %s ", dst);
	out_obj_close();
}

struct res_type {
	const char *name;
	uint32_t op;
	size_t esize;
};
static const struct res_type types[] = {
	{ "qp", SRD_ADMIN_RES_QP, sizeof(struct srd_admin_qp_info) },
	{ "cq", SRD_ADMIN_RES_CQ, sizeof(struct srd_admin_cq_info) },
	{ "mr", SRD_ADMIN_RES_MR, sizeof(struct srd_admin_mr_info) },
	{ "pd", SRD_ADMIN_RES_PD, sizeof(struct srd_admin_pd_info) },
	{ "cm_id", SRD_ADMIN_RES_CM_ID, sizeof(struct srd_admin_cm_id_info) },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static void show_entry(const struct dev_list *l, const struct res_type *t,
		       const void *e)
{
	switch (t->op) {
	case SRD_ADMIN_RES_QP:
		show_qp(l, e);
		break;
	case SRD_ADMIN_RES_CQ:
		show_cq(l, e);
		break;
	case SRD_ADMIN_RES_MR:
		show_mr(l, e);
		break;
	case SRD_ADMIN_RES_PD:
		show_pd(l, e);
		break;
	default:
		show_cm_id(l, e);
		break;
	}
}

/* Every entry starts with its number and its device's index. */
#define DEV_INDEX_AT 4
static_assert(offsetof(struct srd_admin_qp_info, dev_index) == DEV_INDEX_AT,
	      "qp");
static_assert(offsetof(struct srd_admin_cq_info, dev_index) == DEV_INDEX_AT,
	      "cq");
static_assert(offsetof(struct srd_admin_mr_info, dev_index) == DEV_INDEX_AT,
	      "mr");
static_assert(offsetof(struct srd_admin_pd_info, dev_index) == DEV_INDEX_AT,
	      "pd");
static_assert(offsetof(struct srd_admin_cm_id_info, dev_index) == DEV_INDEX_AT,
	      "cm_id");

static unsigned int count_of(const void *all, unsigned int n, size_t esize,
			     uint32_t dev_index)
{
	unsigned int c = 0;

	for (unsigned int k = 0; k < n; k++) {
		uint32_t dev;

		memcpy(&dev, (const uint8_t *)all + k * esize + DEV_INDEX_AT,
		       sizeof(dev));
		c += dev == dev_index;
	}
	return c;
}

/* `resource show`: how many of each object every device has. */
static int summary(const struct dev_list *l)
{
	void *all[NTYPES] = { 0 };
	unsigned int n[NTYPES] = { 0 };
	int err = 0;

	for (size_t t = 0; t < NTYPES && !err; t++)
		err = fetch(types[t].op, SRD_ADMIN_ALL, types[t].esize, &all[t],
			    &n[t]);
	if (err) {
		for (size_t t = 0; t < NTYPES; t++)
			free(all[t]);
		return fail_errno(err, "listing resources");
	}
	out_begin();
	for (unsigned int i = 0; i < l->n; i++) {
		const struct srd_admin_dev_info *di = &l->dev[i];

		if ((di->flags & SRD_ADMIN_DEV_F_REMOVED) && !opt.details)
			continue;
		out_obj_open();
		out_uint("ifindex", "%s: ", di->index);
		out_str("ifname", "%s:", di->name);
		for (size_t t = 0; t < NTYPES; t++) {
			char tfmt[32];

			snprintf(tfmt, sizeof(tfmt), " %s %%s", types[t].name);
			out_uint(types[t].name, tfmt,
				 count_of(all[t], n[t], types[t].esize,
					  di->index));
		}
		out_obj_close();
	}
	out_end();
	for (size_t t = 0; t < NTYPES; t++)
		free(all[t]);
	return EXIT_OK;
}

static int show_type(const struct dev_list *l, const struct res_type *t,
		     int argc, char **argv)
{
	const struct srd_admin_dev_info *dev = NULL;
	bool by_qpn = false;
	uint32_t qpn = 0;
	unsigned int n;
	void *all;
	int err;

	for (int i = 0; i < argc; i += 2) {
		if (i + 1 >= argc)
			return usage_error("resource show %s: \"%s\" needs a "
					   "value",
					   t->name, argv[i]);
		if (!strcmp(argv[i], "link") || !strcmp(argv[i], "dev")) {
			if (devs_parse(l, argv[i + 1], &dev))
				return EXIT_FAILED;
		} else if (!strcmp(argv[i], "lqpn") &&
			   t->op == SRD_ADMIN_RES_QP) {
			if (!parse_u32(argv[i + 1], &qpn))
				return usage_error("resource show qp: bad "
						   "lqpn \"%s\"",
						   argv[i + 1]);
			by_qpn = true;
		} else {
			return usage_error("resource show %s: unknown "
					   "keyword \"%s\"",
					   t->name, argv[i]);
		}
	}
	err = fetch(t->op, dev ? dev->index : SRD_ADMIN_ALL, t->esize, &all,
		    &n);
	if (err)
		return fail_errno(err, "listing resources");
	out_begin();
	for (unsigned int k = 0; k < n; k++) {
		const uint8_t *e = (const uint8_t *)all + k * t->esize;

		if (by_qpn && ((const struct srd_admin_qp_info *)e)->qpn != qpn)
			continue;
		show_entry(l, t, e);
	}
	out_end();
	free(all);
	return EXIT_OK;
}

static const char *const usage_names[SRD_ADMIN_USAGE_NRES] = {
	"pd",	    "mr",   "cq",	"qp",	   "srq",
	"ah",	    "mw",   "dm",	"channel", "maps",
	"mr_bytes", "xrcd", "dm_bytes", "clients", "fds",
};

/* `resource show usage`: what every client and every user holds, and
 * (with -d) its limits. */
static int show_usage(void)
{
	const struct srd_admin_usage_info *e;
	unsigned int n;
	void *all;
	int err;

	err = fetch(SRD_ADMIN_RES_USAGE, SRD_ADMIN_ALL, sizeof(*e), &all, &n);
	if (err)
		return fail_errno(err, "listing usage");
	out_begin();
	for (unsigned int k = 0; k < n; k++) {
		char comm[sizeof(e->comm) + 1] = { 0 };

		e = (const struct srd_admin_usage_info *)all + k;
		out_obj_open();
		if (e->kind == SRD_ADMIN_USAGE_CLIENT) {
			memcpy(comm, e->comm, sizeof(e->comm));
			out_str("kind", "%s ", "client");
			out_uint("pid", "pid %s ", e->pid);
			out_str("comm", "comm %s ", comm[0] ? comm : "-");
			out_uint("uid", "uid %s ", e->uid);
		} else {
			out_str("kind", "%s ", "user");
			out_uint("uid", "uid %s ", e->uid);
			out_uint("clients", "clients %s ", e->clients);
		}
		for (int r = 0; r < SRD_ADMIN_USAGE_NRES; r++) {
			char tfmt[32], jkey[40];

			snprintf(tfmt, sizeof(tfmt), "%s %%s ", usage_names[r]);
			out_uint(usage_names[r], tfmt, e->n[r]);
			if (!opt.details)
				continue;
			snprintf(tfmt, sizeof(tfmt), "%s_max %%s ",
				 usage_names[r]);
			snprintf(jkey, sizeof(jkey), "%s_max", usage_names[r]);
			out_uint(jkey, tfmt, e->limit[r]);
		}
		out_obj_close();
	}
	out_end();
	free(all);
	return EXIT_OK;
}

int cmd_resource(int argc, char **argv)
{
	struct dev_list l;
	int ret;

	if (argc && matches(argv[0], "help")) {
		res_usage(stdout);
		return EXIT_OK;
	}
	if (argc && !matches(argv[0], "show") && !matches(argv[0], "list")) {
		res_usage(stderr);
		return usage_error("resource: unknown command \"%s\"", argv[0]);
	}
	if (argc >= 2 && !strcmp(argv[1], "usage")) {
		if (argc > 2)
			return usage_error("resource show usage: unknown "
					   "keyword \"%s\"",
					   argv[2]);
		if (conn_open())
			return EXIT_FAILED;
		return show_usage();
	}
	if (argc >= 2) {
		size_t t;

		for (t = 0; t < NTYPES; t++)
			if (!strcmp(argv[1], types[t].name))
				break;
		if (t == NTYPES) {
			res_usage(stderr);
			return usage_error("resource show: unknown object "
					   "\"%s\"",
					   argv[1]);
		}
		if (conn_open() || devs_fetch(&l))
			return EXIT_FAILED;
		ret = show_type(&l, &types[t], argc - 2, argv + 2);
	} else {
		if (conn_open() || devs_fetch(&l))
			return EXIT_FAILED;
		ret = summary(&l);
	}
	devs_free(&l);
	return ret;
}
