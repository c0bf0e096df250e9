/* SPDX-License-Identifier: MIT */
/*
 * Memory on demand honours mprotect() at once, as a NIC's ODP does: once
 * the owner's mprotect(PROT_READ) has returned, no RDMA WRITE changes a
 * byte of the pages.  Root starts the daemon, as the system's; a target T
 * (one user) registers 4 MiB on demand, and a writer W (another user)
 * streams 1 MiB WRITEs into it, four in flight, each of a byte value of
 * its own.  While they flow, T write-protects the whole MR and copies it
 * right away; once W's stream is over, the copy and the memory must be
 * the same.  ROUNDS rounds, each on a QP pair of its own (a failed WRITE
 * leaves its QP in error), at a different moment, between two users
 * (the bytes staged by the daemon) and within one (the owner's thread
 * reads the writer's memory):
 *   - RC: the stream ends when a WRITE completes with REM_ACCESS_ERR;
 *   - UC: nothing tells the writer; T tells it to stop, and it stops
 *     once its WRITEs in flight are done.
 *
 * Checking the protections, then writing through /proc/PID/mem (which
 * writes through them), lets the rest of a WRITE under way land after
 * mprotect() returned; SOFTRDMA_PLACE=0 shows it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_util.h"

#define MIB (1024u * 1024)
#define LEN (4 * MIB)	  /* T's MR on demand */
#define SRC_LEN (8 * MIB) /* W's sources: 8 runs of a byte value each */
#define ROUNDS 8
#define DEPTH 4
#define PSN 0x2345

enum step {
	S_TARGET,    /* T -> W: its QPs and MR */
	S_WRITER,    /* W -> T: its QPs */
	S_GO,	     /* T -> W: round r may start (memory writable) */
	S_FLOWING,   /* W -> T: a WRITE of round r completed */
	S_PROTECTED, /* T -> W (UC): stop */
	S_DONE,	     /* W -> T: round r's stream is over, none in flight */
};

struct msg {
	uint32_t step;
	uint32_t round;
	struct t_ep ep[ROUNDS];
};

struct side {
	struct t_dev d;
	struct ibv_cq *cq[ROUNDS];
	struct ibv_qp *qp[ROUNDS];
	struct t_ep ep[ROUNDS];
};

static void side_open(struct side *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia;

	t_dev_open(&s->d);
	for (int r = 0; r < ROUNDS; r++) {
		s->cq[r] = t_cq_create(&s->d, 4 * DEPTH, NULL);
		t_qp_init_attr(&ia, type, s->cq[r], s->cq[r]);
		ia.cap.max_send_wr = DEPTH;
		s->qp[r] = t_qp_create(&s->d, &ia);
		t_ep_local(&s->d, s->qp[r], PSN + r, &s->ep[r]);
	}
}

static void side_connect(struct side *s, const struct t_ep *remote)
{
	for (int r = 0; r < ROUNDS; r++)
		t_qp_connect(s->qp[r], PSN + r, &remote[r], NULL);
}

static void side_close(struct side *s)
{
	for (int r = 0; r < ROUNDS; r++) {
		T_OK(ibv_destroy_qp(s->qp[r]));
		T_OK(ibv_destroy_cq(s->cq[r]));
	}
	t_dev_close(&s->d);
}

static void send_step(int sock, uint32_t step, uint32_t round,
		      const struct t_ep *ep)
{
	struct msg m = { .step = step, .round = round };

	if (ep)
		memcpy(m.ep, ep, sizeof(m.ep));
	t_sock_send(sock, &m, sizeof(m));
}

static void recv_step(int sock, uint32_t step, uint32_t round, struct t_ep *ep)
{
	struct msg m;

	t_sock_recv(sock, &m, sizeof(m));
	T_EQ(m.step, step);
	T_EQ(m.round, round);
	if (ep)
		memcpy(ep, m.ep, sizeof(m.ep));
}

struct role {
	uid_t uid;
	enum ibv_qp_type type;
};

static int target(int sock, void *arg)
{
	const struct role *ro = arg;
	struct t_ep w[ROUNDS];
	struct ibv_mr *mr;
	struct side s;
	uint8_t *buf, *snap = malloc(LEN);

	T_NONNULL(snap);
	t_become(ro->uid);
	side_open(&s, ro->type);
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(buf != MAP_FAILED);
	mr = ibv_reg_mr(s.d.pd, buf, LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_ON_DEMAND);
	T_NONNULL(mr);
	for (int r = 0; r < ROUNDS; r++) {
		s.ep[r].addr = (uintptr_t)buf;
		s.ep[r].rkey = mr->rkey;
		s.ep[r].len = LEN;
	}
	send_step(sock, S_TARGET, 0, s.ep);
	recv_step(sock, S_WRITER, 0, w);
	side_connect(&s, w);

	for (uint32_t r = 0; r < ROUNDS; r++) {
		T_OK(mprotect(buf, LEN, PROT_READ | PROT_WRITE));
		send_step(sock, S_GO, r, NULL);
		recv_step(sock, S_FLOWING, r, NULL);
		/* A different moment of the stream each round. */
		usleep(200 + 700 * r);
		T_OK(mprotect(buf, LEN, PROT_READ));
		memcpy(snap, buf, LEN);
		if (ro->type == IBV_QPT_UC)
			send_step(sock, S_PROTECTED, r, NULL);
		recv_step(sock, S_DONE, r, NULL);
		T_MEMEQ(buf, snap, LEN);
	}
	T_OK(mprotect(buf, LEN, PROT_READ | PROT_WRITE));
	T_OK(ibv_dereg_mr(mr));
	T_OK(munmap(buf, LEN));
	free(snap);
	side_close(&s);
	return 0;
}

