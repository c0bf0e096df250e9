/* SPDX-License-Identifier: MIT */
/* ibv_devinfo -v: capability flag listings, one flag name a line, in
 * rdma-core 44's order and words. */
#include <inttypes.h>
#include <stdio.h>

#include "devinfo.h"

#define FLAG_INDENT "\t\t\t\t\t"

struct dvi_flag {
	uint64_t bit;
	const char *name;
};

/* Prints the name of every set flag, then any bits the table lacks. */
static void dvi_print_flags(uint64_t v, const struct dvi_flag *t, size_t n,
			    uint64_t known_extra)
{
	uint64_t known = known_extra;
	size_t i;

	for (i = 0; i < n; i++) {
		known |= t[i].bit;
		if (v & t[i].bit)
			printf(FLAG_INDENT "%s\n", t[i].name);
	}
	if (v & ~known)
		printf(FLAG_INDENT "Unknown flags: 0x%" PRIX64 "\n",
		       v & ~known);
}

#define NFLAGS(t) (sizeof(t) / sizeof((t)[0]))

void dvi_print_device_cap_flags(uint32_t flags)
{
	static const struct dvi_flag t[] = {
		{ IBV_DEVICE_RESIZE_MAX_WR, "RESIZE_MAX_WR" },
		{ IBV_DEVICE_BAD_PKEY_CNTR, "BAD_PKEY_CNTR" },
		{ IBV_DEVICE_BAD_QKEY_CNTR, "BAD_QKEY_CNTR" },
		{ IBV_DEVICE_RAW_MULTI, "RAW_MULTI" },
		{ IBV_DEVICE_AUTO_PATH_MIG, "AUTO_PATH_MIG" },
		{ IBV_DEVICE_CHANGE_PHY_PORT, "CHANGE_PHY_PORT" },
		{ IBV_DEVICE_UD_AV_PORT_ENFORCE, "UD_AV_PORT_ENFORCE" },
		{ IBV_DEVICE_CURR_QP_STATE_MOD, "CURR_QP_STATE_MOD" },
		{ IBV_DEVICE_SHUTDOWN_PORT, "SHUTDOWN_PORT" },
		{ IBV_DEVICE_INIT_TYPE, "INIT_TYPE" },
		{ IBV_DEVICE_PORT_ACTIVE_EVENT, "PORT_ACTIVE_EVENT" },
		{ IBV_DEVICE_SYS_IMAGE_GUID, "SYS_IMAGE_GUID" },
		{ IBV_DEVICE_RC_RNR_NAK_GEN, "RC_RNR_NAK_GEN" },
		{ IBV_DEVICE_SRQ_RESIZE, "SRQ_RESIZE" },
		{ IBV_DEVICE_N_NOTIFY_CQ, "N_NOTIFY_CQ" },
		{ IBV_DEVICE_MEM_WINDOW, "MEM_WINDOW" },
		{ IBV_DEVICE_UD_IP_CSUM, "UD_IP_CSUM" },
		{ IBV_DEVICE_XRC, "XRC" },
		{ IBV_DEVICE_MEM_MGT_EXTENSIONS, "MEM_MGT_EXTENSIONS" },
		{ IBV_DEVICE_MEM_WINDOW_TYPE_2A, "MEM_WINDOW_TYPE_2A" },
		{ IBV_DEVICE_MEM_WINDOW_TYPE_2B, "MEM_WINDOW_TYPE_2B" },
		{ IBV_DEVICE_RC_IP_CSUM, "RC_IP_CSUM" },
		{ IBV_DEVICE_RAW_IP_CSUM, "RAW_IP_CSUM" },
		{ IBV_DEVICE_MANAGED_FLOW_STEERING, "MANAGED_FLOW_STEERING" },
	};

	/* The 32-bit field: unknown bits above 31 cannot occur. */
	dvi_print_flags(flags, t, NFLAGS(t), ~(uint64_t)UINT32_MAX);
}

static void dvi_print_odp_trans_caps(uint32_t caps)
{
	static const struct dvi_flag t[] = {
		{ IBV_ODP_SUPPORT_SEND, "SUPPORT_SEND" },
		{ IBV_ODP_SUPPORT_RECV, "SUPPORT_RECV" },
		{ IBV_ODP_SUPPORT_WRITE, "SUPPORT_WRITE" },
		{ IBV_ODP_SUPPORT_READ, "SUPPORT_READ" },
		{ IBV_ODP_SUPPORT_ATOMIC, "SUPPORT_ATOMIC" },
		{ IBV_ODP_SUPPORT_SRQ_RECV, "SUPPORT_SRQ" },
	};

	if (!caps)
		printf(FLAG_INDENT "NO SUPPORT\n");
	else
		dvi_print_flags(caps, t, NFLAGS(t), ~(uint64_t)UINT32_MAX);
}

