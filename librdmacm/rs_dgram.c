/* SPDX-License-Identifier: MIT */
/*
 * Datagram rsockets, as rdma-core's: every rsocket has a UDP socket (its
 * descriptor) and, per local address it sends from, a UD QP.  A datagram
 * to a peer whose QPN is not known yet goes over UDP with a ds_udp_header
 * carrying ours; the peer answers with a header alone (op CTRL) carrying
 * its QPN, and from then on both sides send over UD, each datagram led by
 * a ds_header with the sender's UDP address.  rdma-core runs the UDP side
 * in a thread; here it runs in the calls (recvfrom, sendto, rpoll), and a
 * datagram that came over UDP is handed to the reader directly.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

#define DS_RECV_ID(off) (RS_WR_ID_RECV | (off))

static socklen_t ds_addrlen(const struct sockaddr *a)
{
	return a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					: sizeof(struct sockaddr_in);
}

static bool ds_same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a,
					 *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

	return x->sin6_port == y->sin6_port &&
	       !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
}

int ds_socket(struct rsocket *rs, int domain)
{
	struct epoll_event ev = { .events = EPOLLIN };

	rs->type = SOCK_DGRAM;
	rs->udp_sock = socket(domain, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rs->udp_sock < 0)
		return -1;
	rs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rs->epfd < 0)
		return -1;
	ev.data.ptr = NULL; /* the UDP socket */
	return epoll_ctl(rs->epfd, EPOLL_CTL_ADD, rs->udp_sock, &ev);
}

/* Queues and buffers, sized as rdma-core does: one slot per WR. */
static int ds_init_ep(struct rsocket *rs)
{
	if (rs->state != rs_init)
		return 0;
	if (rs->rq_size > rs->rbuf_size / DS_MSG_SIZE)
		rs->rq_size = (uint16_t)(rs->rbuf_size / DS_MSG_SIZE);
	else
		rs->rbuf_size = rs->rq_size * DS_MSG_SIZE;
	if (rs->sq_size > rs->sbuf_size / DS_MSG_SIZE)
		rs->sq_size = (uint16_t)(rs->sbuf_size / DS_MSG_SIZE);
	else
		rs->sbuf_size = rs->sq_size * DS_MSG_SIZE;
	if (!rs->rq_size || !rs->sq_size)
		return cma_err(EINVAL);
	rs->sbuf_alloc = rs->sbuf_size;
	rs->sbuf = mmap(NULL, rs->sbuf_alloc, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rs->sbuf == MAP_FAILED) {
		rs->sbuf = NULL;
		return cma_err(ENOMEM);
	}
	rs->dmsg = calloc(rs->rq_size + 1u, sizeof(*rs->dmsg));
	rs->sfree = calloc(rs->sq_size, sizeof(*rs->sfree));
	if (!rs->dmsg || !rs->sfree)
		return cma_err(ENOMEM);
	for (int i = 0; i < rs->sq_size; i++)
		rs->sfree[i] = (uint16_t)i;
	rs->nsfree = rs->sq_size;
	rs->sqe_avail = rs->sq_size;
	rs->rqe_avail = rs->rq_size;
	rs->state = rs_readable | rs_writable;
	return 0;
}

static void ds_free_qp(struct ds_qp *qp)
{
	if (qp->cm_id) {
		if (qp->cm_id->qp)
			rdma_destroy_qp(qp->cm_id);
		rdma_destroy_id(qp->cm_id);
	}
	if (qp->smr)
		ibv_dereg_mr(qp->smr);
	if (qp->rmr)
		ibv_dereg_mr(qp->rmr);
	if (qp->rbuf)
		munmap(qp->rbuf, qp->rbuf_len);
	free(qp);
}

