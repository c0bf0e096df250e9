/* SPDX-License-Identifier: MIT */
/*
 * Placement by the owner: an RDMA WRITE between in-place buffers of two
 * processes of one ordinary user is copied by a thread of the target's
 * own library (docs/trust.md).  Root starts the daemon, as the system's;
 * a writer W and a target T run as ordinary users, on a connected RC pair,
 * their messages relayed by root.
 *   - one user: a 1 MiB WRITE and a WRITE gathered from three uneven
 *     pieces land intact, and the device counts them as placed by the
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
#include <dirent.h>
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

struct msg {
	uint32_t step;
	struct t_ep ep;
};

struct side {
	struct t_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
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

static void side_open(struct side *s)
{
	struct ibv_qp_init_attr ia;

	t_dev_open(&s->d);
	s->cq = t_cq_create(&s->d, 64, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, s->cq, s->cq);
	s->qp = t_qp_create(&s->d, &ia);
	/* Page-aligned, so that half of it can be write-protected. */
	s->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(s->buf != MAP_FAILED);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	T_NONNULL(s->mr);
}

static void side_close(struct side *s)
{
	T_OK(ibv_dereg_mr(s->mr));
	T_OK(munmap(s->buf, LEN));
	T_OK(ibv_destroy_qp(s->qp));
	T_OK(ibv_destroy_cq(s->cq));
	t_dev_close(&s->d);
}

static void send_step(int sock, uint32_t step, const struct t_ep *ep)
{
	struct msg m = { .step = step };

	if (ep)
		m.ep = *ep;
	t_sock_send(sock, &m, sizeof(m));
}

static struct t_ep recv_step(int sock, uint32_t step)
{
	struct msg m;

	t_sock_recv(sock, &m, sizeof(m));
	T_EQ(m.step, step);
	return m.ep;
}

/* The bytes the writer sends: 1 MiB at 0, then three pieces at HALF. */
static const struct {
	uint32_t src, len;
} piece[3] = { { HALF + 4096, 20000 },
	       { HALF + 70001, 50001 },
	       { HALF + 300000, 30000 } };

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
	free(src);
}

static int target(int sock, void *arg)
{
	const struct role *r = arg;
	struct side s;
	struct t_ep ep, w;
	uint8_t *want = malloc(LEN);

	T_NONNULL(want);
	t_become(r->uid);
	side_open(&s);
	memset(s.buf, 0, LEN);
	t_ep_local(&s.d, s.qp, PSN, &ep);
	ep.addr = (uintptr_t)s.buf;
	ep.rkey = s.mr->rkey;
	ep.len = LEN;
	send_step(sock, S_TARGET, &ep);
	w = recv_step(sock, S_WRITER);
	t_qp_connect(s.qp, PSN, &w, NULL);
	recv_step(sock, S_WRITTEN);
	expected(want);
	T_MEMEQ(s.buf, want, LEN);
	if (r->mode == M_WPROT || r->mode == M_STOPPED) {
		T_OK(mprotect(s.buf + HALF, HALF, PROT_READ));
		send_step(sock, S_PROTECTED, NULL);
		recv_step(sock, S_REFUSED);
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
	side_close(&s);
	return 0;
}

/* T's first half back into our second half, then T's gathered pieces
 * scattered over ours as they were; rprot: then a READ into a
 * write-protected page of ours fails and changes nothing. */
static void read_back(struct side *s, const struct t_ep *t, bool rprot)
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
	struct side s;
	struct t_ep ep, t;

	t_become(r->uid);
	side_open(&s);
	t_fill(s.buf, LEN, SEED);
	t = recv_step(sock, S_TARGET);
	t_ep_local(&s.d, s.qp, PSN, &ep);
	t_qp_connect(s.qp, PSN, &t, NULL);
	send_step(sock, S_WRITER, &ep);

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
	read_back(&s, &t, r->mode == M_RPROT);
	send_step(sock, S_WRITTEN, NULL);

	if (r->mode == M_WPROT || r->mode == M_STOPPED) {
		recv_step(sock, S_PROTECTED);
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
		send_step(sock, S_REFUSED, NULL);
	}
	side_close(&s);
	return 0;
}

static void relay(struct t_child *from, struct t_child *to, uint32_t step)
{
	struct msg m;

	t_sock_recv(from->fd, &m, sizeof(m));
	T_EQ(m.step, step);
	t_sock_send(to->fd, &m, sizeof(m));
}

/* SIGSTOP, and wait until every thread of pid is stopped. */
static void stop(pid_t pid)
{
	uint64_t until = t_now_ms() + 5000;
	char path[64];

	T_OK(kill(pid, SIGSTOP));
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (;;) {
		DIR *dir = opendir(path);
		struct dirent *e;
		bool all = true;

		T_NONNULL(dir);
		while ((e = readdir(dir))) {
			char stat[400], buf[512], *p;
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(stat, sizeof(stat), "%s/%s/stat", path,
				 e->d_name);
			f = fopen(stat, "re");
			if (!f)
				continue;
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')')
						       : NULL;
			fclose(f);
			if (p && p[1] == ' ' && p[2] != 'T' && p[2] != 't')
				all = false;
		}
		closedir(dir);
		if (all)
			return;
		T_ASSERT(t_now_ms() < until);
		t_sleep_ms(1);
	}
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
	relay(&t, &w, S_TARGET);
	relay(&w, &t, S_WRITER);
	relay(&w, &t, S_WRITTEN);
	if (mode == M_WPROT || mode == M_STOPPED) {
		struct msg m;

		/* Stopped before W hears of it: T's thread cannot take any
		 * of W's jobs, which wait and then go back. */
		t_sock_recv(t.fd, &m, sizeof(m));
		T_EQ(m.step, S_PROTECTED);
		if (mode == M_STOPPED)
			stop(t.pid);
		t_sock_send(w.fd, &m, sizeof(m));
		relay(&w, &t, S_REFUSED);
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
	T_GE(run(a, a, M_WPROT, NULL), 5);
	T_GE(run(a, a, M_RPROT, NULL), 5);
	/* T stopped: both of the last two WRITEs went back to the daemon. */
	T_GE(run(a, a, M_STOPPED, &fallback), 6);
	T_GE(fallback, 2);
	/* Two users: the daemon copies, as before. */
	T_EQ(run(a, b, M_PLAIN, NULL), 0);
	t_dev_close(&d);
	t_pass();
}
