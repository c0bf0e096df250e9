/* SPDX-License-Identifier: MIT */
/*
 * The device's memory access: copies between MR ranges (already checked
 * with mr_check), one pass of stores when both are mapped, ordered as a
 * NIC's DMA orders them (store_order.h); memory reached through the
 * client's address space goes through what the client handed over at
 * OPEN_DEVICE (struct srd_client_mem), never through a bare pid.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/objects.h"
#include "daemon/objects/store_order.h"

#define BOUNCE_BYTES (64 * 1024)
/* How long an owner seen alive is taken to be (mr_owner_alive). */
#define ALIVE_TRUST_NS 1000000ull

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

int mem_file_xfer(const struct srd_client_mem *m, uint64_t addr, void *buf,
		  uint64_t len, bool write)
{
	if (m->kind != SRD_MEM_PROCMEM)
		return -EFAULT;
	return procmem_xfer(m->fd, addr, buf, len, write);
}

bool mr_owner_alive(const struct srd_mr *mr)
{
	struct srd_client_mem *cm = mr->mem;
	uint8_t b;
	ssize_t n;

	if (!cm)
		return false;
	/* An address space that lived a moment ago is taken to live now:
	 * the check is a courtesy (the owner may go right after it), and a
	 * copy through the mem file finds out for itself. */
	if (cm->alive_until && srd_now_ns() < cm->alive_until)
		return true;
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
		if (n != 0)
			cm->alive_until = srd_now_ns() + ALIVE_TRUST_NS;
		return n != 0;
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
