/* SPDX-License-Identifier: MIT */
/*
 * A placement ring (PLACE_SETUP) is given only to the process whose
 * memory the context reaches: the ring carries what the device writes
 * into that memory (staged bytes of memory on demand), so whoever holds
 * it sees them.  Root starts the daemon; E (one user) opens the device
 * with /proc/self/mem access and passes its connection on:
 *   - I, another user who received the connection, asks: EPERM;
 *   - a child E forked, which inherited it, asks: EPERM;
 *   - E itself asks: it gets the ring (one descriptor), and a second
 *     request is EBUSY.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/place.h"
#include "common/proto.h"
#include "t_util.h"
#include "tests/unit/t_proto.h"

static uid_t ua, ub;

static int place_setup(int fd, int *rfd)
{
	struct srd_place_setup_req req = { .token_addr = (uintptr_t)&ua };
	struct srd_place_setup_rep rep = { 0 };
	int rfds[1] = { -1 }, nrfds = 1, err;

	err = t_cmd(fd, SRD_CMD_PLACE_SETUP, &req, sizeof(req), NULL, 0, &rep,
		    sizeof(rep), NULL, rfds, &nrfds);
	if (rfd)
		*rfd = nrfds ? rfds[0] : -1;
	else if (nrfds && rfds[0] >= 0)
		close(rfds[0]);
	return err;
}

static int child_asks(int sock, void *arg)
{
	int fd = *(const int *)arg;

	(void)sock;
	T_EQ(place_setup(fd, NULL), -EPERM);
	return 0;
}

static int exporter(int sock, void *arg)
{
	struct t_child c;
	struct t_dev d;
	char b = 0;
	int fd, ring;

	(void)arg;
	t_become(ua);
	setenv("SOFTRDMA_MEM_ACCESS", "procmem", 1);
	t_dev_open(&d);
	fd = d.ctx->cmd_fd;
	t_sock_send_fd(sock, fd, &b, 1);
	t_sock_recv(sock, &b, 1); /* the importer was refused */
	t_fork(&c, child_asks, &fd);
	T_EQ(t_child_wait(&c, 30000), 0);
	T_EQ(place_setup(fd, &ring), 0);
	T_GE(ring, 0);
	close(ring);
	T_EQ(place_setup(fd, NULL), -EBUSY);
	t_dev_close(&d);
	return 0;
}

static int importer(int sock, void *arg)
{
	char b;
	int fd;

	(void)arg;
	fd = t_sock_recv_fd(sock, &b, 1);
	t_become(ub);
	T_EQ(place_setup(fd, NULL), -EPERM);
	close(fd);
	return 0;
}

int main(void)
{
	struct t_child e, i;
	struct t_dev d;
	char b = 0;
	int fd;

	t_init("place_setup_rights");
	if (geteuid())
		t_skip("not root: runs as two users");
	ua = t_user("srdplacea");
	ub = t_user("srdplaceb");
	t_dev_open(&d); /* a root daemon, as the system's */
	t_fork(&e, exporter, NULL);
	fd = t_sock_recv_fd(e.fd, &b, 1);
	t_fork(&i, importer, NULL);
	t_sock_send_fd(i.fd, fd, &b, 1);
	close(fd);
	T_EQ(t_child_wait(&i, 30000), 0);
	t_sock_send(e.fd, &b, 1);
	T_EQ(t_child_wait(&e, 30000), 0);
	t_dev_close(&d);
	t_pass();
}
