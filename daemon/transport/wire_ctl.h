/* SPDX-License-Identifier: MIT */
/*
 * The wires' run-time control (wire_ctl.c), for the admin commands and
 * tests: what --fault, --fault-file and --pcap set when the daemon
 * starts, changed while it runs.
 */
#ifndef SOFTRDMA_TRANSPORT_WIRE_CTL_H
#define SOFTRDMA_TRANSPORT_WIRE_CTL_H

#include <stddef.h>

struct srd_capture;
struct srd_daemon;
struct srd_faults;

/*
 * Run-time control, for administration commands: fault rules added (a
 * list, as --fault takes), all removed (the --fault-file ones too, until
 * the next SIGHUP), and listed one a line with their counters; capture
 * started into a new file and stopped.  0 or -errno (-EBUSY: a capture
 * runs already; -ENOENT: none runs; -EINVAL: a bad rule, reason in err).
 */
int srd_net_fault_add(struct srd_daemon *d, const char *rules, char *err,
		      size_t errlen);
void srd_net_fault_clear(struct srd_daemon *d);
size_t srd_net_fault_show(struct srd_daemon *d, char *buf, size_t size);
int srd_net_capture_start(struct srd_daemon *d, const char *path);
int srd_net_capture_stop(struct srd_daemon *d);
/* For listings: the rules in force (NULL without a wire) and the capture
 * running (NULL if none). */
const struct srd_faults *srd_net_faults(struct srd_daemon *d);
const struct srd_capture *srd_net_capture(struct srd_daemon *d);

#endif
