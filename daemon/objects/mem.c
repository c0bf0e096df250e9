/* SPDX-License-Identifier: MIT */
/*
 * The device's memory access: copies between MR ranges (already checked
 * with mr_check), one pass of stores when both are mapped, ordered as a
 * NIC's DMA orders them (store_order.h); memory reached through the
 * client's address space goes through what the client handed over at
 * OPEN_DEVICE (struct srd_client_mem), never through a bare pid.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon/core/objects.h"
#include "daemon/objects/store_order.h"

#define BOUNCE_BYTES (64 * 1024)

static uint64_t mr_client_addr(const struct srd_mr *mr, uint64_t va)
{
	return mr->addr + (va - mr->iova);
}

uint8_t *mr_ptr(struct srd_mr *mr, uint64_t va)
{
	if (!mr->base)
		return NULL;
	return mr->base + (va - mr->iova);
}

/* Has the process behind a pidfd exited?  (Readable: it has; an error
 * counts as gone too.) */
bool srd_pidfd_gone(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n != 0;
}

/* srd_pidfd_gone() for two pidfds in one call (b may be -1). */
static void pidfds_gone(int a, int b, bool *a_gone, bool *b_gone)
{
	struct pollfd p[2] = { { .fd = a, .events = POLLIN },
			       { .fd = b, .events = POLLIN } };
	int n;

	do
		n = poll(p, b < 0 ? 1 : 2, 0);
	while (n < 0 && errno == EINTR);
	*a_gone = n < 0 || p[0].revents;
	*b_gone = b >= 0 && (n < 0 || p[1].revents);
}

/* pread/pwrite on the client's /proc/PID/mem: the file refers to the
 * address space the client had when it opened it, and reads or writes
 * nothing once that is gone (exit, exec), whoever has the pid since. */
static int procmem_xfer(int fd, uint64_t raddr, void *buf, uint64_t len,
			bool write)
{
	while (len) {
		ssize_t n;

		if (raddr > (uint64_t)INT64_MAX - len)
			return -EFAULT;
		if (write)
			n = pwrite(fd, buf, len, (off_t)raddr);
		else
			n = pread(fd, buf, len, (off_t)raddr);
		if (n < 0 && errno == EINTR)
			continue;
		/* 0 bytes: the address space is gone (exit, exec). */
		if (n == 0 || (n < 0 && errno == ESRCH))
			return -ESRCH;
		if (n < 0)
			return -EFAULT;
		buf = (uint8_t *)buf + n;
		raddr += n;
		len -= n;
	}
	return 0;
}

/* process_vm_* on the pid of a pidfd, each call between two checks that
 * the process still lives: once it is gone its pid may name another. */
static int pidfd_xfer(const struct srd_client_mem *cm, uint64_t raddr,
		      void *buf, uint64_t len, bool write)
{
	while (len) {
		struct iovec l = { .iov_base = buf, .iov_len = len };
		struct iovec r = { .iov_base = (void *)(uintptr_t)raddr,
				   .iov_len = len };
		ssize_t n;

		if (srd_pidfd_gone(cm->fd))
			return -ESRCH;
		if (write)
			n = process_vm_writev(cm->pid, &l, 1, &r, 1, 0);
		else
			n = process_vm_readv(cm->pid, &l, 1, &r, 1, 0);
		if (srd_pidfd_gone(cm->fd))
			return -ESRCH;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == ESRCH ? -ESRCH : -EFAULT;
		}
		if (n == 0)
			return -EFAULT;
		buf = (uint8_t *)buf + n;
		raddr += n;
		len -= n;
	}
	return 0;
}

/*
 * From one pidfd client to another through a bounce buffer with the
 * checks of pidfd_xfer(), but each poll after a call also serves as the
 * check before the next one, of either process: two polls per chunk
 * instead of four.  On an error *failed_dst says which side failed.
 */
