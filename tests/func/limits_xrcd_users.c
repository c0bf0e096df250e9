/* SPDX-License-Identifier: MIT */
/*
 * The daemon's XRC domain table is shared by every user: a user of a root
 * daemon who opens domains on context after context until none opens
 * stops at his share (ENOMEM), and a second user can then still open a
 * domain, private or of a file.  Needs root to make the users.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_util.h"
#include "t_xrc.h"

#define MAX_CTX 24 /* past the whole table: 16384 at 1024 a context */
#define PER_CTX 1100

static uid_t uid_a, uid_b;

struct held {
	struct t_dev d;
	struct ibv_xrcd **x;
	int n;
};

static int greedy(int fd, void *arg)
{
	struct held *h = calloc(MAX_CTX, sizeof(*h));
	int k, total = 0;

	(void)arg;
	T_ASSERT(h != NULL);
	t_become(uid_b);
	for (k = 0; k < MAX_CTX; k++) {
		t_dev_open(&h[k].d);
		h[k].x = calloc(PER_CTX, sizeof(*h[k].x));
		T_ASSERT(h[k].x != NULL);
		while (h[k].n < PER_CTX) {
			struct ibv_xrcd *x = t_xrcd_open(h[k].d.ctx, -1, 0);

			if (!x)
				break;
			h[k].x[h[k].n++] = x;
		}
		T_EQ(errno, ENOMEM);
		total += h[k].n;
		if (!h[k].n) {
			k++;
			break;
		}
	}
	t_log("greedy: %d XRC domains on %d contexts, then ENOMEM", total, k);
	t_sock_sync(fd);
	t_sock_sync(fd);
	while (k--) {
		for (int i = 0; i < h[k].n; i++)
			T_OK(ibv_close_xrcd(h[k].x[i]));
		free(h[k].x);
		t_dev_close(&h[k].d);
	}
	free(h);
	return 0;
}

static int other(int fd, void *arg)
{
	char path[] = "/tmp/srd-xrcd-XXXXXX";
	struct ibv_xrcd *x, *y;
	struct t_dev d;
	int file;

	(void)fd;
	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	x = t_xrcd_open(d.ctx, -1, 0);
	t_log("other: a private XRC domain: %s",
	      x ? "opened" : t_errname(errno));
	T_ASSERT(x != NULL);
	file = mkstemp(path);
	T_ASSERT(file >= 0);
	unlink(path);
	y = T_NONNULL(t_xrcd_open(d.ctx, file, O_CREAT));
	T_OK(ibv_close_xrcd(y));
	T_OK(ibv_close_xrcd(x));
	close(file);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_child b, a;
	struct t_dev d;

	t_init("limits_xrcd_users");
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
