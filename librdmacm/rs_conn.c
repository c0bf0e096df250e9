/* SPDX-License-Identifier: MIT */
/*
 * rsocket life cycle: allocation with the defaults (or a listener's
 * settings), the endpoint (CQ, QP, registered buffers, posted receives),
 * the connection data both sides exchange in the CM private data, and the
 * connect / accept state machine over a synchronous rdma_cm id, which also
 * runs step by step for non-blocking sockets.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

struct rsocket *rs_alloc(const struct rsocket *parent)
{
	struct rsocket *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->index = -1;
	rs->type = SOCK_STREAM;
	rs->udp_sock = -1;
	rs->epfd = -1;
	if (parent) {
		rs->sbuf_size = parent->sbuf_size;
		rs->rbuf_size = parent->rbuf_size;
		rs->sq_inline = parent->sq_inline;
		rs->sq_size = parent->sq_size;
		rs->rq_size = parent->rq_size;
		rs->ctrl_max_seqno = parent->ctrl_max_seqno;
		rs->target_iomap_size = parent->target_iomap_size;
		rs->fs_flags = parent->fs_flags;
		rs->fd_flags = parent->fd_flags;
		rs->so_opts = parent->so_opts;
		rs->tcp_opts = parent->tcp_opts;
	} else {
		rs->sbuf_size = RS_DEF_WMEM;
		rs->rbuf_size = RS_DEF_MEM;
		rs->sq_inline = RS_DEF_INLINE;
		rs->sq_size = RS_DEF_SQSIZE;
		rs->rq_size = RS_DEF_RQSIZE;
		rs->ctrl_max_seqno = RS_QP_CTRL_SIZE;
	}
	pthread_mutex_init(&rs->slock, NULL);
	pthread_mutex_init(&rs->rlock, NULL);
	pthread_mutex_init(&rs->cq_lock, NULL);
	pthread_mutex_init(&rs->cq_wait_lock, NULL);
	pthread_mutex_init(&rs->map_lock, NULL);
	list_head_init(&rs->iomap_list);
	list_head_init(&rs->iomap_queue);
	return rs;
}

/* Buffers the device writes get pages of their own: registering memory
 * moves its pages, which must not be shared with the heap's. */
static void *rs_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void rs_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

static void rs_free_bufs(struct rsocket *rs)
{
	if (rs->smr)
		ibv_dereg_mr(rs->smr);
	if (rs->rmr)
		ibv_dereg_mr(rs->rmr);
	if (rs->target_mr)
		ibv_dereg_mr(rs->target_mr);
	rs_unmap(rs->sbuf, rs->sbuf_alloc);
	rs_unmap(rs->rbuf, rs->rbuf_size);
	rs_unmap(rs->target_buf, rs->target_len);
	free(rs->rmsg);
	rs->smr = rs->rmr = rs->target_mr = NULL;
	rs->sbuf = rs->rbuf = NULL;
	rs->target_buf = NULL;
	rs->rmsg = NULL;
}

void rs_free(struct rsocket *rs)
{
	struct rdma_cm_id *id = rs->cm_id;

	rs_remove(rs);
	if (rs->type == SOCK_DGRAM)
		ds_free(rs);
	if (id) {
		rs_free_iomaps(rs);
		if (id->recv_cq && rs->unack_cqe)
			ibv_ack_cq_events(id->recv_cq, rs->unack_cqe);
		if (id->qp) {
			rdma_destroy_qp(id);
		} else if (id->recv_cq) {
			/* The endpoint failed before its QP. */
			ibv_destroy_cq(id->recv_cq);
			ibv_destroy_comp_channel(id->recv_cq_channel);
			id->recv_cq = id->send_cq = NULL;
			id->recv_cq_channel = id->send_cq_channel = NULL;
		}
		rs_free_bufs(rs);
		rdma_destroy_id(id);
	}
	free(rs->route);
	pthread_mutex_destroy(&rs->map_lock);
	pthread_mutex_destroy(&rs->cq_wait_lock);
	pthread_mutex_destroy(&rs->cq_lock);
	pthread_mutex_destroy(&rs->rlock);
	pthread_mutex_destroy(&rs->slock);
	free(rs);
}

static int set_fd_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl);
}

int rs_set_nonblocking(struct rsocket *rs, bool on)
{
	if (rs->type == SOCK_DGRAM)
		return 0; /* its calls never wait on a descriptor's flags */
	/* Once connected the event channel is always read without waiting
	 * (rs_check_cm); before, it waits as the socket does. */
	if (rs->state == rs_listening || rs->state < rs_connected)
		return set_fd_nonblock(rs->cm_id->channel->fd, on);
	return 0;
}

