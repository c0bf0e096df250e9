/* SPDX-License-Identifier: MIT */
/*
 * The ib_uverbs structures that rdma-core's ibv_copy_*_from_kern/_to_kern
 * convert, laid out as the kernel's uapi defines them.  librdmacm uses
 * these conversions on what the RDMA CM hands it.
 */
#ifndef SOFTRDMA_LIBIBVERBS_KERN_ABI_H
#define SOFTRDMA_LIBIBVERBS_KERN_ABI_H

#include <assert.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <infiniband/sa.h>

struct srd_kern_global_route {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t reserved;
};

struct srd_kern_ah_attr {
	struct srd_kern_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	uint8_t reserved;
};
static_assert(sizeof(struct srd_kern_ah_attr) == 32, "ib_uverbs_ah_attr");

struct srd_kern_qp_attr {
	uint32_t qp_attr_mask;
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;
	uint32_t path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	struct srd_kern_ah_attr ah_attr;
	struct srd_kern_ah_attr alt_ah_attr;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint8_t reserved[5];
};
static_assert(sizeof(struct srd_kern_qp_attr) == 144, "ib_uverbs_qp_attr");

struct srd_kern_path_rec {
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint16_t dlid; /* big endian, as the rest of the path record */
	uint16_t slid;
	uint32_t raw_traffic;
	uint32_t flow_label;
	uint32_t reversible;
	uint32_t mtu;
	uint16_t pkey;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t numb_path;
	uint8_t sl;
	uint8_t mtu_selector;
	uint8_t rate_selector;
	uint8_t rate;
	uint8_t packet_life_time_selector;
	uint8_t packet_life_time;
	uint8_t preference;
};
static_assert(sizeof(struct srd_kern_path_rec) == 64, "ib_user_path_rec");

/* rdma-core declares these with the kernel's struct names; the layouts
 * are the same, so the library defines them on its own mirrors. */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct srd_kern_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct srd_kern_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct srd_kern_path_rec *src);
void ibv_copy_path_rec_to_kern(struct srd_kern_path_rec *dst,
			       struct ibv_sa_path_rec *src);

#endif
