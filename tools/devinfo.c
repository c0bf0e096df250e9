/* SPDX-License-Identifier: MIT */
/*
 * ibv_devinfo: prints device and port attributes.  Options, layout and
 * exit codes are rdma-core 44's: 1 the device cannot be opened, 2 it cannot
 * be queried, 3 it cannot be closed, 4 no such port (or'ed over devices);
 * 255 for a bad option or a device that does not exist.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devinfo.h"

static int verbose;

/* An unset GID table slot: devinfo looks only at the interface id. */
static int dvi_null_gid(const union ibv_gid *gid)
{
	int i;

	for (i = 8; i < 16; i++)
		if (gid->raw[i])
			return 0;
	return 1;
}

static void dvi_print_gid(const union ibv_gid *gid, int i,
			  const struct ibv_gid_entry *e, int have_type, int ll)
{
	char str[INET6_ADDRSTRLEN];
	const char *type = "";
	const uint8_t *r = gid->raw;

	if (!have_type)
		return; /* rdma-core prints nothing for an unknown type */
	if (ll == IBV_LINK_LAYER_ETHERNET)
		type = e->gid_type == IBV_GID_TYPE_ROCE_V2 ? ", RoCE v2"
							   : ", RoCE v1";
	if (e->gid_type == IBV_GID_TYPE_ROCE_V2) {
		inet_ntop(AF_INET6, r, str, sizeof(str));
		printf("\t\t\tGID[%3d]:\t\t%s%s\n", i, str, type);
		return;
	}
	printf("\t\t\tGID[%3d]:\t\t%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
	       "%02x%02x:%02x%02x:%02x%02x:%02x%02x%s\n",
	       i, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
	       r[10], r[11], r[12], r[13], r[14], r[15], type);
}

static int dvi_print_gids(struct ibv_context *ctx,
			  const struct ibv_port_attr *pa, uint32_t port)
{
	struct ibv_gid_entry e;
	union ibv_gid gid;
	int i, have_type;

	for (i = 0; i < pa->gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, port, i, &gid)) {
			fprintf(stderr,
				"Failed to query gid to port %u, index %d\n",
				port, i);
			return 1;
		}
		if (dvi_null_gid(&gid))
			continue;
		memset(&e, 0, sizeof(e));
		have_type = !ibv_query_gid_ex(ctx, port, i, &e, 0) &&
			    e.gid_type <= IBV_GID_TYPE_ROCE_V2;
		dvi_print_gid(&gid, i, &e, have_type, pa->link_layer);
	}
	return 0;
}

/* rdma-core prints the device's board_id when its sysfs has one. */
static void dvi_print_board_id(struct ibv_device *dev)
{
	char buf[256];

	if (ibv_read_sysfs_file(dev->ibdev_path, "board_id", buf, sizeof(buf)) >
	    0)
		printf("\tboard_id:\t\t\t%s\n", buf);
}

