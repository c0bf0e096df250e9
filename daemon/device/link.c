/* SPDX-License-Identifier: MIT */
/*
 * Devices follow their interfaces, as rxe and roce_gid_mgmt do: an address
 * added or removed changes the GID table (IBV_EVENT_GID_CHANGE), the MTU
 * sets the port's active MTU, the link going down or up moves the port to
 * DOWN or ACTIVE (IBV_EVENT_PORT_ERR / IBV_EVENT_PORT_ACTIVE), and the
 * interface going away removes the device (IBV_EVENT_DEVICE_FATAL).
 *
 * Every notification only says which interface changed; the device is
 * then brought up to date from a fresh query, so a lost notification
 * (socket overrun) costs a resync of everything, never a stale table.
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>

#include "common/proto_admin.h"
#include "daemon/device/link.h"

#define DIRTY_MAX 32

static int nl_fd = -1;

/* Interfaces named by one batch of notifications. */
struct dirty {
	bool all;
	unsigned int n;
	uint32_t ifindex[DIRTY_MAX];
};

static bool link_up(const struct nl_link *nl)
{
	return (nl->flags & IFF_UP) && (nl->flags & IFF_RUNNING);
}

/* The device's view of the interface, from the kernel's answers. */
static void link_apply(struct srd_daemon *d, struct srd_device *dev,
		       const struct nl_link *nl, const union ibv_gid *gids,
		       unsigned int ngids, bool notify)
{
	if (strcmp(dev->netdev, nl->name)) {
		srd_log(SRD_LOG_INFO, "%s: interface %s is now %s", dev->name,
			dev->netdev, nl->name);
		snprintf(dev->netdev, sizeof(dev->netdev), "%s", nl->name);
	}
	link_of(dev)->admin_up = nl->flags & IFF_UP;
	/* GIDs first: a port coming up has its addresses already. */
	device_set_gids(d, dev, gids, ngids, notify);
	device_set_port(d, dev, link_up(nl), nl->mtu, notify);
}

void link_sync(struct srd_daemon *d, struct srd_device *dev, bool notify)
{
	struct srd_link *l = link_of(dev);
	union ibv_gid gids[SRD_MAX_GIDS];
	struct nl_link nl;
	int n, err;

	if (l->removed || !l->ifindex)
		return;
	err = nl_get_link(l->ifindex, &nl);
	if (err == -ENODEV) {
		srd_log(SRD_LOG_INFO, "%s: interface %s is gone", dev->name,
			dev->netdev);
		device_remove(d, dev);
		return;
	}
	if (!err) {
		n = nl_get_gids(l->ifindex, gids, SRD_MAX_GIDS);
		err = n < 0 ? n : 0;
	}
	if (err) {
		/* Keep what we had; the next notification retries. */
		srd_log(SRD_LOG_WARN, "%s: cannot query %s: %s", dev->name,
			dev->netdev, strerror(-err));
		return;
	}
	link_apply(d, dev, &nl, gids, (unsigned int)n, notify);
}

int link_add(struct srd_daemon *d, const char *name, const char *netdev,
	     unsigned int flags, struct srd_device **out)
{
	union ibv_gid gids[SRD_MAX_GIDS];
	struct srd_device *dev;
	struct nl_link nl;
	uint32_t ifindex;
	int n, err;

	if (!device_name_ok(name))
		return -EINVAL;
	if (device_by_name(d, name))
		return -EEXIST;
	if (!*netdev || strlen(netdev) >= IFNAMSIZ)
		return -ENODEV;
	ifindex = if_nametoindex(netdev);
	if (!ifindex)
		return -ENODEV;
	err = nl_get_link(ifindex, &nl);
	if (err)
		return err;
	n = nl_get_gids(ifindex, gids, SRD_MAX_GIDS);
	if (n < 0)
		return n;
	err = device_create(d, name, nl.name, ifindex,
			    nl.has_mac ? nl.mac : NULL, flags, &dev);
	if (err)
		return err;
	/* No context can be open on it yet: nobody to notify. */
	link_apply(d, dev, &nl, gids, (unsigned int)n, false);
	device_announce(d, dev);
	srd_log(SRD_LOG_INFO, "device %s on %s: %u gids, mtu %u, port %s",
		dev->name, dev->netdev, dev->port.gid_count,
		dev->port.netdev_mtu,
		dev->port.state == IBV_PORT_ACTIVE ? "ACTIVE" : "DOWN");
	*out = dev;
	return 0;
}

int link_del(struct srd_daemon *d, const char *name)
{
	struct srd_device *dev = device_by_name(d, name);

	if (!dev)
		return -ENODEV;
	device_remove(d, dev);
	device_reap(d);
	return 0;
}

static void mark_dirty(void *arg, uint32_t ifindex)
{
	struct dirty *dt = arg;

	if (!ifindex || dt->n >= DIRTY_MAX) {
		dt->all = true;
		return;
	}
	for (unsigned int i = 0; i < dt->n; i++)
		if (dt->ifindex[i] == ifindex)
			return;
	dt->ifindex[dt->n++] = ifindex;
}

static bool is_dirty(const struct dirty *dt, uint32_t ifindex)
{
	if (dt->all)
		return true;
	for (unsigned int i = 0; i < dt->n; i++)
		if (dt->ifindex[i] == ifindex)
			return true;
	return false;
}

static void nl_input(struct srd_daemon *d, void *arg)
{
	struct dirty dt = { 0 };
	int err;

	err = nl_events_read(nl_fd, mark_dirty, &dt);
	if (err)
		srd_log(SRD_LOG_WARN, "netlink: %s", strerror(-err));
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (is_dirty(&dt, link_of(dev)->ifindex))
			link_sync(d, dev, true);
	}
	device_reap(d);
}

int links_init(struct srd_daemon *d, const struct srd_options *o)
{
	struct srd_device *dev;
	int err;

	/* Listen before looking, so no change falls in between. */
	nl_fd = nl_events_open();
	if (nl_fd >= 0) {
		err = loop_add_fd(d, nl_fd, nl_input, NULL);
		if (err) {
			close(nl_fd);
			nl_fd = -1;
		}
	} else {
		err = nl_fd;
	}
	if (err)
		srd_log(SRD_LOG_WARN,
			"netlink: %s: devices will not follow their "
			"interfaces",
			strerror(-err));
	if (!o->no_default_device) {
		err = link_add(d, "softrdma0", "lo", SRD_ADMIN_DEV_F_DEFAULT,
			       &dev);
		if (err) {
			srd_log(SRD_LOG_ERR, "softrdma0 on lo: %s",
				strerror(-err));
			return err;
		}
	}
	for (unsigned int i = 0; o->config && i < o->config->nlinks; i++) {
		const struct srd_config_link *cl = &o->config->links[i];

		/* An interface that is not there (yet) is no reason to
		 * refuse to run: the other devices still work. */
		err = link_add(d, cl->name, cl->netdev, SRD_ADMIN_DEV_F_CONFIG,
			       &dev);
		if (err)
			srd_log(SRD_LOG_WARN,
				"%s:%u: link add %s netdev %s: %s",
				o->config->path, cl->line, cl->name, cl->netdev,
				strerror(-err));
	}
	return 0;
}

void links_fini(struct srd_daemon *d)
{
	if (nl_fd < 0)
		return;
	loop_del_fd(d, nl_fd);
	close(nl_fd);
	nl_fd = -1;
}
