/* SPDX-License-Identifier: MIT */
/*
 * The RC requester toward a slow peer behind a bounded queue, the shape
 * of rdma_rxe in an emulated guest: its tap queues what the guest has not
 * taken yet and drops above some depth, so the round trip grows with the
 * queue long before anything is lost.  Seen live, ib_write_bw -s 65536
 * from softrdma to such a guest sent 1.28-1.60 packets per packet
 * delivered; go-back-N resends all that was in flight after each drop.
 *
 * Here the peer is a simulation on the engine's clock: every packet the
 * requester sends (the PSNs of each pass, checked against its counter)
 * joins a FIFO of QDEPTH packets or is dropped; one packet leaves it every
 * SERVICE_NS and is judged by a receiver with an expected PSN, which ACKs
 * in-order data (every ACK_EVERY packets, or when the queue runs empty)
 * and sends one sequence NAK per gap, ONE_WAY_NS later.  Four 1 MiB WRITEs
 * must complete, and at most 1.2 packets may be sent per packet delivered.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#define PEER "10.77.0.10"
#define NWRITES 4
#define WRITE_PKTS 1024	      /* 1 MiB at path MTU 1024 */
#define QDEPTH 256	      /* packets the peer's queue holds */
#define SERVICE_NS 200000ull  /* one packet taken every 200 us */
#define ONE_WAY_NS 1000000ull /* each way, besides the queue */
#define STEP_NS 20000ull      /* one engine pass */
#define ACK_EVERY 4
#define MAX_SIM_NS 120000000000ull /* two simulated minutes */

static struct eh h;
static struct eh_qp q;
static struct eh_cq cq;
static struct eh_mr mr;
static union ibv_gid peer;
static uint32_t msn;

/* The peer's queue and the packets on their way, by PSN. */
static struct {
	uint32_t psn[QDEPTH];
	uint64_t due[QDEPTH]; /* when it reaches the queue */
	unsigned int head, len;
} fifo;
static uint64_t next_service;
static unsigned long drops, delivered;

/* ACKs and NAKs on their way back. */
#define NBACK 4096
static struct {
	uint64_t due;
	uint32_t psn;
	uint8_t syndrome;
} back[NBACK];
static unsigned int back_head, back_len;

static void ack_rx(uint32_t psn, uint8_t syndrome)
{
	eh_udp_ack(&h, &q, &peer, psn, syndrome, ++msn);
}

static void send_back(uint32_t psn, uint8_t syndrome)
{
	T_ASSERT(back_len < NBACK);
	back[(back_head + back_len) % NBACK].due = h.now + ONE_WAY_NS;
	back[(back_head + back_len) % NBACK].psn = psn;
	back[(back_head + back_len) % NBACK].syndrome = syndrome;
	back_len++;
}

/* Packets the requester sent: into the queue, or dropped. */
static void arrive(uint32_t psn)
{
	unsigned int tail = (fifo.head + fifo.len) % QDEPTH;

	if (fifo.len == QDEPTH) {
		drops++;
		return;
	}
	fifo.psn[tail] = psn & ROCE_PSN_MASK;
	fifo.due[tail] = h.now + ONE_WAY_NS;
	fifo.len++;
}

/* The receiver: in order, a gap (one NAK until it closes), a duplicate. */
static void serve(uint32_t *epsn, bool *nak_sent, unsigned int *unacked)
{
	uint32_t psn;

	if (!fifo.len || fifo.due[fifo.head] > h.now || next_service > h.now)
		return;
	psn = fifo.psn[fifo.head];
	fifo.head = (fifo.head + 1) % QDEPTH;
	fifo.len--;
	next_service = h.now + SERVICE_NS;
	if (psn == *epsn) {
		*epsn = (*epsn + 1) & ROCE_PSN_MASK;
		*nak_sent = false;
		delivered++;
		if (++*unacked >= ACK_EVERY || !fifo.len) {
			send_back(*epsn - 1, 0x1f);
			*unacked = 0;
		}
	} else if (roce_psn_cmp(psn, *epsn) > 0) {
		if (!*nak_sent)
			send_back(*epsn, 0x60);
		*nak_sent = true;
	} else {
		send_back(*epsn - 1, 0x1f);
	}
}

int main(void)
{
	const struct srd_tp_counters *cnt;
	struct srd_qp_transport *tp;
	struct eh_conn c = { .timeout = 18, .dgid = &peer };
	uint32_t epsn;
	uint64_t tx_seen = 0, t0;
	unsigned int unacked = 0, done = 0;
	bool nak_sent = false;
	double ratio;
	struct srd_cqe e;

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	eh_init(&h);
	peer = eh_gid_v4(PEER);
	eh_cq(&h, 16, &cq);
	eh_mr(&h, h.pd, WRITE_PKTS * 1024, IBV_ACCESS_LOCAL_WRITE, &mr);
	eh_qp(&h, h.pd, IBV_QPT_RC, &cq, &cq, NULL, NULL, false, &q);
	eh_connect(&h, &q, 0x11, &c);
	tp = q.qp->tp;
	cnt = engine_qp_counters(q.qp);
	epsn = q.qp->attr.sq_psn & ROCE_PSN_MASK;
	for (unsigned int i = 0; i < NWRITES; i++) {
		struct srd_send_wqe w = { .wr_id = i,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .flags = SRD_WQE_SIGNALED,
					  .num_sge = 1,
					  .remote_addr = 0x100000,
					  .rkey = 0x1234 };
		struct srd_sge s = eh_sge(&mr, 0, WRITE_PKTS * 1024);

		eh_post_send(&q, &w, &s, NULL);
	}
	h.step = STEP_NS;
	t0 = h.now;
	while (done < NWRITES && h.now - t0 < MAX_SIM_NS) {
		uint64_t sent;

		while (back_len && back[back_head].due <= h.now) {
			ack_rx(back[back_head].psn, back[back_head].syndrome);
			back_head = (back_head + 1) % NBACK;
			back_len--;
		}
		eh_run(&h, 1);
		/* What this pass sent ends at tp->psn: after a rewind the
		 * requester sends again from there, in PSN order. */
		sent = cnt->tx_pkts - tx_seen;
		for (uint64_t k = sent; k; k--)
			arrive(tp->psn - (uint32_t)k);
		tx_seen = cnt->tx_pkts;
		serve(&epsn, &nak_sent, &unacked);
		while (eh_poll(&cq, &e)) {
			T_EQ(e.status, IBV_WC_SUCCESS);
			T_EQ(e.wr_id, done);
			done++;
		}
	}
	T_EQ(done, NWRITES);
	T_EQ(delivered, (unsigned long)NWRITES * WRITE_PKTS);
	ratio = (double)cnt->tx_pkts / (double)delivered;
	printf("engine_rc_queue: %llu packets sent for %lu delivered "
	       "(%.3fx), %lu dropped, %llu retransmits, %llu timeouts, "
	       "%.1f ms simulated, final cwnd %u\n",
	       (unsigned long long)cnt->tx_pkts, delivered, ratio, drops,
	       (unsigned long long)cnt->retransmits,
	       (unsigned long long)cnt->timeouts, (h.now - t0) / 1e6, tp->cwnd);
	T_ASSERT(ratio <= 1.2);
	eh_fini(&h);
	printf("PASS engine_rc_queue\n");
	return T_EXIT_PASS;
}
