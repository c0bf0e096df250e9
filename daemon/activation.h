/* SPDX-License-Identifier: MIT */
/*
 * Socket activation: the listening socket systemd (or anything speaking its
 * protocol) hands over as fd 3, with LISTEN_PID and LISTEN_FDS.
 */
#ifndef SRD_DAEMON_ACTIVATION_H
#define SRD_DAEMON_ACTIVATION_H

#include <stddef.h>

/* First descriptor passed, as sd_listen_fds(3) defines it. */
#define SRD_LISTEN_FDS_START 3

/*
 * sd_listen_fds(1) semantics: the number of descriptors passed to this
 * process (0 when LISTEN_PID is not our pid or nothing was passed), or a
 * negative errno for a malformed environment.  The passed descriptors get
 * FD_CLOEXEC; LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES are removed from
 * the environment either way.
 */
int srd_listen_fds(void);

/*
 * Check that fd is what the daemon listens on: a listening AF_UNIX
 * SOCK_SEQPACKET socket bound to an abstract name, which is copied to
 * name (without the leading NUL).  Makes it non-blocking.  0 or -errno
 * (-ESOCKTNOSUPPORT for another type, -EINVAL when not listening or not
 * abstract).
 */
int srd_activated_socket(int fd, char *name, size_t size);

#endif
