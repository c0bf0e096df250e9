/* SPDX-License-Identifier: MIT */
/*
 * An idle daemon uses no CPU.  With a context open, a CQ and a connected
 * RC pair created and 1000 transfers completed, nothing more is posted for
 * 3 s: the daemon must block in epoll (it busy-polls the rings only for a
 * short while after the last work), so its utime + stime from
 * /proc/<pid>/stat may grow by at most 2 clock ticks in that time.  Then
 * one more transfer must still complete: the doorbell wakes it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_util.h"

#define TRANSFERS 1000
#define MSG 1024
#define IDLE_MS 3000
#define MAX_TICKS 2

/* utime + stime of a process, in clock ticks; and its state letter. */
static long long cpu_ticks(pid_t pid, char *state)
{
	char path[64], buf[1024], *p;
	long long utime, stime;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		T_FAIL("%s: %s", path, strerror(errno));
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		T_FAIL("%s: read %zd", path, len);
	buf[len] = 0;
	/* "pid (comm) state ppid ...": utime and stime are fields 14 and 15,
	 * the 12th and 13th after the state. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lld %lld",
			 state, &utime, &stime) != 3)
		T_FAIL("%s: cannot parse \"%s\"", path, buf);
	return utime + stime;
}

static void transfer(struct t_pair *p, struct t_buf *s, struct t_buf *r,
		     uint32_t i)
{
	uint32_t len = 1 + (i * 131u) % MSG;
	struct ibv_wc wc;

	t_fill(s->p, len, i);
	if (i % 2) {
		t_post_recv(p->b, i, r->mr, r->p, MSG);
		t_post_send(p->a, i, IBV_WR_SEND, s->mr, s->p, len,
			    IBV_SEND_SIGNALED, 0, 0);
		T_EXPECT_WC(p->cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		T_EXPECT_WC(p->cq_b, &wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		T_EQ(wc.byte_len, len);
	} else {
		t_post_send(p->a, i, IBV_WR_RDMA_WRITE, s->mr, s->p, len,
			    IBV_SEND_SIGNALED, (uintptr_t)r->p, r->mr->rkey);
		T_EXPECT_WC(p->cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
	T_CHECK_FILL(r->p, len, i);
}

int main(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	long long t0, t1;
	struct t_buf s, r;
	struct t_pair p;
	struct t_dev d;
	char st0, st1;
	pid_t dpid;

	t_init("idle_cpu");
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, MSG, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, MSG, T_ACCESS_ALL);
	dpid = t_daemon_pid();
	if (dpid <= 0)
		T_FAIL("no daemon process found for socket %s",
		       t_socket_name());

	for (uint32_t i = 0; i < TRANSFERS; i++)
		transfer(&p, &s, &r, i);

	/* Measured from the last completion on, spin-down included. */
	t0 = cpu_ticks(dpid, &st0);
	t_sleep_ms(IDLE_MS);
	t1 = cpu_ticks(dpid, &st1);
	t_log("daemon %d: %lld ticks in %d ms idle (%ld ticks/s), state %c",
	      (int)dpid, t1 - t0, IDLE_MS, hz, st1);
	if (t1 - t0 > MAX_TICKS)
		T_FAIL("the idle daemon used %lld clock ticks in %d ms "
		       "(limit %d): it spins instead of sleeping in epoll",
		       t1 - t0, IDLE_MS, MAX_TICKS);

	/* Asleep, it still serves the next post. */
	transfer(&p, &s, &r, TRANSFERS + 1);

	t_buf_free(&r);
	t_buf_free(&s);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
