/* SPDX-License-Identifier: MIT */
/*
 * Flow steering (ibv_create_flow / ibv_destroy_flow): rules that steer
 * the frames a device's interface receives to its raw packet QPs.  The
 * checks and their errnos are uverbs' create_flow's (EINVAL for a bad
 * attribute or spec, EPERM without CAP_NET_RAW); specs verbs.h knows but
 * this device cannot match on are EOPNOTSUPP, as a driver answers.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet.h"
#include "daemon/core/core.h"
#include "daemon/core/flow.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define ROCE_V2_PORT 4791

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void l4_ports(struct srd_flow_key *k, const uint8_t *p, size_t room)
{
	if ((k->proto != IPPROTO_TCP_ && k->proto != IPPROTO_UDP_) || room < 4)
		return;
	memcpy(k->sport, p, 2);
	memcpy(k->dport, p + 2, 2);
	k->l4_ok = 1;
}

bool flow_key_of(const uint8_t *buf, size_t len, struct srd_flow_key *k)
{
	size_t off = SRD_ETH_HLEN;
	uint16_t et;

	memset(k, 0, sizeof(*k));
	if (len < SRD_ETH_HLEN)
		return false;
	memcpy(k->dmac, buf, 6);
	memcpy(k->smac, buf + 6, 6);
	et = be16_at(buf + 12);
	if ((et == ETH_P_8021Q || et == ETH_P_8021AD) &&
	    len >= SRD_ETH_HLEN + SRD_VLAN_HLEN) {
		k->vlan = 1;
		memcpy(k->tci, buf + 14, 2);
		et = be16_at(buf + 16);
		off += SRD_VLAN_HLEN;
	}
	k->ethertype[0] = (uint8_t)(et >> 8);
	k->ethertype[1] = (uint8_t)et;
	buf += off;
	len -= off;
	if (et == ETH_P_IPV4 && len >= 20 && buf[0] >> 4 == 4) {
		size_t ihl = (size_t)(buf[0] & 0xf) * 4;

		if (ihl < 20 || ihl > len)
			return true;
		k->l3 = 4;
		k->tos = buf[1];
		k->ttl = buf[8];
		k->proto = buf[9];
		memcpy(k->src_ip, buf + 12, 4);
		memcpy(k->dst_ip, buf + 16, 4);
		/* Ports are only in a datagram's first fragment. */
		if (!(be16_at(buf + 6) & 0x1fff))
			l4_ports(k, buf + ihl, len - ihl);
	} else if (et == ETH_P_IPV6 && len >= 40 && buf[0] >> 4 == 6) {
		uint32_t w = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
			     (uint32_t)buf[2] << 8 | buf[3];
		uint32_t fl = srd_ipv6_flow_label(w);

		k->l3 = 6;
		k->tos = srd_ipv6_tclass(w);
		k->flow_label[1] = (uint8_t)(fl >> 16);
		k->flow_label[2] = (uint8_t)(fl >> 8);
		k->flow_label[3] = (uint8_t)fl;
		k->proto = buf[6];
		k->ttl = buf[7];
		memcpy(k->src_ip, buf + 8, 16);
		memcpy(k->dst_ip, buf + 24, 16);
		l4_ports(k, buf + 40, len - 40);
	}
	return true;
}

bool flow_key_is_roce(const struct srd_flow_key *k, uint16_t roce_port)
{
	uint16_t dport = be16_at(k->dport);

	return k->l3 && k->l4_ok && k->proto == IPPROTO_UDP_ &&
	       (dport == ROCE_V2_PORT || (roce_port && dport == roce_port));
}

static bool flow_matches(const struct srd_flow *f, const struct srd_flow_key *k)
{
	const uint8_t *v = (const uint8_t *)&f->val;
	const uint8_t *m = (const uint8_t *)&f->mask;
	const uint8_t *b = (const uint8_t *)k;

	for (size_t i = 0; i < sizeof(*k); i++)
		if ((b[i] & m[i]) != v[i])
			return false;
	return true;
}

