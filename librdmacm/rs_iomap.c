/* SPDX-License-Identifier: MIT */
/*
 * riomap / riowrite: a buffer one side maps is described (offset, address,
 * rkey, length) in an entry of the peer's iomap table, written there by
 * RDMA WRITE WITH IMMEDIATE (op IOMAP_SGL, data: the entry's index).  The
 * peer's riowrite then finds the offset in its table and writes the data
 * straight into the mapped buffer with a plain RDMA WRITE: the owner of
 * the buffer is not told.
 */
#include <stdlib.h>
#include <string.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

static void rs_iomap_release(struct rsocket *rs, struct rs_iomap_mr *m)
{
	list_del(&m->node);
	if (m->index >= 0 && rs->remote_iomappings)
		rs->remote_iomappings[m->index] = NULL;
	ibv_dereg_mr(m->mr);
	free(m);
}

void rs_free_iomaps(struct rsocket *rs)
{
	while (!list_empty(&rs->iomap_list))
		rs_iomap_release(rs, list_entry(rs->iomap_list.n.next,
						struct rs_iomap_mr, node));
	while (!list_empty(&rs->iomap_queue))
		rs_iomap_release(rs, list_entry(rs->iomap_queue.n.next,
						struct rs_iomap_mr, node));
	free(rs->remote_iomappings);
	rs->remote_iomappings = NULL;
}

/* A free entry of the peer's table, or -1. */
static int rs_iomap_slot(struct rsocket *rs)
{
	if (!rs->remote_iomappings) {
		if (!rs->remote_iomap.length)
			return -1;
		rs->remote_iomappings = calloc(rs->remote_iomap.length,
					       sizeof(*rs->remote_iomappings));
		if (!rs->remote_iomappings)
			return -1;
	}
	for (uint32_t i = 0; i < rs->remote_iomap.length; i++)
		if (!rs->remote_iomappings[i])
			return (int)i;
	return -1;
}

LIB_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags,
			off_t offset)
{
	struct rsocket *rs = rs_lookup(socket);
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct rs_iomap_mr *m;
	int slot = -1;

	(void)flags;
	if (!rs)
		return cma_err(EBADF);
	if (!rs->cm_id || !rs->cm_id->pd || (prot & ~(PROT_WRITE | PROT_NONE)))
		return cma_err(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return cma_err(ENOMEM);
	pthread_mutex_lock(&rs->map_lock);
	if (prot & PROT_WRITE) {
		slot = rs_iomap_slot(rs);
		if (slot < 0) {
			offset = cma_err(ENOMEM);
			goto err;
		}
		access |= IBV_ACCESS_REMOTE_WRITE;
	}
	m->index = slot;
	m->mr = ibv_reg_mr(rs->cm_id->pd, buf, len, access);
	if (!m->mr) {
		offset = -1;
		goto err;
	}
	if (offset == -1)
		offset = (off_t)(uintptr_t)buf;
	m->offset = (uint64_t)offset;
	if (slot >= 0) {
		rs->remote_iomappings[slot] = m;
		list_add_tail(&rs->iomap_queue, &m->node);
		rs->iomap_pending = true;
	} else {
		list_add_tail(&rs->iomap_list, &m->node);
	}
	pthread_mutex_unlock(&rs->map_lock);
	return offset;
err:
	pthread_mutex_unlock(&rs->map_lock);
	free(m);
	return offset;
}

static struct rs_iomap_mr *find_mapping(struct list_head *h, void *buf,
					size_t len)
{
	list_for_each (h, it) {
		struct rs_iomap_mr *m =
			list_entry(it, struct rs_iomap_mr, node);

		if (m->mr->addr == buf && m->mr->length == len)
			return m;
	}
	return NULL;
}

LIB_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	struct rsocket *rs = rs_lookup(socket);
	struct rs_iomap_mr *m;

	if (!rs)
		return cma_err(EBADF);
	pthread_mutex_lock(&rs->map_lock);
	m = find_mapping(&rs->iomap_list, buf, len);
	if (!m)
		m = find_mapping(&rs->iomap_queue, buf, len);
	if (m)
		rs_iomap_release(rs, m);
	pthread_mutex_unlock(&rs->map_lock);
	return m ? 0 : cma_err(EINVAL);
}

/* Write one mapping into the peer's table (a data credit is used, as
 * rdma-core does). */
