/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/msg.h"
#include "tests/unit/t_core.h"

struct srd_client *t_core_client(struct t_core *t)
{
	/* Our own memory is what pvm MRs reach, through /proc/self/mem. */
	struct srd_open_device_req open_req = { .mem_access = SRD_MEM_PROCMEM };
	static struct srd_rep rp;
	struct srd_client *c = calloc(1, sizeof(*c));
	int sv[2], mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	T_ASSERT(c);
	T_ASSERT(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	c->d = &t->d;
	c->fd = sv[0];
	t->peer = sv[1];
	c->async_wfd = -1;
	c->trace_fd = -1;
	c->mem = client_mem_new();
	c->pid = getpid();
	c->hello = true;
	list_add_tail(&t->d.clients, &c->node);
	t->d.nclients++;
	T_ASSERT(mem_fd >= 0);
	T_EQ(t_core_cmd(c, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req),
			&mem_fd, 1, &rp),
	     0);
	T_EQ(c->mem->kind, SRD_MEM_PROCMEM);
	T_EQ(rp.nfds, 3);
	t->async_fd = rp.fds[0];
	T_ASSERT(!fcntl(t->async_fd, F_SETFL, O_NONBLOCK));
	return c;
}

void t_core_init(struct t_core *t)
{
	struct srd_options o = { .socket_name = "unused", .spin_us = 50 };

	memset(t, 0, sizeof(*t));
	T_EQ(daemon_init(&t->d, &o, -1), 0);
	t->c = t_core_client(t);
}

void t_core_fini(struct t_core *t)
{
	daemon_fini(&t->d);
}

int t_core_cmd(struct srd_client *c, uint32_t op, const void *req, uint32_t len,
	       int *fds, int nfds, struct srd_rep *rp)
{
	/* Sent by this process, as the kernel would say of a message. */
	struct srd_req rq = { .op = op,
			      .data = req,
			      .len = len,
			      .fds = fds,
			      .nfds = nfds,
			      .sender = { .known = true,
					  .pid = getpid(),
					  .uid = geteuid(),
					  .gid = getegid() } };
	int ret;

	rp->len = 0;
	rp->nfds = 0;
	rp->keep_mask = 0;
	c->sender = rq.sender;
	ret = dispatch(c, &rq, rp);
	c->sender.known = false;
	srd_close_fds(fds, nfds);
	if (ret) {
		T_EQ(rp->nfds, 0); /* errors hand out nothing */
		return ret;
	}
	/* The caller gets its own copy of what the daemon keeps. */
	for (int i = 0; i < rp->nfds; i++)
		if (rp->keep_mask & (1u << i))
			rp->fds[i] = fcntl(rp->fds[i], F_DUPFD_CLOEXEC, 0);
	return 0;
}
