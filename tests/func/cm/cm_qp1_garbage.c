/* SPDX-License-Identifier: MIT */
/*
 * QP1 under fire: a UD QP of ours with the GSI Q_Key sends QP1 of the
 * device random bytes, datagrams of the wrong size, CM messages for comm
 * IDs nobody has and a forged REQ, twice.  The daemon drops and counts
 * what is not a CM MAD, drops what names nothing, reports the forged
 * request once (the repeat is a duplicate) and goes on serving
 * connections as before.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include "t_cm.h"

#define N_RANDOM 200

int main(void)
{
	static const uint16_t unknown[] = {
		CM_ATTR_REP, CM_ATTR_RTU,  CM_ATTR_REJ,
		CM_ATTR_MRA, CM_ATTR_DREQ, CM_ATTR_DREP,
		CM_ATTR_LAP, CM_ATTR_APR,  CM_ATTR_SIDR_REP,
	};
	static const uint32_t bad_len[] = { 0, 1, 24, 255, 257, 1024 };
	struct srd_cm_stats_rep st0, st1;
	struct rdma_event_channel *pch;
	struct rdma_cm_id *listen;
	struct rdma_cm_event *ev;
	struct t_cm_pair pair;
	struct t_cm_gsi t;
	struct cm_msg m;
	uint8_t junk[1024];
	uint16_t port;

	t_init("cm_qp1_garbage");
	pch = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	t_cm_gsi_open(&t);
	t_cm_stats(&st0);

	srand(7);
	for (int i = 0; i < N_RANDOM; i++) {
		for (size_t k = 0; k < MAD_SIZE; k++)
			junk[k] = (uint8_t)rand();
		t_cm_gsi_send(&t, junk, MAD_SIZE);
	}
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++)
		t_cm_gsi_send(&t, junk, bad_len[i]);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		cm_msg_init(&m, unknown[i], 0x77 + i);
		/* The same comm IDs in every message: none of ours. */
		m.rep.local_comm_id = 0xdead0000 + (uint32_t)i;
		m.rep.remote_comm_id = 0xbeef0000 + (uint32_t)i;
		t_cm_gsi_send_msg(&t, &m);
	}
	/* A REQ that names a listener: reported once, not twice. */
	t_cm_forged_req(&t, &m, port);
	t_cm_gsi_send_msg(&t, &m);
	ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	T_EQ(ev->param.conn.qp_num, 0x999);
	T_EQ(ntohs(rdma_get_dst_port(ev->id)), 5555);
	t_cm_gsi_send_msg(&t, &m);
	T_CM_EXPECT_NONE(pch, 200);
	T_EQ(rdma_reject(ev->id, NULL, 0), 0);
	T_EQ(rdma_destroy_id(ev->id), 0);
	T_EQ(rdma_ack_cm_event(ev), 0);

	t_cm_stats(&st1);
	t_log("bad %llu unmatched %llu dup %llu",
	      (unsigned long long)(st1.mad_bad - st0.mad_bad),
	      (unsigned long long)(st1.mad_unmatched - st0.mad_unmatched),
	      (unsigned long long)(st1.mad_dup - st0.mad_dup));
	T_EQ(st1.mad_bad - st0.mad_bad,
	     N_RANDOM + sizeof(bad_len) / sizeof(bad_len[0]));
	T_GE(st1.mad_unmatched - st0.mad_unmatched,
	     sizeof(unknown) / sizeof(unknown[0]));
	T_GE(st1.mad_dup - st0.mad_dup, 1);

	/* Still serving. */
	t_cm_pair_connect(&pair);
	t_cm_pair_disconnect(&pair);
	t_cm_pair_destroy(&pair);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 5000);
	t_pass();
}
