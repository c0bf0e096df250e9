/* SPDX-License-Identifier: MIT */
/*
 * The device model: soft RDMA devices on network interfaces, as rxe makes
 * them on netdevs.  Port 1 is a RoCE v2 port whose GID table comes from
 * the interface's IP addresses (link.c keeps it current).  A removed
 * device lingers, unlisted, until no context refers to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dev_clock.h"
#include "common/proto_admin.h"
#include "daemon/core/core.h"
#include "daemon/core/flow.h"
#include "daemon/core/mcast.h"
#include "daemon/device/link.h"

#define SRD_VENDOR_PART_ID 0x5244 /* "RD" */

/*
 * Bytes a RoCE v2 packet carries around its payload at most: IPv6 (40),
 * UDP (8), BTH (12), extended headers (28: AtomicETH, the largest), ICRC
 * (4).  The payload MTU is the largest IB MTU that fits in what is left
 * of the netdev MTU: 1500 gives 1024, 9000 gives 4096.
 */
#define SRD_ROCE_HEADROOM (40 + 8 + 12 + 28 + 4)

enum ibv_mtu device_mtu_for_netdev(uint32_t netdev_mtu)
{
	uint32_t room = netdev_mtu > SRD_ROCE_HEADROOM
				? netdev_mtu - SRD_ROCE_HEADROOM
				: 0;

