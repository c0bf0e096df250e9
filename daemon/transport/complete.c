/* SPDX-License-Identifier: MIT */
/* Writing CQEs for send and receive WQEs. */
#include <errno.h>
#include <string.h>

#include "common/wc_opcode.h"
#include "daemon/transport/engine.h"

void tp_cq_push(struct srd_qp_transport *tp, struct srd_cq *cq,
		const struct srd_cqe *c)
{
	/* An overrun CQ is in error; the QP cannot complete anything. */
	if (cq && cq_push(cq, c) == -ENOSPC)
		tp_error(tp, IBV_EVENT_QP_FATAL);
}

void tp_send_cqe(struct srd_qp_transport *tp, struct srd_swqe *s, uint32_t idx,
		 enum ibv_wc_status status)
{
	struct srd_qp *qp = tp->qp;
	struct srd_cqe c;

	if (status == IBV_WC_SUCCESS && !qp->sq_sig_all &&
	    !(s->w.flags & SRD_WQE_SIGNALED))
		return;
	memset(&c, 0, sizeof(c));
	c.wr_id = s->w.wr_id;
	c.status = status;
	c.opcode = srd_send_wc_opcode(s->w.opcode);
	c.qp_num = qp->qpn;
	c.wqe_idx = idx;
	if (status == IBV_WC_SUCCESS)
		c.byte_len = s->length;
	tp_cq_push(tp, qp->send_cq, &c);
}

void tp_recv_cqe(struct srd_qp_transport *tp,
		 const struct srd_recv_cqe_info *info)
{
	struct srd_qp *qp = tp->qp;
	struct srd_rwqe *rw = &tp->rwqe;
	struct srd_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = rw->wr_id;
	c.status = info->status;
	c.opcode = info->opcode;
	c.byte_len = info->byte_len;
	c.imm_data = info->imm;
	c.qp_num = qp->qpn;
	c.src_qp = info->src_qp;
	c.wqe_idx = rw->idx;
	c.wc_flags = info->wc_flags;
	c.sl = info->sl;
	c.flags = SRD_CQE_RECV | (rw->srq ? SRD_CQE_SRQ : 0) |
		  (info->solicited ? SRD_CQE_SOLICITED : 0);
	rw->valid = false;
	/* XRC: the SRQ's CQ, the target QP has none. */
	if (tp->place_defer) {
		/* Its data is still to be placed: no CQE before it. */
		tp->place_defer = false;
		place_defer_cqe(tp, rw->xsrq ? rw->xsrq->cq : qp->recv_cq, &c);
		return;
	}
	tp_cq_push(tp, rw->xsrq ? rw->xsrq->cq : qp->recv_cq, &c);
}
