/* SPDX-License-Identifier: MIT */
/*
 * Linux rxe's requests, our responder: the request packets of the rxe
 * captures (tests/vectors/rxe) go through the UDP wire's receive
 * path (wire_udp_rx: ICRC solved for the unknown IPv4 id, headers, QP)
 * into a QP set up as the capture's server was (its GID added to our
 * device, the client's QPN, the first request PSN, path MTU 1024).  What
 * our responder answers (read back from the wire's own capture) must be
 * what rxe's server answered:
 *
 *   - the same number of responses, in the same order,
 *   - each with the same opcode, PSN, AETH syndrome and MSN,
 *   - READ responses with the same payload (our MR is first filled with
 *     what rxe's responses carried, at the addresses they came from),
 *   - atomic ACKs with the same original value (our word starts as rxe's
 *     first response says it was),
 * and the SEND and WRITE data must land as the requests carried it.  The
 * RETH and AtomicETH keys and addresses are rewritten to our MR's (and the
 * ICRC recomputed), as are destination QPNs when ours differ.
 *
 * Captures: rc_pingpong (SEND), write_bw (WRITE), read_lat (READ),
 * atomic_lat (fetch-and-add, compare-and-swap).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"
#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#ifndef SRD_RXE_VECTORS_DIR
#error "SRD_RXE_VECTORS_DIR must name the rxe capture directory"
#endif

#define SERVER "10.77.0.10"
#define CLIENT "10.77.0.11"
#define MAX_PKTS 512
#define MR_LEN (1u << 20)

struct cpkt {
	uint8_t data[1200];
	size_t len; /* UDP payload: BTH ... ICRC */
	struct srd_udp_meta m;
	struct srd_pkt p; /* parsed */
	bool from_client;
};

static struct cpkt all[MAX_PKTS], cap[MAX_PKTS], ours[MAX_PKTS];

