/* SPDX-License-Identifier: MIT */
/*
 * Real users for tests of what one user may do to another (root only).
 */
#include <grp.h>
#include <net/if.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t_util.h"

uid_t t_user(const char *name)
{
	char cmd[160];
	struct passwd *pw = getpwnam(name);

	if (!pw) {
		snprintf(cmd, sizeof(cmd),
			 "useradd -M -r -s /usr/sbin/nologin %s "
			 ">/dev/null 2>&1",
			 name);
		if (system(cmd) != 0)
			t_skip("cannot create user %s", name);
		pw = getpwnam(name);
	}
	if (!pw)
		t_skip("no user %s", name);
	return pw->pw_uid;
}

/* As a process the user started: setuid() leaves it non-dumpable, which
 * a login never does (its /proc/self/mem would be root's). */
void t_become(uid_t uid)
{
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(3);
}

void t_own_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (unshare(CLONE_NEWNET))
		t_skip("unshare(CLONE_NEWNET): %s", t_errname(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		T_FAIL("lo of the new namespace: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		T_FAIL("lo up: %s", strerror(errno));
	close(fd);
}

static int nofile_starter(int fd, void *arg)
{
	unsigned int n = *(unsigned int *)arg;
	struct rlimit small = { n, n };
	struct t_dev d;

	T_OK(setrlimit(RLIMIT_NOFILE, &small) ? errno : 0);
	t_dev_open(&d);
	t_sock_sync(fd);
	t_sock_sync(fd);
	t_dev_close(&d);
	return 0;
}

void t_daemon_nofile(struct t_child *st, unsigned int nofile)
{
	t_fork(st, nofile_starter, &nofile);
	t_sock_sync(st->fd);
}

void t_daemon_release(struct t_child *st)
{
	t_sock_sync(st->fd);
	T_EQ(t_child_wait(st, T_WAIT_MS), 0);
}

void t_suid_copy(const char *src, const char *name, char *out, size_t n)
{
	char cmd[1024];

	snprintf(out, n, "/tmp/srd_suid.%d/%s", (int)getpid(), name);
	snprintf(cmd, sizeof(cmd),
		 "d=$(dirname '%s') && mkdir -p \"$d\" && chmod 755 \"$d\" && "
		 "cp %s '%s' && chown 0:0 '%s' && chmod 4755 '%s'",
		 out, src, out, out, out);
	if (system(cmd) != 0)
		T_FAIL("making the set-uid copy %s", out);
}

void t_suid_remove(const char *path)
{
	char dir[256];
	char *slash;

	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}

/* The effective uid of pid, from its status; -1 if unknown. */
static long euid_of(pid_t pid)
{
	char path[64], line[256];
	long euid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4)) {
			char *end;

			strtoul(line + 4, &end, 10);
			euid = strtol(end, NULL, 10);
		}
	if (f)
		fclose(f);
	return euid;
}

bool t_wait_euid(pid_t pid, uid_t euid)
{
	for (int n = 0; n < 500; n++) {
		if (euid_of(pid) == (long)euid)
			return true;
		t_sleep_ms(10);
	}
	return false;
}