	if (room >= 4096)
		return IBV_MTU_4096;
	if (room >= 2048)
		return IBV_MTU_2048;
	if (room >= 1024)
		return IBV_MTU_1024;
	if (room >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* EUI-64 from the MAC; without one (loopback) a value derived from the
 * device name, stable across restarts, locally administered. */
static uint64_t make_guid(const char *name, const uint8_t *mac)
{
	static const uint8_t zero[6];
	uint8_t g[8];
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t be;

	if (mac && memcmp(mac, zero, 6)) {
		g[0] = mac[0] ^ 0x02;
		g[1] = mac[1];
		g[2] = mac[2];
		g[3] = 0xff;
		g[4] = 0xfe;
		g[5] = mac[3];
		g[6] = mac[4];
		g[7] = mac[5];
	} else {
		for (const char *s = name; *s; s++)
			h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
		for (int i = 0; i < 8; i++)
			g[i] = h >> (56 - 8 * i);
		g[0] = (g[0] | 0x02) & ~0x01; /* local, unicast */
	}
	memcpy(&be, g, 8);
	return be;
}

static void fill_attr(struct srd_device *dev)
{
	struct ibv_device_attr *a = &dev->attr;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "0.1.0");
	a->node_guid = dev->node_guid;
	a->sys_image_guid = dev->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = SRD_VENDOR_ID;
	a->vendor_part_id = SRD_VENDOR_PART_ID;
	a->hw_ver = 0;
	a->max_qp = 16384;
	a->max_qp_wr = 16384;
	/* Only what is implemented: no APM, no SRQ resize; XRC.  Memory windows
	 * of type 1 and 2B (QP and PD checked) and the extensions user
	 * space can reach (local invalidate, send with invalidate), as rxe
	 * and ConnectX report them.  As rxe: P_Key and Q_Key violations
	 * are counted (the port's bad_pkey_cntr, qkey_viol_cntr) and an AH's port must be the one
	 * port (ah_attr_check). */
	a->device_cap_flags =
		IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
		IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_CURR_QP_STATE_MOD |
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_MGT_EXTENSIONS |
		IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC |
		IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
		IBV_DEVICE_UD_AV_PORT_ENFORCE;
	/* Raw packet QPs and their flow rules, where this daemon may open
	 * packet sockets (transport/raw.c). */
	if (raw_supported())
		a->device_cap_flags |= IBV_DEVICE_MANAGED_FLOW_STEERING;
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = 16384;
	a->max_cqe = 32767;
	a->max_mr = 65536;
	a->max_pd = 65536;
	a->max_qp_rd_atom = 128;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = 258048;
	a->max_qp_init_rd_atom = 128;
	a->max_ee_init_rd_atom = 0;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ee = 0;
	a->max_rdd = 0;
	a->max_mw = SRD_MAX_MW;
	a->max_raw_ipv6_qp = 0;
	a->max_raw_ethy_qp = 0;
	a->max_mcast_grp = SRD_MCAST_MAX_GRP;
	a->max_mcast_qp_attach = SRD_MCAST_MAX_QP_ATTACH;
	a->max_total_mcast_qp_attach = SRD_MCAST_MAX_TOTAL_ATTACH;
	a->max_ah = 65536;
	a->max_fmr = 0;
	a->max_map_per_fmr = 0;
	a->max_srq = 16384;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 27;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	dev->caps_ex.max_dm_size = SRD_DM_MAX_SIZE;
	dev->caps_ex.hca_core_clock = SRD_DEV_CLOCK_KHZ;
	dev->caps_ex.completion_timestamp_mask = SRD_DEV_CLOCK_MASK;
	dev->caps_ex.max_cq_count = SRD_CQ_MOD_MAX_COUNT;
	dev->caps_ex.max_cq_period = SRD_CQ_MOD_MAX_PERIOD;
	/* IBTA 1.5 ATOMIC WRITE and FLUSH, as rxe reports them (a
	 * persistent flush needs an MR over persistent memory, which no
	 * registration here is). */
	dev->caps_ex.cap_flags_hi = IB_UVERBS_DEVICE_FLUSH_GLOBAL |
				    IB_UVERBS_DEVICE_FLUSH_PERSISTENT |
				    IB_UVERBS_DEVICE_ATOMIC_WRITE;
	/* ODP MRs go wherever MRs go: each transport's operations and SRQ
	 * receives (UC has no READ or atomics, UD no RDMA, XRC receives
	 * only on SRQs).  rxe has no implicit ODP; mlx5 has. */
	dev->caps_ex.odp_general = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	dev->caps_ex.odp_rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	dev->caps_ex.odp_uc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	dev->caps_ex.odp_ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			      IBV_ODP_SUPPORT_SRQ_RECV;
	dev->caps_ex.odp_xrc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
			       IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
			       IBV_ODP_SUPPORT_SRQ_RECV;
}

/* Removed devices that something may still refer to. */
static struct list_head removed = { { &removed.n, &removed.n } };
/* Device indices are never reused within a daemon's life, as the kernel's
 * are not: a stale index must not open a different device. */
static uint32_t next_index;
static struct list_head notifiers = { { &notifiers.n, &notifiers.n } };

bool device_name_ok(const char *name)
{
	size_t n = strnlen(name, SRD_DEV_NAME_MAX);

	if (!n || n >= SRD_DEV_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return false;
	}
	return true;
}

static bool guid_taken(struct srd_daemon *d, uint64_t guid)
{
	list_for_each (&d->devices, it)
		if (list_entry(it, struct srd_device, node)->node_guid == guid)
			return true;
	return false;
}

static void notify(struct srd_daemon *d, struct srd_device *dev,
		   enum srd_dev_event ev)
{
	/* Nothing is said of a device before it is announced whole. */
	if (!link_of(dev)->announced)
		return;
	list_for_each (&notifiers, it) {
		struct srd_dev_notifier *n =
			list_entry(it, struct srd_dev_notifier, node);

		n->fn(d, dev, ev, n->arg);
	}
}

int device_create(struct srd_daemon *d, const char *name, const char *netdev,
		  uint32_t ifindex, const uint8_t *mac, unsigned int flags,
		  struct srd_device **out)
{
	struct srd_link *l;
	struct srd_device *dev;

	if (!device_name_ok(name))
		return -EINVAL;
	if (strlen(netdev) >= sizeof(dev->netdev))
		return -ENAMETOOLONG;
	if (device_by_name(d, name))
		return -EEXIST;
	if (device_count(d) >= SRD_MAX_DEVICES)
		return -ENOSPC;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	dev = &l->dev;
	l->d = d;
	l->ifindex = ifindex;
	l->flags = flags;
	if (mac) {
		l->has_mac = true;
		memcpy(l->mac, mac, 6);
	}
	dev->index = next_index++;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(dev->netdev, sizeof(dev->netdev), "%s", netdev);
	dev->node_guid = make_guid(name, mac);
	/* Two devices on one interface: the second is told apart by name. */
	if (guid_taken(d, dev->node_guid))
		dev->node_guid = make_guid(name, NULL);
	dev->port.state = IBV_PORT_DOWN;
	dev->port.max_mtu = IBV_MTU_4096;
	dev->port.netdev_mtu = 1500;
	dev->port.active_mtu = device_mtu_for_netdev(dev->port.netdev_mtu);
	fill_attr(dev);
	list_add_tail(&d->devices, &dev->node);
	*out = dev;
	return 0;
}

struct srd_device *device_by_name(struct srd_daemon *d, const char *name)
{
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (!strncmp(dev->name, name, sizeof(dev->name)))
			return dev;
	}
	return NULL;
}

