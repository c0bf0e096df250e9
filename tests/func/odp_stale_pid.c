/* SPDX-License-Identifier: MIT */
/*
 * func.mr_stale_pid with an ODP MR: an ODP MR of a client that died never
 * reaches the memory of the process that gets its pid (the peer's READ and
 * WRITE fail with IBV_WC_REM_ACCESS_ERR, B's bytes untouched).
 */
#define STALE_ACCESS IBV_ACCESS_ON_DEMAND
#define STALE_NAME "odp_stale_pid"
#include "mr_stale_pid.c"
