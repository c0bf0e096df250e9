/* SPDX-License-Identifier: MIT */
/*
 * Rights are judged on the process that sends each command, when it sends
 * it, as uverbs judges the calling task: never on whoever opened the
 * connection or exported the context.  Two real users of a root daemon
 * (root only, else skipped):
 * - a process that connected as root and then became an ordinary user
 *   gets EPERM for a raw packet QP and for an administration command on
 *   that same connection;
 * - a user who imports a context from a root helper (which then drops its
 *   privileges) gets EPERM for a raw packet QP and a flow;
 * - a user who imports a context from a process of his own that then
 *   execs a set-uid-root program gets EPERM for both.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proto_admin.h"
#include "t_util.h"
#include "tests/unit/t_proto.h"

static uid_t uid;
static char suid_sleep[128]; /* a set-uid-root copy of sleep(1) */

/* A raw packet QP and a flow on a UD QP: both refused with EPERM. */
static void expect_no_raw(struct ibv_context *ctx)
{
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_SNIFFER,
				    .size = sizeof(fa),
				    .port = T_PORT };
	struct ibv_qp_init_attr ia;
	struct ibv_pd *pd = T_NONNULL(ibv_alloc_pd(ctx));
	struct ibv_cq *cq = T_NONNULL(ibv_create_cq(ctx, 16, NULL, NULL, 0));
	struct ibv_qp *ud;

	t_qp_init_attr(&ia, IBV_QPT_RAW_PACKET, cq, cq);
	T_NULL_ERRNO(ibv_create_qp(pd, &ia), EPERM);
	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	ud = T_NONNULL(ibv_create_qp(pd, &ia));
	T_NULL_ERRNO(ibv_create_flow(ud, &fa), EPERM);
	T_OK(ibv_destroy_qp(ud));
	T_OK(ibv_destroy_cq(cq));
	T_OK(ibv_dealloc_pd(pd));
}

/* Connected as root, then an ordinary user for good: the connection's
 * past is nothing to go by. */
static int dropped(int sock, void *arg)
{
	struct srd_admin_link_add_req req = { .name = "srdcaller0",
					      .netdev = "lo" };
	struct t_dev d;
	int fd;

	(void)sock;
	(void)arg;
	t_dev_open(&d);
	fd = t_connect(t_socket_name());
	T_EQ(t_hello(fd), 0);
	t_become(uid);
	expect_no_raw(d.ctx);
	T_EQ(t_cmd(fd, SRD_ADMIN_LINK_ADD, &req, sizeof(req), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EPERM);
	close(fd);
	t_dev_close(&d);
	return 0;
}

/* Root's helper: opens the device, hands its cmd_fd over, then drops
 * its privileges and waits to be told to go. */
static int root_helper(int sock, void *arg)
{
	struct t_dev d;
	char c = 0;

	(void)arg;
	t_dev_open(&d);
	t_sock_send_fd(sock, d.ctx->cmd_fd, &c, 1);
	t_become(uid);
	t_sock_sync(sock);
	t_sock_recv(sock, &c, 1);
	t_dev_close(&d);
	return 0;
}

/* A process of the user's own: opens the device, hands its cmd_fd over
 * (it is close-on-exec: the importer's copy keeps the context), and
 * execs a set-uid-root program that outlives the test's checks. */
static int exporter_execs(int sock, void *arg)
{
	struct t_dev d;
	char c = 0;

	(void)arg;
	t_become(uid);
	t_dev_open(&d);
	t_sock_send_fd(sock, d.ctx->cmd_fd, &c, 1);
	t_sock_recv(sock, &c, 1);
	execl(suid_sleep, "sleep", "60", (char *)NULL);
	T_FAIL("exec %s: %s", suid_sleep, t_errname(errno));
	return 1;
}

/* The importer: the context, never its exporter's rights. */
static int importer(int sock, void *arg)
{
	struct ibv_context *ctx;
	char c;
	int fd;

	(void)arg;
	fd = t_sock_recv_fd(sock, &c, 1);
	t_become(uid);
	t_sock_sync(sock); /* the exporter has changed by now */
	ctx = T_NONNULL(ibv_import_device(fd));
	expect_no_raw(ctx);
	T_OK(ibv_close_device(ctx));
	return 0;
}

/* Pass the exporter's cmd_fd on to a new importer and run both. */
static void exported(int (*exporter)(int, void *), bool execs)
{
	struct t_child e, i;
	char c = 0;
	int fd;

	t_fork(&e, exporter, NULL);
	fd = t_sock_recv_fd(e.fd, &c, 1);
	t_fork(&i, importer, NULL);
	t_sock_send_fd(i.fd, fd, &c, 1);
	close(fd);
	if (execs) {
		t_sock_send(e.fd, &c, 1);
		/* Until the exporter runs the set-uid program. */
		T_ASSERT(t_wait_euid(e.pid, 0));
	} else {
		t_sock_sync(e.fd); /* the helper is root no more */
	}
	t_sock_sync(i.fd);
	T_EQ(t_child_wait(&i, 30000), 0);
	if (execs) {
		kill(e.pid, SIGKILL);
		waitpid(e.pid, NULL, 0);
	} else {
		t_sock_send(e.fd, &c, 1);
		T_EQ(t_child_wait(&e, 30000), 0);
	}
}

int main(void)
{
	struct t_child c;
	struct t_dev d;

	t_init("caller_rights");
	if (geteuid())
		t_skip("not root: needs a root daemon and another user");
	uid = t_user("srdcalleruser");
	t_dev_open(&d); /* the daemon is root's; root may */
	{
		struct ibv_cq *cq = t_cq_create(&d, 16, NULL);
		struct ibv_qp *qp = t_raw_qp_create(&d, cq);

		if (!qp)
			T_FAIL("raw QP as root: %s", t_errname(errno));
		T_OK(ibv_destroy_qp(qp));
		T_OK(ibv_destroy_cq(cq));
	}
	t_log("connected as root, then a user");
	t_fork(&c, dropped, NULL);
	T_EQ(t_child_wait(&c, 30000), 0);
	t_log("imported from root's helper, which then dropped root");
	exported(root_helper, false);
	t_log("imported from a process that then runs a set-uid program");
	t_suid_copy("\"$(command -v sleep)\"", "sleep", suid_sleep,
		    sizeof(suid_sleep));
	exported(exporter_execs, true);
	t_suid_remove(suid_sleep);
	t_dev_close(&d);
	return 0;
}
