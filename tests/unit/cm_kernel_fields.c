/* SPDX-License-Identifier: MIT */
/*
 * Our CM's messages against the Linux kernel's: the daemon (in this
 * process) connects and disconnects on 127.0.0.1 with the parameters
 * Debian's rping uses, the MADs QP1 posts are taken from its send queue,
 * and each REQ, REP, RTU, DREQ and DREP must equal the one Linux 6.1 sent
 * in tests/vectors/rxe/rping_cm.pcap field for field, but for what
 * differs by nature between two connections: comm IDs, transaction ID,
 * QPNs, PSNs, CA GUIDs, GIDs and addresses, the flow label, and the path
 * MTU (the capture's link had 1500 bytes, lo has 64 KiB).  Those values
 * only mean something with the QPs behind them: cm_kernel_replay feeds
 * the kernel's messages to our CM and checks what our QPs get (a Starting
 * PSN read from the wrong message passes here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/roce.h"
#include "daemon/cm/cm.h"
#include "tests/unit/t_cm_core.h"
#include "tests/unit/t_cm_mads.h"

#define MAX_MADS 16

static struct t_core t;
static struct cm_msg ours[MAX_MADS], theirs[MAX_MADS];
static unsigned int nours, ntheirs;

static void collect(void)
{
	tcm_sq_collect(&t, ours, MAX_MADS, &nours);
}

static void pump(void)
{
	tc_pump(&t);
}

static int cmd(uint32_t op, const void *req, uint32_t len, void *rep,
	       size_t rep_len)
{
	return tc_cmd(&t, t.c, op, req, len, rep, rep_len);
}

static uint32_t next_event(uint32_t want)
{
	struct srd_cm_event_rep ev;

	T_EQ(cmd(SRD_CMD_CM_GET_EVENT, NULL, 0, &ev, sizeof(ev)), 0);
	T_EQ(ev.event, want);
	T_EQ(ev.status, 0);
	return ev.handle;
}

static uint32_t new_id(void)
{
	return tc_new_id(&t, t.c, RDMA_PS_TCP, IBV_QPT_RC);
}

/* 127.0.0.1:port */
static void sin_set(struct sockaddr_storage *ss, uint16_t port)
{
	tc_sin(ss, "127.0.0.1", port);
}

