/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the CM MAD decoder.  Each input is tried twice: as
 * a whole MAD, and as the body of a MAD under a valid CM header (the first
 * byte picks the attribute), so that mutations reach the field decoding
 * rather than dying at the class check.  Whatever decodes must re-encode
 * to the input less its reserved bits and decode again to the same; the
 * CMA header decoder gets the same bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cm/cm_mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mad(const uint8_t *in, size_t len)
{
	uint8_t out[MAD_SIZE], mask[MAD_DATA_SIZE];
	struct cm_msg m, m2;
	char line[256];
	int ret;

	ret = cm_mad_decode(in, len, &m);
	if (ret == -EBADMSG)
		return;
	if (ret || len != MAD_SIZE)
		abort();
	if (cm_mad_encode(&m, out, sizeof(out)) ||
	    cm_mad_reserved_mask(m.hdr.attr_id, mask))
		abort();
	if (memcmp(out, in, MAD_HDR_SIZE))
		abort();
	for (size_t i = 0; i < MAD_DATA_SIZE; i++)
		if (out[MAD_HDR_SIZE + i] != (in[MAD_HDR_SIZE + i] & ~mask[i]))
			abort();
	if (cm_mad_decode(out, sizeof(out), &m2) || memcmp(&m, &m2, sizeof(m)))
		abort();
	if (cm_msg_format(line, sizeof(line), &m) <= 0)
		abort();
}

static void check_cma(const uint8_t *in, size_t len)
{
	uint8_t out[CMA_HDR_SIZE];
	struct cma_hdr h;

	if (cma_hdr_decode(in, len, &h))
		return;
	if (cma_hdr_encode(&h, out, sizeof(out)) || out[0] != in[0] ||
	    out[1] != (in[1] & 0xf0) || memcmp(out + 2, in + 2, 34))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *mad;
	size_t body;

	check_mad(data, size);
	check_cma(data, size);
	if (size < 1)
		return 0;

	/* A CM header (attributes 0x0f..0x1b), then the rest as the body. */
	body = size - 1 < MAD_DATA_SIZE ? size - 1 : MAD_DATA_SIZE;
	mad = malloc(MAD_HDR_SIZE + body);
	if (!mad)
		return 0;
	memset(mad, 0, MAD_HDR_SIZE);
	mad[MAD_OFF_BASE_VERSION] = MAD_BASE_VERSION;
	mad[MAD_OFF_MGMT_CLASS] = MAD_CLASS_CM;
	mad[MAD_OFF_CLASS_VERSION] = CM_CLASS_VERSION;
	mad[MAD_OFF_METHOD] = MAD_METHOD_SEND;
	mad_put_be16(mad + MAD_OFF_ATTR_ID, (uint16_t)(0x0f + data[0] % 13));
	memcpy(mad + MAD_HDR_SIZE, data + 1, body);
	/* Exact size, so a read past the end is ASan's to see. */
	check_mad(mad, MAD_HDR_SIZE + body);
	free(mad);
	return 0;
}