void ds_free(struct rsocket *rs)
{
	while (rs->dests) {
		struct ds_dest *d = rs->dests;

		rs->dests = d->next;
		if (d->ah)
			ibv_destroy_ah(d->ah);
		free(d);
	}
	while (rs->qp_list) {
		struct ds_qp *qp = rs->qp_list;

		rs->qp_list = qp->next;
		ds_free_qp(qp);
	}
	if (rs->sbuf)
		munmap(rs->sbuf, rs->sbuf_alloc);
	free(rs->dmsg);
	free(rs->sfree);
	if (rs->epfd >= 0)
		close(rs->epfd);
	if (rs->udp_sock >= 0)
		close(rs->udp_sock);
}

static void ds_format_hdr(struct ds_header *h, const struct sockaddr *a)
{
	memset(h, 0, sizeof(*h));
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)a;

		h->version = 4;
		h->length = DS_IPV4_HDR_LEN;
		h->port = sin->sin_port;
		h->addr.ipv4 = sin->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)a;

		h->version = 6;
		h->length = DS_IPV6_HDR_LEN;
		h->port = sin6->sin6_port;
		h->addr.ipv6.flowinfo = sin6->sin6_flowinfo;
		memcpy(h->addr.ipv6.addr, &sin6->sin6_addr, 16);
	}
}

static int ds_post_recv(struct ds_qp *qp, uint32_t off)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)qp->rbuf + qp->rbuf_len - DS_GRH_LEN,
		  .length = DS_GRH_LEN,
		  .lkey = qp->rmr->lkey },
		{ .addr = (uintptr_t)qp->rbuf + off,
		  .length = DS_MSG_SIZE,
		  .lkey = qp->rmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = DS_RECV_ID(off),
				  .sg_list = sge,
				  .num_sge = 2 },
			   *bad;
	int err = ibv_post_recv(qp->cm_id->qp, &wr, &bad);

	return err ? cma_err(err) : 0;
}

/* The address datagrams to dst leave from: the UDP socket's, with the
 * interface address the route picks when it is bound to any. */
static int ds_src_addr(struct rsocket *rs, const struct sockaddr *dst,
		       struct sockaddr_storage *src)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)src;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)src;
	socklen_t len = sizeof(*src);
	uint16_t port;
	int s, ret;

	if (getsockname(rs->udp_sock, (struct sockaddr *)src, &len))
		return -1;
	if (src->ss_family == AF_INET ? !sin->sin_port : !sin6->sin6_port) {
		/* Unbound: bind now, the peer answers to this port. */
		struct sockaddr_storage any = { .ss_family = src->ss_family };

		if (bind(rs->udp_sock, (struct sockaddr *)&any,
			 ds_addrlen((struct sockaddr *)&any)))
			return -1;
		len = sizeof(*src);
		if (getsockname(rs->udp_sock, (struct sockaddr *)src, &len))
			return -1;
	}
	port = src->ss_family == AF_INET ? sin->sin_port : sin6->sin6_port;
	if (src->ss_family == AF_INET
		    ? sin->sin_addr.s_addr != htonl(INADDR_ANY)
		    : memcmp(&sin6->sin6_addr, &in6addr_any, 16))
		return 0;
	/* Straight to the kernel: under an LD_PRELOAD library socket()
	 * would make this probe a datagram rsocket, and route through us
	 * again. */
	s = (int)syscall(SYS_socket, dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC,
			 0);
	if (s < 0)
		return -1;
	ret = connect(s, dst, ds_addrlen(dst));
	len = sizeof(*src);
	if (!ret)
		ret = getsockname(s, (struct sockaddr *)src, &len);
	close(s);
	if (src->ss_family == AF_INET)
		sin->sin_port = port;
	else
		sin6->sin6_port = port;
	return ret;
}

