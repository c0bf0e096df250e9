/* SPDX-License-Identifier: MIT */
/*
 * Which descriptors are rsockets.  Lookups happen on every r* call, also
 * for ordinary descriptors: librdmacm/fd_table.h reads without a lock.
 */
#include "librdmacm/fd_table.h"
#include "librdmacm/rs.h"

static struct srd_fd_table table = SRD_FD_TABLE_INIT;

struct rsocket *rs_lookup(int fd)
{
	return srd_fd_get(&table, fd);
}

int rs_insert(struct rsocket *rs, int fd)
{
	if (srd_fd_set(&table, fd, rs))
		return -1;
	rs->index = fd;
	return 0;
}

void rs_remove(struct rsocket *rs)
{
	if (rs->index < 0)
		return;
	srd_fd_clear(&table, rs->index, rs);
	rs->index = -1;
}
