/* SPDX-License-Identifier: MIT */
/*
 * The CM messages' field layouts (daemon/cm/cm_mad_layout.c), as the MAD
 * codec and its names walk them: one table per message that transcribes
 * the spec's layout (byte offset, first bit counted from the most
 * significant, width).  Inside common/ only.
 */
#ifndef SOFTRDMA_COMMON_CM_MAD_LAYOUT_H
#define SOFTRDMA_COMMON_CM_MAD_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/cm/cm_mad.h"

enum cm_field_kind {
	CM_F_UINT,  /* an unsigned value of width bits */
	CM_F_BYTES, /* width bytes copied as they are */
};

struct cm_field {
	uint16_t moff;	/* member offset in the message struct */
	uint8_t msize;	/* member size: 1, 2, 4 or 8 (UINT) */
	uint8_t mshift; /* for a piece of a member: where the piece goes */
	uint8_t off;	/* wire byte offset in the MAD data */
	uint8_t bit;	/* first bit, 0 = MSB of byte off */
	uint8_t width;	/* bits (UINT) or bytes (BYTES) */
	uint8_t kind : 1;
	uint8_t piece : 1; /* one of several pieces of one member */
};

struct cm_layout {
	uint16_t attr_id;
	const char *name;
	size_t msg_size;
	const struct cm_field *fields;
	unsigned int nfields;
	bool (*ok)(const struct cm_msg *m);
};

/* The layout of a CM attribute, or NULL for one that is not a message. */
const struct cm_layout *cm_layout_find(uint16_t attr_id);

#endif
