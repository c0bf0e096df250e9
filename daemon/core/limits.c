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
 *
 * What is scarcer gets smaller shares, so that at least four users fit:
 *
 * - Device memory: a device has 256 KiB; a user (and a client) may hold a
 *   quarter of it, counted over all devices.
 * - XRC domains: a client may hold 1024 handles and a user a quarter of
 *   the daemon's table (4096 of 16384).
 * - Descriptors: the budget B is the daemon's RLIMIT_NOFILE.  A user may
 *   hold a quarter of it and one client a sixteenth; a user may have B/16
 *   connections (a context costs four or five descriptors: its socket,
 *   its async pipe, its mem and maps files, a trace file).  An eighth of B
 *   is a reserve ordinary clients never reach: a user's first contexts
 *   (while it holds under a sixteenth of the reserve), root and the
 *   daemon's own user (the administration commands) draw on it down to
 *   its last quarter, which stays for the daemon's own descriptors
 *   (devices, sockets, files it opens while serving).  Root and the
 *   daemon's user are held to the per-user figures all the same: on a
 *   system daemon most clients may well be root's, and a root process
 *   that leaks contexts must not take the reserve from everybody else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/core/core.h"

static const char *const names[SRD_RES_NUM] = {
	[SRD_RES_PD] = "pd",
	[SRD_RES_MR] = "mr",
	[SRD_RES_CQ] = "cq",
	[SRD_RES_QP] = "qp",
	[SRD_RES_SRQ] = "srq",
	[SRD_RES_AH] = "ah",
	[SRD_RES_MW] = "mw",
	[SRD_RES_DM] = "dm",
	[SRD_RES_CHANNEL] = "channel",
	[SRD_RES_MAPS] = "maps",
	[SRD_RES_BYTES] = "mr_bytes",
	[SRD_RES_XRCD] = "xrcd",
	[SRD_RES_DM_BYTES] = "dm_bytes",
	[SRD_RES_CLIENTS] = "clients",
	[SRD_RES_FDS] = "fds",
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

/* Default shares of what is scarce (see the top of this file). */
#define XRCD_PER_CLIENT 1024
#define FD_RESERVE_MIN 64

void limits_defaults(struct srd_daemon *d)
{
	uint64_t maps = read_u64("/proc/sys/vm/max_map_count", NULL);
	uint64_t ram = read_u64("/proc/meminfo", "MemTotal:");
	struct srd_limits *l = &d->limits;
	struct rlimit rl;
	uint64_t fds = 1024;

	if (!maps)
		maps = 65530;
	if (!ram)
		ram = 1ull << 30;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		fds = rl.rlim_cur;
	for (int r = 0; r < SRD_RES_NUM; r++) {
		struct srd_table *t = res_table(d, r);

		if (t) {
			l->client[r] = t->max / 4;
			l->user[r] = t->max / 2;
		}
	}
	l->client[SRD_RES_MAPS] = maps / 8;
	l->user[SRD_RES_MAPS] = maps / 4;
	l->client[SRD_RES_BYTES] = ram;
	l->user[SRD_RES_BYTES] = 2 * ram;
	l->client[SRD_RES_XRCD] = XRCD_PER_CLIENT;
	l->user[SRD_RES_XRCD] = d->xrcds.max / 4;
	l->client[SRD_RES_DM_BYTES] = SRD_DM_MAX_SIZE / 4;
	l->user[SRD_RES_DM_BYTES] = SRD_DM_MAX_SIZE / 4;
	l->client[SRD_RES_CLIENTS] = 1;
	l->user[SRD_RES_CLIENTS] = fds / 16;
	l->client[SRD_RES_FDS] = fds / 16;
	l->user[SRD_RES_FDS] = fds / 4;
	l->fd_budget = fds;
	l->fd_reserve = fds / 8 > FD_RESERVE_MIN ? fds / 8 : FD_RESERVE_MIN;
	if (l->fd_reserve > fds / 2)
		l->fd_reserve = fds / 2;
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

/* Root and the daemon's own user: whoever administers the daemon. */
static bool uid_admin(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static bool over(uint64_t have, uint64_t n, uint64_t max)
{
	return have > max || n > max - have;
}

/* How many descriptors c may have the daemon hold in all, its own
 * included: ordinary clients leave the reserve alone. */
static uint64_t fds_ceiling(const struct srd_client *c, uint64_t n)
{
	const struct srd_limits *l = &c->d->limits;
	uint64_t floor = l->fd_reserve / 4;

	if (uid_admin(c->uid) ||
	    c->user->usage.n[SRD_RES_FDS] + n <= l->fd_reserve / 16)
		return l->fd_budget > floor ? l->fd_budget - floor : 0;
	return l->fd_budget > l->fd_reserve ? l->fd_budget - l->fd_reserve : 0;
}

/* Whether c may take n more of r: 0, or the errno of the refusal with
 * why saying which limit. */
static int limits_check(const struct srd_client *c, enum srd_res r, uint64_t n,
			const char **why)
{
	const struct srd_limits *l = &c->d->limits;
	bool fd = r == SRD_RES_FDS || r == SRD_RES_CLIENTS;

	*why = "client";
	if (over(c->usage.n[r], n, l->client[r]))
		return fd ? -EMFILE : -ENOMEM;
	*why = "user";
	if (over(c->user->usage.n[r], n, l->user[r]))
		return fd ? -EMFILE : -ENOMEM;
	*why = "daemon";
	if (r == SRD_RES_FDS && over(l->fds_held, n, fds_ceiling(c, n)))
		return -ENFILE;
	return 0;
}

static void limits_add(struct srd_client *c, enum srd_res r, uint64_t n)
{
	c->usage.n[r] += n;
	c->user->usage.n[r] += n;
	if (r == SRD_RES_FDS)
		c->d->limits.fds_held += n;
}

static void limits_sub(struct srd_client *c, enum srd_res r, uint64_t n)
{
	c->usage.n[r] -= n;
	c->user->usage.n[r] -= n;
	if (r == SRD_RES_FDS)
		c->d->limits.fds_held -= n;
}

int limits_client_add(struct srd_client *c)
{
	const char *why;
	int err;

	c->user = user_get(c->d, c->uid);
	if (!c->user)
		return -ENOMEM;
	c->user->clients++;
	/* The connection itself: one client and its socket. */
	err = limits_check(c, SRD_RES_CLIENTS, 1, &why);
	if (!err)
		err = limits_check(c, SRD_RES_FDS, 1, &why);
	if (err) {
		srd_log(SRD_LOG_WARN,
			"pid %d uid %u: connection refused: %s %s limit "
			"reached",
			(int)c->pid, (unsigned int)c->uid, why,
			err == -ENFILE ? "descriptor" : "connection");
		limits_client_gone(c);
		return err;
	}
	limits_add(c, SRD_RES_CLIENTS, 1);
	limits_add(c, SRD_RES_FDS, 1);
	return 0;
}

void limits_client_gone(struct srd_client *c)
{
	struct srd_user *u = c->user;

	if (!u)
		return;
	/* What the connection itself held (its socket, the files it handed
	 * over) goes with it; objects were uncharged as they went. */
	for (int r = 0; r < SRD_RES_NUM; r++)
		limits_sub(c, r, c->usage.n[r]);
	c->user = NULL;
	if (--u->clients)
		return;
	list_del(&u->node);
	free(u);
}

int limits_charge(struct srd_client *c, enum srd_res r, uint64_t n)
{
	const char *why;
	int err;

	if (!c->user)
		return 0;
	err = limits_check(c, r, n, &why);
	if (err) {
		srd_log(SRD_LOG_INFO, "pid %d uid %u: %s %s limit reached",
			(int)c->pid, (unsigned int)c->uid, why, names[r]);
		return err;
	}
	limits_add(c, r, n);
	return 0;
}

void limits_charge_over(struct srd_client *c, enum srd_res r, uint64_t n)
{
	if (!c || !c->user)
		return;
	limits_add(c, r, n);
}

void limits_uncharge(struct srd_client *c, enum srd_res r, uint64_t n)
{
	if (!c || !c->user)
		return;
	limits_sub(c, r, n);
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
