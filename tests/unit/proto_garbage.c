/* SPDX-License-Identifier: MIT */
/*
 * A hostile client: random bytes, truncated headers, lying lengths,
 * oversized messages, unknown ops, fds attached where none belong, random
 * payloads for every op, and random data written over its own rings.  The
 * daemon must answer (or drop the connection), keep serving others, and
 * leak no fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "tests/unit/t_proto.h"

static uint64_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state >> 16;
}

static void rnd_fill(void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = rnd();
}

/* The reply to a raw message: its status, or 1 if the daemon hung up. */
static int raw_reply(int fd)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int fds[SRD_MAX_FDS], nfds, n;
	struct srd_msg_hdr h;

	T_ASSERT(poll(&pfd, 1, 5000) == 1);
	n = srd_msg_recv(fd, buf, sizeof(buf), fds, &nfds, SRD_MAX_FDS);
	if (n <= 0)
		return 1;
	srd_close_fds(fds, nfds);
	memcpy(&h, buf, sizeof(h));
	return h.status;
}

static int open_client(const char *name)
{
	struct t_client c;

	t_client_open(&c, name);
	close(c.async_fd);
	close(c.doorbell_fd);
	close(c.dev_page_fd);
	return c.fd;
}

static void framing(int fd, int pipefds[2])
{
	_Alignas(8) uint8_t buf[3 * SRD_MSG_MAX];
	struct srd_msg_hdr h = { 0 };
	int many[SRD_MAX_FDS];

	/* Shorter than a header, with and without fds. */
	for (int n = 1; n < (int)sizeof(h); n++) {
		rnd_fill(buf, n);
		t_raw_send(fd, buf, n, pipefds, n & 1 ? 2 : 0);
		T_EQ(raw_reply(fd), -EINVAL);
	}
	/* Lengths that lie. */
	h.op = SRD_CMD_ALLOC_PD;
	h.len = 1u << 31;
	t_raw_send(fd, &h, sizeof(h), pipefds, 1);
	T_EQ(raw_reply(fd), -EINVAL);
	h.len = 8;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	t_raw_send(fd, buf, sizeof(h) + 4, NULL, 0);
	T_EQ(raw_reply(fd), -EINVAL);
	/* Larger than any message, fds attached. */
	h.len = sizeof(buf) - sizeof(h);
	memcpy(buf, &h, sizeof(h));
	t_raw_send(fd, buf, sizeof(buf), pipefds, 2);
	T_EQ(raw_reply(fd), -EINVAL);
	/* Unknown ops. */
	h.len = 0;
	for (uint32_t op = 0; op < 4; op++) {
		uint32_t ops[] = { 0, SRD_CMD__MAX, 0x7fffffff, 0xffffffff };

		h.op = ops[op];
		t_raw_send(fd, &h, sizeof(h), pipefds, 1);
		T_EQ(raw_reply(fd), -EOPNOTSUPP);
	}
	/* Fds with ops that take none, and too many for REG_MR. */
	for (int i = 0; i < SRD_MAX_FDS; i++)
		many[i] = pipefds[i & 1];
	h.op = SRD_CMD_ALLOC_PD;
	t_raw_send(fd, &h, sizeof(h), many, SRD_MAX_FDS);
	T_EQ(raw_reply(fd), -EINVAL);
	h.op = SRD_CMD_QUERY_DEVICE;
	t_raw_send(fd, &h, sizeof(h), many, 3);
	T_EQ(raw_reply(fd), -EINVAL);
	/* The wrong size for fixed-size requests. */
	for (uint32_t op = SRD_CMD_QUERY_PORT; op < SRD_CMD__MAX; op++) {
		h.op = op;
		h.len = 3;
		memset(buf, 0xff, sizeof(buf));
		memcpy(buf, &h, sizeof(h));
		t_raw_send(fd, buf, sizeof(h) + 3, pipefds, 1);
		T_EQ(raw_reply(fd), -EINVAL);
	}
}

