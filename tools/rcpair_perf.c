/* SPDX-License-Identifier: MIT */
/* The measurements over an RC pair: both sides of each. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "rcpair_int.h"

/* The 2-byte value of iteration i: never 0, which marks "nothing yet". */
static uint16_t rcp_val(unsigned int i)
{
	return (uint16_t)(i % 65535 + 1);
}

static uint16_t rcp_load16(const char *p)
{
	return __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
}

/* Busy-polls our latency slot until the peer's write of v lands. */
static int rcp_wait_val(struct rcp *p, uint16_t v)
{
	const char *slot = p->buf + RCP_LAT_RX_OFF;
	uint64_t deadline = 0;
	unsigned int spins = 0;

	while (rcp_load16(slot) != v) {
		if (p->yield)
			sched_yield();
		/* Read the clock only now and then: it costs more than a
		 * poll of our own memory. */
		if (++spins & 1023)
			continue;
		if (!deadline)
			deadline = rcp_now_ns() + RCP_TIMEOUT_NS;
		else if (rcp_now_ns() > deadline)
			return rcp_fail(p, -ETIMEDOUT,
					"RDMA WRITE of %u never arrived", v);
	}
	return 0;
}

static int rcp_write_val(struct rcp *p, uint16_t v, bool last)
{
	char *src = p->buf + RCP_LAT_TX_OFF;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src,
		.length = 2,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = p->max_inline >= 2 ? IBV_SEND_INLINE : 0,
		.wr.rdma = {
			.remote_addr = p->remote.addr + RCP_LAT_RX_OFF,
			.rkey = p->remote.rkey,
		},
	};

	memcpy(src, &v, 2);
	return rcp_post(p, &wr, RCP_LAT_SIG_EVERY, RCP_LAT_DEPTH, last);
}

static int rcp_send_val(struct rcp *p, uint16_t v, bool last)
{
	char *src = p->buf + RCP_SEND_TX_OFF;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src,
		.length = 2,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = p->max_inline >= 2 ? IBV_SEND_INLINE : 0,
	};

	memcpy(src, &v, 2);
	return rcp_post(p, &wr, RCP_LAT_SIG_EVERY, RCP_LAT_DEPTH, last);
}

/* Busy-polls the receive CQ for one SEND, checks it carries v, and gives
 * the slot back to the receive queue. */
static int rcp_recv_val(struct rcp *p, uint16_t v, uint64_t timeout_ns)
{
	uint64_t deadline = 0;
	unsigned int spins = 0;
	struct ibv_wc wc;
	uint16_t got;
	int n;

	while (!(n = ibv_poll_cq(p->rcq, 1, &wc))) {
		if (p->yield)
			sched_yield();
		if (++spins & 1023)
			continue;
		if (!deadline)
			deadline = rcp_now_ns() + timeout_ns;
		else if (rcp_now_ns() > deadline)
			return rcp_fail(p, -ETIMEDOUT, "SEND %u never arrived",
					v);
	}
	if (n < 0)
		return rcp_fail(p, -EIO, "ibv_poll_cq failed");
	if (wc.status != IBV_WC_SUCCESS)
		return rcp_fail(p, -EIO, "receive completion: %s (%d)",
				ibv_wc_status_str(wc.status), wc.status);
	if (wc.wr_id >= RCP_RECV_SLOTS || wc.byte_len != 2 ||
	    wc.opcode != IBV_WC_RECV)
		return rcp_fail(p, -EILSEQ,
				"bad receive: slot %llu, %u bytes, opcode %d",
				(unsigned long long)wc.wr_id, wc.byte_len,
				wc.opcode);
	memcpy(&got, p->buf + RCP_RECV_OFF + wc.wr_id * RCP_RECV_SLOT_SIZE, 2);
	if (got != v)
		return rcp_fail(p, -EILSEQ, "SEND carried %u, expected %u", got,
				v);
	return rcp_post_recv_slot(p, wc.wr_id);
}

/* Initiator: sends the command and waits for the server to be ready. */
static int rcp_start(struct rcp *p, const struct rcp_cmd *c)
{
	struct rcp_reply r;
	int ret;

	ret = rcp_sock_send(p, c, sizeof(*c));
	if (!ret)
		ret = rcp_sock_recv(p, &r, sizeof(r));
	if (ret)
		return ret;
	if (r.phase != RCP_PHASE_READY)
		return rcp_fail(p, r.status ? r.status : -EPROTO,
				"peer refused: %s", strerror(-r.status));
	return 0;
}

/* Initiator: collects the server's verdict; our own error wins. */
static int rcp_finish(struct rcp *p, int ret)
{
	struct rcp_reply r;
	int sret;

	sret = rcp_sock_recv(p, &r, sizeof(r));
	if (ret)
		return ret;
	if (sret)
		return sret;
	if (r.status)
		return rcp_fail(p, r.status, "peer failed: %s",
				strerror(-r.status));
	return 0;
}