static void run_ours(void)
{
	struct srd_cm_bind_req bind = { 0 };
	struct srd_cm_listen_req lr = { .backlog = 1 };
	struct srd_cm_resolve_addr_req ra = { 0 };
	struct srd_cm_resolve_route_req rr = { 0 };
	struct srd_cm_connect_req con = { 0 };
	struct srd_cm_accept_req acc = { 0 };
	struct srd_handle_req dis = { 0 };
	uint32_t lh, ch, sh;

	T_EQ(cmd(SRD_CMD_CM_OPEN, NULL, 0, NULL, 0), 0);
	pump();
	tcm_sq_mark(&t);
	lh = new_id();
	bind.handle = lh;
	sin_set(&bind.addr, 7174);
	T_EQ(cmd(SRD_CMD_CM_BIND, &bind, sizeof(bind), NULL, 0), 0);
	lr.handle = lh;
	T_EQ(cmd(SRD_CMD_CM_LISTEN, &lr, sizeof(lr), NULL, 0), 0);
	ch = new_id();
	ra.handle = rr.handle = ch;
	sin_set(&ra.dst, 7174);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ADDR, &ra, sizeof(ra), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	T_EQ(cmd(SRD_CMD_CM_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	/* rping's rdma_connect: resources 1, retries 7. */
	con.handle = ch;
	con.p.qp_num = 0x11;
	con.p.responder_resources = con.p.initiator_depth = 1;
	con.p.retry_count = con.p.rnr_retry_count = 7;
	T_EQ(cmd(SRD_CMD_CM_CONNECT, &con, sizeof(con), NULL, 0), 0);
	sh = next_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	/* rping's rdma_accept(id, NULL), as librdmacm passes it on. */
	acc.handle = sh;
	acc.p.qp_num = 0x12;
	acc.p.responder_resources = acc.p.initiator_depth = 1;
	acc.p.retry_count = acc.p.rnr_retry_count = 7;
	T_EQ(cmd(SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_CONNECT_RESPONSE);
	acc.handle = ch;
	T_EQ(cmd(SRD_CMD_CM_ACCEPT, &acc, sizeof(acc), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_ESTABLISHED);
	dis.handle = ch;
	T_EQ(cmd(SRD_CMD_CM_DISCONNECT, &dis, sizeof(dis), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_DISCONNECTED);
	dis.handle = sh;
	T_EQ(cmd(SRD_CMD_CM_DISCONNECT, &dis, sizeof(dis), NULL, 0), 0);
	next_event(RDMA_CM_EVENT_DISCONNECTED);
}

/* The CM MADs of the capture. */
static int read_theirs(void)
{
	int n = tcm_read_pcap(SRD_RXE_VECTORS_DIR "/rping_cm.pcap", theirs,
			      MAX_MADS);

	if (n < 0)
		return n;
	ntheirs = (unsigned int)n;
	return 0;
}

/* What two connections cannot share. */
static void normalize(struct cm_msg *m)
{
	struct cma_hdr h;

	m->hdr.tid = 0;
	switch (m->hdr.attr_id) {
	case CM_ATTR_REQ:
		m->req.local_comm_id = 0;
		m->req.service_id &= CM_IP_SERVICE_ID_MASK;
		m->req.local_ca_guid = 0;
		m->req.local_qpn = 0;
		m->req.starting_psn = 0;
		m->req.path_mtu = 0;
		memset(m->req.primary.local_gid, 0, 16);
		memset(m->req.primary.remote_gid, 0, 16);
		m->req.primary.flow_label = 0;
		T_EQ(cma_hdr_decode(m->req.private_data, CMA_HDR_SIZE, &h), 0);
		/* The header's version and IP version stay compared. */
		memset(m->req.private_data + 2, 0, CMA_HDR_SIZE - 2);
		break;
	case CM_ATTR_REP:
		m->rep.local_comm_id = m->rep.remote_comm_id = 0;
		m->rep.local_qpn = 0;
		m->rep.starting_psn = 0;
		m->rep.local_ca_guid = 0;
		break;
	case CM_ATTR_RTU:
		m->rtu.local_comm_id = m->rtu.remote_comm_id = 0;
		break;
	case CM_ATTR_DREQ:
		m->dreq.local_comm_id = m->dreq.remote_comm_id = 0;
		m->dreq.remote_qpn_eecn = 0;
		break;
	case CM_ATTR_DREP:
		m->drep.local_comm_id = m->drep.remote_comm_id = 0;
		break;
	default:
		break;
	}
}

int main(void)
{
	static const uint16_t want[] = { CM_ATTR_REQ, CM_ATTR_REP, CM_ATTR_RTU,
					 CM_ATTR_DREQ, CM_ATTR_DREP };
	int ret = read_theirs();

	if (ret == -ENOENT)
		T_FAIL("no capture in %s", SRD_RXE_VECTORS_DIR);
	T_EQ(ret, 0);
	T_EQ(ntheirs, 5);
	t_core_init(&t);
	/* Every MAD QP1 posts is taken as soon as it is posted. */
	tc_each_pass = collect;
	run_ours();
	T_EQ(nours, 5);
	for (unsigned int i = 0; i < 5; i++) {
		char a[200], b[200];

		T_EQ(ours[i].hdr.attr_id, want[i]);
		T_EQ(theirs[i].hdr.attr_id, want[i]);
		cm_msg_format(a, sizeof(a), &ours[i]);
		cm_msg_format(b, sizeof(b), &theirs[i]);
		printf("ours:   %s\nlinux:  %s\n", a, b);
		normalize(&ours[i]);
		normalize(&theirs[i]);
		if (memcmp(&ours[i], &theirs[i], sizeof(ours[i]))) {
			const uint8_t *x = (const uint8_t *)&ours[i];
			const uint8_t *y = (const uint8_t *)&theirs[i];

			for (size_t k = 0; k < sizeof(ours[i]); k++)
				if (x[k] != y[k])
					fprintf(stderr,
						"%s: byte %zu of struct cm_msg:"
						" ours %#x, linux %#x\n",
						cm_mad_str(want[i]), k, x[k],
						y[k]);
			T_ASSERT(!"the same fields");
		}
	}
	t_core_fini(&t);
	printf("PASS cm_kernel_fields\n");
	return T_EXIT_PASS;
}
