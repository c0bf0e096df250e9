/* SPDX-License-Identifier: MIT */
/*
 * The CRC-32 engine under the ICRC: known answers, the folding path equal
 * to the tables and to a bit-at-a-time reference for every length and
 * alignment, chaining, and the throughput of each (printed, not judged).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/net/icrc.h"
#include "t_assert.h"

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return crc;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void known_answers(void)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	const char *check = "123456789";
	uint32_t c;

	c = ~srd_crc32_update(~0u, check, strlen(check));
	if (c != 0xcbf43926)
		T_FAIL("CRC-32 of \"123456789\" = %08x", c);
	if (srd_crc32_update(0x12345678, "", 0) != 0x12345678)
		T_FAIL("empty update changed the register");
	/* The preset rxe starts the ICRC from: ones, then the masked LRH. */
	c = srd_crc32_update(~0u, ones, sizeof(ones));
	if (c != 0xdebb20e3)
		T_FAIL("register after 8 bytes of ones = %08x", c);
}

static void equal_paths(uint8_t *buf, size_t bufsz)
{
	size_t len, off, i;
	uint32_t seed, a, b, c;

	for (i = 0; i < bufsz; i++)
		buf[i] = (uint8_t)rnd();
	for (off = 0; off < 16; off++)
		for (len = 0; len <= 1100 && off + len <= bufsz; len++) {
			seed = rnd();
			a = srd_crc32_update(seed, buf + off, len);
			b = srd_crc32_update_table(seed, buf + off, len);
			if (a != b)
				T_FAIL("len %zu off %zu: %08x != table %08x",
				       len, off, a, b);
			if ((len + off) % 7 == 0) {
				c = crc_bitwise(seed, buf + off, len);
				if (a != c)
					T_FAIL("len %zu off %zu: %08x != "
					       "bitwise %08x",
					       len, off, a, c);
			}
		}
	for (i = 0; i < 200; i++) {
		size_t split;

		len = rnd() % bufsz;
		split = len ? rnd() % len : 0;
		seed = rnd();
		a = srd_crc32_update(seed, buf, len);
		b = srd_crc32_update(srd_crc32_update(seed, buf, split),
				     buf + split, len - split);
		c = crc_bitwise(seed, buf, len);
		if (a != b || a != c)
			T_FAIL("len %zu split %zu: %08x %08x %08x", len, split,
			       a, b, c);
	}
}

typedef uint32_t (*crc_fn)(uint32_t crc, const void *buf, size_t len);

/* Rounds of about 256 KB between clock reads, for 0.15 s. */
static double crc_rate(crc_fn fn, const uint8_t *buf, size_t len)
{
	size_t i, rounds = (256 * 1024) / len + 1;
	double t0 = now(), t;
	uint64_t bytes = 0;
	uint32_t c = 0;

	do {
		for (i = 0; i < rounds; i++)
			c = fn(c, buf, len);
		bytes += rounds * len;
		t = now() - t0;
	} while (t < 0.15);
	if (c == 0x5eed) /* keeps the loop from being optimised away */
		printf(" ");
	return bytes / t / 1e9;
}

static void throughput(uint8_t *buf)
{
	struct srd_icrc_udp4 f = { .saddr = 0x0a00000a,
				   .daddr = 0x0b00000a,
				   .sport = 0x21c1,
				   .dport = 0xb712 };
	static const size_t sizes[] = { 64, 256, 1024, 4096, 65536 };
	double t0, t;
	uint64_t n;
	uint32_t acc = 0;
	uint16_t id;
	size_t i, k;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		printf("CRC-32 %6zu-byte buffers: %6.2f GB/s, tables only "
		       "%5.2f GB/s\n",
		       sizes[i], crc_rate(srd_crc32_update, buf, sizes[i]),
		       crc_rate(srd_crc32_update_table, buf, sizes[i]));

	for (i = 1; i < 3; i++) {
		size_t len = i == 1 ? 1024 + 28 : 4096 + 28;

		t0 = now();
		n = 0;
		do {
			for (k = 0; k < 100; k++)
				acc ^= srd_icrc_v4_from_parts(
					&f, 0, SRD_IPV4_DF, buf, len);
			n += 100;
			t = now() - t0;
		} while (t < 0.15);
		printf("ICRC generate, %zu-byte UDP payloads: %.2f GB/s, "
		       "%.0f ns/packet\n",
		       len, n * len / t / 1e9, t / n * 1e9);
	}
	srd_icrc_put(buf, 1024 + 28,
		     srd_icrc_v4_from_parts(&f, 0x1234, SRD_IPV4_DF, buf,
					    1024 + 28));
	t0 = now();
	n = 0;
	do {
		for (k = 0; k < 100; k++)
			if (srd_icrc_check_v4_noid(&f, buf, 1024 + 28, &id,
						   NULL) ||
			    id != 0x1234)
				acc++;
		n += 100;
		t = now() - t0;
	} while (t < 0.15);
	printf("ICRC check without the IP header, 1052-byte payloads: "
	       "%.0f ns/packet (%.2f GB/s)\n",
	       t / n * 1e9, n * 1052.0 / t / 1e9);
	if (acc == 0x5eed)
		printf(" ");
}

int main(void)
{
	size_t bufsz = 65536 + 64;
	uint8_t *buf = malloc(bufsz);

	if (!buf)
		T_FAIL("malloc %zu bytes", bufsz);
	printf("implementation: %s\n", srd_crc32_impl());
	known_answers();
	equal_paths(buf, bufsz);
	throughput(buf);
	free(buf);
	t_pass();
}
