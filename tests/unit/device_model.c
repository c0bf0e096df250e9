/* SPDX-License-Identifier: MIT */
/*
 * The device model without a network (daemon/device/link.h, linked in): device
 * names, the node GUID from a MAC, the GID table (order, lowest free slot,
 * entries that stay never move), the active MTU from the netdev MTU, port
 * state and link_downed, notifiers, removal, and the configuration file's
 * grammar.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proto_admin.h"
#include "daemon/device/link.h"
#include "t_assert.h"

static union ibv_gid v4(uint8_t a, uint8_t b, uint8_t c, uint8_t dd)
{
	union ibv_gid g = { .raw = { [10] = 0xff,
				     [11] = 0xff,
				     [12] = a,
				     [13] = b,
				     [14] = c,
				     [15] = dd } };

	return g;
}

static union ibv_gid v6(uint8_t first, uint8_t last)
{
	union ibv_gid g = { .raw = { [0] = first, [15] = last } };

	if (first == 0xfe)
		g.raw[1] = 0x80;
	return g;
}

static bool slot_is(const struct srd_device *dev, int i, const union ibv_gid *g)
{
	return dev->port.gid_valid[i] &&
	       !memcmp(dev->port.gid[i].raw, g->raw, 16);
}

static unsigned int events[4];

static void on_event(struct srd_daemon *d, struct srd_device *dev,
		     enum srd_dev_event ev, void *arg)
{
	events[ev]++;
}

static void test_gids(struct srd_daemon *d)
{
	struct srd_device *dev;
	union ibv_gid a = v4(10, 0, 0, 1), b = v4(10, 0, 0, 2),
		      c = v4(10, 0, 0, 3), g6 = v6(0xfd, 1), ll = v6(0xfe, 1);
	union ibv_gid w1[] = { a, g6, ll }, w2[] = { a, b, g6, ll },
		      w3[] = { b, ll }, w4[] = { c, b, ll };
	struct srd_dev_notifier n = { .fn = on_event };

	device_notifier_add(&n);
	T_ASSERT(!device_create(d, "gids", "eth9", 0, NULL, 0, &dev));
	/* Not announced yet: notifiers hear nothing. */
	T_ASSERT(device_set_gids(d, dev, w1, 3, false));
	T_EQ(events[SRD_DEV_GIDS], 0);
	T_ASSERT(slot_is(dev, 0, &a) && slot_is(dev, 1, &g6) &&
		 slot_is(dev, 2, &ll));
	T_EQ(dev->port.gid_count, 3);
	device_announce(d, dev);
	T_EQ(events[SRD_DEV_ADDED], 1);
	/* Nothing new: no change, no event. */
	T_ASSERT(!device_set_gids(d, dev, w1, 3, true));
	T_EQ(events[SRD_DEV_GIDS], 0);
	/* A new address takes the lowest free slot; the rest stay. */
	T_ASSERT(device_set_gids(d, dev, w2, 4, true));
	T_EQ(events[SRD_DEV_GIDS], 1);
	T_ASSERT(slot_is(dev, 0, &a) && slot_is(dev, 1, &g6) &&
		 slot_is(dev, 2, &ll) && slot_is(dev, 3, &b));
	/* Removed addresses leave holes. */
	T_ASSERT(device_set_gids(d, dev, w3, 2, true));
	T_ASSERT(!dev->port.gid_valid[0] && !dev->port.gid_valid[1]);
	T_ASSERT(slot_is(dev, 2, &ll) && slot_is(dev, 3, &b));
	T_EQ(dev->port.gid_count, 2);
	T_ASSERT(!device_gid_valid(dev, 0) && device_gid_valid(dev, 3));
	/* And the next one fills the first hole. */
	T_ASSERT(device_set_gids(d, dev, w4, 3, true));
	T_ASSERT(slot_is(dev, 0, &c) && !dev->port.gid_valid[1]);
	T_EQ(events[SRD_DEV_GIDS], 3);
	/* More addresses than slots: the table fills, nothing breaks. */
	{
		union ibv_gid many[SRD_MAX_GIDS + 4];

		for (int i = 0; i < SRD_MAX_GIDS + 4; i++)
			many[i] = v4(10, 1, 0, (uint8_t)i);
		device_set_gids(d, dev, many, SRD_MAX_GIDS + 4, true);
		T_EQ(dev->port.gid_count, SRD_MAX_GIDS);
		T_ASSERT(slot_is(dev, 0, &many[0]));
	}
	device_remove(d, dev);
	T_EQ(events[SRD_DEV_REMOVED], 1);
	T_ASSERT(dev->port.gid_count == 0 && !device_gid_valid(dev, 0));
	device_notifier_del(&n);
}

static void test_port(struct srd_daemon *d)
{
	static const struct {
		uint32_t netdev;
		enum ibv_mtu ib;
	} mtus[] = {
		{ 65536, IBV_MTU_4096 }, { 9000, IBV_MTU_4096 },
		{ 4188, IBV_MTU_4096 },	 { 4187, IBV_MTU_2048 },
		{ 1500, IBV_MTU_1024 },	 { 1116, IBV_MTU_1024 },
		{ 1115, IBV_MTU_512 },	 { 1100, IBV_MTU_512 },
		{ 576, IBV_MTU_256 },	 { 68, IBV_MTU_256 },
	};
	struct srd_device *dev;

	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++)
		T_EQ(device_mtu_for_netdev(mtus[i].netdev), mtus[i].ib);
	T_ASSERT(!device_create(d, "port", "eth9", 0, NULL, 0, &dev));
	T_EQ(dev->port.state, IBV_PORT_DOWN);
	T_EQ(device_phys_state(dev, false), SRD_PHYS_STATE_DISABLED);
	T_EQ(device_phys_state(dev, true), SRD_PHYS_STATE_POLLING);
	device_set_port(d, dev, true, 1500, true);
	T_EQ(dev->port.state, IBV_PORT_ACTIVE);
	T_EQ(dev->port.active_mtu, IBV_MTU_1024);
	T_EQ(dev->port.max_mtu, IBV_MTU_4096);
	T_EQ(device_phys_state(dev, true), SRD_PHYS_STATE_LINK_UP);
	T_EQ(link_of(dev)->link_downed, 0);
	device_set_port(d, dev, false, 9000, true);
	T_EQ(dev->port.state, IBV_PORT_DOWN);
	T_EQ(dev->port.active_mtu, IBV_MTU_4096);
	T_EQ(link_of(dev)->link_downed, 1);
	device_set_port(d, dev, false, 9000, true);
	T_EQ(link_of(dev)->link_downed, 1);
}

