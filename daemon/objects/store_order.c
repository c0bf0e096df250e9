/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "daemon/objects/store_order.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/*
 * Byte stores up to the first aligned word, whole words, then the bytes
 * after the last word.  Each store is either atomic with release order or
 * volatile, so the compiler neither merges, splits, repeats nor reorders
 * them; x86 makes ordinary stores visible in program order, arm64 orders
 * the release stores.
 */
static void store_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
	while (n--)
		__atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
}

static void store_word(uint8_t *d, const uint8_t *s)
{
	uint64_t w;

	memcpy(&w, s, sizeof(w));
	__atomic_store_n((uint64_t *)(void *)d, w, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
/* Vector stores of 16 bytes (SSE2), or 32 (AVX2) where the CPU has them.
 * Each group loads four vectors before it stores them, so the loads of
 * one group overlap the stores of the last; the stores themselves stay
 * one per address, ascending (volatile: the compiler keeps their order). */
static size_t store_vectors_sse2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t done = 0;

	for (; n - done >= 64; done += 64) {
		const __m128i *p = (const __m128i *)(const void *)(s + done);
		volatile __m128i *q = (volatile __m128i *)(void *)(d + done);
		__m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1);
		__m128i c = _mm_loadu_si128(p + 2), e = _mm_loadu_si128(p + 3);

		q[0] = a;
		q[1] = b;
		q[2] = c;
		q[3] = e;
	}
	for (; n - done >= 16; done += 16)
		*(volatile __m128i *)(void *)(d + done) = _mm_loadu_si128(
			(const __m128i *)(const void *)(s + done));
	return done;
}

/* d is 16-byte aligned; one 16-byte store makes it 32. */
__attribute__((target("avx2"))) static size_t
store_vectors_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t done = 0;

	if (n >= 32 && ((uintptr_t)d & 16)) {
		*(volatile __m128i *)(void *)d =
			_mm_loadu_si128((const __m128i *)(const void *)s);
		done = 16;
	}
	for (; n - done >= 128; done += 128) {
		const __m256i *p = (const __m256i *)(const void *)(s + done);
		volatile __m256i *q = (volatile __m256i *)(void *)(d + done);
		__m256i a = _mm256_loadu_si256(p),
			b = _mm256_loadu_si256(p + 1);
		__m256i c = _mm256_loadu_si256(p + 2);
		__m256i e = _mm256_loadu_si256(p + 3);

		q[0] = a;
		q[1] = b;
		q[2] = c;
		q[3] = e;
	}
	for (; n - done >= 32; done += 32)
		*(volatile __m256i *)(void *)(d + done) = _mm256_loadu_si256(
			(const __m256i *)(const void *)(s + done));
	return done + store_vectors_sse2(d + done, s + done, n - done);
}

static size_t store_vectors(uint8_t *d, const uint8_t *s, size_t n)
{
	static int avx2 = -1; /* threads asking at once get the same answer */
	int a = __atomic_load_n(&avx2, __ATOMIC_RELAXED);

	if (a < 0) {
		a = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&avx2, a, __ATOMIC_RELAXED);
	}
	return a ? store_vectors_avx2(d, s, n) : store_vectors_sse2(d, s, n);
}
#endif

void srd_store_ordered(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = (8 - ((uintptr_t)d & 7)) & 7;

	if (k > n)
		k = n;
	store_bytes(d, s, k);
	d += k;
	s += k;
	n -= k;
#if defined(__x86_64__)
	if (n >= 16 && ((uintptr_t)d & 8)) {
		store_word(d, s);
		d += 8;
		s += 8;
		n -= 8;
	}
	k = store_vectors(d, s, n);
	d += k;
	s += k;
	n -= k;
#endif
	for (; n >= 8; n -= 8, d += 8, s += 8)
		store_word(d, s);
	store_bytes(d, s, n);
}
