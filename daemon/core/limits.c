/* SPDX-License-Identifier: MIT */
/*
 * Limits (limits.h).  The defaults leave room for others: one client may
 * take a quarter of any device table and one user half of it, so a single
 * process (or all of one user's) can never exhaust QPNs, keys or handles
 * for everybody else.  Mappings: the daemon's vm.max_map_count is shared by
 * every client, so one client gets an eighth of it and one user a quarter.
 * Registered bytes cost the daemon address space and map the client's own
 * memory: one client may register as much as the machine's RAM, one user
 * twice that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/core.h"

static const char *const names[SRD_RES_NUM] = {
	[SRD_RES_PD] = "pd",	       [SRD_RES_MR] = "mr",
	[SRD_RES_CQ] = "cq",	       [SRD_RES_QP] = "qp",
	[SRD_RES_SRQ] = "srq",	       [SRD_RES_AH] = "ah",
	[SRD_RES_MW] = "mw",	       [SRD_RES_DM] = "dm",
	[SRD_RES_CHANNEL] = "channel", [SRD_RES_MAPS] = "maps",
	[SRD_RES_BYTES] = "mr_bytes",
};

int limits_res_by_name(const char *name)
{
	for (int r = 0; r < SRD_RES_NUM; r++)
		if (!strcmp(names[r], name))
			return r;
	return -1;
}

static struct srd_table *res_table(struct srd_daemon *d, enum srd_res r)
{
	switch (r) {
	case SRD_RES_PD:
		return &d->pds;
	case SRD_RES_MR:
		return &d->mrs;
	case SRD_RES_CQ:
		return &d->cqs;
	case SRD_RES_QP:
		return &d->qps_by_num;
	case SRD_RES_SRQ:
		return &d->srqs;
	case SRD_RES_AH:
		return &d->ahs;
	case SRD_RES_MW:
		return &d->mws;
	case SRD_RES_DM:
		return &d->dms;
	case SRD_RES_CHANNEL:
		return &d->channels;
	default:
		return NULL;
	}
}

static uint64_t read_u64(const char *path, const char *key)
{
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (key && strncmp(line, key, strlen(key)))
			continue;
		v = strtoull(line + (key ? strlen(key) : 0), &end, 10);
		if (key && strstr(end, "kB"))
			v *= 1024;
		break;
	}
	fclose(f);
	return v;
}

void limits_defaults(struct srd_daemon *d)
{
	uint64_t maps = read_u64("/proc/sys/vm/max_map_count", NULL);
	uint64_t ram = read_u64("/proc/meminfo", "MemTotal:");

	if (!maps)
		maps = 65530;
	if (!ram)
		ram = 1ull << 30;
	for (int r = 0; r < SRD_RES_NUM; r++) {
		struct srd_table *t = res_table(d, r);

		if (t) {
			d->limits.client[r] = t->max / 4;
			d->limits.user[r] = t->max / 2;
		}
	}
	d->limits.client[SRD_RES_MAPS] = maps / 8;
	d->limits.user[SRD_RES_MAPS] = maps / 4;
	d->limits.client[SRD_RES_BYTES] = ram;
	d->limits.user[SRD_RES_BYTES] = 2 * ram;
}

/* The usage record of a uid, made on first use. */
static struct srd_user *user_get(struct srd_daemon *d, uid_t uid)
{
	struct srd_user *u;

	list_for_each (&d->users, it) {
		u = list_entry(it, struct srd_user, node);
		if (u->uid == uid)
			return u;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	list_add_tail(&d->users, &u->node);
	return u;
}

int limits_client_add(struct srd_client *c)
{
	c->user = user_get(c->d, c->uid);
	if (!c->user)
		return -ENOMEM;
	c->user->clients++;
	return 0;
}

void limits_client_gone(struct srd_client *c)
{
	struct srd_user *u = c->user;

	if (!u)
		return;
	c->user = NULL;
	if (--u->clients)
		return;
	list_del(&u->node);
	free(u);
}

int limits_charge(struct srd_client *c, enum srd_res r, uint64_t n)
{
	const struct srd_limits *l = &c->d->limits;

	if (!c->user)
		return 0;
	if (n > l->client[r] - c->usage.n[r] || c->usage.n[r] > l->client[r] ||
	    n > l->user[r] - c->user->usage.n[r] ||
	    c->user->usage.n[r] > l->user[r]) {
		srd_log(SRD_LOG_INFO, "pid %d uid %u: %s limit reached",
			(int)c->pid, (unsigned int)c->uid, names[r]);
		return -ENOMEM;
	}
	c->usage.n[r] += n;
	c->user->usage.n[r] += n;
	return 0;
}

void limits_charge_over(struct srd_client *c, enum srd_res r, uint64_t n)
{
	if (!c || !c->user)
		return;
	c->usage.n[r] += n;
	c->user->usage.n[r] += n;
}

void limits_uncharge(struct srd_client *c, enum srd_res r, uint64_t n)
{
	if (!c || !c->user)
		return;
	c->usage.n[r] -= n;
	c->user->usage.n[r] -= n;
}

/* Objects with a ring or memory of the daemon's cost one mapping. */
static uint64_t obj_maps(enum srd_res r)
{
	return r == SRD_RES_CQ || r == SRD_RES_QP || r == SRD_RES_SRQ ||
	       r == SRD_RES_DM;
}

int64_t res_alloc(struct srd_client *c, enum srd_res r, void *obj)
{
	int64_t h;
	int err;

	err = limits_charge(c, r, 1);
	if (err)
		return err;
	err = limits_charge(c, SRD_RES_MAPS, obj_maps(r));
	if (err) {
		limits_uncharge(c, r, 1);
		return err;
	}
	h = table_alloc(res_table(c->d, r), obj);
	if (h < 0) {
		limits_uncharge(c, SRD_RES_MAPS, obj_maps(r));
		limits_uncharge(c, r, 1);
	}
	return h;
}

void res_free(struct srd_daemon *d, struct srd_client *c, enum srd_res r,
	      uint32_t idx)
{
	if (!table_get(res_table(d, r), idx))
		return;
	table_free(res_table(d, r), idx);
	limits_uncharge(c, SRD_RES_MAPS, obj_maps(r));
	limits_uncharge(c, r, 1);
}
