/* SPDX-License-Identifier: MIT */
/*
 * The packet capture (srd_net_cfg.pcap), on the in-memory wire (trains
 * taken apart into their packets, IP and UDP headers synthesized) and on
 * the UDP wire forced for local GIDs: after RC WRITE, SEND, READ and
 * atomic traffic and UD SENDs, every captured packet's ICRC checks over
 * the IP and UDP headers the file shows, a 64-packet WRITE appears as 64
 * packets with consecutive PSNs, and, where tshark is installed, tshark
 * decodes every frame as InfiniBand with no malformed packet and no
 * warning.  (tshark's RPC-over-RDMA heuristic is turned off: it takes the
 * test's payload bytes for RPC headers.)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"
#include "daemon/transport/wire.h"
#include "daemon/transport/wire_ctl.h"
#include "tests/unit/engine_harness.h"

#define WRITE_LEN (64 * 1024)

struct tally {
	unsigned int pkts;
	unsigned int by_op[256];
	uint32_t write_psn[128];
	unsigned int nwrite;
	uint16_t dport;
};

static void traffic(struct eh *h)
{
	struct eh_cq ca, cb;
	struct eh_qp a, b, ua, ub;
	struct eh_mr m;
	struct eh_conn conn = { .mtu = IBV_MTU_1024 };
	struct srd_send_wqe w;
	struct srd_sge s, r;
	struct srd_cqe e;
	uint32_t ah = eh_ah(h, h->pd);

	eh_cq(h, 64, &ca);
	eh_cq(h, 64, &cb);
	eh_mr(h, h->pd, 4 * WRITE_LEN, EH_ACCESS_ALL, &m);
	for (size_t i = 0; i < m.len; i++)
		m.p[i] = i * 13;
	eh_qp(h, h->pd, IBV_QPT_RC, &ca, &ca, NULL, NULL, true, &a);
	eh_qp(h, h->pd, IBV_QPT_RC, &cb, &cb, NULL, NULL, true, &b);
	eh_connect_pair(h, &a, &b, &conn);

	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = 1;
	w.num_sge = 1;
	w.remote_addr = (uintptr_t)m.p + WRITE_LEN;
	w.rkey = m.lkey;
	s = eh_sge(&m, 0, WRITE_LEN);
	eh_post_send(&a, &w, &s, NULL);
	e = eh_wait(h, &ca, 1000);
	T_EQ(e.status, IBV_WC_SUCCESS);
	T_ASSERT(!memcmp(m.p, m.p + WRITE_LEN, WRITE_LEN));

	r = eh_sge(&m, 2 * WRITE_LEN, 10000);
	eh_post_recv(&b, 2, &r, 1);
	w.opcode = IBV_WR_SEND;
	w.wr_id = 3;
	s = eh_sge(&m, 100, 10000);
	eh_post_send(&a, &w, &s, NULL);
	T_EQ(eh_wait(h, &ca, 1000).status, IBV_WC_SUCCESS);
	T_EQ(eh_wait(h, &cb, 1000).status, IBV_WC_SUCCESS);

	w.opcode = IBV_WR_RDMA_READ;
	w.wr_id = 4;
	w.remote_addr = (uintptr_t)m.p;
	s = eh_sge(&m, 3 * WRITE_LEN, 32768);
	eh_post_send(&a, &w, &s, NULL);
	T_EQ(eh_wait(h, &ca, 1000).status, IBV_WC_SUCCESS);
	T_ASSERT(!memcmp(m.p, m.p + 3 * WRITE_LEN, 32768));

	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.wr_id = 5;
	w.remote_addr = (uintptr_t)m.p + 64;
	w.compare_add = 1;
	s = eh_sge(&m, 3 * WRITE_LEN + 32768, 8);
	eh_post_send(&a, &w, &s, NULL);
	T_EQ(eh_wait(h, &ca, 1000).status, IBV_WC_SUCCESS);

	eh_qp(h, h->pd, IBV_QPT_UD, &ca, &ca, NULL, NULL, true, &ua);
	eh_qp(h, h->pd, IBV_QPT_UD, &cb, &cb, NULL, NULL, true, &ub);
	eh_ud_ready(h, &ua, 0x1234);
	eh_ud_ready(h, &ub, 0x1234);
	r = eh_sge(&m, 2 * WRITE_LEN, 4096);
	eh_post_recv(&ub, 6, &r, 1);
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_SEND;
	w.wr_id = 7;
	w.num_sge = 1;
	w.ah_handle = ah;
	w.remote_qpn = ub.qpn;
	w.remote_qkey = 0x1234;
	s = eh_sge(&m, 0, 1000);
	eh_post_send(&ua, &w, &s, NULL);
	T_EQ(eh_wait(h, &ca, 1000).status, IBV_WC_SUCCESS);
	T_EQ(eh_wait(h, &cb, 1000).status, IBV_WC_SUCCESS);
	eh_settle(h);
}

static void check_file(const char *path, struct tally *t)
{
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;

	memset(t, 0, sizeof(*t));
	T_EQ(srd_pcap_open(&r, path), 0);
	T_EQ(r.linktype, SRD_PCAP_LINK_ETHERNET);
	while (srd_pcap_next(&r, &p) == 1) {
		const uint8_t *ip = p.data + p.l3_off;
		bool v4 = p.l3_proto == 0x0800;
		size_t ihl = v4 ? 20 : 40;
		const uint8_t *udp = ip + ihl, *bth = udp + 8;
		size_t udp_len = p.caplen - p.l3_off - ihl;
		struct srd_pkt pkt;

		T_EQ(p.caplen, p.origlen);
		T_ASSERT(v4 || p.l3_proto == 0x86dd);
		T_EQ(ip[v4 ? 9 : 6], 17);
		if (v4)
			T_EQ(srd_icrc_check_ipv4(ip, udp, udp_len), 0);
		else
			T_EQ(srd_icrc_check_ipv6(ip, udp, udp_len), 0);
		T_ASSERT(srd_pkt_hdr_read(&pkt, bth, udp_len - 12) > 0);
		t->by_op[pkt.opcode]++;
		if ((pkt.mask & OPF_WRITE) && t->nwrite < 128)
			t->write_psn[t->nwrite++] = pkt.psn;
		t->dport = udp[2] << 8 | udp[3];
		t->pkts++;
	}
	srd_pcap_close(&r);
	/* 64 KiB at 1024 bytes: FIRST, 62 MIDDLE, LAST, PSNs in a row. */
	T_EQ(t->by_op[ROCE_RC_WRITE_FIRST], 1);
	T_EQ(t->by_op[ROCE_RC_WRITE_MIDDLE], WRITE_LEN / 1024 - 2);
	T_EQ(t->by_op[ROCE_RC_WRITE_LAST], 1);
	T_EQ(t->nwrite, WRITE_LEN / 1024);
	for (unsigned int i = 1; i < t->nwrite; i++)
		T_EQ(t->write_psn[i], (t->write_psn[0] + i) & ROCE_PSN_MASK);
	T_EQ(t->by_op[ROCE_RC_SEND_FIRST], 1);
	T_EQ(t->by_op[ROCE_RC_SEND_LAST], 1);
	T_EQ(t->by_op[ROCE_RC_READ_REQUEST], 1);
	T_EQ(t->by_op[ROCE_RC_READ_RESPONSE_FIRST], 1);
	T_EQ(t->by_op[ROCE_RC_READ_RESPONSE_MIDDLE], 30);
	T_EQ(t->by_op[ROCE_RC_FETCH_ADD], 1);
	T_EQ(t->by_op[ROCE_RC_ATOMIC_ACKNOWLEDGE], 1);
	T_EQ(t->by_op[ROCE_UD_SEND_ONLY], 1);
	T_ASSERT(t->by_op[ROCE_RC_ACKNOWLEDGE] >= 2);
}