static int pidfd_bounce(const struct srd_client_mem *dst, uint64_t daddr,
			const struct srd_client_mem *src, uint64_t saddr,
			uint8_t *bounce, uint64_t cap, uint64_t len,
			bool *failed_dst)
{
	bool sgone = srd_pidfd_gone(src->fd), dgone = false;

	*failed_dst = false;
	while (len) {
		uint64_t k = len < cap ? len : cap;
		struct iovec l = { .iov_base = bounce, .iov_len = k };
		struct iovec r = { .iov_base = (void *)(uintptr_t)saddr,
				   .iov_len = k };
		ssize_t n, w;

		if (sgone)
			return -ESRCH;
		n = process_vm_readv(src->pid, &l, 1, &r, 1, 0);
		/* After the read and before the write. */
		pidfds_gone(src->fd, dst->fd, &sgone, &dgone);
		if (sgone)
			return -ESRCH;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
		*failed_dst = true;
		if (dgone)
			return -ESRCH;
		l.iov_len = (size_t)n;
		r.iov_base = (void *)(uintptr_t)daddr;
		r.iov_len = (size_t)n;
		do
			w = process_vm_writev(dst->pid, &l, 1, &r, 1, 0);
		while (w < 0 && errno == EINTR && !srd_pidfd_gone(dst->fd));
		/* After the write and before the next read. */
		pidfds_gone(dst->fd, len > (uint64_t)n ? src->fd : -1, &dgone,
			    &sgone);
		if (dgone)
			return -ESRCH;
		if (w < 0)
			return errno == ESRCH ? -ESRCH : -EFAULT;
		/* A short write: the rest goes round again (and fails at
		 * the page that stopped it). */
		if (w == 0)
			return -EFAULT;
		*failed_dst = false;
		saddr += (uint64_t)w;
		daddr += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
}

bool mr_owner_alive(const struct srd_mr *mr)
{
	const struct srd_client_mem *cm = mr->mem;
	uint8_t b;
	ssize_t n;

	if (!cm)
		return false;
	switch (cm->kind) {
	case SRD_MEM_PROCMEM:
		/* 0 bytes: the address space is gone (an unreadable page
		 * is an error of its own, found by the access). */
		/* An ODP MR's pages are not touched for this: page 0 is
		 * never mapped, and EIO there still says the space lives. */
		do
			n = pread(cm->fd, &b, 1,
				  mr->odp ? 0 : (off_t)(mr->addr & INT64_MAX));
		while (n < 0 && errno == EINTR);
		return n != 0;
	case SRD_MEM_PIDFD:
		return !srd_pidfd_gone(cm->fd);
	default:
		return false;
	}
}

static int pvm_xfer(struct srd_mr *mr, uint64_t va, void *buf, uint64_t len,
		    bool write)
{
	const struct srd_client_mem *cm = mr->mem;
	uint64_t raddr = mr_client_addr(mr, va);

	switch (cm->kind) {
	case SRD_MEM_PROCMEM:
		return procmem_xfer(cm->fd, raddr, buf, len, write);
	case SRD_MEM_PIDFD:
		return pidfd_xfer(cm, raddr, buf, len, write);
	default:
		return -EFAULT;
	}
}

int mr_read(struct srd_mr *mr, uint64_t va, void *buf, uint64_t len)
{
	if (!len)
		return 0;
	if (mr->base) {
		memcpy(buf, mr_ptr(mr, va), len);
		return 0;
	}
	if (!mr->pvm)
		return -EFAULT;
	return pvm_xfer(mr, va, buf, len, false);
}

int mr_write(struct srd_mr *mr, uint64_t va, const void *buf, uint64_t len)
{
	if (!len)
		return 0;
	if (mr->base) {
		srd_store_ordered(mr_ptr(mr, va), buf, len);
		return 0;
	}
	if (!mr->pvm)
		return -EFAULT;
	return pvm_xfer(mr, va, (void *)buf, len, true);
}

/* Between two MRs neither of which the daemon maps: through a bounce
 * buffer, a chunk at a time. */
static int bounce_copy(struct srd_mr *dst_mr, uint64_t dst_va,
		       struct srd_mr *src_mr, uint64_t src_va, uint64_t len,
		       struct srd_mr **bad)
{
	static uint8_t bounce[BOUNCE_BYTES];
	int err;

	if (src_mr->pvm && dst_mr->pvm && src_mr->mem->kind == SRD_MEM_PIDFD &&
	    dst_mr->mem->kind == SRD_MEM_PIDFD) {
		bool on_dst;

		err = pidfd_bounce(dst_mr->mem, mr_client_addr(dst_mr, dst_va),
				   src_mr->mem, mr_client_addr(src_mr, src_va),
				   bounce, sizeof(bounce), len, &on_dst);
		*bad = on_dst ? dst_mr : src_mr;
		return err;
	}
	while (len) {
		uint64_t n = len < BOUNCE_BYTES ? len : BOUNCE_BYTES;

		*bad = src_mr;
		err = mr_read(src_mr, src_va, bounce, n);
		if (err)
			return err;
		*bad = dst_mr;
		err = mr_write(dst_mr, dst_va, bounce, n);
		if (err)
			return err;
		src_va += n;
		dst_va += n;
		len -= n;
	}
	return 0;
}

int mr_copy(struct srd_mr *dst_mr, uint64_t dst_va, struct srd_mr *src_mr,
	    uint64_t src_va, uint64_t len, struct srd_mr **failed)
{
	struct srd_mr *bad;
	int err;

	if (!len)
		return 0;
	if (dst_mr->base && src_mr->base) {
		uint8_t *d = mr_ptr(dst_mr, dst_va);
		const uint8_t *s = mr_ptr(src_mr, src_va);

		/* Ascending stores are right unless the destination starts
		 * inside the source (the same memory at both ends): then
		 * memmove, as a device would copy through a buffer. */
		if (d > s && d < s + len)
			memmove(d, s, len);
		else
			srd_store_ordered(d, s, len);
		return 0;
	}
	if (dst_mr->base) {
		err = mr_read(src_mr, src_va, mr_ptr(dst_mr, dst_va), len);
		bad = src_mr;
	} else if (src_mr->base) {
		err = mr_write(dst_mr, dst_va, mr_ptr(src_mr, src_va), len);
		bad = dst_mr;
	} else {
		err = bounce_copy(dst_mr, dst_va, src_mr, src_va, len, &bad);
	}
	if (err && failed)
		*failed = bad;
	return err;
}
