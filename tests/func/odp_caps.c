/* SPDX-License-Identifier: MIT */
/*
 * ibv_query_device_ex reports on-demand paging as a NIC with ODP does:
 * odp_caps.general_caps IBV_ODP_SUPPORT and IBV_ODP_SUPPORT_IMPLICIT, and
 * per transport what ODP MRs take part in (every operation the transport
 * has, and SRQ receives: RC all, UC no READ or atomics, UD SEND/RECV
 * only, XRC no plain RECV).  The legacy query is unchanged, and a
 * truncated ibv_device_attr_ex gets only what fits.
 */
#include <stddef.h>

#include "t_util.h"

int main(void)
{
	const uint32_t all = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			     IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	struct ibv_device_attr_ex ax, small;
	struct t_dev d;

	t_init("odp_caps");
	t_dev_open(&d);
	memset(&ax, 0xff, sizeof(ax));
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	T_EQ(ax.odp_caps.general_caps,
	     IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	T_EQ(ax.odp_caps.per_transport_caps.rc_odp_caps, all);
	T_EQ(ax.odp_caps.per_transport_caps.uc_odp_caps,
	     IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV);
	T_EQ(ax.odp_caps.per_transport_caps.ud_odp_caps,
	     IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		     IBV_ODP_SUPPORT_SRQ_RECV);
	T_EQ(ax.xrc_odp_caps, all & ~(uint32_t)IBV_ODP_SUPPORT_RECV);
	T_EQ(ax.orig_attr.max_qp, d.attr.max_qp);
	T_EQ(ax.orig_attr.device_cap_flags, d.attr.device_cap_flags);

	/* A caller built against an older ibv_device_attr_ex. */
	memset(&small, 0xee, sizeof(small));
	T_OK(ibv_query_device_ex(d.ctx, NULL, &small));
	T_EQ(small.odp_caps.general_caps, ax.odp_caps.general_caps);
	t_dev_close(&d);
	return 0;
}
