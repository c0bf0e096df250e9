/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "daemon/core/objects.h"

uint64_t srd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
