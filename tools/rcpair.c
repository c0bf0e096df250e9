/* SPDX-License-Identifier: MIT */
/* RC pair set-up, the command socket and send-queue accounting. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h" /* SRD_MEMFD_NAME */
#include "rcpair_int.h"

int rcp_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

uint64_t rcp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int rcp_fail(struct rcp *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EIO;
}

int rcp_sock_send(struct rcp *p, const void *buf, size_t len)
{
	const char *b = buf;
	ssize_t n;

	while (len) {
		n = send(p->sock, b, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rcp_fail(p, -EPIPE, "peer socket: %s",
					n ? strerror(errno) : "closed");
		b += n;
		len -= n;
	}
	return 0;
}

int rcp_sock_recv(struct rcp *p, void *buf, size_t len)
{
	char *b = buf;
	ssize_t n;

	while (len) {
		n = recv(p->sock, b, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rcp_fail(p, -EPIPE, "peer socket: %s",
					n ? strerror(errno) : "closed");
		b += n;
		len -= n;
	}
	return 0;
}

int rcp_reply(struct rcp *p, int status, uint32_t phase)
{
	struct rcp_reply r = { .status = status, .phase = phase };

	return rcp_sock_send(p, &r, sizeof(r));
}

int rcp_post_recv_slot(struct rcp *p, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf + RCP_RECV_OFF +
			slot * RCP_RECV_SLOT_SIZE,
		.length = RCP_RECV_SLOT_SIZE,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(p->qp, &wr, &bad);
	if (ret)
		return rcp_fail(p, -ret, "ibv_post_recv: %s", strerror(ret));
	return 0;
}

/* Reaps send completions; with block, waits for at least one. */
static int rcp_reap(struct rcp *p, bool block)
{
	uint64_t deadline = 0;
	struct ibv_wc wc[16];
	int n, i;

	for (;;) {
		n = ibv_poll_cq(p->scq, 16, wc);
		if (n < 0)
			return rcp_fail(p, -EIO, "ibv_poll_cq failed");
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return rcp_fail(p, -EIO,
						"send completion: %s (%d)",
						ibv_wc_status_str(wc[i].status),
						wc[i].status);
		}
		p->sig_out -= n;
		if (n || !block)
			return 0;
		if (p->yield)
			sched_yield();
		if (!deadline)
			deadline = rcp_now_ns() + RCP_TIMEOUT_NS;
		else if (rcp_now_ns() > deadline)
			return rcp_fail(p, -ETIMEDOUT,
					"no send completion in %llu s",
					RCP_TIMEOUT_NS / 1000000000ULL);
	}
}

int rcp_post(struct rcp *p, struct ibv_send_wr *wr, unsigned int sig_every,
	     unsigned int depth, bool force)
{
	struct ibv_send_wr *bad;
	int ret;

	/* A signaled completion retires every WR before it, so this bounds
	 * the WRs in the send queue. */
	while (p->sig_out * sig_every + p->unsignaled + 1 > depth) {
		ret = rcp_reap(p, true);
		if (ret)
			return ret;
	}
	if (force || ++p->unsignaled >= sig_every) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		p->unsignaled = 0;
		p->sig_out++;
	}
	ret = ibv_post_send(p->qp, wr, &bad);
	if (ret) {
		if (wr->send_flags & IBV_SEND_SIGNALED)
			p->sig_out--;
		return rcp_fail(p, -ret, "ibv_post_send: %s", strerror(ret));
	}
	return 0;
}

int rcp_drain(struct rcp *p)
{
	int ret;

	while (p->sig_out) {
		ret = rcp_reap(p, true);
		if (ret)
			return ret;
	}
	p->unsignaled = 0;
	return 0;
}

