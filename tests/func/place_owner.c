/* SPDX-License-Identifier: MIT */
/*
 * Placement by the owner: an RDMA WRITE between in-place buffers of two
 * processes of one ordinary user is copied by a thread of the target's
 * own library (docs/trust.md).  Root starts the daemon, as the system's;
 * a writer W and a target T run as ordinary users, on a connected RC pair,
 * their messages relayed by root.
 *   - one user: a 1 MiB WRITE, a WRITE gathered from three uneven
 *     pieces and a 64 KiB SEND land intact (the SEND's receive completes
 *     with its data there), and the device counts them as placed by the
 *     owner.  T then write-protects the second half of its MR; a 64 KiB
 *     WRITE into it completes with REM_ACCESS_ERR and leaves the bytes as
 *     they were (the daemon's /proc/PID/mem writes through protections);
 *   - then W reads T's memory back (a 1 MiB READ into the second half of
 *     its buffer, and one scattered over three pieces): W's own thread
 *     places the responses, and they land intact.  In a run of their own,
 *     W write-protects half its buffer and a 64 KiB READ into it
 *     completes with LOC_PROT_ERR, leaving the bytes as they were;
 *   - two users: the same WRITEs and READs land intact, and none is
 *     placed by an owner (neither may read the other's memory, and
 *     neither is asked to).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_admin.h"

#define LEN (2u * 1024 * 1024)
#define HALF (LEN / 2)
#define SEED 7
#define PSN 0x1234
/* Where W's WRITE into T's writable half comes from while T is stopped
 * (W's first half still holds the pattern as it was filled). */
#define STOPPED_SRC (3 * 65536)

enum step {
	S_TARGET,    /* T -> W: its QP and MR */
	S_WRITER,    /* W -> T: its QP */
	S_WRITTEN,   /* W -> T: both WRITEs complete */
	S_PROTECTED, /* T -> W: data checked, second half read-only */
	S_REFUSED,   /* W -> T: the WRITE into it failed */
};

enum mode {
	M_PLAIN,
	M_WPROT, /* T write-protects half its MR before a WRITE into it */
	M_RPROT, /* W write-protects half its buffer before a READ into it */
	/* As M_WPROT with T stopped: the daemon takes the jobs back and
	 * copies them itself, honouring T's protections all the same; a
	 * WRITE into T's writable half lands. */
	M_STOPPED,
};

struct role {
	uid_t uid;
	enum mode mode;
};

/* The bytes the writer sends: 1 MiB at 0, then three pieces at HALF. */
static const struct {
	uint32_t src, len;
} piece[3] = { { HALF + 4096, 20000 },
	       { HALF + 70001, 50001 },
	       { HALF + 300000, 30000 } };

/* Then a 64 KiB SEND from the writer's first half into a receive at the
 * end of the target's buffer: placed too, its CQE behind its data. */
#define SEND_SRC 5000
#define SEND_AT (LEN - 65536)
#define SEND_LEN 65536

static void expected(uint8_t *want)
{
	uint8_t *src = malloc(LEN);
	uint32_t at = HALF;

	T_NONNULL(src);
	t_fill(src, LEN, SEED);
	memset(want, 0, LEN);
	memcpy(want, src, HALF);
	for (int i = 0; i < 3; i++) {
		memcpy(want + at, src + piece[i].src, piece[i].len);
		at += piece[i].len;
	}
	memcpy(want + SEND_AT, src + SEND_SRC, SEND_LEN);
	free(src);
}

