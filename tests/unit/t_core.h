/* SPDX-License-Identifier: MIT */
/* The daemon core in the test's own process: a daemon without a socket
 * and one client whose requests go straight to dispatch(). */
#ifndef SOFTRDMA_TESTS_UNIT_T_CORE_H
#define SOFTRDMA_TESTS_UNIT_T_CORE_H

#include "daemon/core/core.h"
#include "tests/unit/t_proto.h"

struct t_core {
	struct srd_daemon d;
	struct srd_client *c;
	int peer;     /* the other end of the client's socket */
	int async_fd; /* read end of the client's async event pipe */
};

void t_core_init(struct t_core *t);
void t_core_fini(struct t_core *t);
/* A second client of the same daemon. */
struct srd_client *t_core_client(struct t_core *t);
/* Run one request; the reply (payload, fds the caller now owns) in rp.
 * Returns the status. */
int t_core_cmd(struct srd_client *c, uint32_t op, const void *req, uint32_t len,
	       int *fds, int nfds, struct srd_rep *rp);

#endif
