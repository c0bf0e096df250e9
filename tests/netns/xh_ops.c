/* SPDX-License-Identifier: MIT */
/*
 * Every operation between two hosts, in order: SEND (also empty and
 * inline), SEND with immediate, RDMA WRITE, WRITE with immediate, RDMA
 * READ, compare-and-swap, fetch-and-add, several SGEs each way, 4 MiB
 * messages, and UD with the GRH checked and answered.  The client is the
 * requester; the server checks what arrived, byte for byte.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "common/inet.h"
#include "xhost.h"

#define W 10000 /* ms for one completion */
#define SIG IBV_SEND_SIGNALED

static void op_send(struct xh *x, struct xh_qp *q)
{
	struct ibv_wc wc;

	t_log("SEND: 3000 bytes, empty, 48 bytes inline");
	if (x->server) {
		memset(x->b.p, 0, 32768);
		t_post_recv(q->qp, 1, x->b.mr, x->b.p, 16384);
		t_post_recv(q->qp, 2, x->b.mr, x->b.p + 16384, 16);
		t_post_recv(q->qp, 3, x->b.mr, x->b.p + 20480, 64);
		xh_sync(x);
		XH_EXPECT(q->rcq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 3000);
		T_EQ(wc.qp_num, q->qp->qp_num);
		T_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0);
		T_CHECK_FILL(x->b.p, 3000, 11);
		T_EQ(x->b.p[3000], 0);
		XH_EXPECT(q->rcq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 0);
		XH_EXPECT(q->rcq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 48);
		T_CHECK_FILL(x->b.p + 20480, 48, 12);
	} else {
		xh_sync(x);
		t_fill(x->a.p, 3000, 11);
		t_fill(x->a.p + 8192, 48, 12);
		t_post_send(q->qp, 1, IBV_WR_SEND, x->a.mr, x->a.p, 3000, SIG,
			    0, 0);
		t_post_send(q->qp, 2, IBV_WR_SEND, NULL, NULL, 0, SIG, 0, 0);
		t_post_send(q->qp, 3, IBV_WR_SEND, NULL, x->a.p + 8192, 48,
			    SIG | IBV_SEND_INLINE, 0, 0);
		/* The inline data was copied at post time. */
		memset(x->a.p + 8192, 0xee, 48);
		for (uint64_t id = 1; id <= 3; id++)
			XH_EXPECT(q->scq, &wc, id, IBV_WC_SUCCESS, IBV_WC_SEND,
				  W);
	}
	xh_sync(x);
}

static void op_send_imm(struct xh *x, struct xh_qp *q)
{
	const uint64_t id = 0x5eed0002;
	struct ibv_wc wc;

	t_log("SEND_WITH_IMM: 5000 bytes, then 100");
	if (x->server) {
		t_post_recv(q->qp, id, x->b.mr, x->b.p, 8192);
		t_post_recv(q->qp, id + 1, x->b.mr, x->b.p + 8192, 8192);
		xh_sync(x);
		XH_EXPECT(q->rcq, &wc, id, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 5000);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		T_EQ(wc.imm_data, htobe32((uint32_t)id));
		T_CHECK_FILL(x->b.p, 5000, 21);
		XH_EXPECT(q->rcq, &wc, id + 1, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 100);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		T_EQ(wc.imm_data, htobe32((uint32_t)id + 1));
		T_CHECK_FILL(x->b.p + 8192, 100, 22);
	} else {
		xh_sync(x);
		t_fill(x->a.p, 5000, 21);
		t_fill(x->a.p + 8192, 100, 22);
		t_post_send(q->qp, id, IBV_WR_SEND_WITH_IMM, x->a.mr, x->a.p,
			    5000, SIG, 0, 0);
		t_post_send(q->qp, id + 1, IBV_WR_SEND_WITH_IMM, x->a.mr,
			    x->a.p + 8192, 100, SIG, 0, 0);
		XH_EXPECT(q->scq, &wc, id, IBV_WC_SUCCESS, IBV_WC_SEND, W);
		XH_EXPECT(q->scq, &wc, id + 1, IBV_WC_SUCCESS, IBV_WC_SEND, W);
	}
	xh_sync(x);
}

