/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/proto.h"
#include "t_assert.h"
#include "t_proxy.h"
#include "t_util.h"

#define T_PROXY_CONNS 8

static struct {
	pthread_t thread;
	bool running;
	int listen_fd;
	int stop_pipe[2];
	char daemon_name[108];
	char name[108];
	t_proxy_fn *fn;
	void *arg;
	/* [i][0]: the library's end, [i][1]: the daemon's; -1 when free */
	int conn[T_PROXY_CONNS][2];
} px;

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	T_ASSERT(n + 1 <= sizeof(sa->sun_path));
	memcpy(sa->sun_path + 1, name, n);
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static void conn_close(int i)
{
	close(px.conn[i][0]);
	close(px.conn[i][1]);
	px.conn[i][0] = px.conn[i][1] = -1;
}

static void conn_open(void)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, px.daemon_name);
	int lib, up, i;

	lib = accept4(px.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (lib < 0)
		return;
	up = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (up < 0 || connect(up, (struct sockaddr *)&sa, len) < 0) {
		t_log("proxy: cannot reach the daemon: %s", strerror(errno));
		if (up >= 0)
			close(up);
		close(lib);
		return;
	}
	for (i = 0; i < T_PROXY_CONNS; i++) {
		if (px.conn[i][0] < 0) {
			px.conn[i][0] = lib;
			px.conn[i][1] = up;
			return;
		}
	}
	t_log("proxy: more than %d connections", T_PROXY_CONNS);
	close(up);
	close(lib);
}

/*
 * OPEN_DEVICE binds the context to the fd it passes last, which must be a
 * connection to the daemon: here that is the proxy's own end, not the
 * library's.
 */
static void bind_to_proxy_end(int i, const struct srd_msg_hdr *h,
			      const uint8_t *payload, int *fds, int nfds)
{
	const struct srd_open_device_req *req = (const void *)payload;

	if (h->op != SRD_CMD_OPEN_DEVICE || h->len < sizeof(*req) ||
	    !(req->flags & SRD_OPEN_F_BIND) || nfds < 1)
		return;
	close(fds[nfds - 1]);
	fds[nfds - 1] = dup(px.conn[i][1]);
	T_ASSERT(fds[nfds - 1] >= 0);
}

/* One message from side `from` of connection i to the other side. */
static void pass(int i, int from)
{
	_Alignas(8) uint8_t buf[SRD_MSG_MAX];
	struct srd_msg_hdr *h = (struct srd_msg_hdr *)buf;
	int fds[SRD_MAX_FDS];
	int nfds = 0;
	int n;

	n = srd_msg_recv(px.conn[i][from], buf, sizeof(buf), fds, &nfds,
			 SRD_MAX_FDS);
	if (n <= 0) {
		conn_close(i);
		return;
	}
	if (from == 0)
		bind_to_proxy_end(i, h, buf + sizeof(*h), fds, nfds);
	if (from == 1 && px.fn)
		px.fn(h, buf + sizeof(*h), sizeof(buf) - sizeof(*h), px.arg);
	if (srd_msg_send(px.conn[i][!from], h, buf + sizeof(*h), fds, nfds) < 0)
		conn_close(i);
	srd_close_fds(fds, nfds);
}

static void *proxy_main(void *unused)
{
	struct pollfd p[2 + 2 * T_PROXY_CONNS];
	int i, n;

	for (;;) {
		p[0] = (struct pollfd){ .fd = px.stop_pipe[0],
					.events = POLLIN };
		p[1] = (struct pollfd){ .fd = px.listen_fd, .events = POLLIN };
		for (i = 0; i < 2 * T_PROXY_CONNS; i++)
			p[2 + i] = (struct pollfd){ .fd = px.conn[i / 2][i % 2],
						    .events = POLLIN };
		n = poll(p, 2 + 2 * T_PROXY_CONNS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			conn_open();
		for (i = 0; i < 2 * T_PROXY_CONNS; i++) {
			if (p[2 + i].fd >= 0 && p[2 + i].revents &&
			    px.conn[i / 2][i % 2] == p[2 + i].fd)
				pass(i / 2, i % 2);
		}
	}
	return NULL;
}

void t_proxy_start(t_proxy_fn *fn, void *arg)
{
	struct sockaddr_un sa;
	socklen_t len;
	int i;

	T_ASSERT(!px.running);
	snprintf(px.daemon_name, sizeof(px.daemon_name), "%s", t_socket_name());
	snprintf(px.name, sizeof(px.name), "%.90s.proxy", px.daemon_name);
	px.fn = fn;
	px.arg = arg;
	for (i = 0; i < T_PROXY_CONNS; i++)
		px.conn[i][0] = px.conn[i][1] = -1;
	T_ASSERT(pipe2(px.stop_pipe, O_CLOEXEC) == 0);
	px.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	T_ASSERT(px.listen_fd >= 0);
	len = abstract_addr(&sa, px.name);
	T_ASSERT(bind(px.listen_fd, (struct sockaddr *)&sa, len) == 0);
	T_ASSERT(listen(px.listen_fd, 8) == 0);
	T_ASSERT(pthread_create(&px.thread, NULL, proxy_main, NULL) == 0);
	px.running = true;
	setenv("SOFTRDMA_SOCKET", px.name, 1);
}

void t_proxy_stop(void)
{
	int i;

	if (!px.running)
		return;
	T_ASSERT(write(px.stop_pipe[1], "x", 1) == 1);
	pthread_join(px.thread, NULL);
	for (i = 0; i < T_PROXY_CONNS; i++)
		if (px.conn[i][0] >= 0)
			conn_close(i);
	close(px.listen_fd);
	close(px.stop_pipe[0]);
	close(px.stop_pipe[1]);
	px.running = false;
	setenv("SOFTRDMA_SOCKET", px.daemon_name, 1);
}
