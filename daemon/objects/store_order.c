/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "daemon/objects/store_order.h"

/*
 * Byte stores up to the first aligned word, a word at a time, then the
 * bytes after the last word.  Release stores keep the compiler from
 * merging or reordering them (a plain mov on x86, whose stores are seen
 * in program order; stlr on arm64).  The loads may be plain.
 */
void srd_store_ordered(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	while (n && ((uintptr_t)d & 7)) {
		__atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
		n--;
	}
	for (; n >= 8; n -= 8, d += 8, s += 8) {
		uint64_t w;

		memcpy(&w, s, sizeof(w));
		__atomic_store_n((uint64_t *)(void *)d, w, __ATOMIC_RELEASE);
	}
	while (n--)
		__atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
}
