/* SPDX-License-Identifier: MIT */
/*
 * Another user of a root daemon cannot get at a context it was not given
 * the cmd_fd of: every PD and MR handle its own context might guess is
 * ENOENT, and the descriptors it can make (its own connections to the
 * daemon, bound or not, a socket pair) import nothing (EINVAL).  Needs
 * root to make the user; skips otherwise.
 */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t_util.h"

#define GUESSES 8192 /* past every first-drawn PD handle */

static int guesser(int sock, void *arg)
{
	uid_t uid = *(uid_t *)arg;
	struct ibv_device **list;
	struct ibv_context *own;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint32_t victim_pd;
	int sv[2], dfd;

	t_sock_recv(sock, &victim_pd, sizeof(victim_pd));
	t_become(uid);
	list = T_NONNULL(ibv_get_device_list(NULL));
	T_ASSERT(list[0]);
	own = T_NONNULL(ibv_open_device(list[0]));
	pd = T_NONNULL(ibv_alloc_pd(own));
	for (uint32_t h = 1; h < GUESSES; h++) {
		struct ibv_pd *g;

		if (h == pd->handle)
			continue;
		errno = 0;
		g = ibv_import_pd(own, h);
		T_ASSERT(!g);
		T_ASSERT(errno == ENOENT || errno == EINVAL);
	}
	T_NULL_ERRNO(ibv_import_pd(own, victim_pd), ENOENT);
	for (uint32_t h = 1; h < GUESSES; h++) {
		errno = 0;
		mr = ibv_import_mr(pd, h);
		T_ASSERT(!mr);
	}
	/* A socket pair is no cmd_fd. */
	T_ASSERT(!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	T_NULL_ERRNO(ibv_import_device(sv[0]), EINVAL);
	/* Its own cmd_fd imports its own context, nobody else's. */
	dfd = dup(own->cmd_fd);
	{
		struct ibv_context *again = T_NONNULL(ibv_import_device(dfd));

		T_NULL_ERRNO(ibv_import_pd(again, victim_pd), ENOENT);
		T_OK(ibv_close_device(again));
	}
	T_OK(ibv_dealloc_pd(pd));
	T_OK(ibv_close_device(own));
	ibv_free_device_list(list);
	return 0;
}

int main(void)
{
	struct t_child c;
	struct t_dev d;
	uid_t uid;

	t_init("import_users");
	if (geteuid() != 0)
		t_skip("needs root to make another user");
	uid = t_user("srdtest_a");
	t_dev_open(&d); /* root's daemon on this test's name */
	t_fork(&c, guesser, &uid);
	t_sock_send(c.fd, &d.pd->handle, sizeof(d.pd->handle));
	T_EQ(t_child_wait(&c, 60000), 0);
	/* Untouched. */
	ibv_unimport_pd(T_NONNULL(ibv_import_pd(d.ctx, d.pd->handle)));
	t_dev_close(&d);
	t_pass();
}