static struct ibv_device *rcp_find(struct rcp *p, struct ibv_device **list,
				   const char *name)
{
	int i;

	for (i = 0; list[i]; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	rcp_fail(p, -ENODEV, "no RDMA device%s%s", name ? " named " : "",
		 name ? name : "");
	return NULL;
}

static int rcp_create(struct rcp *p)
{
	struct ibv_qp_init_attr init = {
		.cap = {
			.max_send_wr = RCP_SQ_DEPTH,
			.max_recv_wr = RCP_RECV_SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
		.qp_type = IBV_QPT_RC,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | p->mr_access;

	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return rcp_fail(p, -errno, "ibv_alloc_pd: %s", strerror(errno));
	p->mr = ibv_reg_mr(p->pd, p->buf, p->buf_size, access);
	if (!p->mr)
		return rcp_fail(p, -errno, "ibv_reg_mr: %s", strerror(errno));
	p->scq = ibv_create_cq(p->ctx, RCP_SQ_DEPTH, NULL, NULL, 0);
	p->rcq = ibv_create_cq(p->ctx, RCP_RECV_SLOTS, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		return rcp_fail(p, -errno, "ibv_create_cq: %s",
				strerror(errno));
	init.send_cq = p->scq;
	init.recv_cq = p->rcq;
	p->qp = ibv_create_qp(p->pd, &init);
	if (!p->qp) {
		/* Inline data is an optimisation; do without it. */
		init.cap.max_inline_data = 0;
		p->qp = ibv_create_qp(p->pd, &init);
	}
	if (!p->qp)
		return rcp_fail(p, -errno, "ibv_create_qp: %s",
				strerror(errno));
	p->max_inline = init.cap.max_inline_data;
	return 0;
}

static int rcp_modify(struct rcp *p, struct ibv_qp_attr *a, int mask,
		      const char *what)
{
	int ret = ibv_modify_qp(p->qp, a, mask);

	if (ret)
		return rcp_fail(p, -ret, "ibv_modify_qp to %s: %s", what,
				strerror(ret));
	return 0;
}

/* INIT: from here on receives may be posted. */
static int rcp_init_qp(struct rcp *p)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	return rcp_modify(p, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS,
			  "INIT");
}

static int rcp_connect(struct rcp *p, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = p->remote.qpn;
	a.rq_psn = p->remote.psn;
	a.max_dest_rd_atomic = RCP_RD_DEPTH;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = p->remote.gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	ret = rcp_modify(p, &a,
			 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				 IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER,
			 "RTR");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->local.psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = RCP_RD_DEPTH;
	return rcp_modify(p, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC,
			  "RTS");
}

/* Both sides must be at RTR before either sends: meet on the socket. */
static int rcp_barrier(struct rcp *p)
{
	char c = 0;
	int ret;

	ret = rcp_sock_send(p, &c, 1);
	return ret ? ret : rcp_sock_recv(p, &c, 1);
}

/* How the device reaches buf, from our own maps: "moved" onto the
 * library's memfd (the daemon maps it), "in place" (reached through
 * /proc/self/mem), or "on demand" for an ODP MR. */
static void rcp_mem_path(const void *buf, bool odp, char *out, size_t n)
{
	uintptr_t a = (uintptr_t)buf, lo, hi;
	const char *path = "in place";
	char line[512];
	FILE *f;

	if (odp) {
		snprintf(out, n, "on demand");
		return;
	}
	f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2 ||
		    a < lo || a >= hi)
			continue;
		if (strstr(line, "/memfd:" SRD_MEMFD_NAME))
			path = "moved";
		break;
	}
	if (f)
		fclose(f);
	else
		path = "unknown";
	snprintf(out, n, "%s", path);
}

int rcp_open(struct rcp *p, int sock, const char *devname, size_t bw_max,
	     int mr_access)
{
	struct ibv_device **list;
	struct ibv_device *dev;
	struct ibv_port_attr pa;
	unsigned int i;
	int ret;

	memset(p, 0, sizeof(*p));
	p->sock = sock;
	p->bw_max = bw_max;
	p->mr_access = mr_access;
	p->yield = rcp_cpus() < 3;
	p->buf_size = RCP_BW_OFF + ((bw_max + 4095) & ~(size_t)4095);
	p->buf = mmap(NULL, p->buf_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->buf == MAP_FAILED) {
		p->buf = NULL;
		return rcp_fail(p, -ENOMEM, "cannot allocate %zu bytes",
				p->buf_size);
	}

	list = ibv_get_device_list(NULL);
	if (!list)
		return rcp_fail(p, -errno, "ibv_get_device_list: %s",
				strerror(errno));
	dev = rcp_find(p, list, devname);
	if (dev) {
		p->ctx = ibv_open_device(dev);
		if (!p->ctx)
			rcp_fail(p, -errno, "ibv_open_device: %s",
				 strerror(errno));
	}
	ibv_free_device_list(list);
	if (!p->ctx)
		return -ENODEV;

	ret = ibv_query_port(p->ctx, 1, &pa);
	if (ret)
		return rcp_fail(p, -ret, "ibv_query_port: %s", strerror(ret));
	ret = ibv_query_gid(p->ctx, 1, 0, &p->local.gid);
	if (ret)
		return rcp_fail(p, -EIO, "ibv_query_gid failed");
	ret = rcp_create(p);
	if (ret)
		return ret;

	p->local.qpn = p->qp->qp_num;
	p->local.psn = (uint32_t)(rcp_now_ns() ^ getpid()) & 0xffffff;
	p->local.addr = (uintptr_t)p->buf;
	p->local.rkey = p->mr->rkey;
	p->local.bw_max = bw_max;
	rcp_mem_path(p->buf, (mr_access & IBV_ACCESS_ON_DEMAND) != 0,
		     p->local.mem_path, sizeof(p->local.mem_path));
	ret = rcp_sock_send(p, &p->local, sizeof(p->local));
	if (!ret)
		ret = rcp_sock_recv(p, &p->remote, sizeof(p->remote));
	if (ret)
		return ret;
	if (p->remote.bw_max != bw_max)
		return rcp_fail(p, -EINVAL, "peer has another buffer size");

	ret = rcp_init_qp(p);
	for (i = 0; !ret && i < RCP_RECV_SLOTS; i++)
		ret = rcp_post_recv_slot(p, i);
	if (!ret)
		ret = rcp_connect(p, pa.active_mtu);
	return ret ? ret : rcp_barrier(p);
}

void rcp_close(struct rcp *p)
{
	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	if (p->buf)
		munmap(p->buf, p->buf_size);
	p->qp = NULL;
	p->scq = p->rcq = NULL;
	p->mr = NULL;
	p->pd = NULL;
	p->ctx = NULL;
	p->buf = NULL;
}

int rcp_serve(struct rcp *p)
{
	struct rcp_cmd c;
	int ret, failed = 0;

	for (;;) {
		ret = rcp_sock_recv(p, &c, sizeof(c));
		if (ret)
			return ret;
		switch (c.op) {
		case RCP_OP_QUIT:
			rcp_reply(p, 0, RCP_PHASE_DONE);
			return failed;
		case RCP_OP_WRITE_LAT:
			ret = rcp_serve_write_lat(p, &c);
			break;
		case RCP_OP_SEND_LAT:
			ret = rcp_serve_send_lat(p, &c);
			break;
		case RCP_OP_WRITE_BW:
			ret = rcp_serve_write_bw(p, &c);
			break;
		case RCP_OP_READ_BW:
			ret = rcp_serve_read_bw(p, &c);
			break;
		default:
			ret = rcp_fail(p, -EINVAL, "unknown command %u", c.op);
			break;
		}
		if (ret && !failed)
			failed = ret;
		if (rcp_reply(p, ret, RCP_PHASE_DONE))
			return -EPIPE;
	}
}

int rcp_quit(struct rcp *p)
{
	struct rcp_cmd c = { .op = RCP_OP_QUIT };
	struct rcp_reply r;
	int ret;

	ret = rcp_sock_send(p, &c, sizeof(c));
	return ret ? ret : rcp_sock_recv(p, &r, sizeof(r));
}
