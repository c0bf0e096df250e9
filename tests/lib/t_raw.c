/* SPDX-License-Identifier: MIT */
/* Raw packet QPs, hand-made frames and flow rules for tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "common/inet.h"
#include "t_util.h"

struct ibv_qp *t_raw_qp_create(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;

	t_qp_init_attr(&ia, IBV_QPT_RAW_PACKET, cq, cq);
	ia.cap.max_inline_data = 256;
	return ibv_create_qp(d->pd, &ia);
}

void t_raw_qp_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = T_PORT;
	T_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	T_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	T_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t t_udp4_frame(uint8_t *buf, const struct t_udp4 *u, const void *pay,
		    size_t len)
{
	uint8_t *ip = buf + 14, *udp = ip + 20;
	const struct srd_ipv4_fields h = {
		.ttl = 64,
		.protocol = SRD_IPPROTO_UDP,
		.payload_len = (uint16_t)(8 + len),
		.id = 0x1234,
		.frag_off = SRD_IPV4_DF,
		.saddr = &u->saddr,
		.daddr = &u->daddr,
	};
	uint8_t pseudo[12];
	uint32_t sum;
	uint16_t c;

	memcpy(buf, u->dmac, 6);
	memcpy(buf + 6, u->smac, 6);
	put16(buf + 12, 0x0800);
	srd_ipv4_build(ip, &h);
	put16(udp, u->sport);
	put16(udp + 2, u->dport);
	put16(udp + 4, (uint16_t)(8 + len));
	put16(udp + 6, 0);
	memcpy(udp + 8, pay, len);
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = SRD_IPPROTO_UDP;
	put16(pseudo + 10, (uint16_t)(8 + len));
	sum = srd_inet_csum_add(srd_inet_csum_add(0, pseudo, sizeof(pseudo)),
				udp, 8 + len);
	c = srd_inet_csum_fold(sum);
	put16(udp + 6, c ? c : 0xffff);
	return 14 + 20 + 8 + len;
}

struct t_udp_rule {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_ipv4 ip;
	struct ibv_flow_spec_tcp_udp udp;
};

struct ibv_flow *t_flow_udp4(struct ibv_qp *qp, uint32_t daddr, uint16_t dport,
			     uint16_t priority)
{
	struct t_udp_rule r;

	memset(&r, 0, sizeof(r));
	r.attr.type = IBV_FLOW_ATTR_NORMAL;
	r.attr.size = sizeof(r);
	r.attr.priority = priority;
	r.attr.num_of_specs = 3;
	r.attr.port = T_PORT;
	r.eth.type = IBV_FLOW_SPEC_ETH;
	r.eth.size = sizeof(r.eth);
	r.eth.val.ether_type = htons(0x0800);
	r.eth.mask.ether_type = 0xffff;
	r.ip.type = IBV_FLOW_SPEC_IPV4;
	r.ip.size = sizeof(r.ip);
	r.ip.val.dst_ip = daddr;
	r.ip.mask.dst_ip = daddr ? 0xffffffffu : 0;
	r.udp.type = IBV_FLOW_SPEC_UDP;
	r.udp.size = sizeof(r.udp);
	r.udp.val.dst_port = htons(dport);
	r.udp.mask.dst_port = 0xffff;
	return ibv_create_flow(qp, &r.attr);
}
