/* SPDX-License-Identifier: MIT */
/*
 * The CRC-32 engine under the RoCEv2 ICRC: slice-by-16 tables, carry-less
 * multiply folding on x86-64, and the GF(2) arithmetic that moves a
 * register difference back over bytes.
 *
 * Polynomials are held reflected, as the CRC register is: bit 31 is the
 * coefficient of x^0, bit 0 that of x^31.  Feeding n zero bytes to the
 * register multiplies it by x^(8n) modulo P.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "daemon/net/crc32.h"

#define CRC32_POLY 0xedb88320u /* IEEE 802.3, reflected */
#define GF2_ONE 0x80000000u    /* the polynomial 1 */

static uint32_t crc_tab[16][256];

/*
 * x^(-8 k) for k = hi * 256 + lo as back_hi[hi] * back_lo[lo]: moves a
 * CRC difference back over k bytes, any k a UDP datagram can hold.
 */
#define BACK_HI 512
static uint32_t back_lo[256], back_hi[BACK_HI];

#if defined(__x86_64__)
static bool have_pclmul;
static bool have_vpclmul;
/* Folding constants: {low qword, high qword} per folding distance. */
static uint64_t fold_2048[2], fold_512[2], fold_128[2];
/* Per 128-bit lane of a 512-bit register: lane i moves 384 - 128 i bits. */
static uint64_t fold_lanes[8];
/*
 * The last block to the register without tables (Barrett): x^96 and x^64
 * mod P to fold 128 bits to 64 and 64 to 32, then floor(x^64 / P) and P,
 * all reflected to 33 bits as carry-less multiplies want them (IEEE CRC-32
 * constants as the Intel folding paper publishes them).
 */
static const uint64_t red_k96 = 0x00ccaa009eull;
static const uint64_t red_k64 = 0x0163cd6124ull;
static const uint64_t red_mu = 0x01f7011641ull;
static const uint64_t red_poly = 0x01db710641ull;
#endif

static inline uint32_t load_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint32_t gf2_mul_x(uint32_t a)
{
	return (a & 1) ? (a >> 1) ^ CRC32_POLY : a >> 1;
}

/* Inverse of gf2_mul_x: P has a constant term, so x is invertible. */
static inline uint32_t gf2_div_x(uint32_t a)
{
	return (a & GF2_ONE) ? ((a ^ CRC32_POLY) << 1) | 1 : a << 1;
}

/* a * b mod P. */
static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t p = 0;
	uint32_t m;

	for (m = GF2_ONE; m; m >>= 1) {
		if (a & m)
			p ^= b;
		b = gf2_mul_x(b);
	}
	return p;
}

uint32_t srd_crc32_update_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len >= 16) {
		uint32_t a = load_le32(p) ^ crc;
		uint32_t b = load_le32(p + 4);
		uint32_t c = load_le32(p + 8);
		uint32_t d = load_le32(p + 12);

		crc = crc_tab[15][a & 0xff] ^ crc_tab[14][(a >> 8) & 0xff] ^
		      crc_tab[13][(a >> 16) & 0xff] ^ crc_tab[12][a >> 24] ^
		      crc_tab[11][b & 0xff] ^ crc_tab[10][(b >> 8) & 0xff] ^
		      crc_tab[9][(b >> 16) & 0xff] ^ crc_tab[8][b >> 24] ^
		      crc_tab[7][c & 0xff] ^ crc_tab[6][(c >> 8) & 0xff] ^
		      crc_tab[5][(c >> 16) & 0xff] ^ crc_tab[4][c >> 24] ^
		      crc_tab[3][d & 0xff] ^ crc_tab[2][(d >> 8) & 0xff] ^
		      crc_tab[1][(d >> 16) & 0xff] ^ crc_tab[0][d >> 24];
		p += 16;
		len -= 16;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
/*
 * A 16-byte block loaded little-endian holds the polynomial with register
 * bit i as the coefficient of x^(127-i); its low qword L is the high-degree
 * half.  Moving the block D bits further down the message multiplies it by
 * x^D: L * x^(D+64) + H * x^D, each reduced to 32 bits mod P by one
 * carry-less multiply.  Reflected operands make the product come out
 * multiplied by x, so the constants are x^(D+63) and x^(D-1).
 */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i
fold16(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/*
 * A 16-byte block of message after a zero register, as the folds leave
 * it, to the register: the low qword moves onto the high one (x^96), the
 * 96 bits left onto their last 64 (x^64), then Barrett's two multiplies
 * take the quotient by P out.  No table: these lookups missed the cache
 * under streams of packets.
 */
__attribute__((target("pclmul,sse4.1"))) static inline uint32_t
reduce128(__m128i x)
{
	const __m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i t;

	t = _mm_clmulepi64_si128(x, _mm_cvtsi64_si128((long long)red_k96),
				 0x00);
	x = _mm_xor_si128(_mm_srli_si128(x, 8), t);
	t = _mm_srli_si128(x, 4);
	x = _mm_clmulepi64_si128(_mm_and_si128(x, mask32),
				 _mm_cvtsi64_si128((long long)red_k64), 0x00);
	x = _mm_xor_si128(x, t);
	t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32),
				 _mm_cvtsi64_si128((long long)red_mu), 0x00);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32),
				 _mm_cvtsi64_si128((long long)red_poly), 0x00);
	x = _mm_xor_si128(x, t);
	return (uint32_t)_mm_extract_epi32(x, 1);
}