static void op_write(struct xh *x, struct xh_qp *q)
{
	struct ibv_wc wc;

	t_log("RDMA WRITE: 10000 bytes at offset 100, then 1 byte");
	if (x->server) {
		memset(x->b.p, 0, 16384);
		xh_sync(x);
		xh_sync(x); /* the client saw its completions */
		for (int i = 0; i < 100; i++)
			T_EQ(x->b.p[i], 0);
		T_CHECK_FILL(x->b.p + 100, 10000, 31);
		T_EQ(x->b.p[10100], 0);
		T_EQ(x->b.p[12000], 0x42);
		T_EQ(x->b.p[12001], 0);
	} else {
		xh_sync(x);
		t_fill(x->a.p, 10000, 31);
		x->a.p[16000] = 0x42;
		t_post_send(q->qp, 1, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 10000,
			    SIG, q->remote.addr + 100, q->remote.rkey);
		t_post_send(q->qp, 2, IBV_WR_RDMA_WRITE, x->a.mr,
			    x->a.p + 16000, 1, SIG, q->remote.addr + 12000,
			    q->remote.rkey);
		XH_EXPECT(q->scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, W);
		XH_EXPECT(q->scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, W);
		xh_sync(x);
	}
	xh_sync(x);
}

static void op_write_imm(struct xh *x, struct xh_qp *q)
{
	const uint64_t id = 0xa11ce004;
	struct ibv_wc wc;

	t_log("RDMA WRITE_WITH_IMM: 5000 bytes, then none");
	if (x->server) {
		memset(x->b.p, 0, 8192);
		/* The receives are consumed, their buffers not written. */
		memset(x->b.p + 65536, 0x77, 128);
		t_post_recv(q->qp, 7, x->b.mr, x->b.p + 65536, 64);
		t_post_recv(q->qp, 8, x->b.mr, x->b.p + 65536 + 64, 64);
		xh_sync(x);
		XH_EXPECT(q->rcq, &wc, 7, IBV_WC_SUCCESS,
			  IBV_WC_RECV_RDMA_WITH_IMM, W);
		T_EQ(wc.byte_len, 5000);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
		T_EQ(wc.imm_data, htobe32((uint32_t)id));
		T_CHECK_FILL(x->b.p + 1000, 5000, 41);
		T_EQ(x->b.p[999], 0);
		T_EQ(x->b.p[6000], 0);
		/* An empty WRITE_WITH_IMM: a notification, no data. */
		XH_EXPECT(q->rcq, &wc, 8, IBV_WC_SUCCESS,
			  IBV_WC_RECV_RDMA_WITH_IMM, W);
		T_EQ(wc.byte_len, 0);
		T_EQ(wc.imm_data, htobe32((uint32_t)id + 1));
		for (int i = 0; i < 128; i++)
			T_EQ(x->b.p[65536 + i], 0x77);
	} else {
		xh_sync(x);
		t_fill(x->a.p, 5000, 41);
		t_post_send(q->qp, id, IBV_WR_RDMA_WRITE_WITH_IMM, x->a.mr,
			    x->a.p, 5000, SIG, q->remote.addr + 1000,
			    q->remote.rkey);
		t_post_send(q->qp, id + 1, IBV_WR_RDMA_WRITE_WITH_IMM, NULL,
			    NULL, 0, SIG, q->remote.addr, q->remote.rkey);
		XH_EXPECT(q->scq, &wc, id, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			  W);
		XH_EXPECT(q->scq, &wc, id + 1, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_WRITE, W);
	}
	xh_sync(x);
}