void dvi_print_odp_caps(const struct ibv_device_attr_ex *a)
{
	static const struct dvi_flag t[] = {
		{ IBV_ODP_SUPPORT, "ODP_SUPPORT" },
		{ IBV_ODP_SUPPORT_IMPLICIT, "ODP_SUPPORT_IMPLICIT" },
	};
	const struct ibv_odp_caps *c = &a->odp_caps;

	printf("\tgeneral_odp_caps:\n");
	dvi_print_flags(c->general_caps, t, NFLAGS(t), 0);
	printf("\trc_odp_caps:\n");
	dvi_print_odp_trans_caps(c->per_transport_caps.rc_odp_caps);
	printf("\tuc_odp_caps:\n");
	dvi_print_odp_trans_caps(c->per_transport_caps.uc_odp_caps);
	printf("\tud_odp_caps:\n");
	dvi_print_odp_trans_caps(c->per_transport_caps.ud_odp_caps);
	printf("\txrc_odp_caps:\n");
	dvi_print_odp_trans_caps(a->xrc_odp_caps);
}

void dvi_print_device_cap_flags_ex(uint64_t flags)
{
	static const struct dvi_flag t[] = {
		{ IBV_DEVICE_RAW_SCATTER_FCS, "RAW_SCATTER_FCS" },
		{ IBV_DEVICE_PCI_WRITE_END_PADDING, "PCI_WRITE_END_PADDING" },
	};

	/* The low 32 bits repeat device_cap_flags, listed already. */
	dvi_print_flags(flags & 0xffffffff00000000ULL, t, NFLAGS(t), 0);
}

void dvi_print_tm_caps(const struct ibv_tm_caps *caps)
{
	if (!caps->max_num_tags) {
		printf("\ttag matching not supported\n");
		return;
	}
	printf("\tmax_rndv_hdr_size:\t\t%u\n", caps->max_rndv_hdr_size);
	printf("\tmax_num_tags:\t\t\t%u\n", caps->max_num_tags);
	printf("\tmax_ops:\t\t\t%u\n", caps->max_ops);
	printf("\tmax_sge:\t\t\t%u\n", caps->max_sge);
	printf("\tflags:\n");
	if (caps->flags & IBV_TM_CAP_RC)
		printf(FLAG_INDENT "IBV_TM_CAP_RC\n");
}

static void dvi_print_qpts(uint32_t qpts)
{
	static const struct dvi_flag t[] = {
		{ 1 << IBV_QPT_RAW_PACKET, "SUPPORT_RAW_PACKET" },
		{ 1 << IBV_QPT_UD, "SUPPORT_UD" },
	};

	printf("\t\tsupported_qp:\n");
	dvi_print_flags(qpts, t, NFLAGS(t), ~(uint64_t)UINT32_MAX);
}

void dvi_print_tso_caps(const struct ibv_tso_caps *caps)
{
	printf("\ttso_caps:\n");
	printf("\t\tmax_tso:\t\t\t%d\n", caps->max_tso);
	if (caps->max_tso)
		dvi_print_qpts(caps->supported_qpts);
}

void dvi_print_rss_caps(const struct ibv_rss_caps *caps)
{
	printf("\trss_caps:\n");
	printf("\t\tmax_rwq_indirection_tables:\t\t\t%u\n",
	       caps->max_rwq_indirection_tables);
	printf("\t\tmax_rwq_indirection_table_size:\t\t\t%u\n",
	       caps->max_rwq_indirection_table_size);
	printf("\t\trx_hash_function:\t\t\t\t0x%x\n", caps->rx_hash_function);
	printf("\t\trx_hash_fields_mask:\t\t\t\t0x%" PRIX64 "\n",
	       caps->rx_hash_fields_mask);
	if (caps->supported_qpts)
		dvi_print_qpts(caps->supported_qpts);
}

void dvi_print_cq_moderation_caps(const struct ibv_cq_moderation_caps *c)
{
	if (!c->max_cq_count || !c->max_cq_period)
		return;
	printf("\n\tcq moderation caps:\n");
	printf("\t\tmax_cq_count:\t%u\n", c->max_cq_count);
	printf("\t\tmax_cq_period:\t%u us\n\n", c->max_cq_period);
}

void dvi_print_packet_pacing_caps(const struct ibv_packet_pacing_caps *c)
{
	printf("\tpacket_pacing_caps:\n");
	printf("\t\tqp_rate_limit_min:\t%ukbps\n", c->qp_rate_limit_min);
	printf("\t\tqp_rate_limit_max:\t%ukbps\n", c->qp_rate_limit_max);
	if (c->qp_rate_limit_max)
		dvi_print_qpts(c->supported_qpts);
}

void dvi_print_raw_packet_caps(uint32_t caps)
{
	static const struct dvi_flag t[] = {
		{ IBV_RAW_PACKET_CAP_CVLAN_STRIPPING, "C-VLAN stripping "
						      "offload" },
		{ IBV_RAW_PACKET_CAP_SCATTER_FCS, "Scatter FCS offload" },
		{ IBV_RAW_PACKET_CAP_IP_CSUM, "IP csum offload" },
		{ IBV_RAW_PACKET_CAP_DELAY_DROP, "Delay drop" },
	};

	printf("\traw packet caps:\n");
	/* rdma-core lists no unknown bits here. */
	dvi_print_flags(caps, t, NFLAGS(t), ~(uint64_t)0);
}