struct srd_device *device_by_index_any(struct srd_daemon *d, uint32_t index)
{
	struct srd_device *dev = device_by_index(d, index);

	if (dev)
		return dev;
	list_for_each (&removed, it) {
		dev = list_entry(it, struct srd_device, node);
		if (link_of(dev)->d == d && dev->index == index)
			return dev;
	}
	return NULL;
}

struct list_head *device_removed_list(void)
{
	return &removed;
}

uint32_t device_contexts(struct srd_daemon *d, const struct srd_device *dev)
{
	uint32_t n = 0;

	list_for_each (&d->clients, it)
		if (list_entry(it, struct srd_client, node)->dev == dev)
			n++;
	return n;
}

uint32_t device_qps(struct srd_daemon *d, const struct srd_device *dev)
{
	uint32_t n = 0;

	list_for_each (&d->qps, it)
		if (list_entry(it, struct srd_qp, node)->dev == dev)
			n++;
	return n;
}

void device_event(struct srd_daemon *d, struct srd_device *dev,
		  enum ibv_event_type type)
{
	list_for_each (&d->clients, it) {
		struct srd_client *c = list_entry(it, struct srd_client, node);

		if (c->dev == dev)
			client_async_event(c, type, 0);
	}
}

/*
 * The engine caches where a connected QP's packets go (a device pointer)
 * and its path MTU: when GIDs, MTUs or devices change, every QP that may
 * send is told its path changed.
 */
static void paths_changed(struct srd_daemon *d)
{
	list_for_each (&d->qps, it) {
		struct srd_qp *qp = list_entry(it, struct srd_qp, node);

		switch (qp->attr.qp_state) {
		case IBV_QPS_INIT:
		case IBV_QPS_RTR:
		case IBV_QPS_RTS:
		case IBV_QPS_SQD:
			engine_qp_path_changed(qp);
			break;
		default:
			break;
		}
	}
}

static int gid_find(const struct srd_port *p, const union ibv_gid *g)
{
	for (int i = 0; i < SRD_MAX_GIDS; i++)
		if (p->gid_valid[i] && !memcmp(p->gid[i].raw, g->raw, 16))
			return i;
	return -1;
}

static bool wanted(const union ibv_gid *want, unsigned int n,
		   const union ibv_gid *g)
{
	for (unsigned int i = 0; i < n; i++)
		if (!memcmp(want[i].raw, g->raw, 16))
			return true;
	return false;
}

bool device_set_gids(struct srd_daemon *d, struct srd_device *dev,
		     const union ibv_gid *want, unsigned int n, bool notify_ctx)
{
	struct srd_port *p = &dev->port;
	bool changed = false;
	uint32_t count = 0;

	for (int i = 0; i < SRD_MAX_GIDS; i++) {
		if (p->gid_valid[i] && !wanted(want, n, &p->gid[i])) {
			p->gid_valid[i] = false;
			memset(&p->gid[i], 0, sizeof(p->gid[i]));
			changed = true;
		}
	}
	for (unsigned int k = 0; k < n; k++) {
		int slot;

		if (gid_find(p, &want[k]) >= 0)
			continue;
		for (slot = 0; slot < SRD_MAX_GIDS; slot++)
			if (!p->gid_valid[slot])
				break;
		if (slot == SRD_MAX_GIDS) {
			srd_log(SRD_LOG_WARN,
				"%s: GID table full, %u addresses left out",
				dev->name, n - k);
			break;
		}
		p->gid[slot] = want[k];
		p->gid_valid[slot] = true;
		changed = true;
	}
	for (int i = 0; i < SRD_MAX_GIDS; i++)
		count += p->gid_valid[i];
	p->gid_count = count;
	if (!changed)
		return false;
	paths_changed(d);
	if (notify_ctx)
		device_event(d, dev, IBV_EVENT_GID_CHANGE);
	notify(d, dev, SRD_DEV_GIDS);
	return true;
}