static int ds_create_qp(struct rsocket *rs, const struct sockaddr_storage *src,
			struct ds_qp **out)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_UD, .sq_sig_all = 1 };
	struct epoll_event ev = { .events = EPOLLIN };
	struct ds_qp *qp = calloc(1, sizeof(*qp));
	struct rdma_cm_id *id;
	int err;

	if (!qp)
		return cma_err(ENOMEM);
	qp->src = *src;
	ds_format_hdr(&qp->hdr, (const struct sockaddr *)src);
	if (rdma_create_id(NULL, &qp->cm_id, qp, RDMA_PS_UDP))
		goto err;
	id = qp->cm_id;
	if (rdma_bind_addr(id, (struct sockaddr *)src))
		goto err;
	/* A loopback address is no device's (as in the kernel): the one
	 * reaching it serves the datagrams (softrdma0, on lo). */
	if (!id->verbs && rdma_resolve_addr(id, (struct sockaddr *)src,
					    (struct sockaddr *)src, 2000))
		goto err;
	if (!id->verbs) {
		errno = ENODEV;
		goto err;
	}
	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (!id->recv_cq_channel)
		goto err;
	id->recv_cq = ibv_create_cq(id->verbs, rs->sq_size + rs->rq_size, id,
				    id->recv_cq_channel, 0);
	if (!id->recv_cq)
		goto err;
	id->send_cq = id->recv_cq;
	id->send_cq_channel = id->recv_cq_channel;
	fcntl(id->recv_cq_channel->fd, F_SETFL, O_NONBLOCK);
	a.send_cq = a.recv_cq = id->recv_cq;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->rq_size;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 2;
	a.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(id, NULL, &a))
		goto err;
	if (a.cap.max_inline_data < rs->sq_inline)
		rs->sq_inline = (uint16_t)a.cap.max_inline_data;
	qp->rbuf_len = rs->rbuf_size + DS_GRH_LEN;
	qp->rbuf = mmap(NULL, qp->rbuf_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (qp->rbuf == MAP_FAILED) {
		qp->rbuf = NULL;
		errno = ENOMEM;
		goto err;
	}
	qp->rmr = ibv_reg_mr(id->pd, qp->rbuf, qp->rbuf_len,
			     IBV_ACCESS_LOCAL_WRITE);
	qp->smr = ibv_reg_mr(id->pd, rs->sbuf, rs->sbuf_alloc,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!qp->rmr || !qp->smr)
		goto err;
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (ds_post_recv(qp, i * DS_MSG_SIZE))
			goto err;
	ev.data.ptr = qp;
	if (epoll_ctl(rs->epfd, EPOLL_CTL_ADD, id->recv_cq_channel->fd, &ev))
		goto err;
	qp->next = rs->qp_list;
	rs->qp_list = qp;
	*out = qp;
	return 0;
err:
	err = errno;
	ds_free_qp(qp);
	return cma_err(err);
}

static int ds_get_dest(struct rsocket *rs, const struct sockaddr *addr,
		       struct ds_dest **out)
{
	struct sockaddr_storage src;
	struct ds_dest *d;
	struct ds_qp *qp;

	for (d = rs->dests; d; d = d->next)
		if (ds_same_addr((struct sockaddr *)&d->addr, addr))
			goto found;
	if (ds_src_addr(rs, addr, &src))
		return -1;
	for (qp = rs->qp_list; qp; qp = qp->next)
		if (ds_same_addr((struct sockaddr *)&qp->src,
				 (struct sockaddr *)&src))
			break;
	if (!qp && ds_create_qp(rs, &src, &qp))
		return -1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return cma_err(ENOMEM);
	memcpy(&d->addr, addr, ds_addrlen(addr));
	d->qp = qp;
	d->next = rs->dests;
	rs->dests = d;
found:
	*out = d;
	return 0;
}

/* An address handle towards the peer's address, resolved as rdma_cm
 * resolves any destination. */
