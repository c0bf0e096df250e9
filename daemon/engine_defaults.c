/* SPDX-License-Identifier: MIT */
/*
 * Defaults for the engine's optional entry points (daemon/objects.h), weak
 * so that an engine which implements one replaces it at link time.
 */
#include "daemon/objects.h"

__attribute__((weak)) void engine_qp_query(struct srd_qp *qp,
					   struct ibv_qp_attr *attr)
{
}
