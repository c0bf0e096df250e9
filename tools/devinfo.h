/* SPDX-License-Identifier: MIT */
/* ibv_devinfo's names for attribute values and its capability listings. */
#ifndef SOFTRDMA_TOOLS_DEVINFO_H
#define SOFTRDMA_TOOLS_DEVINFO_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

const char *dvi_guid_str(__be64 guid, char *str, size_t len);
const char *dvi_transport_str(enum ibv_transport_type t);
const char *dvi_port_state_str(enum ibv_port_state s);
const char *dvi_phys_state_str(uint8_t s);
const char *dvi_atomic_cap_str(enum ibv_atomic_cap a);
const char *dvi_mtu_str(enum ibv_mtu mtu);
const char *dvi_width_str(uint8_t width);
const char *dvi_speed_str(uint8_t speed);
const char *dvi_vl_str(uint8_t vl);
const char *dvi_link_layer_str(uint8_t ll);

void dvi_print_device_cap_flags(uint32_t flags);
void dvi_print_odp_caps(const struct ibv_device_attr_ex *a);
void dvi_print_device_cap_flags_ex(uint64_t flags);
void dvi_print_tm_caps(const struct ibv_tm_caps *caps);
void dvi_print_tso_caps(const struct ibv_tso_caps *caps);
void dvi_print_rss_caps(const struct ibv_rss_caps *caps);
void dvi_print_cq_moderation_caps(const struct ibv_cq_moderation_caps *c);
void dvi_print_packet_pacing_caps(const struct ibv_packet_pacing_caps *c);
void dvi_print_raw_packet_caps(uint32_t caps);

/* Exported by libibverbs since IBVERBS_1.0 but declared only in
 * rdma-core's provider header (driver.h), which users do not include. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

#endif