static void op_read(struct xh *x, struct xh_qp *q)
{
	struct ibv_wc wc;

	t_log("RDMA READ: 9000 bytes, then 1 byte");
	if (x->server) {
		t_fill(x->b.p, 9000, 51);
		x->b.p[20000] = 0x5c;
		xh_sync(x);
	} else {
		memset(x->a.p, 0, 16384);
		xh_sync(x);
		t_post_send(q->qp, 1, IBV_WR_RDMA_READ, x->a.mr, x->a.p, 9000,
			    SIG, q->remote.addr, q->remote.rkey);
		t_post_send(q->qp, 2, IBV_WR_RDMA_READ, x->a.mr, x->a.p + 10000,
			    1, SIG, q->remote.addr + 20000, q->remote.rkey);
		XH_EXPECT(q->scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, W);
		T_EQ(wc.byte_len, 9000);
		XH_EXPECT(q->scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, W);
		T_CHECK_FILL(x->a.p, 9000, 51);
		T_EQ(x->a.p[9000], 0);
		T_EQ(x->a.p[10000], 0x5c);
		T_EQ(x->a.p[10001], 0);
	}
	xh_sync(x);
}

#define ATOM_OFF 4096
#define V0 0x1111222233334444ull
#define V1 0x5555666677778888ull

static void op_atomics(struct xh *x, struct xh_qp *q)
{
	uint64_t *loc = (uint64_t *)x->a.p,
		 *tgt = (uint64_t *)(x->b.p + ATOM_OFF);
	uint64_t raddr = q->remote.addr + ATOM_OFF;
	struct ibv_wc wc;

	t_log("ATOMIC CMP_SWP (hit, miss) and FETCH_ADD (+5, -1)");
	if (x->server) {
		*tgt = V0;
		xh_sync(x);
		xh_sync(x);
		T_EQ(*tgt, V1);
		xh_sync(x);
		xh_sync(x);
		T_EQ(*tgt, V1 + 4);
		return;
	}
	xh_sync(x);
	loc[0] = loc[1] = 0;
	t_post_atomic(q->qp, 1, IBV_WR_ATOMIC_CMP_AND_SWP, x->a.mr, loc, raddr,
		      q->remote.rkey, V0, V1);
	XH_EXPECT(q->scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, W);
	T_EQ(wc.byte_len, 8);
	T_EQ(loc[0], V0);
	/* The compare fails now: the old value comes back, nothing moves. */
	t_post_atomic(q->qp, 2, IBV_WR_ATOMIC_CMP_AND_SWP, x->a.mr, loc + 1,
		      raddr, q->remote.rkey, V0, 0xdeadull);
	XH_EXPECT(q->scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, W);
	T_EQ(loc[1], V1);
	xh_sync(x);
	xh_sync(x);
	t_post_atomic(q->qp, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, x->a.mr, loc,
		      raddr, q->remote.rkey, 5, 0);
	t_post_atomic(q->qp, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, x->a.mr, loc + 1,
		      raddr, q->remote.rkey, ~0ull, 0);
	XH_EXPECT(q->scq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, W);
	XH_EXPECT(q->scq, &wc, 4, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, W);
	T_EQ(loc[0], V1);
	T_EQ(loc[1], V1 + 5);
	xh_sync(x);
}

/* Checks that the pieces of a pattern of seed s landed where sges say. */
static void check_scatter(const uint8_t *base, const uint32_t (*sge)[2], int n,
			  uint32_t total, uint32_t seed)
{
	uint32_t done = 0;

	for (int i = 0; i < n && done < total; i++) {
		uint32_t len = sge[i][1];

		if (len > total - done)
			len = total - done;
		for (uint32_t j = 0; j < len; j++)
			if (base[sge[i][0] + j] != t_pattern(seed, done + j))
				T_FAIL("SGE %d byte %u: %#x, expected %#x", i,
				       j, base[sge[i][0] + j],
				       t_pattern(seed, done + j));
		done += len;
	}
	T_EQ(done, total);
}

