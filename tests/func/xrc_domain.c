/* SPDX-License-Identifier: MIT */
/*
 * XRC domains with the kernel's answers: the masks rdma-core checks
 * (EOPNOTSUPP, EINVAL); fd -1 is a private domain; a file without a
 * domain and no O_CREAT is EAGAIN; O_EXCL on an existing one is EINVAL
 * (uverbs' ib_uverbs_open_xrcd); a closed fd is EBADF, a socket EINVAL
 * (the domain would hold it, and with it maybe the connection itself,
 * for ever); closing a domain
 * that still has an SRQ or a QP on it is EBUSY.  A second process opening
 * the same file (another descriptor, same inode) gets the same domain: it
 * can open the target QP the first one made, while a private domain of
 * its own cannot (EINVAL).  Once every handle is closed the domain is
 * gone: without O_CREAT it is EAGAIN again.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_xrc.h"

static char path[64];

static struct ibv_qp *qp_open(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			      uint32_t qpn)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = qpn,
		.xrcd = xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	return ibv_open_qp(ctx, &oa);
}

static int child(int fd, void *arg)
{
	struct ibv_xrcd *shared, *priv;
	struct ibv_qp *qp;
	struct t_dev d;
	uint32_t qpn;
	int f;

	(void)arg;
	t_dev_open(&d);
	f = open(path, O_RDONLY);
	T_ASSERT(f >= 0);
	/* Before the parent opened it: no domain, no O_CREAT. */
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EAGAIN);
	t_sock_sync(fd);
	t_sock_recv(fd, &qpn, sizeof(qpn));
	/* The parent's domain, by the inode of another descriptor. */
	shared = T_NONNULL(t_xrcd_open(d.ctx, f, 0));
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, O_CREAT | O_EXCL), EINVAL);
	priv = T_NONNULL(t_xrcd_open(d.ctx, -1, 0));
	T_NULL_ERRNO(qp_open(d.ctx, priv, qpn), EINVAL);
	T_NULL_ERRNO(qp_open(d.ctx, shared, qpn + 1), EINVAL);
	qp = T_NONNULL(qp_open(d.ctx, shared, qpn));
	T_EQ(qp->qp_num, qpn);
	T_EQ(qp->qp_type, IBV_QPT_XRC_RECV);
	T_EQ(ibv_close_xrcd(shared), EBUSY);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_close_xrcd(shared));
	T_OK(ibv_close_xrcd(priv));
	t_sock_sync(fd);
	/* The parent closed its handle too: the domain is gone. */
	t_sock_sync(fd);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EAGAIN);
	close(f);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct ibv_xrcd_init_attr xa;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_xrcd *x1, *x2, *priv;
	struct ibv_srq *srq, *basic;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_child c;
	struct t_dev d;
	uint32_t n;
	int f, f2, bad;

	t_init("xrc_domain");
	snprintf(path, sizeof(path), "/tmp/srd_xrcd.%d", (int)getpid());
	f = open(path, O_RDONLY | O_CREAT | O_EXCL, 0600);
	T_ASSERT(f >= 0);
	t_fork(&c, child, NULL);
	t_dev_open(&d);
	T_ASSERT(d.attr.device_cap_flags & IBV_DEVICE_XRC);

	/* rdma-core's checks of the attributes. */
	memset(&xa, 0, sizeof(xa));
	xa.fd = -1;
	xa.comp_mask = IBV_XRCD_INIT_ATTR_RESERVED;
	T_NULL_ERRNO(ibv_open_xrcd(d.ctx, &xa), EOPNOTSUPP);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD;
	T_NULL_ERRNO(ibv_open_xrcd(d.ctx, &xa), EINVAL);
	xa.comp_mask = IBV_XRCD_INIT_ATTR_OFLAGS;
	T_NULL_ERRNO(ibv_open_xrcd(d.ctx, &xa), EINVAL);
	bad = dup(f);
	close(bad);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, bad, O_CREAT), EBADF);
	/* A domain holds its file: a socket could hold the connection
	 * itself (here it is the connection), which would never close. */
	T_NULL_ERRNO(t_xrcd_open(d.ctx, d.ctx->cmd_fd, O_CREAT), EINVAL);
	{
		int sv[2];

		T_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
		t_sock_send_fd(sv[1], d.ctx->cmd_fd, "x", 1);
		T_NULL_ERRNO(t_xrcd_open(d.ctx, sv[0], O_CREAT), EINVAL);
		close(sv[0]);
		close(sv[1]);
	}

	/* The file has no domain yet. */
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EAGAIN);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, O_EXCL), EAGAIN);
	t_sock_sync(c.fd);
	x1 = T_NONNULL(t_xrcd_open(d.ctx, f, O_CREAT | O_EXCL));
	T_PTR_EQ(x1->context, d.ctx);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, O_CREAT | O_EXCL), EINVAL);
	/* Another descriptor of the file, same process: the same domain,
	 * a handle of its own. */
	f2 = open(path, O_RDONLY);
	T_ASSERT(f2 >= 0);
	x2 = T_NONNULL(t_xrcd_open(d.ctx, f2, O_CREAT));
	priv = T_NONNULL(t_xrcd_open(d.ctx, -1, O_CREAT | O_EXCL));

	/* XRC SRQs: their domain and CQ are required. */
	cq = t_cq_create(&d, 16, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = d.pd;
	sa.cq = cq;
	T_NULL_ERRNO(ibv_create_srq_ex(d.ctx, &sa), EINVAL);
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_XRCD;
	sa.xrcd = x1;
	T_NULL_ERRNO(ibv_create_srq_ex(d.ctx, &sa), EINVAL);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	srq = T_NONNULL(ibv_create_srq_ex(d.ctx, &sa));
	T_OK(ibv_get_srq_num(srq, &n));
	T_NE(n, 0);
	basic = T_NONNULL(ibv_create_srq(
		d.pd, &(struct ibv_srq_init_attr){ .attr = { 8, 1, 0 } }));
	T_EQ(ibv_get_srq_num(basic, &n), EOPNOTSUPP);
	T_OK(ibv_destroy_srq(basic));
	/* A target QP needs its domain. */
	{
		struct ibv_qp_init_attr_ex ia;

		memset(&ia, 0, sizeof(ia));
		ia.qp_type = IBV_QPT_XRC_RECV;
		ia.comp_mask = IBV_QP_INIT_ATTR_PD;
		ia.pd = d.pd;
		T_NULL_ERRNO(ibv_create_qp_ex(d.ctx, &ia), EINVAL);
	}

	/* In use: EBUSY on the handle that made the SRQ; the other
	 * handle of the same domain closes (its own count is zero). */
	T_EQ(ibv_close_xrcd(x1), EBUSY);
	T_OK(ibv_close_xrcd(x2));
	T_OK(ibv_destroy_srq(srq));
	qp = T_NONNULL(t_xrc_tgt_create(d.ctx, x1));
	T_EQ(ibv_close_xrcd(x1), EBUSY);

	/* The child opens the same file: the same domain. */
	t_sock_send(c.fd, &qp->qp_num, sizeof(qp->qp_num));
	t_sock_sync(c.fd);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_close_xrcd(x1));
	T_OK(ibv_close_xrcd(priv));
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EAGAIN);
	T_OK(ibv_destroy_cq(cq));
	close(f2);
	close(f);
	unlink(path);
	t_dev_close(&d);
	t_pass();
}
