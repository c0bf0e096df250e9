/* SPDX-License-Identifier: MIT */
/*
 * The opcode table and header serialization: table consistency, exact
 * bytes for known packets, rejection of malformed headers, PSN
 * arithmetic, the timer tables, and every packet Linux rdma_rxe sent in
 * the reference captures parsed and written back byte for byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "daemon/net/pcap.h"
#include "daemon/transport/engine.h"
#include "tests/unit/t_proto.h"

/* In wire order; the XRCETH right after the BTH (no opcode has it and the
 * DETH), the FETH (FLUSH) before the RETH. */
static const uint32_t hdr_bits[] = { OPF_DETH,	 OPF_XRCETH, OPF_FETH,
				     OPF_RETH,	 OPF_ATMETH, OPF_AETH,
				     OPF_ATMACK, OPF_IMM,    OPF_IETH };
static const uint8_t hdr_len[] = { 8, 4, 4, 16, 28, 4, 8, 4, 4 };

static void test_table(void)
{
	int valid = 0;

	for (int op = 0; op < 256; op++) {
		const struct srd_opcode_info *i = &srd_opcodes[op];
		unsigned int len = 12, prev = 0;

		if (!(i->mask & OPF_VALID)) {
			T_ASSERT(!i->name);
			continue;
		}
		valid++;
		T_ASSERT(i->name);
		/* Exactly one direction, at least one position. */
		T_ASSERT(!!(i->mask & OPF_REQ) != !!(i->mask & OPF_RESP));
		T_ASSERT(i->mask & (OPF_FIRST | OPF_MIDDLE | OPF_LAST));
		for (unsigned int h = 0; h < 9; h++) {
			if (!(i->mask & hdr_bits[h]))
				continue;
			T_ASSERT(srd_op_hdr_offset(op, hdr_bits[h]) >= prev);
			prev = srd_op_hdr_offset(op, hdr_bits[h]);
			T_EQ(prev, len);
			len += hdr_len[h];
		}
		T_EQ(i->hdr_len, len);
		/* RETH only where a message starts; AETH only in responses;
		 * DETH only for UD. */
		if (i->mask & OPF_RETH)
			T_ASSERT(i->mask & OPF_FIRST);
		if (i->mask & OPF_AETH)
			T_ASSERT(i->mask & OPF_RESP);
		T_EQ(!!(i->mask & OPF_DETH),
		     srd_op_transport(op) == ROCE_TR_UD);
	}
	/* RC with FLUSH, ATOMIC WRITE; UC; UD; XRC as RC without A19 */
	T_EQ(valid, 23 + 2 + 12 + 2 + 23);
	T_EQ(srd_op_request(ROCE_TR_RC, OPF_SEND, OPF_ONLY, true),
	     ROCE_RC_SEND_ONLY_IMM);
	T_EQ(srd_op_request(ROCE_TR_UC, OPF_WRITE, OPF_FIRST, false),
	     ROCE_UC_WRITE_FIRST);
	T_EQ(srd_op_request(ROCE_TR_UC, OPF_WRITE, OPF_LAST, true),
	     ROCE_UC_WRITE_LAST_IMM);
	T_EQ(srd_op_request(ROCE_TR_RC, OPF_SEND, OPF_MIDDLE, true),
	     ROCE_RC_SEND_MIDDLE);
	T_EQ(srd_op_request(ROCE_TR_XRC, OPF_SEND, OPF_ONLY, false), 0xa4);
	T_EQ(srd_op_read_response(ROCE_TR_RC, OPF_MIDDLE),
	     ROCE_RC_READ_RESPONSE_MIDDLE);
	T_EQ(srd_op_read_response(ROCE_TR_RC, OPF_ONLY),
	     ROCE_RC_READ_RESPONSE_ONLY);
	T_EQ(srd_op_read_response(ROCE_TR_XRC, OPF_ONLY), 0xb0);
	/* XRC requests carry the XRCETH first, responses do not. */
	T_ASSERT(srd_op_mask(0xa6) & OPF_XRCETH);
	T_EQ(srd_opcodes[0xa6].hdr_len, 12 + 4 + 16);
	T_EQ(srd_op_hdr_offset(0xa6, OPF_RETH), 16);
	T_EQ(srd_op_hdr_offset(0xb3, OPF_ATMETH), 16);
	T_ASSERT(!(srd_op_mask(0xb1) & OPF_XRCETH));
	T_EQ(srd_opcodes[0xb1].hdr_len, 12 + 4);
}

