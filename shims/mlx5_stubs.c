/* SPDX-License-Identifier: MIT */
/*
 * libmlx5.so.1: every entry point of rdma-core 44's library at its version,
 * answering as the real one does for a device that is not its own.  Generated
 * by scripts/gen_shims.py from shims/libmlx5.so.1.syms and the prototypes of
 * rdma-core 44's <infiniband/mlx5dv.h>; regenerate rather than edit.
 */
#include <errno.h>

#include "mlx5_stubs.h"

/* MLX5_1.20: EOPNOTSUPP. */
int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey,
		       struct mlx5dv_mkey_err *err_info, size_t err_info_size)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.19: EOPNOTSUPP. */
int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
		       struct mlx5_ib_uapi_query_port *info, size_t info_len)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context,
			       struct ibv_alloc_dm_attr *dm_attr,
			       struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.12: NULL, errno EOPNOTSUPP. */
struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context, uint32_t flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.1: NULL, errno EOPNOTSUPP. */
struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *cq_attr,
				   struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.6: NULL, errno EOPNOTSUPP. */
struct ibv_flow *
mlx5dv_create_flow(struct mlx5dv_flow_matcher *matcher,
		   struct mlx5dv_flow_match_parameters *match_value,
		   size_t num_actions,
		   struct mlx5dv_flow_action_attr *actions_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.5: NULL, errno EOPNOTSUPP. */
struct ibv_flow_action *
mlx5dv_create_flow_action_esp(struct ibv_context *ctx,
			      struct ibv_flow_action_esp_attr *esp,
			      struct mlx5dv_flow_action_esp *mlx5_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * MLX5_1.7: NULL, errno EOPNOTSUPP. Real parameters: struct ibv_context *ctx,
 * size_t actions_sz, uint64_t *actions, enum mlx5_ib_uapi_flow_table_type
 * ft_type.
 */
struct ibv_flow_action *
mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx,
					size_t actions_sz, uint64_t *actions,
					int ft_type)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * MLX5_1.7: NULL, errno EOPNOTSUPP. Real parameters: struct ibv_context *ctx,
 * size_t data_sz, void *data, enum
 * mlx5_ib_uapi_flow_action_packet_reformat_type reformat_type, enum
 * mlx5_ib_uapi_flow_table_type ft_type.
 */
struct ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(struct ibv_context *ctx,
					  size_t data_sz, void *data,
					  int reformat_type, int ft_type)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.6: NULL, errno EOPNOTSUPP. */
struct mlx5dv_flow_matcher *
mlx5dv_create_flow_matcher(struct ibv_context *context,
			   struct mlx5dv_flow_matcher_attr *matcher_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_mkey *
mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.3: NULL, errno EOPNOTSUPP. */
struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.24: NULL, errno EOPNOTSUPP. */
struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context *context,
			      struct mlx5dv_steering_anchor_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.3: NULL, errno EOPNOTSUPP. */
struct ibv_wq *mlx5dv_create_wq(struct ibv_context *context,
				struct ibv_wq_init_attr *wq_init_attr,
				struct mlx5dv_wq_init_attr *mlx5_wq_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_crypto_login(struct ibv_context *context,
			struct mlx5dv_crypto_login_attr *login_attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.24: NULL, errno EOPNOTSUPP. */
struct mlx5dv_crypto_login_obj *
mlx5dv_crypto_login_create(struct ibv_context *context,
			   struct mlx5dv_crypto_login_attr_ex *login_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.24: EOPNOTSUPP. */
int mlx5dv_crypto_login_destroy(struct mlx5dv_crypto_login_obj *crypto_login)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.24: EOPNOTSUPP. */
int mlx5dv_crypto_login_query(struct mlx5dv_crypto_login_obj *crypto_login,
			      struct mlx5dv_crypto_login_query_attr *query_attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/*
 * MLX5_1.21: EOPNOTSUPP. Real parameters: struct ibv_context *context, enum
 * mlx5dv_crypto_login_state *state.
 */
int mlx5dv_crypto_login_query_state(struct ibv_context *context, void *state)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_crypto_logout(struct ibv_context *context)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
				     struct mlx5dv_dek_init_attr *init_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_dek_query(struct mlx5dv_dek *dek, struct mlx5dv_dek_attr *attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.6: EOPNOTSUPP. */
int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *matcher)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.24: EOPNOTSUPP. */
int mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor *sa)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.23: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_msi_vector *
mlx5dv_devx_alloc_msi_vector(struct ibv_context *ibctx)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.7: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *context,
					      uint32_t flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_cq_modify(struct ibv_cq *cq, const void *in, size_t inlen,
			  void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_cq_query(struct ibv_cq *cq, const void *in, size_t inlen,
			 void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.9: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_cmd_comp *
mlx5dv_devx_create_cmd_comp(struct ibv_context *context)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.23: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_eq *mlx5dv_devx_create_eq(struct ibv_context *ibctx,
					     const void *in, size_t inlen,
					     void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * MLX5_1.11: NULL, errno EOPNOTSUPP. Real parameters: struct ibv_context
 * *context, enum mlx5_ib_uapi_devx_create_event_channel_flags flags.
 */
struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(struct ibv_context *context, int flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.9: nothing to do. */
void mlx5dv_devx_destroy_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp)
{
}

/* MLX5_1.23: EOPNOTSUPP. */
int mlx5dv_devx_destroy_eq(struct mlx5dv_devx_eq *eq)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.11: nothing to do. */
void mlx5dv_devx_destroy_event_channel(
	struct mlx5dv_devx_event_channel *event_channel)
{
}

/* MLX5_1.23: EOPNOTSUPP. */
int mlx5dv_devx_free_msi_vector(struct mlx5dv_devx_msi_vector *msi)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: nothing to do. */
void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *devx_uar)
{
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in,
			    size_t inlen, void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.9: EOPNOTSUPP. */
int mlx5dv_devx_get_async_cmd_comp(
	struct mlx5dv_devx_cmd_comp *cmd_comp,
	struct mlx5_ib_uapi_devx_async_cmd_hdr *cmd_resp, size_t cmd_resp_len)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.11: -1, errno EOPNOTSUPP. */
ssize_t
mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *event_channel,
		      struct mlx5_ib_uapi_devx_async_event_hdr *event_data,
		      size_t event_resp_len)
{
	errno = EOPNOTSUPP;
	return -1;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table *ind_tbl,
			       const void *in, size_t inlen, void *out,
			       size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table *ind_tbl, const void *in,
			      size_t inlen, void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *context,
					       const void *in, size_t inlen,
					       void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in,
			   size_t inlen, void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in,
			  size_t inlen, void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.9: EOPNOTSUPP. */
int mlx5dv_devx_obj_query_async(struct mlx5dv_devx_obj *obj, const void *in,
				size_t inlen, size_t outlen, uint64_t wr_id,
				struct mlx5dv_devx_cmd_comp *cmd_comp)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen,
			  void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen,
			 void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_query_eqn(struct ibv_context *context, uint32_t vector,
			  uint32_t *eqn)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_srq_modify(struct ibv_srq *srq, const void *in, size_t inlen,
			   void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_srq_query(struct ibv_srq *srq, const void *in, size_t inlen,
			  void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.11: EOPNOTSUPP. */
int mlx5dv_devx_subscribe_devx_event(
	struct mlx5dv_devx_event_channel *event_channel,
	struct mlx5dv_devx_obj *obj, uint16_t events_sz, uint16_t *events_num,
	uint64_t cookie)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.11: EOPNOTSUPP. */
int mlx5dv_devx_subscribe_devx_event_fd(
	struct mlx5dv_devx_event_channel *event_channel, int fd,
	struct mlx5dv_devx_obj *obj, uint16_t event_num)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: EOPNOTSUPP. */
int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *ctx,
					      void *addr, size_t size,
					      uint32_t access)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.19: NULL, errno EOPNOTSUPP. */
struct mlx5dv_devx_umem *
mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
			struct mlx5dv_devx_umem_in *umem_in)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_wq_modify(struct ibv_wq *wq, const void *in, size_t inlen,
			  void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.8: EOPNOTSUPP. */
int mlx5dv_devx_wq_query(struct ibv_wq *wq, const void *in, size_t inlen,
			 void *out, size_t outlen)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.19: NULL, errno EOPNOTSUPP. */
void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.17: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_aso(struct mlx5dv_dr_domain *domain,
			    struct mlx5dv_devx_obj *devx_obj, uint32_t offset,
			    uint32_t flags, uint8_t return_reg_c)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.14: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.16: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_array(struct mlx5dv_dr_domain *domain,
				   size_t num_dest,
				   struct mlx5dv_dr_action_dest_attr **dests)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.15: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj *devx_obj)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.21: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ib_port(struct mlx5dv_dr_domain *domain,
				     uint32_t ib_port)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.24: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_root_table(struct mlx5dv_dr_table *table,
					uint16_t priority)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table *table)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain *domain,
				   uint32_t vport)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj *devx_obj,
				     uint32_t offset)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.12: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_meter(struct mlx5dv_dr_flow_meter_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.16: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_sampler(struct mlx5dv_dr_flow_sampler_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain *domain,
				      uint32_t flags, size_t actions_sz,
				      __be64 *actions)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * MLX5_1.10: NULL, errno EOPNOTSUPP. Real parameters: struct mlx5dv_dr_domain
 * *domain, uint32_t flags, enum mlx5_ib_uapi_flow_action_packet_reformat_type
 * reformat_type, size_t data_sz, void *data.
 */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(struct mlx5dv_dr_domain *domain,
					uint32_t flags, int reformat_type,
					size_t data_sz, void *data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.17: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.17: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *
mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain *domain,
				  __be32 vlan_hdr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t tag_value)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_action_destroy(struct mlx5dv_dr_action *action)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_dr_action_modify_aso(struct mlx5dv_dr_action *action,
				uint32_t offset, uint32_t flags,
				uint8_t return_reg_c)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.12: EOPNOTSUPP. */
int mlx5dv_dr_action_modify_flow_meter(struct mlx5dv_dr_action *action,
				       struct mlx5dv_dr_flow_meter_attr *attr,
				       __be64 modify_field_select)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.22: EOPNOTSUPP. */
int mlx5dv_dr_aso_other_domain_link(struct mlx5dv_devx_obj *devx_obj,
				    struct mlx5dv_dr_domain *peer_dmn,
				    struct mlx5dv_dr_domain *dmn,
				    uint32_t flags, uint8_t return_reg_c)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.22: EOPNOTSUPP. */
int mlx5dv_dr_aso_other_domain_unlink(struct mlx5dv_devx_obj *devx_obj,
				      struct mlx5dv_dr_domain *dmn)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.20: nothing to do. */
void mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain *domain,
					    bool allow)
{
}

/*
 * MLX5_1.10: NULL, errno EOPNOTSUPP. Real parameters: struct ibv_context *ctx,
 * enum mlx5dv_dr_domain_type type.
 */
struct mlx5dv_dr_domain *mlx5dv_dr_domain_create(struct ibv_context *ctx,
						 int type)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain *domain)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.14: nothing to do. */
void mlx5dv_dr_domain_set_reclaim_device_memory(struct mlx5dv_dr_domain *dmn,
						bool enable)
{
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain *domain, uint32_t flags)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_matcher *
mlx5dv_dr_matcher_create(struct mlx5dv_dr_table *table, uint16_t priority,
			 uint8_t match_criteria_enable,
			 struct mlx5dv_flow_match_parameters *mask)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *matcher)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher *matcher,
				 struct mlx5dv_dr_matcher_layout *layout)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_rule *
mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher *matcher,
		      struct mlx5dv_flow_match_parameters *value,
		      size_t num_actions, struct mlx5dv_dr_action **actions)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_dr_table *mlx5dv_dr_table_create(struct mlx5dv_dr_domain *domain,
					       uint32_t level)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.10: EOPNOTSUPP. */
int mlx5dv_dr_table_destroy(struct mlx5dv_dr_table *table)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.12: -EOPNOTSUPP. */
int mlx5dv_dump_dr_domain(FILE *fout, struct mlx5dv_dr_domain *domain)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* MLX5_1.12: -EOPNOTSUPP. */
int mlx5dv_dump_dr_matcher(FILE *fout, struct mlx5dv_dr_matcher *matcher)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* MLX5_1.12: -EOPNOTSUPP. */
int mlx5dv_dump_dr_rule(FILE *fout, struct mlx5dv_dr_rule *rule)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* MLX5_1.12: -EOPNOTSUPP. */
int mlx5dv_dump_dr_table(FILE *fout, struct mlx5dv_dr_table *table)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* MLX5_1.12: nothing to do. */
void mlx5dv_free_var(struct mlx5dv_var *dv_var)
{
}

/* MLX5_1.4: EOPNOTSUPP. */
int mlx5dv_get_clock_info(struct ibv_context *context,
			  struct mlx5dv_clock_info *clock_info)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: NULL, errno EOPNOTSUPP. */
struct ibv_device **
mlx5dv_get_vfio_device_list(struct mlx5dv_vfio_context_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.0 (compat): EOPNOTSUPP. */
int mlx5dv_init_obj_v1_0(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
__asm__(".symver mlx5dv_init_obj_v1_0, mlx5dv_init_obj@MLX5_1.0");

/* MLX5_1.2: EOPNOTSUPP. */
int mlx5dv_init_obj_v1_2(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
__asm__(".symver mlx5dv_init_obj_v1_2, mlx5dv_init_obj@@MLX5_1.2");

/* MLX5_1.8: false. */
bool mlx5dv_is_supported(struct ibv_device *device)
{
	return false;
}

/* MLX5_1.20: EOPNOTSUPP. */
int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.14: EOPNOTSUPP. */
int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp,
				const struct mlx5dv_sched_leaf *requestor,
				const struct mlx5dv_sched_leaf *responder)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.7: NULL, errno EOPNOTSUPP. */
struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
				       struct mlx5dv_context_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.13: NULL, errno EOPNOTSUPP. */
struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context,
				  size_t pp_context_sz, const void *pp_context,
				  uint32_t flags)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.13: nothing to do. */
void mlx5dv_pp_free(struct mlx5dv_pp *pp)
{
}

/* MLX5_1.20: -EOPNOTSUPP. */
int mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex *mqp, uint64_t wr_id)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

/* MLX5_1.10: NULL, errno EOPNOTSUPP. */
struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.0: EOPNOTSUPP. */
int mlx5dv_query_device(struct ibv_context *ctx_in,
			struct mlx5dv_context *attrs_out)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.14: EOPNOTSUPP. */
int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num,
			     uint8_t *active_port_num)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.18: EOPNOTSUPP. */
