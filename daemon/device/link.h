/* SPDX-License-Identifier: MIT */
/*
 * Devices on network interfaces: the device model (device.c), following
 * the interface through rtnetlink (netlink.c, link.c) and the
 * configuration file (config.c).  What rxe and ib_core's roce_gid_mgmt do
 * in the kernel.
 *
 * Other parts of the daemon that keep per-device state (the UDP wire, the
 * CM) register a device notifier to hear of devices coming and going.
 */
#ifndef SOFTRDMA_DAEMON_LINK_H
#define SOFTRDMA_DAEMON_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/core/core.h"
#include "daemon/core/flow.h"

/* What the daemon keeps about a device beyond struct srd_device.  Every
 * device is made by device_create(), so every device is one of these. */
struct srd_link {
	struct srd_device dev;
	uint32_t ifindex;
	unsigned int flags; /* SRD_ADMIN_DEV_F_* */
	bool removed;	    /* deleted: kept until nothing refers to it */
	bool admin_up;	    /* the interface is IFF_UP */
	bool announced;	    /* notifiers have heard of it */
	bool has_mac;
	uint8_t mac[6];
	uint64_t link_downed; /* times the port left ACTIVE */
	struct srd_daemon *d;
	/* What destroyed QPs counted: port counters never go back. */
	struct srd_tp_counters retired;
	/* What the raw side counted before its last raw QP went. */
	struct srd_raw_counters raw_retired;
};

static inline struct srd_link *link_of(struct srd_device *dev)
{
	return container_of(dev, struct srd_link, dev);
}

static inline const struct srd_link *link_of_const(const struct srd_device *dev)
{
	return container_of(dev, const struct srd_link, dev);
}

/* --- device.c: the device model ---------------------------------------- */

/* Device names: 1 to SRD_DEV_NAME_MAX - 1 of [A-Za-z0-9_.-]. */
bool device_name_ok(const char *name);
/* A new device, listed, port DOWN with an empty GID table. */
int device_create(struct srd_daemon *d, const char *name, const char *netdev,
		  uint32_t ifindex, const uint8_t *mac, unsigned int flags,
		  struct srd_device **out);
/* The live (not removed) device of that name, or NULL. */
struct srd_device *device_by_name(struct srd_daemon *d, const char *name);
/* A device by index, removed ones included. */
struct srd_device *device_by_index_any(struct srd_daemon *d, uint32_t index);
/* Removed devices still referred to, oldest first. */
struct list_head *device_removed_list(void);
/*
 * Take a device away, as rxe's removal: it leaves the device list, its
 * GIDs go, its port goes DOWN, every context on it gets
 * IBV_EVENT_DEVICE_FATAL and its QPs move to the error state.  The
 * structure stays until device_reap() sees nothing refer to it.
 */
void device_remove(struct srd_daemon *d, struct srd_device *dev);
/* Free removed devices that no client and no QP refers to any more. */
void device_reap(struct srd_daemon *d);

/* Contexts and QPs on a device. */
uint32_t device_contexts(struct srd_daemon *d, const struct srd_device *dev);
uint32_t device_qps(struct srd_daemon *d, const struct srd_device *dev);
/* Send an async event (port 1 for port events) to every context on dev. */
void device_event(struct srd_daemon *d, struct srd_device *dev,
		  enum ibv_event_type type);

/*
 * Make the GID table hold exactly want[0..n) (most wanted first): entries
 * no longer wanted are freed, new ones take the lowest free slots, and no
 * entry that stays ever moves (applications hold GID indices).  With
 * notify, a change raises IBV_EVENT_GID_CHANGE on every context.
 * Returns whether anything changed.
 */
bool device_set_gids(struct srd_daemon *d, struct srd_device *dev,
		     const union ibv_gid *want, unsigned int n, bool notify);
/*
 * Port state and MTU from the interface: up is "administratively up and
 * running".  With notify, ACTIVE <-> DOWN raises IBV_EVENT_PORT_ACTIVE or
 * IBV_EVENT_PORT_ERR on every context.
 */
void device_set_port(struct srd_daemon *d, struct srd_device *dev, bool up,
		     uint32_t netdev_mtu, bool notify);
