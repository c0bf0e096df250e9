/* SPDX-License-Identifier: MIT */
/*
 * Real users for tests of what one user may do to another (root only).
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
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