static void ds_create_ah(struct ds_dest *d, uint32_t qpn)
{
	struct rdma_cm_id *qid = d->qp->cm_id, *id;
	struct sockaddr_storage src = d->qp->src;
	struct ibv_ah_attr attr;
	struct ibv_port_attr pa;
	struct ibv_sa_path_rec *pr;

	if (d->ah) {
		ibv_destroy_ah(d->ah);
		d->ah = NULL;
	}
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP))
		return;
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&d->addr, 2000) ||
	    rdma_resolve_route(id, 2000) || !id->route.num_paths)
		goto out;
	pr = id->route.path_rec;
	memset(&attr, 0, sizeof(attr));
	/* RoCE needs the GRH even next door. */
	if (pr->hop_limit > 1 ||
	    (!ibv_query_port(qid->verbs, qid->port_num, &pa) &&
	     pa.link_layer == IBV_LINK_LAYER_ETHERNET)) {
		union ibv_gid gid;

		attr.is_global = 1;
		attr.grh.dgid = pr->dgid;
		attr.grh.flow_label = be32toh(pr->flow_label);
		attr.grh.hop_limit = pr->hop_limit ? pr->hop_limit : 64;
		attr.grh.traffic_class = pr->traffic_class;
		for (int i = 0; i < 16; i++) {
			if (!ibv_query_gid(qid->verbs, qid->port_num, i,
					   &gid) &&
			    !memcmp(&gid, &pr->sgid, sizeof(gid))) {
				attr.grh.sgid_index = (uint8_t)i;
				break;
			}
		}
	}
	attr.dlid = be16toh(pr->dlid);
	attr.sl = pr->sl;
	attr.static_rate = pr->rate;
	attr.port_num = qid->port_num;
	d->ah = ibv_create_ah(qid->pd, &attr);
	d->qpn = qpn;
out:
	rdma_destroy_id(id);
}

static ssize_t ds_send_udp(struct rsocket *rs, struct ds_dest *d,
			   const void *buf, size_t len, int flags, uint8_t op)
{
	struct ds_udp_header h = { .tag = htobe32(DS_UDP_TAG), .op = op };
	struct iovec iov[2];
	struct msghdr msg = { .msg_name = &d->addr,
			      .msg_namelen = ds_addrlen((void *)&d->addr),
			      .msg_iov = iov,
			      .msg_iovlen = len ? 2 : 1 };
	ssize_t ret;

	h.version = d->qp->hdr.version;
	h.qpn = htobe32(d->qp->cm_id->qp->qp_num & 0xFFFFFF);
	if (h.version == 4) {
		h.length = DS_UDP_IPV4_HDR_LEN;
		h.addr.ipv4 = d->qp->hdr.addr.ipv4;
	} else {
		h.length = DS_UDP_IPV6_HDR_LEN;
		memcpy(h.addr.ipv6, d->qp->hdr.addr.ipv6.addr, 16);
	}
	iov[0] = (struct iovec){ &h, h.length };
	iov[1] = (struct iovec){ (void *)buf, len };
	ret = sendmsg(rs->udp_sock, &msg, flags & MSG_DONTWAIT);
	return ret < 0 ? ret : ret - h.length;
}

/* Completions of every QP: datagrams that fit are queued, sends free
 * their slots. */
static void ds_poll_cqs(struct rsocket *rs)
{
	for (struct ds_qp *qp = rs->qp_list; qp; qp = qp->next) {
		struct ibv_wc wc[16];
		int n;

		while ((n = ibv_poll_cq(qp->cm_id->recv_cq, 16, wc)) > 0) {
			for (int i = 0; i < n; i++) {
				uint32_t off = (uint32_t)wc[i].wr_id;
				struct ds_header *h;

				if (!(wc[i].wr_id & RS_WR_ID_RECV)) {
					rs->sfree[rs->nsfree++] = (uint16_t)off;
					rs->sqe_avail++;
					continue;
				}
				h = (struct ds_header *)(qp->rbuf + off);
				if (!rs->rqe_avail ||
				    wc[i].status != IBV_WC_SUCCESS ||
				    wc[i].byte_len <
					    DS_GRH_LEN + DS_IPV4_HDR_LEN ||
				    !((h->version == 4 &&
				       h->length == DS_IPV4_HDR_LEN) ||
				      (h->version == 6 &&
				       h->length == DS_IPV6_HDR_LEN)) ||
				    wc[i].byte_len - DS_GRH_LEN < h->length) {
					ds_post_recv(qp, off);
					continue;
				}
				rs->rqe_avail--;
				rs->dmsg[rs->rmsg_tail] = (struct ds_rmsg){
					qp, off, wc[i].byte_len - DS_GRH_LEN
				};
				if (++rs->rmsg_tail == rs->rq_size + 1)
					rs->rmsg_tail = 0;
			}
		}
	}
}