static void test_bytes(void)
{
	static const uint8_t send_imm[] = {
		0x05, 0xb0, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef,
		0x80, 0x12, 0x34, 0x56, 0x11, 0x22, 0x33, 0x44,
	};
	static const uint8_t cas[] = {
		0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x00,
		0x00, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xaa, 0xbb, 0xcc, 0xdd, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60,
		0x70, 0x80, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	};
	static const uint8_t nak[] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x34,
		0x00, 0xff, 0xff, 0xfe, 0x21, 0x00, 0x00, 0x09,
	};
	static const uint8_t ud[] = {
		0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x05, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x22,
	};
	uint8_t buf[64];
	struct srd_pkt p, q;

	srd_pkt_init(&p, ROCE_RC_SEND_ONLY_IMM);
	p.se = true;
	p.ack_req = true;
	p.qpn = 0xabcdef;
	p.psn = 0x123456;
	memcpy(&p.imm, "\x11\x22\x33\x44", 4);
	p.paylen = 5; /* pad 3 */
	T_EQ(srd_pkt_hdr_write(&p, buf, sizeof(buf)), sizeof(send_imm));
	T_ASSERT(!memcmp(buf, send_imm, sizeof(send_imm)));
	/* Parsing needs the padded payload after the headers. */
	memset(buf + 16, 0, 8);
	T_EQ(srd_pkt_hdr_read(&q, buf, 16 + 8), 16);
	T_EQ(q.paylen, 5);
	T_EQ(q.psn, 0x123456);
	T_ASSERT(q.se && q.ack_req);
	T_EQ(q.imm, p.imm);

	srd_pkt_init(&p, ROCE_RC_COMPARE_SWAP);
	p.qpn = 0x12;
	p.psn = 7;
	p.ack_req = true;
	p.atm.va = 0x0102030405060708ull;
	p.atm.rkey = 0xaabbccdd;
	p.atm.swap_add = 0x1020304050607080ull;
	p.atm.compare = 0x0f0e0d0c0b0a0908ull;
	T_EQ(srd_pkt_hdr_write(&p, buf, sizeof(buf)), sizeof(cas));
	T_ASSERT(!memcmp(buf, cas, sizeof(cas)));

	/* RNR NAK, timer 1, MSN 9, PSN 0xfffffe. */
	srd_pkt_init(&p, ROCE_RC_ACKNOWLEDGE);
	p.qpn = 0x34;
	p.psn = 0xfffffe;
	p.aeth.syndrome = ROCE_AETH_RNR_NAK | 1;
	p.aeth.msn = 9;
	T_EQ(srd_pkt_hdr_write(&p, buf, sizeof(buf)), sizeof(nak));
	T_ASSERT(!memcmp(buf, nak, sizeof(nak)));
	T_EQ(srd_pkt_hdr_read(&q, buf, sizeof(nak)), sizeof(nak));
	T_EQ(q.aeth.syndrome, 0x21);
	T_EQ(q.aeth.msn, 9);

	srd_pkt_init(&p, ROCE_UD_SEND_ONLY);
	p.qpn = 1;
	p.psn = 5;
	p.deth.qkey = ROCE_GSI_QKEY;
	p.deth.sqp = 0x22;
	T_EQ(srd_pkt_hdr_write(&p, buf, sizeof(buf)), sizeof(ud));
	T_ASSERT(!memcmp(buf, ud, sizeof(ud)));

	/* Malformed: unknown opcodes, short buffers, bytes after an
	 * opcode without payload, a pad larger than what follows. */
	buf[0] = 0x15;
	T_EQ(srd_pkt_hdr_read(&q, buf, 40), -EINVAL);
	buf[0] = 0xff;
	T_EQ(srd_pkt_hdr_read(&q, buf, 40), -EINVAL);
	T_EQ(srd_pkt_hdr_read(&q, cas, sizeof(cas) - 1), -EINVAL);
	T_EQ(srd_pkt_hdr_read(&q, buf, 11), -EINVAL);
	memcpy(buf, nak, sizeof(nak));
	T_EQ(srd_pkt_hdr_read(&q, buf, sizeof(nak) + 4), -EINVAL);
	memcpy(buf, send_imm, sizeof(send_imm));
	T_EQ(srd_pkt_hdr_read(&q, buf, 16 + 2), -EINVAL);
	T_EQ(srd_pkt_hdr_write(&p, buf, 19), -ENOSPC);
}