static void rs_set_qp_size(struct rsocket *rs)
{
	struct ibv_device_attr a;
	uint32_t max = RS_QP_MAX_SIZE;

	if (!ibv_query_device(rs->cm_id->verbs, &a) &&
	    (uint32_t)a.max_qp_wr < max)
		max = (uint32_t)a.max_qp_wr;
	if (rs->sq_size > max)
		rs->sq_size = (uint16_t)max;
	else if (rs->sq_size < RS_QP_MIN_SIZE)
		rs->sq_size = RS_QP_MIN_SIZE;
	if (rs->rq_size > max)
		rs->rq_size = (uint16_t)max;
	else if (rs->rq_size < RS_QP_MIN_SIZE)
		rs->rq_size = RS_QP_MIN_SIZE;
}

static int rs_init_bufs(struct rsocket *rs)
{
	struct ibv_pd *pd = rs->cm_id->pd;
	int wr = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	rs->rmsg = calloc(rs->rq_size + 1u, sizeof(*rs->rmsg));
	if (!rs->rmsg)
		return cma_err(ENOMEM);
	/* Control messages that cannot go inline use slots after the ring. */
	rs->sbuf_alloc = rs->sbuf_size;
	if (rs->sq_inline < sizeof(struct rs_sge))
		rs->sbuf_alloc += sizeof(struct rs_sge) * RS_QP_CTRL_SIZE;
	rs->sbuf = rs_map(rs->sbuf_alloc);
	if (!rs->sbuf)
		return cma_err(ENOMEM);
	rs->smr = ibv_reg_mr(pd, rs->sbuf, rs->sbuf_alloc,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!rs->smr)
		return -1;

	rs->target_len = sizeof(struct rs_sge) * RS_SGL_SIZE +
			 sizeof(struct rs_iomap) * rs->target_iomap_size;
	rs->target_buf = rs_map(rs->target_len);
	if (!rs->target_buf)
		return cma_err(ENOMEM);
	rs->target_mr = ibv_reg_mr(pd, rs->target_buf, rs->target_len, wr);
	if (!rs->target_mr)
		return -1;
	rs->target_sgl = rs->target_buf;
	if (rs->target_iomap_size)
		rs->target_iomap = (volatile struct rs_iomap *)(rs->target_sgl +
								RS_SGL_SIZE);

	rs->rbuf = rs_map(rs->rbuf_size);
	if (!rs->rbuf)
		return cma_err(ENOMEM);
	rs->rmr = ibv_reg_mr(pd, rs->rbuf, rs->rbuf_size, wr);
	if (!rs->rmr)
		return -1;

	rs->ssgl[0].addr = rs->ssgl[1].addr = (uintptr_t)rs->sbuf;
	rs->ssgl[0].lkey = rs->ssgl[1].lkey = rs->smr->lkey;
	rs->sbuf_bytes_avail = (int)rs->sbuf_size;
	/* The first half is the peer's from the start (the connection
	 * data); the second is granted with the first SGL update. */
	rs->rbuf_free_offset = (int)(rs->rbuf_size >> 1);
	rs->rbuf_bytes_avail = (int)(rs->rbuf_size >> 1);
	rs->sqe_avail = rs->sq_size - (int)rs->ctrl_max_seqno;
	rs->rseq_comp = rs->rq_size >> 1;
	return 0;
}

static int rs_create_cq(struct rsocket *rs)
{
	struct rdma_cm_id *id = rs->cm_id;

	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (!id->recv_cq_channel)
		return -1;
	id->recv_cq = ibv_create_cq(id->verbs, rs->sq_size + rs->rq_size, id,
				    id->recv_cq_channel, 0);
	if (!id->recv_cq) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		id->recv_cq_channel = NULL;
		return -1;
	}
	/* Waiting is done with poll() (with the CM channel beside it). */
	set_fd_nonblock(id->recv_cq_channel->fd, true);
	ibv_req_notify_cq(id->recv_cq, 0);
	id->send_cq_channel = id->recv_cq_channel;
	id->send_cq = id->recv_cq;
	return 0;
}

static int rs_create_ep(struct rsocket *rs)
{
	struct ibv_qp_init_attr a;

	rs_set_qp_size(rs);
	if (rs_create_cq(rs))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_context = rs;
	a.send_cq = rs->cm_id->send_cq;
	a.recv_cq = rs->cm_id->recv_cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->rq_size;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(rs->cm_id, NULL, &a))
		return -1;
	/* The device may offer more inline than asked; use what was asked,
	 * so RDMA_INLINE 0 stages everything in the send buffer. */
	if (a.cap.max_inline_data < rs->sq_inline)
		rs->sq_inline = (uint16_t)a.cap.max_inline_data;
	if (rs_init_bufs(rs))
		return -1;
	for (int i = 0; i < rs->rq_size; i++)
		if (rs_post_recv(rs))
			return -1;
	return 0;
}