/* tshark's verdict: every frame InfiniBand, none malformed or warned
 * about.  Returns false when tshark is not there. */
static bool tshark_check(const char *path, const struct tally *t)
{
	char cmd[1024], line[512];
	unsigned int frames = 0, bad = 0;
	FILE *f;

	if (system("command -v tshark >/dev/null 2>&1"))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -d udp.port==%u,infiniband "
		 "--disable-protocol rpcordma -T fields -e frame.number "
		 "-e infiniband.bth.opcode -e _ws.malformed "
		 "-e _ws.expert.severity 2>/dev/null",
		 path, t->dport);
	f = popen(cmd, "r");
	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		char num[32] = "", op[32] = "", mal[64] = "", sev[64] = "";
		int n = sscanf(line,
			       "%31[^\t]\t%31[^\t\n]\t%63[^\t\n]\t%63[^\t\n]",
			       num, op, mal, sev);

		frames++;
		/* No opcode: not decoded as RoCE; anything after it: an
		 * expert finding. */
		if (n < 2 || !*op || n > 2) {
			fprintf(stderr, "tshark: %s", line);
			bad++;
		}
	}
	T_EQ(pclose(f), 0);
	T_EQ(frames, t->pkts);
	T_EQ(bad, 0);
	return true;
}

static void run(bool udp, const char *path)
{
	struct eh h;
	struct tally t;
	bool ts;

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.pcap = path;
	if (udp) {
		srd_net_cfg.udp = true;
		srd_net_cfg.udp_port = 0;
		srd_net_cfg.wire = SRD_WIRE_UDP;
	}
	eh_init(&h);
	if (udp && !h.t.d.engine->wire->udp) {
		printf("# no UDP socket: UDP capture not tested\n");
		eh_fini(&h);
		return;
	}
	/* Over UDP the packets take a moment through the kernel. */
	if (udp)
		h.step = 20000;
	traffic(&h);
	eh_fini(&h);
	check_file(path, &t);
	ts = tshark_check(path, &t);
	printf("# %s wire: %u packets captured, ICRCs good%s\n",
	       udp ? "UDP" : "in-memory", t.pkts,
	       ts ? ", tshark: all RoCE, none malformed" : " (no tshark)");
}

