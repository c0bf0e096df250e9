/* SPDX-License-Identifier: MIT */
/* Socket activation (LISTEN_FDS), without libsystemd. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/activation.h"

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int srd_listen_fds(void)
{
	const char *pid_s = getenv("LISTEN_PID");
	const char *fds_s = getenv("LISTEN_FDS");
	unsigned long pid, n;
	int ret = 0;

	if (!pid_s || !fds_s)
		goto out;
	if (parse_uint(pid_s, INT_MAX, &pid) ||
	    parse_uint(fds_s, INT_MAX - SRD_LISTEN_FDS_START, &n)) {
		ret = -EINVAL;
		goto out;
	}
	/* Meant for another process (a parent that exec'd us by way of a
	 * wrapper that forked): not ours. */
	if ((pid_t)pid != getpid())
		goto out;
	for (unsigned long i = 0; i < n; i++) {
		int fd = SRD_LISTEN_FDS_START + (int)i;
		int flags = fcntl(fd, F_GETFD);

		if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
			ret = -errno;
			goto out;
		}
	}
	ret = (int)n;
out:
	/* Children (nothing today) must not take them for theirs. */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return ret;
}

int srd_activated_socket(int fd, char *name, size_t size)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int type, listening, flags;
	socklen_t ol = sizeof(type);
	size_t n;

	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return -errno;
	if (sa.sun_family != AF_UNIX)
		return -EAFNOSUPPORT;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &ol) < 0)
		return -errno;
	/* ListenStream= would give SOCK_STREAM: clients could not talk to
	 * it, so refuse it at once rather than serve nobody. */
	if (type != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;
	ol = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ol) < 0)
		return -errno;
	if (!listening)
		return -EINVAL;
	if (len <= offsetof(struct sockaddr_un, sun_path) + 1 ||
	    sa.sun_path[0] != '\0')
		return -EINVAL;
	n = len - offsetof(struct sockaddr_un, sun_path) - 1;
	if (n + 1 > size)
		return -ENAMETOOLONG;
	memcpy(name, sa.sun_path + 1, n);
	name[n] = '\0';
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}