/* Every op with random payloads of its own size and of random sizes. */
static void random_ops(int fd, int pipefds[2], int rounds)
{
	static const uint32_t sizes[SRD_CMD__MAX] = {
		[SRD_CMD_HELLO] = sizeof(struct srd_hello_req),
		[SRD_CMD_OPEN_DEVICE] = sizeof(struct srd_open_device_req),
		[SRD_CMD_QUERY_PORT] = sizeof(struct srd_query_port_req),
		[SRD_CMD_QUERY_GID] = sizeof(struct srd_query_gid_req),
		[SRD_CMD_QUERY_PKEY] = sizeof(struct srd_query_pkey_req),
		[SRD_CMD_DEALLOC_PD] = sizeof(struct srd_handle_req),
		[SRD_CMD_REG_MR] = sizeof(struct srd_reg_mr_req) +
				   2 * sizeof(struct srd_mr_piece),
		[SRD_CMD_REREG_MR] = sizeof(struct srd_rereg_mr_req) +
				     sizeof(struct srd_mr_piece),
		[SRD_CMD_DEREG_MR] = sizeof(struct srd_handle_req),
		[SRD_CMD_DESTROY_COMP_CHANNEL] = sizeof(struct srd_handle_req),
		[SRD_CMD_CREATE_CQ] = sizeof(struct srd_create_cq_req),
		[SRD_CMD_RESIZE_CQ] = sizeof(struct srd_resize_cq_req),
		[SRD_CMD_DESTROY_CQ] = sizeof(struct srd_handle_req),
		[SRD_CMD_CREATE_QP] = sizeof(struct srd_create_qp_req),
		[SRD_CMD_MODIFY_QP] = sizeof(struct srd_modify_qp_req),
		[SRD_CMD_QUERY_QP] = sizeof(struct srd_query_qp_req),
		[SRD_CMD_DESTROY_QP] = sizeof(struct srd_handle_req),
		[SRD_CMD_CREATE_SRQ] = sizeof(struct srd_create_srq_req),
		[SRD_CMD_MODIFY_SRQ] = sizeof(struct srd_modify_srq_req),
		[SRD_CMD_QUERY_SRQ] = sizeof(struct srd_handle_req),
		[SRD_CMD_DESTROY_SRQ] = sizeof(struct srd_handle_req),
		[SRD_CMD_CREATE_AH] = sizeof(struct srd_create_ah_req),
		[SRD_CMD_DESTROY_AH] = sizeof(struct srd_handle_req),
	};
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];

	for (int i = 0; i < rounds; i++) {
		struct srd_msg_hdr h = { .op = 1 + rnd() % (SRD_CMD__MAX - 1) };
		uint32_t len = rnd() % 4 ? sizes[h.op] : rnd() % 512;
		uint32_t *w = (uint32_t *)(buf + sizeof(h));

		rnd_fill(buf + sizeof(h), len);
		/* Small handles now and then, so lookups sometimes hit. */
		if (len >= 8 && rnd() % 2) {
			w[0] = rnd() % 8;
			w[1] &= 0xff;
		}
		h.len = len;
		memcpy(buf, &h, sizeof(h));
		t_raw_send(fd, buf, sizeof(h) + len, pipefds, rnd() % 3 == 0);
		T_ASSERT(raw_reply(fd) <= 0);
	}
}

/* Random data over a QP's and a CQ's shared memory, prod at random,
 * doorbell kicked, on a QP in RESET and on one that is ready to send. */