/* WRITEs into T until one fails (RC: it must fail for want of access,
 * the rest are flushed) or T says stop (UC); return once none is in
 * flight. */
static void stream(struct side *s, uint32_t r, struct ibv_mr *mr,
		   const struct t_ep *t, int sock, enum ibv_qp_type type)
{
	uint64_t until = t_now_ms() + 20000;
	uint32_t posted = 0, done = 0;
	bool flowing = false, failed = false;
	struct ibv_wc wc;

	while (!failed || done != posted) {
		if (type == IBV_QPT_UC && flowing && !failed &&
		    t_fd_readable(sock, 0)) {
			recv_step(sock, S_PROTECTED, r, NULL);
			failed = true;
			continue;
		}
		if (!failed && posted - done < DEPTH) {
			uint32_t n = posted;

			t_post_send(s->qp[r], n, IBV_WR_RDMA_WRITE, mr,
				    (uint8_t *)mr->addr + (n % 8) * MIB, MIB,
				    IBV_SEND_SIGNALED, t->addr + (n % 4) * MIB,
				    t->rkey);
			posted++;
			continue;
		}
		T_EQ(t_poll(s->cq[r], &wc, 10000), 1);
		T_EQ(wc.wr_id, done);
		done++;
		if (type == IBV_QPT_UC) {
			T_EQ(wc.status, IBV_WC_SUCCESS);
			if (!flowing)
				send_step(sock, S_FLOWING, r, NULL);
			flowing = true;
		} else if (failed) {
			T_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
		} else if (wc.status != IBV_WC_SUCCESS) {
			T_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
			failed = true;
		} else if (!flowing) {
			flowing = true;
			send_step(sock, S_FLOWING, r, NULL);
		}
		T_ASSERT(t_now_ms() < until);
	}
	T_ASSERT(flowing);
}

static int writer(int sock, void *arg)
{
	const struct role *ro = arg;
	struct t_ep t[ROUNDS];
	struct ibv_mr *mr;
	struct side s;
	uint8_t *src;

	t_become(ro->uid);
	side_open(&s, ro->type);
	src = malloc(SRC_LEN);
	T_NONNULL(src);
	for (uint32_t k = 0; k < 8; k++)
		memset(src + k * MIB, (int)(k + 1), MIB);
	mr = ibv_reg_mr(s.d.pd, src, SRC_LEN, IBV_ACCESS_LOCAL_WRITE);
	T_NONNULL(mr);
	recv_step(sock, S_TARGET, 0, t);
	side_connect(&s, t);
	send_step(sock, S_WRITER, 0, s.ep);
	for (uint32_t r = 0; r < ROUNDS; r++) {
		recv_step(sock, S_GO, r, NULL);
		stream(&s, r, mr, &t[r], sock, ro->type);
		send_step(sock, S_DONE, r, NULL);
	}
	T_OK(ibv_dereg_mr(mr));
	free(src);
	side_close(&s);
	return 0;
}

static void relay(struct t_child *from, struct t_child *to, uint32_t step,
		  uint32_t round)
{
	struct msg m;

	t_sock_recv(from->fd, &m, sizeof(m));
	T_EQ(m.step, step);
	T_EQ(m.round, round);
	t_sock_send(to->fd, &m, sizeof(m));
}

static void run(uid_t tuid, uid_t wuid, enum ibv_qp_type type)
{
	struct role tr = { tuid, type }, wr = { wuid, type };
	struct t_child w, t;

	t_fork(&t, target, &tr);
	t_fork(&w, writer, &wr);
	relay(&t, &w, S_TARGET, 0);
	relay(&w, &t, S_WRITER, 0);
	for (uint32_t r = 0; r < ROUNDS; r++) {
		relay(&t, &w, S_GO, r);
		relay(&w, &t, S_FLOWING, r);
		if (type == IBV_QPT_UC)
			relay(&t, &w, S_PROTECTED, r);
		relay(&w, &t, S_DONE, r);
	}
	T_EQ(t_child_wait(&w, 60000), 0);
	T_EQ(t_child_wait(&t, 60000), 0);
}

int main(void)
{
	struct t_dev d;
	uid_t a, b;

	t_init("odp_mprotect");
	if (geteuid())
		t_skip("not root: runs as two users");
	a = t_user("srdodpa");
	b = t_user("srdodpb");
	t_dev_open(&d); /* a root daemon, as the system's */
	run(a, b, IBV_QPT_RC);
	run(a, b, IBV_QPT_UC);
	/* One user: the owner's thread reads the writer's memory itself. */
	run(a, a, IBV_QPT_RC);
	run(a, a, IBV_QPT_UC);
	t_dev_close(&d);
	t_pass();
}