/* IBTA PortPhysicalState of port 1 (SRD_PHYS_STATE_*). */
uint32_t device_phys_state(const struct srd_device *dev, bool admin_up);

/* --- device notifiers ---------------------------------------------------- */
enum srd_dev_event {
	SRD_DEV_ADDED,	 /* listed, GIDs and port set */
	SRD_DEV_REMOVED, /* about to be unlisted: drop every reference */
	SRD_DEV_GIDS,	 /* the GID table changed */
	SRD_DEV_PORT,	 /* port state or MTU changed */
};
struct srd_dev_notifier {
	struct list_node node;
	void (*fn)(struct srd_daemon *d, struct srd_device *dev,
		   enum srd_dev_event ev, void *arg);
	void *arg;
};
/* Nothing is replayed on registration: walk d->devices for what exists. */
void device_notifier_add(struct srd_dev_notifier *n);
/* Tell the notifiers of a device now set up (SRD_DEV_ADDED); until then
 * they hear nothing of it. */
void device_announce(struct srd_daemon *d, struct srd_device *dev);
void device_notifier_del(struct srd_dev_notifier *n);

/* --- netlink.c: asking the kernel about interfaces ---------------------- */
struct nl_link {
	uint32_t ifindex;
	char name[SRD_DEV_NAME_MAX];
	unsigned int flags; /* IFF_* */
	uint32_t mtu;
	bool has_mac;
	uint8_t mac[6];
};
/* One interface by index.  0, -ENODEV when it does not exist, -errno. */
int nl_get_link(uint32_t ifindex, struct nl_link *out);
/*
 * The RoCE v2 GIDs of an interface's addresses, in table order: IPv4
 * addresses (IPv4-mapped), then IPv6 addresses other than link-local,
 * then link-local ones; addresses still in (or failed) duplicate address
 * detection are left out.  Returns how many (at most max) or -errno.
 */
int nl_get_gids(uint32_t ifindex, union ibv_gid *out, unsigned int max);
/* A non-blocking socket subscribed to link and address changes. */
int nl_events_open(void);
/*
 * Read every pending notification; fn(arg, ifindex) for each interface
 * concerned, fn(arg, 0) when notifications were lost (resync everything).
 * Returns 0 or a negative errno other than -EAGAIN.
 */
int nl_events_read(int fd, void (*fn)(void *arg, uint32_t ifindex), void *arg);

/* --- link.c: devices following their interfaces ------------------------ */
int links_init(struct srd_daemon *d, const struct srd_options *o);
void links_fini(struct srd_daemon *d);
/* `link add NAME netdev IFACE`: 0 or -EINVAL, -EEXIST, -ENODEV, -ENOSPC. */
int link_add(struct srd_daemon *d, const char *name, const char *netdev,
	     unsigned int flags, struct srd_device **out);
/* `link delete NAME`: 0 or -ENODEV. */
int link_del(struct srd_daemon *d, const char *name);
/* Bring a device up to date with its interface (removing it when the
 * interface is gone). */
void link_sync(struct srd_daemon *d, struct srd_device *dev, bool notify);

/* --- config.c: the configuration file ------------------------------------ */
struct srd_config_link {
	char name[SRD_DEV_NAME_MAX];
	char netdev[SRD_DEV_NAME_MAX];
	unsigned int line;
};
/* "limit client|user RESOURCE VALUE", "limit reserve fds VALUE"
 * (daemon/core/limits.h). */
struct srd_config_limit {
	bool user;
	bool reserve;
	int res; /* enum srd_res */
	uint64_t value;
};
struct srd_config {
	char *path;
	struct srd_config_link *links;
	unsigned int nlinks;
	struct srd_config_limit *limits;
	unsigned int nlimits;
};
/*
 * Parse words[0..n) of a `link add` command: "link add NAME [type
 * softrdma|rxe] netdev IFACE" (words[0] is "link").  Returns 0, or -EINVAL
 * with *why saying what is wrong.
 */
int config_parse_link_add(char **words, int n, struct srd_config_link *out,
			  const char **why);
/* Read a configuration file; errors go to err as "PATH:LINE: what".
 * 0, -EINVAL (syntax), or -errno of opening/reading it. */
int config_load(const char *path, struct srd_config *cfg, FILE *err);
void config_free(struct srd_config *cfg);

#endif
