/* SPDX-License-Identifier: MIT */
/*
 * XRC: domains (ibv_open_xrcd, ibv_close_xrcd), the SRQ number an XRC
 * sender names (ibv_get_srq_num), target QPs (ibv_create_qp_ex with an
 * XRCD) and opening one another process created (ibv_open_qp).  The
 * daemon keys shared domains by the inode of the file passed to it.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "libibverbs/ibverbs.h"

/* A command on context's connection whose reply fills rep, with nfds
 * descriptors from fds sent along.  0 or a negative errno. */
static int xrc_cmd(struct ibv_context *context, uint32_t op, const void *req,
		   size_t req_len, void *rep, size_t rep_len, const int *fds,
		   int nfds)
{
	struct srd_cmd_args a = {
		.op = op,
		.req = req,
		.req_len = req_len,
		.fds = fds,
		.nfds = nfds,
		.rep = rep,
		.rep_len = rep_len,
	};

	return srd_ctx_cmd(to_ctx(context), &a);
}

struct ibv_xrcd *srd_open_xrcd(struct ibv_context *context,
			       struct ibv_xrcd_init_attr *attr)
{
	struct srd_open_xrcd_req req = { 0 };
	struct srd_handle_rep rep;
	struct srd_xrcd *x;
	int ret;

	/* rdma-core's ibv_cmd_open_xrcd. */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->fd != -1) {
		/* What fdget() refuses in uverbs, before the message. */
		if (fcntl(attr->fd, F_GETFD) < 0) {
			errno = EBADF;
			return NULL;
		}
		req.has_fd = 1;
	}
	req.oflags = (uint32_t)attr->oflags;
	x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	ret = xrc_cmd(context, SRD_CMD_OPEN_XRCD, &req, sizeof(req), &rep,
		      sizeof(rep), &attr->fd, req.has_fd);
	if (ret) {
		free(x);
		errno = -ret;
		return NULL;
	}
	x->xrcd.context = context;
	x->handle = rep.handle;
	return &x->xrcd;
}

int srd_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct srd_xrcd *x = to_xrcd(xrcd);
	int ret;

	ret = srd_destroy_handle(xrcd->context, SRD_CMD_CLOSE_XRCD, x->handle);
	if (ret)
		return srd_ret_errno(ret);
	free(x);
	return 0;
}

int srd_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct srd_usrq *srq = to_srq(ibsrq);

	/* Only XRC SRQs have a number a sender can name. */
	if (!srq->xrc)
		return EOPNOTSUPP;
	*srq_num = srq->srq_num;
	return 0;
}

/* The library side of a target QP: no rings, no CQs, no PD. */
static struct srd_uqp *tgt_alloc(struct ibv_context *context,
				 enum ibv_qp_type type, void *qp_context)
{
	struct srd_uqp *qp = calloc(1, sizeof(*qp));

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->qp.context = context;
	qp->qp.qp_context = qp_context;
	qp->qp.qp_type = type;
	qp->qp.state = IBV_QPS_RESET;
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	list_node_init(&qp->send_cq_node);
	list_node_init(&qp->recv_cq_node);
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	qp->ev.hnode.key = srd_ctx_new_id(to_ctx(context));
	return qp;
}

static void tgt_free(struct srd_uqp *qp)
{
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_cond_destroy(&qp->qp.cond);
	pthread_mutex_destroy(&qp->qp.mutex);
	free(qp);
}

/* Both replies start with the QP's handle and number. */
static_assert(offsetof(struct srd_create_qp_rep, handle) == 0 &&
		      offsetof(struct srd_create_qp_rep, qp_num) == 4,
	      "create_qp_rep starts as open_qp_rep");

/*
 * Make or open target QP qp with the command op (its reply in rep): qp
 * gets its handle and number and hears its events, or is freed with
 * errno set (-1).
 */
static int tgt_cmd(struct ibv_context *context, struct srd_uqp *qp, uint32_t op,
		   const void *req, size_t req_len, void *rep, size_t rep_len)
{
	struct srd_open_qp_rep ids;
	int ret = xrc_cmd(context, op, req, req_len, rep, rep_len, NULL, 0);

	if (ret) {
		tgt_free(qp);
		errno = -ret;
		return -1;
	}
	memcpy(&ids, rep, sizeof(ids));
	qp->qp.handle = ids.handle;
	qp->qp.qp_num = ids.qp_num;
	srd_evobj_add(to_ctx(context), &qp->ev, SRD_OBJ_QP);
	return 0;
}

struct srd_uqp *srd_xrc_tgt_create(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr)
{
	struct srd_create_qp_req req = { 0 };
	struct srd_create_qp_rep rep;
	struct srd_uqp *qp;

	qp = tgt_alloc(context, IBV_QPT_XRC_RECV, attr->qp_context);
	if (!qp)
		return NULL;
	req.qp_type = IBV_QPT_XRC_RECV;
	req.pd_handle = req.send_cq_handle = req.recv_cq_handle =
		req.srq_handle = SRD_NO_HANDLE;
	req.xrcd_handle = to_xrcd(attr->xrcd)->handle;
	req.user_handle = qp->ev.hnode.key;
	if (tgt_cmd(context, qp, SRD_CMD_CREATE_QP, &req, sizeof(req), &rep,
		    sizeof(rep)))
		return NULL;
	memset(&attr->cap, 0, sizeof(attr->cap));
	return qp;
}

struct ibv_qp *srd_open_qp(struct ibv_context *context,
			   struct ibv_qp_open_attr *attr)
{
	struct srd_open_qp_req req = { 0 };
	struct srd_open_qp_rep rep;
	struct srd_uqp *qp;

	/* rdma-core's ibv_cmd_open_qp, then uverbs: a target QP only. */
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) || !attr->xrcd ||
	    attr->xrcd->context != context ||
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = tgt_alloc(context, IBV_QPT_XRC_RECV,
		       (attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT)
			       ? attr->qp_context
			       : NULL);
	if (!qp)
		return NULL;
	req.xrcd_handle = to_xrcd(attr->xrcd)->handle;
	req.qp_num = attr->qp_num;
	req.user_handle = qp->ev.hnode.key;
	if (tgt_cmd(context, qp, SRD_CMD_OPEN_QP, &req, sizeof(req), &rep,
		    sizeof(rep)))
		return NULL;
	/* Its creator may have moved it along already. */
	{
		struct ibv_qp_attr qa;

		if (!ibv_query_qp(&qp->qp, &qa, IBV_QP_STATE, NULL))
			qp->qp.state = qa.qp_state;
	}
	return &qp->qp;
}
