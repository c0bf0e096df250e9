/* SPDX-License-Identifier: MIT */
/*
 * Many events waiting on one channel: 1000 address resolutions queue 1000
 * events, all of them arrive, and the channel's fd is readable exactly
 * while some wait; events of ids destroyed before they were fetched
 * vanish, and the fd says so (a non-blocking read finds nothing).
 */
#include <fcntl.h>

#include "t_cm.h"

#define N 1000

static struct rdma_cm_id *ids[N];

int main(void)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	int got = 0;

	t_init("cm_many_events");
	ch = t_cm_channel();
	t_cm_addr(&dst, 4444);
	for (int i = 0; i < N; i++) {
		T_EQ(rdma_create_id(ch, &ids[i], (void *)(uintptr_t)(i + 1),
				    RDMA_PS_TCP),
		     0);
		T_EQ(rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst,
				       1000),
		     0);
	}
	while ((ev = t_cm_next(ch, 0))) {
		T_EQ(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		T_EQ(ev->status, 0);
		/* In the order they were asked for. */
		T_PTR_EQ(ev->id, ids[got]);
		T_EQ(rdma_ack_cm_event(ev), 0);
		got++;
	}
	T_EQ(got, N);

	/* Half the ids go before their next events are fetched. */
	for (int i = 0; i < N; i++)
		T_EQ(rdma_resolve_route(ids[i], 1000), 0);
	for (int i = 0; i < N; i += 2) {
		T_EQ(rdma_destroy_id(ids[i]), 0);
		ids[i] = NULL;
	}
	got = 0;
	while ((ev = t_cm_next(ch, 0))) {
		T_EQ(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
		T_EQ((uintptr_t)ev->id->context % 2, 0); /* odd i: even ctx */
		T_EQ(rdma_ack_cm_event(ev), 0);
		got++;
	}
	T_EQ(got, N / 2);
	/* Nothing is left to read, and a non-blocking fetch says so. */
	T_EQ(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
	T_NEG_ERRNO(rdma_get_cm_event(ch, &ev), EAGAIN);
	for (int i = 1; i < N; i += 2)
		T_EQ(rdma_destroy_id(ids[i]), 0);
	rdma_destroy_event_channel(ch);
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
