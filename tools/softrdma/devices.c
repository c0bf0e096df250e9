/* SPDX-License-Identifier: MIT */
/* The daemon's device list, and naming a device on the command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

int devs_fetch(struct dev_list *l)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_admin_list_req req = { .start = 0,
					  .dev_index = SRD_ADMIN_ALL };
	const struct srd_admin_list_rep *rep = (const void *)buf;
	size_t got;
	int err;

	memset(l, 0, sizeof(*l));
	/* Pages until the end; a bounded number, whatever the daemon says. */
	for (int page = 0; page < 64 && req.start != SRD_ADMIN_END; page++) {
		struct srd_admin_dev_info *n;

		err = conn_cmd(SRD_ADMIN_DEV_LIST, &req, sizeof(req), buf,
			       sizeof(buf), &got);
		if (err)
			return fail_errno(err, "listing devices"), err;
		if (got < sizeof(*rep) ||
		    rep->count > (got - sizeof(*rep)) / sizeof(*l->dev))
			return fail("short reply from softrdmad"), -EPROTO;
		n = realloc(l->dev, (l->n + rep->count) * sizeof(*l->dev) + 1);
		if (!n)
			return fail("out of memory"), -ENOMEM;
		l->dev = n;
		memcpy(l->dev + l->n, rep + 1, rep->count * sizeof(*l->dev));
		l->n += rep->count;
		req.start = rep->next;
	}
	for (unsigned int i = 0; i < l->n; i++) {
		l->dev[i].name[sizeof(l->dev[i].name) - 1] = '\0';
		l->dev[i].netdev[sizeof(l->dev[i].netdev) - 1] = '\0';
		l->dev[i].fw_ver[sizeof(l->dev[i].fw_ver) - 1] = '\0';
	}
	return 0;
}

void devs_free(struct dev_list *l)
{
	free(l->dev);
	memset(l, 0, sizeof(*l));
}

const struct srd_admin_dev_info *devs_find(const struct dev_list *l,
					   const char *name)
{
	const struct srd_admin_dev_info *removed = NULL;

	for (unsigned int i = 0; i < l->n; i++) {
		if (strcmp(l->dev[i].name, name))
			continue;
		if (!(l->dev[i].flags & SRD_ADMIN_DEV_F_REMOVED))
			return &l->dev[i];
		removed = &l->dev[i];
	}
	return removed;
}

const char *devs_name(const struct dev_list *l, uint32_t index)
{
	for (unsigned int i = 0; i < l->n; i++)
		if (l->dev[i].index == index)
			return l->dev[i].name;
	return "?";
}

int devs_parse(const struct dev_list *l, const char *arg,
	       const struct srd_admin_dev_info **out)
{
	char name[SRD_DEV_NAME_MAX];
	const char *slash = strchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
	uint32_t port;

	if (n >= sizeof(name)) {
		fail("no device \"%s\"", arg);
		return -1;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	if (slash && (!parse_u32(slash + 1, &port) || port != 1)) {
		fail("%s: no port \"%s\" (devices have port 1)", name,
		     slash + 1);
		return -1;
	}
	*out = devs_find(l, name);
	if (!*out) {
		fail("no device \"%s\"", name);
		return -1;
	}
	return 0;
}

int devs_show_each(const char *arg, devs_show_fn fn, const char *what)
{
	const struct srd_admin_dev_info *one = NULL;
	struct dev_list l;
	int err = 0;

	if (conn_open() || devs_fetch(&l))
		return EXIT_FAILED;
	if (arg && devs_parse(&l, arg, &one)) {
		devs_free(&l);
		return EXIT_FAILED;
	}
	out_begin();
	for (unsigned int i = 0; i < l.n && !err; i++) {
		const struct srd_admin_dev_info *di = &l.dev[i];

		/* Removed devices (contexts still open) only with -d. */
		if (one ? di != one
			: (di->flags & SRD_ADMIN_DEV_F_REMOVED) && !opt.details)
			continue;
		err = fn(&l, di);
	}
	out_end();
	devs_free(&l);
	return err ? fail_errno(err, what) : EXIT_OK;
}
