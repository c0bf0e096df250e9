/* SPDX-License-Identifier: MIT */
/*
 * MODIFY_QP: the transition must be legal with exactly the attributes the
 * state machine asks for (qp_state.c), and every value in range, before
 * anything changes.
 */
#include <errno.h>

#include "daemon/core/core.h"

#define QP_ACCESS_KNOWN                                      \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_FLUSH_GLOBAL |      \
	 IBV_ACCESS_FLUSH_PERSISTENT)
#define PSN_MASK 0xffffff

static int check_values(const struct srd_qp *qp, const struct ibv_qp_attr *a,
			uint32_t mask)
{
	const struct srd_device *dev = qp->dev;
	int err;

	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= 1)
		return -EINVAL;
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if (mask & IBV_QP_AV) {
		err = ah_attr_check(dev, &a->ah_attr);
		if (err)
			return err;
	}
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > dev->port.max_mtu))
		return -EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout >= 32)
		return -EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer >= 32)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > dev->attr.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > dev->attr.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~QP_ACCESS_KNOWN))
		return -EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MIG_STATE) &&
	    (unsigned int)a->path_mig_state > IBV_MIG_ARMED)
		return -EINVAL;
	if (mask & IBV_QP_ALT_PATH) {
		if (a->alt_port_num != 1 || a->alt_pkey_index >= 1 ||
		    a->alt_timeout >= 32)
			return -EINVAL;
		err = ah_attr_check(dev, &a->alt_ah_attr);
		if (err)
			return err;
	}
	return 0;
}

static void apply(struct srd_qp *qp, const struct ibv_qp_attr *a, uint32_t mask)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (mask & IBV_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		q->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		q->ah_attr = a->ah_attr;
	/* Packets never outgrow the port: the engine may use path_mtu as
	 * it stands. */
	if (mask & IBV_QP_PATH_MTU)
		q->path_mtu = a->path_mtu < qp->dev->port.active_mtu
				      ? a->path_mtu
				      : qp->dev->port.active_mtu;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & PSN_MASK;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_ALT_PATH) {
		q->alt_ah_attr = a->alt_ah_attr;
		q->alt_pkey_index = a->alt_pkey_index;
		q->alt_port_num = a->alt_port_num;
		q->alt_timeout = a->alt_timeout;
	}
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & PSN_MASK;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
}

int cmd_modify_qp(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_modify_qp_req *req = rq->data;
	const struct ibv_qp_attr *a = &req->attr;
	struct srd_qp *qp = qp_get(c, req->handle);
	uint32_t mask = req->attr_mask;
	enum ibv_qp_state cur, next;
	int err;

	if (!qp)
		return -EINVAL;
	cur = qp->attr.qp_state;
	/* An asserted current state that is not the real one fails, so a
	 * consumer acting on a stale state learns of it. */
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		return -EINVAL;
	next = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	if (!qp_modify_is_ok(cur, next, qp->type, mask))
		return -EINVAL;
	err = check_values(qp, a, mask);
	if (err)
		return err;
	apply(qp, a, mask);
	qp->attr.qp_state = next;
	qp->attr.cur_qp_state = next;
	if (next == IBV_QPS_RESET)
		qp->attr.sq_draining = 0;
	engine_qp_modified(qp, cur, mask);
	REP(rp, struct srd_modify_qp_rep)->qp_state = qp->attr.qp_state;
	return 0;
}