/* A ping-pong hop's two halves: by RDMA WRITE into the peer's slot and
 * a spin on our own, or by SEND and its receive completion. */
static int lat_send(struct rcp *p, bool by_send, unsigned int i, bool last)
{
	return by_send ? rcp_send_val(p, rcp_val(i), last)
		       : rcp_write_val(p, rcp_val(i), last);
}

static int lat_wait(struct rcp *p, bool by_send, unsigned int i)
{
	return by_send ? rcp_recv_val(p, rcp_val(i), RCP_TIMEOUT_NS)
		       : rcp_wait_val(p, rcp_val(i));
}

static int lat_run(struct rcp *p, bool by_send, unsigned int iters,
		   unsigned int warmup, uint64_t *rtt_ns)
{
	struct rcp_cmd c = { .op = by_send ? RCP_OP_SEND_LAT : RCP_OP_WRITE_LAT,
			     .iters = iters + warmup };
	unsigned int i, n = iters + warmup;
	uint64_t t0;
	int ret;

	/* Zero our slot before the peer can write into it. */
	if (!by_send)
		memset(p->buf + RCP_LAT_RX_OFF, 0, 2);
	ret = rcp_start(p, &c);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		t0 = rcp_now_ns();
		ret = lat_send(p, by_send, i, i == n - 1);
		if (!ret)
			ret = lat_wait(p, by_send, i);
		if (ret)
			break;
		if (i >= warmup)
			rtt_ns[i - warmup] = rcp_now_ns() - t0;
	}
	if (!ret)
		ret = rcp_drain(p);
	return rcp_finish(p, ret);
}

static int lat_serve(struct rcp *p, bool by_send, const struct rcp_cmd *c)
{
	unsigned int i;
	int ret;

	if (!by_send)
		memset(p->buf + RCP_LAT_RX_OFF, 0, 2);
	ret = rcp_reply(p, 0, RCP_PHASE_READY);
	for (i = 0; !ret && i < c->iters; i++) {
		ret = lat_wait(p, by_send, i);
		if (!ret)
			ret = lat_send(p, by_send, i, i == c->iters - 1);
	}
	return ret ? ret : rcp_drain(p);
}

int rcp_write_lat(struct rcp *p, unsigned int iters, unsigned int warmup,
		  uint64_t *rtt_ns)
{
	return lat_run(p, false, iters, warmup, rtt_ns);
}

int rcp_serve_write_lat(struct rcp *p, const struct rcp_cmd *c)
{
	return lat_serve(p, false, c);
}

int rcp_send_lat(struct rcp *p, unsigned int iters, unsigned int warmup,
		 uint64_t *rtt_ns)
{
	return lat_run(p, true, iters, warmup, rtt_ns);
}

int rcp_serve_send_lat(struct rcp *p, const struct rcp_cmd *c)
{
	return lat_serve(p, true, c);
}

/* splitmix64: a cheap pattern that differs in every word and every run. */
static uint64_t rcp_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void rcp_fill(char *buf, size_t size, uint64_t seed)
{
	size_t i;
	uint64_t w;

	for (i = 0; i < size; i += 8) {
		w = rcp_mix(seed + i);
		memcpy(buf + i, &w, size - i < 8 ? size - i : 8);
	}
}

/* Offset of the first byte that differs from the pattern, or -1. */
static long rcp_check(const char *buf, size_t size, uint64_t seed)
{
	size_t i, n, j;
	uint64_t w;

	for (i = 0; i < size; i += 8) {
		w = rcp_mix(seed + i);
		n = size - i < 8 ? size - i : 8;
		if (!memcmp(buf + i, &w, n))
			continue;
		for (j = 0; j < n; j++)
			if (buf[i + j] != ((char *)&w)[j])
				return i + j;
	}
	return -1;
}

static int rcp_bw_one(struct rcp *p, enum ibv_wr_opcode op, size_t size,
		      unsigned int sig, unsigned int depth, bool last)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf + RCP_BW_OFF,
		.length = size,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.wr.rdma = {
			.remote_addr = p->remote.addr + RCP_BW_OFF,
			.rkey = p->remote.rkey,
		},
	};

	return rcp_post(p, &wr, sig, depth, last);
}

/* Initiator: the SEND the peer waits for (RC delivers it after all that
 * went before), then the peer's verdict. */
static int rcp_bw_end(struct rcp *p, int ret, unsigned int iters)
{
	if (!ret)
		ret = rcp_send_val(p, rcp_val(iters), true);
	if (!ret)
		ret = rcp_drain(p);
	return rcp_finish(p, ret);
}

static int rcp_bad_size(struct rcp *p, const struct rcp_cmd *c)
{
	return rcp_fail(p, -EINVAL, "bad bandwidth size %llu",
			(unsigned long long)c->size);
}

