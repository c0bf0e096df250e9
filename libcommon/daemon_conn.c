/* SPDX-License-Identifier: MIT */
/*
 * The command connection: finding the daemon's abstract socket, starting
 * softrdmad when nobody listens there, and synchronous request/reply.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
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
/* Room for an abstract socket name and its terminator. */
#define SRD_NAME_LEN 108

extern char **environ;

/* A set-uid or set-capability program (AT_SECURE): its environment
 * belongs to whoever ran it, and is not listened to. */
static bool secure_mode(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* A name set by the user, or NULL for the defaults. */
static const char *socket_env(void)
{
	const char *s = secure_getenv(SRD_SOCKET_ENV);

	return s && *s ? s : NULL;
}

#define NO_UID ((uid_t)-1)

/*
 * Whoever answers on a name gets our memory (memfds) and sees our work, so
 * it must be the system's daemon (root) or our own user's.  Anyone can bind
 * an abstract name: a daemon of another user is refused (-EACCES, its uid
 * in *holder), before a single byte is sent to it.
 */
static int check_peer(int fd, uid_t *holder)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	if (cr.uid == 0 || cr.uid == geteuid())
		return 0;
	*holder = cr.uid;
	return -EACCES;
}

/* A connection to the daemon on name, or -errno: -EACCES with *holder
 * set when another user's process holds the name. */
static int try_connect(const char *name, uid_t *holder)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	int fd, err;

	*holder = NO_UID;
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
	err = check_peer(fd, holder);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static bool squatted(int err, uid_t holder)
{
	return err == -EACCES && holder != NO_UID;
}

static bool is_executable(const char *path)
{
	return access(path, X_OK) == 0;
}

