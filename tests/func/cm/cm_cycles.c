/* SPDX-License-Identifier: MIT */
/*
 * 1000 times: connect, send, disconnect, destroy.  Every cycle must work
 * (a comm ID, port or QP number reused too early would show as a failed
 * one), and at the end the daemon holds no id, no comm ID and no more
 * file descriptors than before.
 */
#include <dirent.h>
#include <stdio.h>

#include "t_cm.h"

#define CYCLES 1000

static int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_event_channel *pch, *ach;
	struct rdma_cm_id *listen, *client, *server;
	struct srd_cm_stats_rep st0, st1;
	struct rdma_cm_event *ev;
	struct ibv_mr *cmr, *smr;
	int fds0, fds1;
	uint64_t t0;
	uint16_t port;

	t_init("cm_cycles");
	pch = t_cm_channel();
	ach = t_cm_channel();
	port = t_cm_listen(pch, &listen, RDMA_PS_TCP);
	/* The process's device contexts, opened once for good (the
	 * listener, on 127.0.0.1, has none). */
	rdma_free_devices(T_NONNULL(rdma_get_devices(NULL)));
	/* One cycle first, so everything made once for good exists. */
	T_ASSERT(t_daemon_pid() > 0);
	t_cm_stats(&st0);
	/* Short-lived connections (device listing, statistics) close
	 * soon: the count settles to its floor. */
	fds0 = fd_count(t_daemon_pid());
	for (int i = 0; i < 10; i++) {
		int n = fd_count(t_daemon_pid());

		fds0 = n < fds0 ? n : fds0;
		t_sleep_ms(20);
	}
	t0 = t_now_ms();
	for (int i = 0; i < CYCLES; i++) {
		T_EQ(rdma_create_id(ach, &client, NULL, RDMA_PS_TCP), 0);
		t_cm_resolve(ach, client, port);
		t_cm_qp(client, IBV_QPT_RC);
		T_EQ(rdma_connect(client, &cp), 0);
		ev = T_CM_EXPECT(pch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
		server = ev->id;
		T_EQ(rdma_ack_cm_event(ev), 0);
		t_cm_qp(server, IBV_QPT_RC);
		T_EQ(rdma_accept(server, &cp), 0);
		T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_ESTABLISHED, 0, client);
		T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_ESTABLISHED, 0, server);
		if (i % 100 == 0) {
			cmr = t_cm_mr(client, 64);
			smr = t_cm_mr(server, 64);
			t_cm_send_check(client, cmr, server, smr, 64, i + 1);
			t_cm_mr_free(cmr);
			t_cm_mr_free(smr);
		}
		/* Alternate who says goodbye first. */
		if (i & 1) {
			T_EQ(rdma_disconnect(server), 0);
			T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_DISCONNECTED, 0,
					client);
			T_EQ(rdma_disconnect(client), 0);
			T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0,
					server);
		} else {
			T_EQ(rdma_disconnect(client), 0);
			T_CM_EXPECT_ACK(pch, RDMA_CM_EVENT_DISCONNECTED, 0,
					server);
			T_EQ(rdma_disconnect(server), 0);
			T_CM_EXPECT_ACK(ach, RDMA_CM_EVENT_DISCONNECTED, 0,
					client);
		}
		rdma_destroy_qp(client);
		rdma_destroy_qp(server);
		T_EQ(rdma_destroy_id(client), 0);
		T_EQ(rdma_destroy_id(server), 0);
	}
	t_log("%d cycles in %llu ms", CYCLES,
	      (unsigned long long)(t_now_ms() - t0));
	/* Only the listener left once TIMEWAIT is over. */
	T_CM_WAIT_IDLE(1, 10000);
	t_cm_stats(&st1);
	T_EQ(st1.chans, st0.chans);
	T_EQ(st1.listeners, 1);
	T_EQ(st1.conns_made - st0.conns_made, 2 * CYCLES);
	T_EQ(st1.timeouts, st0.timeouts);
	T_EQ(st1.mad_bad, st0.mad_bad);
	/* The daemon closes a connection's end when it sees it go: give
	 * it a moment for the ones just closed. */
	for (int i = 0; i < 40 && (fds1 = fd_count(t_daemon_pid())) > fds0; i++)
		t_sleep_ms(50);
	T_LE(fds1, fds0);
	T_EQ(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(pch);
	T_CM_WAIT_IDLE(0, 1000);
	t_pass();
}