int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.18: EOPNOTSUPP. */
int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: NULL, errno EOPNOTSUPP. */
struct mlx5dv_sched_leaf *
mlx5dv_sched_leaf_create(struct ibv_context *context,
			 const struct mlx5dv_sched_attr *sched_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf,
			     const struct mlx5dv_sched_attr *sched_attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: NULL, errno EOPNOTSUPP. */
struct mlx5dv_sched_node *
mlx5dv_sched_node_create(struct ibv_context *context,
			 const struct mlx5dv_sched_attr *sched_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_sched_node_destroy(struct mlx5dv_sched_node *node)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.17: EOPNOTSUPP. */
int mlx5dv_sched_node_modify(struct mlx5dv_sched_node *node,
			     const struct mlx5dv_sched_attr *sched_attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/*
 * MLX5_1.2: EOPNOTSUPP. Real parameters: struct ibv_context *context, enum
 * mlx5dv_set_ctx_attr_type type, void *attr.
 */
int mlx5dv_set_context_attr(struct ibv_context *context, int type, void *attr)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.21: -1, errno EOPNOTSUPP. */
int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx)
{
	errno = EOPNOTSUPP;
	return -1;
}

/* MLX5_1.21: EOPNOTSUPP. */
int mlx5dv_vfio_process_events(struct ibv_context *context)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
