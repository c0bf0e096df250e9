/* SPDX-License-Identifier: MIT */
/*
 * Preloaded into Debian's ibv_asyncwatch: async events go only to the
 * context that owns the object (as with the kernel's uverbs files), so the
 * errors that asyncwatch must report are provoked on the context it opened.
 *
 * ibv_open_device() is wrapped: once asyncwatch has its context, a thread
 * makes, on that context,
 *   1. a CQ overrun: a tiny send CQ left unpolled under many signaled
 *      RDMA WRITEs -> IBV_EVENT_CQ_ERR (0) for that CQ and
 *      IBV_EVENT_QP_FATAL (1) for the QP feeding it;
 *   2. a remote access error: an RDMA WRITE with a wrong rkey ->
 *      IBV_EVENT_QP_ACCESS_ERR (3) for the responder QP.
 * ibv_ack_async_event() is wrapped too: it checks that the element of
 * each event asyncwatch acknowledges is the object we made.  Findings go
 * to stderr as "async_provoke: ..." lines for the test to read.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define PORT 1
#define GID_INDEX 0
#define BUF_LEN 4096

typedef struct ibv_context *(*open_fn)(struct ibv_device *);
typedef void (*ack_fn)(struct ibv_async_event *);

struct ends {
	struct ibv_qp *req;  /* requester */
	struct ibv_qp *resp; /* responder */
};

static struct {
	struct ibv_context *ctx;
	struct ibv_cq *small_cq;
	struct ibv_qp *overrun_qp;
	struct ibv_qp *access_qp;
} made;

/* The declarations in our header are the prototypes; these are the
 * interposed definitions. */
struct ibv_context *ibv_open_device(struct ibv_device *device);
void ibv_ack_async_event(struct ibv_async_event *event);

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, "async_provoke: ", 15) < 0 || write(2, line, n) < 0)
		return;
}

static int fail(const char *what)
{
	say("FAIL %s", what);
	return -1;
}

static int qp_connect(struct ibv_qp *qp, uint32_t remote_qpn,
		      const union ibv_gid *gid, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = PORT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		return fail("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = remote_qpn;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = GID_INDEX;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		return fail("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("modify to RTS");
	return 0;
}

/* Two RC QPs of this context connected to each other. */
static int make_pair(struct ibv_pd *pd, struct ibv_cq *req_cq,
		     struct ibv_cq *resp_cq, int depth, struct ends *e)
{
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr pa;
	union ibv_gid gid;

	if (ibv_query_port(made.ctx, PORT, &pa))
		return fail("ibv_query_port");
	if (ibv_query_gid(made.ctx, PORT, GID_INDEX, &gid))
		return fail("ibv_query_gid");
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_RC;
	ia.send_cq = req_cq;
	ia.recv_cq = resp_cq;
	ia.cap.max_send_wr = (uint32_t)depth;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->req = ibv_create_qp(pd, &ia);
	ia.send_cq = resp_cq;
	e->resp = ibv_create_qp(pd, &ia);
	if (!e->req || !e->resp)
		return fail("ibv_create_qp");
	if (qp_connect(e->req, e->resp->qp_num, &gid, pa.active_mtu) ||
	    qp_connect(e->resp, e->req->qp_num, &gid, pa.active_mtu))
		return -1;
	return 0;
}

static int post_write(struct ibv_qp *qp, struct ibv_mr *src, void *dst,
		      uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->addr,
		.length = 32,
		.lkey = src->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int provoke(void)
{
	struct ibv_cq *big;
	struct ibv_mr *src, *dst;
	struct ibv_pd *pd;
	struct ends e1, e2;
	void *sbuf, *dbuf;
	int i, n;

	pd = ibv_alloc_pd(made.ctx);
	big = ibv_create_cq(made.ctx, 256, NULL, NULL, 0);
	made.small_cq = ibv_create_cq(made.ctx, 1, NULL, NULL, 0);
	if (!pd || !big || !made.small_cq)
		return fail("ibv_alloc_pd/ibv_create_cq");
	sbuf = aligned_alloc(4096, BUF_LEN);
	dbuf = aligned_alloc(4096, BUF_LEN);
	if (!sbuf || !dbuf)
		return fail("aligned_alloc");
	memset(sbuf, 0x5a, BUF_LEN);
	src = ibv_reg_mr(pd, sbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	dst = ibv_reg_mr(pd, dbuf, BUF_LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!src || !dst)
		return fail("ibv_reg_mr");

	/* 1. CQ overrun */
	n = made.small_cq->cqe * 2 + 16;
	if (make_pair(pd, made.small_cq, big, n, &e1))
		return -1;
	made.overrun_qp = e1.req;
	say("overrun: CQ %p of %d entries, QP 0x%x, %d writes",
	    (void *)made.small_cq, made.small_cq->cqe, e1.req->qp_num, n);
	for (i = 0; i < n; i++)
		if (post_write(e1.req, src, dbuf, dst->rkey, (uint64_t)i))
			return fail("ibv_post_send (overrun)");

	/* 2. remote access error: an rkey nobody was given */
	if (make_pair(pd, big, big, 4, &e2))
		return -1;
	made.access_qp = e2.resp;
	say("access: responder QP 0x%x gets a bad rkey", e2.resp->qp_num);
	if (post_write(e2.req, src, dbuf, dst->rkey ^ 0x5a5a00, 1000))
		return fail("ibv_post_send (access)");
	say("provoked");
	/* Everything stays: asyncwatch runs until it is killed. */
	return 0;
}

static void *provoke_thread(void *arg)
{
	(void)arg;
	/* Let asyncwatch print its banner and block in its read first. */
	usleep(200 * 1000);
	provoke();
	return NULL;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	static open_fn real;
	struct ibv_context *ctx;
	pthread_t th;

	if (!real)
		real = (open_fn)dlvsym(RTLD_NEXT, "ibv_open_device",
				       "IBVERBS_1.1");
	if (!real) {
		say("FAIL no ibv_open_device@IBVERBS_1.1 after us");
		return NULL;
	}
	ctx = real(device);
	if (ctx && !made.ctx) {
		made.ctx = ctx;
		say("context %p opened on %s", (void *)ctx,
		    ibv_get_device_name(device));
		if (pthread_create(&th, NULL, provoke_thread, NULL))
			say("FAIL pthread_create");
		else
			pthread_detach(th);
	}
	return ctx;
}

/* Which of our objects the event names, or why it is wrong. */
static const char *check_element(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq == made.small_cq ? "our small CQ"
						       : "WRONG CQ";
	case IBV_EVENT_QP_FATAL:
		return ev->element.qp == made.overrun_qp ? "our overrun QP"
							 : "WRONG QP";
	case IBV_EVENT_QP_ACCESS_ERR:
		return ev->element.qp == made.access_qp ? "our responder QP"
							: "WRONG QP";
	default:
		return "not ours";
	}
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	static ack_fn real;

	if (!real)
		real = (ack_fn)dlvsym(RTLD_NEXT, "ibv_ack_async_event",
				      "IBVERBS_1.1");
	say("ack %s (%d): %s", ibv_event_type_str(event->event_type),
	    (int)event->event_type, check_element(event));
	if (real)
		real(event);
}
