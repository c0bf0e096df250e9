/* SPDX-License-Identifier: MIT */
/*
 * `softrdma statistic`: counters per device and port, and per QP, as
 * `rdma statistic show` prints them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

static void stat_usage(FILE *f)
{
	fprintf(f, "Usage: softrdma statistic [show] [link DEV[/PORT]]\n"
		   "       softrdma statistic show qp QPN\n");
}

/* The counters of a reply, in order. */
static void show_counters(const struct srd_admin_stat_rep *rep, size_t got)
{
	uint32_t max = (uint32_t)((got - sizeof(*rep)) / sizeof(rep->c[0]));

	for (uint32_t i = 0; i < rep->count && i < max; i++) {
		char name[SRD_COUNTER_NAME_MAX + 1],
			tfmt[SRD_COUNTER_NAME_MAX + 8];

		memcpy(name, rep->c[i].name, SRD_COUNTER_NAME_MAX);
		name[SRD_COUNTER_NAME_MAX] = '\0';
		/* Names are the daemon's: keep "%" out of the text format. */
		if (strchr(name, '%'))
			continue;
		snprintf(tfmt, sizeof(tfmt), " %s %%s", name);
		out_uint(name, tfmt, rep->c[i].value);
	}
}

static int show_dev(const struct dev_list *l,
		    const struct srd_admin_dev_info *di)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_admin_stat_dev_req req = { .dev_index = di->index };
	const struct srd_admin_stat_rep *rep = (const void *)buf;
	char name[SRD_DEV_NAME_MAX + 8];
	size_t got;
	int err;

	err = conn_cmd(SRD_ADMIN_STAT_DEV, &req, sizeof(req), buf, sizeof(buf),
		       &got);
	if (err == -ENODEV)
		return 0; /* gone since the listing */
	if (!err && got < sizeof(*rep))
		err = -EPROTO;
	if (err)
		return err;
	snprintf(name, sizeof(name), "%s/1", di->name);
	out_obj_open();
	out_uint("ifindex", NULL, di->index);
	out_str("ifname", NULL, di->name);
	out_str(NULL, "link %s", name);
	out_uint("port", NULL, 1);
	show_counters(rep, got);
	out_obj_close();
	return 0;
}

static int show_links(int argc, char **argv)
{
	if (argc == 1 || argc > 2 || (argc == 2 && strcmp(argv[0], "link")))
		return usage_error("statistic show: expected \"link DEV\" or "
				   "\"qp QPN\"");
	return devs_show_each(argc == 2 ? argv[1] : NULL, show_dev,
			      "reading counters");
}

static int show_qp(int argc, char **argv)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_admin_stat_qp_req req = { 0 };
	const struct srd_admin_stat_rep *rep = (const void *)buf;
	char name[SRD_DEV_NAME_MAX + 8];
	struct dev_list l;
	size_t got;
	int err;

	if (argc != 1)
		return usage_error(argc ? "statistic show qp: too many "
					  "arguments"
					: "statistic show qp: missing QPN");
	if (!parse_u32(argv[0], &req.qpn))
		return usage_error("statistic show qp: bad QPN \"%s\"",
				   argv[0]);
	if (conn_open() || devs_fetch(&l))
		return EXIT_FAILED;
	err = conn_cmd(SRD_ADMIN_STAT_QP, &req, sizeof(req), buf, sizeof(buf),
		       &got);
	if (!err && got < sizeof(*rep))
		err = -EPROTO;
	if (err) {
		devs_free(&l);
		if (err == -ENOENT)
			return fail("no QP %u", req.qpn);
		return fail_errno(err, "reading counters");
	}
	snprintf(name, sizeof(name), "%s/1", devs_name(&l, rep->dev_index));
	out_begin();
	out_obj_open();
	out_uint("ifindex", NULL, rep->dev_index);
	out_str("ifname", NULL, devs_name(&l, rep->dev_index));
	out_str(NULL, "link %s ", name);
	out_uint("port", NULL, 1);
	out_uint("lqpn", "lqpn %s ", rep->qpn);
	out_owner(rep->pid);
	out_text("\n   ");
	show_counters(rep, got);
	out_obj_close();
	out_end();
	devs_free(&l);
	return EXIT_OK;
}

int cmd_statistic(int argc, char **argv)
{
	if (argc && matches(argv[0], "help")) {
		stat_usage(stdout);
		return EXIT_OK;
	}
	if (argc && !matches(argv[0], "show") && !matches(argv[0], "list")) {
		stat_usage(stderr);
		return usage_error("statistic: unknown command \"%s\"",
				   argv[0]);
	}
	if (argc >= 2 && !strcmp(argv[1], "qp"))
		return show_qp(argc - 2, argv + 2);
	return show_links(argc ? argc - 1 : 0, argv + (argc ? 1 : 0));
}
