/* SPDX-License-Identifier: MIT */
/*
 * CM MAD encode and decode, driven by one field table per message that
 * transcribes the spec's layout (byte offset, first bit counted from the
 * most significant, width).  Decoding and encoding walk the same table,
 * so the two cannot disagree about where a field is.
 */
#include <errno.h>
#include <string.h>

#include "daemon/cm/cm_mad.h"
#include "daemon/cm/cm_mad_layout.h"

static uint64_t width_mask(unsigned int width)
{
	return width >= 64 ? ~0ull : (1ull << width) - 1;
}

/* A field of at most 64 bits spans at most 8 bytes (checked in tables). */
static uint64_t wire_get(const uint8_t *data, const struct cm_field *f)
{
	unsigned int nbytes = (f->bit + f->width + 7u) / 8;
	uint64_t v = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		v = v << 8 | data[f->off + i];
	v >>= nbytes * 8 - f->bit - f->width;
	return v & width_mask(f->width);
}

static void wire_put(uint8_t *data, const struct cm_field *f, uint64_t v)
{
	unsigned int nbytes = (f->bit + f->width + 7u) / 8;
	unsigned int shift = nbytes * 8 - f->bit - f->width;
	uint64_t mask = width_mask(f->width) << shift;
	uint64_t cur = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		cur = cur << 8 | data[f->off + i];
	cur = (cur & ~mask) | ((v << shift) & mask);
	for (unsigned int i = nbytes; i-- > 0;) {
		data[f->off + i] = (uint8_t)cur;
		cur >>= 8;
	}
}

static uint64_t member_get(const uint8_t *base, const struct cm_field *f)
{
	const uint8_t *p = base + f->moff;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->msize) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void member_put(uint8_t *base, const struct cm_field *f, uint64_t v)
{
	uint8_t *p = base + f->moff;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->msize) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* The union's members all start here. */
static uint8_t *msg_body(struct cm_msg *m)
{
	return (uint8_t *)&m->req;
}

static const uint8_t *msg_body_const(const struct cm_msg *m)
{
	return (const uint8_t *)&m->req;
}

void cm_msg_init(struct cm_msg *m, uint16_t attr_id, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = MAD_BASE_VERSION;
	m->hdr.mgmt_class = MAD_CLASS_CM;
	m->hdr.class_version = CM_CLASS_VERSION;
	m->hdr.method = MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr_id;
}

int cm_mad_decode(const void *buf, size_t len, struct cm_msg *m)
{
	uint8_t *body = msg_body(m);
	const struct cm_layout *l;
	const uint8_t *data;

	memset(m, 0, sizeof(*m));
	if (!buf || mad_hdr_decode(buf, len, &m->hdr))
		return -EBADMSG;
	if (len != MAD_SIZE || m->hdr.base_version != MAD_BASE_VERSION ||
	    m->hdr.mgmt_class != MAD_CLASS_CM ||
	    m->hdr.class_version != CM_CLASS_VERSION ||
	    m->hdr.method != MAD_METHOD_SEND)
		return -EBADMSG;
	l = cm_layout_find(m->hdr.attr_id);
	if (!l)
		return -EBADMSG;

	data = (const uint8_t *)buf + MAD_HDR_SIZE;
	for (unsigned int i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		uint64_t v;

		if (f->kind == CM_F_BYTES) {
			memcpy(body + f->moff, data + f->off, f->width);
			continue;
		}
		/* Pieces of one member are merged into it. */
		v = member_get(body, f) | wire_get(data, f) << f->mshift;
		member_put(body, f, v);
	}
	if (l->ok && !l->ok(m)) {
		memset(body, 0, sizeof(*m) - (size_t)(body - (uint8_t *)m));
		return -EBADMSG;
	}
	return 0;
}

int cm_mad_encode(const struct cm_msg *m, void *buf, size_t len)
{
	uint8_t data[MAD_DATA_SIZE] = { 0 };
	const struct cm_layout *l;
	const uint8_t *body;

	if (!m || !buf || len < MAD_SIZE)
		return -EINVAL;
	body = msg_body_const(m);
	l = cm_layout_find(m->hdr.attr_id);
	if (!l || (l->ok && !l->ok(m)))
		return -EINVAL;

	for (unsigned int i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		uint64_t v;

		if (f->kind == CM_F_BYTES) {
			memcpy(data + f->off, body + f->moff, f->width);
			continue;
		}
		v = member_get(body, f) >> f->mshift;
		/* A piece takes its bits; the whole is checked by ok(). */
		if (!f->piece && v > width_mask(f->width))
			return -EINVAL;
		wire_put(data, f, v);
	}
	mad_hdr_encode(&m->hdr, buf);
	memcpy((uint8_t *)buf + MAD_HDR_SIZE, data, sizeof(data));
	return 0;
}

int cm_set_private_data(uint8_t *area, size_t cap, const void *src, size_t len)
{
	if (len > cap || (len && !src))
		return -EINVAL;
	if (len)
		memcpy(area, src, len);
	memset(area + len, 0, cap - len);
	return 0;
}
