/* SPDX-License-Identifier: MIT */
/*
 * Our requester against a responder that answers slowly, as rdma_rxe in
 * an emulated guest does (seen live with ib_read_bw -s 65536: 128 READs
 * in flight, one response lost, RETRY_EXC_ERR after seven timeouts).
 *
 * Sixteen one-packet READs go out to a peer outside the daemon; its
 * responses come in through the UDP receive path.  The second response
 * is lost: the requester asks again from there (go-back-N), but the
 * responder first answers what it had queued before the repeat, one
 * response less than a local ACK timeout after the other, for far longer
 * than retry_cnt timeouts.  A responder that keeps answering is not a
 * dead one: no timeout may count, no READ may fail; then the answers to
 * the repeated requests complete all sixteen READs with their data.
 * Silence afterwards still times out as before.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "daemon/transport/wire.h"
#include "tests/unit/engine_harness.h"

#define NREADS 16
#define LEN 1024
#define PEER "10.77.0.10"
#define TIMEOUT 10 /* 4.096 us * 2^10: 4.2 ms */

static struct eh h;
static struct eh_qp q;
static struct eh_cq cq;
static struct eh_mr mr;
static union ibv_gid peer;
static uint32_t first_psn;
static uint32_t msn;

/* One READ RESPONSE Only from the peer, PSN psn, payload byte fill. */
static void respond(uint32_t psn, uint8_t fill)
{
	uint8_t p[12 + 4 + LEN + 4] = { 0 };
	/* ACK, no credit limit */
	uint32_t v = htobe32(0x1fu << 24 | (++msn & 0xffffff));

	eh_bth(p, ROCE_RC_READ_RESPONSE_ONLY, q.qpn, psn);
	memcpy(p + 12, &v, 4);
	memset(p + 16, fill, LEN);
	eh_udp_rx(&h, &q, &peer, p, sizeof(p));
}

/* Let dt ns pass in one engine pass. */
static void wait_ns(uint64_t dt)
{
	uint64_t step = h.step;

	h.step = dt;
	eh_run(&h, 1);
	h.step = step;
	eh_run(&h, 2);
}

int main(void)
{
	const struct srd_tp_counters *cnt;
	struct eh_conn c = { .timeout = TIMEOUT,
			     .retry_cnt = 2,
			     .dgid = &peer };
	uint64_t to = 4096ull << TIMEOUT;
	struct srd_cqe e;

	memset(&srd_net_cfg, 0, sizeof(srd_net_cfg));
	srd_net_cfg.udp = true;
	srd_net_cfg.udp_port = 0;
	eh_init(&h);
	T_ASSERT(h.t.d.engine->wire && h.t.d.engine->wire->udp);
	peer = eh_gid_v4(PEER);
	eh_cq(&h, 64, &cq);
	eh_mr(&h, h.pd, NREADS * LEN, IBV_ACCESS_LOCAL_WRITE, &mr);
	eh_qp(&h, h.pd, IBV_QPT_RC, &cq, &cq, NULL, NULL, false, &q);
	eh_connect(&h, &q, 0x11, &c);
	T_EQ(q.qp->dev->port.gid[0].raw[10], 0xff); /* an IPv4 GID */
	cnt = engine_qp_counters(q.qp);
	first_psn = q.qp->attr.sq_psn;

	for (int i = 0; i < NREADS; i++) {
		struct srd_send_wqe w = { .wr_id = 100 + i,
					  .opcode = IBV_WR_RDMA_READ,
					  .flags = SRD_WQE_SIGNALED,
					  .num_sge = 1,
					  .remote_addr = 0x10000 + i * LEN,
					  .rkey = 0x1234 };
		struct srd_sge s = eh_sge(&mr, (size_t)i * LEN, LEN);

		eh_post_send(&q, &w, &s, NULL);
	}
	eh_run(&h, 4);
	T_EQ(cnt->tx_pkts, NREADS);

	/* READ 0 answered, READ 1's response lost: READ 2's says so. */
	respond(first_psn, 0xa0);
	e = eh_wait(&h, &cq, 10);
	EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 100);
	respond(first_psn + 2, 0xee);
	eh_run(&h, 4);
	T_ASSERT(cnt->tx_pkts > NREADS); /* asked again from READ 1 */

	/* The responder works through its queue: READs 3..15 of the first
	 * round, 0.8 timeouts apart, 10 timeouts in all. */
	for (int i = 3; i < NREADS; i++) {
		wait_ns(to * 8 / 10);
		respond(first_psn + i, 0xee);
		T_EQ(cnt->timeouts, 0);
		eh_none(&cq);
	}
	T_EQ(eh_state(&q), IBV_QPS_RTS);

	/* Then the answers to the second round: every READ completes. */
	for (int i = 1; i < NREADS; i++) {
		respond(first_psn + i, (uint8_t)(0xa0 + i));
		e = eh_wait(&h, &cq, 10);
		EH_CQE(e, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 100 + i);
	}
	for (int i = 0; i < NREADS; i++)
		for (int k = 0; k < LEN; k++)
			T_EQ(mr.p[i * LEN + k], 0xa0 + i);
	T_EQ(cnt->timeouts, 0);

	/* A peer that goes silent is still given up on. */
	{
		struct srd_send_wqe w = { .wr_id = 200,
					  .opcode = IBV_WR_RDMA_READ,
					  .flags = SRD_WQE_SIGNALED,
					  .num_sge = 1,
					  .remote_addr = 0x10000,
					  .rkey = 0x1234 };
		struct srd_sge s = eh_sge(&mr, 0, LEN);

		eh_post_send(&q, &w, &s, NULL);
		eh_run(&h, 2);
		for (int i = 0; i < 4; i++)
			wait_ns(to + to / 10);
		e = eh_wait(&h, &cq, 10);
		EH_CQE(e, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_READ, 200);
		T_EQ(cnt->timeouts, 3);
	}
	eh_fini(&h);
	printf("PASS engine_read_slow_peer\n");
	return T_EXIT_PASS;
}
