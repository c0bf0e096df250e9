/* SPDX-License-Identifier: MIT */
/*
 * Device memory is shared by every user of a device: a user of a root
 * daemon who allocates all he can (4 KiB at a time, from two contexts)
 * gets his share, a quarter of the device, and then ENOMEM, as a NIC
 * whose memory is taken; a second user then still allocates device
 * memory and copies through it.  Needs root to make the users.
 */
#include <string.h>
#include <unistd.h>

#include "t_util.h"

#define DM_LEN 4096
#define DEV_DM (256u * 1024) /* a device's device memory */
#define MAX_DMS (DEV_DM / DM_LEN)

static uid_t uid_a, uid_b;

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t len)
{
	struct ibv_alloc_dm_attr a = { .length = len };

	return ibv_alloc_dm(ctx, &a);
}

/* B: takes what he can, and holds it while A works. */
static int greedy(int fd, void *arg)
{
	struct ibv_dm *dms[2 * MAX_DMS];
	struct t_dev d[2];
	int n = 0;

	(void)arg;
	t_become(uid_b);
	for (int k = 0; k < 2; k++) {
		t_dev_open(&d[k]);
		while (n < (int)(2 * MAX_DMS)) {
			dms[n] = dm_alloc(d[k].ctx, DM_LEN);
			if (!dms[n])
				break;
			n++;
		}
		t_log("greedy: %d DMs of %d bytes, then %s", n, DM_LEN,
		      t_errname(errno));
		T_EQ(errno, ENOMEM);
	}
	t_sock_sync(fd);
	t_sock_sync(fd);
	for (int i = 0; i < n; i++)
		T_OK(ibv_free_dm(dms[i]));
	t_dev_close(&d[1]);
	t_dev_close(&d[0]);
	return 0;
}

/* A: device memory is still there for him. */
static int other(int fd, void *arg)
{
	uint8_t in[DM_LEN], out[DM_LEN];
	struct ibv_dm *dm;
	struct t_dev d;

	(void)fd;
	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	dm = dm_alloc(d.ctx, 4 * DM_LEN);
	t_log("other: 16 KiB of device memory: %s",
	      dm ? "allocated" : t_errname(errno));
	T_ASSERT(dm != NULL);
	t_fill(in, sizeof(in), 7);
	T_OK(ibv_memcpy_to_dm(dm, DM_LEN, in, sizeof(in)));
	T_OK(ibv_memcpy_from_dm(out, dm, DM_LEN, sizeof(out)));
	T_CHECK_FILL(out, sizeof(out), 7);
	T_OK(ibv_free_dm(dm));
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_child b, a;
	struct t_dev d;

	t_init("limits_dm_users");
	if (geteuid() != 0)
		t_skip("needs root to make other users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	t_dev_open(&d); /* the daemon is root's */
	t_fork(&b, greedy, NULL);
	t_sock_sync(b.fd);
	t_fork(&a, other, NULL);
	T_EQ(t_child_wait(&a, T_WAIT_MS), 0);
	t_sock_sync(b.fd);
	T_EQ(t_child_wait(&b, T_WAIT_MS), 0);
	t_dev_close(&d);
	t_pass();
}
