/* SPDX-License-Identifier: MIT */
/*
 * XRC set-up the tests share: domains, XRC SRQs, target (XRC_RECV) and
 * initiator (XRC_SEND) QPs, connecting them, a SEND to an SRQ.  Each
 * maker returns NULL with errno set as the verb does, for tests of the
 * errors: wrap it in T_NONNULL where it must work.
 */
#ifndef SOFTRDMA_TESTS_T_XRC_H
#define SOFTRDMA_TESTS_T_XRC_H

#include <stdint.h>

#include "t_util.h"

/* The domain of file fd (opened with oflags), or a private one (fd -1). */
struct ibv_xrcd *t_xrcd_open(struct ibv_context *ctx, int fd, int oflags);
/* An XRC SRQ of xrcd: max_wr receives of one SGE, completing on cq, keys
 * checked against pd. */
struct ibv_srq *t_xsrq_create(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			      struct ibv_cq *cq, struct ibv_pd *pd,
			      uint32_t max_wr);
struct ibv_qp *t_xrc_tgt_create(struct ibv_context *ctx, struct ibv_xrcd *xrcd);
/* On d's PD: max_wr sends of one SGE completing on cq; ops, if not 0, the
 * ibv_wr_* operations it may post. */
struct ibv_qp *t_xrc_ini_create(struct t_dev *d, struct ibv_cq *cq,
				uint32_t max_wr, uint64_t ops);
/* Connect initiator ini and target tgt, both of d, to each other (the
 * target sends the ACKs); their first PSNs are ini_psn and tgt_psn. */
void t_xrc_connect(struct t_dev *d, struct ibv_qp *ini, uint32_t ini_psn,
		   struct ibv_qp *tgt, uint32_t tgt_psn);
/* A signaled SEND of the first len bytes of b to the SRQ numbered srqn. */
void t_xrc_send(struct ibv_qp *ini, uint64_t wr_id, const struct t_buf *b,
		uint32_t len, uint32_t srqn);

#endif
