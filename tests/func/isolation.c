/* SPDX-License-Identifier: MIT */
/*
 * The device distrusts what clients write in shared memory.  A child opens
 * the device, creates QPs, a CQ and an SRQ, then for a while scribbles
 * random bytes over every shared mapping the daemon gave it (QP rings and
 * their producer indices, CQ rings and their consumer/arm words, the SRQ
 * ring: /memfd:softrdma-qp, -cq, -srq in /proc/self/maps), posting and
 * ringing the doorbell in between, then exits.  All the while the parent
 * runs verified RC transfers on its own QPs: every one succeeds, and the
 * daemon is still the same process, alive and serving, at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define SCRIBBLE_MS 1500
#define MAX_MAPS 64

struct report {
	int qp_maps, cq_maps, srq_maps;
	int rounds;
};

struct map {
	uint8_t *start;
	size_t len;
};

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Writable shared mappings of the daemon's memfds, by kind. */
static int find_maps(struct map *maps, struct report *rep)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f) && n < MAX_MAPS) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (perms[1] != 'w' || perms[3] != 's')
			continue;
		if (strstr(line, "memfd:softrdma-qp"))
			rep->qp_maps++;
		else if (strstr(line, "memfd:softrdma-cq"))
			rep->cq_maps++;
		else if (strstr(line, "memfd:softrdma-srq"))
			rep->srq_maps++;
		else
			continue;
		maps[n].start = (uint8_t *)lo;
		maps[n].len = hi - lo;
		n++;
	}
	fclose(f);
	return n;
}

static void scribble(struct map *m)
{
	uint64_t *w = (uint64_t *)m->start;
	size_t i, words = m->len / 8;

	switch (rnd() % 4) {
	case 0: /* everything random */
		for (i = 0; i < words; i++)
			w[i] = rnd();
		break;
	case 1: /* only the control words: producer/consumer indices */
		for (i = 0; i < 4096 / 8 && i < words; i += 8)
			w[i] = rnd();
		break;
	case 2: /* plausible-looking indices just ahead */
		for (i = 0; i < 4096 / 8 && i < words; i += 8)
			*(uint32_t *)&w[i] += (uint32_t)(rnd() % 70000);
		break;
	default: /* ring contents only */
		for (i = 4096 / 8; i < words; i++)
			w[i] = rnd();
		break;
	}
}

static int child(int fd, void *arg)
{
	struct ibv_srq_init_attr si = { 0 };
	struct ibv_qp_init_attr ia;
	struct report rep = { 0 };
	struct map maps[MAX_MAPS];
	struct ibv_srq *srq;
	struct t_buf b;
	struct t_pair p;
	struct t_dev d;
	uint64_t end;
	int n;

	rnd_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &b, 65536, T_ACCESS_ALL);
	si.attr.max_wr = 64;
	si.attr.max_sge = 1;
	srq = T_NONNULL(ibv_create_srq(d.pd, &si));
	t_qp_init_attr(&ia, IBV_QPT_RC, p.cq_a, p.cq_a);
	ia.srq = srq;
	t_qp_create(&d, &ia);
	n = find_maps(maps, &rep);

	end = t_now_ms() + SCRIBBLE_MS;
	while (t_now_ms() < end) {
		struct ibv_send_wr wr = { 0 }, *bad;
		struct ibv_recv_wr rwr = { 0 }, *rbad;
		struct ibv_sge sge = { (uintptr_t)b.p, 4096, b.mr->lkey };

		for (int i = 0; i < n; i++)
			scribble(&maps[i]);
		/* Valid-looking work too, which also rings the doorbell;
		 * whether it is accepted does not matter. */
		wr.opcode = (enum ibv_wr_opcode)(rnd() % 12);
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = (uintptr_t)b.p + rnd() % 65536;
		wr.wr.rdma.rkey = rnd() & 1 ? b.mr->rkey : (uint32_t)rnd();
		ibv_post_send(p.a, &wr, &bad);
		ibv_post_send(p.b, &wr, &bad);
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ibv_post_recv(p.b, &rwr, &rbad);
		ibv_post_srq_recv(srq, &rwr, &rbad);
		rep.rounds++;
		t_sleep_ms(1);
	}
	t_sock_send(fd, &rep, sizeof(rep));
	/* Exit without cleaning up: the daemon must release it all. */
	_exit(0);
}