static void dvi_print_device_verbose(struct ibv_context *ctx,
				     const struct ibv_device_attr_ex *ax)
{
	const struct ibv_device_attr *a = &ax->orig_attr;

	printf("\tmax_mr_size:\t\t\t0x%llx\n",
	       (unsigned long long)a->max_mr_size);
	printf("\tpage_size_cap:\t\t\t0x%llx\n",
	       (unsigned long long)a->page_size_cap);
	printf("\tmax_qp:\t\t\t\t%d\n", a->max_qp);
	printf("\tmax_qp_wr:\t\t\t%d\n", a->max_qp_wr);
	printf("\tdevice_cap_flags:\t\t0x%08x\n", a->device_cap_flags);
	dvi_print_device_cap_flags(a->device_cap_flags);
	printf("\tmax_sge:\t\t\t%d\n", a->max_sge);
	printf("\tmax_sge_rd:\t\t\t%d\n", a->max_sge_rd);
	printf("\tmax_cq:\t\t\t\t%d\n", a->max_cq);
	printf("\tmax_cqe:\t\t\t%d\n", a->max_cqe);
	printf("\tmax_mr:\t\t\t\t%d\n", a->max_mr);
	printf("\tmax_pd:\t\t\t\t%d\n", a->max_pd);
	printf("\tmax_qp_rd_atom:\t\t\t%d\n", a->max_qp_rd_atom);
	printf("\tmax_ee_rd_atom:\t\t\t%d\n", a->max_ee_rd_atom);
	printf("\tmax_res_rd_atom:\t\t%d\n", a->max_res_rd_atom);
	printf("\tmax_qp_init_rd_atom:\t\t%d\n", a->max_qp_init_rd_atom);
	printf("\tmax_ee_init_rd_atom:\t\t%d\n", a->max_ee_init_rd_atom);
	printf("\tatomic_cap:\t\t\t%s (%d)\n",
	       dvi_atomic_cap_str(a->atomic_cap), a->atomic_cap);
	printf("\tmax_ee:\t\t\t\t%d\n", a->max_ee);
	printf("\tmax_rdd:\t\t\t%d\n", a->max_rdd);
	printf("\tmax_mw:\t\t\t\t%d\n", a->max_mw);
	printf("\tmax_raw_ipv6_qp:\t\t%d\n", a->max_raw_ipv6_qp);
	printf("\tmax_raw_ethy_qp:\t\t%d\n", a->max_raw_ethy_qp);
	printf("\tmax_mcast_grp:\t\t\t%d\n", a->max_mcast_grp);
	printf("\tmax_mcast_qp_attach:\t\t%d\n", a->max_mcast_qp_attach);
	printf("\tmax_total_mcast_qp_attach:\t%d\n",
	       a->max_total_mcast_qp_attach);
	printf("\tmax_ah:\t\t\t\t%d\n", a->max_ah);
	printf("\tmax_fmr:\t\t\t%d\n", a->max_fmr);
	if (a->max_fmr)
		printf("\tmax_map_per_fmr:\t\t%d\n", a->max_map_per_fmr);
	printf("\tmax_srq:\t\t\t%d\n", a->max_srq);
	if (a->max_srq) {
		printf("\tmax_srq_wr:\t\t\t%d\n", a->max_srq_wr);
		printf("\tmax_srq_sge:\t\t\t%d\n", a->max_srq_sge);
	}
	printf("\tmax_pkeys:\t\t\t%d\n", a->max_pkeys);
	printf("\tlocal_ca_ack_delay:\t\t%d\n", a->local_ca_ack_delay);

	dvi_print_odp_caps(ax);
	if (ax->completion_timestamp_mask)
		printf("\tcompletion timestamp_mask:\t\t\t0x%016" PRIx64 "\n",
		       ax->completion_timestamp_mask);
	else
		printf("\tcompletion_timestamp_mask not supported\n");
	if (ax->hca_core_clock)
		printf("\thca_core_clock:\t\t\t%" PRIu64 "kHZ\n",
		       ax->hca_core_clock);
	else
		printf("\tcore clock not supported\n");
	if (ax->raw_packet_caps)
		dvi_print_raw_packet_caps(ax->raw_packet_caps);

	printf("\tdevice_cap_flags_ex:\t\t0x%" PRIX64 "\n",
	       ax->device_cap_flags_ex);
	dvi_print_device_cap_flags_ex(ax->device_cap_flags_ex);
	dvi_print_tso_caps(&ax->tso_caps);
	dvi_print_rss_caps(&ax->rss_caps);
	printf("\tmax_wq_type_rq:\t\t\t%u\n", ax->max_wq_type_rq);
	dvi_print_packet_pacing_caps(&ax->packet_pacing_caps);
	dvi_print_tm_caps(&ax->tm_caps);
	dvi_print_cq_moderation_caps(&ax->cq_mod_caps);
	if (ax->max_dm_size)
		printf("\tmaximum available device memory:\t%" PRIu64 "Bytes\n"
		       "\n",
		       ax->max_dm_size);
	printf("\tnum_comp_vectors:\t\t%d\n", ctx->num_comp_vectors);
}

