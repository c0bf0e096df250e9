/* SPDX-License-Identifier: MIT */
/*
 * The device's memory access: copies between MR ranges (already checked
 * with mr_check), one memcpy when both are mapped, process_vm_readv/writev
 * for memory reached through the client's address space.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "daemon/objects.h"

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

static int pvm_xfer(struct srd_mr *mr, uint64_t va, void *buf, uint64_t len,
		    bool write)
{
	uint64_t raddr = mr_client_addr(mr, va);

	while (len) {
		struct iovec l = { .iov_base = buf, .iov_len = len };
		struct iovec r = { .iov_base = (void *)(uintptr_t)raddr,
				   .iov_len = len };
		ssize_t n;

		if (write)
			n = process_vm_writev(mr->pvm_pid, &l, 1, &r, 1, 0);
		else
			n = process_vm_readv(mr->pvm_pid, &l, 1, &r, 1, 0);
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

int mr_read(struct srd_mr *mr, uint64_t va, void *buf, uint64_t len)
{
	if (!len)
		return 0;
	if (mr->base) {
		memcpy(buf, mr_ptr(mr, va), len);
		return 0;
	}
	if (!mr->pvm_pid)
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
	if (!mr->pvm_pid)
		return -EFAULT;
	return pvm_xfer(mr, va, (void *)buf, len, true);
}

int mr_copy(struct srd_mr *dst_mr, uint64_t dst_va, struct srd_mr *src_mr,
	    uint64_t src_va, uint64_t len)
{
	static uint8_t bounce[BOUNCE_BYTES];
	int err;

	if (!len)
		return 0;
	if (dst_mr->base && src_mr->base) {
		/* The same MR may be both ends: memmove. */
		memmove(mr_ptr(dst_mr, dst_va), mr_ptr(src_mr, src_va), len);
		return 0;
	}
	if (dst_mr->base)
		return mr_read(src_mr, src_va, mr_ptr(dst_mr, dst_va), len);
	if (src_mr->base)
		return mr_write(dst_mr, dst_va, mr_ptr(src_mr, src_va), len);
	while (len) {
		uint64_t n = len < BOUNCE_BYTES ? len : BOUNCE_BYTES;

		err = mr_read(src_mr, src_va, bounce, n);
		if (!err)
			err = mr_write(dst_mr, dst_va, bounce, n);
		if (err)
			return err;
		src_va += n;
		dst_va += n;
		len -= n;
	}
	return 0;
}
