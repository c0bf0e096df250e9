/* SPDX-License-Identifier: MIT */
/* CM MADs out of captures and out of QP1's send queue (t_cm_mads.h). */
#include <errno.h>

#include "common/ring.h"
#include "daemon/net/pcap.h"
#include "daemon/core/objects.h"
#include "tests/unit/t_cm_mads.h"

static uint32_t sq_seen;

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int tcm_read_pcap(const char *path, struct cm_msg *out, unsigned int max)
{
	struct srd_pcap_reader r;
	struct srd_pcap_pkt pkt;
	unsigned int n = 0;
	int ret = srd_pcap_open(&r, path);

	if (ret)
		return ret;
	while (srd_pcap_next(&r, &pkt) == 1) {
		const uint8_t *ip = pkt.data + pkt.l3_off;
		size_t ihl = (ip[0] & 0x0f) * 4u;
		const uint8_t *bth = ip + ihl + 8;

		/* IPv4, RoCEv2, to QP1: BTH, DETH, then the MAD. */
		if (pkt.l3_proto != 0x0800 || be16(ip + ihl + 2) != 4791 ||
		    (mad_get_be32(bth + 4) & 0xffffff) != 1)
			continue;
		if (n == max) {
			ret = -E2BIG;
			break;
		}
		if (cm_mad_decode(bth + 12 + 8, MAD_SIZE, &out[n])) {
			ret = -EBADMSG;
			break;
		}
		n++;
	}
	srd_pcap_close(&r);
	return ret ? ret : (int)n;
}

void tcm_sq_mark(struct t_core *t)
{
	struct srd_qp *qp = device_by_index(&t->d, 0)->gsi;

	sq_seen = __atomic_load_n(&qp->sq.ctl->prod, __ATOMIC_ACQUIRE);
}

void tcm_sq_collect(struct t_core *t, struct cm_msg *out, unsigned int max,
		    unsigned int *n)
{
	struct srd_qp *qp = device_by_index(&t->d, 0)->gsi;
	uint32_t prod = __atomic_load_n(&qp->sq.ctl->prod, __ATOMIC_ACQUIRE);

	for (; sq_seen != prod; sq_seen++) {
		const uint8_t *slot =
			qp->sq.ring + (size_t)(sq_seen & (qp->sq.entries - 1)) *
					      qp->sq.slot_size;

		T_ASSERT(*n < max);
		T_EQ(cm_mad_decode(slot + sizeof(struct srd_send_wqe), MAD_SIZE,
				   &out[*n]),
		     0);
		(*n)++;
	}
}