static void test_names(struct srd_daemon *d)
{
	static const uint8_t mac[6] = { 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t eui[8] = { 0x00, 0xfc, 0x00, 0xff,
					0xfe, 0x00, 0x00, 0x01 };
	char long_name[SRD_DEV_NAME_MAX + 1];
	struct srd_device *dev, *dev2;
	uint32_t index;

	T_ASSERT(device_name_ok("softrdma0") && device_name_ok("a.b-c_D9"));
	T_ASSERT(!device_name_ok("") && !device_name_ok("a/b") &&
		 !device_name_ok("a b") && !device_name_ok("x%d"));
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	T_ASSERT(!device_name_ok(long_name));
	long_name[SRD_DEV_NAME_MAX - 1] = '\0';
	T_ASSERT(device_name_ok(long_name));
	T_EQ(device_create(d, "a/b", "eth9", 0, NULL, 0, &dev), -EINVAL);

	T_ASSERT(!device_create(d, "guid", "eth9", 0, mac, 0, &dev));
	T_ASSERT(!memcmp(&dev->node_guid, eui, 8));
	T_EQ(dev->attr.node_guid, dev->node_guid);
	T_EQ(device_create(d, "guid", "eth9", 0, mac, 0, &dev2), -EEXIST);
	/* The same MAC again: told apart by the name. */
	T_ASSERT(!device_create(d, "guid2", "eth9", 0, mac, 0, &dev2));
	T_NE(dev2->node_guid, dev->node_guid);
	T_PTR_EQ(device_by_name(d, "guid"), dev);
	/* Removed: unlisted, its name free, its index not reused. */
	index = dev->index;
	device_remove(d, dev);
	T_ASSERT(!device_by_name(d, "guid"));
	T_ASSERT(!device_by_index(d, index));
	T_PTR_EQ(device_by_index_any(d, index), dev);
	T_ASSERT(!device_create(d, "guid", "eth9", 0, mac, 0, &dev2));
	T_GT(dev2->index, index);
	device_reap(d); /* nothing refers to it: freed */
	T_ASSERT(!device_by_index_any(d, index));
}

static void test_config(void)
{
	static const char *const bad[] = {
		"link\n",
		"link add\n",
		"link add a/b netdev eth0\n",
		"link add x\n",
		"link add x netdev\n",
		"link add x type mlx5 netdev eth0\n",
		"link add x colour red netdev eth0\n",
		"link add x netdev eth0\nlink add x netdev eth1\n",
		"link add x netdev abcdefghijklmnopq\n",
		"route add x\n",
	};
	char path[] = "/tmp/srdcfg.XXXXXX";
	struct srd_config cfg;
	char *msg;
	size_t msglen;
	FILE *f, *err;
	int fd;

	fd = mkstemp(path);
	T_GE(fd, 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\n  link add a netdev eth0 # trailing\n"
	      "link add b type rxe netdev lo\n\tlink add c type softrdma "
	      "netdev eth1\n",
	      f);
	fclose(f);
	err = open_memstream(&msg, &msglen);
	T_EQ(config_load(path, &cfg, err), 0);
	fclose(err);
	T_EQ(msglen, 0);
	free(msg);
	T_EQ(cfg.nlinks, 3);
	if (cfg.nlinks == 3) {
		T_ASSERT(!strcmp(cfg.links[0].name, "a") &&
			 !strcmp(cfg.links[0].netdev, "eth0") &&
			 cfg.links[0].line == 3);
		T_ASSERT(!strcmp(cfg.links[1].netdev, "lo"));
		T_ASSERT(!strcmp(cfg.links[2].name, "c") &&
			 cfg.links[2].line == 5);
	}
	config_free(&cfg);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(path, "w");
		fputs(bad[i], f);
		fclose(f);
		err = open_memstream(&msg, &msglen);
		T_EQ(config_load(path, &cfg, err), -EINVAL);
		fclose(err);
		/* "PATH:LINE: why" */
		if (!strstr(msg, path) ||
		    !strstr(msg, ":1: ") == !strstr(msg, ":2: "))
			T_FAIL("\"%s\" does not name the file and one "
			       "line",
			       msg);
		free(msg);
		config_free(&cfg);
	}
	unlink(path);
	err = open_memstream(&msg, &msglen);
	T_EQ(config_load(path, &cfg, err), -ENOENT);
	fclose(err);
	free(msg);
	config_free(&cfg);
}

int main(void)
{
	static struct srd_daemon d;

	list_head_init(&d.devices);
	list_head_init(&d.clients);
	list_head_init(&d.qps);
	test_names(&d);
	test_gids(&d);
	test_port(&d);
	test_config();
	devices_fini(&d);
	t_pass();
}
