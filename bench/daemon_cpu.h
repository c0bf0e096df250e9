/* SPDX-License-Identifier: MIT */
/* How much CPU softrdmad uses while nobody sends anything. */
#ifndef SOFTRDMA_BENCH_DAEMON_CPU_H
#define SOFTRDMA_BENCH_DAEMON_CPU_H

#include <sys/types.h>

/* The pid of the daemon that owns our socket name (SOFTRDMA_SOCKET, else
 * "softrdma"), or -1. */
pid_t daemon_find_pid(void);

/* Percent of one core the process used over the next secs seconds, or a
 * negative value if it could not be read. */
double daemon_cpu_percent(pid_t pid, double secs);

#endif
