/* SPDX-License-Identifier: MIT */
/*
 * Connections and the descriptors they cost the daemon, with the default
 * limits of a root daemon whose RLIMIT_NOFILE is 1024: a user opening
 * contexts until he cannot is refused with EMFILE (not "no devices") at
 * his share, long before the daemon runs out; a second user then still
 * lists the devices, opens one, allocates device memory and opens an XRC
 * domain, and root still runs `softrdma resource show usage`.  Needs root
 * to make the users.
 */
#include <libgen.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "t_util.h"
#include "t_xrc.h"

#define DAEMON_FDS 1024
#define MAX_CTX 600 /* past what 1024 descriptors hold */

static uid_t uid_a, uid_b;

static int greedy(int fd, void *arg)
{
	struct ibv_context **ctx = calloc(MAX_CTX, sizeof(*ctx));
	struct ibv_device **list;
	int n, num, got[4];

	(void)arg;
	T_ASSERT(ctx != NULL);
	t_become(uid_b);
	list = T_NONNULL(ibv_get_device_list(NULL));
	T_ASSERT(list[0] != NULL);
	for (n = 0; n < MAX_CTX; n++) {
		ctx[n] = ibv_open_device(list[0]);
		if (!ctx[n])
			break;
	}
	got[0] = n;
	got[1] = errno;
	t_log("greedy: %d contexts, then %s", n, t_errname(errno));
	/* Listing the devices says why too. */
	ibv_free_device_list(T_NONNULL(ibv_get_device_list(&num)));
	got[2] = num;
	got[3] = errno;
	t_sock_send(fd, got, sizeof(got));
	t_sock_sync(fd);
	while (n--)
		T_OK(ibv_close_device(ctx[n]));
	ibv_free_device_list(list);
	free(ctx);
	return 0;
}

static int other(int fd, void *arg)
{
	struct ibv_alloc_dm_attr da = { .length = 4096 };
	struct ibv_xrcd *x;
	struct ibv_dm *dm;
	struct t_dev d;

	(void)fd;
	(void)arg;
	t_become(uid_a);
	d.list = ibv_get_device_list(&d.num_devices);
	t_log("other: %d devices (%s)", d.list ? d.num_devices : -1,
	      t_errname(errno));
	T_ASSERT(d.list && d.num_devices > 0);
	ibv_free_device_list(d.list);
	t_dev_open(&d);
	dm = T_NONNULL(ibv_alloc_dm(d.ctx, &da));
	x = T_NONNULL(t_xrcd_open(d.ctx, -1, 0));
	T_OK(ibv_close_xrcd(x));
	T_OK(ibv_free_dm(dm));
	t_dev_close(&d);
	return 0;
}

/* Root's administration still connects: the user rows of the usage. */
static void usage_as_root(void)
{
	char *daemon = strdup(getenv("SOFTRDMAD")), cmd[4096], line[4096];
	int users = 0;
	FILE *p;

	T_ASSERT(daemon != NULL);
	snprintf(cmd, sizeof(cmd), "%s/softrdma -d resource show usage",
		 dirname(daemon));
	p = T_NONNULL(popen(cmd, "r"));
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "user ", 5))
			continue;
		printf("%s", line);
		T_ASSERT(strstr(line, " clients_max ") && strstr(line, " fds_"
								       "max "));
		users++;
	}
	T_EQ(pclose(p), 0);
	free(daemon);
	T_EQ(users, 2); /* root and B (A is gone) */
}

int main(void)
{
	struct t_child b, a, st;
	struct t_dev d;
	int got[4];

	if (!getenv("SOFTRDMAD"))
		t_skip("needs SOFTRDMAD");
	t_init("limits_conns_users");
	if (geteuid() != 0)
		t_skip("needs root to make other users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	/* Only the daemon has the small limit: the users' own run out later. */
	t_daemon_nofile(&st, DAEMON_FDS);
	t_dev_open(&d);
	t_fork(&b, greedy, NULL);
	t_sock_recv(b.fd, got, sizeof(got));
	t_fork(&a, other, NULL);
	T_EQ(t_child_wait(&a, T_WAIT_MS), 0);
	usage_as_root();
	/* B was refused at his share, and told why. */
	T_EQ(got[1], EMFILE);
	T_ASSERT(got[0] <= DAEMON_FDS / 16);
	T_EQ(got[2], 0);
	T_EQ(got[3], EMFILE);
	t_sock_sync(b.fd);
	T_EQ(t_child_wait(&b, T_WAIT_MS), 0);
	t_daemon_release(&st);
	t_dev_close(&d);
	t_pass();
}
