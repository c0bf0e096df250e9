/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/core/core.h"

int shm_create(const char *name, size_t len, unsigned int extra_seals,
	       void **map)
{
	void *p;
	int fd, err;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, len) < 0)
		goto err_close;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err_close;
	/* A client must not shrink what the daemon has mapped (SIGBUS). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | extra_seals))
		goto err_unmap;
	*map = p;
	return fd;

err_unmap:
	err = -errno;
	munmap(p, len);
	close(fd);
	return err;
err_close:
	err = -errno;
	close(fd);
	return err;
}