static void scribble(const char *name)
{
	struct ibv_qp_attr a = { 0 };
	struct srd_create_qp_rep qrep;
	struct srd_create_cq_rep crep;
	struct t_client c;
	int64_t pd, cq, qp;
	int qfd, cfd;
	uint8_t *qmap, *cmap;
	uint64_t one = 1;

	t_client_open(&c, name);
	pd = t_alloc_pd(c.fd);
	cq = t_create_cq(c.fd, 8, SRD_NO_HANDLE, &crep, &cfd);
	T_ASSERT(pd > 0 && cq > 0);
	cmap = mmap(NULL, crep.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
		    0);
	T_ASSERT(cmap != MAP_FAILED);
	for (int round = 0; round < 2; round++) {
		qp = t_create_qp(c.fd, pd, cq, SRD_NO_HANDLE,
				 round ? IBV_QPT_RC : IBV_QPT_UD, NULL, &qrep,
				 &qfd);
		T_ASSERT(qp > 0);
		if (round) {
			/* Connected to itself, ready to send. */
			a.qp_state = IBV_QPS_INIT;
			a.port_num = 1;
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			T_EQ(t_modify_qp(c.fd, qp, &a,
					 IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						 IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS,
					 NULL),
			     0);
			a.qp_state = IBV_QPS_RTR;
			a.ah_attr.is_global = 1;
			a.ah_attr.port_num = 1;
			a.ah_attr.grh.dgid.raw[10] = 0xff;
			a.ah_attr.grh.dgid.raw[11] = 0xff;
			a.ah_attr.grh.dgid.raw[12] = 127;
			a.ah_attr.grh.dgid.raw[15] = 1;
			a.path_mtu = IBV_MTU_1024;
			a.dest_qp_num = qp;
			a.max_dest_rd_atomic = 1;
			a.min_rnr_timer = 1;
			T_EQ(t_modify_qp(c.fd, qp, &a,
					 IBV_QP_STATE | IBV_QP_AV |
						 IBV_QP_PATH_MTU |
						 IBV_QP_DEST_QPN |
						 IBV_QP_RQ_PSN |
						 IBV_QP_MAX_DEST_RD_ATOMIC |
						 IBV_QP_MIN_RNR_TIMER,
					 NULL),
			     0);
			a.qp_state = IBV_QPS_RTS;
			a.timeout = 1;
			a.retry_cnt = 1;
			a.rnr_retry = 1;
			a.max_rd_atomic = 1;
			T_EQ(t_modify_qp(c.fd, qp, &a,
					 IBV_QP_STATE | IBV_QP_SQ_PSN |
						 IBV_QP_TIMEOUT |
						 IBV_QP_RETRY_CNT |
						 IBV_QP_RNR_RETRY |
						 IBV_QP_MAX_QP_RD_ATOMIC,
					 NULL),
			     0);
		}
		qmap = mmap(NULL, qrep.map_len, PROT_READ | PROT_WRITE,
			    MAP_SHARED, qfd, 0);
		T_ASSERT(qmap != MAP_FAILED);
		for (int i = 0; i < 50; i++) {
			rnd_fill(qmap, qrep.map_len);
			rnd_fill(cmap, crep.map_len);
			T_EQ(write(c.doorbell_fd, &one, 8), 8);
			usleep(1000);
		}
		/* A plausible-looking prod now and then. */
		for (int i = 0; i < 50; i++) {
			struct srd_qp_ctl *ctl = (void *)qmap;

			ctl->sq.prod = rnd() % (2 * qrep.sq_entries);
			ctl->rq.prod = rnd() % (2 * qrep.rq_entries);
			T_EQ(write(c.doorbell_fd, &one, 8), 8);
			usleep(1000);
		}
		/* The daemon still answers. */
		T_ASSERT(t_alloc_pd(c.fd) > 0);
		munmap(qmap, qrep.map_len);
		close(qfd);
		T_EQ(t_destroy(c.fd, SRD_CMD_DESTROY_QP, qp), 0);
	}
	munmap(cmap, crep.map_len);
	close(cfd);
	t_client_close(&c);
}

int main(void)
{
	struct t_daemon td;
	int pipefds[2], fd, base;

	rnd_state = time(NULL) ^ ((uint64_t)getpid() << 32);
	fprintf(stderr, "seed 0x%llx\n", (unsigned long long)rnd_state);
	signal(SIGPIPE, SIG_IGN);
	T_ASSERT(!pipe(pipefds));
	t_daemon_start(&td, NULL);
	base = t_fd_count_settled(td.pid);
	fd = open_client(td.name);
	/* A context costs the daemon its connection, the async pipe and the
	 * client's memory access fd. */
	t_expect_fds(td.pid, base + 3);

	framing(fd, pipefds);
	t_expect_fds(td.pid, base + 3);
	T_ASSERT(t_alloc_pd(fd) > 0);

	/* Pure noise, on fresh connections (the first message of a
	 * connection may be anything). */
	for (int i = 0; i < 200; i++) {
		_Alignas(8) uint8_t buf[512];
		int n = 1 + rnd() % sizeof(buf);
		int c = t_connect(td.name);

		T_ASSERT(c >= 0);
		rnd_fill(buf, n);
		t_raw_send(c, buf, n, pipefds, rnd() % 2);
		T_ASSERT(raw_reply(c) <= 1);
		close(c);
	}
	random_ops(fd, pipefds, 3000);
	close(fd);
	t_expect_fds(td.pid, base);

	scribble(td.name);
	t_expect_fds(td.pid, base);

	/* Still serving, still the same daemon. */
	fd = open_client(td.name);
	T_ASSERT(t_alloc_pd(fd) > 0);
	close(fd);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
