/* SPDX-License-Identifier: MIT */
/*
 * The command connection: finding the daemon's abstract socket, starting
 * softrdmad when nobody listens there, and synchronous request/reply.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/proto.h"
#include "libcommon/daemon_conn.h"
#include "libcommon/daemon_spawn.h"

#ifndef SRD_INSTALL_BINDIR
#define SRD_INSTALL_BINDIR "/usr/local/bin"
#endif

#define SRD_START_TIMEOUT_MS 3000

extern char **environ;

/* A name set by the user, or NULL for the defaults. */
static const char *socket_env(void)
{
	const char *s = getenv(SRD_SOCKET_ENV);

	return s && *s ? s : NULL;
}

/*
 * Whoever answers on a name gets our memory (memfds) and sees our work, so
 * it must be the system's daemon (root) or our own user's.  Anyone can bind
 * an abstract name: a daemon of another user is refused, before a single
 * byte is sent to it.
 */
static int check_peer(int fd, const char *name)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	uid_t me = geteuid();

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	if (cr.uid == 0 || cr.uid == me)
		return 0;
	fprintf(stderr,
		"softrdma: refusing the device daemon on socket @%s: it runs "
		"as uid %u, not as root or as uid %u\n",
		name, (unsigned int)cr.uid, (unsigned int)me);
	return -EACCES;
}