static void dvi_print_port_verbose(struct ibv_device *dev,
				   const struct ibv_port_attr *pa)
{
	printf("\t\t\tmax_msg_sz:\t\t0x%x\n", pa->max_msg_sz);
	printf("\t\t\tport_cap_flags:\t\t0x%08x\n", pa->port_cap_flags);
	printf("\t\t\tport_cap_flags2:\t0x%04x\n", pa->port_cap_flags2);
	printf("\t\t\tmax_vl_num:\t\t%s (%d)\n", dvi_vl_str(pa->max_vl_num),
	       pa->max_vl_num);
	printf("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pa->bad_pkey_cntr);
	printf("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pa->qkey_viol_cntr);
	printf("\t\t\tsm_sl:\t\t\t%d\n", pa->sm_sl);
	printf("\t\t\tpkey_tbl_len:\t\t%d\n", pa->pkey_tbl_len);
	printf("\t\t\tgid_tbl_len:\t\t%d\n", pa->gid_tbl_len);
	printf("\t\t\tsubnet_timeout:\t\t%d\n", pa->subnet_timeout);
	printf("\t\t\tinit_type_reply:\t%d\n", pa->init_type_reply);
	printf("\t\t\tactive_width:\t\t%sX (%d)\n",
	       dvi_width_str(pa->active_width), pa->active_width);
	printf("\t\t\tactive_speed:\t\t%s (%d)\n",
	       dvi_speed_str(pa->active_speed), pa->active_speed);
	if (dev->transport_type == IBV_TRANSPORT_IB)
		printf("\t\t\tphys_state:\t\t%s (%d)\n",
		       dvi_phys_state_str(pa->phys_state), pa->phys_state);
}

static int dvi_print_ports(struct ibv_device *dev, struct ibv_context *ctx,
			   unsigned int nports, unsigned int only)
{
	struct ibv_port_attr pa;
	unsigned int port;

	for (port = 1; port <= nports; port++) {
		if (only && port != only)
			continue;
		if (ibv_query_port(ctx, port, &pa)) {
			fprintf(stderr, "Failed to query port %u props\n",
				port);
			return 1;
		}
		printf("\t\tport:\t%u\n", port);
		printf("\t\t\tstate:\t\t\t%s (%d)\n",
		       dvi_port_state_str(pa.state), pa.state);
		printf("\t\t\tmax_mtu:\t\t%s (%d)\n", dvi_mtu_str(pa.max_mtu),
		       pa.max_mtu);
		printf("\t\t\tactive_mtu:\t\t%s (%d)\n",
		       dvi_mtu_str(pa.active_mtu), pa.active_mtu);
		printf("\t\t\tsm_lid:\t\t\t%d\n", pa.sm_lid);
		printf("\t\t\tport_lid:\t\t%d\n", pa.lid);
		printf("\t\t\tport_lmc:\t\t0x%02x\n", pa.lmc);
		printf("\t\t\tlink_layer:\t\t%s\n",
		       dvi_link_layer_str(pa.link_layer));
		if (verbose) {
			dvi_print_port_verbose(dev, &pa);
			if (dvi_print_gids(ctx, &pa, port))
				return 1;
		}
		printf("\n");
	}
	return 0;
}

static int dvi_print_device(struct ibv_device *dev, unsigned int port)
{
	struct ibv_device_attr_ex ax;
	struct ibv_context *ctx;
	char guid[32];
	int rc = 0;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		fprintf(stderr, "Failed to open device\n");
		return 1;
	}
	memset(&ax, 0, sizeof(ax));
	if (ibv_query_device_ex(ctx, NULL, &ax)) {
		fprintf(stderr, "Failed to query device props\n");
		rc = 2;
		goto out;
	}
	if (port && port > ax.orig_attr.phys_port_cnt) {
		fprintf(stderr, "Invalid port requested for device\n");
		rc = 4; /* 3 means "could not close" */
		goto out;
	}

	printf("hca_id:\t%s\n", ibv_get_device_name(dev));
	printf("\ttransport:\t\t\t%s (%d)\n",
	       dvi_transport_str(dev->transport_type), dev->transport_type);
	if (ax.orig_attr.fw_ver[0])
		printf("\tfw_ver:\t\t\t\t%.*s\n",
		       (int)sizeof(ax.orig_attr.fw_ver), ax.orig_attr.fw_ver);
	printf("\tnode_guid:\t\t\t%s\n",
	       dvi_guid_str(ax.orig_attr.node_guid, guid, sizeof(guid)));
	printf("\tsys_image_guid:\t\t\t%s\n",
	       dvi_guid_str(ax.orig_attr.sys_image_guid, guid, sizeof(guid)));
	printf("\tvendor_id:\t\t\t0x%04x\n", ax.orig_attr.vendor_id);
	printf("\tvendor_part_id:\t\t\t%d\n", ax.orig_attr.vendor_part_id);
	printf("\thw_ver:\t\t\t\t0x%X\n", ax.orig_attr.hw_ver);
	dvi_print_board_id(dev);
	printf("\tphys_port_cnt:\t\t\t%d\n", ax.orig_attr.phys_port_cnt);
	if (verbose)
		dvi_print_device_verbose(ctx, &ax);

	rc = dvi_print_ports(dev, ctx, ax.orig_attr.phys_port_cnt, port);
out:
	if (ibv_close_device(ctx)) {
		fprintf(stderr, "Failed to close device");
		rc = 3;
	}
	return rc;
}

static void dvi_usage(const char *argv0)
{
	printf("Usage: %s             print the ca attributes\n", argv0);
	printf("\n");
	printf("Options:\n");
	printf("  -d, --ib-dev=<dev>     use IB device <dev> "
	       "(default first device found)\n");
	printf("  -i, --ib-port=<port>   use port <port> of IB device "
	       "(default all ports)\n");
	printf("  -l, --list             print only the IB devices names\n");
	printf("  -v, --verbose          print all the attributes of the IB "
	       "device(s)\n");
}

static int dvi_list(void)
{
	struct ibv_device **list;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("Failed to get IB devices list");
		return -1;
	}
	printf("%d HCA%s found:\n", n, n != 1 ? "s" : "");
	for (i = 0; i < n; i++)
		printf("\t%s\n", ibv_get_device_name(list[i]));
	printf("\n");
	ibv_free_device_list(list);
	return 0;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
		{ .name = "ib-port", .has_arg = 1, .val = 'i' },
		{ .name = "list", .has_arg = 0, .val = 'l' },
		{ .name = "verbose", .has_arg = 0, .val = 'v' },
		{}
	};
	struct ibv_device **list;
	const char *devname = NULL;
	unsigned int port = 0;
	char *end;
	long v;
	int c, i, ret = 0;

	while ((c = getopt_long(argc, argv, "d:i:lv", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			devname = optarg;
			break;
		case 'i':
			v = strtol(optarg, &end, 0);
			if (v <= 0 || v > 255 || *end) {
				dvi_usage(argv[0]);
				return 1;
			}
			port = v;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'l':
			/* As rdma-core: -l lists and exits at once. */
			return dvi_list();
		default:
			dvi_usage(argv[0]);
			return -1;
		}
	}

	list = ibv_get_device_list(NULL);
	if (!list) {
		perror("Failed to get IB devices list");
		return -1;
	}
	if (devname) {
		for (i = 0; list[i]; i++)
			if (!strcmp(ibv_get_device_name(list[i]), devname))
				break;
		if (!list[i]) {
			fprintf(stderr, "IB device '%s' wasn't found\n",
				devname);
			ret = -1;
		} else {
			ret = dvi_print_device(list[i], port);
		}
	} else if (!list[0]) {
		fprintf(stderr, "No IB devices found\n");
		ret = -1;
	} else {
		for (i = 0; list[i]; i++)
			ret |= dvi_print_device(list[i], port);
	}
	ibv_free_device_list(list);
	return ret;
}