/* One verified round on the parent's own connection. */
static void transfer(struct t_pair *p, struct t_buf *s, struct t_buf *r,
		     uint32_t seed)
{
	struct ibv_wc wc;
	uint32_t len = 1 + seed * 7919 % 65536;

	t_fill(s->p, len, seed);
	t_post_send(p->a, 1, IBV_WR_RDMA_WRITE, s->mr, s->p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)r->p, r->mr->rkey);
	T_EXPECT_WC(p->cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(r->p, len, seed);
	memset(s->p, 0, len);
	t_post_send(p->a, 2, IBV_WR_RDMA_READ, s->mr, s->p, len,
		    IBV_SEND_SIGNALED, (uintptr_t)r->p, r->mr->rkey);
	T_EXPECT_WC(p->cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(s->p, len, seed);
	t_post_recv(p->b, 3, r->mr, r->p, 65536);
	t_fill(s->p, len, seed + 1);
	t_post_send(p->a, 4, IBV_WR_SEND, s->mr, s->p, len, IBV_SEND_SIGNALED,
		    0, 0);
	T_EXPECT_WC(p->cq_a, &wc, 4, IBV_WC_SUCCESS, IBV_WC_SEND);
	T_EXPECT_WC(p->cq_b, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(r->p, len, seed + 1);
}

int main(void)
{
	struct report rep = { 0 };
	struct t_buf s, r;
	struct t_child c;
	struct t_pair p;
	struct t_dev d, d2;
	uint32_t seed = 1;
	pid_t daemon;
	int status;

	t_init("isolation");
	t_dev_open(&d);
	daemon = t_daemon_pid();
	if (daemon <= 0)
		T_FAIL("cannot find the daemon serving socket %s",
		       t_socket_name());
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 65536, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 65536, T_ACCESS_ALL);

	t_fork(&c, child, NULL);
	while (!t_fd_readable(c.fd, 0))
		transfer(&p, &s, &r, seed++);
	if (recv(c.fd, &rep, sizeof(rep), MSG_WAITALL) != sizeof(rep)) {
		waitpid(c.pid, &status, 0);
		T_FAIL("the scribbling child died before it finished (%s %d)",
		       WIFSIGNALED(status) ? "signal" : "exit status",
		       WIFSIGNALED(status) ? WTERMSIG(status)
					   : WEXITSTATUS(status));
	}
	if (waitpid(c.pid, &status, 0) != c.pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		T_FAIL("the scribbling child did not exit cleanly (%#x)",
		       status);
	close(c.fd);
	t_log("child: %d QP, %d CQ, %d SRQ mappings, %d rounds; parent: %u "
	      "transfers",
	      rep.qp_maps, rep.cq_maps, rep.srq_maps, rep.rounds, seed - 1);
	T_GE(rep.qp_maps, 3);
	T_GE(rep.cq_maps, 2);
	T_GE(rep.srq_maps, 1);
	T_GE(rep.rounds, 100);
	T_GE(seed - 1, 10);

	/* Still working after the child's exit cleanup, still the same
	 * daemon, and it serves a new context. */
	for (int i = 0; i < 20; i++)
		transfer(&p, &s, &r, seed++);
	T_EQ(kill(daemon, 0), 0);
	T_EQ(t_daemon_pid(), daemon);
	t_dev_open(&d2);
	T_EQ(t_daemon_pid(), daemon);
	t_dev_close(&d2);

	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
