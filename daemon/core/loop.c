/* SPDX-License-Identifier: MIT */
/*
 * The main loop: one thread serves every command socket and runs the
 * transport engine.  While work keeps coming it polls (checking the epoll
 * set without blocking every so often, so commands are served without a
 * system call per pass); once idle for spin_ns it tells clients it sleeps
 * (so they kick the doorbell) and blocks in epoll until the doorbell, a
 * command or the engine's next timer.  While idle but still polling it may
 * yield the CPU between passes (spin_yield: few CPUs), so the processes it
 * waits for get to run.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/core/loop_ev.h"

#define POLL_EVERY_PASSES 64
#define POLL_EVERY_NS 20000
#define MAX_EVENTS 64

static void drain(int fd, size_t sz)
{
	uint8_t buf[sizeof(struct signalfd_siginfo)];

	while (read(fd, buf, sz) == (ssize_t)sz)
		;
}

/*
 * Other fds the loop serves (netlink, sockets of the wires): tags
 * SRD_EV_SRC_BASE + slot, so they never collide with a client pointer.
 */
struct loop_src {
	int fd;
	void (*cb)(struct srd_daemon *d, void *arg);
	void *arg;
};
static struct loop_src srcs[SRD_EV_SRC_MAX];

int loop_add_fd(struct srd_daemon *d, int fd,
		void (*cb)(struct srd_daemon *d, void *arg), void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned int i = 0; i < SRD_EV_SRC_MAX; i++) {
		if (srcs[i].cb)
			continue;
		ev.data.u64 = SRD_EV_SRC_BASE + i;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev))
			return -errno;
		srcs[i] = (struct loop_src){ .fd = fd, .cb = cb, .arg = arg };
		return 0;
	}
	return -ENOSPC;
}

void loop_del_fd(struct srd_daemon *d, int fd)
{
	for (unsigned int i = 0; i < SRD_EV_SRC_MAX; i++) {
		if (srcs[i].cb && srcs[i].fd == fd) {
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
			srcs[i] = (struct loop_src){ .fd = -1 };
		}
	}
}

static void handle_events(struct srd_daemon *d, struct epoll_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag >= SRD_EV_SRC_BASE &&
		    tag < SRD_EV_SRC_BASE + SRD_EV_SRC_MAX) {
			struct loop_src *src = &srcs[tag - SRD_EV_SRC_BASE];

			if (src->cb)
				src->cb(d, src->arg);
			continue;
		}
		switch (tag) {
		case SRD_EV_LISTEN:
			client_accept_all(d);
			break;
		case SRD_EV_DOORBELL:
			drain(d->doorbell_fd, sizeof(uint64_t));
			break;
		case SRD_EV_SIGNAL:
			drain(d->sig_fd, sizeof(struct signalfd_siginfo));
			d->stop = true;
			break;
		default:
			client_input(ev[i].data.ptr, ev[i].events);
			break;
		}
	}
}

/* Wait up to timeout_ns (UINT64_MAX: forever) and serve what came.
 * Returns the number of events. */
static int poll_events(struct srd_daemon *d, uint64_t timeout_ns)
{
	static bool no_pwait2;
	struct epoll_event ev[MAX_EVENTS];
	struct timespec ts;
	int n = -1;

	if (timeout_ns && timeout_ns != UINT64_MAX && !no_pwait2) {
		/* Nanosecond timeouts: retransmit timers are microseconds. */
		ts.tv_sec = timeout_ns / 1000000000ull;
		ts.tv_nsec = timeout_ns % 1000000000ull;
		n = epoll_pwait2(d->epfd, ev, MAX_EVENTS, &ts, NULL);
		if (n < 0 && errno == ENOSYS)
			no_pwait2 = true;
	}
	if (n < 0 && (!timeout_ns || timeout_ns == UINT64_MAX || no_pwait2)) {
		int ms;

		if (timeout_ns == UINT64_MAX)
			ms = -1;
		else if (timeout_ns / 1000000 >= INT_MAX)
			ms = INT_MAX;
		else
			ms = (timeout_ns + 999999) / 1000000;
		n = epoll_wait(d->epfd, ev, MAX_EVENTS, ms);
	}
	if (n <= 0)
		return 0;
	handle_events(d, ev, n);
	return n;
}

static bool idle_expired(struct srd_daemon *d, uint64_t now)
{
	return d->idle_exit_ns && !d->nclients && !idle_held(d, now) &&
	       now - d->idle_since >= d->idle_exit_ns;
}

/* How long the engine may sleep: until its next timer or the idle exit. */
static uint64_t sleep_timeout(struct srd_daemon *d, uint64_t now)
{
	uint64_t until = engine_next_deadline(d);

	if (cm_next_deadline(d) < until)
		until = cm_next_deadline(d);
	if (cq_mod_next_deadline(d) < until)
		until = cq_mod_next_deadline(d);

	if (idle_deadline(d, now) < until)
		until = idle_deadline(d, now);
	if (until == UINT64_MAX)
		return UINT64_MAX;
	return until > now ? until - now : 0;
}

/* One pass of the device: the transport engine, then the CM (QP1), then
 * the completion events whose moderation period ran out. */
static bool device_pass(struct srd_daemon *d, uint64_t now)
{
	bool work = engine_progress(d, now);

	work = cm_progress(d, now) || work;
	return cq_mod_progress(d, now) || work;
}

static void engine_sleep(struct srd_daemon *d)
{
	_Atomic uint32_t *sleeping =
		(_Atomic uint32_t *)&d->dev_page->engine_sleeping;
	uint64_t now, timeout;

	atomic_store_explicit(sleeping, 1, memory_order_relaxed);
	d->dev_page->sleeps++;
	/* Pairs with the library's fence between its prod store and its
	 * load of engine_sleeping: either it kicks the doorbell or this
	 * last pass sees its WQEs. */
	atomic_thread_fence(memory_order_seq_cst);
	now = srd_now_ns();
	if (!device_pass(d, now)) {
		timeout = sleep_timeout(d, now);
		if (timeout)
			poll_events(d, timeout);
	}
	atomic_store_explicit(sleeping, 0, memory_order_relaxed);
}

int daemon_run(struct srd_daemon *d)
{
	uint64_t now = srd_now_ns();
	uint64_t last_work = now, last_poll = now;
	unsigned int passes = 0;

	while (!d->stop) {
		bool work = device_pass(d, now);

		now = srd_now_ns();
		if (work)
			last_work = now;
		if (++passes >= POLL_EVERY_PASSES ||
		    now - last_poll >= POLL_EVERY_NS) {
			passes = 0;
			last_poll = now;
			if (poll_events(d, 0))
				last_work = now = srd_now_ns();
			if (idle_expired(d, now))
				break;
		}
		if (work)
			continue;
		if (now - last_work < d->spin_ns) {
			/* Idle but still polling: on a machine with few CPUs
			 * the processes we wait for may need this one. */
			if (d->spin_yield)
				sched_yield();
			continue;
		}
		engine_sleep(d);
		now = last_work = last_poll = srd_now_ns();
		if (idle_expired(d, now))
			break;
	}
	return 0;
}
