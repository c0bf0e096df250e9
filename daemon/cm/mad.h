/* SPDX-License-Identifier: MIT */
/*
 * Management Datagrams (IBTA vol. 1 ch. 13.4): 256 bytes sent on QP0/QP1,
 * a 24-byte common header and 232 bytes of class data, big endian on the
 * wire.  The header is kept in host order in struct mad_hdr and moved to
 * and from the wire byte by byte, so any buffer alignment is fine.
 */
#ifndef SOFTRDMA_COMMON_MAD_H
#define SOFTRDMA_COMMON_MAD_H

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE 256
#define MAD_HDR_SIZE 24
#define MAD_DATA_SIZE (MAD_SIZE - MAD_HDR_SIZE)

#define MAD_BASE_VERSION 1

/* Management classes (Table 136). */
enum mad_mgmt_class {
	MAD_CLASS_SUBN_LID_ROUTED = 0x01,
	MAD_CLASS_SUBN_ADM = 0x03,
	MAD_CLASS_PERF_MGMT = 0x04,
	MAD_CLASS_BM = 0x05,
	MAD_CLASS_DEVICE_MGMT = 0x06,
	MAD_CLASS_CM = 0x07,
	MAD_CLASS_SNMP = 0x08,
	MAD_CLASS_SUBN_DIRECTED_ROUTE = 0x81,
};

/* Methods (Table 138); bit 7 marks a response. */
enum mad_method {
	MAD_METHOD_GET = 0x01,
	MAD_METHOD_SET = 0x02,
	MAD_METHOD_SEND = 0x03,
	MAD_METHOD_TRAP = 0x05,
	MAD_METHOD_REPORT = 0x06,
	MAD_METHOD_TRAP_REPRESS = 0x07,
	MAD_METHOD_GET_RESP = 0x81,
	MAD_METHOD_REPORT_RESP = 0x86,
};
#define MAD_METHOD_RESP 0x80

/* Byte offsets of the common header fields on the wire. */
enum mad_hdr_off {
	MAD_OFF_BASE_VERSION = 0,
	MAD_OFF_MGMT_CLASS = 1,
	MAD_OFF_CLASS_VERSION = 2,
	MAD_OFF_METHOD = 3,
	MAD_OFF_STATUS = 4,
	MAD_OFF_CLASS_SPECIFIC = 6,
	MAD_OFF_TID = 8,
	MAD_OFF_ATTR_ID = 16,
	MAD_OFF_RESV = 18,
	MAD_OFF_ATTR_MOD = 20,
};
static_assert(MAD_OFF_ATTR_MOD + 4 == MAD_HDR_SIZE, "MAD header is 24 bytes");
static_assert(MAD_HDR_SIZE + MAD_DATA_SIZE == MAD_SIZE, "MAD is 256 bytes");

/* The wire image: bytes only, so no alignment or byte order is implied. */
struct mad_wire {
	uint8_t hdr[MAD_HDR_SIZE];
	uint8_t data[MAD_DATA_SIZE];
};
static_assert(sizeof(struct mad_wire) == MAD_SIZE, "struct mad_wire size");

/* The common header in host order. */
struct mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
};

/* --- Big-endian accessors on unaligned bytes ---------------------------- */
static inline uint16_t mad_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t mad_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t mad_get_be64(const uint8_t *p)
{
	return (uint64_t)mad_get_be32(p) << 32 | mad_get_be32(p + 4);
}

static inline void mad_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void mad_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void mad_put_be64(uint8_t *p, uint64_t v)
{
	mad_put_be32(p, (uint32_t)(v >> 32));
	mad_put_be32(p + 4, (uint32_t)v);
}

/* --- The common header ------------------------------------------------- */
/* Reads the header of a buffer of len bytes; 0, or -EBADMSG if too short. */
static inline int mad_hdr_decode(const void *buf, size_t len, struct mad_hdr *h)
{
	const uint8_t *p = buf;

	if (len < MAD_HDR_SIZE)
		return -EBADMSG;
	h->base_version = p[MAD_OFF_BASE_VERSION];
	h->mgmt_class = p[MAD_OFF_MGMT_CLASS];
	h->class_version = p[MAD_OFF_CLASS_VERSION];
	h->method = p[MAD_OFF_METHOD];
	h->status = mad_get_be16(p + MAD_OFF_STATUS);
	h->class_specific = mad_get_be16(p + MAD_OFF_CLASS_SPECIFIC);
	h->tid = mad_get_be64(p + MAD_OFF_TID);
	h->attr_id = mad_get_be16(p + MAD_OFF_ATTR_ID);
	h->resv = mad_get_be16(p + MAD_OFF_RESV);
	h->attr_mod = mad_get_be32(p + MAD_OFF_ATTR_MOD);
	return 0;
}

/* Writes the 24 header bytes. */
static inline void mad_hdr_encode(const struct mad_hdr *h, void *buf)
{
	uint8_t *p = buf;

	p[MAD_OFF_BASE_VERSION] = h->base_version;
	p[MAD_OFF_MGMT_CLASS] = h->mgmt_class;
	p[MAD_OFF_CLASS_VERSION] = h->class_version;
	p[MAD_OFF_METHOD] = h->method;
	mad_put_be16(p + MAD_OFF_STATUS, h->status);
	mad_put_be16(p + MAD_OFF_CLASS_SPECIFIC, h->class_specific);
	mad_put_be64(p + MAD_OFF_TID, h->tid);
	mad_put_be16(p + MAD_OFF_ATTR_ID, h->attr_id);
	mad_put_be16(p + MAD_OFF_RESV, h->resv);
	mad_put_be32(p + MAD_OFF_ATTR_MOD, h->attr_mod);
}

#endif
