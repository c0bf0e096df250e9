/* SPDX-License-Identifier: MIT */
/*
 * A placement ring is shared with its owner, who may write anything into
 * it: the daemon reads back only slot states, takes an unknown one for a
 * failed target, and waits on a live owner only so long.  Root starts the
 * daemon; a target T (one user) registers memory on demand and, while a
 * writer W (another user) streams 64 KiB WRITEs into it, overwrites the
 * states and sequence numbers of its ring's slots with random values.
 * W's WRITEs complete, each with success or an error a peer may cause
 * (REM_ACCESS_ERR, REM_OP_ERR, RETRY_EXC_ERR, then WR_FLUSH_ERR), within
 * the test's time; afterwards the daemon still serves a WRITE between two
 * fresh processes of W's user, data intact.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/place.h"
#include "t_util.h"

#define LEN (1024u * 1024)
#define MSG (64u * 1024)
#define DEPTH 4
#define PSN 0x4567
#define RUN_MS 2000

enum step {
	S_EP,	  /* T -> W: its QP and MR */
	S_WRITER, /* W -> T: its QP */
	S_DONE,	  /* W -> T: its stream is over */
};

static uid_t ua, ub;

/* Our own mapping of the ring the daemon gave our library. */
static struct srd_place_ring *find_ring(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long lo, hi;
	void *ring = NULL;

	T_NONNULL(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "softrdma-place") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    hi - lo == SRD_PLACE_RING_BYTES)
			ring = (void *)lo;
	fclose(f);
	T_NONNULL(ring);
	return ring;
}

/* In a child of T, which shares the ring's mapping: as another thread of
 * T's the sanitizers would take its stores for a race of T's own. */
static void scribble(struct srd_place_ring *r)
{
	unsigned int seed = 1;

	for (;;) {
		uint32_t i = (uint32_t)rand_r(&seed) % SRD_PLACE_SLOTS;
		uint32_t v = (uint32_t)rand_r(&seed);

		__atomic_store_n(&r->job[i].state, v % 3 ? v % 8 : v,
				 __ATOMIC_RELAXED);
		if (!(v & 0x700))
			__atomic_store_n(&r->job[i].seq, v, __ATOMIC_RELAXED);
		if (!(v & 0x7000))
			usleep(50);
	}
}

static int target(int sock, void *arg)
{
	struct t_side s;
	struct srd_place_ring *ring;
	pid_t child;

	(void)arg;
	t_become(ua);
	t_side_open(&s, LEN, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	t_side_serve(&s, sock, S_EP, S_WRITER, PSN);
	ring = find_ring();
	child = fork();
	T_ASSERT(child >= 0);
	if (!child)
		scribble(ring);
	/* The writer's stream, and its errors' bounded waits. */
	T_ASSERT(t_fd_readable(sock, 40000));
	t_step_recv(sock, S_DONE);
	T_OK(kill(child, SIGKILL));
	T_EQ(waitpid(child, NULL, 0), child);
	/* Our own ring is ours to wreck: closing must not hang. */
	t_side_close(&s);
	return 0;
}

static bool peer_may_cause(enum ibv_wc_status st)
{
	return st == IBV_WC_SUCCESS || st == IBV_WC_REM_ACCESS_ERR ||
	       st == IBV_WC_REM_OP_ERR || st == IBV_WC_RETRY_EXC_ERR;
}

static int writer(int sock, void *arg)
{
	uint32_t posted = 0, done = 0, ok = 0;
	uint64_t stop_at, give_up;
	bool failed = false;
	struct t_side s;
	struct t_ep t;
	struct ibv_wc wc;

	(void)arg;
	t_become(ub);
	t_side_open(&s, LEN, 0);
	t_fill(s.buf, LEN, 9);
	t = t_side_dial(&s, sock, S_EP, S_WRITER, PSN, NULL);
	stop_at = t_now_ms() + RUN_MS;
	/* The owner's wait is bounded (5 s), then the retries (7 x 67 ms). */
	give_up = stop_at + 20000;
	while (done != posted || (!failed && t_now_ms() < stop_at)) {
		if (!failed && t_now_ms() < stop_at && posted - done < DEPTH) {
			t_post_send(s.qp, posted, IBV_WR_RDMA_WRITE, s.mr,
				    s.buf + (posted % 16) * MSG, MSG,
				    IBV_SEND_SIGNALED,
				    t.addr + (posted % 16) * MSG, t.rkey);
			posted++;
			continue;
		}
		T_EQ(t_poll(s.cq, &wc, 1000), 1);
		T_EQ(wc.wr_id, done);
		done++;
		if (failed) {
			T_WC_STATUS(&wc, IBV_WC_WR_FLUSH_ERR);
		} else if (!peer_may_cause(wc.status)) {
			T_FAIL("WRITE %u: %s", done - 1,
			       ibv_wc_status_str(wc.status));
		} else if (wc.status != IBV_WC_SUCCESS) {
			failed = true;
			t_log("stream ended after %u WRITEs: %s", ok,
			      ibv_wc_status_str(wc.status));
		} else {
			ok++;
		}
		T_ASSERT(t_now_ms() < give_up);
	}
	t_step_send(sock, S_DONE, NULL);
	t_side_close(&s);
	return 0;
}

/* Two fresh processes of W's user: a WRITE between them lands intact. */
static int fresh_target(int sock, void *arg)
{
	struct t_side s;

	(void)arg;
	t_become(ub);
	t_side_open(&s, LEN, IBV_ACCESS_REMOTE_WRITE);
	t_side_serve(&s, sock, S_EP, S_WRITER, PSN);
	t_step_recv(sock, S_DONE);
	T_CHECK_FILL(s.buf, MSG, 3);
	t_side_close(&s);
	return 0;
}

static int fresh_writer(int sock, void *arg)
{
	struct t_side s;
	struct t_ep t;
	struct ibv_wc wc;

	(void)arg;
	t_become(ub);
	t_side_open(&s, LEN, 0);
	t_fill(s.buf, MSG, 3);
	t = t_side_dial(&s, sock, S_EP, S_WRITER, PSN, NULL);
	t_post_send(s.qp, 1, IBV_WR_RDMA_WRITE, s.mr, s.buf, MSG,
		    IBV_SEND_SIGNALED, t.addr, t.rkey);
	T_EXPECT_WC(s.cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_step_send(sock, S_DONE, NULL);
	t_side_close(&s);
	return 0;
}

static void pair(int (*tfn)(int, void *), int (*wfn)(int, void *))
{
	struct t_child t, w;

	t_fork(&t, tfn, NULL);
	t_fork(&w, wfn, NULL);
	t_step_relay(t.fd, w.fd, S_EP);
	t_step_relay(w.fd, t.fd, S_WRITER);
	T_ASSERT(t_fd_readable(w.fd, 40000));
	t_step_relay(w.fd, t.fd, S_DONE);
	T_EQ(t_child_wait(&w, 40000), 0);
	T_EQ(t_child_wait(&t, 40000), 0);
}

int main(void)
{
	struct t_dev d;

	t_init("place_hostile_ring");
	if (geteuid())
		t_skip("not root: runs as two users");
	ua = t_user("srdplacea");
	ub = t_user("srdplaceb");
	t_dev_open(&d); /* a root daemon, as the system's */
	pair(target, writer);
	pair(fresh_target, fresh_writer);
	t_dev_close(&d);
	t_pass();
}
