/* SPDX-License-Identifier: MIT */
/*
 * rdma_join_multicast on RoCE v2, as the kernel answers it: the
 * MULTICAST_JOIN event carries the context, an address vector to the
 * IPv4-mapped MGID (hop limit 64), QPN 0xFFFFFF and RDMA_UDP_QKEY; the
 * library attaches the id's QP, except for a send-only join; datagrams to
 * the group reach the attached QPs; rdma_leave_multicast detaches.  And
 * the errors: unbound id, unicast group, IPv6 group, bad join flags,
 * leaving what was never joined, and MULTICAST_ERROR when the attach
 * fails (the group is full).
 */
#include <arpa/inet.h>

#include "t_cm.h"

#define UDP_QKEY 0x01234567u
#define GRH 40
#define GROUP "239.2.3.4"
#define FULL 56 /* QPs a group takes */

static void mc_addr(struct sockaddr_in *sin, const char *ip)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	T_EQ(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
}

/* An id on 127.0.0.1 with its address resolved towards the group. */
static struct rdma_cm_id *mc_id(struct rdma_event_channel *ch,
				struct sockaddr_in *grp)
{
	struct rdma_cm_id *id;
	struct sockaddr_in src;

	T_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	t_cm_addr(&src, 0);
	T_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src,
			       (struct sockaddr *)grp, 2000),
	     0);
	T_CM_EXPECT_ACK(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, id);
	return id;
}

/* The MULTICAST_JOIN of id: checks it and makes an AH from it. */
static struct ibv_ah *expect_join(struct rdma_event_channel *ch,
				  struct rdma_cm_id *id, void *ctx,
				  const struct sockaddr_in *grp)
{
	struct rdma_cm_event *ev;
	union ibv_gid mgid = { 0 };
	struct ibv_ah *ah;

	mgid.raw[10] = mgid.raw[11] = 0xff;
	memcpy(&mgid.raw[12], &grp->sin_addr, 4);
	ev = T_CM_EXPECT(ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0, id);
	T_PTR_EQ(ev->param.ud.private_data, ctx);
	T_EQ(ev->param.ud.qp_num, 0xffffff);
	T_EQ(ev->param.ud.qkey, UDP_QKEY);
	T_EQ(ev->param.ud.ah_attr.is_global, 1);
	T_EQ(ev->param.ud.ah_attr.port_num, 1);
	T_EQ(ev->param.ud.ah_attr.grh.hop_limit, 64);
	T_MEMEQ(ev->param.ud.ah_attr.grh.dgid.raw, mgid.raw, 16);
	ah = T_NONNULL(ibv_create_ah(id->pd, &ev->param.ud.ah_attr));
	T_EQ(rdma_ack_cm_event(ev), 0);
	return ah;
}

static void send_to_group(struct rdma_cm_id *id, struct ibv_ah *ah,
			  struct ibv_mr *mr, uint32_t seed, uint64_t wr_id)
{
	struct ibv_wc wc;

	t_fill(mr->addr, 64, seed);
	t_post_ud(id->qp, wr_id, ah, 0xffffff, UDP_QKEY, mr, mr->addr, 64,
		  IBV_SEND_SIGNALED);
	T_EXPECT_WC(id->send_cq, &wc, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND);
}

static void expect_recv(struct rdma_cm_id *id, struct ibv_mr *mr, uint32_t seed,
			uint32_t src_qpn)
{
	struct ibv_wc wc;

	T_EXPECT_WC(id->recv_cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, GRH + 64);
	T_EQ(wc.src_qp, src_qpn);
	T_CHECK_FILL((uint8_t *)mr->addr + GRH, 64, seed);
}

