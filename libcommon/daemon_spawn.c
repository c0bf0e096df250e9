/* SPDX-License-Identifier: MIT */
/* Starting softrdmad, detached (libcommon/daemon_spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "libcommon/daemon_spawn.h"

pid_t srd_daemon_spawn(const char *path, bool search, const char *name)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *argv[] = { (char *)path,	(char *)"--socket",
			 (char *)name,	(char *)"--idle-exit",
			 (char *)"600", NULL };
	/* A set-uid program (AT_SECURE) hands its caller's environment to
	 * nobody, and looks nothing up in PATH. */
	bool secure = getauxval(AT_SECURE) != 0;
	char *no_env[] = { NULL };
	char **envp = secure ? no_env : environ;
	pid_t pid;
	int err;

	if (secure && search)
		return -ENOENT;

	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
	if (search)
		err = posix_spawnp(&pid, path, &fa, &attr, argv, envp);
	else
		err = posix_spawn(&pid, path, &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return err ? -err : pid;
}
