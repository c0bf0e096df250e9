/* SPDX-License-Identifier: MIT */
/* HELLO: version check, ordering; LIST_DEVICES; OPEN_DEVICE and its
 * three fds.  HELLO's pid is the sender's in its own pid namespace (a
 * container's differs from the daemon's view): not checked. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

int main(void)
{
	struct t_daemon td;
	struct srd_hello_req hello = { SRD_PROTO_VERSION, getpid() };
	struct srd_hello_rep hrep;
	struct srd_open_device_req open_req = { 0 };
	union {
		struct srd_list_devices_rep r;
		struct {
			uint8_t hdr[offsetof(struct srd_list_devices_rep, dev)];
			struct srd_device_info dev[SRD_MAX_DEVICES];
		};
	} list;
	uint32_t len;
	int fd, fds[SRD_MAX_FDS], n;
	struct srd_dev_page *page;
	uint64_t one = 1;

	t_daemon_start(&td, NULL);

	/* Nothing but HELLO before HELLO. */
	fd = t_connect(td.name);
	T_ASSERT(fd >= 0);
	T_EQ(t_cmd(fd, SRD_CMD_LIST_DEVICES, NULL, 0, NULL, 0, NULL, 0, NULL,
		   NULL, NULL),
	     -EPROTO);
	hello.version = SRD_PROTO_VERSION + 1;
	T_EQ(t_cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EPROTONOSUPPORT);
	hello.version = SRD_PROTO_VERSION;
	hello.pid = 1; /* as pid 1 of a container would say */
	T_EQ(t_cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello) - 1, NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	T_EQ(t_cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello), NULL, 0, &hrep,
		   sizeof(hrep), &len, NULL, NULL),
	     0);
	T_EQ(len, sizeof(hrep));
	T_EQ(hrep.version, SRD_PROTO_VERSION);
	T_EQ(hrep.daemon_pid, td.pid);
	T_EQ(t_cmd(fd, SRD_CMD_HELLO, &hello, sizeof(hello), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);

	/* Object commands need an opened device. */
	T_EQ(t_alloc_pd(fd), -EPROTO);

	T_EQ(t_cmd(fd, SRD_CMD_LIST_DEVICES, NULL, 0, NULL, 0, &list,
		   sizeof(list), &len, NULL, NULL),
	     0);
	T_EQ(list.r.count, 1);
	T_EQ(len, sizeof(list.r) + sizeof(list.dev[0]));
	T_ASSERT(!strcmp(list.dev[0].name, "softrdma0"));
	T_ASSERT(!strcmp(list.dev[0].netdev, "lo"));
	T_EQ(list.dev[0].index, 0);
	T_EQ(list.dev[0].node_type, IBV_NODE_CA);
	T_EQ(list.dev[0].transport, IBV_TRANSPORT_IB);
	T_ASSERT(list.dev[0].node_guid != 0);

	/* Open: a bad index, unknown trace flags, a trace fd missing. */
	open_req.index = 5;
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req), NULL,
		   0, NULL, 0, NULL, NULL, NULL),
	     -ENODEV);
	open_req.index = 0;
	open_req.trace_flags = 0x80;
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req), NULL,
		   0, NULL, 0, NULL, NULL, NULL),
	     -EINVAL);
	open_req.trace_flags = SRD_TRACE_CQE;
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req), NULL,
		   0, NULL, 0, NULL, NULL, NULL),
	     -EINVAL);
	open_req.trace_flags = 0;
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req), NULL,
		   0, NULL, 0, NULL, fds, &n),
	     0);
	T_EQ(n, 3);
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req), NULL,
		   0, NULL, 0, NULL, NULL, NULL),
	     -EINVAL);

	/* [0] async pipe read end, empty and blocking. */
	T_ASSERT(!(fcntl(fds[0], F_GETFL) & O_NONBLOCK));
	T_ASSERT(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
	T_EQ(read(fds[0], &one, sizeof(one)), -1);
	T_EQ(errno, EAGAIN);
	/* [1] the doorbell eventfd accepts kicks. */
	T_EQ(write(fds[1], &one, sizeof(one)), sizeof(one));
	/* [2] the status page maps read-only only. */
	T_ASSERT(mmap(NULL, SRD_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fds[2], 0) == MAP_FAILED);
	page = mmap(NULL, SRD_PAGE_SIZE, PROT_READ, MAP_SHARED, fds[2], 0);
	T_ASSERT(page != MAP_FAILED);
	T_ASSERT(mprotect(page, SRD_PAGE_SIZE, PROT_READ | PROT_WRITE) != 0);
	T_ASSERT(ftruncate(fds[2], 0) != 0);
	/* An idle daemon sleeps and says so. */
	usleep(100000);
	T_EQ(page->engine_sleeping, 1);
	T_ASSERT(page->sleeps > 0);
	T_ASSERT(t_alloc_pd(fd) >= 0);
	close(fd);

	/* A trace fd is taken. */
	fd = t_connect(td.name);
	T_EQ(t_hello(fd), 0);
	open_req.trace_flags = SRD_TRACE_CQE;
	T_EQ(t_cmd(fd, SRD_CMD_OPEN_DEVICE, &open_req, sizeof(open_req),
		   (int[]){ 2 }, 1, NULL, 0, NULL, fds, &n),
	     0);
	T_EQ(n, 3);
	close(fd);

	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