static int target(int sock, void *arg)
{
	const struct role *r = arg;
	struct t_side s;
	struct ibv_wc wc;
	uint8_t *want = malloc(LEN);

	T_NONNULL(want);
	t_become(r->uid);
	t_side_open(&s, LEN, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	memset(s.buf, 0, LEN);
	t_side_serve(&s, sock, S_TARGET, S_WRITER, PSN);
	t_post_recv(s.qp, 20, s.mr, s.buf + SEND_AT, SEND_LEN);
	t_step_recv(sock, S_WRITTEN);
	T_EXPECT_WC(s.cq, &wc, 20, IBV_WC_SUCCESS, IBV_WC_RECV);
	T_EQ(wc.byte_len, SEND_LEN);
	expected(want);
	T_MEMEQ(s.buf, want, LEN);
	if (r->mode == M_WPROT || r->mode == M_STOPPED) {
		T_OK(mprotect(s.buf + HALF, HALF, PROT_READ));
		t_step_send(sock, S_PROTECTED, NULL);
		t_step_recv(sock, S_REFUSED);
		/* Nothing of the refused WRITE landed; stopped, the one into
		 * the first half did. */
		if (r->mode == M_STOPPED) {
			uint8_t *src = malloc(LEN);

			T_NONNULL(src);
			t_fill(src, LEN, SEED);
			memcpy(want, src + STOPPED_SRC, 65536);
			free(src);
		}
		T_MEMEQ(s.buf, want, LEN);
		T_OK(mprotect(s.buf + HALF, HALF, PROT_READ | PROT_WRITE));
	}
	free(want);
	t_side_close(&s);
	return 0;
}

/* T's first half back into our second half, then T's gathered pieces
 * scattered over ours as they were; rprot: then a READ into a
 * write-protected page of ours fails and changes nothing. */
static void read_back(struct t_side *s, const struct t_ep *t, bool rprot)
{
	uint8_t *want = malloc(LEN), *keep;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge[3];
	struct ibv_wc wc;
	uint32_t at = HALF;

	T_NONNULL(want);
	expected(want);
	memset(s->buf + HALF, 0, HALF);
	t_post_send(s->qp, 10, IBV_WR_RDMA_READ, s->mr, s->buf + HALF, HALF,
		    IBV_SEND_SIGNALED, t->addr, t->rkey);
	T_EXPECT_WC(s->cq, &wc, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_MEMEQ(s->buf + HALF, want, HALF);

	for (int i = 0; i < 3; i++) {
		memset(s->buf + piece[i].src, 0, piece[i].len);
		sge[i].addr = (uintptr_t)s->buf + piece[i].src;
		sge[i].length = piece[i].len;
		sge[i].lkey = s->mr->lkey;
		at += piece[i].len;
	}
	wr.wr_id = 11;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = t->addr + HALF;
	wr.wr.rdma.rkey = t->rkey;
	T_OK(ibv_post_send(s->qp, &wr, &bad));
	T_EXPECT_WC(s->cq, &wc, 11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	at = HALF;
	for (int i = 0; i < 3; i++) {
		T_MEMEQ(s->buf + piece[i].src, want + at, piece[i].len);
		at += piece[i].len;
	}

	if (rprot) {
		keep = malloc(LEN);
		T_NONNULL(keep);
		memcpy(keep, s->buf, LEN);
		T_OK(mprotect(s->buf + HALF, HALF, PROT_READ));
		t_post_send(s->qp, 12, IBV_WR_RDMA_READ, s->mr,
			    s->buf + HALF + 65536, 65536, IBV_SEND_SIGNALED,
			    t->addr + HALF, t->rkey);
		T_EXPECT_WC(s->cq, &wc, 12, IBV_WC_LOC_PROT_ERR,
			    IBV_WC_RDMA_READ);
		T_OK(mprotect(s->buf + HALF, HALF, PROT_READ | PROT_WRITE));
		T_MEMEQ(s->buf, keep, LEN);
		free(keep);
	}
	free(want);
}

static int writer(int sock, void *arg)
{
	const struct role *r = arg;
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;
	struct t_side s;
	struct t_ep t;

	t_become(r->uid);
	t_side_open(&s, LEN, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	t_fill(s.buf, LEN, SEED);
	t = t_side_dial(&s, sock, S_TARGET, S_WRITER, PSN, NULL);

	t_post_send(s.qp, 1, IBV_WR_RDMA_WRITE, s.mr, s.buf, HALF,
		    IBV_SEND_SIGNALED, t.addr, t.rkey);
	T_EXPECT_WC(s.cq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	for (int i = 0; i < 3; i++) {
		sge[i].addr = (uintptr_t)s.buf + piece[i].src;
		sge[i].length = piece[i].len;
		sge[i].lkey = s.mr->lkey;
	}
	wr.wr_id = 2;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = t.addr + HALF;
	wr.wr.rdma.rkey = t.rkey;
	T_OK(ibv_post_send(s.qp, &wr, &bad));
	T_EXPECT_WC(s.cq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	t_post_send(s.qp, 5, IBV_WR_SEND, s.mr, s.buf + SEND_SRC, SEND_LEN,
		    IBV_SEND_SIGNALED, 0, 0);
	T_EXPECT_WC(s.cq, &wc, 5, IBV_WC_SUCCESS, IBV_WC_SEND);
	read_back(&s, &t, r->mode == M_RPROT);
	t_step_send(sock, S_WRITTEN, NULL);

	if (r->mode == M_WPROT || r->mode == M_STOPPED) {
		t_step_recv(sock, S_PROTECTED);
		if (r->mode == M_STOPPED) {
			t_post_send(s.qp, 4, IBV_WR_RDMA_WRITE, s.mr,
				    s.buf + STOPPED_SRC, 65536,
				    IBV_SEND_SIGNALED, t.addr, t.rkey);
			T_EXPECT_WC(s.cq, &wc, 4, IBV_WC_SUCCESS,
				    IBV_WC_RDMA_WRITE);
		}
		t_post_send(s.qp, 3, IBV_WR_RDMA_WRITE, s.mr, s.buf, 65536,
			    IBV_SEND_SIGNALED, t.addr + HALF + 65536, t.rkey);
		T_EXPECT_WC(s.cq, &wc, 3, IBV_WC_REM_ACCESS_ERR,
			    IBV_WC_RDMA_WRITE);
		t_step_send(sock, S_REFUSED, NULL);
	}
	t_side_close(&s);
	return 0;
}

static unsigned long long counter(const char *name)
{
	struct t_run r;

	t_cli(&r, "statistic", "show", "link", "softrdma0/1", NULL);
	T_EQ(r.status, 0);
	return T_FIELD(r.out, name);
}

/* One run of W as wuid against T as tuid; how many jobs were placed, and
 * (fallback) how many of them the daemon copied. */
static unsigned long long run(uid_t wuid, uid_t tuid, enum mode mode,
			      unsigned long long *fallback)
{
	struct role wr = { wuid, mode }, tr = { tuid, mode };
	unsigned long long before = counter("owner_placed");
	unsigned long long fb = counter("owner_place_fallback");
	struct t_child w, t;

	t_fork(&t, target, &tr);
	t_fork(&w, writer, &wr);
	t_step_relay(t.fd, w.fd, S_TARGET);
	t_step_relay(w.fd, t.fd, S_WRITER);
	t_step_relay(w.fd, t.fd, S_WRITTEN);
	if (mode == M_WPROT || mode == M_STOPPED) {
		/* Stopped before W hears of it: T's thread cannot take any
		 * of W's jobs, which wait and then go back. */
		t_step_recv(t.fd, S_PROTECTED);
		if (mode == M_STOPPED)
			t_stop(t.pid);
		t_step_send(w.fd, S_PROTECTED, NULL);
		t_step_relay(w.fd, t.fd, S_REFUSED);
		if (mode == M_STOPPED)
			T_OK(kill(t.pid, SIGCONT));
	}
	T_EQ(t_child_wait(&w, 30000), 0);
	T_EQ(t_child_wait(&t, 30000), 0);
	if (fallback)
		*fallback = counter("owner_place_fallback") - fb;
	return counter("owner_placed") - before;
}

int main(void)
{
	unsigned long long fallback;
	uid_t a, b;
	struct t_dev d;

	t_init("place_owner");
	if (geteuid())
		t_skip("not root: runs as two users");
	t_cli_path();
	a = t_user("srdplacea");
	b = t_user("srdplaceb");
	t_dev_open(&d); /* a root daemon, as the system's */

	/* One user: the 1 MiB WRITE, the gathered one, the two READs and
	 * the refused one, each at least one job. */
	T_GE(run(a, a, M_WPROT, NULL), 6);
	T_GE(run(a, a, M_RPROT, NULL), 6);
	/* T stopped: both of the last two WRITEs went back to the daemon. */
	T_GE(run(a, a, M_STOPPED, &fallback), 7);
	T_GE(fallback, 2);
	/* Two users: the daemon copies, as before. */
	T_EQ(run(a, b, M_PLAIN, NULL), 0);
	t_dev_close(&d);
	t_pass();
}
