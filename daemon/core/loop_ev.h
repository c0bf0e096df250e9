/* SPDX-License-Identifier: MIT */
/* Tags of the daemon's own fds in the epoll set; a client's tag is its
 * struct srd_client pointer, never one of these. */
#ifndef SOFTRDMA_DAEMON_LOOP_EV_H
#define SOFTRDMA_DAEMON_LOOP_EV_H

enum {
	SRD_EV_LISTEN = 1,
	SRD_EV_DOORBELL = 2,
	SRD_EV_SIGNAL = 3,
	/* loop_add_fd() sources: SRD_EV_SRC_BASE + slot */
	SRD_EV_SRC_BASE = 16,
	SRD_EV_SRC_MAX = 32,
};

#endif
