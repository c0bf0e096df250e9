/* SPDX-License-Identifier: MIT */
/*
 * A QP's cached route follows the GID table.  The destination of a UC
 * pair is a GID of the device (the in-memory wire); when the address
 * goes, the route must stop being local for a QP in RTS (the device
 * redoes its route at once) and for one in SQE (it looks again on its
 * way back to RTS), and when the address comes back, be local again and
 * carry data.
 */
#include <string.h>

#include "daemon/device/link.h"
#include "tests/unit/engine_harness.h"

static struct eh h;
static struct eh_cq scq, rcq;
static struct eh_mr ma, mb;

/* Every valid GID of the device, in slot order. */
static unsigned int gids_now(const struct srd_port *p, union ibv_gid *out)
{
	unsigned int n = 0;

	for (int i = 0; i < SRD_MAX_GIDS; i++)
		if (p->gid_valid[i])
			out[n++] = p->gid[i];
	return n;
}

int main(void)
{
	struct srd_device *dev;
	union ibv_gid all[SRD_MAX_GIDS], rest[SRD_MAX_GIDS];
	unsigned int n, m = 0;
	struct eh_qp a, b;
	struct srd_send_wqe w;
	struct srd_cqe e;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTS };

	eh_init(&h);
	dev = h.t.c->dev;
	eh_cq(&h, 64, &scq);
	eh_cq(&h, 64, &rcq);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &ma);
	eh_mr(&h, h.pd, 65536, EH_ACCESS_ALL, &mb);
	eh_qp(&h, h.pd, IBV_QPT_UC, &scq, &rcq, NULL, NULL, false, &a);
	eh_qp(&h, h.pd, IBV_QPT_UC, &scq, &rcq, NULL, NULL, false, &b);
	eh_connect_pair(&h, &a, &b, NULL);
	T_ASSERT(tp_route_local(a.qp->tp));
	T_ASSERT(tp_route_local(b.qp->tp));

	/* b's SQ stops: READ is no UC operation. */
	w = eh_wqe(1, IBV_WR_RDMA_READ, SRD_WQE_SIGNALED, 1);
	eh_post_send(&b, &w, (struct srd_sge[]){ eh_sge(&mb, 0, 8) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RDMA_READ, 1);
	T_EQ(eh_state(&b), IBV_QPS_SQE);

	/* The address of GID 0, where both QPs send, goes away. */
	n = gids_now(&dev->port, all);
	T_ASSERT(n >= 1);
	for (unsigned int i = 0; i < n; i++)
		if (memcmp(all[i].raw, dev->port.gid[0].raw, 16))
			rest[m++] = all[i];
	T_ASSERT(device_set_gids(&h.t.d, dev, rest, m, false));
	T_ASSERT(!tp_route_local(a.qp->tp));
	T_EQ(eh_modify(&h, &b, &at, IBV_QP_STATE), 0);
	T_ASSERT(!tp_route_local(b.qp->tp));

	/* Back: local again, and a SEND arrives. */
	T_ASSERT(device_set_gids(&h.t.d, dev, all, n, false));
	T_ASSERT(tp_route_local(a.qp->tp));
	T_ASSERT(tp_route_local(b.qp->tp));
	memset(mb.p, 0, 256);
	memset(ma.p, 0x5a, 256);
	eh_post_recv(&b, 0x21, (struct srd_sge[]){ eh_sge(&mb, 0, 256) }, 1);
	w = eh_wqe(2, IBV_WR_SEND, SRD_WQE_SIGNALED, 1);
	eh_post_send(&a, &w, (struct srd_sge[]){ eh_sge(&ma, 0, 256) }, NULL);
	e = eh_wait(&h, &scq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_SEND, 2);
	e = eh_wait(&h, &rcq, 5);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RECV, 0x21);
	T_ASSERT(!memcmp(mb.p, ma.p, 256));

	eh_settle(&h);
	eh_fini(&h);
	return T_EXIT_PASS;
}
