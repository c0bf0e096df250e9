/* SPDX-License-Identifier: MIT */
/*
 * `softrdma link` (show, add, delete) and `softrdma dev` (show): devices
 * and their ports, as `rdma link` and `rdma dev` print them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

static void link_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma link [show] [DEV[/PORT]]\n"
		   "       softrdma link add NAME [type softrdma] netdev "
		   "IFACE\n"
		   "       softrdma link delete NAME\n");
}

static void dev_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma dev [show] [DEV]\n");
}

static void show_gids(const struct srd_admin_dev_info *di)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_admin_dev_gids_req req = { .dev_index = di->index };
	const struct srd_admin_dev_gids_rep *rep = (const void *)buf;
	size_t got;
	char s[64];

	if (conn_cmd(SRD_ADMIN_DEV_GIDS, &req, sizeof(req), buf, sizeof(buf),
		     &got) ||
	    got < sizeof(*rep))
		return;
	out_list_open("gids");
	for (uint32_t i = 0;
	     i < rep->count &&
	     sizeof(*rep) + (i + 1) * sizeof(rep->gid[0]) <= got;
	     i++) {
		const struct srd_admin_gid *g = &rep->gid[i];

		if (!g->valid)
			continue;
		gid_str(g->raw, s, sizeof(s));
		out_text("\n    ");
		out_obj_open();
		out_uint("index", "gid %s ", g->index);
		out_str("gid", "%s ", s);
		out_str("type", "%s", g->gid_type == 1 ? "RoCEv2" : "RoCEv1");
		out_obj_close();
	}
	out_list_close();
}

static int show_link(const struct dev_list *l,
		     const struct srd_admin_dev_info *di)
{
	char name[SRD_DEV_NAME_MAX + 8];

	snprintf(name, sizeof(name), "%s/1", di->name);
	out_obj_open();
	out_uint("ifindex", NULL, di->index);
	out_str("ifname", NULL, di->name);
	out_str(NULL, "link %s ", name);
	out_uint("port", NULL, 1);
	out_str("state", "state %s ", port_state_name(di->port_state));
	out_str("physical_state", "physical_state %s ",
		phys_state_name(di->phys_state));
	out_str("netdev", "netdev %s", di->netdev);
	out_uint("netdev_index", NULL, di->netdev_index);
	if (opt.details) {
		out_uint("netdev_mtu", " netdev_mtu %s", di->netdev_mtu);
		out_uint("active_mtu", " active_mtu %s",
			 mtu_bytes(di->active_mtu));
		out_uint("max_mtu", " max_mtu %s", mtu_bytes(di->max_mtu));
		out_uint("link_downed", " link_downed %s", di->link_downed);
		if (di->flags & SRD_ADMIN_DEV_F_REMOVED)
			out_bool("removed", " removed", true);
		show_gids(di);
	}
	out_obj_close();
	return 0;
}

static int link_show(int argc, char **argv)
{
	if (argc > 1)
		return usage_error("link show: too many arguments");
	return devs_show_each(argc ? argv[0] : NULL, show_link, "link show");
}

static int link_add(int argc, char **argv)
{
	struct srd_admin_link_add_req req = { 0 };
	struct srd_admin_link_add_rep rep;
	const char *name, *netdev = NULL;
	size_t got;
	int err;

	if (argc < 1)
		return usage_error("link add: missing device name");
	name = argv[0];
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return usage_error("link add: \"%s\" needs a value",
					   argv[i]);
		if (!strcmp(argv[i], "netdev")) {
			netdev = argv[i + 1];
		} else if (!strcmp(argv[i], "type")) {
			if (strcmp(argv[i + 1], "softrdma") &&
			    strcmp(argv[i + 1], "rxe"))
				return usage_error("link add: unknown type "
						   "\"%s\" "
						   "(softrdma makes softrdma "
						   "devices)",
						   argv[i + 1]);
		} else {
			return usage_error("link add: unknown keyword \"%s\"",
					   argv[i]);
		}
	}
	if (!netdev)
		return usage_error("link add: missing \"netdev IFACE\"");
	if (!*name || strlen(name) >= sizeof(req.name))
		return usage_error("link add: bad device name \"%s\"", name);
	if (!*netdev || strlen(netdev) >= 16)
		return usage_error("link add: bad interface name \"%s\"",
				   netdev);
	snprintf(req.name, sizeof(req.name), "%s", name);
	snprintf(req.netdev, sizeof(req.netdev), "%s", netdev);
	if (conn_open())
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_LINK_ADD, &req, sizeof(req), &rep, sizeof(rep),
		       &got);
	switch (err) {
	case 0:
		return EXIT_OK;
	case -EEXIST:
		return fail("device \"%s\" already exists", name);
	case -ENODEV:
		return fail("no network interface \"%s\"", netdev);
	case -EINVAL:
		return fail("bad device name \"%s\" (1 to 63 of A-Z a-z 0-9 "
			    "_ . -)",
			    name);
	case -ENOSPC:
		return fail("too many devices (at most %d)", SRD_MAX_DEVICES);
	default:
		return fail_errno(err, "link add");
	}
}

static int link_delete(int argc, char **argv)
{
	struct srd_admin_link_del_req req = { 0 };
	size_t got;
	int err;

	if (argc != 1)
		return usage_error(argc ? "link delete: too many arguments"
					: "link delete: missing device name");
	if (strlen(argv[0]) >= sizeof(req.name))
		return fail("no device \"%s\"", argv[0]);
	snprintf(req.name, sizeof(req.name), "%s", argv[0]);
	if (conn_open())
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_LINK_DEL, &req, sizeof(req), NULL, 0, &got);
	if (err == -ENODEV)
		return fail("no device \"%s\"", argv[0]);
	return err ? fail_errno(err, "link delete") : EXIT_OK;
}

int cmd_link(int argc, char **argv)
{
	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list"))
		return link_show(argc ? argc - 1 : 0, argv + (argc ? 1 : 0));
	if (matches(argv[0], "add"))
		return link_add(argc - 1, argv + 1);
	if (matches(argv[0], "delete"))
		return link_delete(argc - 1, argv + 1);
	if (matches(argv[0], "help")) {
		link_usage(stdout);
		return EXIT_OK;
	}
	link_usage(stderr);
	return usage_error("link: unknown command \"%s\"", argv[0]);
}

static int show_dev(const struct dev_list *l,
		    const struct srd_admin_dev_info *di)
{
	char g[32], sg[32];

	guid_str(di->node_guid, g, sizeof(g));
	guid_str(di->sys_image_guid, sg, sizeof(sg));
	out_obj_open();
	out_uint("ifindex", "%s: ", di->index);
	out_str("ifname", "%s: ", di->name);
	out_str("node_type", "node_type %s ", "ca");
	out_str("fw", "fw %s ", di->fw_ver);
	out_str("node_guid", "node_guid %s ", g);
	out_str("sys_image_guid", "sys_image_guid %s", sg);
	if (opt.details) {
		out_str("netdev", " netdev %s", di->netdev);
		out_uint("contexts", " contexts %s", di->contexts);
		out_uint("qps", " qps %s", di->qps);
		out_str("origin", " origin %s",
			di->flags & SRD_ADMIN_DEV_F_DEFAULT  ? "default"
			: di->flags & SRD_ADMIN_DEV_F_CONFIG ? "config"
							     : "runtime");
		if (di->flags & SRD_ADMIN_DEV_F_REMOVED)
			out_bool("removed", " removed", true);
	}
	out_obj_close();
	return 0;
}

int cmd_dev(int argc, char **argv)
{
	if (argc && matches(argv[0], "help")) {
		dev_usage(stdout);
		return EXIT_OK;
	}
	if (argc && !matches(argv[0], "show") && !matches(argv[0], "list")) {
		dev_usage(stderr);
		return usage_error("dev: unknown command \"%s\"", argv[0]);
	}
	if (argc > 2)
		return usage_error("dev show: too many arguments");
	return devs_show_each(argc == 2 ? argv[1] : NULL, show_dev, "dev show");
}
