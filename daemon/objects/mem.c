/* SPDX-License-Identifier: MIT */
/*
 * The device's memory access: copies between MR ranges (already checked
 * with mr_check), one memcpy when both are mapped; memory reached through
 * the client's address space goes through what the client handed over at
 * OPEN_DEVICE (struct srd_client_mem), never through a bare pid.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon/core/objects.h"

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
		memcpy(mr_ptr(mr, va), buf, len);
		return 0;
	}
	if (!mr->pvm)
		return -EFAULT;
	return pvm_xfer(mr, va, (void *)buf, len, true);
}

int mr_copy(struct srd_mr *dst_mr, uint64_t dst_va, struct srd_mr *src_mr,
	    uint64_t src_va, uint64_t len, struct srd_mr **failed)
{
	static uint8_t bounce[BOUNCE_BYTES];
	struct srd_mr *bad = NULL;
	int err = 0;

	if (!len)
		return 0;
	if (dst_mr->base && src_mr->base) {
		/* The same MR may be both ends: memmove. */
		memmove(mr_ptr(dst_mr, dst_va), mr_ptr(src_mr, src_va), len);
		return 0;
	}
	if (dst_mr->base) {
		err = mr_read(src_mr, src_va, mr_ptr(dst_mr, dst_va), len);
		bad = src_mr;
	} else if (src_mr->base) {
		err = mr_write(dst_mr, dst_va, mr_ptr(src_mr, src_va), len);
		bad = dst_mr;
	}
	while (!err && !bad && len) {
		uint64_t n = len < BOUNCE_BYTES ? len : BOUNCE_BYTES;

		err = mr_read(src_mr, src_va, bounce, n);
		if (err) {
			bad = src_mr;
			break;
		}
		err = mr_write(dst_mr, dst_va, bounce, n);
		if (err) {
			bad = dst_mr;
			break;
		}
		src_va += n;
		dst_va += n;
		len -= n;
	}
	if (err && failed)
		*failed = bad;
	return err;
}
