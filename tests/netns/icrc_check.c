/* SPDX-License-Identifier: MIT */
/*
 * icrc_check FILE.pcap [--min N] [--require OPCODE,...]
 *
 * Checks the ICRC of every RoCEv2 packet (UDP destination port 4791) in a
 * capture, whole IP header included, and prints how many of each BTH
 * opcode it saw.  Fails (exit 1) on a bad ICRC, a packet cut short, a
 * RoCE packet that is not IPv4 or IPv6, fewer than N RoCE packets, or a
 * required opcode that never appears.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/net/icrc.h"
#include "daemon/net/pcap.h"

#define ROCE_PORT 4791

static const char *opcode_name(unsigned int op)
{
	static const char *const rc[] = {
		[0x00] = "SEND_FIRST",
		[0x01] = "SEND_MIDDLE",
		[0x02] = "SEND_LAST",
		[0x03] = "SEND_LAST_IMM",
		[0x04] = "SEND_ONLY",
		[0x05] = "SEND_ONLY_IMM",
		[0x06] = "WRITE_FIRST",
		[0x07] = "WRITE_MIDDLE",
		[0x08] = "WRITE_LAST",
		[0x09] = "WRITE_LAST_IMM",
		[0x0a] = "WRITE_ONLY",
		[0x0b] = "WRITE_ONLY_IMM",
		[0x0c] = "READ_REQUEST",
		[0x0d] = "READ_RESPONSE_FIRST",
		[0x0e] = "READ_RESPONSE_MIDDLE",
		[0x0f] = "READ_RESPONSE_LAST",
		[0x10] = "READ_RESPONSE_ONLY",
		[0x11] = "ACKNOWLEDGE",
		[0x12] = "ATOMIC_ACKNOWLEDGE",
		[0x13] = "CMP_SWAP",
		[0x14] = "FETCH_ADD",
		[0x16] = "SEND_LAST_INV",
		[0x17] = "SEND_ONLY_INV",
	};
	unsigned int t = op >> 5, o = op & 0x1f;

	if (t == 3 && o == 4)
		return "UD SEND_ONLY";
	if (t == 3 && o == 5)
		return "UD SEND_ONLY_IMM";
	if ((t == 0 || t == 1) && o < sizeof(rc) / sizeof(rc[0]) && rc[o])
		return rc[o];
	return "?";
}

struct tally {
	unsigned long roce, bad_icrc, cut, other, v4, v6;
	unsigned long op[256];
};

/* An IPv4 ICRC that is wrong for the header as captured may be right for
 * another identification (the field a writer of synthesized headers, or
 * a sender that segments, may get wrong): say which. */
static void explain_v4(const uint8_t *ip, const uint8_t *udp, size_t udp_len)
{
	struct srd_icrc_udp4 f;
	uint16_t id, frag;

	memcpy(&f.saddr, ip + 12, 4);
	memcpy(&f.daddr, ip + 16, 4);
	memcpy(&f.sport, udp, 2);
	memcpy(&f.dport, udp + 2, 2);
	if (!srd_icrc_check_v4_noid(&f, udp + 8, udp_len - 8, &id, &frag))
		fprintf(stderr,
			"; right for IPv4 id %u flags %#x, the header "
			"has id %u flags %#x",
			id, frag, ip[4] << 8 | ip[5],
			(ip[6] << 8 | ip[7]) & 0xe000);
}

/* 1: a RoCE packet (counted in t), 0: not one, -1: broken. */
static int check_one(const struct srd_pcap_pkt *p, struct tally *t,
		     unsigned long n)
{
	const uint8_t *l3 = p->data + p->l3_off, *udp;
	size_t avail = p->caplen - p->l3_off, ihl, udp_len;
	int ret;

	if (p->l3_proto == 0x0800) {
		if (avail < 20 || l3[9] != 17)
			return 0;
		ihl = (size_t)(l3[0] & 0xf) * 4;
		if (ihl < 20 || avail < ihl + 8)
			return 0;
		udp = l3 + ihl;
		avail -= ihl;
	} else if (p->l3_proto == 0x86dd) {
		if (avail < 48 || l3[6] != 17)
			return 0;
		udp = l3 + 40;
		avail -= 40;
	} else {
		return 0;
	}
	if ((udp[2] << 8 | udp[3]) != ROCE_PORT)
		return 0;
	udp_len = (size_t)(udp[4] << 8 | udp[5]);
	if (p->caplen != p->origlen || udp_len > avail) {
		fprintf(stderr, "packet %lu: cut short (%u of %u bytes)\n", n,
			p->caplen, p->origlen);
		t->cut++;
		return -1;
	}
	if (p->l3_proto == 0x0800) {
		ret = srd_icrc_check_ipv4(l3, udp, udp_len);
		t->v4++;
	} else {
		ret = srd_icrc_check_ipv6(l3, udp, udp_len);
		t->v6++;
	}
	t->roce++;
	if (udp_len >= 9)
		t->op[udp[8]]++;
	if (ret) {
		fprintf(stderr, "packet %lu: %s (opcode %#x, UDP length %zu)",
			n, ret == -EBADMSG ? "bad ICRC" : "bad length",
			udp_len >= 9 ? udp[8] : 0, udp_len);
		if (p->l3_proto == 0x0800)
			explain_v4(l3, udp, udp_len);
		fputc('\n', stderr);
		t->bad_icrc++;
		return -1;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static struct tally t;
	struct srd_pcap_reader r;
	struct srd_pcap_pkt p;
	const char *path = NULL, *require = NULL;
	unsigned long n = 0, min = 1;
	int ret, fail = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min") && i + 1 < argc)
			min = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--require") && i + 1 < argc)
			require = argv[++i];
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			goto usage;
	}
	if (!path) {
	usage:
		fprintf(stderr, "usage: icrc_check FILE.pcap [--min N] "
				"[--require OPCODE,...]\n");
		return 2;
	}
	ret = srd_pcap_open(&r, path);
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return 1;
	}
	while ((ret = srd_pcap_next(&r, &p)) == 1) {
		n++;
		if (check_one(&p, &t, n) == 0)
			t.other++;
	}
	srd_pcap_close(&r);
	if (ret < 0) {
		fprintf(stderr, "%s: record %lu: %s\n", path, n + 1,
			strerror(-ret));
		fail = 1;
	}
	printf("%lu packets: %lu RoCE (%lu IPv4, %lu IPv6), %lu other; "
	       "%lu bad ICRC, %lu cut short\n",
	       n, t.roce, t.v4, t.v6, t.other, t.bad_icrc, t.cut);
	for (int op = 0; op < 256; op++)
		if (t.op[op])
			printf("  opcode 0x%02x %-22s %lu\n", op,
			       opcode_name(op), t.op[op]);
	if (t.bad_icrc || t.cut)
		fail = 1;
	if (t.roce < min) {
		fprintf(stderr,
			"only %lu RoCE packets, expected at least %lu\n",
			t.roce, min);
		fail = 1;
	}
	while (require && *require) {
		char *end;
		unsigned long op = strtoul(require, &end, 0);

		if (end == require || op > 255) {
			fprintf(stderr, "bad opcode list at \"%s\"\n", require);
			return 2;
		}
		if (!t.op[op]) {
			fprintf(stderr, "no packet with opcode 0x%02lx (%s)\n",
				op, opcode_name((unsigned int)op));
			fail = 1;
		}
		require = *end == ',' ? end + 1 : end;
	}
	return fail;
}
