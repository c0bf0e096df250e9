/* SPDX-License-Identifier: MIT */
/*
 * Reference figures measured in the same run as the RDMA ones, so the
 * ratios compare like with like on this machine: what a plain memcpy, a
 * cross-process copy and a cache line bouncing between two cores cost.
 */
#ifndef SOFTRDMA_BENCH_REFS_H
#define SOFTRDMA_BENCH_REFS_H

#include <stddef.h>
#include <stdint.h>

/* Bytes per nanosecond (= GB/s) of memcpy of size bytes: hot repeats the
 * same buffers; otherwise copies rotate over pool bytes of source and
 * destination, beyond the caches.  total is roughly how much to copy. */
double ref_memcpy_gbps(size_t size, size_t pool, uint64_t total);

/* GB/s of process_vm_writev of size bytes into a child process. */
double ref_pvm_gbps(size_t size, uint64_t total);

/*
 * Half round trip, in ns, of a cache line bounced between two processes
 * on two cores (medians over batches).  *pinned tells whether the two
 * could be put on different CPUs.  Negative errno on failure.
 */
int ref_cacheline_ns(unsigned int round_trips, double *median, double *p99,
		     int *pinned);

#endif
