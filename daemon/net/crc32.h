/* SPDX-License-Identifier: MIT */
/*
 * The CRC-32 engine (IEEE 802.3, reflected polynomial 0xEDB88320) the
 * RoCEv2 ICRC runs on (daemon/net/icrc.h).
 */
#ifndef SOFTRDMA_DAEMON_NET_CRC32_H
#define SOFTRDMA_DAEMON_NET_CRC32_H

#include <stddef.h>
#include <stdint.h>

/*
 * Plain CRC-32 register update, no preset and no final inversion:
 * returns the register after feeding len bytes to register crc.  The
 * standard CRC-32 of a buffer is ~srd_crc32_update(~0u, buf, len).
 * Uses carry-less multiplication where the CPU has it, tables otherwise.
 */
uint32_t srd_crc32_update(uint32_t crc, const void *buf, size_t len);
/* The same with slice-by-16 tables only (the portable reference). */
uint32_t srd_crc32_update_table(uint32_t crc, const void *buf, size_t len);
/* Name of the implementation srd_crc32_update() uses. */
const char *srd_crc32_impl(void);
/*
 * Environment variable restricting the implementation, read once at load:
 * "table" (no carry-less multiply) or "pclmul" (no 512-bit registers).
 */
#define SRD_CRC32_ENV "SOFTRDMA_CRC32"

/*
 * A register difference moved back over nbytes bytes: what it was before
 * they were fed (a * x^(-8 nbytes) mod P), for any nbytes below 128 KiB.
 */
uint32_t srd_crc32_shift_back(uint32_t a, uint32_t nbytes);

/* Priority of the constructor that fills the tables: before the default
 * constructors of those that use them at load. */
#define SRD_CRC32_CTOR_PRIO 200

#endif
