/* SPDX-License-Identifier: MIT */
/*
 * softrdma - <infiniband/arch.h>, kept only so that old programs still
 * build.  New code should use the <endian.h> conversions directly.
 */

#ifndef INFINIBAND_ARCH_H
#define INFINIBAND_ARCH_H

#include <stdint.h>
#include <endian.h>

#warning "This header is obsolete."

/*
 * 64 bit host <-> network order helpers, unless the application already
 * has its own ntohll.  <endian.h> only provides htobe64() outside strict
 * ISO C modes, so the swap is spelled out from __BYTE_ORDER.
 */
#ifndef ntohll
#undef htonll
#undef ntohll
static inline __attribute__((deprecated)) uint64_t htonll(uint64_t x)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return __builtin_bswap64(x);
#else
	return x;
#endif
}

static inline __attribute__((deprecated)) uint64_t ntohll(uint64_t x)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	return __builtin_bswap64(x);
#else
	return x;
#endif
}
#define htonll htonll
#define ntohll ntohll
#endif

/* Memory barrier macros used to live here; libibverbs no longer has them. */

#endif /* INFINIBAND_ARCH_H */
