/* SPDX-License-Identifier: MIT */
/*
 * One command connection to softrdmad: what an open /dev/infiniband/uverbsN
 * file is to a kernel provider.  Connecting starts the daemon when none
 * answers.
 */
#ifndef SOFTRDMA_LIBIBVERBS_DAEMON_CONN_H
#define SOFTRDMA_LIBIBVERBS_DAEMON_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct srd_conn {
	int fd;
	pthread_mutex_t lock; /* one command in flight */
	pid_t daemon_pid;
	pid_t owner_pid;    /* the process that connected; a forked child
			  * must not talk on its parent's connection */
	atomic_bool broken; /* the daemon hung up or died: for good */
};

/* One request and its reply. */
struct srd_cmd_args {
	uint32_t op;
	const void *req;
	size_t req_len;
	const int *fds; /* sent with the request */
	int nfds;
	void *rep;	/* reply payload (after the header) */
	size_t rep_len; /* room in rep */
	size_t rep_got; /* out: payload bytes received */
	bool rep_var;	/* a shorter reply is fine (else -EPROTO) */
	int *rfds;	/* out: descriptors received */
	int max_rfds;
	int nrfds;
};

/* Connect (starting the daemon if needed) and say HELLO.  0 or -errno. */
int srd_conn_open(struct srd_conn *c);
void srd_conn_close(struct srd_conn *c);
/* Send one request and wait for its reply.  Returns the reply's status
 * (0 or a negative errno) or a negative errno of the transport.  On
 * error no received descriptor is left open. */
int srd_cmd(struct srd_conn *c, struct srd_cmd_args *a);

/* Internal: the daemon binary to start, into buf.  0 or -ENOENT. */
int srd_daemon_path(char *buf, size_t size);

#endif
