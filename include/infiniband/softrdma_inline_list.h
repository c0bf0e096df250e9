/* SPDX-License-Identifier: MIT */
/*
 * softrdma - list of the verbs that <infiniband/verbs.h> defines as static
 * inline functions.
 *
 * rdma-core implements these inside its public header, so programs built
 * against it never call a library symbol for them.  softrdma keeps them
 * inline by default for source and binary compatibility, and additionally
 * exports every one of them from its libibverbs so that
 *
 *   - programs built with SOFTRDMA_NO_INLINE_VERBS defined (see verbs.h)
 *     link against real functions, and
 *   - language bindings that cannot use C inline functions have symbols
 *     to bind to.
 *
 * SOFTRDMA_INLINE_VERBS(X) expands X(name) once per function, in the order
 * in which verbs.h defines them.  Names starting with underscores are the
 * targets of the ibv_query_port(), ibv_reg_mr() and ibv_reg_mr_iova()
 * macros; they are exported too.
 *
 * With SOFTRDMA_NO_INLINE_VERBS the header still contains each body, under
 * the name __softrdma_inl_<name>, which an implementation may call:
 *
 *	#define SOFTRDMA_NO_INLINE_VERBS
 *	#include <infiniband/verbs.h>
 *
 *	int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
 *			  struct ibv_send_wr **bad_wr)
 *	{
 *		return __softrdma_inl_ibv_post_send(qp, wr, bad_wr);
 *	}
 *
 * Not listed: __ibv_get_device_list(), which only exists when
 * RDMA_STATIC_PROVIDERS is defined and is meaningless for softrdma.
 */

#ifndef SOFTRDMA_INLINE_LIST_H
#define SOFTRDMA_INLINE_LIST_H

#define SOFTRDMA_INLINE_VERBS(X)                                               \
	/* extended QP work request builders */                                \
	X(ibv_wr_atomic_cmp_swp)                                               \
	X(ibv_wr_atomic_fetch_add)                                             \
	X(ibv_wr_bind_mw)                                                      \
	X(ibv_wr_local_inv)                                                    \
	X(ibv_wr_rdma_read)                                                    \
	X(ibv_wr_rdma_write)                                                   \
	X(ibv_wr_rdma_write_imm)                                               \
	X(ibv_wr_send)                                                         \
	X(ibv_wr_send_imm)                                                     \
	X(ibv_wr_send_inv)                                                     \
	X(ibv_wr_send_tso)                                                     \
	X(ibv_wr_set_ud_addr)                                                  \
	X(ibv_wr_set_xrc_srqn)                                                 \
	X(ibv_wr_set_inline_data)                                              \
	X(ibv_wr_set_inline_data_list)                                         \
	X(ibv_wr_set_sge)                                                      \
	X(ibv_wr_set_sge_list)                                                 \
	X(ibv_wr_start)                                                        \
	X(ibv_wr_complete)                                                     \
	X(ibv_wr_abort)                                                        \
	X(ibv_wr_atomic_write)                                                 \
	/* extended CQ polling and completion accessors */                     \
	X(ibv_cq_ex_to_cq)                                                     \
	X(ibv_start_poll)                                                      \
	X(ibv_next_poll)                                                       \
	X(ibv_end_poll)                                                        \
	X(ibv_wc_read_opcode)                                                  \
	X(ibv_wc_read_vendor_err)                                              \
	X(ibv_wc_read_byte_len)                                                \
	X(ibv_wc_read_imm_data)                                                \
	X(ibv_wc_read_invalidated_rkey)                                        \
	X(ibv_wc_read_qp_num)                                                  \
	X(ibv_wc_read_src_qp)                                                  \
	X(ibv_wc_read_wc_flags)                                                \
	X(ibv_wc_read_slid)                                                    \
	X(ibv_wc_read_sl)                                                      \
	X(ibv_wc_read_dlid_path_bits)                                          \
	X(ibv_wc_read_completion_ts)                                           \
	X(ibv_wc_read_completion_wallclock_ns)                                 \
	X(ibv_wc_read_cvlan)                                                   \
	X(ibv_wc_read_flow_tag)                                                \
	X(ibv_wc_read_tm_info)                                                 \
	/* data path through the provider's operation tables */                \
	X(ibv_post_wq_recv)                                                    \
	/* helpers */                                                          \
	X(verbs_get_ctx)                                                       \
	/* targets of the ibv_query_port/ibv_reg_mr/ibv_reg_mr_iova macros */  \
	X(___ibv_query_port)                                                   \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_query_gid_ex)                                                    \
	X(ibv_query_gid_table)                                                 \
	X(ibv_create_flow)                                                     \
	X(ibv_destroy_flow)                                                    \
	X(ibv_create_flow_action_esp)                                          \
	X(ibv_modify_flow_action_esp)                                          \
	X(ibv_destroy_flow_action)                                             \
	X(ibv_open_xrcd)                                                       \
	X(ibv_close_xrcd)                                                      \
	/* targets of the ibv_query_port/ibv_reg_mr/ibv_reg_mr_iova macros */  \
	X(__ibv_reg_mr)                                                        \
	X(__ibv_reg_mr_iova)                                                   \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_alloc_mw)                                                        \
	X(ibv_dealloc_mw)                                                      \
	/* helpers */                                                          \
	X(ibv_inc_rkey)                                                        \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_bind_mw)                                                         \
	X(ibv_advise_mr)                                                       \
	X(ibv_alloc_dm)                                                        \
	X(ibv_free_dm)                                                         \
	X(ibv_memcpy_to_dm)                                                    \
	X(ibv_memcpy_from_dm)                                                  \
	X(ibv_alloc_null_mr)                                                   \
	X(ibv_reg_dm_mr)                                                       \
	X(ibv_create_cq_ex)                                                    \
	/* data path through the provider's operation tables */                \
	X(ibv_poll_cq)                                                         \
	X(ibv_req_notify_cq)                                                   \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_modify_cq)                                                       \
	X(ibv_create_srq_ex)                                                   \
	X(ibv_get_srq_num)                                                     \
	/* data path through the provider's operation tables */                \
	X(ibv_post_srq_recv)                                                   \
	X(ibv_post_srq_ops)                                                    \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_create_qp_ex)                                                    \
	X(ibv_alloc_td)                                                        \
	X(ibv_dealloc_td)                                                      \
	X(ibv_alloc_parent_domain)                                             \
	X(ibv_query_rt_values_ex)                                              \
	X(ibv_query_device_ex)                                                 \
	X(ibv_open_qp)                                                         \
	X(ibv_modify_qp_rate_limit)                                            \
	X(ibv_create_wq)                                                       \
	X(ibv_modify_wq)                                                       \
	X(ibv_destroy_wq)                                                      \
	X(ibv_create_rwq_ind_table)                                            \
	X(ibv_destroy_rwq_ind_table)                                           \
	/* data path through the provider's operation tables */                \
	X(ibv_post_send)                                                       \
	X(ibv_post_recv)                                                       \
	/* helpers */                                                          \
	X(ibv_is_qpt_supported)                                                \
	/* verbs dispatched through struct verbs_context or ibv_context_ops */ \
	X(ibv_create_counters)                                                 \
	X(ibv_destroy_counters)                                                \
	X(ibv_attach_counters_point_flow)                                      \
	X(ibv_read_counters)                                                   \
	/* helpers */                                                          \
	X(ibv_flow_label_to_udp_sport)

/* Number of entries in SOFTRDMA_INLINE_VERBS() */
#define SOFTRDMA_INLINE_VERBS_COUNT 95

#endif /* SOFTRDMA_INLINE_LIST_H */
