/* SPDX-License-Identifier: MIT */
/*
 * The ICRC check of an IPv4 packet from an ordinary UDP socket, which does
 * not show the identification and flags the ICRC covers: the CRC is affine
 * in those bits, so the register difference they make is solved for.
 */
#include <errno.h>
#include <stdbool.h>

#include "common/inet.h"
#include "daemon/net/icrc.h"

/*
 * Solver for the IPv4 identification: reduced basis of the register
 * differences the 16 id bits make when followed by the flags byte, with
 * one pivot bit each, and which id bits each basis vector is made of.
 */
static struct {
	uint32_t vec[16];
	uint32_t pivot[16];
	uint16_t ids[16];
	uint32_t df; /* difference the DF bit makes */
	bool ok;
} id_solver;

static void id_solver_init(void)
{
	static const uint8_t df[3] = { 0, 0, SRD_IPV4_DF >> 8 };
	uint32_t v, pivot;
	uint16_t ids;
	int i, j, n = 0;

	id_solver.df = srd_crc32_update_table(0, df, sizeof(df));
	for (i = 0; i < 16; i++) {
		uint8_t b[3] = { (uint8_t)((1u << i) >> 8),
				 (uint8_t)((1u << i) & 0xff), 0 };

		v = srd_crc32_update_table(0, b, sizeof(b));
		ids = 1u << i;
		for (j = 0; j < n; j++)
			if (v & id_solver.pivot[j]) {
				v ^= id_solver.vec[j];
				ids ^= id_solver.ids[j];
			}
		if (!v)
			return; /* cannot happen for a CRC-32: no solver */
		pivot = v & -v;
		for (j = 0; j < n; j++)
			if (id_solver.vec[j] & pivot) {
				id_solver.vec[j] ^= v;
				id_solver.ids[j] ^= ids;
			}
		id_solver.vec[n] = v;
		id_solver.pivot[n] = pivot;
		id_solver.ids[n] = ids;
		n++;
	}
	id_solver.ok = true;
}

__attribute__((constructor)) static void icrc_init(void)
{
	id_solver_init();
}

/* Finds ids with basis(ids) == target; false if there is none. */
static bool solve_id(uint32_t target, uint16_t *id)
{
	uint16_t ids = 0;
	int j;

	for (j = 0; j < 16; j++)
		if (target & id_solver.pivot[j]) {
			target ^= id_solver.vec[j];
			ids ^= id_solver.ids[j];
		}
	*id = ids;
	return target == 0;
}

int srd_icrc_check_v4_noid(const struct srd_icrc_udp4 *f, const void *bth,
			   size_t len, uint16_t *id, uint16_t *frag_off)
{
	uint32_t diff;
	uint16_t found, flags;

	if (!srd_icrc_len_ok(len))
		return -EINVAL;
	if (!id_solver.ok)
		return -EBADMSG;
	/* Register differences: what the wire says minus id 0, no flags. */
	diff = ~srd_icrc_get(bth, len) ^
	       ~srd_icrc_v4_from_parts(f, 0, 0, bth, len);
	/* Back to just after the flags byte: 13 more IPv4 header bytes,
	 * then the UDP header and payload up to the ICRC. */
	diff = srd_crc32_shift_back(diff,
				    SRD_IPV4_HDR_BYTES - 7 + SRD_ICRC_UDP_SIZE +
					    (uint32_t)len - SRD_ICRC_SIZE);
	if (solve_id(diff ^ id_solver.df, &found))
		flags = SRD_IPV4_DF;
	else if (solve_id(diff, &found))
		flags = 0;
	else
		return -EBADMSG;
	if (id)
		*id = found;
	if (frag_off)
		*frag_off = flags;
	return 0;
}