/*
 * One UDP datagram, if any: learn the sender's QPN (and answer with ours
 * when it carried data).  1 and the payload in buf when it carried data,
 * 0 when it did not, -1 with EAGAIN when none waits.
 */
static int ds_udp_recv(struct rsocket *rs, void *buf, size_t *len,
		       struct sockaddr_storage *from, bool peek_only)
{
	uint8_t pkt[DS_MSG_SIZE + DS_UDP_IPV6_HDR_LEN];
	struct ds_udp_header *h = (void *)pkt;
	socklen_t flen = sizeof(*from);
	struct ds_dest *d;
	ssize_t n;
	uint32_t qpn;

	n = recvfrom(rs->udp_sock, pkt, sizeof(pkt),
		     MSG_DONTWAIT | (peek_only ? MSG_PEEK : 0),
		     (struct sockaddr *)from, &flen);
	if (n < 0)
		return -1;
	if (n < DS_UDP_IPV4_HDR_LEN || h->tag != htobe32(DS_UDP_TAG) ||
	    !((h->version == 4 && from->ss_family == AF_INET &&
	       h->length == DS_UDP_IPV4_HDR_LEN) ||
	      (h->version == 6 && from->ss_family == AF_INET6 &&
	       h->length == DS_UDP_IPV6_HDR_LEN)) ||
	    n < h->length) {
		if (peek_only) /* not ours: drop it */
			recv(rs->udp_sock, pkt, 1, MSG_DONTWAIT);
		return 0;
	}
	if (peek_only && h->op == RS_OP_DATA)
		return 1;
	if (peek_only)
		recv(rs->udp_sock, pkt, 1, MSG_DONTWAIT);
	qpn = be32toh(h->qpn) & 0xFFFFFF;
	if (ds_get_dest(rs, (struct sockaddr *)from, &d))
		return 0;
	if (h->op == RS_OP_DATA)
		ds_send_udp(rs, d, NULL, 0, 0, RS_OP_CTRL);
	if (!d->ah || d->qpn != qpn)
		ds_create_ah(d, qpn);
	if (h->op != RS_OP_DATA)
		return 0;
	n -= h->length;
	if ((size_t)n < *len)
		*len = (size_t)n;
	memcpy(buf, pkt + h->length, *len);
	return 1;
}

/* Answer the UDP messages that carry no data; true if data waits. */
static bool ds_udp_pending(struct rsocket *rs)
{
	struct sockaddr_storage from;
	size_t len = 0;
	int r;

	while ((r = ds_udp_recv(rs, NULL, &len, &from, true)) == 0)
		;
	return r == 1;
}