static void fill_gather(uint8_t *base, const uint32_t (*sge)[2], int n,
			uint32_t seed)
{
	uint32_t done = 0;

	for (int i = 0; i < n; i++)
		for (uint32_t j = 0; j < sge[i][1]; j++)
			base[sge[i][0] + j] = t_pattern(seed, done++);
}

static void op_sges(struct xh *x, struct xh_qp *q)
{
	static const uint32_t gather[3][2] = { { 100, 100 },
					       { 4096, 2000 },
					       { 9000, 37 } };
	static const uint32_t scatter[2][2] = { { 0, 1000 }, { 8192, 4000 } };
	static const uint32_t wgather[4][2] = {
		{ 0, 1 }, { 1000, 2999 }, { 8000, 4096 }, { 20000, 5 }
	};
	static const uint32_t rscatter[2][2] = { { 3, 3333 }, { 50000, 6000 } };
	struct ibv_wc wc;

	t_log("SGEs: SEND 3 -> 2, WRITE of 4, READ into 2");
	if (x->server) {
		memset(x->b.p, 0, 65536);
		xh_post_recv_sges(q, 9, &x->b, scatter, 2);
		xh_sync(x);
		XH_EXPECT(q->rcq, &wc, 9, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 2137);
		check_scatter(x->b.p, scatter, 2, 2137, 61);
		T_EQ(x->b.p[8192 + 1137], 0);
		xh_sync(x);
		xh_sync(x);
		/* The WRITE's 4 pieces, contiguous at 30000. */
		T_CHECK_FILL(x->b.p + 30000, 1 + 2999 + 4096 + 5, 62);
		t_fill(x->b.p + 40000, 9333, 63);
		xh_sync(x);
		xh_sync(x);
		return;
	}
	xh_sync(x);
	fill_gather(x->a.p, gather, 3, 61);
	xh_post_sges(q, 1, IBV_WR_SEND, &x->a, gather, 3, SIG, 0, 0);
	XH_EXPECT(q->scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND, W);
	xh_sync(x);
	fill_gather(x->a.p, wgather, 4, 62);
	xh_post_sges(q, 2, IBV_WR_RDMA_WRITE, &x->a, wgather, 4, SIG,
		     q->remote.addr + 30000, q->remote.rkey);
	XH_EXPECT(q->scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, W);
	xh_sync(x);
	xh_sync(x);
	memset(x->a.p, 0, 65536);
	xh_post_sges(q, 3, IBV_WR_RDMA_READ, &x->a, rscatter, 2, SIG,
		     q->remote.addr + 40000, q->remote.rkey);
	XH_EXPECT(q->scq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, W);
	T_EQ(wc.byte_len, 9333);
	check_scatter(x->a.p, rscatter, 2, 9333, 63);
	T_EQ(x->a.p[2], 0);
	T_EQ(x->a.p[3336], 0);
	xh_sync(x);
}

