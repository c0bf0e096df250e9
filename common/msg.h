/* SPDX-License-Identifier: MIT */
/*
 * Sending and receiving one command-channel message (common/proto.h) with
 * file descriptors attached, over a SOCK_SEQPACKET socket.  Used by both
 * the library and the daemon.
 */
#ifndef SOFTRDMA_COMMON_MSG_H
#define SOFTRDMA_COMMON_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/proto.h"

/*
 * Who sent a message, as the kernel witnessed it when it was sent
 * (SCM_CREDENTIALS, attached by the kernel once the receiver asked with
 * SO_PASSCRED): the sending process, its real uid and gid.  known is
 * false when the message came without them (sent before the receiver
 * asked).
 */
struct srd_msg_cred {
	bool known;
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/*
 * Send h followed by h->len bytes of payload (payload may be NULL when
 * h->len is 0) and nfds descriptors (0..SRD_MAX_FDS) as SCM_RIGHTS, in one
 * datagram.  Returns the number of bytes sent or a negative errno.
 */
int srd_msg_send(int fd, const struct srd_msg_hdr *h, const void *payload,
		 const int *fds, int nfds);

/*
 * Receive one message into buf (header included) and up to maxfds
 * descriptors into fds (close-on-exec); *nfds is set to their count.
 * Returns the number of bytes received, 0 at end of file, or a negative
 * errno: -EMSGSIZE when the message or its descriptors did not fit (any
 * descriptor received with it is closed), -EBADMSG when it is shorter than
 * a header or its length field does not match what arrived.  On error no
 * descriptor is left open and *nfds is 0.
 */
int srd_msg_recv(int fd, void *buf, size_t bufsz, int *fds, int *nfds,
		 int maxfds);

/* The same, also telling who sent the message (cred may be NULL); the
 * receiving socket must have had SO_PASSCRED set when it was sent. */
int srd_msg_recv_cred(int fd, void *buf, size_t bufsz, int *fds, int *nfds,
		      int maxfds, struct srd_msg_cred *cred);

/* Ask the kernel to attach credentials to every message fd receives. */
int srd_msg_pass_cred(int fd);

/* Is fd a unix socket, one that can carry descriptors?  Whoever holds it
 * may keep alive what is in flight in it, a connection's own end among
 * them: the daemon takes none as a trace fd. */
bool srd_fd_unix_socket(int fd);

/* Close n descriptors from fds (negative entries are skipped). */
void srd_close_fds(const int *fds, int n);

#endif
