/* SPDX-License-Identifier: MIT */
/*
 * The data path of stream rsockets: posting, the completion queue (what
 * the peer wrote, what our sends freed), receive credits and SGL updates,
 * and send / receive over the staging ring and the receive buffer.
 */
#include <poll.h>
#include <string.h>
#include <time.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

static int post_send(struct rsocket *rs, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(rs->cm_id->qp, wr, &bad);

	return err ? cma_err(err) : 0;
}

int rs_post_recv(struct rsocket *rs)
{
	struct ibv_recv_wr wr = { .wr_id = RS_WR_ID_RECV }, *bad;
	int err = ibv_post_recv(rs->cm_id->qp, &wr, &bad);

	return err ? cma_err(err) : 0;
}

/* A message with no payload: a zero-length write carrying the immediate. */
int rs_post_msg(struct rsocket *rs, uint32_t msg)
{
	struct ibv_send_wr wr = {
		.wr_id = msg,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = htobe32(msg),
	};

	return post_send(rs, &wr);
}

int rs_post_write_msg(struct rsocket *rs, struct ibv_sge *sgl, int nsge,
		      uint32_t msg, int flags, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = msg,
		.sg_list = sgl,
		.num_sge = nsge,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = (unsigned int)flags,
		.imm_data = htobe32(msg),
	};

	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	return post_send(rs, &wr);
}

int rs_post_write(struct rsocket *rs, struct ibv_sge *sgl, int nsge,
		  uint32_t wr_data, int flags, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_data,
		.sg_list = sgl,
		.num_sge = nsge,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = (unsigned int)flags,
	};

	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	return post_send(rs, &wr);
}

static uint32_t rs_sbuf_left(struct rsocket *rs)
{
	return (uint32_t)((uintptr_t)(rs->sbuf + rs->sbuf_size) -
			  rs->ssgl[0].addr);
}

/* An iovec walked as one byte stream. */
struct rs_iov_cur {
	const struct iovec *iov;
	size_t off;
};

static void copy_from_iov(uint8_t *dst, struct rs_iov_cur *c, size_t len)
{
	while (len) {
		size_t n = c->iov->iov_len - c->off;

		if (n > len)
			n = len;
		memcpy(dst, (const uint8_t *)c->iov->iov_base + c->off, n);
		dst += n;
		len -= n;
		c->off += n;
		if (c->off == c->iov->iov_len) {
			c->iov++;
			c->off = 0;
		}
	}
}

static void copy_to_iov(struct rs_iov_cur *c, const uint8_t *src, size_t len)
{
	while (len) {
		size_t n = c->iov->iov_len - c->off;

		if (n > len)
			n = len;
		memcpy((uint8_t *)c->iov->iov_base + c->off, src, n);
		src += n;
		len -= n;
		c->off += n;
		if (c->off == c->iov->iov_len) {
			c->iov++;
			c->off = 0;
		}
	}
}

/* Copy len bytes into the send ring (wrapping: two SGEs) and describe
 * them in sgl; the ring position moves on. */
static int rs_stage_iov(struct rsocket *rs, struct rs_iov_cur *c, uint32_t len,
			struct ibv_sge *sgl)
{
	uint32_t left = rs_sbuf_left(rs);

	sgl[0].lkey = sgl[1].lkey = rs->smr->lkey;
	sgl[0].addr = rs->ssgl[0].addr;
	if (len <= left) {
		copy_from_iov((uint8_t *)(uintptr_t)sgl[0].addr, c, len);
		sgl[0].length = len;
		rs->ssgl[0].addr = len < left ? rs->ssgl[0].addr + len
					      : (uintptr_t)rs->sbuf;
		return 1;
	}
	copy_from_iov((uint8_t *)(uintptr_t)sgl[0].addr, c, left);
	sgl[0].length = left;
	sgl[1].addr = (uintptr_t)rs->sbuf;
	sgl[1].length = len - left;
	copy_from_iov(rs->sbuf, c, len - left);
	rs->ssgl[0].addr = (uintptr_t)rs->sbuf + (len - left);
	return 2;
}