int main(void)
{
	struct rdma_cm_join_mc_attr_ex ex = { 0 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *a, *b, *c, *idle;
	struct sockaddr_in grp, other;
	struct sockaddr_in6 grp6 = { .sin6_family = AF_INET6 };
	struct ibv_mr *amr, *bmr, *asend, *bsend;
	struct ibv_ah *aah, *bah;
	int ctx_a, ctx_b, ctx_c;

	t_init("cm_mcast");
	ch = t_cm_channel();
	mc_addr(&grp, GROUP);

	/* An id on no device cannot join. */
	T_EQ(rdma_create_id(ch, &idle, NULL, RDMA_PS_UDP), 0);
	T_NEG_ERRNO(rdma_join_multicast(idle, (struct sockaddr *)&grp, NULL),
		    EINVAL);
	T_EQ(rdma_destroy_id(idle), 0);

	/* a: full member with a QP, attached when the event comes. */
	a = mc_id(ch, &grp);
	t_cm_qp(a, IBV_QPT_UD);
	amr = t_cm_mr(a, 4096);
	asend = t_cm_mr(a, 4096);
	T_EQ(rdma_join_multicast(a, (struct sockaddr *)&grp, &ctx_a), 0);
	aah = expect_join(ch, a, &ctx_a, &grp);
	/* Attached: the QP cannot be destroyed before leaving. */
	T_RET(ibv_destroy_qp(a->qp), EBUSY);

	/* b: send-only, never attached. */
	b = mc_id(ch, &grp);
	t_cm_qp(b, IBV_QPT_UD);
	bmr = t_cm_mr(b, 4096);
	bsend = t_cm_mr(b, 4096);
	ex.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS;
	ex.addr = (struct sockaddr *)&grp;
	T_NEG_ERRNO(rdma_join_multicast_ex(b, &ex, &ctx_b), EINVAL);
	ex.comp_mask |= RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	ex.join_flags = RDMA_MC_JOIN_FLAG_RESERVED;
	T_NEG_ERRNO(rdma_join_multicast_ex(b, &ex, &ctx_b), EINVAL);
	ex.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	T_EQ(rdma_join_multicast_ex(b, &ex, &ctx_b), 0);
	bah = expect_join(ch, b, &ctx_b, &grp);

	/* Not groups: a unicast address; IPv6 groups (not on RoCE v2). */
	mc_addr(&other, "10.9.8.7");
	T_NEG_ERRNO(rdma_join_multicast(b, (struct sockaddr *)&other, NULL),
		    EINVAL);
	T_EQ(inet_pton(AF_INET6, "ff0e::1", &grp6.sin6_addr), 1);
	T_NEG_ERRNO(rdma_join_multicast(b, (struct sockaddr *)&grp6, NULL),
		    EOPNOTSUPP);
	T_CM_EXPECT_NONE(ch, 50);

	/* b sends: a hears it, b (send-only) does not. */
	t_post_recv(a->qp, 1, amr, amr->addr, 4096);
	t_post_recv(b->qp, 1, bmr, bmr->addr, 4096);
	send_to_group(b, bah, bsend, 11, 2);
	expect_recv(a, amr, 11, b->qp->qp_num);
	T_EXPECT_NO_WC(b->recv_cq, T_QUIET_MS);

	/* a sends: a hears itself (the device loops it back), b not. */
	t_post_recv(a->qp, 1, amr, amr->addr, 4096);
	send_to_group(a, aah, asend, 12, 3);
	expect_recv(a, amr, 12, a->qp->qp_num);
	T_EXPECT_NO_WC(b->recv_cq, T_QUIET_MS);

	/* Leaving: a hears nothing more; leaving twice is an error. */
	T_EQ(rdma_leave_multicast(a, (struct sockaddr *)&grp), 0);
	T_NEG_ERRNO(rdma_leave_multicast(a, (struct sockaddr *)&grp),
		    EADDRNOTAVAIL);
	t_post_recv(a->qp, 1, amr, amr->addr, 4096);
	send_to_group(b, bah, bsend, 13, 4);
	T_EXPECT_NO_WC(a->recv_cq, T_QUIET_MS);
	T_EQ(rdma_leave_multicast(b, (struct sockaddr *)&grp), 0);

	/* An attach that fails (the group is full) is MULTICAST_ERROR. */
	{
		struct ibv_qp_init_attr ia = { 0 };
		struct ibv_qp *full[FULL];
		struct rdma_cm_event *ev;
		struct sockaddr_in g2;
		union ibv_gid mgid = { 0 };
		struct ibv_cq *cq;

		mc_addr(&g2, "239.2.3.5");
		mgid.raw[10] = mgid.raw[11] = 0xff;
		memcpy(&mgid.raw[12], &g2.sin_addr, 4);
		cq = T_NONNULL(ibv_create_cq(a->verbs, 4, NULL, NULL, 0));
		ia.send_cq = ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_UD;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		for (int i = 0; i < FULL; i++) {
			full[i] = T_NONNULL(ibv_create_qp(a->pd, &ia));
			T_OK(ibv_attach_mcast(full[i], &mgid, 0));
		}
		T_EQ(rdma_join_multicast(a, (struct sockaddr *)&g2, &ctx_c), 0);
		ev = T_CM_EXPECT(ch, RDMA_CM_EVENT_MULTICAST_ERROR,
				 T_CM_ANY_STATUS, a);
		T_EQ(ev->status, -1);
		T_PTR_EQ(ev->param.ud.private_data, &ctx_c);
		T_EQ(rdma_ack_cm_event(ev), 0);
		/* Nothing attached: leaving only forgets the join. */
		T_EQ(rdma_leave_multicast(a, (struct sockaddr *)&g2), 0);
		for (int i = 0; i < FULL; i++) {
			T_OK(ibv_detach_mcast(full[i], &mgid, 0));
			T_OK(ibv_destroy_qp(full[i]));
		}
		T_OK(ibv_destroy_cq(cq));
	}

	/* c joins and goes away before its event is fetched. */
	c = mc_id(ch, &grp);
	T_EQ(rdma_join_multicast(c, (struct sockaddr *)&grp, &ctx_c), 0);
	T_EQ(rdma_destroy_id(c), 0);
	T_CM_EXPECT_NONE(ch, 50);

	T_OK(ibv_destroy_ah(aah));
	T_OK(ibv_destroy_ah(bah));
	t_cm_mr_free(amr);
	t_cm_mr_free(asend);
	t_cm_mr_free(bmr);
	t_cm_mr_free(bsend);
	rdma_destroy_qp(a);
	rdma_destroy_qp(b);
	T_EQ(rdma_destroy_id(a), 0);
	T_EQ(rdma_destroy_id(b), 0);
	rdma_destroy_event_channel(ch);
	t_pass();
}