void device_set_port(struct srd_daemon *d, struct srd_device *dev, bool up,
		     uint32_t netdev_mtu, bool notify_ctx)
{
	struct srd_port *p = &dev->port;
	enum ibv_port_state st = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	enum ibv_mtu mtu = device_mtu_for_netdev(netdev_mtu);
	bool changed = false;

	if (p->netdev_mtu != netdev_mtu || p->active_mtu != mtu) {
		srd_log(SRD_LOG_INFO, "%s: netdev mtu %u, active mtu %u",
			dev->name, netdev_mtu, 128u << mtu);
		p->netdev_mtu = netdev_mtu;
		p->active_mtu = mtu;
		paths_changed(d);
		changed = true;
	}
	if (p->state != st) {
		srd_log(SRD_LOG_INFO, "%s: port 1 %s", dev->name,
			up ? "ACTIVE" : "DOWN");
		if (p->state == IBV_PORT_ACTIVE)
			link_of(dev)->link_downed++;
		p->state = st;
		changed = true;
		if (notify_ctx)
			device_event(d, dev,
				     up ? IBV_EVENT_PORT_ACTIVE
					: IBV_EVENT_PORT_ERR);
	}
	if (changed)
		notify(d, dev, SRD_DEV_PORT);
}

uint32_t device_phys_state(const struct srd_device *dev, bool admin_up)
{
	if (dev->port.state == IBV_PORT_ACTIVE)
		return SRD_PHYS_STATE_LINK_UP;
	return admin_up ? SRD_PHYS_STATE_POLLING : SRD_PHYS_STATE_DISABLED;
}

void device_remove(struct srd_daemon *d, struct srd_device *dev)
{
	struct srd_link *l = link_of(dev);

	if (l->removed)
		return;
	srd_log(SRD_LOG_INFO, "device %s on %s removed", dev->name,
		dev->netdev);
	notify(d, dev, SRD_DEV_REMOVED);
	list_del(&dev->node);
	list_add_tail(&removed, &dev->node);
	l->removed = true;
	/* Nothing reaches it any more, and it reaches nothing. */
	memset(dev->port.gid, 0, sizeof(dev->port.gid));
	memset(dev->port.gid_valid, 0, sizeof(dev->port.gid_valid));
	dev->port.gid_count = 0;
	dev->port.state = IBV_PORT_DOWN;
	paths_changed(d);
	device_event(d, dev, IBV_EVENT_DEVICE_FATAL);
	list_for_each (&d->qps, it) {
		struct srd_qp *qp = list_entry(it, struct srd_qp, node);

		if (qp->dev == dev)
			qp_enter_error(qp, -1);
	}
}

static bool device_in_use(struct srd_daemon *d, const struct srd_device *dev)
{
	if (device_contexts(d, dev) || device_qps(d, dev))
		return true;
	for (uint32_t i = d->mrs.first; i < table_end(&d->mrs); i++) {
		const struct srd_mr *mr = table_get(&d->mrs, i);

		if (mr && mr->dev == dev)
			return true;
	}
	return false;
}

void device_reap(struct srd_daemon *d)
{
	list_for_each (&removed, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (link_of(dev)->d != d || device_in_use(d, dev))
			continue;
		list_del(&dev->node);
		free(link_of(dev));
	}
}

/* The daemon's end: the other parts have let go of their devices in
 * their own teardown, so nobody is notified. */
void devices_fini(struct srd_daemon *d)
{
	links_fini(d);
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		list_del(it);
		free(link_of(dev));
	}
	list_for_each (&removed, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (link_of(dev)->d != d)
			continue;
		list_del(it);
		free(link_of(dev));
	}
	next_index = 0;
}

struct srd_device *device_by_index(struct srd_daemon *d, uint32_t index)
{
	list_for_each (&d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (dev->index == index)
			return dev;
	}
	return NULL;
}

uint32_t device_count(struct srd_daemon *d)
{
	uint32_t n = 0;

	list_for_each (&d->devices, it)
		n++;
	return n;
}

bool device_gid_valid(const struct srd_device *dev, uint32_t index)
{
	return index < SRD_MAX_GIDS && dev->port.gid_valid[index];
}

void device_announce(struct srd_daemon *d, struct srd_device *dev)
{
	link_of(dev)->announced = true;
	notify(d, dev, SRD_DEV_ADDED);
}

void device_notifier_add(struct srd_dev_notifier *n)
{
	list_add_tail(&notifiers, &n->node);
}

void device_notifier_del(struct srd_dev_notifier *n)
{
	list_del(&n->node);
}
