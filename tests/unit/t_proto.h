/* SPDX-License-Identifier: MIT */
/*
 * A raw command-channel client for the daemon's unit tests: start a private
 * softrdmad, connect, send requests, check replies.
 */
#ifndef SOFTRDMA_TESTS_UNIT_T_PROTO_H
#define SOFTRDMA_TESTS_UNIT_T_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "common/proto.h"
#include "common/ring.h"
#include "t_assert.h"

struct t_daemon {
	pid_t pid;
	char name[64];
};

/* Start softrdmad --foreground on a socket name unique to this test and
 * wait until it accepts connections.  extra: more arguments, NULL ended. */
void t_daemon_start(struct t_daemon *td, const char *const *extra);
/* SIGTERM and reap it; returns its exit status (0 on a clean exit). */
int t_daemon_stop(struct t_daemon *td);

int t_connect(const char *name);

/* One request and its reply.  Returns the reply's status (0 or -errno);
 * a broken connection fails the test.  rep/repsz may be NULL/0; *replen
 * and the reply fds are returned when asked for. */
int t_cmd(int fd, uint32_t op, const void *req, uint32_t len, const int *fds,
	  int nfds, void *rep, uint32_t repsz, uint32_t *replen, int *rfds,
	  int *nrfds);

/* One sendmsg of len bytes with nfds (up to T_RAW_MAX_FDS) descriptors,
 * bypassing the framing: for malformed messages.  Fails the test unless
 * all of it went. */
#define T_RAW_MAX_FDS 300
void t_raw_send(int fd, const void *buf, size_t len, const int *fds, int nfds);

/* A connected client with an opened device. */
struct t_client {
	int fd;
	int async_fd;
	int doorbell_fd;
	int dev_page_fd;
};
int t_hello(int fd);
void t_client_open(struct t_client *c, const char *name);
void t_client_close(struct t_client *c);

/* Objects: return a handle (>= 0) or a negative errno. */
int64_t t_alloc_pd(int fd);
int t_destroy(int fd, uint32_t op, uint32_t handle);
int64_t t_create_cq(int fd, uint32_t cqe, uint32_t channel,
		    struct srd_create_cq_rep *rep, int *memfd);
/* An MR over a fresh sealed memfd of len bytes (page multiple), mapped
 * into this process at *map. */
int64_t t_reg_mr(int fd, uint32_t pd, size_t len, uint32_t access,
		 struct srd_reg_mr_rep *rep, void **map);
int64_t t_create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
		    enum ibv_qp_type type, const struct ibv_qp_cap *cap,
		    struct srd_create_qp_rep *rep, int *memfd);
int t_modify_qp(int fd, uint32_t qp, const struct ibv_qp_attr *attr,
		uint32_t mask, uint32_t *new_state);

/* Resource use of a process. */
int t_fd_count(pid_t pid);
long t_rss_pages(pid_t pid);
/* Mappings of a process (a leaked MR or ring shows here, not in RSS). */
int t_map_count(pid_t pid);
/* The fd count once it stopped changing (connections being closed). */
int t_fd_count_settled(pid_t pid);
/* Wait (up to 3 s) for the fd count to be want, else fail. */
void t_expect_fds(pid_t pid, int want);
/* Open fds of this process (to check nothing came back unasked). */
int t_self_fd_count(void);

#endif