static bool ds_have_rdata(struct rsocket *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

int ds_poll_arm(struct rsocket *rs)
{
	for (struct ds_qp *qp = rs->qp_list; qp; qp = qp->next) {
		if (!qp->cq_armed) {
			ibv_req_notify_cq(qp->cm_id->recv_cq, 0);
			qp->cq_armed = true;
		}
	}
	return rs->epfd;
}

void ds_poll_wake(struct rsocket *rs)
{
	for (struct ds_qp *qp = rs->qp_list; qp; qp = qp->next) {
		struct ibv_cq *cq;
		void *ctx;

		if (qp->cq_armed &&
		    !ibv_get_cq_event(qp->cm_id->recv_cq_channel, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			qp->cq_armed = false;
		}
	}
}

short ds_poll_rs(struct rsocket *rs, short events)
{
	short revents = 0;

	pthread_mutex_lock(&rs->cq_lock);
	ds_poll_cqs(rs);
	if ((events & POLLIN) && (ds_have_rdata(rs) || ds_udp_pending(rs)))
		revents |= POLLIN;
	if ((events & POLLOUT) && (rs->state == rs_init || rs->sqe_avail))
		revents |= POLLOUT;
	pthread_mutex_unlock(&rs->cq_lock);
	return revents;
}

/* Sleep until a CQ or the UDP socket has something; called with cq_lock,
 * which others may take meanwhile. */
static void ds_wait(struct rsocket *rs)
{
	struct epoll_event ev;
	int n;

	ds_poll_arm(rs);
	ds_poll_cqs(rs);
	if (ds_have_rdata(rs) || rs->sqe_avail)
		return;
	pthread_mutex_unlock(&rs->cq_lock);
	n = epoll_wait(rs->epfd, &ev, 1, 500);
	pthread_mutex_lock(&rs->cq_lock);
	if (n > 0)
		ds_poll_wake(rs);
}

int ds_bind(struct rsocket *rs, const struct sockaddr *addr, socklen_t addrlen)
{
	if (ds_init_ep(rs))
		return -1;
	return bind(rs->udp_sock, addr, addrlen);
}

int ds_connect(struct rsocket *rs, const struct sockaddr *addr,
	       socklen_t addrlen)
{
	int ret;

	if (ds_init_ep(rs))
		return -1;
	pthread_mutex_lock(&rs->slock);
	ret = connect(rs->udp_sock, addr, addrlen);
	if (!ret)
		ret = ds_get_dest(rs, addr, &rs->conn_dest);
	pthread_mutex_unlock(&rs->slock);
	return ret;
}

static int ds_post_send(struct rsocket *rs, struct ds_dest *d, const void *buf,
			size_t len)
{
	uint16_t slot = rs->sfree[--rs->nsfree];
	uint8_t *msg = rs->sbuf + (size_t)slot * DS_MSG_SIZE;
	struct ibv_sge sge = { .addr = (uintptr_t)msg,
			       .length = (uint32_t)(d->qp->hdr.length + len),
			       .lkey = d->qp->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND },
			   *bad;
	int err;

	memcpy(msg, &d->qp->hdr, d->qp->hdr.length);
	memcpy(msg + d->qp->hdr.length, buf, len);
	if (sge.length <= rs->sq_inline)
		wr.send_flags = IBV_SEND_INLINE;
	wr.wr.ud.ah = d->ah;
	wr.wr.ud.remote_qpn = d->qpn;
	wr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
	rs->sqe_avail--;
	err = ibv_post_send(d->qp->cm_id->qp, &wr, &bad);
	if (err) {
		rs->sfree[rs->nsfree++] = slot;
		rs->sqe_avail++;
		return cma_err(err);
	}
	return 0;
}

ssize_t ds_sendto(struct rsocket *rs, const void *buf, size_t len, int flags,
		  const struct sockaddr *addr, socklen_t addrlen)
{
	struct ds_dest *d;
	ssize_t ret;

	if (ds_init_ep(rs))
		return -1;
	if (addr &&
	    (addrlen < sizeof(struct sockaddr_in) ||
	     (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)))
		return cma_err(EINVAL);
	pthread_mutex_lock(&rs->slock);
	if (!addr) {
		d = rs->conn_dest;
		ret = d ? 0 : cma_err(EDESTADDRREQ);
	} else {
		ret = ds_get_dest(rs, addr, &d);
	}
	if (ret)
		goto out;
	if (len + DS_IPV6_HDR_LEN > DS_MSG_SIZE) {
		ret = cma_err(EMSGSIZE);
		goto out;
	}
	if (!d->ah) {
		/* A reply with the peer's QPN may be waiting. */
		pthread_mutex_lock(&rs->cq_lock);
		ds_udp_pending(rs);
		pthread_mutex_unlock(&rs->cq_lock);
	}
	if (!d->ah) {
		ret = ds_send_udp(rs, d, buf, len, flags, RS_OP_DATA);
		goto out;
	}
	pthread_mutex_lock(&rs->cq_lock);
	for (;;) {
		ds_poll_cqs(rs);
		if (rs->sqe_avail)
			break;
		if (rs_nonblocking(rs, flags)) {
			pthread_mutex_unlock(&rs->cq_lock);
			ret = cma_err(EWOULDBLOCK);
			goto out;
		}
		ds_wait(rs);
	}
	ret = ds_post_send(rs, d, buf, len);
	pthread_mutex_unlock(&rs->cq_lock);
	if (!ret)
		ret = (ssize_t)len;
out:
	pthread_mutex_unlock(&rs->slock);
	return ret;
}

static void ds_set_src(struct sockaddr *addr, socklen_t *addrlen,
		       const struct ds_header *h)
{
	struct sockaddr_storage sa;
	socklen_t len;

	memset(&sa, 0, sizeof(sa));
	if (h->version == 4) {
		struct sockaddr_in *sin = (void *)&sa;

		sin->sin_family = AF_INET;
		sin->sin_port = h->port;
		sin->sin_addr.s_addr = h->addr.ipv4;
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)&sa;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = h->port;
		sin6->sin6_flowinfo = h->addr.ipv6.flowinfo;
		memcpy(&sin6->sin6_addr, h->addr.ipv6.addr, 16);
		len = sizeof(*sin6);
	}
	memcpy(addr, &sa, *addrlen < len ? *addrlen : len);
	*addrlen = len;
}

static void ds_set_from(struct sockaddr *addr, socklen_t *addrlen,
			const struct sockaddr_storage *from)
{
	socklen_t len = ds_addrlen((const struct sockaddr *)from);

	memcpy(addr, from, *addrlen < len ? *addrlen : len);
	*addrlen = len;
}

ssize_t ds_recvfrom(struct rsocket *rs, void *buf, size_t len, int flags,
		    struct sockaddr *src, socklen_t *srclen)
{
	struct sockaddr_storage from;
	ssize_t ret;

	if (!(rs->state & rs_readable))
		return cma_err(EINVAL);
	pthread_mutex_lock(&rs->rlock);
	pthread_mutex_lock(&rs->cq_lock);
	for (;;) {
		size_t n = len;
		int r;

		ds_poll_cqs(rs);
		if (ds_have_rdata(rs))
			break;
		r = ds_udp_recv(rs, buf, &n, &from, false);
		if (r == 1) {
			if (src && srclen)
				ds_set_from(src, srclen, &from);
			ret = (ssize_t)n;
			goto out;
		}
		if (r == 0)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			ret = -1;
			goto out;
		}
		if (rs_nonblocking(rs, flags)) {
			ret = cma_err(EWOULDBLOCK);
			goto out;
		}
		ds_poll_arm(rs);
		ds_poll_cqs(rs);
		if (ds_have_rdata(rs))
			break;
		{
			struct epoll_event ev;
			int woke;

			/* Senders may poll the CQs meanwhile. */
			pthread_mutex_unlock(&rs->cq_lock);
			woke = epoll_wait(rs->epfd, &ev, 1, 500);
			pthread_mutex_lock(&rs->cq_lock);
			if (woke > 0)
				ds_poll_wake(rs);
		}
	}
	{
		struct ds_rmsg *m = &rs->dmsg[rs->rmsg_head];
		struct ds_header *h = (void *)(m->qp->rbuf + m->offset);
		size_t avail = m->length - h->length;

		if (len > avail)
			len = avail;
		memcpy(buf, (uint8_t *)h + h->length, len);
		if (src && srclen)
			ds_set_src(src, srclen, h);
		if (!(flags & MSG_PEEK)) {
			ds_post_recv(m->qp, m->offset);
			if (++rs->rmsg_head == rs->rq_size + 1)
				rs->rmsg_head = 0;
			rs->rqe_avail++;
		}
		ret = (ssize_t)len;
	}
out:
	pthread_mutex_unlock(&rs->cq_lock);
	pthread_mutex_unlock(&rs->rlock);
	return ret;
}