int srd_daemon_path(char *buf, size_t size)
{
	const char *env = secure_getenv(SRD_DAEMON_ENV);
	Dl_info info;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return 0;
	}
	/* Next to this library: <dir>/../bin/softrdmad, in the build tree
	 * as once installed.  Not for a set-uid program, which takes only
	 * the installed daemon. */
	if (!secure_mode() && dladdr((void *)srd_daemon_path, &info) &&
	    info.dli_fname) {
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

/* Start a daemon; it detaches itself.  Returns its first pid or -errno.
 * Only a program that trusts its environment looks it up in PATH. */
static pid_t spawn_daemon(const char *name)
{
	char path[PATH_MAX];
	bool search = srd_daemon_path(path, sizeof(path)) < 0;

	if (search && secure_mode())
		return -ENOENT;
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
static int start_and_connect(const char *name, uid_t *holder)
{
	unsigned int waited = 0, step = 2;
	pid_t child;
	int fd;

	*holder = NO_UID;
	child = spawn_daemon(name);
	if (child < 0)
		return -ECONNREFUSED;
	for (;;) {
		/* Reap the launcher as soon as it exits (the daemon forks
		 * away from it); a foreground daemon is simply left alone. */
		if (child > 0 && waitpid(child, NULL, WNOHANG) != 0)
			child = 0;
		fd = try_connect(name, holder);
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
 * When another user holds the default names, a user's daemon serves on a
 * private name, "softrdma.<uid>.<16 hex digits>", drawn at random: nobody
 * can bind it first.  Other programs of the user find it among the
 * listening sockets of /proc/net/unix, and every holder of a name of that
 * form is checked as any other (a decoy of another user's is skipped).
 * The name this process settled on is kept, so that all its connections
 * go to the same daemon.
 */
#define PRIVATE_HEX 16

struct squat {
	char name[32];
	uid_t uid;
};

struct discovery {
	const char *own; /* "softrdma.<uid>" */
	struct squat sq[2];
	int nsq;
};

static pthread_mutex_t private_lock = PTHREAD_MUTEX_INITIALIZER;
static char private_name[SRD_NAME_LEN];
static atomic_bool warned;

static void note_squat(struct discovery *ds, const char *name, uid_t uid)
{
	if (ds->nsq >= 2)
		return;
	if ((size_t)snprintf(ds->sq[ds->nsq].name, sizeof(ds->sq[0].name), "%s",
			     name) >= sizeof(ds->sq[0].name))
		return;
	ds->sq[ds->nsq].uid = uid;
	ds->nsq++;
}

/* Does line (of /proc/net/unix) show a listening SEQPACKET socket on
 * "<prefix><16 hex>"?  Copies the name to name. */
static bool private_listener(const char *line, const char *prefix, char *name,
			     size_t size)
{
	unsigned int flags, type, state;
	size_t plen = strlen(prefix);
	const char *path;
	int at = 0;

	if (sscanf(line, "%*s %*x %*x %x %x %x %*u %n", &flags, &type, &state,
		   &at) != 3 ||
	    !at)
		return false;
	/* __SO_ACCEPTCON: a listening socket, not one of its accepted. */
	if (!(flags & 0x10000) || type != SOCK_SEQPACKET)
		return false;
	path = line + at;
	if (path[0] != '@' || strncmp(path + 1, prefix, plen))
		return false;
	for (int i = 0; i < PRIVATE_HEX; i++)
		if (!isxdigit((unsigned char)path[1 + plen + i]))
			return false;
	if (path[1 + plen + PRIVATE_HEX] != '\n' &&
	    path[1 + plen + PRIVATE_HEX] != '\0')
		return false;
	if (plen + PRIVATE_HEX + 1 > size)
		return false;
	memcpy(name, path + 1, plen + PRIVATE_HEX);
	name[plen + PRIVATE_HEX] = '\0';
	return true;
}

/* A daemon of ours already serving a private name: its connection, the
 * name in name; else -ENOENT. */
static int find_private(const struct discovery *ds, char *name, size_t size)
{
	char prefix[SRD_NAME_LEN], line[256];
	uid_t holder;
	int fd = -ENOENT;
	FILE *f;

	if ((size_t)snprintf(prefix, sizeof(prefix), "%s.", ds->own) >=
	    sizeof(prefix))
		return -ENAMETOOLONG;
	f = fopen("/proc/net/unix", "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (!private_listener(line, prefix, name, size))
			continue;
		fd = try_connect(name, &holder);
		if (fd >= 0)
			break;
		fd = -ENOENT;
	}
	fclose(f);
	return fd;
}

/* Start a daemon of ours on a private name of our drawing. */
static int start_private(const struct discovery *ds, char *name, size_t size)
{
	uint64_t r;
	uid_t holder;
	int fd = -EAGAIN;

	/* A name taken all the same (drawn by someone else too): another. */
	for (int i = 0; i < 4; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return -errno;
		if ((size_t)snprintf(name, size, "%s.%0*" PRIx64, ds->own,
				     PRIVATE_HEX, r) >= size)
			return -ENAMETOOLONG;
		fd = start_and_connect(name, &holder);
		if (!squatted(fd, holder))
			break;
	}
	return fd;
}

/* Our own user's daemon: on "softrdma.<uid>" unless another user holds
 * that name too, else on a private name. */
static int connect_own(struct discovery *ds)
{
	char name[SRD_NAME_LEN];
	uid_t holder;
	int fd;

	fd = try_connect(ds->own, &holder);
	if (squatted(fd, holder)) {
		note_squat(ds, ds->own, holder);
	} else if (!nobody_there(fd)) {
		return fd;
	} else {
		/* Nobody there: a private daemon started while the name
		 * was held serves us, else a new daemon on the name. */
		fd = find_private(ds, name, sizeof(name));
		if (fd >= 0)
			goto found;
		fd = start_and_connect(ds->own, &holder);
		if (!squatted(fd, holder))
			return fd;
		note_squat(ds, ds->own, holder);
	}
	fd = find_private(ds, name, sizeof(name));
	if (fd < 0)
		fd = start_private(ds, name, sizeof(name));
	if (fd < 0)
		return fd;
found:
	pthread_mutex_lock(&private_lock);
	snprintf(private_name, sizeof(private_name), "%s", name);
	pthread_mutex_unlock(&private_lock);
	return fd;
}

/* Once a process: the names another user holds, and where we went. */
static void warn_squat(const struct discovery *ds, int fd)
{
	char names[2 * SRD_NAME_LEN + 64];
	size_t off = 0;

	if (atomic_exchange(&warned, true))
		return;
	for (int i = 0; i < ds->nsq; i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off,
					"%s@%s (held by uid %u)",
					i ? " and " : "", ds->sq[i].name,
					(unsigned int)ds->sq[i].uid);
	if (fd >= 0) {
		pthread_mutex_lock(&private_lock);
		fprintf(stderr,
			"softrdma: ignoring %s, not root's or uid %u's: "
			"using uid %u's own daemon on @%s\n",
			names, (unsigned int)geteuid(), (unsigned int)geteuid(),
			private_name[0] ? private_name : ds->own);
		pthread_mutex_unlock(&private_lock);
	} else {
		fprintf(stderr,
			"softrdma: ignoring %s, not root's or uid %u's, and "
			"no daemon of uid %u's could be started: %s\n",
			names, (unsigned int)geteuid(), (unsigned int)geteuid(),
			strerror(-fd));
	}
}

/* The private daemon this process uses already, if it still answers. */
static int connect_private_again(void)
{
	char name[SRD_NAME_LEN];
	uid_t holder;
	int fd;

	pthread_mutex_lock(&private_lock);
	snprintf(name, sizeof(name), "%s", private_name);
	pthread_mutex_unlock(&private_lock);
	if (!name[0])
		return -ENOENT;
	fd = try_connect(name, &holder);
	if (fd >= 0)
		return fd;
	/* Gone (idle, or killed): found afresh. */
	pthread_mutex_lock(&private_lock);
	if (!strcmp(private_name, name))
		private_name[0] = '\0';
	pthread_mutex_unlock(&private_lock);
	return -ENOENT;
}

/*
 * The default daemon: the system's (root's, on the plain default name)
 * when one runs; else, for root, a new system daemon, and for anyone else
 * one of their own on "softrdma.<uid>".  A name another user holds is
 * passed over, with one line on stderr: the user's own daemon serves
 * instead, on a private name if "softrdma.<uid>" is held too.
 */
static int connect_default(void)
{
	struct discovery ds = { .nsq = 0 };
	char own[32];
	uid_t holder;
	int fd;

	fd = connect_private_again();
	if (fd >= 0)
		return fd;
	fd = try_connect(SRD_SOCKET_DEFAULT, &holder);
	if (!squatted(fd, holder) && !nobody_there(fd))
		return fd;
	if (!squatted(fd, holder) && geteuid() == 0) {
		fd = start_and_connect(SRD_SOCKET_DEFAULT, &holder);
		if (!squatted(fd, holder))
			return fd;
	}
	if (squatted(fd, holder))
		note_squat(&ds, SRD_SOCKET_DEFAULT, holder);
	snprintf(own, sizeof(own), "%s.%u", SRD_SOCKET_DEFAULT,
		 (unsigned int)geteuid());
	ds.own = own;
	fd = connect_own(&ds);
	if (ds.nsq)
		warn_squat(&ds, fd);
	return fd;
}

/* The daemon SOFTRDMA_SOCKET names (ignored in a set-uid program), else
 * the default one. */
static int connect_or_start(void)
{
	const char *name = socket_env();
	uid_t holder;
	int fd;

	if (!name)
		return connect_default();
	fd = try_connect(name, &holder);
	if (nobody_there(fd))
		fd = start_and_connect(name, &holder);
	if (squatted(fd, holder))
		fprintf(stderr,
			"softrdma: refusing the device daemon on socket @%s: "
			"it runs as uid %u, not as root or as uid %u\n",
			name, (unsigned int)holder, (unsigned int)geteuid());
	return fd;
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