int rs_stage(struct rsocket *rs, const void *buf, uint32_t len,
	     struct ibv_sge *sgl)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	struct rs_iov_cur c = { .iov = &v };

	return rs_stage_iov(rs, &c, len, sgl);
}

/* The target entry is advanced before posting: the peer may replace it
 * as soon as the data lands. */
static int rs_write_data(struct rsocket *rs, struct ibv_sge *sgl, int nsge,
			 uint32_t len, int flags)
{
	volatile struct rs_sge *t = &rs->target_sgl[rs->target_sge];
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;

	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= (int)len;
	t->addr = addr + len;
	t->length = t->length - len;
	if (!t->length && ++rs->target_sge == RS_SGL_SIZE)
		rs->target_sge = 0;
	return rs_post_write_msg(rs, sgl, nsge, rs_msg_set(RS_OP_DATA, len),
				 flags, addr, rkey);
}

bool rs_ctrl_avail(struct rsocket *rs)
{
	return rs->ctrl_seqno != rs->ctrl_max_seqno;
}

/* Grant credits: a new half of the receive buffer when one is free, or
 * else just receive credits. */
static void rs_send_credits(struct rsocket *rs)
{
	uint32_t half = rs->rbuf_size >> 1;
	uint32_t msg =
		rs_msg_set(RS_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size));
	struct rs_sge sge;
	struct ibv_sge ib;
	int flags;

	rs->ctrl_seqno++;
	rs->rseq_comp = rs->rseq_no + (rs->rq_size >> 1);
	if (rs->rbuf_bytes_avail < (int)half) {
		rs_post_msg(rs, msg);
		return;
	}
	sge.addr = (uintptr_t)&rs->rbuf[rs->rbuf_free_offset];
	sge.key = rs->rmr->rkey;
	sge.length = half;
	if (rs->opts & RS_OPT_SWAP_SGL) {
		sge.addr = __builtin_bswap64(sge.addr);
		sge.key = __builtin_bswap32(sge.key);
		sge.length = __builtin_bswap32(sge.length);
	}
	if (rs->sq_inline < sizeof(sge)) {
		uint8_t *slot =
			rs->sbuf + rs->sbuf_size +
			sizeof(sge) * (rs->ctrl_seqno & (RS_QP_CTRL_SIZE - 1));

		memcpy(slot, &sge, sizeof(sge));
		ib.addr = (uintptr_t)slot;
		ib.lkey = rs->smr->lkey;
		flags = 0;
	} else {
		ib.addr = (uintptr_t)&sge;
		ib.lkey = 0;
		flags = IBV_SEND_INLINE;
	}
	ib.length = sizeof(sge);
	rs_post_write_msg(rs, &ib, 1, msg, flags,
			  rs->remote_sgl.addr +
				  (uint64_t)rs->remote_sge * sizeof(sge),
			  rs->remote_sgl.key);
	rs->rbuf_bytes_avail -= (int)half;
	rs->rbuf_free_offset += (int)half;
	if (rs->rbuf_free_offset >= (int)rs->rbuf_size)
		rs->rbuf_free_offset = 0;
	if (++rs->remote_sge == (int)rs->remote_sgl.length)
		rs->remote_sge = 0;
}

static bool rs_give_credits(struct rsocket *rs)
{
	return (rs->rbuf_bytes_avail >= (int)(rs->rbuf_size >> 1) ||
		(int16_t)(rs->rseq_no - rs->rseq_comp) >= 0) &&
	       rs_ctrl_avail(rs) && (rs->state & rs_connected);
}

static void rs_update_credits(struct rsocket *rs)
{
	if (rs_give_credits(rs))
		rs_send_credits(rs);
}

