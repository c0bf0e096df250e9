/* SPDX-License-Identifier: MIT */
/*
 * The daemon's descriptor reserve, with the per-user connection and
 * descriptor limits lifted (as if many users each took their share): one
 * user opening contexts until he cannot is refused with ENFILE while an
 * eighth of the daemon's RLIMIT_NOFILE (1024 here) is left, and another
 * user's first context and root's still open.  Needs root to make the
 * users.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "t_util.h"

#define DAEMON_FDS 1024
#define MAX_CTX 600

static const char config[] = "# func.limits_fd_reserve\n"
			     "limit user clients unlimited\n"
			     "limit user fds unlimited\n"
			     "limit client fds unlimited\n";

static uid_t uid_a, uid_b;

static int greedy(int fd, void *arg)
{
	struct ibv_context **ctx = calloc(MAX_CTX, sizeof(*ctx));
	struct ibv_device **list;
	int n, got[2];

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
	struct t_dev d;

	(void)fd;
	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	char path[] = "/tmp/srd-reserve-XXXXXX";
	struct t_child b, a, st;
	struct t_dev d, r;
	int fd, got[2];

	if (!getenv("SOFTRDMAD"))
		t_skip("needs SOFTRDMAD");
	if (geteuid() != 0)
		t_skip("needs root to make other users");
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_EQ(write(fd, config, sizeof(config) - 1),
	     (ssize_t)sizeof(config) - 1);
	close(fd);
	setenv("SOFTRDMA_CONFIG", path, 1);
	t_init("limits_fd_reserve");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	/* Only the daemon has the small limit: the users' own run out later. */
	t_daemon_nofile(&st, DAEMON_FDS);
	t_dev_open(&d);
	unlink(path);
	t_fork(&b, greedy, NULL);
	t_sock_recv(b.fd, got, sizeof(got));
	t_fork(&a, other, NULL);
	T_EQ(t_child_wait(&a, T_WAIT_MS), 0);
	t_dev_open(&r); /* root too */
	t_dev_close(&r);
	T_EQ(got[1], ENFILE);
	T_ASSERT(got[0] > 0);
	t_sock_sync(b.fd);
	T_EQ(t_child_wait(&b, T_WAIT_MS), 0);
	t_daemon_release(&st);
	t_dev_close(&d);
	t_pass();
}
