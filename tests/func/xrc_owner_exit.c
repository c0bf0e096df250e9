/* SPDX-License-Identifier: MIT */
/*
 * The creator of an XRC target QP exits while another process holds it
 * (ibv_open_qp): the QP lives on for the opener, which inherits it (it
 * modifies, queries and destroys it); once destroyed, its number opens
 * nothing (EINVAL).  The domain outlives the creator as well: the file
 * still names it until the opener closes it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "t_util.h"

static char path[64];

static struct ibv_xrcd *xopen(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &xa);
}

/* Descriptors the daemon holds: one connection fewer once it has seen
 * the creator go. */
static int daemon_fds(pid_t pid)
{
	char dir[64];
	struct dirent *e;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	T_ASSERT(dp);
	while ((e = readdir(dp)))
		n += e->d_name[0] != '.';
	closedir(dp);
	return n;
}

/* The creator: a domain on the file, a target QP, then exit without
 * destroying anything. */
static int child(int fd, void *arg)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	struct t_dev d;
	int f;

	(void)arg;
	t_dev_open(&d);
	f = open(path, O_RDONLY);
	T_ASSERT(f >= 0);
	xrcd = T_NONNULL(xopen(d.ctx, f, O_CREAT));
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ia.xrcd = xrcd;
	qp = T_NONNULL(ibv_create_qp_ex(d.ctx, &ia));
	t_sock_send(fd, &qp->qp_num, sizeof(qp->qp_num));
	t_sock_sync(fd); /* the parent opened it */
	/* Gone as a crash leaves it: nothing destroyed, nothing freed. */
	fflush(stdout);
	_exit(0);
}

int main(void)
{
	struct ibv_qp_open_attr oa;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	struct t_child c;
	struct t_dev d;
	uint32_t qpn;
	uint64_t t0;
	pid_t daemon;
	int f, fds;

	t_init("xrc_owner_exit");
	snprintf(path, sizeof(path), "/tmp/srd_xrco.%d", (int)getpid());
	f = open(path, O_RDONLY | O_CREAT | O_EXCL, 0600);
	T_ASSERT(f >= 0);
	t_fork(&c, child, NULL);
	t_dev_open(&d);
	t_sock_recv(c.fd, &qpn, sizeof(qpn));
	xrcd = T_NONNULL(xopen(d.ctx, f, 0));
	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	qp = T_NONNULL(ibv_open_qp(d.ctx, &oa));
	T_EQ(qp->state, IBV_QPS_RESET);
	daemon = t_daemon_pid();
	T_GT(daemon, 0);
	fds = daemon_fds(daemon);
	t_sock_sync(c.fd);
	T_EQ(t_child_wait(&c, T_WAIT_MS), 0);

	/* Wait for the daemon to have let the creator go. */
	t0 = t_now_ms();
	while (daemon_fds(daemon) >= fds) {
		if (t_now_ms() - t0 > T_WAIT_MS)
			T_FAIL("the daemon still holds the creator's "
			       "connection");
		t_sleep_ms(1);
	}
	T_EQ(t_qp_state(qp), IBV_QPS_RESET);
	t_qp_to_init(qp, NULL);
	T_EQ(t_qp_state(qp), IBV_QPS_INIT);
	/* The domain is still the file's. */
	{
		struct ibv_xrcd *again = T_NONNULL(xopen(d.ctx, f, 0));

		T_OK(ibv_close_xrcd(again));
	}
	T_EQ(ibv_close_xrcd(xrcd), EBUSY);
	T_OK(ibv_destroy_qp(qp));
	T_NULL_ERRNO(ibv_open_qp(d.ctx, &oa), EINVAL);
	T_OK(ibv_close_xrcd(xrcd));
	T_NULL_ERRNO(xopen(d.ctx, f, 0), EAGAIN);
	close(f);
	unlink(path);
	t_dev_close(&d);
	t_pass();
}