/* Capture started and stopped at run time, with a fault rule added at
 * run time too (duplicated ACKs change nothing but the counts). */
static void run_live(const char *path)
{
	char err[128], show[1024];
	struct eh h;
	struct tally t;

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	eh_init(&h);
	T_EQ(srd_net_capture_stop(&h.t.d), -ENOENT);
	T_EQ(srd_net_capture_start(&h.t.d, path), 0);
	T_EQ(srd_net_capture_start(&h.t.d, path), -EBUSY);
	T_EQ(srd_net_fault_add(&h.t.d, "dup op=0x11 count=2", err, sizeof(err)),
	     0);
	T_EQ(srd_net_fault_add(&h.t.d, "dup op=nothing", err, sizeof(err)),
	     -EINVAL);
	traffic(&h);
	srd_net_fault_show(&h.t.d, show, sizeof(show));
	T_ASSERT(strstr(show, "rule 0: dup op=0x11 count=2: matched"));
	T_ASSERT(strstr(show, "injected 2\n"));
	srd_net_fault_clear(&h.t.d);
	T_EQ(srd_net_fault_show(&h.t.d, show, sizeof(show)), 0);
	T_EQ(srd_net_capture_stop(&h.t.d), 0);
	eh_fini(&h);
	check_file(path, &t);
	/* The two duplicated ACKs were captured twice. */
	printf("# run-time capture: %u packets, ICRCs good\n", t.pkts);
}

int main(void)
{
	char path[] = "/tmp/net_capture.XXXXXX";
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	run(false, path);
	run(true, path);
	run_live(path);
	unlink(path);
	printf("PASS net_capture\n");
	return T_EXIT_PASS;
}