static void rs_recv_msg(struct rsocket *rs, uint32_t msg)
{
	switch (rs_msg_op(msg)) {
	case RS_OP_SGL:
		rs->sseq_comp = (uint16_t)rs_msg_data(msg);
		break;
	case RS_OP_IOMAP_SGL:
		break; /* the table entry is in place; nothing to do */
	case RS_OP_CTRL:
		if (rs_msg_data(msg) == RS_CTRL_DISCONNECT) {
			rs->state = rs_disconnected;
		} else if (rs_msg_data(msg) == RS_CTRL_SHUTDOWN) {
			if (rs->state & rs_writable)
				rs->state &= ~rs_readable;
			else
				rs->state = rs_disconnected;
		}
		break;
	case RS_OP_WRITE:
		break; /* never sent with an immediate */
	default:
		rs->rmsg[rs->rmsg_tail].op = rs_msg_op(msg);
		rs->rmsg[rs->rmsg_tail].data = rs_msg_data(msg);
		if (++rs->rmsg_tail == rs->rq_size + 1)
			rs->rmsg_tail = 0;
		break;
	}
}

static void rs_send_done(struct rsocket *rs, const struct ibv_wc *wc)
{
	uint32_t msg = (uint32_t)wc->wr_id;

	switch (rs_msg_op(msg)) {
	case RS_OP_SGL:
		rs->ctrl_max_seqno++;
		break;
	case RS_OP_CTRL:
		rs->ctrl_max_seqno++;
		if (rs_msg_data(msg) == RS_CTRL_DISCONNECT)
			rs->state = rs_disconnected;
		break;
	case RS_OP_IOMAP_SGL:
		rs->sqe_avail++;
		rs->sbuf_bytes_avail += sizeof(struct rs_iomap);
		break;
	default:
		rs->sqe_avail++;
		rs->sbuf_bytes_avail += (int)rs_msg_data(msg);
		break;
	}
	if (wc->status != IBV_WC_SUCCESS && (rs->state & rs_connected)) {
		rs->state = rs_error;
		rs->err = EIO;
	}
}

static int rs_poll_cq(struct rsocket *rs)
{
	struct ibv_wc wc[16];
	int n, rcnt = 0, ret = 0;

	while ((n = ibv_poll_cq(rs->cm_id->recv_cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (!(wc[i].wr_id & RS_WR_ID_RECV)) {
				rs_send_done(rs, &wc[i]);
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;
			rcnt++;
			if (wc[i].wc_flags & IBV_WC_WITH_IMM)
				rs_recv_msg(rs, be32toh(wc[i].imm_data));
		}
	}
	if (n < 0) {
		rs->state = rs_error;
		rs->err = EIO;
		return cma_err(EIO);
	}
	if (rs->state & rs_connected) {
		while (!ret && rcnt--)
			ret = rs_post_recv(rs);
		if (ret) {
			rs->state = rs_error;
			rs->err = errno;
		}
	}
	return ret;
}

int rs_get_cq_event(struct rsocket *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!rs->cq_armed)
		return 0;
	if (ibv_get_cq_event(rs->cm_id->recv_cq_channel, &cq, &ctx)) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		rs->state = rs_error;
		rs->err = errno;
		return -1;
	}
	rs->cq_armed = 0;
	if (++rs->unack_cqe >= (unsigned int)(rs->sq_size + rs->rq_size)) {
		ibv_ack_cq_events(rs->cm_id->recv_cq, rs->unack_cqe);
		rs->unack_cqe = 0;
	}
	return 0;
}

/* Sleep until the CQ fires or a CM event comes; true if the latter. */
static bool rs_wait(struct rsocket *rs)
{
	struct pollfd p[2] = {
		{ .fd = rs->cm_id->recv_cq_channel->fd, .events = POLLIN },
		{ .fd = rs->cm_id->channel->fd, .events = POLLIN },
	};

	if (poll(p, 2, -1) <= 0)
		return false;
	if (p[0].revents)
		rs_get_cq_event(rs);
	return p[1].revents != 0;
}

/*
 * Poll the CQ until test() holds.  rsend and rrecv both come here and must
 * not starve each other (a sender waiting for credits must not keep the
 * receiver from draining): cq_lock covers polling, cq_wait_lock sleeping.
 */
