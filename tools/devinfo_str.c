/* SPDX-License-Identifier: MIT */
/* Names ibv_devinfo prints for attribute values, spelled as rdma-core 44
 * spells them (scripts grep for them). */
#include <endian.h>
#include <stdio.h>

#include "devinfo.h"

const char *dvi_guid_str(__be64 guid, char *str, size_t len)
{
	uint64_t g = be64toh(guid);

	snprintf(str, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
	return str;
}

const char *dvi_transport_str(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB:
		return "InfiniBand";
	case IBV_TRANSPORT_IWARP:
		return "iWARP";
	case IBV_TRANSPORT_USNIC:
		return "usNIC";
	case IBV_TRANSPORT_USNIC_UDP:
		return "usNIC UDP";
	case IBV_TRANSPORT_UNSPECIFIED:
		return "unspecified";
	default:
		return "invalid transport";
	}
}

const char *dvi_port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN:
		return "PORT_DOWN";
	case IBV_PORT_INIT:
		return "PORT_INIT";
	case IBV_PORT_ARMED:
		return "PORT_ARMED";
	case IBV_PORT_ACTIVE:
		return "PORT_ACTIVE";
	default:
		return "invalid state";
	}
}

const char *dvi_phys_state_str(uint8_t s)
{
	switch (s) {
	case 1:
		return "SLEEP";
	case 2:
		return "POLLING";
	case 3:
		return "DISABLED";
	case 4:
		return "PORT_CONFIGURATION TRAINNING";
	case 5:
		return "LINK_UP";
	case 6:
		return "LINK_ERROR_RECOVERY";
	case 7:
		return "PHY TEST";
	default:
		return "invalid physical state";
	}
}

const char *dvi_atomic_cap_str(enum ibv_atomic_cap a)
{
	switch (a) {
	case IBV_ATOMIC_NONE:
		return "ATOMIC_NONE";
	case IBV_ATOMIC_HCA:
		return "ATOMIC_HCA";
	case IBV_ATOMIC_GLOB:
		return "ATOMIC_GLOB";
	default:
		return "invalid atomic capability";
	}
}

const char *dvi_mtu_str(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return "256";
	case IBV_MTU_512:
		return "512";
	case IBV_MTU_1024:
		return "1024";
	case IBV_MTU_2048:
		return "2048";
	case IBV_MTU_4096:
		return "4096";
	default:
		return "invalid MTU";
	}
}

const char *dvi_width_str(uint8_t width)
{
	switch (width) {
	case 1:
		return "1";
	case 2:
		return "4";
	case 4:
		return "8";
	case 8:
		return "12";
	case 16:
		return "2";
	default:
		return "invalid width";
	}
}

const char *dvi_speed_str(uint8_t speed)
{
	switch (speed) {
	case 1:
		return "2.5 Gbps";
	case 2:
		return "5.0 Gbps";
	case 4:
	case 8:
		return "10.0 Gbps";
	case 16:
		return "14.0 Gbps";
	case 32:
		return "25.0 Gbps";
	case 64:
		return "50.0 Gbps";
	case 128:
		return "100.0 Gbps";
	default:
		return "invalid speed";
	}
}

const char *dvi_vl_str(uint8_t vl)
{
	switch (vl) {
	case 1:
		return "1";
	case 2:
		return "2";
	case 3:
		return "4";
	case 4:
		return "8";
	case 5:
		return "15";
	default:
		return "invalid value";
	}
}

const char *dvi_link_layer_str(uint8_t ll)
{
	switch (ll) {
	case IBV_LINK_LAYER_UNSPECIFIED:
		return "Unspecified";
	case IBV_LINK_LAYER_INFINIBAND:
		return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet";
	default:
		return "Unknown";
	}
}