static void test_arith(void)
{
	T_ASSERT(roce_psn_cmp(0, 0xffffff) > 0);
	T_ASSERT(roce_psn_cmp(0xffffff, 0) < 0);
	T_ASSERT(roce_psn_cmp(5, 5) == 0);
	T_ASSERT(roce_psn_cmp(0x7fffff, 0) > 0);
	T_ASSERT(roce_psn_cmp(0x800001, 0) < 0);
	T_EQ(tp_npkts(0, 1024), 1);
	T_EQ(tp_npkts(1024, 1024), 1);
	T_EQ(tp_npkts(1025, 1024), 2);
	T_EQ(tp_npkts(0x80000000ull, 256), 0x800000);
	T_EQ(tp_timeout_ns(0), 0);
	T_EQ(tp_timeout_ns(1), 8192);
	T_EQ(tp_timeout_ns(14), 67108864);
	T_EQ(tp_rnr_ns(0), 655360000);
	T_EQ(tp_rnr_ns(1), 10000);
	T_EQ(tp_rnr_ns(14), 1280000);
	T_EQ(tp_rnr_ns(31), 491520000);
	T_EQ(srd_pkt_pad(0), 0);
	T_EQ(srd_pkt_pad(1), 3);
	T_EQ(srd_pkt_pad(4), 0);
}

/* Every packet rxe sent: parsed, and written back identical. */
static int test_captures(void)
{
	static const char *const files[] = {
		"rc_pingpong.pcap", "uc_pingpong.pcap", "ud_pingpong.pcap",
		"write_bw.pcap",    "read_lat.pcap",	"atomic_lat.pcap",
		"rping_cm.pcap",
	};
	unsigned int seen[256] = { 0 }, total = 0;

	for (unsigned int f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct srd_pcap_reader r;
		struct srd_pcap_pkt pk;
		char path[512];
		int ret;

		snprintf(path, sizeof(path), "%s/%s", SRD_RXE_VECTORS_DIR,
			 files[f]);
		if (srd_pcap_open(&r, path))
			T_FAIL("cannot open %s", path);
		while ((ret = srd_pcap_next(&r, &pk)) == 1) {
			const uint8_t *ip = pk.data + pk.l3_off;
			const uint8_t *udp, *bth;
			uint8_t out[128];
			struct srd_pkt p;
			size_t len;
			int hl;

			T_EQ(pk.l3_proto, 0x0800);
			udp = ip + (ip[0] & 0xf) * 4;
			T_EQ(udp[2] << 8 | udp[3], ROCE_UDP_PORT);
			len = (udp[4] << 8 | udp[5]) - 8 - ROCE_ICRC_BYTES;
			bth = udp + 8;
			hl = srd_pkt_hdr_read(&p, bth, len);
			if (hl < 0)
				T_FAIL("%s: opcode 0x%02x rejected", files[f],
				       bth[0]);
			T_EQ(hl + p.paylen + srd_pkt_pad(p.paylen), len);
			T_EQ(srd_pkt_hdr_write(&p, out, sizeof(out)), hl);
			if (memcmp(out, bth, hl))
				T_FAIL("%s: %s differs when written", files[f],
				       srd_op_name(p.opcode));
			if (p.opcode == ROCE_RC_SEND_FIRST ||
			    p.opcode == ROCE_RC_WRITE_MIDDLE ||
			    p.opcode == ROCE_RC_READ_RESPONSE_FIRST)
				T_EQ(p.paylen, 1024); /* path MTU */
			if (p.opcode == ROCE_RC_READ_REQUEST && f == 4)
				T_EQ(p.reth.len, 2048); /* ib_read_lat -s */
			if (p.opcode == ROCE_UD_SEND_ONLY)
				T_ASSERT(p.deth.qkey == 0x11111111 ||
					 p.deth.qkey == ROCE_GSI_QKEY);
			if (p.mask & OPF_ATMETH)
				T_EQ(p.atm.va & 7, 0);
			seen[p.opcode]++;
			total++;
		}
		T_EQ(ret, 0);
		srd_pcap_close(&r);
	}
	/* The captures hold every kind of packet the engine makes. */
	static const uint8_t expect[] = {
		ROCE_RC_SEND_FIRST,	     ROCE_RC_SEND_MIDDLE,
		ROCE_RC_SEND_LAST,	     ROCE_RC_WRITE_FIRST,
		ROCE_RC_WRITE_LAST,	     ROCE_RC_READ_REQUEST,
		ROCE_RC_READ_RESPONSE_FIRST, ROCE_RC_READ_RESPONSE_LAST,
		ROCE_RC_ACKNOWLEDGE,	     ROCE_RC_ATOMIC_ACKNOWLEDGE,
		ROCE_RC_COMPARE_SWAP,	     ROCE_RC_FETCH_ADD,
		ROCE_UC_SEND_FIRST,	     ROCE_UC_SEND_LAST,
		ROCE_UD_SEND_ONLY,
	};
	for (unsigned int i = 0; i < sizeof(expect); i++)
		if (!seen[expect[i]])
			T_FAIL("no %s in the captures", srd_op_name(expect[i]));
	printf("# %u rxe packets round-tripped\n", total);
	return T_EXIT_PASS;
}

int main(void)
{
	test_table();
	test_bytes();
	test_arith();
	return test_captures();
}