/* 16 to 63 bytes: one block at a time (headers, short packets). */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_pclmul_short(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m128i k128 = _mm_loadu_si128((const __m128i *)fold_128);
	__m128i x;

	x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
			  _mm_cvtsi32_si128((int)crc));
	p += 16;
	len -= 16;
	while (len >= 16) {
		x = fold16(x, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return srd_crc32_update_table(reduce128(x), p, len);
}

__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_pclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m128i k512 = _mm_loadu_si128((const __m128i *)fold_512);
	const __m128i k128 = _mm_loadu_si128((const __m128i *)fold_128);
	__m128i x0, x1, x2, x3;

	/* The register joins the message as a difference in its first word. */
	x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
			   _mm_cvtsi32_si128((int)crc));
	x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	x2 = _mm_loadu_si128((const __m128i *)(p + 32));
	x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	p += 64;
	len -= 64;
	while (len >= 64) {
		x0 = fold16(x0, k512, _mm_loadu_si128((const __m128i *)p));
		x1 = fold16(x1, k512,
			    _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold16(x2, k512,
			    _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold16(x3, k512,
			    _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}
	x1 = fold16(x0, k128, x1);
	x2 = fold16(x1, k128, x2);
	x3 = fold16(x2, k128, x3);
	while (len >= 16) {
		x3 = fold16(x3, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	/* What is left is 16 bytes of message with a zero register. */
	return srd_crc32_update_table(reduce128(x3), p, len);
}

#define VPCLMUL_TARGET "avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"

/* fold16 on four blocks at once. */
__attribute__((target(VPCLMUL_TARGET))) static inline __m512i
fold64(__m512i x, __m512i k, __m512i next)
{
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, next, 0x96); /* a^b^c */
}

/* The same folding, 256 bytes per round in four 512-bit registers. */
__attribute__((target(VPCLMUL_TARGET))) static uint32_t
crc32_vpclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(
		_mm_loadu_si128((const __m128i *)fold_2048));
	const __m512i k512 = _mm512_broadcast_i32x4(
		_mm_loadu_si128((const __m128i *)fold_512));
	const __m128i k128 = _mm_loadu_si128((const __m128i *)fold_128);
	__m512i z0, z1, z2, z3, t;
	__m128i x;

	z0 = _mm512_xor_si512(
		_mm512_loadu_si512(p),
		_mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	z1 = _mm512_loadu_si512(p + 64);
	z2 = _mm512_loadu_si512(p + 128);
	z3 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	while (len >= 256) {
		z0 = fold64(z0, k2048, _mm512_loadu_si512(p));
		z1 = fold64(z1, k2048, _mm512_loadu_si512(p + 64));
		z2 = fold64(z2, k2048, _mm512_loadu_si512(p + 128));
		z3 = fold64(z3, k2048, _mm512_loadu_si512(p + 192));
		p += 256;
		len -= 256;
	}
	z1 = fold64(z0, k512, z1);
	z2 = fold64(z1, k512, z2);
	z3 = fold64(z2, k512, z3);
	while (len >= 64) {
		z3 = fold64(z3, k512, _mm512_loadu_si512(p));
		p += 64;
		len -= 64;
	}
	/* Four blocks to one: each lane moves onto the last. */
	t = _mm512_loadu_si512(fold_lanes);
	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(z3, t, 0x00),
			     _mm512_clmulepi64_epi128(z3, t, 0x11));
	x = _mm_xor_si128(_mm512_extracti32x4_epi32(t, 0),
			  _mm512_extracti32x4_epi32(t, 1));
	x = _mm_ternarylogic_epi64(x, _mm512_extracti32x4_epi32(t, 2),
				   _mm512_extracti32x4_epi32(z3, 3), 0x96);
	while (len >= 16) {
		x = fold16(x, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	return srd_crc32_update_table(reduce128(x), p, len);
}

/*
 * a * b mod P with one carry-less multiply: the 63-bit product, moved up
 * one bit as above, has x^63..x^32 in its low word, which the tables
 * reduce as a CRC register followed by four zero bytes.
 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
gf2_mul_pclmul(uint32_t a, uint32_t b)
{
	uint64_t prod = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
				_mm_cvtsi32_si128((int)a),
				_mm_cvtsi32_si128((int)b), 0x00))
			<< 1;
	uint32_t lo = (uint32_t)prod;

	return (uint32_t)(prod >> 32) ^ crc_tab[3][lo & 0xff] ^
	       crc_tab[2][(lo >> 8) & 0xff] ^ crc_tab[1][(lo >> 16) & 0xff] ^
	       crc_tab[0][lo >> 24];
}

/* x^n mod P. */
static uint32_t gf2_xpow(uint64_t n)
{
	uint32_t r = GF2_ONE;
	uint32_t sq = gf2_mul_x(GF2_ONE);

	for (; n; n >>= 1) {
		if (n & 1)
			r = gf2_mul(r, sq);
		sq = gf2_mul(sq, sq);
	}
	return r;
}

static void fold_consts(uint64_t k[2], unsigned int dist)
{
	k[0] = (uint64_t)gf2_xpow(dist + 63) << 32;
	k[1] = (uint64_t)gf2_xpow(dist - 1) << 32;
}

static void simd_init(void)
{
	const char *env = getenv(SRD_CRC32_ENV);
	int i;

	fold_consts(fold_2048, 2048);
	fold_consts(fold_512, 512);
	fold_consts(fold_128, 128);
	for (i = 0; i < 3; i++)
		fold_consts(fold_lanes + 2 * i, 384 - 128 * i);
	/* Lane 3 is already in place: multiplied by 0, added as it is. */
	__builtin_cpu_init();
	have_pclmul = __builtin_cpu_supports("pclmul") &&
		      __builtin_cpu_supports("sse4.1");
	have_vpclmul = have_pclmul && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("vpclmulqdq");
	/* Narrower paths on request, so that tests cover each of them. */
	if (env && !strcmp(env, "table"))
		have_pclmul = false;
	if (env && (!strcmp(env, "table") || !strcmp(env, "pclmul")))
		have_vpclmul = false;
}
#endif

static uint32_t gf2_mul_fast(uint32_t a, uint32_t b)
{
#if defined(__x86_64__)
	if (have_pclmul)
		return gf2_mul_pclmul(a, b);
#endif
	return gf2_mul(a, b);
}

/* a * x^(-8 * nbytes) mod P; nbytes < 256 * BACK_HI. */
uint32_t srd_crc32_shift_back(uint32_t a, uint32_t nbytes)
{
	return gf2_mul_fast(gf2_mul_fast(a, back_hi[nbytes >> 8]),
			    back_lo[nbytes & 0xff]);
}

uint32_t srd_crc32_update(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (have_vpclmul && len >= 256)
		return crc32_vpclmul(crc, buf, len);
	if (have_pclmul && len >= 64)
		return crc32_pclmul(crc, buf, len);
	if (have_pclmul && len >= 16)
		return crc32_pclmul_short(crc, buf, len);
#endif
	return srd_crc32_update_table(crc, buf, len);
}

const char *srd_crc32_impl(void)
{
#if defined(__x86_64__)
	if (have_vpclmul)
		return "vpclmulqdq (512-bit), pclmulqdq below 256 bytes";
	if (have_pclmul)
		return "pclmulqdq";
#endif
	return "table";
}

static void tables_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = gf2_mul_x(c);
		crc_tab[0][i] = c;
	}
	for (k = 1; k < 16; k++)
		for (i = 0; i < 256; i++) {
			c = crc_tab[k - 1][i];
			crc_tab[k][i] = (c >> 8) ^ crc_tab[0][c & 0xff];
		}
}

/* Before the constructors that use the tables (SRD_CRC32_CTOR_PRIO). */
__attribute__((constructor(SRD_CRC32_CTOR_PRIO))) static void crc32_init(void)
{
	uint32_t xinv8 = GF2_ONE, xinv2048;
	int j;

	tables_init();
	for (j = 0; j < 8; j++)
		xinv8 = gf2_div_x(xinv8);
	back_lo[0] = GF2_ONE;
	for (j = 1; j < 256; j++)
		back_lo[j] = gf2_mul(back_lo[j - 1], xinv8);
	xinv2048 = gf2_mul(back_lo[255], xinv8);
	back_hi[0] = GF2_ONE;
	for (j = 1; j < BACK_HI; j++)
		back_hi[j] = gf2_mul(back_hi[j - 1], xinv2048);
#if defined(__x86_64__)
	simd_init();
#endif
}
