/* SPDX-License-Identifier: MIT */
/*
 * Waiting with a deadline: completions, async events, readable fds.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "t_util.h"

bool t_fd_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t end = t_now_ms() + (uint64_t)timeout_ms;
	int ret;

	for (;;) {
		uint64_t now = t_now_ms();
		int left = now >= end ? 0 : (int)(end - now);

		ret = poll(&pfd, 1, left);
		if (ret > 0)
			return (pfd.revents & POLLIN) != 0;
		if (ret == 0)
			return false;
		if (errno != EINTR)
			T_FAIL("poll(fd %d): %s", fd, strerror(errno));
	}
}

/* The last t_poll() of this thread: for the report of a timeout. */
static _Thread_local struct {
	unsigned int polls;
	uint64_t max_gap_ms; /* longest time between two polls */
	uint64_t last_ms;    /* when the last poll ran */
} poll_stats;

int t_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t start = t_now_ms();
	unsigned int spins = 0;
	int n;

	poll_stats.polls = 0;
	poll_stats.max_gap_ms = 0;
	poll_stats.last_ms = start;
	for (;;) {
		uint64_t now = t_now_ms();

		if (now - poll_stats.last_ms > poll_stats.max_gap_ms)
			poll_stats.max_gap_ms = now - poll_stats.last_ms;
		poll_stats.last_ms = now;
		poll_stats.polls++;
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			T_FAIL("ibv_poll_cq: returned %d", n);
		if (n == 1)
			return 1;
		if (n != 0)
			T_FAIL("ibv_poll_cq(num_entries 1): returned %d", n);
		if (t_now_ms() - start >= (uint64_t)timeout_ms)
			return 0;
		/* Spin briefly, then leave the CPU to the daemon. */
		if (++spins < 1000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

/* One line of /proc/<pid>/<what>, "" when unreadable. */
static void proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The daemon's state: S in do_epoll_wait with a run time that does not
 * grow is an engine asleep (a missed doorbell), R with a growing wait
 * time one waiting for a CPU (starvation). */
static void daemon_report(const char *when)
{
	pid_t pid = t_daemon_pid();
	char stat[512], wchan[64], sched[128];
	const char *st;

	if (pid <= 0)
		return;
	proc_read(pid, "stat", stat, sizeof(stat));
	proc_read(pid, "wchan", wchan, sizeof(wchan));
	proc_read(pid, "schedstat", sched, sizeof(sched));
	st = strrchr(stat, ')');
	t_log("daemon %d %s: state %c wchan %s schedstat (run ns, wait ns, "
	      "slices) %s",
	      (int)pid, when, st && st[1] ? st[2] : '?', wchan[0] ? wchan : "?",
	      sched[0] ? sched : "?");
}

/* Say why no completion came: whether it comes right after the
 * deadline (the poller was off the CPU), and what the daemon does. */
static void timeout_report(struct ibv_cq *cq)
{
	uint64_t now = t_now_ms();
	struct ibv_wc wc;

	t_log("%u polls, longest gap %llu ms, the last %llu ms ago",
	      poll_stats.polls, (unsigned long long)poll_stats.max_gap_ms,
	      (unsigned long long)(now - poll_stats.last_ms));
	daemon_report("now");
	t_sleep_ms(T_QUIET_MS);
	daemon_report("later");
	if (ibv_poll_cq(cq, 1, &wc) == 1)
		t_log("a completion came %d ms after the deadline: wr_id %#llx",
		      T_QUIET_MS, (unsigned long long)wc.wr_id);
	else
		t_log("no completion %d ms after the deadline either",
		      T_QUIET_MS);
}

static void describe_wc(char *buf, size_t len, const struct ibv_wc *wc)
{
	snprintf(buf, len,
		 "wr_id %#llx status \"%s\" (%d) opcode %s (%d) byte_len %u "
		 "qp_num %#x vendor_err %#x wc_flags %#x",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 (int)wc->status, t_wc_opcode_name(wc->opcode), (int)wc->opcode,
		 wc->byte_len, wc->qp_num, wc->vendor_err, wc->wc_flags);
}

void t_expect_wc_at(const char *file, int line, struct ibv_cq *cq,
		    struct ibv_wc *wc, uint64_t wr_id,
		    enum ibv_wc_status status, int opcode)
{
	struct ibv_wc local;
	char desc[256];

	if (!wc)
		wc = &local;
	if (!t_poll(cq, wc, T_WAIT_MS)) {
		timeout_report(cq);
		t_fail_at(file, line,
			  "no completion within %d ms (expected wr_id %#llx "
			  "status \"%s\")",
			  T_WAIT_MS, (unsigned long long)wr_id,
			  ibv_wc_status_str(status));
	}
	describe_wc(desc, sizeof(desc), wc);
	if (wc->status != status)
		t_fail_at(file, line,
			  "completion status \"%s\" (%d), expected \"%s\" "
			  "(%d): %s",
			  ibv_wc_status_str(wc->status), (int)wc->status,
			  ibv_wc_status_str(status), (int)status, desc);
	if (wc->wr_id != wr_id)
		t_fail_at(file, line,
			  "completion wr_id %#llx, expected %#llx: %s",
			  (unsigned long long)wc->wr_id,
			  (unsigned long long)wr_id, desc);
	if (status == IBV_WC_SUCCESS && opcode != T_ANY_OPCODE &&
	    (int)wc->opcode != opcode)
		t_fail_at(file, line,
			  "completion opcode %s (%d), expected %s "
			  "(%d): %s",
			  t_wc_opcode_name(wc->opcode), (int)wc->opcode,
			  t_wc_opcode_name(opcode), opcode, desc);
}

void t_expect_no_wc_at(const char *file, int line, struct ibv_cq *cq,
		       int quiet_ms)
{
	struct ibv_wc wc;
	char desc[256];

	if (t_poll(cq, &wc, quiet_ms)) {
		describe_wc(desc, sizeof(desc), &wc);
		t_fail_at(file, line, "unexpected completion: %s", desc);
	}
}

int t_async_wait(struct ibv_context *ctx, struct ibv_async_event *ev,
		 int timeout_ms)
{
	if (!t_fd_readable(ctx->async_fd, timeout_ms))
		return 0;
	if (ibv_get_async_event(ctx, ev))
		T_FAIL("async_fd readable but ibv_get_async_event failed: %s",
		       t_errname(errno));
	return 1;
}

static const void *event_object(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return NULL;
	case IBV_EVENT_WQ_FATAL:
		return ev->element.wq;
	default:
		return ev->element.qp;
	}
}

void t_expect_async_at(const char *file, int line, struct ibv_context *ctx,
		       enum ibv_event_type type, const void *obj)
{
	struct ibv_async_event ev;
	const void *got;

	if (!t_async_wait(ctx, &ev, T_WAIT_MS))
		t_fail_at(file, line,
			  "no async event within %d ms (expected "
			  "\"%s\")",
			  T_WAIT_MS, ibv_event_type_str(type));
	got = event_object(&ev);
	ibv_ack_async_event(&ev);
	if (ev.event_type != type)
		t_fail_at(file, line,
			  "async event \"%s\" (%d), expected \"%s\" "
			  "(%d)",
			  ibv_event_type_str(ev.event_type), (int)ev.event_type,
			  ibv_event_type_str(type), (int)type);
	if (obj && got != obj)
		t_fail_at(file, line,
			  "async event \"%s\" for object %p, "
			  "expected %p",
			  ibv_event_type_str(type), got, obj);
}

void t_expect_no_async_at(const char *file, int line, struct ibv_context *ctx,
			  int quiet_ms)
{
	struct ibv_async_event ev;

	if (t_async_wait(ctx, &ev, quiet_ms)) {
		ibv_ack_async_event(&ev);
		t_fail_at(file, line, "unexpected async event \"%s\" (%d)",
			  ibv_event_type_str(ev.event_type),
			  (int)ev.event_type);
	}
}
