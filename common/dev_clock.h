/* SPDX-License-Identifier: MIT */
/*
 * The device clock: what CQE timestamps count and what
 * ibv_query_rt_values_ex reads as the raw clock.  It is the kernel's
 * CLOCK_MONOTONIC_RAW in nanoseconds, which every process on the host
 * reads alike (vDSO, no system call), so a timestamp the daemon writes
 * and a raw clock value the library reads are on one time line without a
 * round trip.  As a NIC's free-running counter it never steps and is not
 * slewed by NTP.
 */
#ifndef SOFTRDMA_COMMON_DEV_CLOCK_H
#define SOFTRDMA_COMMON_DEV_CLOCK_H

#include <stdint.h>
#include <time.h>

/* ibv_device_attr_ex.hca_core_clock is in kHz: one tick per ns. */
#define SRD_DEV_CLOCK_KHZ 1000000ull
/* ibv_device_attr_ex.completion_timestamp_mask: the bits that count (63,
 * as ConnectX reports, so differences never overflow a signed 64-bit). */
#define SRD_DEV_CLOCK_MASK 0x7fffffffffffffffull

static inline uint64_t srd_dev_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) &
	       SRD_DEV_CLOCK_MASK;
}

#endif
