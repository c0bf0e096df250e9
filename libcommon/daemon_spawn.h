/* SPDX-License-Identifier: MIT */
/*
 * Starting softrdmad for a client that found none on its socket: the
 * libraries and the softrdma tool start it the same way.
 */
#ifndef SOFTRDMA_LIBCOMMON_DAEMON_SPAWN_H
#define SOFTRDMA_LIBCOMMON_DAEMON_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Start the daemon at path (looked up in PATH when search) serving the
 * abstract socket name, detached: a session of its own, /dev/null for
 * stdin, stdout and stderr and no other descriptor of ours (a test harness
 * waits for its pipes to close), exiting after ten idle minutes.  In a
 * set-uid or set-capability program (AT_SECURE) the daemon gets an empty
 * environment and PATH is never searched (-ENOENT).  Returns its first pid
 * or -errno.
 */
pid_t srd_daemon_spawn(const char *path, bool search, const char *name);

#endif