static void rs_format_conn_data(struct rsocket *rs, struct rs_conn_data *c)
{
	memset(c, 0, sizeof(*c));
	c->version = RS_CONN_VERSION;
	c->flags = RS_CONN_FLAG_IOMAP;
	if (__BYTE_ORDER == __BIG_ENDIAN)
		c->flags |= RS_CONN_FLAG_NET;
	c->credits = htobe16(rs->rq_size);
	c->target_iomap_size =
		(uint8_t)rs_value_to_scale(rs->target_iomap_size, 8);
	c->target_sgl.addr = htobe64((uintptr_t)rs->target_sgl);
	c->target_sgl.length = htobe32(RS_SGL_SIZE);
	c->target_sgl.key = htobe32(rs->target_mr->rkey);
	c->data_buf.addr = htobe64((uintptr_t)rs->rbuf);
	c->data_buf.length = htobe32(rs->rbuf_size >> 1);
	c->data_buf.key = htobe32(rs->rmr->rkey);
}

static void rs_save_conn_data(struct rsocket *rs, const struct rs_conn_data *c)
{
	bool peer_net = c->flags & RS_CONN_FLAG_NET;

	rs->remote_sgl.addr = be64toh(c->target_sgl.addr);
	rs->remote_sgl.length = be32toh(c->target_sgl.length);
	rs->remote_sgl.key = be32toh(c->target_sgl.key);
	rs->remote_sge = 1; /* entry 0 is described by data_buf */
	if (peer_net != (__BYTE_ORDER == __BIG_ENDIAN))
		rs->opts |= RS_OPT_SWAP_SGL;
	if (c->flags & RS_CONN_FLAG_IOMAP) {
		rs->remote_iomap.addr =
			rs->remote_sgl.addr +
			sizeof(struct rs_sge) * rs->remote_sgl.length;
		rs->remote_iomap.length =
			(uint32_t)rs_scale_to_value(c->target_iomap_size, 8);
		rs->remote_iomap.key = rs->remote_sgl.key;
	}
	rs->target_sgl[0].addr = be64toh(c->data_buf.addr);
	rs->target_sgl[0].length = be32toh(c->data_buf.length);
	rs->target_sgl[0].key = be32toh(c->data_buf.key);
	rs->sseq_comp = be16toh(c->credits);
}

static bool rs_would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* The ESTABLISHED (or, on error, other) event a synchronous id waits for. */
static int rs_complete(struct rsocket *rs)
{
	return cma_complete(cma_id(rs->cm_id));
}

static const struct rs_conn_data *rs_event_conn_data(struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev = id->event;

	if (!ev ||
	    ev->param.conn.private_data_len < sizeof(struct rs_conn_data))
		return NULL;
	return ev->param.conn.private_data;
}

static int rs_connected_now(struct rsocket *rs)
{
	rs->state = rs_connect_rdwr;
	/* From now on CM events are taken without waiting. */
	return set_fd_nonblock(rs->cm_id->channel->fd, true);
}

static int rs_start_connect(struct rsocket *rs)
{
	struct rdma_conn_param param;
	struct rs_conn_data creq;

	if (rs_create_ep(rs))
		return -1;
	memset(&param, 0, sizeof(param));
	rs_format_conn_data(rs, &creq);
	param.private_data = &creq;
	param.private_data_len = sizeof(creq);
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	rs->retries = 0;
	return rdma_connect(rs->cm_id, &param);
}

static int rs_finish_connect(struct rsocket *rs)
{
	const struct rs_conn_data *cresp = rs_event_conn_data(rs->cm_id);

	if (!cresp || cresp->version != RS_CONN_VERSION)
		return cma_err(ENOTSUP);
	rs_save_conn_data(rs, cresp);
	return rs_connected_now(rs);
}

static int rs_resolve_route(struct rsocket *rs)
{
	if (rs->route) {
		int ret = rdma_set_option(rs->cm_id, RDMA_OPTION_IB,
					  RDMA_OPTION_IB_PATH, rs->route,
					  rs->route_len);

		free(rs->route);
		rs->route = NULL;
		rs->route_len = 0;
		if (!ret)
			return rs_complete(rs);
		/* A path we cannot set: resolve one instead. */
	}
	return rdma_resolve_route(rs->cm_id, 1000 << rs->retries++);
}

