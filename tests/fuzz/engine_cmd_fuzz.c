/* SPDX-License-Identifier: MIT */
/*
 * A fuzzer that reaches the engine through the command channel, against a
 * real daemon: each round brings a loopback pair of RC QPs to RTS through
 * the library, posts real WQEs, then mutates what a client controls -
 * bytes of the SQ/RQ ring slots (opcodes, lkeys, lengths, SGE counts), the
 * producer indices and the doorbell - and sends mutated commands (ops,
 * lengths, handles, attribute masks) on a raw connection of its own.  A
 * deterministic seeded mutator (SRD_FUZZ_SEED), for SRD_FUZZ_SECONDS
 * (default 60).  Afterwards the daemon must be alive and serve a fresh
 * client with a verified transfer.  Prints executions per second.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proto.h"
#include "t_util.h"

static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64*: the same seed gives the same run. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

/* A small number (a likely handle, count or index) most of the time. */
static uint32_t rnd_val(void)
{
	switch (rnd() % 4) {
	case 0:
		return rnd() % 8;
	case 1:
		return rnd() % 64;
	case 2:
		return 1u << (rnd() % 32);
	default:
		return rnd();
	}
}

/* The library's ring mappings of this process (memfd softrdma-qp). */
struct ring_map {
	uint8_t *p;
	size_t len;
};

static int qp_maps(struct ring_map *out, int max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	T_ASSERT(f != NULL);
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perm[8];

		if (!strstr(line, "softrdma-qp") ||
		    sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 ||
		    perm[1] != 'w')
			continue;
		out[n].p = (uint8_t *)a;
		out[n].len = b - a;
		n++;
	}
	fclose(f);
	return n;
}