/* Initiator: starts the peer on c, or fails without starting it. */
static int rcp_bw_start(struct rcp *p, const struct rcp_cmd *c,
			unsigned int depth, unsigned int sig_every)
{
	if (!c->size || c->size > p->bw_max || !c->iters || !depth ||
	    !sig_every || sig_every > depth || depth > RCP_SQ_DEPTH)
		return rcp_fail(p, -EINVAL, "bad bandwidth parameters");
	return rcp_start(p, c);
}

/* Initiator, the peer started: iters WRs of op, timed from the first
 * post to the last completion. */
static int rcp_bw_run(struct rcp *p, enum ibv_wr_opcode op,
		      const struct rcp_cmd *c, unsigned int depth,
		      unsigned int sig_every, uint64_t *ns)
{
	unsigned int i;
	uint64_t t0;
	int ret = 0;

	t0 = rcp_now_ns();
	for (i = 0; !ret && i < c->iters; i++)
		ret = rcp_bw_one(p, op, c->size, sig_every, depth,
				 i == c->iters - 1);
	if (!ret)
		ret = rcp_drain(p);
	*ns = rcp_now_ns() - t0;
	return ret;
}

int rcp_write_bw(struct rcp *p, size_t size, unsigned int iters,
		 unsigned int depth, unsigned int sig_every, uint64_t *ns)
{
	struct rcp_cmd c = {
		.op = RCP_OP_WRITE_BW,
		.iters = iters,
		.size = size,
		.seed = rcp_now_ns(),
	};
	int ret = rcp_bw_start(p, &c, depth, sig_every);

	if (ret)
		return ret;
	ret = rcp_bw_run(p, IBV_WR_RDMA_WRITE, &c, depth, sig_every, ns);

	/* Then a write of known bytes, and a SEND the peer waits for:
	 * RC delivers it only after the write has landed. */
	if (!ret) {
		rcp_fill(p->buf + RCP_BW_OFF, size, c.seed);
		ret = rcp_bw_one(p, IBV_WR_RDMA_WRITE, size, 1, depth, true);
	}
	return rcp_bw_end(p, ret, iters);
}

int rcp_serve_write_bw(struct rcp *p, const struct rcp_cmd *c)
{
	uint64_t timeout = RCP_TIMEOUT_NS;
	long bad;
	int ret;

	if (!c->size || c->size > p->bw_max)
		return rcp_bad_size(p, c);
	/* Stale bytes must not pass the check. */
	memset(p->buf + RCP_BW_OFF, 0, c->size);
	ret = rcp_reply(p, 0, RCP_PHASE_READY);
	if (ret)
		return ret;
	/* Allow the transfer itself at a slow 100 MB/s on top. */
	timeout += c->size * c->iters * 10;
	ret = rcp_recv_val(p, rcp_val(c->iters), timeout);
	if (ret)
		return ret;
	bad = rcp_check(p->buf + RCP_BW_OFF, c->size, c->seed);
	if (bad >= 0)
		return rcp_fail(p, -EILSEQ,
				"byte %ld of the %llu-byte write is wrong", bad,
				(unsigned long long)c->size);
	return 0;
}

int rcp_read_bw(struct rcp *p, size_t size, unsigned int iters,
		unsigned int depth, unsigned int sig_every, uint64_t *ns)
{
	struct rcp_cmd c = {
		.op = RCP_OP_READ_BW,
		.iters = iters,
		.size = size,
		.seed = rcp_now_ns(),
	};
	long bad;
	int ret;

	ret = rcp_bw_start(p, &c, depth, sig_every);
	if (ret)
		return ret;
	/* Stale bytes must not pass the check. */
	memset(p->buf + RCP_BW_OFF, 0, size);
	ret = rcp_bw_run(p, IBV_WR_RDMA_READ, &c, depth, sig_every, ns);
	if (!ret) {
		bad = rcp_check(p->buf + RCP_BW_OFF, size, c.seed);
		if (bad >= 0)
			ret = rcp_fail(p, -EILSEQ,
				       "byte %ld of the %zu-byte read is wrong",
				       bad, size);
	}
	/* The peer waits for this SEND before it answers. */
	return rcp_bw_end(p, ret, iters);
}

int rcp_serve_read_bw(struct rcp *p, const struct rcp_cmd *c)
{
	uint64_t timeout = RCP_TIMEOUT_NS;
	int ret;

	if (!c->size || c->size > p->bw_max)
		return rcp_bad_size(p, c);
	rcp_fill(p->buf + RCP_BW_OFF, c->size, c->seed);
	ret = rcp_reply(p, 0, RCP_PHASE_READY);
	if (ret)
		return ret;
	timeout += c->size * c->iters * 10;
	return rcp_recv_val(p, rcp_val(c->iters), timeout);
}

static int rcp_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void rcp_percentiles(uint64_t *v, unsigned int n, double *median, double *p99)
{
	unsigned int i99;

	*median = *p99 = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), rcp_cmp_u64);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	i99 = (unsigned int)((n - 1) * 0.99 + 0.5);
	*p99 = v[i99];
}
