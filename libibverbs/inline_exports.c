/* SPDX-License-Identifier: MIT */
/*
 * Exported copies of the verbs <infiniband/verbs.h> defines inline, for
 * programs built with SOFTRDMA_NO_INLINE_VERBS and for language bindings.
 * Each symbol is an alias of the header's own body, so both always agree.
 */
#define SOFTRDMA_NO_INLINE_VERBS
#include <infiniband/verbs.h>
#include <infiniband/softrdma_inline_list.h>

#define SRD_EXPORT_INLINE(name)                                       \
	extern __typeof__(__softrdma_inl_##name) name __attribute__(( \
		alias("__softrdma_inl_" #name), visibility("default")));

SOFTRDMA_INLINE_VERBS(SRD_EXPORT_INLINE)
