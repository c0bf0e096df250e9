/* SPDX-License-Identifier: MIT */
/*
 * The doorbell the posting verbs ring: a system call only when the engine
 * sleeps.
 */
#include <stdatomic.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

void srd_ring_doorbell(struct srd_context *ctx)
{
	static const uint64_t one = 1;

	/* Pairs with the engine's fence between setting engine_sleeping and
	 * its last look at the rings: one of us sees the other. */
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&ctx->dev_page->engine_sleeping,
			    __ATOMIC_RELAXED)) {
		ssize_t r = write(ctx->doorbell_fd, &one, sizeof(one));

		(void)r;
	}
}
