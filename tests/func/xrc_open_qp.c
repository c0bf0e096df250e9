/* SPDX-License-Identifier: MIT */
/*
 * ibv_open_qp across processes: the parent makes an XRC domain on a file,
 * a target QP in it and an initiator; the child opens the same domain
 * (the file's inode), opens the target QP by number, sees the state the
 * parent moved it to, and receives through it into an XRC SRQ of its own:
 * completions on the child's CQ name the target QP, data intact.  The
 * parent then destroys its handle of the target: the QP lives on for the
 * child, which keeps receiving, until the child lets it go too.  A second
 * target, held by both, goes to the error state on a request naming no
 * SRQ: each holder gets IBV_EVENT_QP_REQ_ERR for its own handle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "t_xrc.h"

#define LEN 10000
#define ROUNDS 4

static char path[64];

struct hello {
	uint32_t tgt_qpn; /* parent -> child */
	uint32_t srqn;	  /* child -> parent */
};

static int child(int fd, void *arg)
{
	struct ibv_qp_open_attr oa;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *qp2;
	struct hello h;
	struct t_buf b;
	struct t_dev d;
	struct ibv_wc wc;
	int f, ctx_tag;

	(void)arg;
	t_dev_open(&d);
	f = open(path, O_RDONLY);
	T_ASSERT(f >= 0);
	xrcd = T_NONNULL(t_xrcd_open(d.ctx, f, O_CREAT));
	cq = t_cq_create(&d, 64, NULL);
	t_buf_alloc(&d, &b, LEN, T_ACCESS_ALL);
	srq = T_NONNULL(t_xsrq_create(d.ctx, xrcd, cq, d.pd, 16));

	t_sock_recv(fd, &h, sizeof(h));
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE | IBV_QP_OPEN_ATTR_CONTEXT;
	oa.qp_num = h.tgt_qpn;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.qp_context = &ctx_tag;
	qp = T_NONNULL(ibv_open_qp(d.ctx, &oa));
	T_EQ(qp->qp_num, h.tgt_qpn);
	T_PTR_EQ(qp->qp_context, &ctx_tag);
	T_OK(ibv_get_srq_num(srq, &h.srqn));
	t_sock_send(fd, &h, sizeof(h));
	/* The parent connects the target. */
	t_sock_sync(fd);
	T_EQ(t_qp_state(qp), IBV_QPS_RTS);

	for (int i = 0; i < 2 * ROUNDS; i++) {
		t_post_srq_recv(srq, 50 + i, b.mr, b.p, LEN);
		if (i == ROUNDS)
			t_sock_sync(fd); /* the parent let go of its handle */
		t_sock_sync(fd);
		T_EXPECT_WC(cq, &wc, 50 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.qp_num, h.tgt_qpn);
		T_EQ(wc.byte_len, LEN - i);
		T_CHECK_FILL(b.p, LEN - i, 100 + i);
		t_sock_sync(fd);
	}
	/* The second target. */
	t_sock_recv(fd, &h, sizeof(h));
	oa.qp_num = h.tgt_qpn;
	oa.qp_context = NULL;
	qp2 = T_NONNULL(ibv_open_qp(d.ctx, &oa));
	t_sock_sync(fd);
	T_EXPECT_ASYNC(d.ctx, IBV_EVENT_QP_REQ_ERR, qp2);
	T_EQ(t_qp_state(qp2), IBV_QPS_ERR);
	t_sock_sync(fd);
	T_OK(ibv_destroy_qp(qp2));
	T_EQ(ibv_close_xrcd(xrcd), EBUSY);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_srq(srq));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	close(f);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct ibv_qp *tgt, *ini, *ini2;
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;
	struct t_child c;
	struct hello h;
	struct ibv_wc wc;
	struct t_buf b;
	struct t_dev d;
	int f;

	t_init("xrc_open_qp");
	snprintf(path, sizeof(path), "/tmp/srd_xrcq.%d", (int)getpid());
	f = open(path, O_RDONLY | O_CREAT | O_EXCL, 0600);
	T_ASSERT(f >= 0);
	t_fork(&c, child, NULL);
	t_dev_open(&d);
	xrcd = T_NONNULL(t_xrcd_open(d.ctx, f, O_CREAT));
	cq = t_cq_create(&d, 64, NULL);
	t_buf_alloc(&d, &b, LEN, T_ACCESS_ALL);
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini = T_NONNULL(t_xrc_ini_create(&d, cq, 16, 0));

	h.tgt_qpn = tgt->qp_num;
	h.srqn = 0;
	t_sock_send(c.fd, &h, sizeof(h));
	t_sock_recv(c.fd, &h, sizeof(h));
	t_xrc_connect(&d, ini, 0x10, tgt, 0x20);
	t_sock_sync(c.fd);

	for (int i = 0; i < 2 * ROUNDS; i++) {
		if (i == ROUNDS) {
			/* The child holds the target QP now. */
			T_OK(ibv_destroy_qp(tgt));
			t_sock_sync(c.fd);
		}
		t_sock_sync(c.fd); /* the child's receive is posted */
		t_fill(b.p, LEN - i, 100 + i);
		t_xrc_send(ini, i, &b, LEN - i, h.srqn);
		T_EXPECT_WC(cq, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		t_sock_sync(c.fd);
	}

	/* A second target, opened by the child too, then an invalid SRQ. */
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini2 = T_NONNULL(t_xrc_ini_create(&d, cq, 4, 0));
	h.tgt_qpn = tgt->qp_num;
	t_sock_send(c.fd, &h, sizeof(h));
	t_xrc_connect(&d, ini2, 0x30, tgt, 0x40);
	t_sock_sync(c.fd); /* the child holds it */
	t_xrc_send(ini2, 99, &b, 64, 0);
	T_EXPECT_WC(cq, &wc, 99, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE);
	T_EXPECT_ASYNC(d.ctx, IBV_EVENT_QP_REQ_ERR, tgt);
	t_sock_sync(c.fd);
	T_OK(ibv_destroy_qp(tgt));
	T_OK(ibv_destroy_qp(ini2));
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);
	T_OK(ibv_destroy_qp(ini));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	close(f);
	unlink(path);
	t_dev_close(&d);
	t_pass();
}