static void op_large(struct xh *x, struct xh_qp *q)
{
	const uint32_t len = 4 * XH_MIB;
	struct ibv_wc wc;
	double t0;

	t_log("4 MiB: WRITE, SEND, READ");
	if (x->server) {
		memset(x->b.p, 0, len);
		xh_sync(x);
		xh_sync(x);
		T_CHECK_FILL(x->b.p, len, 71);
		memset(x->b.p, 0, len);
		t_post_recv(q->qp, 5, x->b.mr, x->b.p, len);
		xh_sync(x);
		XH_EXPECT(q->rcq, &wc, 5, IBV_WC_SUCCESS, IBV_WC_RECV, 30000);
		T_EQ(wc.byte_len, len);
		T_CHECK_FILL(x->b.p, len, 72);
		t_fill(x->b.p, len, 73);
		xh_sync(x);
		xh_sync(x);
		return;
	}
	xh_sync(x);
	t_fill(x->a.p, len, 71);
	t0 = xh_now();
	t_post_send(q->qp, 1, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, len, SIG,
		    q->remote.addr, q->remote.rkey);
	XH_EXPECT(q->scq, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 30000);
	t_log("  WRITE 4 MiB: %.1f ms", (xh_now() - t0) * 1e3);
	xh_sync(x);
	xh_sync(x);
	t_fill(x->a.p, len, 72);
	t0 = xh_now();
	t_post_send(q->qp, 2, IBV_WR_SEND, x->a.mr, x->a.p, len, SIG, 0, 0);
	XH_EXPECT(q->scq, &wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND, 30000);
	t_log("  SEND 4 MiB: %.1f ms", (xh_now() - t0) * 1e3);
	xh_sync(x); /* the server checked it and filled b for the READ */
	memset(x->a.p, 0, len);
	t0 = xh_now();
	t_post_send(q->qp, 3, IBV_WR_RDMA_READ, x->a.mr, x->a.p, len, SIG,
		    q->remote.addr, q->remote.rkey);
	XH_EXPECT(q->scq, &wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 30000);
	t_log("  READ 4 MiB: %.1f ms", (xh_now() - t0) * 1e3);
	T_EQ(wc.byte_len, len);
	T_CHECK_FILL(x->a.p, len, 73);
	xh_sync(x);
}

/* The 40 bytes in front of a UD receive: the IPv6 header, or for RoCE v2
 * over IPv4, 20 bytes of zeros and the IPv4 header. */
static void check_grh(struct xh *x, const uint8_t *g, const uint8_t *sgid,
		      const uint8_t *dgid, uint32_t len, bool imm)
{
	uint32_t pad = (4 - len % 4) % 4;
	/* UDP, BTH, DETH, ImmDt, payload, pad, ICRC */
	uint32_t udp_len = 8 + 12 + 8 + (imm ? 4 : 0) + len + pad + 4;

	if (x->family == AF_INET) {
		const uint8_t *ip = g + 20;

		for (int i = 0; i < 20; i++)
			if (g[i])
				T_FAIL("GRH byte %d is %#x, expected 0 (IPv4)",
				       i, g[i]);
		T_EQ(ip[0], 0x45);
		T_EQ(ip[9], 17);
		T_EQ(ip[2] << 8 | ip[3], 20 + udp_len);
		T_GT(ip[8], 0); /* TTL */
		T_MEMEQ(ip + 12, sgid + 12, 4);
		T_MEMEQ(ip + 16, dgid + 12, 4);
		T_EQ(srd_inet_csum_fold(srd_inet_csum_add(0, ip, 20)), 0);
	} else {
		T_EQ(g[0] >> 4, 6);
		T_EQ(g[4] << 8 | g[5], udp_len);
		T_EQ(g[6], 17);
		T_GT(g[7], 0); /* hop limit */
		T_MEMEQ(g + 8, sgid, 16);
		T_MEMEQ(g + 24, dgid, 16);
	}
}

