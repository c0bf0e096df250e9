/* SPDX-License-Identifier: MIT */
/*
 * The connection to softrdmad: its abstract socket (as the verbs library
 * finds it), starting the daemon when nobody answers, HELLO, and one
 * synchronous request at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "libcommon/daemon_spawn.h"
#include "tools/softrdma/softrdma.h"

#ifndef SRD_INSTALL_BINDIR
#define SRD_INSTALL_BINDIR "/usr/local/bin"
#endif
#define START_TIMEOUT_MS 3000

extern char **environ;

static int sock = -1;

const char *conn_socket_name(void)
{
	const char *s = opt.socket ? opt.socket : getenv(SRD_SOCKET_ENV);

	return s && *s ? s : SRD_SOCKET_DEFAULT;
}

static int try_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd, err;

	if (!n || n + 1 > sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path + 1, name, n); /* abstract: leading NUL */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa,
		    offsetof(struct sockaddr_un, sun_path) + 1 + n)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The daemon to start: $SOFTRDMAD, next to this program, the install
 * directory, else whatever PATH finds. */
static bool daemon_path(char *buf, size_t size)
{
	const char *env = getenv(SRD_DAEMON_ENV);
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return true;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, size, "%s/softrdmad", self) <
				    size &&
			    !access(buf, X_OK))
				return true;
		}
	}
	if ((size_t)snprintf(buf, size, "%s/softrdmad", SRD_INSTALL_BINDIR) <
		    size &&
	    !access(buf, X_OK))
		return true;
	snprintf(buf, size, "softrdmad");
	return false;
}

/* As the verbs library does: a detached daemon that exits after ten idle
 * minutes (or never, once a device is added at run time). */
static pid_t spawn_daemon(const char *name)
{
	char path[PATH_MAX];
	bool found = daemon_path(path, sizeof(path));

	return srd_daemon_spawn(path, !found, name);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int connect_or_start(const char *name)
{
	unsigned int waited = 0;
	pid_t child;
	int fd;

	fd = try_connect(name);
	if (fd >= 0 || opt.no_start || (fd != -ECONNREFUSED && fd != -ENOENT))
		return fd;
	child = spawn_daemon(name);
	if (child < 0)
		return fd;
	while (waited < START_TIMEOUT_MS) {
		/* The launcher exits once the daemon has detached. */
		if (child > 0 && waitpid(child, NULL, WNOHANG) != 0)
			child = 0;
		fd = try_connect(name);
		if (fd >= 0 || (fd != -ECONNREFUSED && fd != -ENOENT))
			break;
		sleep_ms(10);
		waited += 10;
	}
	if (child > 0)
		waitpid(child, NULL, WNOHANG);
	return fd;
}

int conn_open(void)
{
	struct srd_hello_req req = { .version = SRD_PROTO_VERSION,
				     .pid = (uint32_t)getpid() };
	struct srd_hello_rep rep;
	size_t got;
	int err;

	sock = connect_or_start(conn_socket_name());
	if (sock < 0) {
		err = sock;
		fprintf(stderr, "softrdma: cannot reach softrdmad at @%s: %s\n",
			conn_socket_name(), strerror(-err));
		return err;
	}
	err = conn_cmd(SRD_CMD_HELLO, &req, sizeof(req), &rep, sizeof(rep),
		       &got);
	if (!err && got < sizeof(rep))
		err = -EPROTO;
	if (err) {
		fprintf(stderr, "softrdma: softrdmad at @%s: %s%s\n",
			conn_socket_name(), strerror(-err),
			err == -EPROTONOSUPPORT ? " (daemon of another version)"
						: "");
		conn_close();
	}
	return err;
}

void conn_close(void)
{
	if (sock >= 0)
		close(sock);
	sock = -1;
}

int conn_cmd(uint32_t op, const void *req, size_t req_len, void *rep,
	     size_t rep_size, size_t *got)
{
	union {
		struct srd_msg_hdr h;
		uint8_t b[SRD_MSG_MAX];
	} buf;
	struct srd_msg_hdr h = { .op = op, .len = (uint32_t)req_len };
	int fds[SRD_MAX_FDS];
	int nfds = 0, n;
	size_t len;

	*got = 0;
	if (sock < 0)
		return -ENOTCONN;
	n = srd_msg_send(sock, &h, req, NULL, 0);
	if (n >= 0)
		n = srd_msg_recv(sock, buf.b, sizeof(buf), fds, &nfds,
				 SRD_MAX_FDS);
	srd_close_fds(fds, nfds);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return n;
	if (buf.h.op != op)
		return -EPROTO;
	/* An error may come with a payload (a reason) too. */
	len = buf.h.len < rep_size ? buf.h.len : rep_size;
	if (len)
		memcpy(rep, buf.b + sizeof(buf.h), len);
	*got = len;
	if (buf.h.status)
		return buf.h.status < 0 ? buf.h.status : -EPROTO;
	return 0;
}
