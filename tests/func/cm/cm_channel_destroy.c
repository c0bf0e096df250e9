/* SPDX-License-Identifier: MIT */
/*
 * An event channel destroyed while another thread uses it, as rping's
 * event thread does at every exit: the main thread destroys the id (which
 * waits for the thread's last ack) and the channel, and the thread, back
 * in rdma_get_cm_event, must wait for good, not fail (rping exits 255 on
 * any error there, racing main's exit 0).  Two cases:
 *   the thread calls rdma_get_cm_event after the destroy (it was between
 *     two calls: preempted after its ack);
 *   the thread is blocked in rdma_get_cm_event when the channel goes.
 * Either way the call must not return within a second.
 */
#include <pthread.h>
#include <unistd.h>

#include "t_cm.h"

struct waiter {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id; /* resolved by the thread (none: just wait) */
	unsigned int late_ms;  /* sleep after each ack, before the next call */
	_Atomic int acked;
	_Atomic int returned; /* the call after the destroy came back */
	_Atomic int err;
};

static void *wait_events(void *arg)
{
	struct waiter *w = arg;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;

	/* The thread makes the event it waits for: the main thread touches
	 * the id only after the thread's ack (acked orders the two). */
	if (w->id) {
		t_cm_addr(&dst, 1);
		T_EQ(rdma_resolve_addr(w->id, NULL, (struct sockaddr *)&dst,
				       1000),
		     0);
	}
	for (;;) {
		if (rdma_get_cm_event(w->ch, &ev)) {
			w->err = errno;
			w->returned = 1;
			return NULL;
		}
		rdma_ack_cm_event(ev);
		w->acked++;
		usleep(w->late_ms * 1000);
	}
}

static void check_stays_blocked(struct waiter *w, const char *what)
{
	usleep(1000 * 1000);
	if (w->returned)
		T_FAIL("%s: rdma_get_cm_event on the destroyed channel "
		       "returned (errno %d) instead of waiting",
		       what, w->err);
}

int main(void)
{
	static struct waiter late = { .late_ms = 300 }, blocked = { 0 };
	pthread_t t;

	t_init("cm_channel_destroy");

	/* Between two calls: the thread acks ADDR_RESOLVED, sleeps, and
	 * comes back after main has destroyed the id and the channel. */
	late.ch = t_cm_channel();
	T_EQ(rdma_create_id(late.ch, &late.id, NULL, RDMA_PS_TCP), 0);
	T_EQ(pthread_create(&t, NULL, wait_events, &late), 0);
	for (int i = 0; i < 5000 && !late.acked; i++)
		usleep(1000);
	T_EQ(late.acked, 1);
	T_EQ(rdma_destroy_id(late.id), 0);
	rdma_destroy_event_channel(late.ch);
	check_stays_blocked(&late, "a call after the destroy");

	/* Blocked in the call when the channel goes. */
	blocked.ch = t_cm_channel();
	T_EQ(pthread_create(&t, NULL, wait_events, &blocked), 0);
	usleep(200 * 1000);
	rdma_destroy_event_channel(blocked.ch);
	check_stays_blocked(&blocked, "a call blocked at the destroy");

	/* Both threads wait for good: exit() ends them. */
	t_pass();
	return 0;
}