static int rs_write_iomap(struct rsocket *rs, struct rs_iomap_mr *m)
{
	struct rs_iomap iom;
	struct ibv_sge sgl[2];
	int nsge, flags = 0;

	iom.offset = m->offset;
	iom.sge.addr = (uintptr_t)m->mr->addr;
	iom.sge.length = (uint32_t)m->mr->length;
	iom.sge.key = m->mr->rkey;
	if (rs->opts & RS_OPT_SWAP_SGL) {
		iom.offset = __builtin_bswap64(iom.offset);
		iom.sge.addr = __builtin_bswap64(iom.sge.addr);
		iom.sge.length = __builtin_bswap32(iom.sge.length);
		iom.sge.key = __builtin_bswap32(iom.sge.key);
	}
	if (rs->sq_inline >= sizeof(iom)) {
		sgl[0].addr = (uintptr_t)&iom;
		sgl[0].length = sizeof(iom);
		sgl[0].lkey = 0;
		nsge = 1;
		flags = IBV_SEND_INLINE;
	} else {
		nsge = rs_stage(rs, &iom, sizeof(iom), sgl);
	}
	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= (int)sizeof(iom);
	return rs_post_write_msg(
		rs, sgl, nsge, rs_msg_set(RS_OP_IOMAP_SGL, (uint32_t)m->index),
		flags, rs->remote_iomap.addr + (uint64_t)m->index * sizeof(iom),
		rs->remote_iomap.key);
}

/* Called with slock held. */
int rs_send_iomaps(struct rsocket *rs, int flags)
{
	int ret = 0;

	pthread_mutex_lock(&rs->map_lock);
	while (!list_empty(&rs->iomap_queue)) {
		struct rs_iomap_mr *m;

		ret = rs_wait_send(rs, flags);
		if (ret)
			break;
		m = list_entry(rs->iomap_queue.n.next, struct rs_iomap_mr,
			       node);
		ret = rs_write_iomap(rs, m);
		list_del(&m->node);
		list_add_tail(&rs->iomap_list, &m->node);
		if (ret)
			break;
	}
	rs->iomap_pending = !list_empty(&rs->iomap_queue);
	pthread_mutex_unlock(&rs->map_lock);
	return ret;
}

static volatile struct rs_iomap *rs_find_iomap(struct rsocket *rs,
					       uint64_t offset)
{
	for (int i = 0; i < rs->target_iomap_size; i++) {
		volatile struct rs_iomap *e = &rs->target_iomap[i];

		if (offset >= e->offset && offset < e->offset + e->sge.length)
			return e;
	}
	return NULL;
}

LIB_EXPORT size_t riowrite(int socket, const void *buf, size_t count,
			   off_t offset, int flags)
{
	struct rsocket *rs = rs_lookup(socket);
	volatile struct rs_iomap *iom = NULL;
	const uint8_t *src = buf;
	uint64_t off = (uint64_t)offset;
	uint32_t xfer, olen = RS_OLAP_START_SIZE;
	size_t left = count;
	int ret = 0;

	if (!rs)
		return (size_t)cma_err(EBADF);
	if (rs->type == SOCK_DGRAM)
		return (size_t)cma_err(EOPNOTSUPP);
	if (!(rs->state & rs_writable))
		return (size_t)cma_err((rs->state & rs_connected) ? EPIPE
								  : ENOTCONN);
	pthread_mutex_lock(&rs->slock);
	if (rs->iomap_pending) {
		ret = rs_send_iomaps(rs, flags);
		if (ret)
			goto out;
	}
	for (; left; left -= xfer, src += xfer, off += xfer) {
		struct ibv_sge sgl[2];
		uint64_t end;
		int nsge;

		if (!iom || off >= iom->offset + iom->sge.length) {
			iom = rs_find_iomap(rs, off);
			if (!iom) {
				if (left == count)
					ret = cma_err(EINVAL);
				break;
			}
		}
		ret = rs_wait_send(rs, flags);
		if (ret)
			break;
		xfer = rs_next_xfer(rs, &olen, left);
		end = iom->offset + iom->sge.length;
		if (xfer > end - off)
			xfer = (uint32_t)(end - off);
		nsge = rs_stage(rs, src, xfer, sgl);
		rs->sqe_avail--;
		rs->sbuf_bytes_avail -= (int)xfer;
		ret = rs_post_write(rs, sgl, nsge,
				    rs_msg_set(RS_OP_WRITE, xfer),
				    xfer <= rs->sq_inline ? IBV_SEND_INLINE : 0,
				    iom->sge.addr + off - iom->offset,
				    iom->sge.key);
		if (ret)
			break;
	}
out:
	pthread_mutex_unlock(&rs->slock);
	return (ret && left == count) ? (size_t)ret : count - left;
}