int rs_process_cq(struct rsocket *rs, bool nonblock, rs_test_fn test)
{
	int ret;

	pthread_mutex_lock(&rs->cq_lock);
	do {
		rs_update_credits(rs);
		ret = rs_poll_cq(rs);
		if (test(rs)) {
			ret = 0;
			break;
		} else if (ret) {
			break;
		} else if (nonblock) {
			ret = cma_err(EWOULDBLOCK);
		} else if (!rs->cq_armed) {
			ibv_req_notify_cq(rs->cm_id->recv_cq, 0);
			rs->cq_armed = 1;
		} else {
			bool cm;

			rs_update_credits(rs);
			pthread_mutex_lock(&rs->cq_wait_lock);
			pthread_mutex_unlock(&rs->cq_lock);
			cm = rs_wait(rs);
			pthread_mutex_unlock(&rs->cq_wait_lock);
			pthread_mutex_lock(&rs->cq_lock);
			if (cm)
				rs_check_cm(rs);
		}
	} while (!ret);
	rs_update_credits(rs);
	pthread_mutex_unlock(&rs->cq_lock);
	return ret;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Spin briefly before sleeping: the answer is often microseconds away. */
int rs_get_comp(struct rsocket *rs, bool nonblock, rs_test_fn test)
{
	uint64_t start = 0;

	for (;;) {
		int ret = rs_process_cq(rs, true, test);

		if (!ret || nonblock || errno != EWOULDBLOCK)
			return ret;
		if (!start)
			start = now_us();
		else if (now_us() - start > RS_POLL_SPIN_US)
			break;
	}
	return rs_process_cq(rs, false, test);
}

bool rs_can_send(struct rsocket *rs)
{
	return rs->sqe_avail && rs->sbuf_bytes_avail >= RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp &&
	       rs->target_sgl[rs->target_sge].length != 0;
}

bool rs_conn_can_send(struct rsocket *rs)
{
	return rs_can_send(rs) || !(rs->state & rs_writable);
}

int rs_wait_send(struct rsocket *rs, int flags)
{
	int ret;

	if (rs_can_send(rs))
		return 0;
	ret = rs_get_comp(rs, rs_nonblocking(rs, flags), rs_conn_can_send);
	if (ret)
		return ret;
	return (rs->state & rs_writable) ? 0 : cma_err(ECONNRESET);
}

uint32_t rs_next_xfer(struct rsocket *rs, uint32_t *olen, size_t left)
{
	uint32_t xfer;

	/* Small first, growing: the peer starts on the data early. */
	if (*olen < left) {
		xfer = *olen;
		if (*olen < RS_MAX_TRANSFER)
			*olen <<= 1;
	} else {
		xfer = (uint32_t)left;
	}
	if (xfer > (uint32_t)rs->sbuf_bytes_avail)
		xfer = (uint32_t)rs->sbuf_bytes_avail;
	return xfer;
}

bool rs_conn_can_send_ctrl(struct rsocket *rs)
{
	return rs_ctrl_avail(rs) || !(rs->state & rs_connected);
}

bool rs_have_rdata(struct rsocket *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

bool rs_conn_have_rdata(struct rsocket *rs)
{
	return rs_have_rdata(rs) || !(rs->state & rs_readable);
}

bool rs_conn_all_sends_done(struct rsocket *rs)
{
	return ((int)rs->ctrl_max_seqno - (int)rs->ctrl_seqno) +
			       rs->sqe_avail ==
		       rs->sq_size ||
	       !(rs->state & rs_connected);
}

/* The error a send on a socket that cannot send gets. */
static int rs_send_state_err(struct rsocket *rs)
{
	if (rs->state & (rs_disconnected | rs_error))
		return ECONNRESET;
	if (rs->state & rs_connected)
		return EPIPE;
	return ENOTCONN;
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t len = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return len;
}

ssize_t rs_sendv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		 int flags)
{
	struct rs_iov_cur cur = { .iov = iov };
	size_t len = iov_total(iov, iovcnt), left = len;
	uint32_t xfer, olen = RS_OLAP_START_SIZE;
	struct ibv_sge sgl[2];
	int ret = 0;

	if (rs->state & rs_opening) {
		ret = rs_do_connect(rs);
		if (ret) {
			if (errno == EINPROGRESS)
				errno = EAGAIN;
			return ret;
		}
	}
	if (!(rs->state & rs_writable))
		return cma_err(rs_send_state_err(rs));

	pthread_mutex_lock(&rs->slock);
	if (rs->iomap_pending) {
		ret = rs_send_iomaps(rs, flags);
		if (ret)
			goto out;
	}
	for (; left; left -= xfer) {
		int nsge;

		ret = rs_wait_send(rs, flags);
		if (ret)
			break;
		xfer = rs_next_xfer(rs, &olen, left);
		if (xfer > rs->target_sgl[rs->target_sge].length)
			xfer = rs->target_sgl[rs->target_sge].length;
		nsge = rs_stage_iov(rs, &cur, xfer, sgl);
		ret = rs_write_data(rs, sgl, nsge, xfer,
				    xfer <= rs->sq_inline ? IBV_SEND_INLINE
							  : 0);
		if (ret)
			break;
	}
out:
	pthread_mutex_unlock(&rs->slock);
	return (ret && left == len) ? ret : (ssize_t)(len - left);
}

/* Copy up to len queued bytes out; with consume, free them too. */
static size_t rs_copy_out(struct rsocket *rs, struct rs_iov_cur *c, size_t len,
			  bool consume)
{
	int head = rs->rmsg_head, off = rs->rbuf_offset;
	size_t left = len;

	while (left && head != rs->rmsg_tail) {
		uint32_t n = rs->rmsg[head].data, end;

		if (left < n) {
			n = (uint32_t)left;
			if (consume)
				rs->rmsg[head].data -= n;
		} else {
			if (consume)
				rs->rseq_no++;
			if (++head == rs->rq_size + 1)
				head = 0;
		}
		left -= n;
		end = rs->rbuf_size - (uint32_t)off;
		if (n > end) {
			copy_to_iov(c, &rs->rbuf[off], end);
			n -= end;
			off = 0;
			if (consume)
				rs->rbuf_bytes_avail += (int)end;
		}
		copy_to_iov(c, &rs->rbuf[off], n);
		off += (int)n;
		if (consume)
			rs->rbuf_bytes_avail += (int)n;
	}
	if (consume) {
		rs->rmsg_head = head;
		rs->rbuf_offset = off;
	}
	return len - left;
}

/* Queued data is still read after the peer has gone. */
ssize_t rs_recvv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		 int flags)
{
	struct rs_iov_cur cur = { .iov = iov };
	size_t len = iov_total(iov, iovcnt), left = len;
	int ret = 0;

	if (rs->state & rs_opening) {
		ret = rs_do_connect(rs);
		if (ret) {
			if (errno == EINPROGRESS)
				errno = EAGAIN;
			return ret;
		}
	}
	if (!rs->cm_id->qp || rs->state == rs_connect_error)
		return cma_err(ENOTCONN);
	if (!len)
		return 0;

	pthread_mutex_lock(&rs->rlock);
	do {
		if (!rs_have_rdata(rs)) {
			ret = rs_get_comp(rs, rs_nonblocking(rs, flags),
					  rs_conn_have_rdata);
			if (ret)
				break;
		}
		if (flags & MSG_PEEK) {
			left -= rs_copy_out(rs, &cur, left, false);
			break;
		}
		left -= rs_copy_out(rs, &cur, left, true);
	} while (left && (flags & MSG_WAITALL) && (rs->state & rs_readable));
	pthread_mutex_unlock(&rs->rlock);
	/* Freed buffer space is granted back to the peer. */
	if (left != len && !(flags & MSG_PEEK) && (rs->state & rs_connected) &&
	    !pthread_mutex_trylock(&rs->cq_lock)) {
		rs_update_credits(rs);
		pthread_mutex_unlock(&rs->cq_lock);
	}
	return (ret && left == len) ? ret : (ssize_t)(len - left);
}