static uint32_t add_qp(struct srd_qp **out, uint32_t n, uint32_t max,
		       struct srd_qp *qp)
{
	for (uint32_t i = 0; i < n; i++)
		if (out[i] == qp)
			return n;
	if (n < max)
		out[n++] = qp;
	return n;
}

/* Every rule of one type that matches (default and sniffer rules have
 * no specs and match everything). */
static uint32_t add_type(struct srd_raw_port *rp, uint8_t type,
			 const struct srd_flow_key *k, struct srd_qp **out,
			 uint32_t n, uint32_t max, bool *any)
{
	list_for_each (&rp->rules, it) {
		struct srd_flow *f = list_entry(it, struct srd_flow, node);

		if (f->type == type && flow_matches(f, k)) {
			n = add_qp(out, n, max, f->qp);
			*any = true;
		}
	}
	return n;
}

uint32_t flow_steer(struct srd_raw_port *rp, const struct srd_flow_key *k,
		    bool outgoing, bool roce, struct srd_qp **out, uint32_t max,
		    uint32_t *steered)
{
	bool trapped = false, any = false;
	uint16_t trap_prio = 0;
	uint32_t n = 0;

	if (!outgoing && !roce) {
		/* Lower values first; a trap ends the search once the rules
		 * of its priority are done. */
		list_for_each (&rp->rules, it) {
			struct srd_flow *f =
				list_entry(it, struct srd_flow, node);

			if (f->type != IBV_FLOW_ATTR_NORMAL)
				continue;
			if (trapped && f->priority != trap_prio)
				break;
			if (!flow_matches(f, k))
				continue;
			n = add_qp(out, n, max, f->qp);
			if (!f->dont_trap) {
				trapped = true;
				trap_prio = f->priority;
			}
		}
		if (!trapped && (k->dmac[0] & 1))
			n = add_type(rp, IBV_FLOW_ATTR_MC_DEFAULT, k, out, n,
				     max, &any);
		if (!trapped && !any)
			n = add_type(rp, IBV_FLOW_ATTR_ALL_DEFAULT, k, out, n,
				     max, &any);
	}
	*steered = n;
	return add_type(rp, IBV_FLOW_ATTR_SNIFFER, k, out, n, max, &any);
}

/* --- rules from specs ----------------------------------------------------- */

struct spec_hdr {
	uint32_t type;
	uint16_t size;
};

/* Which layers a rule's specs have set already. */
enum {
	L_ETH = 1,
	L_IP = 2,
	L_L4 = 4,
};

static void set_u8(uint8_t *val, uint8_t *mask, uint8_t v, uint8_t m)
{
	*mask = m;
	*val = v & m;
}

static void set_bytes(uint8_t *val, uint8_t *mask, const void *v, const void *m,
		      size_t n)
{
	const uint8_t *vb = v, *mb = m;

	for (size_t i = 0; i < n; i++)
		set_u8(&val[i], &mask[i], vb[i], mb[i]);
}

static int spec_eth(struct srd_flow *f, const uint8_t *p)
{
	struct ibv_flow_spec_eth s;

	memcpy(&s, p, sizeof(s));
	set_bytes(f->val.dmac, f->mask.dmac, s.val.dst_mac, s.mask.dst_mac, 6);
	set_bytes(f->val.smac, f->mask.smac, s.val.src_mac, s.mask.src_mac, 6);
	set_bytes(f->val.ethertype, f->mask.ethertype, &s.val.ether_type,
		  &s.mask.ether_type, 2);
	set_bytes(f->val.tci, f->mask.tci, &s.val.vlan_tag, &s.mask.vlan_tag,
		  2);
	if (s.mask.vlan_tag)
		set_u8(&f->val.vlan, &f->mask.vlan, 1, 0xff);
	return 0;
}

static void need_l3(struct srd_flow *f, uint8_t l3)
{
	set_u8(&f->val.l3, &f->mask.l3, l3, 0xff);
}