static void op_ud(struct xh *x)
{
	uint32_t sizes[3] = { 1, 333, x->mtu_bytes };
	uint32_t slot = x->mtu_bytes + XH_GRH;
	struct xh_conn c;
	struct ibv_wc wc;
	struct xh_qp q;

	t_log("UD: 1, 333 and %u bytes (the MTU), GRH checked, answered",
	      x->mtu_bytes);
	xh_conn_init(&c, IBV_QPT_UD);
	xh_qp_connect(x, &q, &c);
	memset(x->b.p, 0, 4 * slot);
	for (int i = 0; i < 3; i++)
		t_post_recv(q.qp, 10 + i, x->b.mr, x->b.p + i * slot, slot);
	xh_sync(x);
	if (x->server) {
		for (int i = 0; i < 3; i++) {
			struct ibv_ah *reply;
			uint8_t *g = x->b.p + i * slot;

			XH_EXPECT(q.rcq, &wc, 10 + i, IBV_WC_SUCCESS,
				  IBV_WC_RECV, W);
			T_EQ(wc.byte_len, XH_GRH + sizes[i]);
			T_ASSERT(wc.wc_flags & IBV_WC_GRH);
			T_EQ(wc.src_qp, q.remote.qpn);
			if (i == 2) {
				T_ASSERT(wc.wc_flags & IBV_WC_WITH_IMM);
				T_EQ(wc.imm_data, htobe32(0x3a3a));
			}
			check_grh(x, g, q.remote.gid, x->gid.raw, sizes[i],
				  i == 2);
			T_CHECK_FILL(g + XH_GRH, sizes[i], 80 + i);
			/* Answer whoever the GRH names. */
			reply = T_NONNULL(ibv_create_ah_from_wc(
				x->d.pd, &wc, (struct ibv_grh *)g, T_PORT));
			t_fill(x->a.p, sizes[i], 90 + i);
			t_post_ud(q.qp, 20 + i, reply, wc.src_qp, T_QKEY,
				  x->a.mr, x->a.p, sizes[i], SIG);
			XH_EXPECT(q.scq, &wc, 20 + i, IBV_WC_SUCCESS,
				  IBV_WC_SEND, W);
			T_OK(ibv_destroy_ah(reply));
		}
	} else {
		for (int i = 0; i < 3; i++) {
			uint8_t *g = x->b.p + i * slot;
			uint32_t sge[1][2] = { { 0, sizes[i] } };

			t_fill(x->a.p, sizes[i], 80 + i);
			xh_post_sges(&q, i == 2 ? 0x3a3a : 30 + i,
				     i == 2 ? IBV_WR_SEND_WITH_IMM
					    : IBV_WR_SEND,
				     &x->a, sge, 1, SIG, 0, 0);
			XH_EXPECT(q.scq, &wc, i == 2 ? 0x3a3a : 30 + i,
				  IBV_WC_SUCCESS, IBV_WC_SEND, W);
			XH_EXPECT(q.rcq, &wc, 10 + i, IBV_WC_SUCCESS,
				  IBV_WC_RECV, W);
			T_EQ(wc.byte_len, XH_GRH + sizes[i]);
			T_EQ(wc.src_qp, q.remote.qpn);
			check_grh(x, g, q.remote.gid, x->gid.raw, sizes[i],
				  false);
			T_CHECK_FILL(g + XH_GRH, sizes[i], 90 + i);
		}
	}
	xh_sync(x);
	xh_qp_destroy(&q);
}

/* Type 2 windows on the server's QP: the client WRITEs through one and
 * invalidates both with SENDs (FIRST + LAST_WITH_INVALIDATE, then
 * ONLY_WITH_INVALIDATE), as storage targets and initiators do. */
