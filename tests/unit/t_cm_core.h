/* SPDX-License-Identifier: MIT */
/*
 * The CM tests that run the daemon inside the test process:
 * CM commands straight to the dispatcher, the engine and the CM pumped
 * after each, so the timers and the MADs can be watched and driven.
 */
#ifndef SOFTRDMA_TESTS_T_CM_CORE_H
#define SOFTRDMA_TESTS_T_CM_CORE_H

#include <sys/socket.h>

#include "common/proto_cm.h"
#include "tests/unit/t_core.h"

/* Called on each pumping pass before the engine runs (may be NULL). */
extern void (*tc_each_pass)(void);

/* Run the engine and the CM of t's daemon until neither has work. */
void tc_pump(struct t_core *t);
/* One command of client c, its reply payload (up to rep_len bytes) into
 * rep, then tc_pump().  Returns the command's status. */
int tc_cmd(struct t_core *t, struct srd_client *c, uint32_t op, const void *req,
	   uint32_t len, void *rep, size_t rep_len);
/* A new rdma_cm id of client c; its handle. */
uint32_t tc_new_id(struct t_core *t, struct srd_client *c, uint32_t ps,
		   uint32_t qp_type);
/* An IPv4 ip:port into ss. */
void tc_sin(struct sockaddr_storage *ss, const char *ip, uint16_t port);

#endif
