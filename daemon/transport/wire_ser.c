/* SPDX-License-Identifier: MIT */
/* Packets as bytes: trains taken apart, addresses, serialization, ICRC. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include "daemon/core/mcast.h"
#include "daemon/net/icrc.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

uint32_t wire_pkt_bytes(const struct srd_pkt *pkt)
{
	/* A BTH and an ICRC per packet, the extended headers once: a
	 * train's later packets are MIDDLEs. */
	return pkt->paylen + srd_pkt_pad(pkt->paylen) +
	       pkt->npkts * (SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE) +
	       srd_pkt_hdr_len(pkt) - SRD_ICRC_BTH_SIZE;
}

void wire_train_part(const struct srd_pkt *train, uint32_t i,
		     struct srd_pkt *out)
{
	uint32_t per = train->paylen / train->npkts;
	uint8_t op;

	*out = *train;
	out->npkts = 1;
	out->psn = (train->psn + i) & ROCE_PSN_MASK;
	out->paylen = per;
	dma_advance(&out->pay, (uint64_t)i * per);
	if (i && (train->mask & OPF_FIRST)) {
		if (train->mask & OPF_READ)
			op = srd_op_read_response(
				srd_op_transport(train->opcode), OPF_MIDDLE);
		else
			op = srd_op_transport(train->opcode) |
			     ((train->mask & OPF_SEND) ? ROCE_RC_SEND_MIDDLE
						       : ROCE_RC_WRITE_MIDDLE);
		out->opcode = op;
		out->mask = srd_op_mask(op);
	}
	/* What the train asks for belongs to its last packet. */
	out->ack_req = train->ack_req && i + 1 == train->npkts;
	out->se = train->se && i + 1 == train->npkts;
}

void wire_pkt_meta(struct srd_wire *w, const struct srd_device *dev,
		   uint32_t qpn, const struct srd_pkt *pkt,
		   struct srd_udp_meta *m)
{
	memset(m, 0, sizeof(*m));
	memcpy(&m->src, pkt->sgid.raw, 16);
	memcpy(&m->dst, pkt->dgid.raw, 16);
	if (w->udp) {
		m->sport = srd_udp_sport(w->udp, qpn);
		m->dport = w->udp->port;
	} else {
		m->sport = SRD_UDP_SPORT_BASE + srd_udp_pool_index(qpn);
		m->dport = ROCE_UDP_PORT;
	}
	m->tclass = pkt->tclass;
	m->hop_limit = pkt->hop_limit ? pkt->hop_limit : 64;
	/* Link-local and multicast leave by the device's interface. */
	if (IN6_IS_ADDR_LINKLOCAL(&m->dst) || mcast_gid_is_mc(pkt->dgid.raw))
		m->ifindex = if_nametoindex(dev->netdev);
}

bool wire_meta_v4(const struct srd_udp_meta *m)
{
	return srd_addr_v4(&m->src) && srd_addr_v4(&m->dst);
}

static uint32_t icrc_for(const struct srd_udp_meta *m, const uint8_t *buf,
			 size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return srd_udp_icrc(m, m->sport, 0, &iov, 1, len);
}

int wire_serialize(struct srd_wire *w, const struct srd_pkt *pkt,
		   const struct srd_udp_meta *m, uint8_t *buf, size_t room)
{
	unsigned int hl = srd_pkt_hdr_len(pkt), pad = srd_pkt_pad(pkt->paylen);
	size_t len = (size_t)hl + pkt->paylen + pad + SRD_ICRC_SIZE;
	struct srd_dma src = pkt->pay, dst;

	if (pkt->npkts != 1 || len > room || len > SRD_UDP_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (srd_pkt_hdr_write(pkt, buf, room) < 0)
		return -EINVAL;
	dma_init_buf(&dst, buf + hl, pkt->paylen);
	if (pkt->paylen && dma_copy(w->d, &dst, &src, pkt->paylen))
		return -EFAULT;
	memset(buf + hl + pkt->paylen, 0, pad);
	srd_udp_icrc_seal(m, buf, len);
	return (int)len;
}

int wire_check_icrc(const struct srd_udp_meta *m, bool id_known,
		    const uint8_t *buf, size_t len)
{
	if (len < SRD_ICRC_BTH_SIZE + SRD_ICRC_SIZE)
		return -EBADMSG;
	if (wire_meta_v4(m) && !id_known) {
		struct srd_icrc_udp4 f;

		srd_udp_icrc_v4_fields(m, m->sport, &f);
		return srd_icrc_check_v4_noid(&f, buf, len, NULL, NULL)
			       ? -EBADMSG
			       : 0;
	}
	return icrc_for(m, buf, len) == srd_icrc_get(buf, len) ? 0 : -EBADMSG;
}