static void op_mw(struct xh *x, struct xh_qp *q)
{
	struct ibv_wc wc;

	t_log("memory windows: WRITE through one, SEND with Invalidate");
	if (x->server) {
		struct ibv_mr *mr = T_NONNULL(
			ibv_reg_mr(x->d.pd, x->b.p, 65536,
				   T_ACCESS_ALL | IBV_ACCESS_MW_BIND));
		struct ibv_mw *mw[2];
		uint32_t rk[2];

		for (int i = 0; i < 2; i++) {
			struct ibv_send_wr wr = { .wr_id = 70 + i,
						  .opcode = IBV_WR_BIND_MW,
						  .send_flags = SIG },
					   *bad;

			mw[i] = T_NONNULL(ibv_alloc_mw(x->d.pd, IBV_MW_TYPE_2));
			rk[i] = ibv_inc_rkey(mw[i]->rkey);
			wr.bind_mw.mw = mw[i];
			wr.bind_mw.rkey = rk[i];
			wr.bind_mw.bind_info.mr = mr;
			wr.bind_mw.bind_info.addr = (uintptr_t)x->b.p + 32768;
			wr.bind_mw.bind_info.length = 16384;
			wr.bind_mw.bind_info.mw_access_flags =
				IBV_ACCESS_REMOTE_WRITE;
			T_OK(ibv_post_send(q->qp, &wr, &bad));
			XH_EXPECT(q->scq, &wc, 70 + i, IBV_WC_SUCCESS,
				  IBV_WC_BIND_MW, W);
			mw[i]->rkey = rk[i];
		}
		memset(x->b.p, 0, 65536);
		t_post_recv(q->qp, 72, x->b.mr, x->b.p, 4096);
		t_post_recv(q->qp, 73, x->b.mr, x->b.p + 4096, 4096);
		xh_swap_val(x, (uint64_t)rk[0] << 32 | rk[1]);
		XH_EXPECT(q->rcq, &wc, 72, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 3000);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_INV);
		T_EQ(wc.invalidated_rkey, rk[0]);
		XH_EXPECT(q->rcq, &wc, 73, IBV_WC_SUCCESS, IBV_WC_RECV, W);
		T_EQ(wc.byte_len, 100);
		T_ASSERT(wc.wc_flags & IBV_WC_WITH_INV);
		T_EQ(wc.invalidated_rkey, rk[1]);
		T_CHECK_FILL(x->b.p + 32768 + 100, 9000, 74);
		T_CHECK_FILL(x->b.p, 3000, 75);
		T_CHECK_FILL(x->b.p + 4096, 100, 76);
		xh_sync(x);
		for (int i = 0; i < 2; i++)
			T_OK(ibv_dealloc_mw(mw[i]));
		T_OK(ibv_dereg_mr(mr));
	} else {
		uint64_t v = xh_swap_val(x, 0);
		uint32_t rk0 = (uint32_t)(v >> 32), rk1 = (uint32_t)v;
		struct ibv_sge sge = { .lkey = x->a.mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_INV,
					  .send_flags = SIG,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *bad;

		t_fill(x->a.p, 9000, 74);
		t_fill(x->a.p + 16384, 3000, 75);
		t_fill(x->a.p + 24576, 100, 76);
		t_post_send(q->qp, 74, IBV_WR_RDMA_WRITE, x->a.mr, x->a.p, 9000,
			    SIG, q->remote.addr + 32768 + 100, rk0);
		XH_EXPECT(q->scq, &wc, 74, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			  W);
		wr.wr_id = 75;
		wr.invalidate_rkey = rk0;
		sge.addr = (uintptr_t)x->a.p + 16384;
		sge.length = 3000;
		T_OK(ibv_post_send(q->qp, &wr, &bad));
		XH_EXPECT(q->scq, &wc, 75, IBV_WC_SUCCESS, IBV_WC_SEND, W);
		wr.wr_id = 76;
		wr.invalidate_rkey = rk1;
		sge.addr = (uintptr_t)x->a.p + 24576;
		sge.length = 100;
		T_OK(ibv_post_send(q->qp, &wr, &bad));
		XH_EXPECT(q->scq, &wc, 76, IBV_WC_SUCCESS, IBV_WC_SEND, W);
		xh_sync(x);
	}
}

void xh_run_ops(struct xh *x)
{
	struct xh_conn c;
	struct xh_qp q;

	xh_conn_init(&c, IBV_QPT_RC);
	xh_qp_connect(x, &q, &c);
	op_send(x, &q);
	op_send_imm(x, &q);
	op_write(x, &q);
	op_write_imm(x, &q);
	op_read(x, &q);
	op_atomics(x, &q);
	op_sges(x, &q);
	op_large(x, &q);
	op_mw(x, &q);
	T_EQ(t_qp_state(q.qp), IBV_QPS_RTS);
	xh_qp_destroy(&q);
	op_ud(x);
}
