/* SPDX-License-Identifier: MIT */
/*
 * ibv_alloc_dm against a daemon whose ALLOC_DM reply maps less than was
 * asked for (a command channel in the middle shrinks map_len): the verb
 * fails with EPROTO, and neither the memfd that came with the reply nor
 * the device memory the daemon set aside stays behind.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "t_proxy.h"
#include "t_util.h"

static int open_fds(void)
{
	DIR *dir = T_NONNULL(opendir("/proc/self/fd"));
	struct dirent *e;
	int n = 0;

	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n - 1; /* the directory's own */
}

static void shrink_dm(struct srd_msg_hdr *h, void *payload, uint32_t max,
		      void *arg)
{
	struct srd_alloc_dm_rep *rep = payload;
	int *seen = arg;

	if (h->op != SRD_CMD_ALLOC_DM || h->status || h->len < sizeof(*rep))
		return;
	rep->map_len = 64;
	(*seen)++;
}

int main(void)
{
	struct ibv_alloc_dm_attr a = { 0 };
	struct ibv_device_attr_ex ax;
	struct t_dev d, p;
	struct ibv_dm *dm;
	int seen = 0, before;

	/* The whole device in one client: past a user's share. */
	t_config("limit client dm_bytes unlimited\n"
		 "limit user dm_bytes unlimited\n");
	t_init("dm_bad_reply");
	t_dev_open(&d);
	T_OK(ibv_query_device_ex(d.ctx, NULL, &ax));
	a.length = ax.max_dm_size;

	t_proxy_start(shrink_dm, &seen);
	t_dev_open(&p);
	before = open_fds();
	T_NULL_ERRNO(ibv_alloc_dm(p.ctx, &a), EPROTO);
	T_EQ(seen, 1);
	T_EQ(open_fds(), before);
	/* The daemon gave the device memory back: all of it is free. */
	dm = T_NONNULL(ibv_alloc_dm(d.ctx, &a));
	T_OK(ibv_free_dm(dm));
	t_dev_close(&p);
	t_proxy_stop();
	t_dev_close(&d);
	t_pass();
}