/* Read a capture's RoCE packets; returns how many. */
static int load(const char *path, struct cpkt *out)
{
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	uint32_t client;
	int n = 0;

	inet_pton(AF_INET, CLIENT, &client);
	if (srd_pcap_open(&r, path))
		return -1;
	while (srd_pcap_next(&r, &p) == 1) {
		const uint8_t *ip = p.data + p.l3_off, *udp;
		size_t ihl, len;
		struct cpkt *c = &out[n];

		if (p.l3_proto != 0x0800 || ip[9] != 17)
			continue;
		ihl = (ip[0] & 15) * 4u;
		udp = ip + ihl;
		len = ((size_t)udp[4] << 8 | udp[5]) - 8;
		T_ASSERT(n < MAX_PKTS && len <= sizeof(c->data));
		T_ASSERT(p.l3_off + ihl + 8 + len <= p.caplen);
		memset(c, 0, sizeof(*c));
		memcpy(c->data, udp + 8, len);
		c->len = len;
		c->m.src.s6_addr[10] = c->m.src.s6_addr[11] = 0xff;
		c->m.dst.s6_addr[10] = c->m.dst.s6_addr[11] = 0xff;
		memcpy(&c->m.src.s6_addr[12], ip + 12, 4);
		memcpy(&c->m.dst.s6_addr[12], ip + 16, 4);
		c->m.sport = udp[0] << 8 | udp[1];
		c->m.dport = udp[2] << 8 | udp[3];
		c->m.tclass = ip[1];
		c->m.hop_limit = ip[8];
		c->from_client = !memcmp(ip + 12, &client, 4);
		T_EQ(srd_pkt_hdr_read(&c->p, c->data, len - 4),
		     srd_pkt_hdr_len(&c->p));
		n++;
	}
	srd_pcap_close(&r);
	return n;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

/* Recompute the ICRC after a rewrite (identification 0 with DF, as a
 * Linux UDP socket would have sent it). */
static void reseal(struct cpkt *c)
{
	srd_udp_icrc_seal(&c->m, c->data, c->len);
}

struct run {
	const char *file;
	int n;
	uint64_t va_base; /* lowest address the requests name */
	uint32_t client_qpn;
	uint32_t first_psn;
	struct eh h;
	struct eh_mr mr, rbuf;
	struct eh_cq cq;
	struct eh_qp qp;
	uint8_t gid_index;
};

static void setup(struct run *r, const char *pcap_out)
{
	struct srd_device *dev;
	union ibv_gid client;
	struct eh_conn c = { .dgid = &client,
			     .has_rq_psn = true,
			     .rq_psn = r->first_psn };

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	srd_net_cfg.pcap = pcap_out;
	eh_init(&r->h);
	T_ASSERT(r->h.t.d.engine->wire && r->h.t.d.engine->wire->udp);
	/* The capture's server address becomes one of our GIDs. */
	dev = r->h.t.c->dev;
	T_ASSERT(dev->port.gid_count < SRD_MAX_GIDS);
	r->gid_index = dev->port.gid_count++;
	c.sgid_index = r->gid_index;
	dev->port.gid[r->gid_index] = eh_gid_v4(SERVER);
	dev->port.gid_valid[r->gid_index] = true;

	eh_cq(&r->h, 256, &r->cq);
	eh_mr(&r->h, r->h.pd, MR_LEN, EH_ACCESS_ALL, &r->mr);
	eh_mr(&r->h, r->h.pd, 64 * 4096, IBV_ACCESS_LOCAL_WRITE, &r->rbuf);
	eh_qp(&r->h, r->h.pd, IBV_QPT_RC, &r->cq, &r->cq, NULL, NULL, false,
	      &r->qp);
	client = eh_gid_v4(CLIENT);
	eh_connect(&r->h, &r->qp, r->client_qpn, &c);
	/* Receive WQEs for SENDs, one page each. */
	for (int i = 0; i < 64; i++) {
		struct srd_sge s = eh_sge(&r->rbuf, (size_t)i * 4096, 4096);

		eh_post_recv(&r->qp, i, &s, 1);
	}
}

/* Where a request's remote address lands in our MR. */
static uint64_t map_va(struct run *r, uint64_t va)
{
	T_ASSERT(va >= r->va_base && va - r->va_base < MR_LEN - 8192);
	return (uintptr_t)r->mr.p + (va - r->va_base);
}

/* Our MR as rxe's server memory was: READ responses say what it held. */
static void prefill(struct run *r)
{
	uint64_t va = 0;
	bool atomic_done = false;

	for (int i = 0; i < r->n; i++) {
		struct cpkt *c = &cap[i];
		uint32_t m = c->p.mask;

		if (c->from_client && (m & OPF_READ))
			va = c->p.reth.va;
		if (c->from_client && (m & OPF_ATOMIC) && !atomic_done) {
			/* The next atomic ACK tells the value before. */
			for (int j = i + 1; j < r->n; j++) {
				if (cap[j].p.opcode !=
				    ROCE_RC_ATOMIC_ACKNOWLEDGE)
					continue;
				memcpy((void *)(uintptr_t)map_va(r,
								 c->p.atm.va),
				       &cap[j].p.atm_orig, 8);
				break;
			}
			atomic_done = true;
		}
		if (!c->from_client && (m & OPF_READ) && (m & OPF_RESP)) {
			unsigned int hl = srd_pkt_hdr_len(&c->p);

			memcpy((void *)(uintptr_t)map_va(r, va), c->data + hl,
			       c->p.paylen);
			va += c->p.paylen;
		}
	}
}

/* What rxe's server answered and what we answered, side by side. */
static void compare(struct run *r, int nours)
{
	int i = 0, j = 0, compared = 0;

	for (;;) {
		while (i < r->n &&
		       (cap[i].from_client || !(cap[i].p.mask & OPF_RESP)))
			i++;
		while (j < nours && !(ours[j].p.mask & OPF_RESP))
			j++;
		if (i >= r->n || j >= nours)
			break;
		T_EQ(ours[j].p.opcode, cap[i].p.opcode);
		T_EQ(ours[j].p.psn, cap[i].p.psn);
		T_EQ(ours[j].p.qpn, cap[i].p.qpn);
		T_EQ(ours[j].p.paylen, cap[i].p.paylen);
		if (cap[i].p.mask & OPF_AETH) {
			T_EQ(ours[j].p.aeth.syndrome, cap[i].p.aeth.syndrome);
			T_EQ(ours[j].p.aeth.msn, cap[i].p.aeth.msn);
		}
		if (cap[i].p.mask & OPF_ATMACK)
			T_EQ(ours[j].p.atm_orig, cap[i].p.atm_orig);
		if (cap[i].p.paylen)
			T_ASSERT(!memcmp(
				ours[j].data + srd_pkt_hdr_len(&ours[j].p),
				cap[i].data + srd_pkt_hdr_len(&cap[i].p),
				cap[i].p.paylen));
		compared++;
		i++;
		j++;
	}
	/* Nothing left over on either side. */
	T_EQ(i, r->n);
	T_EQ(j, nours);
	T_ASSERT(compared > 0);
	printf("# %s: %d responses match rxe's\n", r->file, compared);
}

/* One connection's packets (cap[0..n)) through a fresh daemon. */
static void run_one(const char *file, int n)
{
	static struct run r;
	char out[] = "/tmp/net_rxe_responder.XXXXXX";
	struct srd_wire *w;
	uint64_t wr_va = 0;
	uint32_t send_off = 0;
	int fd, nours, msgs = 0;
	bool have_first = false;

	memset(&r, 0, sizeof(r));
	r.file = file;
	r.n = n;
	r.va_base = UINT64_MAX;
	for (int i = 0; i < r.n; i++) {
		struct cpkt *c = &cap[i];

		if (!c->from_client && (c->p.mask & OPF_RESP) && !r.client_qpn)
			r.client_qpn = c->p.qpn;
		if (!c->from_client || !(c->p.mask & OPF_REQ))
			continue;
		if (!have_first) {
			r.first_psn = c->p.psn;
			have_first = true;
		}
		if ((c->p.mask & OPF_RETH) && c->p.reth.va < r.va_base)
			r.va_base = c->p.reth.va;
		if ((c->p.mask & OPF_ATMETH) && c->p.atm.va < r.va_base)
			r.va_base = c->p.atm.va;
	}
	r.va_base &= ~4095ull;
	fd = mkstemp(out);
	T_ASSERT(fd >= 0);
	close(fd);
	setup(&r, out);
	prefill(&r);
	w = r.h.t.d.engine->wire;

	for (int i = 0; i < r.n; i++) {
		struct cpkt *c = &cap[i];
		struct cpkt q = *c;
		unsigned int hl = srd_pkt_hdr_len(&c->p);
		bool changed = false;

		if (!c->from_client || !(c->p.mask & OPF_REQ))
			continue;
		if (c->p.qpn != r.qp.qpn) {
			put_be32(q.data + 4, r.qp.qpn);
			changed = true;
		}
		if (c->p.mask & OPF_RETH) {
			unsigned int o =
				srd_op_hdr_offset(c->p.opcode, OPF_RETH);

			put_be64(q.data + o, map_va(&r, c->p.reth.va));
			put_be32(q.data + o + 8, r.mr.lkey);
			changed = true;
			if (c->p.mask & OPF_WRITE)
				wr_va = map_va(&r, c->p.reth.va);
		}
		if (c->p.mask & OPF_ATMETH) {
			unsigned int o =
				srd_op_hdr_offset(c->p.opcode, OPF_ATMETH);

			put_be64(q.data + o, map_va(&r, c->p.atm.va));
			put_be32(q.data + o + 8, r.mr.lkey);
			changed = true;
		}
		if (changed)
			reseal(&q);
		wire_udp_rx(w, &q.m, q.data, q.len);
		eh_run(&r.h, 1);
		/* The data landed where the request said. */
		if (c->p.mask & OPF_WRITE) {
			T_ASSERT(!memcmp((void *)(uintptr_t)wr_va, c->data + hl,
					 c->p.paylen));
			wr_va += c->p.paylen;
		}
		if (c->p.mask & OPF_SEND) {
			T_ASSERT(!memcmp(r.rbuf.p + (size_t)msgs * 4096 +
						 send_off,
					 c->data + hl, c->p.paylen));
			send_off += c->p.paylen;
			if (c->p.mask & OPF_LAST) {
				struct srd_cqe e = eh_wait(&r.h, &r.cq, 10);

				T_EQ(e.status, IBV_WC_SUCCESS);
				T_EQ(e.wr_id, msgs);
				T_EQ(e.byte_len, send_off);
				msgs++;
				send_off = 0;
			}
		}
	}
	T_EQ(r.qp.qp->attr.qp_state, IBV_QPS_RTS);
	eh_fini(&r.h); /* closes the capture */
	nours = load(out, ours);
	unlink(out);
	compare(&r, nours);
}

/* A capture may hold several connections one after the other (atomic_lat
 * ran twice): a new destination QPN in the client's requests starts one. */
static void run_file(const char *file)
{
	char in[512];
	int n, lo = 0;

	snprintf(in, sizeof(in), "%s/%s", SRD_RXE_VECTORS_DIR, file);
	n = load(in, all);
	if (n < 0)
		T_FAIL("%s not readable", in);
	while (lo < n) {
		uint32_t qpn = UINT32_MAX;
		int hi = lo;

		for (; hi < n; hi++) {
			if (!all[hi].from_client || !(all[hi].p.mask & OPF_REQ))
				continue;
			if (qpn != UINT32_MAX && all[hi].p.qpn != qpn)
				break;
			qpn = all[hi].p.qpn;
		}
		memcpy(cap, all + lo, (hi - lo) * sizeof(cap[0]));
		run_one(file, hi - lo);
		lo = hi;
	}
}

int main(void)
{
	run_file("rc_pingpong.pcap");
	run_file("write_bw.pcap");
	run_file("read_lat.pcap");
	run_file("atomic_lat.pcap");
	printf("PASS net_rxe_responder\n");
	return T_EXIT_PASS;
}