static int raw_connect(void)
{
	const char *name = t_socket_name();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	uint8_t buf[256];
	struct {
		struct srd_msg_hdr h;
		union {
			struct srd_hello_req hello;
			struct srd_open_device_req open;
		};
	} m;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	T_ASSERT(fd >= 0 && n + 1 < sizeof(sa.sun_path));
	memcpy(sa.sun_path + 1, name, n);
	if (connect(fd, (struct sockaddr *)&sa,
		    offsetof(struct sockaddr_un, sun_path) + 1 + n)) {
		close(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.h.op = SRD_CMD_HELLO;
	m.h.len = sizeof(m.hello);
	m.hello.version = SRD_PROTO_VERSION;
	m.hello.pid = (uint32_t)getpid();
	if (send(fd, &m, sizeof(m.h) + m.h.len, MSG_NOSIGNAL) < 0 ||
	    recv(fd, buf, sizeof(buf), 0) <= 0) {
		close(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.h.op = SRD_CMD_OPEN_DEVICE;
	m.h.len = sizeof(m.open);
	if (send(fd, &m, sizeof(m.h) + m.h.len, MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	/* The reply's fds are closed with it: nothing else is needed. */
	{
		char ctl[CMSG_SPACE(8 * sizeof(int))];
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };

		if (recvmsg(fd, &mh, MSG_CMSG_CLOEXEC) <= 0) {
			close(fd);
			return -1;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c;
		     c = CMSG_NXTHDR(&mh, c)) {
			int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (int i = 0; i < k; i++) {
				int one;

				memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(one));
				close(one);
			}
		}
	}
	return fd;
}

/* One mutated command; false when the daemon closed the connection. */
static bool fuzz_cmd(int fd)
{
	static const uint32_t lens[] = { 0,  4,	 8,  16,  24,  32,  40,
					 48, 64, 96, 128, 192, 256, 512 };
	_Alignas(8) uint8_t buf[1024];
	struct srd_msg_hdr *h = (void *)buf;
	uint32_t len = lens[rnd() % (sizeof(lens) / sizeof(lens[0]))];
	char ctl[CMSG_SPACE(8 * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	h->op = rnd() % 8
			? SRD_CMD_QUERY_DEVICE +
				  rnd() % (SRD_CMD__MAX - SRD_CMD_QUERY_DEVICE)
			: rnd_val();
	h->len = rnd() % 16 ? len : rnd_val();
	for (uint32_t i = 0; i < len / 4; i++) {
		uint32_t v = rnd_val();

		memcpy(buf + sizeof(*h) + i * 4, &v, 4);
	}
	if (send(fd, buf, sizeof(*h) + len, MSG_NOSIGNAL) < 0)
		return false;
	if (!t_fd_readable(fd, 2000))
		T_FAIL("no reply to op %u len %u", h->op, len);
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c;
	     c = CMSG_NXTHDR(&mh, c)) {
		int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (int i = 0; i < k; i++) {
			int one;

			memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(one));
			close(one);
		}
	}
	return true;
}

/* Mutate the rings of every QP of this process and ring the doorbell. */
static void fuzz_rings(struct t_pair *p, struct t_buf *b)
{
	struct ring_map m[8];
	int n = qp_maps(m, 8);

	for (int i = 0; i < n; i++) {
		uint32_t *sq_prod = (uint32_t *)m[i].p;
		uint32_t *rq_prod = (uint32_t *)(m[i].p + 128);
		size_t ring = m[i].len - 4096;

		if (m[i].len <= 4096)
			continue;
		for (int k = rnd() % 16; k >= 0; k--) {
			size_t at = 4096 + rnd() % ring;

			if (rnd() % 2)
				m[i].p[at] ^= (uint8_t)(1u << (rnd() % 8));
			else
				m[i].p[at] = (uint8_t)rnd_val();
		}
		switch (rnd() % 4) {
		case 0:
			__atomic_add_fetch(sq_prod, rnd() % 4,
					   __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_add_fetch(rq_prod, rnd() % 4,
					   __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(sq_prod, rnd_val(), __ATOMIC_RELEASE);
			break;
		default:
			break;
		}
	}
	/* A real post rings the doorbell when the engine sleeps. */
	t_post_send_ret(p->a, 1, IBV_WR_RDMA_WRITE, b->mr, b->p, 64,
			IBV_SEND_SIGNALED, (uintptr_t)b->p, b->mr->rkey);
	t_post_recv_ret(p->b, 2, b->mr, b->p, 64);
}

static void drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

/* One round: a fresh context and pair, mutations, then everything goes. */
static void round_run(uint64_t *execs)
{
	struct t_buf b;
	struct t_pair p;
	struct t_dev d;
	int fd;

	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);
	for (int i = 0; i < 8; i++) {
		t_post_recv_ret(p.b, 10 + i, b.mr, b.p + 64 * i, 64);
		t_post_send_ret(p.a, 20 + i,
				i % 2 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, b.mr,
				b.p + 512 + 64 * i, 64, IBV_SEND_SIGNALED,
				(uintptr_t)b.p, b.mr->rkey);
	}
	fd = raw_connect();
	for (int k = 0; k < 32; k++) {
		if (rnd() % 2) {
			fuzz_rings(&p, &b);
		} else if (fd >= 0 && !fuzz_cmd(fd)) {
			close(fd);
			fd = raw_connect();
		}
		drain_cq(p.cq_a);
		drain_cq(p.cq_b);
		(*execs)++;
	}
	if (fd >= 0)
		close(fd);
	/* The rings were scribbled on: tear down without trusting them. */
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq_a);
	ibv_destroy_cq(p.cq_b);
	ibv_dereg_mr(b.mr);
	ibv_dealloc_pd(d.pd);
	ibv_close_device(d.ctx);
	ibv_free_device_list(d.list);
}

/* A fresh process, a verified RC transfer. */
static int verify(int fd, void *arg)
{
	struct t_buf s, r;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;

	(void)fd;
	(void)arg;
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 65536, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 65536, T_ACCESS_ALL);
	t_fill(s.p, 65536, 7);
	t_post_send(p.a, 1, IBV_WR_RDMA_WRITE, s.mr, s.p, 65536,
		    IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(r.p, 65536, 7);
	return 0;
}

int main(void)
{
	const char *env = getenv("SRD_FUZZ_SECONDS");
	const char *seed = getenv("SRD_FUZZ_SEED");
	unsigned int secs = env ? (unsigned int)strtoul(env, NULL, 10) : 60;
	uint64_t execs = 0, rounds = 0, t0, dt;
	struct t_child ch;
	pid_t daemon;

	if (!secs || secs > 3600)
		secs = 60;
	/* The watchdog covers the run plus the checks after it. */
	setenv("SRD_TEST_WATCHDOG_S", "3600", 1);
	t_init("engine_cmd_fuzz");
	alarm(secs + 60);
	rng = seed ? strtoull(seed, NULL, 0) : 0x5eed5eedull;
	if (!rng)
		rng = 1;
	t_log("seed %#llx, %u s", (unsigned long long)rng, secs);
	/* The first round starts the daemon. */
	t0 = t_now_ms();
	round_run(&execs);
	rounds++;
	daemon = t_daemon_pid();
	T_ASSERT(daemon > 0);
	while (t_now_ms() - t0 < secs * 1000ull) {
		round_run(&execs);
		rounds++;
		if (kill(daemon, 0))
			T_FAIL("daemon %d died after %llu executions",
			       (int)daemon, (unsigned long long)execs);
	}
	dt = t_now_ms() - t0;
	t_log("%llu executions in %llu rounds, %.1f s: %.0f exec/s",
	      (unsigned long long)execs, (unsigned long long)rounds,
	      dt / 1000.0, execs * 1000.0 / (dt ? dt : 1));
	/* As libFuzzer's -print_final_stats=1 says it, for fuzz_run.sh. */
	printf("stat::number_of_executed_units: %llu\n"
	       "stat::average_exec_per_sec:     %.0f\n",
	       (unsigned long long)execs, execs * 1000.0 / (dt ? dt : 1));
	fflush(stdout);
	T_EQ(kill(daemon, 0), 0);
	T_EQ(t_daemon_pid(), daemon);
	t_fork(&ch, verify, NULL);
	T_EQ(t_child_wait(&ch, 2 * T_WAIT_MS), 0);
	t_pass();
}
