/* SPDX-License-Identifier: MIT */
/* Names of states, types and addresses, as rdma(8) prints them. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "tools/softrdma/softrdma.h"

#define NAME(tbl, i)                                                 \
	((i) < sizeof(tbl) / sizeof((tbl)[0]) && (tbl)[i] ? (tbl)[i] \
							  : "UNKNOWN")

const char *port_state_name(uint32_t state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "NOP",
		[IBV_PORT_DOWN] = "DOWN",
		[IBV_PORT_INIT] = "INIT",
		[IBV_PORT_ARMED] = "ARMED",
		[IBV_PORT_ACTIVE] = "ACTIVE",
		[IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return NAME(names, state);
}

const char *phys_state_name(uint32_t state)
{
	static const char *const names[] = {
		[1] = "SLEEP",	  [2] = "POLLING", [3] = "DISABLED",
		[4] = "TRAINING", [5] = "LINK_UP", [6] = "ERROR_RECOVERY",
		[7] = "PHY_TEST",
	};

	return NAME(names, state);
}

const char *qp_type_name(uint32_t type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_RAW_PACKET:
		return "RAW_PACKET";
	case IBV_QPT_XRC_SEND:
		return "XRC_INI";
	case IBV_QPT_XRC_RECV:
		return "XRC_TGT";
	default:
		return "UNKNOWN";
	}
}

const char *qp_state_name(uint32_t state)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR",	   [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD",	   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return NAME(names, state);
}

const char *cm_state_name(uint32_t state)
{
	static const char *const names[] = {
		[SRD_CM_STATE_IDLE] = "IDLE",
		[SRD_CM_STATE_ADDR_QUERY] = "ADDR_QUERY",
		[SRD_CM_STATE_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[SRD_CM_STATE_ROUTE_QUERY] = "ROUTE_QUERY",
		[SRD_CM_STATE_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[SRD_CM_STATE_CONNECT] = "CONNECT",
		[SRD_CM_STATE_DISCONNECT] = "DISCONNECT",
		[SRD_CM_STATE_ADDR_BOUND] = "ADDR_BOUND",
		[SRD_CM_STATE_LISTEN] = "LISTEN",
		[SRD_CM_STATE_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
		[SRD_CM_STATE_DESTROYING] = "DESTROYING",
	};

	return NAME(names, state);
}

const char *cm_ps_name(uint32_t ps)
{
	switch (ps) {
	case 0x0002:
		return "IPOIB";
	case 0x0106:
		return "TCP";
	case 0x0111:
		return "UDP";
	case 0x013f:
		return "IB";
	default:
		return "UNKNOWN";
	}
}

uint32_t mtu_bytes(uint32_t mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

void guid_str(uint64_t be_guid, char *buf, size_t size)
{
	uint64_t g = be64toh(be_guid);

	snprintf(buf, size, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48),
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
}

void gid_str(const uint8_t raw[16], char *buf, size_t size)
{
	if (!inet_ntop(AF_INET6, raw, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

void sockaddr_str(const struct srd_admin_sockaddr *a, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->family == AF_INET) {
		inet_ntop(AF_INET, a->addr, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, a->port);
	} else if (a->family == AF_INET6) {
		inet_ntop(AF_INET6, a->addr, ip, sizeof(ip));
		snprintf(buf, size, "[%s]:%u", ip, a->port);
	} else {
		snprintf(buf, size, "-");
	}
}

bool matches(const char *arg, const char *word)
{
	size_t n = strlen(arg);

	return n && n <= strlen(word) && !strncmp(arg, word, n);
}

bool parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}
