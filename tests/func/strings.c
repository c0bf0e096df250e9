/* SPDX-License-Identifier: MIT */
/*
 * The string functions return rdma-core 44's exact strings, "unknown"
 * out of range.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	static const char *const wc[] = {
		"success",
		"local length error",
		"local QP operation error",
		"local EE context operation error",
		"local protection error",
		"Work Request Flushed Error",
		"memory management operation error",
		"bad response error",
		"local access error",
		"remote invalid request error",
		"remote access error",
		"remote operation error",
		"transport retry counter exceeded",
		"RNR retry counter exceeded",
		"local RDD violation error",
		"remote invalid RD request",
		"aborted error",
		"invalid EE context number",
		"invalid EE context state",
		"fatal error",
		"response timeout error",
		"general error",
		"TM error",
		"TM software rendezvous",
	};
	static const char *const ev[] = {
		"CQ error",
		"local work queue catastrophic error",
		"invalid request local work queue error",
		"local access violation work queue error",
		"communication established",
		"send queue drained",
		"path migrated",
		"path migration request error",
		"local catastrophic error",
		"port active",
		"port error",
		"LID change",
		"P_Key change",
		"SM change",
		"SRQ catastrophic error",
		"SRQ limit reached",
		"last WQE reached",
		"client reregistration",
		"GID table change",
		"WQ fatal",
	};
	static const char *const node[] = {
		"unknown",	     "InfiniBand channel adapter",
		"InfiniBand switch", "InfiniBand router",
		"iWARP NIC",	     "usNIC",
		"usNIC UDP",	     "unspecified",
	};
	static const char *const port[] = {
		"no state change (NOP)", "down", "init", "armed", "active",
		"active defer",
	};
	int i;

	t_init("strings");
	T_EQ(IBV_WC_TM_RNDV_INCOMPLETE + 1, sizeof(wc) / sizeof(wc[0]));
	T_EQ(IBV_EVENT_WQ_FATAL + 1, sizeof(ev) / sizeof(ev[0]));
	for (i = 0; i <= IBV_WC_TM_RNDV_INCOMPLETE; i++)
		T_STR_EQ(ibv_wc_status_str((enum ibv_wc_status)i), wc[i]);
	T_STR_EQ(ibv_wc_status_str((enum ibv_wc_status)(i)), "unknown");
	T_STR_EQ(ibv_wc_status_str((enum ibv_wc_status)1000), "unknown");

	for (i = 0; i <= IBV_EVENT_WQ_FATAL; i++)
		T_STR_EQ(ibv_event_type_str((enum ibv_event_type)i), ev[i]);
	T_STR_EQ(ibv_event_type_str((enum ibv_event_type)i), "unknown");

	for (i = 0; i <= IBV_NODE_UNSPECIFIED; i++)
		T_STR_EQ(ibv_node_type_str((enum ibv_node_type)i), node[i]);
	T_STR_EQ(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown");
	T_STR_EQ(ibv_node_type_str((enum ibv_node_type)(i)), "unknown");

	for (i = 0; i <= IBV_PORT_ACTIVE_DEFER; i++)
		T_STR_EQ(ibv_port_state_str((enum ibv_port_state)i), port[i]);
	T_STR_EQ(ibv_port_state_str((enum ibv_port_state)i), "unknown");
	t_pass();
}
