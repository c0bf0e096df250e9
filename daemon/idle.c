/* SPDX-License-Identifier: MIT */
/*
 * What keeps a daemon without clients from exiting when idle: a device
 * added at run time (`softrdma link add`), which exiting would silently
 * take away.  Only while it lives: once its interface is gone (netlink
 * removes the device) or the daemon's network namespace lost the name it
 * had when the link was added (`ip netns del`: the daemon alone keeps the
 * namespace, and nobody can join it by name any more), the hold ends and
 * the idle timeout runs from then.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/proto_admin.h"
#include "daemon/core/core.h"
#include "daemon/device/link.h"

#define NETNS_DIR "/run/netns"
#define NETNS_CHECK_NS 1000000000ull

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The name under NETNS_DIR of the daemon's network namespace, if any. */
static void netns_name_find(struct srd_daemon *d)
{
	struct stat self, st;
	struct dirent *e;
	char path[512];
	DIR *dir;

	d->idle.netns[0] = '\0';
	if (stat("/proc/self/ns/net", &self))
		return;
	dir = opendir(NETNS_DIR);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' ||
		    strlen(e->d_name) >= sizeof(d->idle.netns))
			continue;
		snprintf(path, sizeof(path), NETNS_DIR "/%s", e->d_name);
		if (!stat(path, &st) && same_file(&st, &self)) {
			snprintf(d->idle.netns, sizeof(d->idle.netns), "%s",
				 e->d_name);
			break;
		}
	}
	closedir(dir);
	if (d->idle.netns[0])
		srd_log(SRD_LOG_INFO, "network namespace %s", d->idle.netns);
}

static bool netns_named(struct srd_daemon *d)
{
	struct stat self, st;
	char path[512];

	if (!d->idle.netns[0])
		return true;
	snprintf(path, sizeof(path), NETNS_DIR "/%s", d->idle.netns);
	if (stat("/proc/self/ns/net", &self) || stat(path, &st) ||
	    !same_file(&st, &self)) {
		srd_log(SRD_LOG_INFO, "network namespace %s deleted",
			d->idle.netns);
		d->idle.netns_gone = true;
	}
	return !d->idle.netns_gone;
}

void idle_link_added(struct srd_daemon *d)
{
	if (d->idle.looked)
		return;
	d->idle.looked = true;
	netns_name_find(d);
}

static bool runtime_links(struct srd_daemon *d)
{
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (link_of(dev)->flags & SRD_ADMIN_DEV_F_RUNTIME)
			return true;
	}
	return false;
}

bool idle_held(struct srd_daemon *d, uint64_t now)
{
	bool held = false;

	if (!d->idle.netns_gone && runtime_links(d)) {
		held = true;
		if (now - d->idle.checked >= NETNS_CHECK_NS) {
			d->idle.checked = now;
			held = netns_named(d);
		}
	}
	if (d->idle.held && !held) {
		srd_log(SRD_LOG_INFO, "no device added at run time is left");
		d->idle_since = now;
	}
	d->idle.held = held;
	return held;
}

uint64_t idle_deadline(struct srd_daemon *d, uint64_t now)
{
	if (!d->idle_exit_ns || d->nclients)
		return UINT64_MAX;
	if (idle_held(d, now))
		return d->idle.netns[0] ? d->idle.checked + NETNS_CHECK_NS
					: UINT64_MAX;
	return d->idle_since + d->idle_exit_ns;
}