/*
 * One step (or all of them, when blocking) from where the connection
 * stands.  -1 with EINPROGRESS: call again when the channel has an event.
 */
int rs_do_connect(struct rsocket *rs)
{
	int ret;

	pthread_mutex_lock(&rs->slock);
	switch (rs->state) {
	case rs_init:
	case rs_bound:
	resolve_addr:
		ret = rdma_resolve_addr(rs->cm_id, NULL,
					&rs->cm_id->route.addr.dst_addr,
					1000 << rs->retries++);
		if (!ret)
			goto resolve_route;
		if (rs_would_block())
			rs->state = rs_resolving_addr;
		break;
	case rs_resolving_addr:
		ret = rs_complete(rs);
		if (ret) {
			if (errno == ETIMEDOUT &&
			    rs->retries <= RS_CONN_RETRIES)
				goto resolve_addr;
			break;
		}
	resolve_route:
		rs->retries = 0;
	resolve_route_again:
		ret = rs_resolve_route(rs);
		if (!ret)
			goto do_connect;
		if (rs_would_block())
			rs->state = rs_resolving_route;
		break;
	case rs_resolving_route:
		ret = rs_complete(rs);
		if (ret) {
			if (errno == ETIMEDOUT &&
			    rs->retries <= RS_CONN_RETRIES)
				goto resolve_route_again;
			break;
		}
	do_connect:
		ret = rs_start_connect(rs);
		if (!ret)
			goto connected;
		if (rs_would_block())
			rs->state = rs_connecting;
		break;
	case rs_connecting:
		ret = rs_complete(rs);
		if (ret)
			break;
	connected:
		ret = rs_finish_connect(rs);
		break;
	case rs_accepting:
		ret = rs_complete(rs);
		if (!ret)
			ret = rs_connected_now(rs);
		break;
	case rs_connect_error:
	case rs_disconnected:
	case rs_error:
		ret = cma_err(ENOTCONN);
		goto unlock;
	default:
		ret = (rs->state & rs_connected) ? 0 : cma_err(EINVAL);
		goto unlock;
	}
	if (ret) {
		if (rs_would_block()) {
			errno = EINPROGRESS;
		} else {
			rs->state = rs_connect_error;
			rs->err = errno;
		}
	}
unlock:
	pthread_mutex_unlock(&rs->slock);
	return ret;
}

/*
 * Take one connection request off a listening rsocket and accept it: the
 * new rsocket, or -1 and errno (EAGAIN when none waits and the listener
 * does not block).
 */
int rs_accept(struct rsocket *listen)
{
	struct rs_conn_data creq, cresp;
	struct rdma_conn_param param;
	struct rdma_cm_id *id;
	struct rsocket *rs;
	const struct rs_conn_data *req;
	int err;

	if (rdma_get_request(listen->cm_id, &id))
		return -1;
	rs = rs_alloc(listen);
	if (!rs) {
		err = ENOMEM;
		goto err_reject;
	}
	rs->cm_id = id;
	req = rs_event_conn_data(id);
	if (!req || req->version != RS_CONN_VERSION) {
		err = ENOTSUP;
		goto err_reject;
	}
	creq = *req;
	if (rs_insert(rs, id->channel->fd) || rs_create_ep(rs)) {
		err = errno;
		goto err_reject;
	}
	rs_save_conn_data(rs, &creq);
	param = id->event->param.conn;
	rs_format_conn_data(rs, &cresp);
	param.private_data = &cresp;
	param.private_data_len = sizeof(cresp);
	/* A non-blocking listener does not wait for the RTU either. */
	if (rs->fs_flags & O_NONBLOCK)
		set_fd_nonblock(id->channel->fd, true);
	if (!rdma_accept(id, &param)) {
		rs_connected_now(rs);
	} else if (rs_would_block()) {
		rs->state = rs_accepting;
	} else {
		err = errno;
		goto err_free;
	}
	return rs->index;

err_reject:
	rdma_reject(id, NULL, 0);
err_free:
	if (rs) {
		rs_free(rs);
	} else {
		rdma_destroy_id(id);
	}
	errno = err;
	return -1;
}

/*
 * CM events of a connected rsocket: the peer's DREQ (or its going away)
 * ends the connection even if its last control message never came.
 */
void rs_check_cm(struct rsocket *rs)
{
	struct rdma_cm_event *ev;

	if (!rs->cm_id || rs->state < rs_connected)
		return;
	while (!rdma_get_cm_event(rs->cm_id->channel, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			if (rs->state & rs_connected)
				rs->state = rs_disconnected;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}
