/* SPDX-License-Identifier: MIT */
/*
 * CM MADs for the in-process CM tests: those of a capture (the CM's
 * UD SEND Only packets to QP1), and those the daemon's QP1 posts.
 */
#ifndef SOFTRDMA_TESTS_T_CM_MADS_H
#define SOFTRDMA_TESTS_T_CM_MADS_H

#include "daemon/cm/cm_mad.h"
#include "tests/unit/t_core.h"

/* The CM MADs of a pcap, in order, at most max.  How many, or a
 * negative errno (-ENOENT: no such file). */
int tcm_read_pcap(const char *path, struct cm_msg *out, unsigned int max);

/* The MADs QP1 of device 0 posted since the last call (or since
 * tcm_sq_mark()), decoded into out[*n...], *n advanced. */
void tcm_sq_mark(struct t_core *t);
void tcm_sq_collect(struct t_core *t, struct cm_msg *out, unsigned int max,
		    unsigned int *n);

#endif