static int spec_ipv4(struct srd_flow *f, const uint8_t *p, bool ext)
{
	struct ibv_flow_spec_ipv4_ext s;

	memset(&s, 0, sizeof(s));
	if (ext) {
		memcpy(&s, p, sizeof(s));
		/* Fragment flags are not matched. */
		if (s.mask.flags)
			return -EOPNOTSUPP;
	} else {
		struct ibv_flow_spec_ipv4 b;

		memcpy(&b, p, sizeof(b));
		s.val.src_ip = b.val.src_ip;
		s.val.dst_ip = b.val.dst_ip;
		s.mask.src_ip = b.mask.src_ip;
		s.mask.dst_ip = b.mask.dst_ip;
	}
	need_l3(f, 4);
	set_bytes(f->val.src_ip, f->mask.src_ip, &s.val.src_ip, &s.mask.src_ip,
		  4);
	set_bytes(f->val.dst_ip, f->mask.dst_ip, &s.val.dst_ip, &s.mask.dst_ip,
		  4);
	if (s.mask.proto)
		set_u8(&f->val.proto, &f->mask.proto, s.val.proto,
		       s.mask.proto);
	set_u8(&f->val.tos, &f->mask.tos, s.val.tos, s.mask.tos);
	set_u8(&f->val.ttl, &f->mask.ttl, s.val.ttl, s.mask.ttl);
	return 0;
}

static int spec_ipv6(struct srd_flow *f, const uint8_t *p)
{
	struct ibv_flow_spec_ipv6 s;

	memcpy(&s, p, sizeof(s));
	/* A flow label has 20 bits. */
	if (s.mask.flow_label & ~htobe32(SRD_IPV6_FLOW_LABEL_MASK))
		return -EINVAL;
	need_l3(f, 6);
	set_bytes(f->val.src_ip, f->mask.src_ip, s.val.src_ip, s.mask.src_ip,
		  16);
	set_bytes(f->val.dst_ip, f->mask.dst_ip, s.val.dst_ip, s.mask.dst_ip,
		  16);
	set_bytes(f->val.flow_label, f->mask.flow_label, &s.val.flow_label,
		  &s.mask.flow_label, 4);
	if (s.mask.next_hdr)
		set_u8(&f->val.proto, &f->mask.proto, s.val.next_hdr,
		       s.mask.next_hdr);
	set_u8(&f->val.tos, &f->mask.tos, s.val.traffic_class,
	       s.mask.traffic_class);
	set_u8(&f->val.ttl, &f->mask.ttl, s.val.hop_limit, s.mask.hop_limit);
	return 0;
}

static int spec_l4(struct srd_flow *f, const uint8_t *p, uint8_t proto)
{
	struct ibv_flow_spec_tcp_udp s;

	memcpy(&s, p, sizeof(s));
	/* The protocol is implied; an IP spec naming another is a rule
	 * nothing could match. */
	if (f->mask.proto && f->val.proto != proto)
		return -EINVAL;
	set_u8(&f->val.proto, &f->mask.proto, proto, 0xff);
	set_u8(&f->val.l4_ok, &f->mask.l4_ok, 1, 0xff);
	set_bytes(f->val.sport, f->mask.sport, &s.val.src_port,
		  &s.mask.src_port, 2);
	set_bytes(f->val.dport, f->mask.dport, &s.val.dst_port,
		  &s.mask.dst_port, 2);
	return 0;
}

/* The size verbs.h gives each spec type; 0 for a type it does not know. */
static size_t spec_size(uint32_t type)
{
	switch (type) {
	case IBV_FLOW_SPEC_ETH:
		return sizeof(struct ibv_flow_spec_eth);
	case IBV_FLOW_SPEC_IPV4:
		return sizeof(struct ibv_flow_spec_ipv4);
	case IBV_FLOW_SPEC_IPV4_EXT:
		return sizeof(struct ibv_flow_spec_ipv4_ext);
	case IBV_FLOW_SPEC_IPV6:
		return sizeof(struct ibv_flow_spec_ipv6);
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		return sizeof(struct ibv_flow_spec_tcp_udp);
	case IBV_FLOW_SPEC_ESP:
		return sizeof(struct ibv_flow_spec_esp);
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		return sizeof(struct ibv_flow_spec_tunnel);
	case IBV_FLOW_SPEC_GRE:
		return sizeof(struct ibv_flow_spec_gre);
	case IBV_FLOW_SPEC_MPLS:
		return sizeof(struct ibv_flow_spec_mpls);
	case IBV_FLOW_SPEC_ACTION_TAG:
		return sizeof(struct ibv_flow_spec_action_tag);
	case IBV_FLOW_SPEC_ACTION_DROP:
		return sizeof(struct ibv_flow_spec_action_drop);
	case IBV_FLOW_SPEC_ACTION_HANDLE:
		return sizeof(struct ibv_flow_spec_action_handle);
	case IBV_FLOW_SPEC_ACTION_COUNT:
		return sizeof(struct ibv_flow_spec_counter_action);
	default:
		return 0;
	}
}

