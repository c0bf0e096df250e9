/* SPDX-License-Identifier: MIT */
/* Placeholder engine: lets the daemon core build before the transport
 * lands.  Deleted when daemon/transport/ implements the engine. */
#include <stdint.h>

#include "daemon/objects.h"

int engine_init(struct srd_daemon *d)
{
	return 0;
}
void engine_fini(struct srd_daemon *d)
{
}
bool engine_progress(struct srd_daemon *d, uint64_t now_ns)
{
	return false;
}
uint64_t engine_next_deadline(struct srd_daemon *d)
{
	return UINT64_MAX;
}
int engine_qp_create(struct srd_qp *qp)
{
	return 0;
}
void engine_qp_destroy(struct srd_qp *qp)
{
}
void engine_qp_modified(struct srd_qp *qp, enum ibv_qp_state old,
			int attr_mask)
{
}
void engine_srq_destroyed(struct srd_srq *srq)
{
}
