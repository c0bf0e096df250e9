/* SPDX-License-Identifier: MIT */
/*
 * A command channel in the middle: the library connects to the proxy,
 * which passes every message and its fds on to the test's daemon and
 * back, and lets the test change a reply before the library sees it (a
 * daemon that answers wrongly, which no real one does on demand).
 */
#ifndef SOFTRDMA_TESTS_T_PROXY_H
#define SOFTRDMA_TESTS_T_PROXY_H

#include <stdint.h>

#include "common/proto.h"

/* Sees each reply on its way to the library: it may change the header
 * (status, len up to max) and the payload. */
typedef void t_proxy_fn(struct srd_msg_hdr *h, void *payload, uint32_t max,
			void *arg);

/*
 * Connections opened from now on go through the proxy (SOFTRDMA_SOCKET
 * names it); those opened before still reach the daemon, which must be
 * running already (open a device first).
 */
void t_proxy_start(t_proxy_fn *fn, void *arg);
/* Back to the daemon itself; the proxy's connections are closed. */
void t_proxy_stop(void);

#endif