static int spec_layer(uint32_t type)
{
	switch (type) {
	case IBV_FLOW_SPEC_ETH:
		return L_ETH;
	case IBV_FLOW_SPEC_IPV4:
	case IBV_FLOW_SPEC_IPV4_EXT:
	case IBV_FLOW_SPEC_IPV6:
		return L_IP;
	default:
		return L_L4;
	}
}

/* One spec at p (room bytes left): its size in *used, 0 or -errno. */
static int spec_parse(struct srd_flow *f, const uint8_t *p, size_t room,
		      unsigned int *layers, size_t *used)
{
	struct spec_hdr h;
	size_t want;
	int layer;

	if (room < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	want = spec_size(h.type & ~(uint32_t)IBV_FLOW_SPEC_INNER);
	if (!want || h.size != want || h.size > room)
		return -EINVAL;
	*used = h.size;
	if (h.type & IBV_FLOW_SPEC_INNER)
		return -EOPNOTSUPP; /* no tunnels */
	layer = spec_layer(h.type);
	switch (h.type) {
	case IBV_FLOW_SPEC_ETH:
	case IBV_FLOW_SPEC_IPV4:
	case IBV_FLOW_SPEC_IPV4_EXT:
	case IBV_FLOW_SPEC_IPV6:
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* One spec per layer: a second would ask the same fields twice. */
	if (*layers & (unsigned int)layer)
		return -EINVAL;
	*layers |= (unsigned int)layer;
	switch (h.type) {
	case IBV_FLOW_SPEC_ETH:
		return spec_eth(f, p);
	case IBV_FLOW_SPEC_IPV4:
		return spec_ipv4(f, p, false);
	case IBV_FLOW_SPEC_IPV4_EXT:
		return spec_ipv4(f, p, true);
	case IBV_FLOW_SPEC_IPV6:
		return spec_ipv6(f, p);
	case IBV_FLOW_SPEC_TCP:
		return spec_l4(f, p, IPPROTO_TCP_);
	default:
		return spec_l4(f, p, IPPROTO_UDP_);
	}
}

static int flow_parse_specs(struct srd_flow *f,
			    const struct srd_create_flow_req *req)
{
	const uint8_t *p = req->specs;
	size_t left = req->specs_len;
	unsigned int layers = 0;

	for (unsigned int i = 0; i < req->num_of_specs; i++) {
		size_t used = 0;
		int err = spec_parse(f, p, left, &layers, &used);

		if (err)
			return err;
		p += used;
		left -= used;
	}
	/* An L4 spec needs the IP version from an IP spec or the ether
	 * type; without both, either IP version's datagrams match. */
	return left ? -EINVAL : 0;
}

/* --- commands ------------------------------------------------------------- */

static uint32_t client_flows(const struct srd_client *c)
{
	const struct srd_raw_port *rp = c->dev ? c->dev->raw : NULL;
	uint32_t n = 0;

	if (!rp)
		return 0;
	list_for_each (&rp->rules, it)
		if (list_entry(it, struct srd_flow, node)->owner == c)
			n++;
	return n;
}

static void flow_insert(struct srd_raw_port *rp, struct srd_flow *f)
{
	struct list_node *at = &rp->rules.n;

	/* After every rule of the same or a better priority. */
	list_for_each (&rp->rules, it) {
		if (list_entry(it, struct srd_flow, node)->priority >
		    f->priority) {
			at = it;
			break;
		}
	}
	f->node.next = at;
	f->node.prev = at->prev;
	at->prev->next = &f->node;
	at->prev = &f->node;
	rp->nrules++;
}

static int flow_check_attr(const struct srd_create_flow_req *req, uint32_t len)
{
	const uint32_t known = IBV_FLOW_ATTR_FLAGS_DONT_TRAP |
			       IBV_FLOW_ATTR_FLAGS_EGRESS;

	if (req->comp_mask || (req->flags & ~known))
		return -EINVAL;
	if ((req->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP) &&
	    (req->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
	     req->type == IBV_FLOW_ATTR_MC_DEFAULT))
		return -EINVAL;
	if (req->num_of_specs > SRD_FLOW_MAX_SPECS ||
	    req->specs_len > SRD_FLOW_SPECS_MAX ||
	    len != sizeof(*req) + req->specs_len)
		return -EINVAL;
	return 0;
}

int cmd_create_flow(struct srd_client *c, struct srd_req *rq,
		    struct srd_rep *rp)
{
	const struct srd_create_flow_req *req = rq->data;
	struct srd_create_flow_rep *rep;
	struct srd_raw_port *raw;
	struct srd_flow *f;
	struct srd_qp *qp;
	static uint32_t next_handle;
	int err;

	err = flow_check_attr(req, rq->len);
	if (err)
		return err;
	qp = qp_get(c, req->qp_handle);
	if (!qp)
		return -EINVAL;
	if (!req_net_raw(rq))
		return -EPERM;
	if (req->port != 1)
		return -EINVAL;
	if (qp->type == IBV_QPT_UD)
		return -EOPNOTSUPP; /* steering serves raw packet QPs */
	if (qp->type != IBV_QPT_RAW_PACKET)
		return -EINVAL;
	if (req->type > IBV_FLOW_ATTR_SNIFFER)
		return -EINVAL;
	/* Default and sniffer rules take everything of their kind. */
	if (req->type != IBV_FLOW_ATTR_NORMAL && req->num_of_specs)
		return -EINVAL;
	if (req->flags & IBV_FLOW_ATTR_FLAGS_EGRESS)
		return -EOPNOTSUPP;
	raw = qp->dev->raw;
	if (!raw)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	err = flow_parse_specs(f, req);
	if (err) {
		free(f);
		return err;
	}
	if (raw->nrules >= SRD_FLOW_MAX_PER_DEV ||
	    client_flows(c) >= SRD_FLOW_MAX_PER_CLIENT) {
		free(f);
		return -ENOMEM;
	}
	f->owner = c;
	f->qp = qp;
	f->type = (uint8_t)req->type;
	f->dont_trap = req->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	f->priority = req->priority;
	f->handle = ++next_handle ? next_handle : ++next_handle;
	flow_insert(raw, f);
	qp->nflows++;
	rep = REP(rp, struct srd_create_flow_rep);
	rep->handle = f->handle;
	return 0;
}

static void flow_free(struct srd_raw_port *rp, struct srd_flow *f)
{
	list_del(&f->node);
	rp->nrules--;
	f->qp->nflows--;
	free(f);
}

int cmd_destroy_flow(struct srd_client *c, struct srd_req *rq,
		     struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_raw_port *raw = c->dev->raw;

	if (!raw)
		return -EINVAL;
	list_for_each (&raw->rules, it) {
		struct srd_flow *f = list_entry(it, struct srd_flow, node);

		if (f->handle == req->handle && f->owner == c) {
			flow_free(raw, f);
			return 0;
		}
	}
	return -EINVAL;
}

void flow_qp_gone(struct srd_qp *qp)
{
	struct srd_raw_port *raw = qp->dev->raw;

	if (!raw)
		return;
	list_for_each (&raw->rules, it) {
		struct srd_flow *f = list_entry(it, struct srd_flow, node);

		if (f->qp == qp)
			flow_free(raw, f);
	}
}

void flow_client_gone(struct srd_client *c)
{
	struct srd_raw_port *raw = c->dev ? c->dev->raw : NULL;

	if (!raw)
		return;
	list_for_each (&raw->rules, it) {
		struct srd_flow *f = list_entry(it, struct srd_flow, node);

		if (f->owner == c)
			flow_free(raw, f);
	}
}