static int try_connect(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	int fd, err;

	if (n + 1 > sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/* Abstract namespace: a leading NUL, no terminator. */
	memcpy(sa.sun_path + 1, name, n);
	len = offsetof(struct sockaddr_un, sun_path) + 1 + n;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = check_peer(fd, name);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static bool is_executable(const char *path)
{
	return access(path, X_OK) == 0;
}

int srd_daemon_path(char *buf, size_t size)
{
	const char *env = getenv(SRD_DAEMON_ENV);
	Dl_info info;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return 0;
	}
	/* Next to this library: <dir>/../bin/softrdmad, in the build tree
	 * as once installed. */
	if (dladdr((void *)srd_daemon_path, &info) && info.dli_fname) {
		char dir[PATH_MAX];
		char *slash;

		if (realpath(info.dli_fname, dir)) {
			slash = strrchr(dir, '/');
			if (slash) {
				*slash = '\0';
				if ((size_t)snprintf(buf, size,
						     "%s/../bin/softrdmad",
						     dir) < size &&
				    is_executable(buf))
					return 0;
			}
		}
	}
	if ((size_t)snprintf(buf, size, "%s/softrdmad", SRD_INSTALL_BINDIR) <
		    size &&
	    is_executable(buf))
		return 0;
	snprintf(buf, size, "softrdmad");
	return -ENOENT;
}

/* Start a daemon; it detaches itself.  Returns its first pid or -errno. */
static pid_t spawn_daemon(const char *name)
{
	char path[PATH_MAX];
	bool search = srd_daemon_path(path, sizeof(path)) < 0;

	return srd_daemon_spawn(path, search, name);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool nobody_there(int err)
{
	return err == -ECONNREFUSED || err == -ENOENT;
}

/* Nobody listens on name: start a daemon there and connect to it. */
static int start_and_connect(const char *name)
{
	unsigned int waited = 0, step = 2;
	pid_t child;
	int fd;

	child = spawn_daemon(name);
	if (child < 0)
		return -ECONNREFUSED;
	for (;;) {
		/* Reap the launcher as soon as it exits (the daemon forks
		 * away from it); a foreground daemon is simply left alone. */
		if (child > 0 && waitpid(child, NULL, WNOHANG) != 0)
			child = 0;
		fd = try_connect(name);
		if (!nobody_there(fd))
			break;
		if (waited >= SRD_START_TIMEOUT_MS)
			break;
		sleep_ms(step);
		waited += step;
		if (step < 50)
			step *= 2;
	}
	for (int i = 0; child > 0 && i < 50; i++) {
		if (waitpid(child, NULL, WNOHANG) != 0)
			break;
		sleep_ms(2);
	}
	return fd;
}

/*
 * Which daemon: the one SOFTRDMA_SOCKET names; else the system's (root's,
 * on the plain default name) when one runs; else, for root, a new system
 * daemon, and for anyone else one of their own on "softrdma.<uid>".
 */
static int connect_or_start(void)
{
	const char *name = socket_env();
	char own[64];
	int fd;

	if (!name) {
		fd = try_connect(SRD_SOCKET_DEFAULT);
		if (!nobody_there(fd))
			return fd;
		if (geteuid() == 0)
			return start_and_connect(SRD_SOCKET_DEFAULT);
		snprintf(own, sizeof(own), "%s.%u", SRD_SOCKET_DEFAULT,
			 (unsigned int)geteuid());
		name = own;
	}
	fd = try_connect(name);
	if (!nobody_there(fd))
		return fd;
	return start_and_connect(name);
}

/*
 * A daemon at a limit answers the HELLO before it is sent and closes: our
 * send then fails, but its answer waits in the socket.  -EIO when there is
 * none (the daemon went away).
 */
static int refusal(int fd)
{
	struct srd_msg_hdr h;

	if (recv(fd, &h, sizeof(h), MSG_DONTWAIT) == (ssize_t)sizeof(h) &&
	    h.op == SRD_CMD_HELLO && h.status < 0)
		return h.status;
	return -EIO;
}

/* Once per process: an empty device list alone would not say why. */
static void say_refused(int err)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (atomic_flag_test_and_set(&said))
		return;
	fprintf(stderr,
		"softrdma: the device daemon refused a connection of uid %u: "
		"%s (see `softrdma resource show usage`)\n",
		(unsigned int)geteuid(),
		err == -EMFILE ? "this user's connections or descriptors "
				 "are at their limit"
			       : "the daemon's descriptors are taken");
}

int srd_conn_open(struct srd_conn *c)
{
	struct srd_hello_req req = { .version = SRD_PROTO_VERSION,
				     .pid = (uint32_t)getpid() };
	struct srd_hello_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_HELLO,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	int ret;

	c->fd = connect_or_start();
	if (c->fd < 0)
		return c->fd;
	pthread_mutex_init(&c->lock, NULL);
	atomic_init(&c->broken, false);
	c->owner_pid = getpid();
	c->daemon_pid = 0;
	ret = srd_cmd(c, &a);
	if (ret == -EIO)
		ret = refusal(c->fd);
	if (ret == -EMFILE || ret == -ENFILE)
		say_refused(ret);
	if (!ret && rep.version != SRD_PROTO_VERSION)
		ret = -EPROTO;
	if (ret) {
		srd_conn_close(c);
		return ret;
	}
	c->daemon_pid = (pid_t)rep.daemon_pid;
	return 0;
}

void srd_conn_close(struct srd_conn *c)
{
	if (c->fd >= 0) {
		close(c->fd);
		pthread_mutex_destroy(&c->lock);
	}
	c->fd = -1;
}

int srd_cmd(struct srd_conn *c, struct srd_cmd_args *a)
{
	union {
		struct srd_msg_hdr h;
		uint8_t b[SRD_MSG_MAX];
	} buf;
	struct srd_msg_hdr h = { .op = a->op, .len = (uint32_t)a->req_len };
	int fds[SRD_MAX_FDS];
	int nfds = 0;
	int ret;

	a->rep_got = 0;
	a->nrfds = 0;
	if (c->fd < 0)
		return -ENOTCONN;
	if (atomic_load_explicit(&c->broken, memory_order_relaxed))
		return -EIO;
	/* A forked child shares its parent's socket: never use it. */
	if (getpid() != c->owner_pid)
		return -EIO;
	if (a->req_len > SRD_MSG_MAX - sizeof(h))
		return -EINVAL;

	pthread_mutex_lock(&c->lock);
	ret = srd_msg_send(c->fd, &h, a->req, a->fds, a->nfds);
	if (ret >= 0)
		ret = srd_msg_recv(c->fd, buf.b, sizeof(buf), fds, &nfds,
				   SRD_MAX_FDS);
	pthread_mutex_unlock(&c->lock);
	if (ret == 0 || ret == -EPIPE || ret == -ECONNRESET) {
		/* The daemon went away: as on a disassociated uverbs file,
		 * this and every later command fail with EIO. */
		atomic_store(&c->broken, true);
		return -EIO;
	}
	if (ret < 0)
		return ret;
	if (buf.h.op != a->op) {
		srd_close_fds(fds, nfds);
		return -EPROTO;
	}
	if (buf.h.status) {
		srd_close_fds(fds, nfds);
		return buf.h.status < 0 ? buf.h.status : -EPROTO;
	}
	if (buf.h.len < a->rep_len && !a->rep_var) {
		srd_close_fds(fds, nfds);
		return -EPROTO;
	}
	a->rep_got = buf.h.len < a->rep_len ? buf.h.len : a->rep_len;
	if (a->rep_got)
		memcpy(a->rep, buf.b + sizeof(h), a->rep_got);
	if (nfds > a->max_rfds) {
		srd_close_fds(fds + a->max_rfds, nfds - a->max_rfds);
		nfds = a->max_rfds;
	}
	if (nfds)
		memcpy(a->rfds, fds, sizeof(int) * nfds);
	a->nrfds = nfds;
	return 0;
}
