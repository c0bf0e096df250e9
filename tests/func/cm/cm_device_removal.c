/* SPDX-License-Identifier: MIT */
/*
 * A device going away under the rdma_cm: `softrdma link delete` of the
 * device (softrdma0, on lo) that a connected pair and an id with only its
 * address resolved are on.  Each id gets DEVICE_REMOVAL (status 0) on its
 * own channel, exactly once; the listener, bound to 127.0.0.1 and so (as
 * in the kernel) on no device, gets none; the application can still
 * destroy its QPs and ids; the daemon keeps nothing of them; and with no
 * device left on 127.0.0.1 an address there no longer resolves.
 */
#include <errno.h>
#include <string.h>

#include "common/proto_admin.h"
#include "t_cm.h"

#define WANT 3

struct seen {
	struct rdma_cm_id *id[WANT];
	int count[WANT];
};

/* Take every event of ch for up to ms; each must be DEVICE_REMOVAL for
 * one of the ids. */
static void collect(struct rdma_event_channel *ch, struct seen *s, int ms)
{
	struct rdma_cm_event *ev;

	while ((ev = t_cm_next(ch, ms))) {
		int k = -1;

		for (int i = 0; i < WANT; i++)
			if (s->id[i] == ev->id)
				k = i;
		if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL || k < 0)
			T_FAIL("unexpected event %s (status %d)",
			       rdma_event_str(ev->event), ev->status);
		T_EQ(ev->status, 0);
		s->count[k]++;
		T_EQ(rdma_ack_cm_event(ev), 0);
	}
}

int main(void)
{
	struct srd_admin_link_del_req del = { .name = "softrdma0" };
	struct rdma_event_channel *bch;
	struct rdma_cm_id *bound, *again;
	struct sockaddr_in sin;
	struct t_cm_pair p;
	struct seen s = { 0 };

	t_init("cm_device_removal");
	memset(&p, 0, sizeof(p));
	t_cm_pair_connect(&p);
	bch = t_cm_channel();
	T_EQ(rdma_create_id(bch, &bound, NULL, RDMA_PS_TCP), 0);
	t_cm_addr(&sin, 0);
	T_EQ(rdma_bind_addr(bound, (struct sockaddr *)&sin), 0);
	T_ASSERT(!bound->verbs);
	T_EQ(rdma_resolve_addr(bound, NULL, (struct sockaddr *)&sin, 1000), 0);
	T_CM_EXPECT_ACK(bch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, bound);
	T_ASSERT(bound->verbs);
	T_EQ(strcmp(ibv_get_device_name(bound->verbs->device), "softrdma0"), 0);

	t_cm_admin(SRD_ADMIN_LINK_DEL, &del, sizeof(del), NULL, 0);

	s.id[0] = p.server;
	s.id[1] = p.client;
	s.id[2] = bound;
	collect(p.pch, &s, 2000);
	collect(p.ach, &s, 500);
	collect(bch, &s, 500);
	for (int i = 0; i < WANT; i++)
		if (s.count[i] != 1)
			T_FAIL("id %d got DEVICE_REMOVAL %d times", i,
			       s.count[i]);

	/* What the application holds can still be let go of. */
	rdma_destroy_qp(p.client);
	rdma_destroy_qp(p.server);
	T_EQ(rdma_destroy_id(p.client), 0);
	T_EQ(rdma_destroy_id(p.server), 0);
	T_EQ(rdma_destroy_id(p.listen), 0);
	T_EQ(rdma_destroy_id(bound), 0);
	T_CM_WAIT_IDLE(0, 5000);

	/* Nothing serves 127.0.0.1 any more: binding it needs no device,
	 * reaching it does. */
	T_EQ(rdma_create_id(bch, &again, NULL, RDMA_PS_TCP), 0);
	T_EQ(rdma_bind_addr(again, (struct sockaddr *)&sin), 0);
	T_EQ(rdma_resolve_addr(again, NULL, (struct sockaddr *)&sin, 1000), 0);
	T_CM_EXPECT_ACK(bch, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, again);
	T_EQ(rdma_destroy_id(again), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(p.pch);
	rdma_destroy_event_channel(p.ach);
	t_pass();
}
