/* SPDX-License-Identifier: MIT */
/*
 * The device model: one soft RDMA device per network interface, as rxe
 * makes one per netdev.  Port 1 is a RoCE v2 port whose GID table comes
 * from the interface's IP addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/core.h"

/*
 * No IEEE OUI is assigned to softrdma; 0xFFFFFF is what Soft-RoCE reports
 * for the same reason, so tools that key on vendor ids treat both alike.
 */
#define SRD_VENDOR_ID 0xFFFFFF
#define SRD_VENDOR_PART_ID 0x5244 /* "RD" */

/*
 * Bytes a RoCE v2 packet carries around its payload at most: IPv6 (40),
 * UDP (8), BTH (12), RETH (16), ImmDt (4), ICRC (4).  The payload MTU is
 * what is left of the netdev MTU.
 */
#define SRD_ROCE_HEADROOM (40 + 8 + 12 + 16 + 4 + 4)

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

static uint32_t netdev_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 1500;

	if (s < 0)
		return mtu;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(s, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

static void gid_add(struct srd_port *p, const uint8_t raw[16])
{
	for (uint32_t i = 0; i < p->gid_count; i++)
		if (!memcmp(p->gid[i].raw, raw, 16))
			return;
	if (p->gid_count >= SRD_MAX_GIDS)
		return;
	memcpy(p->gid[p->gid_count].raw, raw, 16);
	p->gid_valid[p->gid_count++] = true;
}

/*
 * GIDs as RoCE v2 uses them: IPv4 addresses as IPv4-mapped IPv6, then the
 * IPv6 addresses.  Also picks up the interface's MAC for the node GUID.
 */
static void scan_addresses(struct srd_device *dev, uint8_t mac[6])
{
	struct ifaddrs *ifa_list, *ifa;
	int pass;

	memset(mac, 0, 6);
	if (getifaddrs(&ifa_list))
		return;
	for (pass = 0; pass < 2; pass++) {
		for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
			uint8_t raw[16] = { 0 };
			int fam;

			if (!ifa->ifa_addr ||
			    strcmp(ifa->ifa_name, dev->netdev))
				continue;
			fam = ifa->ifa_addr->sa_family;
			if (pass == 0 && fam == AF_INET) {
				const struct sockaddr_in *sin =
					(const void *)ifa->ifa_addr;

				raw[10] = 0xff;
				raw[11] = 0xff;
				memcpy(raw + 12, &sin->sin_addr, 4);
				gid_add(&dev->port, raw);
			} else if (pass == 1 && fam == AF_INET6) {
				const struct sockaddr_in6 *sin6 =
					(const void *)ifa->ifa_addr;

				memcpy(raw, &sin6->sin6_addr, 16);
				gid_add(&dev->port, raw);
			} else if (pass == 0 && fam == AF_PACKET) {
				const struct sockaddr_ll *sll =
					(const void *)ifa->ifa_addr;

				if (sll->sll_halen == 6)
					memcpy(mac, sll->sll_addr, 6);
			}
		}
	}
	freeifaddrs(ifa_list);
}

/* EUI-64 from the MAC; for a MAC of zeros (loopback) a value derived from
 * the device name, stable across restarts, locally administered. */
static uint64_t make_guid(const char *name, const uint8_t mac[6])
{
	static const uint8_t zero[6];
	uint8_t g[8];
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t be;

	if (memcmp(mac, zero, 6)) {
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
	/* Only what is implemented: no APM, no SRQ resize, no memory
	 * windows or fast registration. */
	a->device_cap_flags =
		IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
		IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_CURR_QP_STATE_MOD;
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
	a->max_mw = 0;
	a->max_raw_ipv6_qp = 0;
	a->max_raw_ethy_qp = 0;
	a->max_mcast_grp = 0;
	a->max_mcast_qp_attach = 0;
	a->max_total_mcast_qp_attach = 0;
	a->max_ah = 65536;
	a->max_fmr = 0;
	a->max_map_per_fmr = 0;
	a->max_srq = 16384;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 27;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int device_add(struct srd_daemon *d, const char *name, const char *netdev)
{
	struct srd_device *dev;
	uint8_t mac[6];

	if (device_count(d) >= SRD_MAX_DEVICES)
		return -ENOSPC;
	if (strlen(name) >= sizeof(dev->name) ||
	    strlen(netdev) >= sizeof(dev->netdev))
		return -ENAMETOOLONG;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->index = device_count(d);
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(dev->netdev, sizeof(dev->netdev), "%s", netdev);
	scan_addresses(dev, mac);
	dev->node_guid = make_guid(name, mac);
	dev->port.state = IBV_PORT_ACTIVE;
	dev->port.max_mtu = IBV_MTU_4096;
	dev->port.netdev_mtu = netdev_mtu(netdev);
	dev->port.active_mtu = device_mtu_for_netdev(dev->port.netdev_mtu);
	fill_attr(dev);
	list_add_tail(&d->devices, &dev->node);
	srd_log(SRD_LOG_INFO, "device %s on %s: %u gids, mtu %u", dev->name,
		dev->netdev, dev->port.gid_count, dev->port.netdev_mtu);
	return 0;
}

void devices_fini(struct srd_daemon *d)
{
	list_for_each (&d->devices, it) {
		list_del(it);
		free(list_entry(it, struct srd_device, node));
	}
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
