/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_cpu.h"

#define DCPU_MAX_INODES 256

/*
 * The daemon listens on an abstract UNIX socket, "@name" in
 * /proc/net/unix, and the sockets it accepts carry the same name.  Collect
 * their inodes; whoever holds one of them is the daemon.
 */
static int dcpu_socket_inodes(unsigned long *ino, int max)
{
	const char *name = getenv("SOFTRDMA_SOCKET");
	char line[512], want[256];
	int n = 0;
	FILE *f;

	snprintf(want, sizeof(want), "@%s", name && *name ? name : "softrdma");
	f = fopen("/proc/net/unix", "re");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char path[256] = "";
		unsigned long inode;

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &inode,
			   path) != 2)
			continue;
		if (!strcmp(path, want))
			ino[n++] = inode;
	}
	fclose(f);
	return n;
}

static bool dcpu_holds(pid_t pid, const unsigned long *ino, int n)
{
	char dir[64], link[64];
	struct dirent *de;
	unsigned long v;
	bool found = false;
	ssize_t len;
	DIR *d;
	int i;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &v) != 1)
			continue;
		for (i = 0; i < n; i++)
			found |= v == ino[i];
	}
	closedir(d);
	return found;
}

static bool dcpu_is_named(pid_t pid, const char *comm)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, comm);
}

pid_t daemon_find_pid(void)
{
	unsigned long ino[DCPU_MAX_INODES];
	pid_t self = getpid(), found = -1, any = -1;
	struct dirent *de;
	int n;
	DIR *d;

	n = dcpu_socket_inodes(ino, DCPU_MAX_INODES);
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid == self || !dcpu_is_named(pid, "softrdmad"))
			continue;
		/* Several daemons (tests use private sockets): prefer the
		 * one holding our socket name. */
		if (n && dcpu_holds(pid, ino, n)) {
			found = pid;
			break;
		}
		if (any < 0)
			any = pid;
	}
	closedir(d);
	return found >= 0 ? found : any;
}

/* utime + stime of pid, in clock ticks; -1 if unreadable. */
static long long dcpu_ticks(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024];
	const char *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: skip past the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* Fields 3..13 precede utime (14) and stime (15). */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return -1;
	return (long long)(ut + st);
}

double daemon_cpu_percent(pid_t pid, double secs)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec t0, t1, req;
	long long a, b;
	double el;

	if (pid <= 0 || hz <= 0)
		return -1;
	a = dcpu_ticks(pid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	req.tv_sec = (time_t)secs;
	req.tv_nsec = (long)((secs - req.tv_sec) * 1e9);
	while (nanosleep(&req, &req))
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b = dcpu_ticks(pid);
	if (a < 0 || b < 0)
		return -1;
	el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 100.0 * (b - a) / hz / el;
}
